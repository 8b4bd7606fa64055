// The alp codec on the GPU: plans the vector map of a batch and launches kernels/alp over it.
#include <algorithm>
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

// The scratch of an encode: per frame its first vector, then, where sources have null masks, a
// pointer per frame to the copy of its values (kernels::alp::replace_nulls), the encoder's
// scratch, and the copies. The pointers lie before the encoder's scratch, so that the upload
// which points the descriptors at the copies spans little of it.
struct encode_scratch {
  std::uint64_t* vector_begin = nullptr;
  void** copies = nullptr;  // nullptr: no source has a mask
  void* kernel_temp = nullptr;
  std::size_t kernel_bytes = 0;
  std::vector<void*> copy_of;  // per frame; nullptr without a mask
};

encode_scratch carve_encode(detail::temp_layout& layout, std::span<const encode_source> sources) {
  encode_scratch out;
  out.vector_begin = layout.take<std::uint64_t>(sources.size() + 1);
  bool const masks = std::any_of(sources.begin(), sources.end(), [](const encode_source& s) { return s.null_mask != nullptr; });
  if (masks) out.copies = layout.take<void*>(sources.size());
  out.kernel_bytes = kernels::alp::encode_temp_bytes(vectors_of(sources));
  out.kernel_temp = layout.take<std::byte>(out.kernel_bytes);
  if (masks) {
    for (auto const& s : sources) out.copy_of.push_back(s.null_mask != nullptr ? layout.take<std::byte>(s.raw_bytes()) : nullptr);
  }
  return out;
}

}  // namespace

std::size_t alp_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  carve_encode(layout, sources);
  return layout.bytes();
}

void alp_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                      std::size_t temp_bytes, detail::upload_image& uploads,
                                      cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  encode_scratch const scratch = carve_encode(layout, host.sources);
  std::vector<std::uint64_t> const begin = vector_begin(host.sources);
  uploads.put<std::uint64_t>(scratch.vector_begin, begin);
  launch_choice const choice = choose_launch(alp_encode_spec, type_of(host.sources), raw_bytes_of(host.sources));
  if (scratch.copies != nullptr) {
    // The copies are made from the caller's values; then the descriptors point at them (an
    // upload after the kernel on the stream) and the encoder reads them as it reads any source.
    uploads.put<void*>(scratch.copies, scratch.copy_of);
    uploads.send(stream);
    kernels::alp::replace_nulls(batch, scratch.vector_begin, begin.back(), scratch.copies, choice, stream);
    for (std::size_t f = 0; f < scratch.copy_of.size(); ++f) {
      if (scratch.copy_of[f] == nullptr) continue;
      encode_source copied = host.sources[f];
      copied.values = scratch.copy_of[f];
      copied.null_mask = nullptr;
      copied.null_mask_bit = 0;
      uploads.put<encode_source>(const_cast<encode_source*>(batch.sources) + f, std::span<const encode_source>(&copied, 1));
    }
  }
  uploads.send(stream);
  kernels::alp::encode(batch, scratch.vector_begin, begin.back(), choice, scratch.kernel_temp, scratch.kernel_bytes,
                       stream);
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
