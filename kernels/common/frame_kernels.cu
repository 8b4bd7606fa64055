#include <cub/block/block_reduce.cuh>

#include "common/frame_kernels.hpp"
#include "common/work_map.hpp"
#include "zs/error.hpp"

namespace zs::kernels {
namespace {

constexpr int checksum_threads = 256;
static_assert(checksum_chunk_words % checksum_threads == 0);

constexpr unsigned blocks_for(std::size_t items, unsigned threads) {
  return static_cast<unsigned>((items + threads - 1) / threads);
}

__global__ void begin_headers_kernel(const encode_source* sources, std::byte* frames,
                                     const std::uint64_t* offsets, std::size_t num_frames,
                                     codec_id codec) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= num_frames) return;
  frame_header h;
  h.codec = codec;
  h.type = sources[f].type;
  h.value_count = sources[f].count;
  h.raw_bytes = sources[f].raw_bytes();
  store_header(h, frames + offsets[f]);
}

// Adds the checksum terms of one chunk of one payload into sums[frame]. Frames whose status
// is not ok (when a status array is given) are skipped. The payload starts 16-byte aligned
// (frames are), so whole words load directly; the last, partial word goes byte by byte so
// nothing past the payload is read.
__global__ void checksum_kernel(const std::byte* frames, const std::uint64_t* offsets,
                                std::size_t num_frames, const std::uint64_t* chunk_begin,
                                const frame_status* status, std::uint64_t* sums) {
  std::size_t const f = frame_of_chunk(chunk_begin, num_frames, blockIdx.x);
  if (status != nullptr && status[f] != frame_status::ok) return;
  const std::byte* frame = frames + offsets[f];
  std::uint64_t const capacity = offsets[f + 1] - offsets[f] - frame_header_bytes;
  std::uint64_t bytes = detail::load_le(frame + 24, 8);
  if (bytes > capacity) bytes = capacity;  // never read past the frame's room
  const std::byte* payload = frame + frame_header_bytes;
  auto const* words = reinterpret_cast<const std::uint64_t*>(payload);
  std::uint64_t const whole = bytes / 8;
  std::uint64_t const total = (bytes + 7) / 8;
  std::uint64_t const first = (blockIdx.x - chunk_begin[f]) * checksum_chunk_words;

  std::uint64_t sum = 0;
  for (std::uint64_t k = threadIdx.x; k < checksum_chunk_words; k += checksum_threads) {
    std::uint64_t const i = first + k;
    if (i < whole) {
      sum += hash::term(i, words[i]);
    } else if (i < total) {
      sum += hash::term(i, hash::load_word(payload, bytes, i));
    }
  }
  using reduce = cub::BlockReduce<unsigned long long, checksum_threads>;
  __shared__ typename reduce::TempStorage scratch;
  unsigned long long const block_sum = reduce(scratch).Sum(sum);
  if (threadIdx.x == 0 && first < total) {
    atomicAdd(reinterpret_cast<unsigned long long*>(sums + f), block_sum);
  }
}

__global__ void finish_headers_kernel(std::byte* frames, const std::uint64_t* offsets,
                                      std::size_t num_frames, const std::uint64_t* sums,
                                      std::uint64_t* frame_bytes) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= num_frames) return;
  std::byte* frame = frames + offsets[f];
  frame_header h = load_header(frame);
  h.payload_checksum = hash::finish(sums[f], h.payload_bytes);
  store_header(h, frame);
  frame_bytes[f] = frame_header_bytes + h.payload_bytes;
}

__global__ void validate_headers_kernel(const std::byte* frames, const std::uint64_t* offsets,
                                        const decode_target* targets, std::size_t num_frames,
                                        std::uint32_t accepted_codecs, frame_status* status) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= num_frames) return;
  decode_target const& t = targets[f];
  frame_expectation const expected{accepted_codecs, t.type, t.count, t.raw_bytes()};
  status[f] = validate_header(frames + offsets[f], offsets[f + 1] - offsets[f], expected);
}

__global__ void compare_checksums_kernel(const std::byte* frames, const std::uint64_t* offsets,
                                         std::size_t num_frames, const std::uint64_t* sums,
                                         frame_status* status) {
  std::size_t const f = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (f >= num_frames || status[f] != frame_status::ok) return;
  frame_header const h = load_header(frames + offsets[f]);
  if (hash::finish(sums[f], h.payload_bytes) != h.payload_checksum) {
    status[f] = frame_status::bad_payload_checksum;
  }
}

constexpr unsigned per_frame_threads = 128;

}  // namespace

void begin_headers(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                   std::size_t num_frames, codec_id codec, cudaStream_t stream) {
  if (num_frames == 0) return;
  begin_headers_kernel<<<blocks_for(num_frames, per_frame_threads), per_frame_threads, 0, stream>>>(
      sources, frames, offsets, num_frames, codec);
  ZS_CUDA_CHECK_LAUNCH();
}

void finish_headers(std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                    const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                    std::uint64_t* sums, std::uint64_t* frame_bytes, cudaStream_t stream) {
  if (num_frames == 0) return;
  ZS_CUDA_TRY(cudaMemsetAsync(sums, 0, num_frames * sizeof(std::uint64_t), stream));
  if (num_chunks > 0) {
    ZS_EXPECTS(num_chunks <= 0x7fffffffULL, "a batch of fewer than 2^31 checksum chunks");
    checksum_kernel<<<static_cast<unsigned>(num_chunks), checksum_threads, 0, stream>>>(
        frames, offsets, num_frames, chunk_begin, nullptr, sums);
    ZS_CUDA_CHECK_LAUNCH();
  }
  finish_headers_kernel<<<blocks_for(num_frames, per_frame_threads), per_frame_threads, 0, stream>>>(
      frames, offsets, num_frames, sums, frame_bytes);
  ZS_CUDA_CHECK_LAUNCH();
}

void validate_frames(const std::byte* frames, const std::uint64_t* offsets,
                     const decode_target* targets, std::size_t num_frames,
                     std::uint32_t accepted_codecs, const std::uint64_t* chunk_begin,
                     std::uint64_t num_chunks, std::uint64_t* sums, frame_status* status,
                     cudaStream_t stream) {
  if (num_frames == 0) return;
  unsigned const blocks = blocks_for(num_frames, per_frame_threads);
  validate_headers_kernel<<<blocks, per_frame_threads, 0, stream>>>(frames, offsets, targets,
                                                                    num_frames, accepted_codecs, status);
  ZS_CUDA_CHECK_LAUNCH();
  ZS_CUDA_TRY(cudaMemsetAsync(sums, 0, num_frames * sizeof(std::uint64_t), stream));
  if (num_chunks > 0) {
    ZS_EXPECTS(num_chunks <= 0x7fffffffULL, "a batch of fewer than 2^31 checksum chunks");
    checksum_kernel<<<static_cast<unsigned>(num_chunks), checksum_threads, 0, stream>>>(
        frames, offsets, num_frames, chunk_begin, status, sums);
    ZS_CUDA_CHECK_LAUNCH();
  }
  compare_checksums_kernel<<<blocks, per_frame_threads, 0, stream>>>(frames, offsets, num_frames,
                                                                     sums, status);
  ZS_CUDA_CHECK_LAUNCH();
}

}  // namespace zs::kernels
