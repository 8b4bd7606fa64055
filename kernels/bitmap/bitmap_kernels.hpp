// Batched GPU kernels of the bitmap codec (bitmap_format.hpp gives the format's rules). Every
// pass is one launch over the whole batch: frames are cut into chunks of launch.params.items
// rows (kernels/common/work_map.hpp), a block per chunk at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels::bitmap {

/// The kernel spec the chunk launches are chosen for.
inline constexpr std::string_view chunks_kernel_name = "bitmap_chunks";

/// Chunks of an encoded frame of `rows` rows: at least one, since the block of a frame's first
/// chunk writes its body header, rows or not.
constexpr std::uint64_t encode_chunks(std::uint64_t rows, std::uint64_t chunk_rows) noexcept {
  return rows == 0 ? 1 : (rows + chunk_rows - 1) / chunk_rows;
}

/// Encodes every frame's body and sets its codec id, payload bytes and zero codec parameters.
/// chunk_begin: the frames cut by encode_chunks into chunks of chunks.params.items rows,
/// num_frames + 1 entries, on the device. content_flags: num_frames words on the device, zeroed
/// before the call, where the scan notes what each frame's rows rule out.
void encode(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
            std::uint64_t num_chunks, std::uint32_t* content_flags, cudaStream_t stream);

/// Decodes every frame whose status is ok; sets its status (unsupported_type, corrupt_payload)
/// where it breaks the format's rules (bitmap::check_frame), before any value of it is written,
/// leaving its target untouched. chunk_begin: the targets cut into chunks of chunks.params.items
/// rows (none for a target without rows), num_frames + 1 entries, on the device.
void decode(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
            std::uint64_t num_chunks, cudaStream_t stream);

}  // namespace zs::kernels::bitmap
