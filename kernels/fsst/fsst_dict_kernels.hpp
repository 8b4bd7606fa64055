// Batched GPU kernels of the fsst_dict codec's encoder (docs/FORMAT.md, "Codec 7: fsst_dict"):
// every frame's distinct values, in the order of their first row, and each row's code, found
// for all rows of a batch at once; then, after the dictionaries are coded by the fsst kernels and
// the codes packed by the bitpack kernels (each into its own frames), the fsst_dict frames put
// together from those pieces. The host code is lib/src/codecs/fsst/fsst_dict_codec_gpu.cpp.
//
// Distinct values without a sort of variable-length strings: each row is hashed (64 bits, its
// frame mixed in), rows are sorted by hash with CUB's radix sort (stable, so rows of one hash stay
// in row order), and each row is compared byte for byte with the rows of its hash before it until
// one is equal: its first occurrence. Equal values always share a hash, so the comparison makes
// the grouping exact whatever the hash's collisions (which cost comparisons, never wrong codes).
// A dictionary entry's index is the number of first occurrences before its own in its frame (a
// scan over rows), which is the CPU reference's order of first rows: the same bytes on both sides.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"

namespace zs::kernels::fsst_dict {

/// Device arrays over the batch's rows (N = num_rows, F = frames): frame f has rows
/// [string_begin[f], string_begin[f + 1]).
struct distinct_scratch {
  const std::uint64_t* string_begin;  // F + 1
  std::uint64_t num_rows;
  std::uint32_t* row_frame;           // N: each row's frame
  std::uint64_t* hash;                // N
  std::uint64_t* sorted_hash;         // N
  std::uint64_t* rows;                // N: 0 .. N - 1
  std::uint64_t* sorted_rows;         // N: rows in order of (hash, row)
  std::uint64_t* run_start;           // N: where each sorted row's run of equal hashes starts
  std::uint64_t* first_row;           // N: each row's first occurrence (by row)
  std::uint64_t* is_first;            // N + 1: 1 where a row is its value's first occurrence
  std::uint64_t* rank;                // N + 1: exclusive scan of is_first
  std::uint64_t* first_chars;         // N + 1: the row's characters where is_first, else 0
  std::uint64_t* dict_at;             // N + 1: exclusive scan of first_chars
  std::uint64_t* codes;               // N: each row's dictionary entry, within its frame
  std::int64_t* dict_offsets;         // N + F: frame f's d + 1 offsets from rank[string_begin[f]] + f
  std::uint8_t* dict_chars;           // the batch's characters: every dictionary's, back to back
  const void** copy_src;              // N: the characters of first occurrences to dict_chars
  void** copy_dst;
  std::uint64_t* copy_size;
  std::uint64_t* frame_sizes;         // 2 F: per frame d, then Cd
};

/// Device scratch of CUB's sort, scans and copies for a batch of `num_rows` rows in `num_frames`
/// frames (find_distinct and assemble_frames).
std::size_t cub_temp_bytes(std::uint64_t num_rows, std::size_t num_frames);

/// Every frame's dictionary (offsets into dict_chars, characters) and each row's code; per frame
/// its entries d and characters Cd in frame_sizes, for the host to plan the dictionaries' coding.
void find_distinct(const device_encode_batch& batch, const distinct_scratch& s, void* cub_temp, std::size_t cub_bytes,
                   cudaStream_t stream);

/// Where the pieces of frame f lie: its dictionary coded as a whole fsst frame at
/// dict_frames + dict_frame_at[f] (embedded, its body to be moved), its codes frame already in
/// place at body offset 32 (codes_frame_bytes[f] bytes).
struct assemble_scratch {
  const std::byte* dict_frames;
  const std::uint64_t* dict_frame_at;      // F
  const std::uint64_t* codes_frame_bytes;  // F
  const std::uint64_t* frame_sizes;        // 2 F, as find_distinct wrote them
  const void** copy_src;                   // F: each dictionary section to its place
  void** copy_dst;
  std::uint64_t* copy_size;
};

/// Puts the fsst_dict frames together: the body's first 32 bytes, zeros after the codes frame,
/// the dictionary section after them (the fsst frame's body, moved), and the header fields of
/// the payload encoder (codec id, payload bytes, S and d).
void assemble_frames(const device_encode_batch& batch, std::uint64_t body_offset, const assemble_scratch& s,
                     void* cub_temp, std::size_t cub_bytes, cudaStream_t stream);

}  // namespace zs::kernels::fsst_dict
