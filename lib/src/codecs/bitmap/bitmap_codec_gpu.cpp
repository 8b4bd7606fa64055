// The bitmap codec on the GPU: plans the chunk map of a batch and launches kernels/bitmap over it.
#include <vector>

#include "bitmap/bitmap_kernels.hpp"
#include "codecs/bitmap/bitmap_codec.hpp"
#include "codecs/bitmap/bitmap_tuning.hpp"
#include "temp_layout.hpp"

namespace zs::codecs {
namespace {

// A batch's launch of the chunk kernels and its chunk map: each frame's rows in chunks of the
// launch's rows per chunk (encode gives every frame a chunk, for its header).
struct chunk_plan {
  launch_choice choice;
  std::vector<std::uint64_t> chunk_begin;
};

template <typename Descriptor>
chunk_plan plan_chunks(std::span<const Descriptor> frames, bool encoding) {
  std::uint64_t rows = 0;
  for (auto const& d : frames) rows += d.count;
  chunk_plan p;
  // One byte a row: the rows are the bytes the launch covers.
  p.choice = choose_launch(bitmap_chunks_spec, frames.empty() ? value_type::uint8 : frames.front().type, rows);
  std::uint64_t const chunk_rows = p.choice.params.items;
  p.chunk_begin.assign(frames.size() + 1, 0);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    std::uint64_t const count = frames[f].count;
    std::uint64_t const chunks =
        encoding ? kernels::bitmap::encode_chunks(count, chunk_rows) : (count + chunk_rows - 1) / chunk_rows;
    p.chunk_begin[f + 1] = p.chunk_begin[f] + chunks;
  }
  return p;
}

struct scratch {
  std::uint64_t* chunk_begin;
  std::uint32_t* content_flags;  // encode only
};

scratch carve(detail::temp_layout& layout, std::size_t n, bool encoding) {
  scratch s{};
  s.chunk_begin = layout.take<std::uint64_t>(n + 1);
  s.content_flags = encoding ? layout.take<std::uint32_t>(n) : nullptr;
  return s;
}

std::size_t scratch_bytes(std::size_t n, bool encoding) {
  detail::temp_layout layout;
  carve(layout, n, encoding);
  return layout.bytes();
}

}  // namespace

std::size_t bitmap_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  return scratch_bytes(sources.size(), true);
}

void bitmap_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                         std::size_t temp_bytes, detail::upload_image& uploads,
                                         cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames, true);
  chunk_plan const p = plan_chunks(host.sources, true);
  // The chunk map and the zeroed content flags go up with the base class's descriptors.
  uploads.put<std::uint64_t>(s.chunk_begin, p.chunk_begin);
  uploads.zero(s.content_flags, batch.num_frames * sizeof(std::uint32_t));
  uploads.send(stream);
  kernels::bitmap::encode(batch, p.choice, s.chunk_begin, p.chunk_begin.back(), s.content_flags, stream);
}

std::size_t bitmap_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  return scratch_bytes(targets.size(), false);
}

void bitmap_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                                         std::size_t temp_bytes, detail::upload_image& uploads,
                                         cudaStream_t stream) const {
  detail::temp_layout layout(temp, temp_bytes);
  scratch const s = carve(layout, batch.num_frames, false);
  chunk_plan const p = plan_chunks(host.targets, false);
  uploads.put<std::uint64_t>(s.chunk_begin, p.chunk_begin);
  uploads.send(stream);
  kernels::bitmap::decode(batch, p.choice, s.chunk_begin, p.chunk_begin.back(), stream);
}

}  // namespace zs::codecs
