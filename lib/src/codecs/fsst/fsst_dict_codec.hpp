// The fsst_dict codec: strings of few distinct values as a dictionary and codes. Each frame
// carries the distinct values of its rows in order of first occurrence, as a strings section
// coded with the column's FSST symbol table, and one code per row (the index of its value in the
// dictionary), bit-packed by the bitpack integer codec as an embedded frame.
//
// Format: docs/FORMAT.md, "Codec 7: fsst_dict". The column parameters are the fsst codec's
// symbol table, built the same way. A planner picks it over fsst by the codecs' estimates: it
// wins on low-cardinality columns (deb_maintainers: 2,247 distinct values in 63,440 rows) and
// loses where most values are distinct.
//
// On the GPU the encoder finds the distinct values and codes on the device and codes the
// dictionaries and codes with the fsst and bitpack kernels (fsst_dict_codec_gpu.cpp): the CPU
// reference's bytes. The GPU decoder decodes on the device, batched over many frames: each
// dictionary recast as an fsst frame and decoded by the fsst kernels, the codes by the bitpack
// kernels, then the rows gathered from the dictionaries (kernels/fsst/fsst_dict_kernels.hpp); the
// CPU reference's statuses and bytes, after one small copy to the host per batch (where each
// dictionary lies and its sizes, to plan their decoding).
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

class fsst_dict_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::fsst_dict; }
  std::string_view name() const noexcept override { return "fsst_dict"; }
  bool supports(value_type type) const noexcept override { return type == value_type::string; }
  /// Below fsst: never the default; a planner chooses it by estimate.
  int preference() const noexcept override { return 5; }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;
  std::uint64_t params_bytes(value_type type) const noexcept override;

 protected:
  void prepare_params_host(const sample_batch& samples, std::byte* params,
                           std::span<const std::uint64_t> params_offsets) const override;
  void prepare_params_async(const sample_batch& samples, std::byte* params,
                            std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const override;

  std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const override;
  void encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  void encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t capacity) const override;

  std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const override;
  void decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                   const decode_target& target) const override;
};

}  // namespace zs::codecs
