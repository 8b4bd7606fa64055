#include <cub/device/device_memcpy.cuh>

#include "common/work_map.hpp"
#include "raw/raw_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::raw {
namespace {

constexpr unsigned per_frame_threads = 128;
constexpr unsigned offset_threads = 256;

unsigned blocks_for(std::size_t items, unsigned threads) {
  return static_cast<unsigned>((items + threads - 1) / threads);
}

__host__ __device__ std::uint64_t raw_payload_bytes(value_type type, std::uint64_t count,
                                                    std::uint64_t raw_bytes) {
  return raw_bytes + (type == value_type::string ? (count + 1) * 8 : 0);
}

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

__global__ void encode_prepare_kernel(codec::device_encode_batch batch, copy_lists lists) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= batch.num_frames) return;
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
  detail::store_le(frame + 24, raw_payload_bytes(s.type, s.count, raw), 8);
}

// Writes the relative offsets of string frames into their payloads.
__global__ void encode_offsets_kernel(codec::device_encode_batch batch,
                                      const std::uint64_t* chunk_begin) {
  std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, blockIdx.x);
  encode_source const& s = batch.sources[f];
  auto* out = reinterpret_cast<std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
  std::int64_t const base = s.offsets[0];
  std::uint64_t const first = (blockIdx.x - chunk_begin[f]) * offsets_per_chunk;
  for (std::uint64_t k = threadIdx.x; k < offsets_per_chunk; k += offset_threads) {
    std::uint64_t const i = first + k;
    if (i <= s.count) out[i] = s.offsets[i] - base;
  }
}

__global__ void check_payload_sizes_kernel(codec::device_decode_batch batch) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= batch.num_frames || batch.status[f] != frame_status::ok) return;
  frame_header const h = load_header(batch.frames + batch.frame_offsets[f]);
  if (h.payload_bytes != raw_payload_bytes(h.type, h.value_count, h.raw_bytes)) {
    batch.status[f] = frame_status::corrupt_payload;
  }
}

// Checks that string offsets start at 0, never decrease and end at the character count.
__global__ void check_offsets_kernel(codec::device_decode_batch batch, const std::uint64_t* chunk_begin) {
  std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, blockIdx.x);
  if (batch.status[f] != frame_status::ok) return;
  decode_target const& t = batch.targets[f];
  auto const* offsets = reinterpret_cast<const std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
  std::uint64_t const first = (blockIdx.x - chunk_begin[f]) * offsets_per_chunk;
  auto const chars = static_cast<std::int64_t>(t.chars_bytes);
  bool bad = false;
  for (std::uint64_t k = threadIdx.x; k < offsets_per_chunk; k += offset_threads) {
    std::uint64_t const i = first + k;
    if (i > t.count) break;
    std::int64_t const o = offsets[i];
    if (o < 0 || o > chars) bad = true;
    if (i == 0 && o != 0) bad = true;
    if (i == t.count && o != chars) bad = true;
    if (i < t.count && offsets[i + 1] < o) bad = true;
  }
  // A racing write of the same value by several threads is harmless.
  if (bad) batch.status[f] = frame_status::corrupt_payload;
}

__global__ void decode_prepare_kernel(codec::device_decode_batch batch, copy_lists lists) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= batch.num_frames) return;
  decode_target const& t = batch.targets[f];
  const std::byte* payload = batch.frames + batch.frame_offsets[f] + frame_header_bytes;
  bool const ok = batch.status[f] == frame_status::ok;
  if (t.type == value_type::string) {
    lists.src[f] = payload + (t.count + 1) * 8;
    lists.dst[f] = static_cast<std::byte*>(t.values) + t.chars_begin;
  } else {
    lists.src[f] = payload;
    lists.dst[f] = t.values;
  }
  lists.size[f] = ok ? t.raw_bytes() : 0;
}

__global__ void decode_offsets_kernel(codec::device_decode_batch batch, const std::uint64_t* chunk_begin) {
  std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, blockIdx.x);
  if (batch.status[f] != frame_status::ok) return;
  decode_target const& t = batch.targets[f];
  auto const* in = reinterpret_cast<const std::int64_t*>(batch.frames + batch.frame_offsets[f] + frame_header_bytes);
  auto const base = static_cast<std::int64_t>(t.chars_begin);
  std::uint64_t const first = (blockIdx.x - chunk_begin[f]) * offsets_per_chunk;
  for (std::uint64_t k = threadIdx.x; k < offsets_per_chunk; k += offset_threads) {
    std::uint64_t const i = first + k;
    if (i <= t.count) t.offsets[i] = base + in[i];
  }
}

}  // namespace

std::size_t temp_bytes(std::size_t num_frames) {
  return 3 * align256(num_frames * 8) + cub_temp_bytes(num_frames);
}

void encode(const codec::device_encode_batch& batch, const std::uint64_t* offset_chunk_begin,
            std::uint64_t num_offset_chunks, void* temp, std::size_t temp_size, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  ZS_EXPECTS(temp_size >= temp_bytes(batch.num_frames), "temp storage from raw::temp_bytes");
  void* cub_temp = nullptr;
  copy_lists const lists = carve(temp, batch.num_frames, cub_temp);
  encode_prepare_kernel<<<blocks_for(batch.num_frames, per_frame_threads), per_frame_threads, 0, stream>>>(batch, lists);
  ZS_CUDA_CHECK_LAUNCH();
  run_copies(lists, batch.num_frames, cub_temp, cub_temp_bytes(batch.num_frames), stream);
  if (num_offset_chunks > 0) {
    encode_offsets_kernel<<<static_cast<unsigned>(num_offset_chunks), offset_threads, 0, stream>>>(
        batch, offset_chunk_begin);
    ZS_CUDA_CHECK_LAUNCH();
  }
}

void decode(const codec::device_decode_batch& batch, const std::uint64_t* offset_chunk_begin,
            std::uint64_t num_offset_chunks, void* temp, std::size_t temp_size, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  ZS_EXPECTS(temp_size >= temp_bytes(batch.num_frames), "temp storage from raw::temp_bytes");
  void* cub_temp = nullptr;
  copy_lists const lists = carve(temp, batch.num_frames, cub_temp);
  unsigned const frame_blocks = blocks_for(batch.num_frames, per_frame_threads);
  check_payload_sizes_kernel<<<frame_blocks, per_frame_threads, 0, stream>>>(batch);
  ZS_CUDA_CHECK_LAUNCH();
  if (num_offset_chunks > 0) {
    check_offsets_kernel<<<static_cast<unsigned>(num_offset_chunks), offset_threads, 0, stream>>>(
        batch, offset_chunk_begin);
    ZS_CUDA_CHECK_LAUNCH();
  }
  decode_prepare_kernel<<<frame_blocks, per_frame_threads, 0, stream>>>(batch, lists);
  ZS_CUDA_CHECK_LAUNCH();
  run_copies(lists, batch.num_frames, cub_temp, cub_temp_bytes(batch.num_frames), stream);
  if (num_offset_chunks > 0) {
    decode_offsets_kernel<<<static_cast<unsigned>(num_offset_chunks), offset_threads, 0, stream>>>(
        batch, offset_chunk_begin);
    ZS_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace zs::kernels::raw
