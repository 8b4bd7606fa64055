#include <cub/device/device_memcpy.cuh>

#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "raw/raw_format.hpp"
#include "raw/raw_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::raw {
namespace {

struct copy_lists {
  const void** src;
  void** dst;
  std::uint64_t* size;
};

// Temp layout: three arrays of num_frames entries, then CUB's scratch.
std::size_t align256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t cub_temp_bytes(std::size_t num_frames) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, bytes, static_cast<const void**>(nullptr),
                                         static_cast<void**>(nullptr),
                                         static_cast<std::uint64_t*>(nullptr),
                                         static_cast<std::int64_t>(num_frames)));
  return bytes;
}

copy_lists carve(void* temp, std::size_t num_frames, void*& cub_temp) {
  auto* base = static_cast<std::byte*>(temp);
  std::size_t const list = align256(num_frames * 8);
  copy_lists lists{reinterpret_cast<const void**>(base), reinterpret_cast<void**>(base + list),
                   reinterpret_cast<std::uint64_t*>(base + 2 * list)};
  cub_temp = base + 3 * list;
  return lists;
}

void run_copies(const copy_lists& lists, std::size_t num_frames, void* cub_temp,
                std::size_t cub_bytes, cudaStream_t stream) {
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(cub_temp, cub_bytes, lists.src, lists.dst, lists.size,
                                         static_cast<std::int64_t>(num_frames), stream));
}

__global__ void encode_prepare_kernel(device_encode_batch batch, copy_lists lists) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    encode_source const& s = batch.sources[f];
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* payload = frame + frame_header_bytes;
    std::uint64_t const raw = s.raw_bytes();
    if (s.type == value_type::string) {
      lists.src[f] = static_cast<const std::byte*>(s.values) + s.offsets[0];
      lists.dst[f] = payload + (s.count + 1) * 8;
    } else {
      lists.src[f] = s.values;
      lists.dst[f] = payload;
    }
    lists.size[f] = raw;
    store_encoder_fields(frame, codec_id::raw, ::zs::raw::payload_bytes(s.type, s.count, raw));
  }
}

// Writes the relative offsets of string frames into their payloads, a chunk of chunk_items
// offsets per block at a time.
__global__ void encode_offsets_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin,
                                      std::uint64_t num_chunks, std::uint64_t chunk_items) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    encode_source const& s = batch.sources[f];
    auto* out = reinterpret_cast<std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
    std::int64_t const base = s.offsets[0];
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_items;
    for (std::uint64_t k = threadIdx.x; k < chunk_items; k += blockDim.x) {
      std::uint64_t const i = first + k;
      if (i <= s.count) out[i] = s.offsets[i] - base;
    }
  }
}

// The raw format's header rules (zero parameters, payload sizes), the CPU reference's own, before
// any kernel reads a payload: afterwards every offset and character read lies inside the frame.
__global__ void check_headers_kernel(device_decode_batch batch) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    if (batch.status[f] != frame_status::ok) continue;
    batch.status[f] = ::zs::raw::check_header(load_header(batch.frames + batch.frame_offsets[f]));
  }
}

// Checks that string offsets start at 0, never decrease and end at the character count.
__global__ void check_offsets_kernel(device_decode_batch batch, const std::uint64_t* chunk_begin,
                                     std::uint64_t num_chunks, std::uint64_t chunk_items) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    auto const* offsets =
        reinterpret_cast<const std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_items;
    auto const chars = static_cast<std::int64_t>(t.chars_bytes);
    bool bad = false;
    for (std::uint64_t k = threadIdx.x; k < chunk_items; k += blockDim.x) {
      std::uint64_t const i = first + k;
      if (i > t.count) break;
      std::int64_t const o = offsets[i];
      if (o < 0 || o > chars) bad = true;
      if (i == 0 && o != 0) bad = true;
      if (i == t.count && o != chars) bad = true;
      if (i < t.count && offsets[i + 1] < o) bad = true;
    }
    // A racing write of the same value by several threads is harmless. Other threads of the
    // block may read this status for their next chunk: a late read only skips less work, and
    // the decode that follows this kernel sees the final status.
    if (bad) batch.status[f] = frame_status::corrupt_payload;
  }
}

__global__ void decode_prepare_kernel(device_decode_batch batch, copy_lists lists) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    decode_target const& t = batch.targets[f];
    const std::byte* payload = batch.frames + batch.frame_offsets[f] + frame_header_bytes;
    if (batch.status[f] != frame_status::ok) {
      // A refused frame copies nothing, and its sizes may describe bytes it does not have.
      lists.src[f] = payload;
      lists.dst[f] = t.values;
      lists.size[f] = 0;
    } else if (t.type == value_type::string) {
      lists.src[f] = payload + (t.count + 1) * 8;
      lists.dst[f] = static_cast<std::byte*>(t.values) + t.chars_begin;
      lists.size[f] = t.chars_bytes;
    } else {
      lists.src[f] = payload;
      lists.dst[f] = t.values;
      lists.size[f] = t.raw_bytes();
    }
  }
}

__global__ void decode_offsets_kernel(device_decode_batch batch, const std::uint64_t* chunk_begin,
                                      std::uint64_t num_chunks, std::uint64_t chunk_items) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    auto const* in = reinterpret_cast<const std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
    auto const base = static_cast<std::int64_t>(t.chars_begin);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_items;
    for (std::uint64_t k = threadIdx.x; k < chunk_items; k += blockDim.x) {
      std::uint64_t const i = first + k;
      if (i <= t.count) t.offsets[i] = base + in[i];
    }
  }
}

template <class Kernel, class... Args>
void launch_per_frame(Kernel kernel, std::size_t num_frames, cudaStream_t stream, Args... args) {
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), num_frames);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

template <class Kernel, class Batch>
void launch_offsets(Kernel kernel, const launch_choice& choice, const Batch& batch, const std::uint64_t* chunk_begin,
                    std::uint64_t num_chunks, cudaStream_t stream) {
  if (num_chunks == 0) return;
  expect_launch_of("raw_offsets", choice);
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, num_chunks);
  std::uint64_t const chunk_items = choice.params.items;
  observed_launch(r, stream, [&] {
    kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(batch, chunk_begin, num_chunks, chunk_items);
  });
}

}  // namespace

std::size_t temp_bytes(std::size_t num_frames) {
  return 3 * align256(num_frames * 8) + cub_temp_bytes(num_frames);
}

void encode(const device_encode_batch& batch, const launch_choice& offsets,
            const std::uint64_t* offset_chunk_begin, std::uint64_t num_offset_chunks, void* temp,
            std::size_t temp_size, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  ZS_EXPECTS(temp_size >= temp_bytes(batch.num_frames), "temp storage from raw::temp_bytes");
  void* cub_temp = nullptr;
  copy_lists const lists = carve(temp, batch.num_frames, cub_temp);
  launch_per_frame(encode_prepare_kernel, batch.num_frames, stream, batch, lists);
  run_copies(lists, batch.num_frames, cub_temp, cub_temp_bytes(batch.num_frames), stream);
  launch_offsets(encode_offsets_kernel, offsets, batch, offset_chunk_begin, num_offset_chunks, stream);
}

void decode(const device_decode_batch& batch, const launch_choice& offsets,
            const std::uint64_t* offset_chunk_begin, std::uint64_t num_offset_chunks, void* temp,
            std::size_t temp_size, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  ZS_EXPECTS(temp_size >= temp_bytes(batch.num_frames), "temp storage from raw::temp_bytes");
  void* cub_temp = nullptr;
  copy_lists const lists = carve(temp, batch.num_frames, cub_temp);
  launch_per_frame(check_headers_kernel, batch.num_frames, stream, batch);
  launch_offsets(check_offsets_kernel, offsets, batch, offset_chunk_begin, num_offset_chunks, stream);
  launch_per_frame(decode_prepare_kernel, batch.num_frames, stream, batch, lists);
  run_copies(lists, batch.num_frames, cub_temp, cub_temp_bytes(batch.num_frames), stream);
  launch_offsets(decode_offsets_kernel, offsets, batch, offset_chunk_begin, num_offset_chunks, stream);
}

}  // namespace zs::kernels::raw
