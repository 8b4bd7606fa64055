// Batched GPU kernels of the fsst_dict codec (docs/FORMAT.md, "Codec 7: fsst_dict"). The host
// code is lib/src/codecs/fsst/fsst_dict_codec_gpu.cpp.
//
// Encoding: every frame's distinct values, in the order of their first row, and each row's code,
// found for all rows of a batch at once; then, after the dictionaries are coded by the fsst
// kernels and the codes packed by the bitpack kernels (each into its own frames), the fsst_dict
// frames put together from those pieces.
//
// Distinct values without a sort of variable-length strings: each row is hashed (64 bits, its
// frame mixed in), rows are sorted by hash with CUB's radix sort (stable, so rows of one hash stay
// in row order), and each row is compared byte for byte with the rows of its hash before it until
// one is equal: its first occurrence. Equal values always share a hash, so the comparison makes
// the grouping exact whatever the hash's collisions (which cost comparisons, never wrong codes).
// A dictionary entry's index is the number of first occurrences before its own in its frame (a
// scan over rows), which is the CPU reference's order of first rows: the same bytes on both sides.
//
// Decoding, over every frame of a batch at once (fsst_dict_format.hpp has the per-frame rules):
//   1. check_frames: each frame's body fields and dictionary layout, before any section is read;
//      what it found goes down to the host, which plans the dictionaries' decoding from it;
//   2. build_dictionary_frames: each dictionary section recast as an fsst frame in scratch (its
//      header written, its table and section copied), which the fsst codec's decoder then checks
//      and decodes with fsst's rules; the codes frames are decoded in place by the bitpack codec;
//   3. decode_rows: the embedded decoders' statuses, every code against its dictionary, the rows'
//      lengths and offsets (a scan over the batch), then the characters gathered by aligned
//      windows of the targets.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fsst/fsst_dict_format.hpp"
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

// ---- decoding ----

/// Device arrays of a decode batch (N = num_rows, the targets' rows; F = frames). Frame f has
/// rows [string_begin[f], string_begin[f + 1]) and gather units [unit_begin[f], unit_begin[f + 1])
/// (fsst_dict::gather_units of its target).
struct decode_scratch {
  const std::uint64_t* string_begin;  // F + 1
  std::uint64_t num_rows;
  const std::uint64_t* unit_begin;    // F + 1
  std::uint64_t num_units;
  ::zs::fsst_dict::dictionary_section* sections;  // F: what check_frames found
  // The dictionaries as fsst frames: frame f's at dict_frames + dict_frame_at[f], none for a
  // frame that is not decoded. Decoded into entry_offsets from entry_offsets_at[f] (d + 1 of
  // them, from 0) and entry_chars from entry_chars_at[f]; their statuses in dict_status.
  std::byte* dict_frames;
  const std::uint64_t* dict_frame_at;     // F
  const std::uint64_t* entry_offsets_at;  // F
  const std::uint64_t* entry_chars_at;    // F
  const std::int64_t* entry_offsets;      // N + F
  const std::uint8_t* entry_chars;
  const frame_status* dict_status;        // F
  const void** copy_src;                  // 2 F: each dictionary frame's table and section
  void** copy_dst;
  std::uint64_t* copy_size;
  // The codes as the bitpack decoder wrote them: frame f's from codes + string_begin[f].
  const std::uint64_t* codes;             // N
  const frame_status* codes_status;       // F
  std::uint64_t* lengths;                 // N + 1: each row's characters (the last 0)
  std::uint64_t* prefix;                  // N + 1: their exclusive scan
};

/// Device scratch of CUB's scan and copies for decode_rows and build_dictionary_frames.
std::size_t decode_cub_temp_bytes(std::uint64_t num_rows, std::size_t num_frames);

/// Step 1: each frame still ok checked by zs::fsst_dict::read_body into s.sections (zero for the
/// others), corrupt_payload where it breaks a rule.
void check_frames(const device_decode_batch& batch, const decode_scratch& s, cudaStream_t stream);

/// Step 2, with s.dict_frames and s.dict_frame_at planned from the sections: the fsst frame of
/// every frame whose section is ok written at its place (header, then its table and section
/// copied by one batched copy).
void build_dictionary_frames(const device_decode_batch& batch, const decode_scratch& s, void* cub_temp,
                             std::size_t cub_bytes, cudaStream_t stream);

/// Step 3, after the dictionaries and codes are decoded: corrupt_payload for a frame whose
/// dictionary or codes did not decode, with a code of d or more, or whose rows' lengths do not
/// add up to its characters (the CPU reference's checks); then the offsets of every frame still
/// ok (a frame refused by its lengths may have some written, inside its target), then its
/// characters.
void decode_rows(const device_decode_batch& batch, const decode_scratch& s, void* cub_temp, std::size_t cub_bytes,
                 cudaStream_t stream);

}  // namespace zs::kernels::fsst_dict
