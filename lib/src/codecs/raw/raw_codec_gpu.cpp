// The raw codec on the GPU: launches kernels/raw over the whole batch.
#include <vector>

#include "codecs/raw/raw_codec.hpp"
#include "common/work_map.hpp"
#include "raw/raw_kernels.hpp"
#include "temp_layout.hpp"
#include "zs/memory.hpp"
#include "codecs/raw/raw_tuning.hpp"

namespace zs::codecs {
namespace {

// The string-offset kernels' launch for a batch, and their chunk map: string offsets per frame
// (count + 1 for strings, none otherwise) in chunks of the launch's offsets per chunk.
struct offset_plan {
  launch_choice choice;
  std::vector<std::uint64_t> chunk_begin;
};

template <typename Descriptor>
offset_plan plan_offsets(std::span<const Descriptor> frames) {
  std::vector<std::uint64_t> offsets(frames.size());
  std::uint64_t total = 0;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    offsets[f] = frames[f].type == value_type::string ? frames[f].count + 1 : 0;
    total += offsets[f];
  }
  offset_plan p;
  p.choice = choose_launch(raw_offsets_spec, value_type::string, total * sizeof(std::int64_t));
  p.chunk_begin = kernels::chunk_prefix(offsets, p.choice.params.items);
  return p;
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
                                      const encode_batch& host, void* temp,
                                      std::size_t temp_bytes, detail::upload_image& uploads,
                                      cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames);
  offset_plan const p = plan_offsets(host.sources);
  uploads.put<std::uint64_t>(s.chunk_begin, p.chunk_begin);
  uploads.send(stream);
  kernels::raw::encode(batch, p.choice, s.chunk_begin, p.chunk_begin.back(), s.kernel_temp, s.kernel_bytes,
                       stream);
}

std::size_t raw_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  return scratch_bytes(targets.size());
}

void raw_codec::decode_payloads_async(const device_decode_batch& batch,
                                      const decode_batch& host, void* temp,
                                      std::size_t temp_bytes, detail::upload_image& uploads,
                                      cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames);
  offset_plan const p = plan_offsets(host.targets);
  uploads.put<std::uint64_t>(s.chunk_begin, p.chunk_begin);
  uploads.send(stream);
  kernels::raw::decode(batch, p.choice, s.chunk_begin, p.chunk_begin.back(), s.kernel_temp, s.kernel_bytes,
                       stream);
}

}  // namespace zs::codecs
