// The alp codec on the GPU: plans the vector map of a batch and launches kernels/alp over it.
#include <vector>

#include "alp/alp_format.hpp"
#include "alp/alp_kernels.hpp"
#include "codecs/alp/alp_codec.hpp"
#include "codecs/alp/alp_tuning.hpp"
#include "temp_layout.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {
namespace {

// Per frame, the index of its first vector in the batch; the last entry is the batch's vectors.
template <typename Descriptor>
std::vector<std::uint64_t> vector_begin(std::span<const Descriptor> frames) {
  std::vector<std::uint64_t> begin(frames.size() + 1, 0);
  for (std::size_t f = 0; f < frames.size(); ++f) begin[f + 1] = begin[f] + alp::vector_count(frames[f].count);
  return begin;
}

template <typename Descriptor>
std::uint64_t raw_bytes_of(std::span<const Descriptor> frames) {
  std::uint64_t bytes = 0;
  for (auto const& f : frames) bytes += f.raw_bytes();
  return bytes;
}

// The launch's value type: the batch's when it has one type, else none.
template <typename Descriptor>
std::optional<value_type> type_of(std::span<const Descriptor> frames) {
  if (frames.empty()) return std::nullopt;
  for (auto const& f : frames) {
    if (f.type != frames.front().type) return std::nullopt;
  }
  return frames.front().type;
}

std::uint64_t vectors_of(std::span<const encode_source> sources) {
  std::uint64_t n = 0;
  for (auto const& s : sources) n += alp::vector_count(s.count);
  return n;
}

}  // namespace

std::size_t alp_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  layout.take<std::uint64_t>(sources.size() + 1);
  layout.take<std::byte>(kernels::alp::encode_temp_bytes(vectors_of(sources)));
  return layout.bytes();
}

void alp_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                      std::size_t temp_bytes, detail::upload_image& uploads,
                                      cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  std::vector<std::uint64_t> const begin = vector_begin(host.sources);
  auto* device_begin = layout.take<std::uint64_t>(begin.size());
  std::size_t const kernel_bytes = kernels::alp::encode_temp_bytes(begin.back());
  void* kernel_temp = layout.take<std::byte>(kernel_bytes);
  uploads.put<std::uint64_t>(device_begin, begin);
  uploads.send(stream);
  launch_choice const choice = choose_launch(alp_encode_spec, type_of(host.sources), raw_bytes_of(host.sources));
  kernels::alp::encode(batch, device_begin, begin.back(), choice, kernel_temp, kernel_bytes, stream);
}

std::size_t alp_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  layout.take<std::uint64_t>(targets.size() + 1);
  return layout.bytes();
}

void alp_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                                      std::size_t temp_bytes, detail::upload_image& uploads,
                                      cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  std::vector<std::uint64_t> const begin = vector_begin(host.targets);
  auto* device_begin = layout.take<std::uint64_t>(begin.size());
  uploads.put<std::uint64_t>(device_begin, begin);
  uploads.send(stream);
  launch_choice const choice = choose_launch(alp_decode_spec, type_of(host.targets), raw_bytes_of(host.targets));
  kernels::alp::decode(batch, device_begin, begin.back(), choice, stream);
}

void alp_codec::prepare_params_async(const sample_batch& samples, std::byte* params,
                                     std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const {
  std::size_t const columns = samples.columns();
  detail::temp_layout sizing;
  sizing.take<encode_source>(samples.pieces.size());
  sizing.take<std::uint64_t>(samples.piece_begin.size());
  sizing.take<std::uint64_t>(params_offsets.size());
  device_buffer scratch(sizing.bytes(), stream);
  detail::temp_layout layout(scratch.data(), scratch.size());
  auto* pieces = layout.take<encode_source>(samples.pieces.size());
  auto* piece_begin = layout.take<std::uint64_t>(samples.piece_begin.size());
  auto* offsets = layout.take<std::uint64_t>(params_offsets.size());
  detail::upload_image uploads(scratch.data());
  uploads.put<encode_source>(pieces, samples.pieces);
  uploads.put<std::uint64_t>(piece_begin, samples.piece_begin);
  uploads.put<std::uint64_t>(offsets, params_offsets);
  uploads.send(stream);
  kernels::alp::prepare(pieces, piece_begin, columns, params, offsets, stream);
}

}  // namespace zs::codecs
