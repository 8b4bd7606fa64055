// The raw codec on the GPU: launches kernels/raw over the whole batch.
#include <vector>

#include "codecs/raw_codec.hpp"
#include "common/work_map.hpp"
#include "raw/raw_kernels.hpp"
#include "temp_layout.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {
namespace {

// String offsets per frame (count + 1 for strings, none otherwise), cut into kernel chunks.
template <typename Descriptor>
std::vector<std::uint64_t> offset_chunks(std::span<const Descriptor> frames) {
  std::vector<std::uint64_t> offsets(frames.size());
  for (std::size_t f = 0; f < frames.size(); ++f) {
    offsets[f] = frames[f].type == value_type::string ? frames[f].count + 1 : 0;
  }
  return kernels::chunk_prefix(offsets, kernels::raw::offsets_per_chunk);
}

struct scratch {
  std::uint64_t* chunk_begin;
  void* kernel_temp;
  std::size_t kernel_bytes;
};

scratch carve(detail::temp_layout& layout, std::size_t n) {
  scratch s{};
  s.chunk_begin = layout.take<std::uint64_t>(n + 1);
  s.kernel_bytes = kernels::raw::temp_bytes(n);
  s.kernel_temp = layout.take<std::byte>(s.kernel_bytes);
  return s;
}

std::size_t scratch_bytes(std::size_t n) {
  detail::temp_layout layout;
  carve(layout, n);
  return layout.bytes();
}

}  // namespace

std::size_t raw_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  return scratch_bytes(sources.size());
}

void raw_codec::encode_payloads_async(const device_encode_batch& batch,
                                      std::span<const encode_source> host_sources, void* temp,
                                      std::size_t temp_bytes, cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames);
  auto const chunks = offset_chunks(host_sources);
  copy_async(s.chunk_begin, chunks.data(), chunks.size() * sizeof(std::uint64_t), stream);
  kernels::raw::encode(batch, s.chunk_begin, chunks.back(), s.kernel_temp, s.kernel_bytes, stream);
}

std::size_t raw_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  return scratch_bytes(targets.size());
}

void raw_codec::decode_payloads_async(const device_decode_batch& batch,
                                      std::span<const decode_target> host_targets, void* temp,
                                      std::size_t temp_bytes, cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames);
  auto const chunks = offset_chunks(host_targets);
  copy_async(s.chunk_begin, chunks.data(), chunks.size() * sizeof(std::uint64_t), stream);
  kernels::raw::decode(batch, s.chunk_begin, chunks.back(), s.kernel_temp, s.kernel_bytes, stream);
}

}  // namespace zs::codecs
