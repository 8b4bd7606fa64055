// The dict codec: integer columns of few distinct values, as a sorted dictionary and a code per
// row, both packed by the extended bit-packing codec (bitpack_ext) as embedded frames; or, per
// frame where that is smaller, the values packed by bitpack_ext alone. So its frames are never
// larger than bitpack_ext's by more than one header (64 bytes), and on a column of 64 distinct
// values they take about 6 bits a row whatever the values' spread.
//
// Payload: docs/FORMAT.md, "Codec 12: dict"; the rules are in kernels/dict/dict_format.hpp, which
// the CPU reference and the GPU kernels share. Value types: every integer type. It is not a
// default codec: the spill and the shuffle take it for an integer column where its estimate
// beats the bit-packing codecs' (lib/src/spill.cpp, comm/src/shuffle.cpp), and callers may name it.
//
// GPU costs. Encode: bitpack_ext's encode of every frame, a pass over the values that finds each
// frame's distinct values in a hash table while there are few enough (frames of more stop early),
// one copy of each frame's count to the host, and for the frames that have a dictionary a pass
// that codes their rows, bitpack_ext's encode of the dictionaries and codes (in memory of their
// own, up to twice those frames' raw bytes, from the device pool) and the copy of the smaller
// result into place. Decode: the base class's checksum pass, one copy of each frame's fields to
// the host, bitpack_ext's decode of every embedded frame (codes straight into the target), and a
// pass that replaces each code by its value in place.
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
