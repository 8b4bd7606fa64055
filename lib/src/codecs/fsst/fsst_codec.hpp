// The fsst codec: strings compressed with a symbol table per column (FSST: up to 255 symbols of
// 1 to 8 bytes, each replaced by a one-byte code), in splits of constant uncompressed size that
// code independently (after GSST): on the GPU a warp encodes, checks and decodes each
// (kernels/fsst/fsst_warp.hpp). The string lengths go through the bitpack integer codec as
// an embedded frame.
//
// Format: docs/FORMAT.md, "Codec 5: fsst"; the rules, the lookup structures and the
// per-split encoder and decoder are in kernels/fsst/fsst_format.hpp, shared by the CPU reference
// (fsst_codec.cpp) and the kernels (kernels/fsst, launched from fsst_codec_gpu.cpp). The column
// parameters are the symbol table, built from a sample of the column (fsst_table_builder.hpp).
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

class fsst_codec final : public codec {
 public:
  codec_id id() const noexcept override { return codec_id::fsst; }
  std::string_view name() const noexcept override { return "fsst"; }
  bool supports(value_type type) const noexcept override { return type == value_type::string; }
  /// Above raw: strings default to fsst.
  int preference() const noexcept override { return 10; }
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

namespace fsst_detail {

/// The codec that packs the string lengths (as uint64 values) into the embedded frame.
const codec& lengths_codec();
/// The embedded lengths frame's source for `count` lengths at `lengths`.
encode_source lengths_source(std::uint64_t count, const std::uint64_t* lengths);
/// Where a frame's body starts in its payload: after the parameter section of the table.
std::uint64_t body_offset();
/// prepare_params_host of fsst and fsst_dict: a table per column from its sample.
void prepare_tables_host(const sample_batch& samples, std::byte* params, std::span<const std::uint64_t> params_offsets);

}  // namespace fsst_detail

}  // namespace zs::codecs
