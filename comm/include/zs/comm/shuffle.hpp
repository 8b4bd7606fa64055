// Compressed all-to-all of columns: the table shuffle of distributed GPU data jobs.
//
// Each rank gives its columns and, per column, which rows go to which rank. The shuffle encodes
// every (column, destination) partition into a frame (docs/FORMAT.md), moves the frames, and
// decodes them into one column per input column holding the rows every rank sent here,
// concatenated in source rank order.
//
//   plan      agree on the number of rounds; tell every destination how many rows (and string
//             characters) each round brings, so outputs are allocated once, up front
//   round k   encode all frames of round k (batched: one launch per codec family for all columns
//             and destinations), exchange frame sizes, pack frames by destination, exchange
//             frames, decode them straight into the outputs
//
// On the GPU, rounds overlap on three streams: round k + 1 encodes while round k is on the wire
// and round k - 1 decodes, so memory stays bounded by about three rounds of frames
// (options.round_bytes each) whatever the size of the shuffle. The CPU reference path runs the
// same protocol, round after round, over host memory.
//
// Failures never hang and never return wrong data: bad arguments on any rank, an out-of-memory
// on any rank, or a frame that does not decode (checksum, validation) make EVERY rank throw
// zs::error. Frames are checksummed end to end, and decoders validate them before reading.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/device_communicator.hpp"

namespace zs {

/// One column to shuffle, and where its rows go.
struct shuffle_column {
  /// Device memory for the GPU shuffle, host memory for the CPU reference. String columns may
  /// be slices (offsets need not start at 0).
  column_view column;
  /// ranks + 1 non-decreasing row indices, first 0 and last column.count (host memory): rows
  /// [row_offsets[d], row_offsets[d + 1]) go to rank d.
  std::span<const std::uint64_t> row_offsets;
};

/// Every rank must pass the same options.
struct shuffle_options {
  /// Uncompressed bytes a rank encodes per round, over all columns and destinations. Bounds
  /// memory (about three rounds of frames are alive at once on the GPU) and sets the grain of
  /// the pipeline.
  std::uint64_t round_bytes = std::uint64_t{256} << 20;
  /// One codec for every column; when empty, default_codec(type) for each.
  std::optional<codec_id> codec;
};

struct shuffle_stats {
  std::uint64_t raw_bytes = 0;   // uncompressed bytes this rank sent: values, or chars + 8 per string
  std::uint64_t wire_bytes = 0;  // frame bytes this rank sent (headers and alignment included)
  std::vector<std::uint64_t> column_raw_bytes;   // raw_bytes per column
  std::vector<std::uint64_t> column_wire_bytes;  // wire_bytes per column
  std::uint64_t rounds = 0;
  double seconds = 0;            // wall time of the call on this rank, until its outputs are ready
};

/// The codec a shuffle uses for a column of `type` unless told otherwise: the best codec built
/// in for the type, raw when none is.
const codec& default_codec(value_type type);

/// GPU shuffle. Collective over `comm`. Enqueues on `stream` and returns when the outputs are
/// allocated and every decode is enqueued; the outputs are ready for work on `stream`. Checks
/// every frame's status before returning (which waits for the decodes).
std::vector<column> shuffle(device_communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, cudaStream_t stream,
                            shuffle_stats* stats = nullptr);

/// The same shuffle with the CPU reference codecs, over host memory. Collective over `comm`.
std::vector<column> shuffle(communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, shuffle_stats* stats = nullptr);

}  // namespace zs
