// The dict codec: integer columns of few distinct values, of long runs, or of smooth values. Per
// frame, the smallest of four forms, each packed by the extended bit-packing codec (bitpack_ext)
// as embedded frames: the values alone (plain); a sorted dictionary and a code per row; the
// lengths of the runs of equal values and each run's value; or each row's difference from the row
// before less a base per 32 rows, with the bases and each 4096-row tile's first value. So its
// frames are never larger than bitpack_ext's by more than one header (64 bytes); on a column of 64
// distinct values they take about 6 bits a row whatever the values' spread, on long runs a few
// bytes a run, and on smooth columns a base per 32 differences where bitpack_ext's dfor takes a
// reference per 128.
//
// Payload: docs/FORMAT.md, "Codec 12: dict"; the rules are in kernels/dict/dict_format.hpp, which
// the CPU reference and the GPU kernels share. Value types: every integer type. It is not a
// default codec: the spill and the shuffle take it for an integer column where its estimate
// beats the bit-packing codecs' (lib/src/spill.cpp, comm/src/shuffle.cpp), and callers may name it.
//
// GPU costs. Encode: bitpack_ext's encode of every frame, a pass over the values that finds each
// frame's distinct values in a hash table while there are few enough (frames of more stop early),
// a pass that counts each chunk's runs, one copy of those counts to the host; for the frames that
// have a dictionary a pass that codes their rows, for those that may take runs a pass that writes
// them, for every frame of 16 rows or more a pass that writes its differences' bases and
// residuals (a warp a group); bitpack_ext's encode of the dictionaries, codes, runs, bases and
// residuals (in memory of their own, up to about three times the frames' raw bytes, from the
// device pool) and the copy of the smallest result into place. Decode: the base class's checksum
// pass, one copy of each frame's fields to the host, bitpack_ext's decode of every embedded frame
// (codes and residuals straight into the target, runs and bases into memory from the pool), a
// pass that replaces each code by its value in place, for runs a scan that checks the lengths and
// a pass that writes each row its run's value, and for differences a pass that adds up each tile
// in place (a warp a tile).
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

class dict_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::dict; }
  std::string_view name() const noexcept override { return "dict"; }
  bool supports(value_type type) const noexcept override;
  /// Below the bit-packing codecs: chosen per column by its estimate, not by default.
  int preference() const noexcept override { return 8; }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;

  /// The codec that packs the dictionaries, codes and plain frames: bitpack_ext.
  static const codec& packer();

 protected:
  std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const override;
  void encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads, cudaStream_t stream) const override;
  void encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t capacity) const override;

  std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const override;
  void decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads, cudaStream_t stream) const override;
  frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                   const decode_target& target) const override;
};

}  // namespace zs::codecs
