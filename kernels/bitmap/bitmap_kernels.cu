#include <string>

#include "bitmap/bitmap_format.hpp"
#include "bitmap/bitmap_kernels.hpp"
#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "zs/error.hpp"

namespace zs::kernels::bitmap {
namespace {

using ::zs::bitmap::mode;

// What the scan finds against a frame's content, one bit each: a row that differs from the
// first, a row above 1. Flags only ever gain bits, so chunks may note them in any order.
constexpr std::uint32_t seen_unequal = 1;
constexpr std::uint32_t seen_non_binary = 2;

__device__ inline mode mode_of_flags(std::uint64_t rows, std::uint32_t flags) {
  return ::zs::bitmap::choose(rows, {(flags & seen_unequal) == 0, (flags & seen_non_binary) == 0});
}

// Notes in content_flags[f] what each chunk of rows rules out: an OR over the block, then one
// atomic per chunk and flag found. The OR is __syncthreads_or, a barrier that reduces a predicate
// in hardware for any block size; a CUB BlockReduce would need the block size, a tunable here,
// at compile time and shared memory for nothing more.
__global__ void scan_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                            std::uint64_t chunk_rows, std::uint32_t* content_flags) {
  __shared__ std::uint32_t known;
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    // A frame whose rows already rule out both short modes has nothing left to learn. The flags
    // may change while other blocks run: one thread reads them for the block, so that every
    // thread takes the same branch to the barriers below.
    __syncthreads();  // the previous chunk's readers of `known` are done
    if (threadIdx.x == 0) known = *static_cast<volatile std::uint32_t*>(content_flags + f);
    __syncthreads();
    if (known == (seen_unequal | seen_non_binary)) continue;
    encode_source const& s = batch.sources[f];
    auto const* values = static_cast<const std::uint8_t*>(s.values);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    std::uint32_t mine = 0;
    if (first < end) {
      std::uint8_t const reference = values[0];
      for (std::uint64_t i = first + threadIdx.x; i < end; i += blockDim.x) {
        std::uint8_t const v = values[i];
        if (v != reference) mine |= seen_unequal;
        if (v > 1) mine |= seen_non_binary;
      }
    }
    std::uint32_t const found = (__syncthreads_or(mine & seen_unequal) ? seen_unequal : 0U) |
                                (__syncthreads_or(mine & seen_non_binary) ? seen_non_binary : 0U);
    if (threadIdx.x == 0 && (found & ~known) != 0) atomicOr(content_flags + f, found);
  }
}

// Writes each frame's body in the mode its flags give: the block of its first chunk writes the
// body header (and the constant) and the header fields; every chunk writes its rows' bits or
// bytes. Bits: each warp takes 32 rows at a time, votes their bits into one word, and four of its
// lanes write the word's bytes that lie inside the data; rows past the frame's end vote 0, which
// are the format's zero bits past the last row.
__global__ void write_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                             std::uint64_t chunk_rows, const std::uint32_t* content_flags) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    encode_source const& s = batch.sources[f];
    std::uint64_t const rows = s.count;
    mode const m = mode_of_flags(rows, content_flags[f]);
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* payload = frame + frame_header_bytes;
    std::byte* data = payload + ::zs::bitmap::body_header_bytes;
    auto const* values = static_cast<const std::uint8_t*>(s.values);
    std::uint64_t const local = chunk - chunk_begin[f];
    if (local == 0 && threadIdx.x == 0) {
      ::zs::bitmap::store_body_header(payload, m);
      if (m == mode::constant) data[0] = static_cast<std::byte>(values[0]);
      store_encoder_fields(frame, codec_id::bitmap, ::zs::bitmap::payload_bytes(m, rows));
    }
    if (m == mode::constant) continue;
    std::uint64_t const first = local * chunk_rows;
    if (m == mode::bytes) {
      std::uint64_t const end = rows - first < chunk_rows ? rows : first + chunk_rows;
      for (std::uint64_t i = first + threadIdx.x; i < end; i += blockDim.x) data[i] = static_cast<std::byte>(values[i]);
      continue;
    }
    std::uint64_t const data_end = ::zs::bitmap::data_bytes(mode::bits, rows);
    unsigned const lane = threadIdx.x % 32;
    // chunk_rows is a multiple of blockDim.x (the spec's candidates), so every warp runs every
    // round of this loop, as the vote needs.
    for (std::uint64_t round = 0; round < chunk_rows; round += blockDim.x) {
      std::uint64_t const i = first + round + threadIdx.x;
      unsigned const word = __ballot_sync(0xffffffffU, i < rows && values[i] != 0);
      std::uint64_t const byte = (i - lane) / 8 + lane;
      if (lane < 4 && byte < data_end) data[byte] = static_cast<std::byte>((word >> (8 * lane)) & 0xffU);
    }
  }
}

// The format's rules, the CPU reference's own, before any kernel reads a body past its header.
__global__ void check_kernel(device_decode_batch batch) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    if (batch.status[f] != frame_status::ok) continue;
    const std::byte* frame = batch.frames + batch.frame_offsets[f];
    batch.status[f] = ::zs::bitmap::check_frame(load_header(frame), frame + frame_header_bytes);
  }
}

__global__ void decode_kernel(device_decode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                              std::uint64_t chunk_rows) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    const std::byte* payload = batch.frames + batch.frame_offsets[f] + frame_header_bytes;
    mode const m = ::zs::bitmap::mode_of(payload);
    const std::byte* data = payload + ::zs::bitmap::body_header_bytes;
    auto* out = static_cast<std::uint8_t*>(t.values);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = t.count - first < chunk_rows ? t.count : first + chunk_rows;
    for (std::uint64_t i = first + threadIdx.x; i < end; i += blockDim.x) out[i] = ::zs::bitmap::value_at(m, data, i);
  }
}

void expect_chunk_launch(const launch_choice& choice) {
  expect_launch_of(chunks_kernel_name, choice);
  ZS_EXPECTS(choice.params.threads % 32 == 0 && choice.params.items % choice.params.threads == 0,
             "bitmap chunks of whole blocks of whole warps (" + std::to_string(choice.params.items) + " rows, " +
                 std::to_string(choice.params.threads) + " threads)");
}

template <class Kernel, class Batch, class... Args>
void launch_chunks(Kernel kernel, const launch_choice& choice, const Batch& batch, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, cudaStream_t stream, Args... args) {
  if (num_chunks == 0) return;
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, num_chunks);
  std::uint64_t const chunk_rows = choice.params.items;
  observed_launch(r, stream, [&] {
    kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(batch, chunk_begin, num_chunks, chunk_rows, args...);
  });
}

}  // namespace

void encode(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
            std::uint64_t num_chunks, std::uint32_t* content_flags, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  expect_chunk_launch(chunks);
  launch_chunks(scan_kernel, chunks, batch, chunk_begin, num_chunks, stream, content_flags);
  launch_chunks(write_kernel, chunks, batch, chunk_begin, num_chunks, stream,
                static_cast<const std::uint32_t*>(content_flags));
}

void decode(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
            std::uint64_t num_chunks, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  expect_chunk_launch(chunks);
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(check_kernel), frame_ops_choice(), batch.num_frames);
  observed_launch(r, stream, [&] { check_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(batch); });
  launch_chunks(decode_kernel, chunks, batch, chunk_begin, num_chunks, stream);
}

}  // namespace zs::kernels::bitmap
