#include <cub/block/block_reduce.cuh>

#include "common/frame_kernels.hpp"
#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "zs/error.hpp"

namespace zs::kernels {
namespace {

// Adds the checksum terms of each chunk of each payload into sums[frame], a chunk per block at
// a time. Frames whose status is not ok (when a status array is given) are skipped. The payload
// starts 16-byte aligned (frames are), so whole words load directly; the last, partial word goes
// byte by byte so nothing past the payload is read. The sum is the same for any chunk size and
// grid: terms are added modulo 2^64.
template <int Threads>
__global__ void __launch_bounds__(Threads)
    checksum_kernel(const std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                    const std::uint64_t* chunk_begin, std::uint64_t num_chunks, std::uint64_t chunk_words,
                    const frame_status* status, std::uint64_t* sums) {
  using reduce = cub::BlockReduce<unsigned long long, Threads>;
  __shared__ typename reduce::TempStorage scratch;
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, num_frames, chunk);
    // The same frame for the whole block, so the block skips together.
    if (status != nullptr && status[f] != frame_status::ok) continue;
    const std::byte* frame = frames + offsets[f];
    std::uint64_t const capacity = offsets[f + 1] - offsets[f] - frame_header_bytes;
    std::uint64_t bytes = detail::load_le(frame + 24, 8);
    if (bytes > capacity) bytes = capacity;  // never read past the frame's room
    const std::byte* payload = frame + frame_header_bytes;
    auto const* words = reinterpret_cast<const std::uint64_t*>(payload);
    std::uint64_t const whole = bytes / 8;
    std::uint64_t const total = (bytes + 7) / 8;
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_words;

    std::uint64_t sum = 0;
    for (std::uint64_t k = threadIdx.x; k < chunk_words; k += Threads) {
      std::uint64_t const i = first + k;
      if (i < whole) {
        sum += hash::term(i, words[i]);
      } else if (i < total) {
        sum += hash::term(i, hash::load_word(payload, bytes, i));
      }
    }
    unsigned long long const block_sum = reduce(scratch).Sum(sum);
    if (threadIdx.x == 0 && first < total) {
      atomicAdd(reinterpret_cast<unsigned long long*>(sums + f), block_sum);
    }
    __syncthreads();  // the reduction's storage is used again by the next chunk
  }
}

__global__ void finish_headers_kernel(const encode_source* sources, std::byte* frames,
                                      const std::uint64_t* offsets, std::size_t num_frames,
                                      const std::uint64_t* sums, bool embedded, std::uint64_t* frame_bytes) {
  for (std::uint64_t f = first_item(); f < num_frames; f += item_stride()) {
    encode_source const& s = sources[f];
    std::byte* frame = frames + offsets[f];
    frame_header const h = load_header(frame);
    std::uint64_t const checksum = embedded ? 0 : hash::finish(sums[f], h.payload_bytes);
    complete_header(h, frame, s.type, s.count, s.raw_bytes(), checksum,
                    s.params_bytes != 0 ? frame_version_params : frame_version);
    frame_bytes[f] = frame_header_bytes + h.payload_bytes;
  }
}

// One block per frame with column parameters: the prefix's first field, the parameters, zeros
// up to the body.
__global__ void copy_params_kernel(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                                   std::size_t num_frames) {
  for (std::uint64_t f = blockIdx.x; f < num_frames; f += gridDim.x) {
    encode_source const& s = sources[f];
    if (s.params_bytes == 0) continue;
    std::byte* payload = frames + offsets[f] + frame_header_bytes;
    std::uint64_t const section = params_section_bytes(s.params_bytes);
    for (std::uint64_t i = threadIdx.x; i < section; i += blockDim.x) {
      std::uint64_t const at = i - params_prefix_bytes;
      payload[i] = i < params_prefix_bytes ? std::byte{0} : at < s.params_bytes ? s.params[at] : std::byte{0};
    }
    __syncthreads();
    if (threadIdx.x == 0) detail::store_le(payload, s.params_bytes, 8);
  }
}

// After the body encoders: the prefix's body bytes, and the parameter section counted in the
// header's payload bytes.
__global__ void seal_params_kernel(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                                   std::size_t num_frames) {
  for (std::uint64_t f = first_item(); f < num_frames; f += item_stride()) {
    encode_source const& s = sources[f];
    if (s.params_bytes == 0) continue;
    std::byte* frame = frames + offsets[f];
    std::uint64_t const body = detail::load_le(frame + 24, 8);
    detail::store_le(frame + frame_header_bytes + 8, body, 8);
    detail::store_le(frame + 24, body + params_section_bytes(s.params_bytes), 8);
  }
}

__global__ void validate_headers_kernel(const std::byte* frames, const std::uint64_t* offsets,
                                        const decode_target* targets, std::size_t num_frames,
                                        std::uint32_t accepted_codecs, frame_status* status) {
  for (std::uint64_t f = first_item(); f < num_frames; f += item_stride()) {
    decode_target const& t = targets[f];
    frame_expectation const expected{accepted_codecs, t.type, t.count, t.raw_bytes(), t.params_bytes};
    status[f] = validate_header(frames + offsets[f], offsets[f + 1] - offsets[f], expected);
  }
}

__global__ void compare_checksums_kernel(const std::byte* frames, const std::uint64_t* offsets,
                                         std::size_t num_frames, const std::uint64_t* sums,
                                         frame_status* status) {
  for (std::uint64_t f = first_item(); f < num_frames; f += item_stride()) {
    if (status[f] != frame_status::ok) continue;
    frame_header const h = load_header(frames + offsets[f]);
    if (hash::finish(sums[f], h.payload_bytes) != h.payload_checksum) {
      status[f] = frame_status::bad_payload_checksum;
    }
  }
}

template <class Kernel, class... Args>
void launch_per_frame(Kernel kernel, std::size_t num_frames, cudaStream_t stream, Args... args) {
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), num_frames);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

template <int Threads>
void launch_checksum_as(const launch_choice& choice, const std::byte* frames, const std::uint64_t* offsets,
                        std::size_t num_frames, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                        const frame_status* status, std::uint64_t* sums, cudaStream_t stream) {
  auto const kernel = checksum_kernel<Threads>;
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, num_chunks);
  std::uint64_t const chunk_words = choice.params.items;
  observed_launch(r, stream, [&] {
    kernel<<<r.geometry.grid, Threads, 0, stream>>>(frames, offsets, num_frames, chunk_begin, num_chunks,
                                                    chunk_words, status, sums);
  });
}

void launch_checksum(const launch_choice& choice, const std::byte* frames, const std::uint64_t* offsets,
                     std::size_t num_frames, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                     const frame_status* status, std::uint64_t* sums, cudaStream_t stream) {
  if (num_chunks == 0) return;
  expect_launch_of("checksum", choice);
  switch (choice.params.threads) {
    case 128:
      launch_checksum_as<128>(choice, frames, offsets, num_frames, chunk_begin, num_chunks, status, sums, stream);
      break;
    case 256:
      launch_checksum_as<256>(choice, frames, offsets, num_frames, chunk_begin, num_chunks, status, sums, stream);
      break;
    case 512:
      launch_checksum_as<512>(choice, frames, offsets, num_frames, chunk_begin, num_chunks, status, sums, stream);
      break;
    default:
      ZS_FAIL(error_code::internal, "checksum kernel not built for " + std::to_string(choice.params.threads) +
                                        " threads");
  }
}

}  // namespace

void add_checksums(const std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                   const launch_choice& checksum, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                   const frame_status* status, std::uint64_t* sums, cudaStream_t stream) {
  if (num_frames == 0) return;
  launch_checksum(checksum, frames, offsets, num_frames, chunk_begin, num_chunks, status, sums, stream);
}

void finish_headers(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                    std::size_t num_frames, const std::uint64_t* sums, bool embedded, std::uint64_t* frame_bytes,
                    cudaStream_t stream) {
  if (num_frames == 0) return;
  launch_per_frame(finish_headers_kernel, num_frames, stream, sources, frames, offsets, num_frames, sums, embedded,
                   frame_bytes);
}

void copy_params(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                 std::size_t num_frames, cudaStream_t stream) {
  if (num_frames == 0) return;
  // A block per frame: parameters are at most a few KiB, so a block covers one in a pass or two.
  launch_record const r = plan_launch(reinterpret_cast<const void*>(copy_params_kernel), frame_ops_choice(), num_frames);
  observed_launch(r, stream, [&] {
    copy_params_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(sources, frames, offsets, num_frames);
  });
}

void seal_params(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                 std::size_t num_frames, cudaStream_t stream) {
  if (num_frames == 0) return;
  launch_per_frame(seal_params_kernel, num_frames, stream, sources, frames, offsets, num_frames);
}

void validate_headers(const std::byte* frames, const std::uint64_t* offsets, const decode_target* targets,
                      std::size_t num_frames, std::uint32_t accepted_codecs, frame_status* status,
                      cudaStream_t stream) {
  if (num_frames == 0) return;
  launch_per_frame(validate_headers_kernel, num_frames, stream, frames, offsets, targets, num_frames,
                   accepted_codecs, status);
}

void compare_checksums(const std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                       const std::uint64_t* sums, frame_status* status, cudaStream_t stream) {
  if (num_frames == 0) return;
  launch_per_frame(compare_checksums_kernel, num_frames, stream, frames, offsets, num_frames, sums, status);
}

}  // namespace zs::kernels
