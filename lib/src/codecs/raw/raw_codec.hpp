// The raw codec: values stored as they are. The fallback whenever compression does not pay,
// and the baseline every other codec is measured against.
//
// Payload (docs/FORMAT.md, "raw"; the rules are in kernels/raw/raw_format.hpp): fixed-width
// values, little-endian, count x width bytes. Strings: count + 1 int64 offsets relative to the
// first (offsets[0] == 0), then the characters. No codec parameters.
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

class raw_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::raw; }
  std::string_view name() const noexcept override { return "raw"; }
  bool supports(value_type type) const noexcept override { return is_valid(type); }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;

 protected:
  std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const override;
  void encode_payloads_async(const device_encode_batch& batch,
                             const encode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  void encode_payload_host(const encode_source& source, std::byte* frame,
                           std::uint64_t capacity) const override;

  std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const override;
  void decode_payloads_async(const device_decode_batch& batch,
                             const decode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                   const decode_target& target) const override;
};

}  // namespace zs::codecs
