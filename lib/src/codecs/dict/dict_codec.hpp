// The dict codec: integer columns of few distinct values or of long runs. Per frame, the smallest
// of three forms, each packed by the extended bit-packing codec (bitpack_ext) as embedded frames:
// the values alone (plain); a sorted dictionary and a code per row; or the lengths of the runs of
// equal values and each run's value. So its frames are never larger than bitpack_ext's by more
// than one header (64 bytes); on a column of 64 distinct values they take about 6 bits a row
// whatever the values' spread, and on long runs a few bytes a run.
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
// them; bitpack_ext's encode of the dictionaries, codes and runs (in memory of their own, up to
// twice those frames' raw bytes, from the device pool) and the copy of the smallest result into
// place. Decode: the base class's checksum pass, one copy of each frame's fields to the host,
// bitpack_ext's decode of every embedded frame (codes straight into the target, runs into memory
// from the pool), a pass that replaces each code by its value in place, and for runs a block per
// frame that checks the lengths and a pass that writes each row its run's value.
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
