// Batched kernels shared by every codec: frame headers and payload checksums.
// Launchers take device pointers and a stream; nothing here synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/codec.hpp"
#include "zs/tuning.hpp"

namespace zs::kernels {

/// Writes the codec-independent header fields of every frame (magic, version, codec, type,
/// count, raw bytes); payload bytes and codec parameters start at zero.
void begin_headers(const encode_source* sources, std::byte* frames, const std::uint64_t* offsets,
                   std::size_t num_frames, codec_id codec, cudaStream_t stream);

/// Checksums each payload and completes each header; writes frame_bytes[f] = header + payload.
/// checksum: the checksum kernel's launch (kernel_id::checksum); chunk_begin: frames cut into
/// chunks of checksum.params.items 64-bit words of their capacity. sums: num_frames words of
/// scratch.
void finish_headers(std::byte* frames, const std::uint64_t* offsets, std::size_t num_frames,
                    const launch_choice& checksum, const std::uint64_t* chunk_begin,
                    std::uint64_t num_chunks, std::uint64_t* sums, std::uint64_t* frame_bytes,
                    cudaStream_t stream);

/// Validates every header (validate_header) and verifies the payload checksum of each frame that
/// passed; writes one status per frame. chunk_begin: frames cut into chunks of
/// checksum.params.items words of their available bytes. sums: num_frames words of scratch.
void validate_frames(const std::byte* frames, const std::uint64_t* offsets,
                     const decode_target* targets, std::size_t num_frames,
                     std::uint32_t accepted_codecs, const launch_choice& checksum,
                     const std::uint64_t* chunk_begin, std::uint64_t num_chunks, std::uint64_t* sums,
                     frame_status* status, cudaStream_t stream);

}  // namespace zs::kernels
