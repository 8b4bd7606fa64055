// Kernels of the nvcomp:NAME codecs: small one-thread-per-frame or one-thread-per-chunk passes
// and a block-per-chunk copy. They run beside nvCOMP's own kernels, whose time dominates, so
// they use a fixed geometry instead of the tuning table of the library's kernels.
#include "nvcomp_format.hpp"
#include "nvcomp_kernels.hpp"
#include "zs/error.hpp"

namespace zs::nvcomp {
namespace {

constexpr unsigned threads_per_block = 256;
// Enough blocks to fill any current GPU; the kernels loop with a grid stride beyond it.
constexpr std::size_t max_blocks = 4096;

unsigned blocks_for(std::size_t items, std::size_t per_block) {
  std::size_t const blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

__global__ void copy_bytes_kernel(const byte_copy* copies, std::size_t count, const frame_status* status) {
  for (std::size_t c = blockIdx.x; c < count; c += gridDim.x) {
    byte_copy const copy = copies[c];
    if (status != nullptr && status[copy.frame] != frame_status::ok) continue;
    for (std::uint64_t i = threadIdx.x; i < copy.bytes; i += blockDim.x) copy.to[i] = copy.from[i];
  }
}

__global__ void pack_frames_kernel(device_encode_batch batch, const std::uint64_t* chunk_first,
                                   const std::size_t* compressed_bytes, const nvcompStatus_t* statuses,
                                   std::uint64_t max_chunk, codec_id id, std::byte** chunk_dst) {
  for (std::size_t f = blockIdx.x * blockDim.x + threadIdx.x; f < batch.num_frames; f += gridDim.x * blockDim.x) {
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* body = frame + frame_header_bytes;
    std::uint64_t const chunks = chunk_count(batch.sources[f].raw_bytes());
    std::uint64_t const first = chunk_first[f];
    bool compressed = true;
    for (std::uint64_t k = 0; k < chunks; ++k) {
      std::size_t const bytes = compressed_bytes[first + k];
      compressed = compressed && statuses[first + k] == nvcompSuccess && bytes > 0 && bytes <= max_chunk;
    }
    if (!compressed) {
      // A count no table can have: the frame decodes to corrupt_payload instead of wrong values.
      detail::store_le(body, UINT64_MAX, 8);
      detail::store_le(body + 8, chunk_bytes, 8);
      for (std::uint64_t k = 0; k < chunks; ++k) chunk_dst[first + k] = nullptr;
      store_encoder_fields(frame, id, body_prefix_bytes);
      continue;
    }
    detail::store_le(body, chunks, 8);
    detail::store_le(body + 8, chunk_bytes, 8);
    std::uint64_t offset = chunks_begin(chunks);
    for (std::uint64_t k = 0; k < chunks; ++k) {
      std::size_t const bytes = compressed_bytes[first + k];
      detail::store_le(body + body_prefix_bytes + 4 * k, bytes, 4);
      chunk_dst[first + k] = body + offset;
      offset += align16(bytes);
    }
    for (std::uint64_t at = body_prefix_bytes + 4 * chunks; at < chunks_begin(chunks); ++at) body[at] = std::byte{0};
    store_encoder_fields(frame, id, offset);
  }
}

__global__ void copy_chunks_kernel(const void* const* staged, const std::size_t* compressed_bytes,
                                   std::byte* const* chunk_dst, std::size_t chunks) {
  for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    std::byte* to = chunk_dst[c];
    if (to == nullptr) continue;
    auto const* from = static_cast<const uint4*>(staged[c]);
    std::size_t const bytes = compressed_bytes[c];
    std::size_t const words = (bytes + 15) / 16;
    for (std::size_t w = threadIdx.x; w < words; w += blockDim.x) {
      uint4 word = from[w];
      std::size_t const end = (w + 1) * 16;
      if (end > bytes) {
        // The last word: the slot's bytes after the chunk are not the chunk's; pad with zeros.
        auto* b = reinterpret_cast<unsigned char*>(&word);
        for (std::size_t i = bytes - w * 16; i < 16; ++i) b[i] = 0;
      }
      reinterpret_cast<uint4*>(to)[w] = word;
    }
  }
}

__global__ void plan_chunks_kernel(device_decode_batch batch, const std::uint64_t* chunk_first,
                                   std::byte* const* out_base, std::uint64_t* chunk_frame, chunk_arguments args,
                                   parking_chunk parking) {
  for (std::size_t f = blockIdx.x * blockDim.x + threadIdx.x; f < batch.num_frames; f += gridDim.x * blockDim.x) {
    // The frame's entries follow from its target's size, which the host planned the batch by.
    std::uint64_t const raw = batch.targets[f].raw_bytes();
    std::uint64_t const first = chunk_first[f];
    for (std::uint64_t k = 0; k < chunk_count(raw); ++k) chunk_frame[first + k] = f;
    const std::byte* frame = batch.frames + batch.frame_offsets[f];
    bool const accepted = batch.status[f] == frame_status::ok;
    // Only an accepted header is read: its validation put the payload inside the frame's room
    // and its raw size equal to the target's. A refused frame may not even hold a header.
    std::uint64_t const body_bytes = accepted ? load_header(frame).payload_bytes : 0;
    bool const own = plan_frame_chunks(frame + frame_header_bytes, body_bytes, raw, accepted, out_base[f], first,
                                       args, parking);
    if (accepted && !own) batch.status[f] = frame_status::corrupt_payload;
  }
}

__global__ void check_chunks_kernel(const std::uint64_t* chunk_frame, std::size_t chunks,
                                    const nvcompStatus_t* statuses, const std::size_t* actual_bytes,
                                    const std::size_t* expected_bytes, frame_status* status) {
  for (std::size_t c = blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += gridDim.x * blockDim.x) {
    std::uint64_t const f = chunk_frame[c];
    if (status[f] != frame_status::ok) continue;
    bool const failed = statuses != nullptr && statuses[c] != nvcompSuccess;
    if (failed || actual_bytes[c] != expected_bytes[c]) status[f] = frame_status::corrupt_payload;
  }
}

__global__ void park_refused_chunks_kernel(const std::uint64_t* chunk_frame, std::size_t chunks,
                                           const frame_status* status, chunk_arguments args, parking_chunk parking) {
  for (std::size_t c = blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += gridDim.x * blockDim.x) {
    if (status[chunk_frame[c]] != frame_status::ok) park_chunk(args, c, parking);
  }
}

}  // namespace

void copy_bytes(const byte_copy* copies, std::size_t count, const frame_status* status, cudaStream_t stream) {
  if (count == 0) return;
  copy_bytes_kernel<<<blocks_for(count, 1), threads_per_block, 0, stream>>>(copies, count, status);
  ZS_CUDA_CHECK_LAUNCH();
}

void pack_frames(const device_encode_batch& batch, const std::uint64_t* chunk_first,
                 const std::size_t* compressed_bytes, const nvcompStatus_t* statuses, std::uint64_t max_chunk,
                 codec_id id, std::byte** chunk_dst, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  pack_frames_kernel<<<blocks_for(batch.num_frames, threads_per_block), threads_per_block, 0, stream>>>(
      batch, chunk_first, compressed_bytes, statuses, max_chunk, id, chunk_dst);
  ZS_CUDA_CHECK_LAUNCH();
}

void copy_chunks(const void* const* staged, const std::size_t* compressed_bytes, std::byte* const* chunk_dst,
                 std::size_t chunks, cudaStream_t stream) {
  if (chunks == 0) return;
  copy_chunks_kernel<<<blocks_for(chunks, 1), threads_per_block, 0, stream>>>(staged, compressed_bytes, chunk_dst,
                                                                              chunks);
  ZS_CUDA_CHECK_LAUNCH();
}

void plan_chunks(const device_decode_batch& batch, const std::uint64_t* chunk_first, std::byte* const* out_base,
                 std::uint64_t* chunk_frame, const chunk_arguments& args, const parking_chunk& parking,
                 cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  plan_chunks_kernel<<<blocks_for(batch.num_frames, threads_per_block), threads_per_block, 0, stream>>>(
      batch, chunk_first, out_base, chunk_frame, args, parking);
  ZS_CUDA_CHECK_LAUNCH();
}

void check_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const nvcompStatus_t* statuses,
                  const std::size_t* actual_bytes, const std::size_t* expected_bytes, frame_status* status,
                  cudaStream_t stream) {
  if (chunks == 0) return;
  check_chunks_kernel<<<blocks_for(chunks, threads_per_block), threads_per_block, 0, stream>>>(
      chunk_frame, chunks, statuses, actual_bytes, expected_bytes, status);
  ZS_CUDA_CHECK_LAUNCH();
}

void park_refused_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const frame_status* status,
                         const chunk_arguments& args, const parking_chunk& parking, cudaStream_t stream) {
  if (chunks == 0) return;
  park_refused_chunks_kernel<<<blocks_for(chunks, threads_per_block), threads_per_block, 0, stream>>>(
      chunk_frame, chunks, status, args, parking);
  ZS_CUDA_CHECK_LAUNCH();
}

}  // namespace zs::nvcomp
