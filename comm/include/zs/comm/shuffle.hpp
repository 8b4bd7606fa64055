// Compressed all-to-all of columns: the table shuffle of distributed GPU data jobs.
//
// Each rank gives its columns and, per column, which rows go to which rank. The shuffle encodes
// every (column, destination) partition into a frame (docs/FORMAT.md), moves the frames, and
// decodes them into one column per input column holding the rows every rank sent here,
// concatenated in source rank order.
//
//   plan      agree on the number of rounds; choose, per column and destination, raw or
//             compressed (shuffle_planner.hpp); tell every destination how many rows (and string
//             characters) each round brings and how they travel, so outputs are allocated once,
//             up front
//   round k   encode all frames of round k (batched: one launch per codec family for all columns
//             and destinations), exchange frame sizes, pack frames by destination, exchange
//             frames and raw partitions, decode the frames straight into the outputs. A raw
//             partition of a fixed-width column is no frame: it travels from the column
//             straight into its place in the output (over NCCL without a copy), and, like any
//             uncompressed transfer, carries no checksum of its own
//
// On the GPU, rounds overlap on three streams: round k + 1 encodes while round k is on the wire
// and round k - 1 decodes, so memory stays bounded by about three rounds of frames
// (options.round_bytes each) whatever the size of the shuffle. The CPU reference path runs the
// same protocol, round after round, over host memory.
//
// Nulls: a column may carry a null mask (zs/column.hpp). Its validity travels as one byte per
// row (1 valid, 0 null) beside the column, sliced by the same row_offsets, compressed with the
// bitpack codec (about 1.5 bits per row with nulls scattered; runs of valid or of null rows,
// as in a slice that is all one or the other, in a few words per 512 rows), or raw where the caller sends the column raw (options.codec or its
// column_codecs entry codec_id::raw); on arrival it is packed back into the output's mask. If
// the column is nullable on any rank, its output is nullable on every rank, and a rank whose
// column has no mask sends every row as valid. The values under null rows travel as they are.
// The validity's bytes count in the column's stats (shuffle_stats::column_null_raw_bytes and
// column_null_wire_bytes tell them apart). Costs: two or three small collectives per call
// (whether any column is nullable), and with nullable columns a byte per row of each on the
// way out and in.
//
// Failures never hang and never return wrong data. When any rank passes a bad argument, runs out
// of memory, or receives a frame, manifest or frame-size block that fails its checksum or its
// checks, EVERY rank throws zs::error, and the message names the failing rank(s) and what
// failed there ("shuffle: checking the arguments failed on rank 1: invalid argument: column 2
// (string): row_offsets has 3 entries, expected ranks + 1 = 5"):
//   invalid_argument  a rank's column or options are malformed (round_bytes 0, row_offsets of
//                     the wrong length, not sorted, not ending at the column's rows ...), or
//                     the ranks pass different column counts, types, codecs or round_bytes;
//   unsupported       the chosen codec does not encode a column's type (the same on every rank);
//   out_of_memory     some rank could not allocate its plan, buffers or outputs;
//   corrupt_frame     a frame, the manifest or a round's frame sizes arrived damaged;
//   cuda_error ...    what the failing rank saw.
// A peer that stops answering cannot take part in any agreement: waits are bounded by the
// communicator's timeout (options.timeout for this call), after which the MPI backend aborts
// the job and a device communicator throws timed_out (communicator.hpp,
// device_communicator.hpp). The failure model is in docs/SHUFFLE.md.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/shuffle_planner.hpp"

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

/// How far a shuffle has come, as its progress callback sees it. Bytes are this rank's.
struct shuffle_progress {
  std::uint64_t rounds_done = 0;      // rounds whose frames were handed to the transport
  std::uint64_t rounds = 0;           // rounds of the whole call (the same on every rank)
  std::uint64_t raw_bytes = 0;        // uncompressed bytes of those rounds, as shuffle_stats counts
  std::uint64_t raw_bytes_total = 0;  // uncompressed bytes of the whole call
  std::uint64_t wire_bytes = 0;       // frame bytes of those rounds
};

/// Every rank must pass the same options (timeout and progress excepted); the ranks check that
/// they do.
struct shuffle_options {
  /// Uncompressed bytes a rank encodes per round, over all columns and destinations. Bounds
  /// memory (about three rounds of frames are alive at once on the GPU) and sets the grain of
  /// the pipeline.
  std::uint64_t round_bytes = std::uint64_t{256} << 20;
  /// One codec for every column, used on every link (codec_id::raw: every partition raw); no
  /// planning. When empty, each column's own choice below.
  std::optional<codec_id> codec;
  /// Per column (empty, or one entry per column): codec_id::raw sends the column raw on every
  /// link, another id compresses it with that codec on every link, and an empty entry leaves
  /// the column to `planning` with default_codec(type); for strings, each sender then estimates
  /// fsst and fsst_dict and takes the dictionary where values repeat, and with `automatic`
  /// planning, for integers, bitpack or dict (bitpack_ext's schemes, or a dictionary per frame
  /// where that is smaller), whichever its plan predicts shorter
  /// (shuffle_stats::column_codecs).
  std::vector<std::optional<codec_id>> column_codecs;
  /// For the columns nobody forced: `automatic` lets the planner choose raw or compressed per
  /// destination link (shuffle_planner.hpp; it measures the links and the codecs' speeds the
  /// first time, and estimates each column's ratio on a sample), `compress` compresses them
  /// on every link.
  enum class planning { automatic, compress };
  planning plan = planning::automatic;
  /// Bytes per second to each rank (one entry per rank) for the planner, in place of the
  /// communicator's measured link_bandwidth. The figures may differ between ranks, but every
  /// rank gives them or none does (measuring is collective).
  std::vector<double> link_bandwidth;
  /// The communicator's timeout for this call only (0: no limit; see communicator::timeout);
  /// the communicator's own is back in place when the call returns or throws. For the device
  /// versions it is set on the device communicator's host communicator, whose timeout both
  /// use. May differ between ranks, as progress may; the other options must not.
  std::optional<std::chrono::milliseconds> timeout;
  /// Called after each round's exchange, on the calling thread, with the rounds done so far:
  /// for a progress display. On the GPU "done" means enqueued: the frames are on their way, and
  /// the next round waits for them. It runs between collectives, so it should return quickly; an
  /// exception it throws fails the call on every rank (at the next agreement point), naming
  /// this rank and the exception's message. Ranks may pass different callbacks, or none (a
  /// display on rank 0 alone). Unset, the shuffle pays one test per round.
  std::function<void(const shuffle_progress&)> progress;
};

struct shuffle_stats {
  std::uint64_t raw_bytes = 0;   // uncompressed bytes this rank sent: values, or chars + 8 per string
  std::uint64_t wire_bytes = 0;  // frame bytes this rank sent (headers and alignment included)
  std::vector<std::uint64_t> column_raw_bytes;   // raw_bytes per column, its validity included
  std::vector<std::uint64_t> column_wire_bytes;  // wire_bytes per column, its validity included
  /// Of those, what each column's validity cost (0 for a column not nullable on any rank): its
  /// raw bytes (one per row) and its frame bytes. Also counted in raw_bytes and wire_bytes.
  std::vector<std::uint64_t> column_null_raw_bytes;
  std::vector<std::uint64_t> column_null_wire_bytes;
  /// The codec of each column's compressed frames from this rank, codec_id::raw where it sent
  /// none. A string column left to default_codec takes fsst, or fsst_dict where its estimate on
  /// this rank's partitions says the dictionary saves an eighth of the bytes (ranks may differ).
  /// An integer column left to default_codec and to the planner takes bitpack, or dict where its
  /// estimate beats bitpack's by 5% and the plan with it predicts a shorter call (its frames are
  /// smaller, its kernels slower: it pays over slow links).
  std::vector<codec_id> column_codecs;
  std::uint64_t rounds = 0;
  double seconds = 0;            // wall time of the call on this rank, until its outputs are ready
  /// The planner's choices, inputs and predictions when it ran (options.plan automatic with a
  /// column left to it): plan->predicted.total against `seconds` is how well the model did.
  /// With nullable columns its columns are the caller's, then one validity column (uint8) per
  /// nullable column, in column order.
  std::optional<transfer_plan> plan;
};

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
