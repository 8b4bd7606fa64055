// Batched GPU kernels of the fsst codec (fsst_format.hpp gives the format and the per-split code
// they share with the CPU reference). The host code (lib/src/codecs/fsst/fsst_codec_gpu.cpp)
// plans a batch into the arrays of batch_plan and runs these steps in order on one stream; the
// string lengths go through the bitpack codec between them, as embedded frames.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels::fsst {

/// One chunk of a column's sample: `length` characters from `offset` on in the characters of
/// the piece whose offsets are `offsets` (its first character at chars + offsets[0]), to out + dest.
struct sample_copy {
  const std::int64_t* offsets;
  const std::uint8_t* chars;
  std::uint64_t offset;
  std::uint64_t length;
  std::uint64_t dest;
};

/// Copies every chunk (`copies` in device memory) into `out`, a block per chunk.
void gather_sample(const sample_copy* copies, std::size_t num_copies, std::uint8_t* out, cudaStream_t stream);

/// A batch's work maps and scratch, device arrays. Frame f has strings
/// [string_begin[f], string_begin[f + 1]) and splits [split_begin[f], split_begin[f + 1]) of the
/// batch's numbering; its splits go in groups of `group_splits` (a block of the split kernels,
/// a warp per split), groups [group_begin[f], group_begin[f + 1]).
struct batch_plan {
  const std::uint64_t* string_begin;
  const std::uint64_t* split_begin;
  const std::uint64_t* group_begin;
  std::uint64_t num_strings;
  std::uint64_t num_splits;
  std::uint64_t num_groups;
  unsigned group_splits;
  std::uint64_t* lengths;  // num_strings + 1: the string lengths (the last 0)
  std::uint64_t* prefix;   // num_strings + 1: their exclusive prefix sum (decode)
};

/// Encode scratch besides the plan's.
struct encode_scratch {
  std::uint8_t* split_data;                  // encoded splits: split g at g x split bytes (8-byte aligned)
  std::uint64_t* split_sizes;                // num_splits + 1: stored bytes of each split (the last 0)
  std::uint64_t* split_prefix;               // num_splits + 1
  const std::byte* lengths_frames;           // the embedded lengths frames as bitpack wrote them
  const std::uint64_t* lengths_frame_at;     // num_frames: where each lies in lengths_frames
  const std::uint64_t* lengths_frame_bytes;  // num_frames: its bytes
  const void** copy_src;                     // num_frames + num_splits each
  void** copy_dst;
  std::uint64_t* copy_size;
};

/// Device scratch of CUB's scans and copies for a batch of these sizes.
std::size_t cub_temp_bytes(std::uint64_t num_strings, std::uint64_t num_splits, std::size_t num_frames);

/// Step 1 of encode: every string's length into plan.lengths (and its last entry 0).
void encode_lengths(const device_encode_batch& batch, const batch_plan& plan, cudaStream_t stream);
/// Step 2, after the lengths are packed: every split encoded with its frame's table (in shared
/// memory), into split_data, or marked raw (a warp per split, kernels/fsst/fsst_warp.hpp); then
/// the frames' headers, split offsets, and the lengths frames and splits copied to their places.
/// `encode` is the choice for kernel "fsst_encode" (its threads = 32 x plan.group_splits).
void encode_splits(const device_encode_batch& batch, const batch_plan& plan, const encode_scratch& s,
                   const launch_choice& encode, void* cub_temp, std::size_t cub_bytes, cudaStream_t stream);

/// Step 1 of decode: each frame's table, layout and lengths frame header checked (status
/// corrupt_payload where they break the format); plan.lengths' last entry zeroed.
void decode_check_frames(const device_decode_batch& batch, const batch_plan& plan, cudaStream_t stream);
/// Step 2, after the lengths are unpacked (their statuses in `lengths_status`): every split
/// checked, then the offsets written in one pass with the lengths' check (they add up to each
/// frame's characters; a frame refused there may have some offsets written), then, for frames
/// still ok, the characters (a warp per split, table in shared memory, output
/// gathered in shared memory and written with aligned 16-byte stores; kernels/fsst/fsst_warp.hpp).
/// `decode` is the choice for kernel "fsst_decode" (its threads = 32 x plan.group_splits).
void decode_splits(const device_decode_batch& batch, const batch_plan& plan, const frame_status* lengths_status,
                   const launch_choice& decode, void* cub_temp, std::size_t cub_bytes, cudaStream_t stream);

}  // namespace zs::kernels::fsst
