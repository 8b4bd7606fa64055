// The GPU kernels around nvCOMP's batched calls in the nvcomp:NAME codecs (nvcomp_codecs.cpp):
// packing the compressed chunks into frames after compression, and planning and checking the
// decompression of every chunk of a batch of frames. Each is one launch over the whole batch.
#pragma once

#include <cuda_runtime_api.h>
#include <nvcomp/shared_types.h>

#include <cstddef>
#include <cstdint>

#include "nvcomp_format.hpp"
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

/// Before decompression, for every frame f of `batch`: its chunks' entries chunk_first[f] ..
/// chunk_first[f] + chunk_count(target raw bytes) - 1 of `args` (plan_frame_chunks), each
/// chunk's frame (chunk_frame), and for a frame whose status was ok and whose chunk table
/// does not describe its payload exactly, corrupt_payload. A frame whose status is not ok, or
/// becomes so here, has its chunks parked (nvcomp_format.hpp), so that nvCOMP never reads its
/// chunks nor writes its target. out_base[f]: where frame f's raw bytes go (its target, or
/// staging), the only place its chunks are given to write.
void plan_chunks(const device_decode_batch& batch, const std::uint64_t* chunk_first, std::byte* const* out_base,
                 std::uint64_t* chunk_frame, const chunk_arguments& args, const parking_chunk& parking,
                 cudaStream_t stream);

/// A frame any of whose `chunks` did not come out of nvCOMP as expected gets corrupt_payload:
/// after decompression, a status other than nvcompSuccess or a decompressed size other than
/// expected_bytes (the room plan_chunks gave it); before decompression, with `statuses` null,
/// an uncompressed size that the chunk's own header announces (nvCOMP's GetDecompressSize)
/// other than expected, which says the chunk is not one nvCOMP wrote for this frame.
/// chunk_frame: each chunk's frame. Frames already refused are left as they are.
void check_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const nvcompStatus_t* statuses,
                  const std::size_t* actual_bytes, const std::size_t* expected_bytes, frame_status* status,
                  cudaStream_t stream);

/// Parks every chunk of a frame whose status is not ok, as plan_chunks does for the frames it
/// refuses: run after the checks that refuse frames before decompression (check_chunks with
/// no statuses), so that no chunk of a refused frame reaches nVIDIA nvCOMP's decompressors.
void park_refused_chunks(const std::uint64_t* chunk_frame, std::size_t chunks, const frame_status* status,
                         const chunk_arguments& args, const parking_chunk& parking, cudaStream_t stream);

}  // namespace zs::nvcomp
