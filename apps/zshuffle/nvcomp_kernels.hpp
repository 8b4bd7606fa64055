// The GPU kernels around nvCOMP's batched calls in the nvcomp:NAME codecs (nvcomp_codecs.cpp):
// packing the compressed chunks into frames after compression, and planning and checking the
// decompression of every chunk of a batch of frames. Each is one launch over the whole batch.
#pragma once

#include <cuda_runtime_api.h>
#include <nvcomp/shared_types.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/frame.hpp"

namespace zs::nvcomp {

/// A copy of `bytes` bytes between device addresses with no alignment, done for frame `frame`.
struct byte_copy {
  const std::byte* from;
  std::byte* to;
  std::uint64_t bytes;
  std::uint64_t frame;
};

/// Runs every copy of `copies` (device array); where `status` is given, only those of frames
/// whose status is ok. For the few inputs and outputs whose addresses nvCOMP cannot take
/// (below its alignment), staged through aligned scratch.
void copy_bytes(const byte_copy* copies, std::size_t count, const frame_status* status, cudaStream_t stream);

/// After compression: for each frame of `batch`, the body prefix, the chunk table and the
/// header fields of the payload encoder (codec id `id`, payload bytes), and for each of its
/// chunks where it goes in the frame (chunk_dst). Frame f's chunks are chunk_first[f] ..
/// chunk_first[f] + chunk_count(raw bytes) of the chunk arrays. A frame with a chunk that nvCOMP
/// did not compress (a status other than success, or more than max_chunk bytes) gets a body
/// whose chunk count no decoder accepts, and its chunks no destination (nullptr).
void pack_frames(const device_encode_batch& batch, const std::uint64_t* chunk_first,
                 const std::size_t* compressed_bytes, const nvcompStatus_t* statuses, std::uint64_t max_chunk,
                 codec_id id, std::byte** chunk_dst, cudaStream_t stream);

/// Copies each compressed chunk from its staging slot (16-byte aligned) to chunk_dst (16-byte
/// aligned; chunks without one are skipped) and zeroes its padding up to a multiple of 16.
void copy_chunks(const void* const* staged, const std::size_t* compressed_bytes, std::byte* const* chunk_dst,
                 std::size_t chunks, cudaStream_t stream);

/// Before decompression: for each frame of `batch` whose status is ok, checks its chunk table
/// against its payload (walk_chunks) and gives each chunk its compressed address and size;
/// a frame whose table fails gets corrupt_payload. Chunks of frames not ok point at `dummy_in`
/// (zeroed, compressed size 0) and decompress into `dummy_out` (chunk_bytes of scratch), so
/// nothing is written into their targets. out_ptrs and out_buffer_bytes come filled in by the
/// host for every chunk (the target's place, or staging).
void plan_chunks(const device_decode_batch& batch, const std::uint64_t* chunk_first, const void** comp_ptrs,
                 std::size_t* comp_bytes, void** out_ptrs, const std::byte* dummy_in, std::byte* dummy_out,
                 cudaStream_t stream);

/// After decompression: a frame any of whose chunks nvCOMP did not decompress to exactly its
/// expected bytes gets corrupt_payload. chunk_frame: each chunk's frame. Before decompression,
/// with `statuses` null, the same check of the sizes nvCOMP reads from the chunks' own headers
/// (its GetDecompressSize functions): a chunk that does not announce its expected bytes is not
/// one nvCOMP wrote for this frame.
void check_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const nvcompStatus_t* statuses,
                  const std::size_t* actual_bytes, const std::size_t* expected_bytes, frame_status* status,
                  cudaStream_t stream);

/// Points every chunk of a frame whose status is not ok at `dummy_in` (compressed size 0) and
/// `dummy_out`, as plan_chunks does for frames refused by their table: run after the checks
/// that refuse frames before decompression, so that no chunk of a refused frame reaches nVIDIA
/// nvCOMP's decompressors, several of which validate their input only in part.
void park_refused_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const frame_status* status,
                         const void** comp_ptrs, std::size_t* comp_bytes, void** out_ptrs, const std::byte* dummy_in,
                         std::byte* dummy_out, cudaStream_t stream);

}  // namespace zs::nvcomp
