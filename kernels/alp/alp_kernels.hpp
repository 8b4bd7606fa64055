// Batched GPU kernels of the alp codec (alp_format.hpp gives the format and the per-vector
// coders they run). Every vector of 1024 values is coded independently, by a warp whose lane l
// holds cells l, l + 32, ... (coalesced rows). The encoder chooses each vector's encoding in
// two passes: the ALP pass costs the ALP options with warp reductions and flags the vectors
// where ALP_RD may still undercut them; after a compaction of those, the ALP_RD pass sorts
// their left parts by a warp sort, once for both views of the fill cells, and takes the warp
// maxima of their runs. A device-wide scan of the sizes places the vectors, and the write pass
// codes them (ballots and scans place kept values and exceptions, each lane packs its
// FastLanes lane's words). The decoder checks and decodes a vector per warp in the same layout
// (a vector's main section staged in shared memory), then patches its exceptions 32 at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels::alp {

/// Device scratch of an encode of `num_vectors` vectors (sizes, their scan, each vector's
/// chosen fields, the ALP_RD pass's work list, the scan's and the compaction's temp).
std::size_t encode_temp_bytes(std::uint64_t num_vectors);

/// Copies of the frames whose sources carry a null mask, for the encoder to read instead: the
/// values of frame f, each null row's replaced by the stand-in of fmt::vector_for_encoder, go
/// to copies[f] (room for its values; nullptr: frame f has no mask and no copy). Arguments as
/// encode's.
void replace_nulls(const device_encode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                   void* const* copies, const launch_choice& choice, cudaStream_t stream);

/// Encodes every frame's body and sets its codec id, body bytes and codec parameters.
/// vector_begin: per frame, the index of its first vector in the batch (num_frames + 1 entries,
/// device memory). choice: the launch of the vector kernels (kernel "alp_encode").
void encode(const device_encode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// Decodes every frame whose status is ok: a pass over frames checks their parameters and the
/// size of their vector table, a pass over vectors checks each vector's end and the vector and
/// decodes it. Frames that break the format get corrupt_payload (their targets' contents are
/// then unspecified). Arguments as encode's; choice: kernel "alp_decode" (whole warps per block).
void decode(const device_decode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, cudaStream_t stream);

/// Column parameters of every column of a sample batch: pieces and piece_begin (columns + 1
/// entries) in device memory, column c's block at params + params_offsets[c]. A block per
/// column runs the CPU reference's sampling steps (alp_format.hpp), so both write the same bytes.
void prepare(const encode_source* pieces, const std::uint64_t* piece_begin, std::size_t num_columns,
             std::byte* params, const std::uint64_t* params_offsets, cudaStream_t stream);

}  // namespace zs::kernels::alp
