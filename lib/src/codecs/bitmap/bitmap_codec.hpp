// The bitmap codec: columns of one byte a row (uint8, bool8), written as a constant, as one bit
// a row, or as the bytes themselves, whichever is smallest. Made for null masks, which travel as
// a byte of 0 or 1 per row: a frame of all-valid or all-null rows costs its header and 9 bytes
// whatever its rows, a mixed one a bit a row, and any other byte column stays lossless at raw
// size plus 8 bytes.
//
// Payload: docs/FORMAT.md, "Codec 11: bitmap"; the rules are in kernels/bitmap/bitmap_format.hpp,
// which the CPU reference and the GPU kernels share. No codec or column parameters. It is never
// a default codec (preference 0, like raw, which comes first): callers choose it by id or name.
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

class bitmap_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::bitmap; }
  std::string_view name() const noexcept override { return "bitmap"; }
  bool supports(value_type type) const noexcept override;
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;

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
