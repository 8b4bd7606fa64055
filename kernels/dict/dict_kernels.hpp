// Batched GPU kernels of the dict codec (dict_format.hpp gives the format's rules). The embedded
// frames are packed and unpacked by the bitpack_ext codec; these kernels find the dictionaries,
// code the rows, put the frames together, and on the way back check the frames and replace the
// codes by their values. Chunk launches cut frames into chunks of launch.params.items rows
// (kernels/common/work_map.hpp), a block per chunk at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::kernels::dict {

/// The kernel spec the chunk launches are chosen for.
inline constexpr std::string_view chunks_kernel_name = "dict_chunks";

// --- encode -------------------------------------------------------------------------------

/// Flags of a frame's search for distinct values.
inline constexpr std::uint32_t too_many = 1;       // more than dict::entry_limit(rows) of them
inline constexpr std::uint32_t has_empty_key = 2;  // a value whose key is dict::empty_key

/// Every frame's hash table of distinct keys (dict::table_slots(rows) slots each).
struct distinct_tables {
  const std::uint64_t* slots_at;  // F + 1: frame f's slots are [slots_at[f], slots_at[f + 1])
  std::uint64_t* slots;           // every slot dict::empty_key before find_distinct
  std::uint32_t* inserted;        // F, zeroed: keys inserted (the empty key not among them)
  std::uint32_t* flags;           // F, zeroed
};

/// Inserts every row's key into its frame's table, until the frame has more distinct values than
/// its limit (a frame then stops: its later chunks read one flag). A frame's distinct values are
/// inserted[f] + (flags[f] & has_empty_key ? 1 : 0) where flags[f] lacks too_many.
/// chunk_begin: the frames in chunks of chunks.params.items rows.
void find_distinct(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, const distinct_tables& tables, cudaStream_t stream);

/// The frames that take a dictionary, and where its pieces go (every array F entries).
struct dictionaries {
  const std::uint64_t* entries;  // d, or 0 for a frame without a dictionary
  const std::uint64_t* key_at;   // its keys at keys + key_at[f]
  std::uint64_t* keys;
  const std::uint64_t* values_at;  // its values (the frame's width each) at area + values_at[f]
  const std::uint64_t* codes_at;   // its rows' codes (the same width) at area + codes_at[f]
  std::byte* area;
};

/// Sorts each dictionary's keys (a block a frame) into keys and writes its values.
void sort_dictionaries(const device_encode_batch& batch, const distinct_tables& tables, const dictionaries& d,
                       cudaStream_t stream);

/// Writes every row's code (its key's rank in its dictionary). chunk_begin: the frames with a
/// dictionary in chunks of chunks.params.items rows (none for the others).
void code_rows(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
               std::uint64_t num_chunks, const dictionaries& d, cudaStream_t stream);

/// The embedded frames the packer wrote: each frame's plain frame in its place, and for the
/// frames with a dictionary its dictionary and codes frames elsewhere.
struct packed_frames {
  const std::uint64_t* plain_bytes;  // F: bytes of the plain frame at payload offset 0
  const std::uint64_t* entries;      // F: d, or 0
  const std::uint32_t* first_piece;  // F: its dictionary frame's index in pieces (codes: the next)
  const std::byte* pieces;
  const std::uint64_t* piece_at;     // piece i at pieces + piece_at[i]
  const std::uint64_t* piece_bytes;  // and its bytes
};

/// Puts each frame together: its dictionary and codes where they are smaller than the plain
/// frame, and the header fields the encoder owns (dict::store_fields).
void assemble(const device_encode_batch& batch, const packed_frames& packed, cudaStream_t stream);

// --- decode -------------------------------------------------------------------------------

/// Checks every frame still ok by the format's rules (dict::check_frame, setting its status) and
/// writes its fields: d at fields[2f], Ld at fields[2f + 1] (zero for frames not ok).
void check_frames(const device_decode_batch& batch, std::uint64_t* fields, cudaStream_t stream);

/// Sets corrupt_payload on every frame one of whose embedded frames (pieces) did not decode.
void fold_statuses(const device_decode_batch& batch, const frame_status* piece_status, const std::uint32_t* owner,
                   std::size_t pieces, cudaStream_t stream);

/// Replaces every code of the frames with a dictionary by its value, in place, where the frame
/// is still ok; a code of d or more makes it corrupt_payload. fields: as check_frames wrote
/// them; frame f's dictionary values at dictionaries + dictionary_at[f]. chunk_begin: the frames
/// with a dictionary in chunks of chunks.params.items rows.
void replace_codes(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, const std::uint64_t* fields, const std::byte* dictionaries,
                   const std::uint64_t* dictionary_at, cudaStream_t stream);

}  // namespace zs::kernels::dict
