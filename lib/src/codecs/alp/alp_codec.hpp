// The alp codec: float32 and float64 columns after ALP ("Adaptive Lossless floating-Point
// compression") and its GPU form G-ALP, on the FastLanes lane layout.
//
// Each frame's body is vectors of 1024 values, each coded on its own as ALP (decimal values as
// integers, frame of reference, bit-packed, exceptions patched), ALP_RD (a left-part
// dictionary and bit-packed right parts) or raw, whichever is smallest, after taking out the
// column's fill value where that pays. Column parameters (ALP exponent/factor candidates, the
// ALP_RD split and dictionary, the fill value) are prepared per column from a sample. The
// format is docs/FORMAT.md, "Codec 4: alp"; kernels/alp/alp_format.hpp holds the per-vector
// coders that the CPU reference and the GPU kernels share.
#pragma once

#include <cstdint>
#include <span>

#include "zs/codec.hpp"

namespace zs::codecs {

/// How an alp frame's vectors are coded: which columns take ALP, ALP_RD or raw vectors, and in
/// how many the column's fill value is taken out (the fill-value path). For reports.
struct alp_vector_mix {
  std::uint64_t alp = 0;
  std::uint64_t alp_rd = 0;
  std::uint64_t raw = 0;
  std::uint64_t with_fill = 0;  // of all three
};

/// The mix of a whole alp frame (header included) of `type` values, as the CPU reference checks
/// it (its header, parameters and every vector); zs::error (corrupt_frame) where it refuses it.
alp_vector_mix vector_mix(std::span<const std::byte> frame, value_type type);

class alp_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::alp; }
  std::string_view name() const noexcept override { return "alp"; }
  bool supports(value_type type) const noexcept override {
    return type == value_type::float32 || type == value_type::float64;
  }
  /// Above raw: the default codec for floats.
  int preference() const noexcept override { return 10; }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;
  std::uint64_t params_bytes(value_type type) const noexcept override;

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

  void prepare_params_async(const sample_batch& samples, std::byte* params,
                            std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const override;
  void prepare_params_host(const sample_batch& samples, std::byte* params,
                           std::span<const std::uint64_t> params_offsets) const override;
};

}  // namespace zs::codecs
