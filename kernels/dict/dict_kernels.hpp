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

/// Counts each chunk's run starts (a row whose value differs from the row before it in its frame,
/// and each frame's first row) into chunk_runs. chunk_begin: as find_distinct's.
void count_runs(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                std::uint64_t num_chunks, std::uint32_t* chunk_runs, cudaStream_t stream);

/// The frames that take the runs form's pieces: their runs in batch-wide arrays, frame f's runs
/// [run_begin[f], run_begin[f + 1]) (none for the others).
struct run_arrays {
  const std::uint64_t* run_begin;  // F + 1
  std::uint32_t* starts;           // each run's first row in its frame
  std::uint32_t* lengths;          // each run's rows
  const std::uint64_t* values_at;  // F: frame f's run values (its width each) at area + values_at[f]
  std::byte* area;
};

/// Writes the runs of the frames that take them: each run's value and first row, then its
/// length. chunk_begin: as count_runs'; chunk_run_first: per chunk, the batch-wide index of the
/// first run starting in it.
void write_runs(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                std::uint64_t num_chunks, const std::uint64_t* chunk_run_first, std::uint64_t total_runs,
                const run_arrays& runs, cudaStream_t stream);

/// The frames that try the differences form, and where its pieces go (every array F entries).
struct delta_arrays {
  const std::uint64_t* side_at;       // frame f's bases, then its tiles' first values, at area + side_at[f]
  const std::uint64_t* residuals_at;  // its rows' residuals at area + residuals_at[f] (its width each)
  std::byte* area;
};

/// Writes the differences form's pieces of the frames that try it: each group's base
/// (dict::choose_base) and its rows' residuals, and each tile's first value. chunk_begin: those
/// frames in chunks of chunks.params.items rows.
void write_deltas(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                  std::uint64_t num_chunks, const delta_arrays& deltas, cudaStream_t stream);

/// The embedded frames the packer wrote: each frame's plain frame in its place, and for the
/// frames with a dictionary, runs or differences their two frames each elsewhere.
struct packed_frames {
  const std::uint64_t* plain_bytes;  // F: bytes of the plain frame at payload offset 0
  const std::uint64_t* entries;      // F: d, or 0
  const std::uint32_t* first_piece;  // F: its dictionary frame's index in pieces (codes: the next)
  const std::uint64_t* run_count;    // F: R, or 0
  const std::uint32_t* run_piece;    // F: its lengths frame's index in pieces (run values: the next)
  const std::uint32_t* delta_piece;  // F: its bases frame's index in pieces (residuals: the next)
  const std::byte* pieces;
  const std::uint64_t* piece_at;     // piece i at pieces + piece_at[i]
  const std::uint64_t* piece_bytes;  // and its bytes
};

/// Puts each frame together: the form of the smallest payload (plain, dictionary, runs,
/// differences; ties to the earlier), and the header fields the encoder owns (dict::store_fields).
void assemble(const device_encode_batch& batch, const packed_frames& packed, cudaStream_t stream);

// --- decode -------------------------------------------------------------------------------

/// Checks every frame still ok by the format's rules (dict::check_frame, setting its status) and
/// writes its fields: d at fields[2f], Ld at fields[2f + 1] (zero for frames not ok).
void check_frames(const device_decode_batch& batch, std::uint64_t* fields, cudaStream_t stream);

/// Sets corrupt_payload on every frame one of whose embedded frames (pieces) did not decode.
void fold_statuses(const device_decode_batch& batch, const frame_status* piece_status, const std::uint32_t* owner,
                   std::size_t pieces, cudaStream_t stream);

/// Device scratch of check_runs over `total_runs` runs: a 64-bit prefix per run and the scan's.
std::size_t check_runs_temp_bytes(std::uint64_t total_runs);

/// For the frames of runs (frame f's runs [run_begin[f], run_begin[f + 1]) of the batch-wide
/// lengths): each run's first row in its frame (starts, batch-wide), and corrupt_payload where a
/// length is 0 or they do not add up to the frame's rows. One scan over every run of the batch.
void check_runs(const device_decode_batch& batch, const std::uint64_t* run_begin, std::uint64_t total_runs,
                const std::uint32_t* lengths, std::uint32_t* starts, void* temp, std::size_t temp_bytes,
                cudaStream_t stream);

/// Writes the rows of the frames of runs still ok: each row the value of the last run starting at
/// or before it. chunk_begin: those frames in chunks of chunks.params.items rows.
void expand_runs(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                 std::uint64_t num_chunks, const std::uint64_t* run_begin, const std::uint32_t* starts,
                 const std::byte* values, const std::uint64_t* values_at, cudaStream_t stream);

/// Adds up the residuals of the frames of differences still ok, in place (unpacked into their
/// targets): each tile from its first value, each row its group's base and its residual more than
/// the row before; a warp a tile. tile_begin: those frames in tiles of dict::tile_rows rows (none
/// for the others); frame f's bases and first values at side + side_at[f].
void add_up_deltas(const device_decode_batch& batch, const std::uint64_t* tile_begin, std::uint64_t num_tiles,
                   const std::byte* side, const std::uint64_t* side_at, cudaStream_t stream);

/// Replaces every code of the frames with a dictionary by its value, in place, where the frame
/// is still ok; a code of d or more makes it corrupt_payload. fields: as check_frames wrote
/// them; frame f's dictionary values at dictionaries + dictionary_at[f]. chunk_begin: the frames
/// with a dictionary in chunks of chunks.params.items rows.
void replace_codes(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, const std::uint64_t* fields, const std::byte* dictionaries,
                   const std::uint64_t* dictionary_at, cudaStream_t stream);

}  // namespace zs::kernels::dict
