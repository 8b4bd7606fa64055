// Batched kernels shared by every codec: frame headers and payload checksums.
// Launchers take device pointers and a stream; nothing here synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels {

/// Adds the checksum terms of each payload into sums[f] (zeroed by the caller), skipping frames
/// whose status is not ok when `status` is given. checksum: the kernel's launch
/// (kernel "checksum"); chunk_begin: frames cut into chunks of checksum.params.items 64-bit
/// words of their room.
void add_checksums(const std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                   const launch_choice& checksum, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                   const frame_status* status, std::uint64_t* sums, cudaStream_t stream);

/// Completes each header (complete_header) after its payload encoder wrote the fields it owns:
/// type and counts from sources[f], the checksum from its payload's terms in sums[f] (0 for
/// embedded frames), the version from sources[f].params_bytes; writes frame_bytes[f] = header
/// + payload.
void finish_headers(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                    std::size_t num_frames, const std::uint64_t* sums, bool embedded, std::uint64_t* frame_bytes,
                    cudaStream_t stream);

/// Frames with column parameters (sources[f].params_bytes above 0), before their body
/// encoders: the parameter section (prefix, sources[f].params, padding) at the payload's start.
void copy_params(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                 std::size_t num_frames, cudaStream_t stream);
/// The same frames after their body encoders, which wrote the body's bytes into the header's
/// payload bytes: the prefix's body bytes, and the payload bytes with the section counted.
void seal_params(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                 std::size_t num_frames, cudaStream_t stream);

/// Validates every header (validate_header); writes one status per frame.
void validate_headers(const std::byte* frames, const std::uint64_t* offsets, const decode_target* targets,
                      std::size_t num_frames, std::uint32_t accepted_codecs, frame_status* status,
                      cudaStream_t stream);

/// Sets bad_payload_checksum on each frame still ok whose payload's terms (sums[f]) do not give
/// the checksum in its header.
void compare_checksums(const std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                       const std::uint64_t* sums, frame_status* status, cudaStream_t stream);

}  // namespace zs::kernels
