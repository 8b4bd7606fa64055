// Batched GPU kernels of the raw codec (raw_format.hpp gives the format's rules).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels::raw {

/// Device scratch for a batch of `num_frames` frames.
std::size_t temp_bytes(std::size_t num_frames);

/// Encodes every frame's payload and sets its payload-bytes header field.
/// offsets: the launch of the string-offset kernels (kernel "raw_offsets").
/// offset_chunk_begin: frames cut into chunks of offsets.params.items string offsets (count + 1
/// per string frame, none for fixed-width frames), num_frames + 1 entries, on the device.
void encode(const device_encode_batch& batch, const launch_choice& offsets,
            const std::uint64_t* offset_chunk_begin, std::uint64_t num_offset_chunks, void* temp,
            std::size_t temp_bytes, cudaStream_t stream);

/// Decodes every frame whose status is ok; sets corrupt_payload on frames that break the raw
/// format (raw_format.hpp: non-zero parameters, a payload size other than the format's, string
/// offsets out of order), leaving their targets untouched. Arguments as encode's.
void decode(const device_decode_batch& batch, const launch_choice& offsets,
            const std::uint64_t* offset_chunk_begin, std::uint64_t num_offset_chunks, void* temp,
            std::size_t temp_bytes, cudaStream_t stream);

}  // namespace zs::kernels::raw
