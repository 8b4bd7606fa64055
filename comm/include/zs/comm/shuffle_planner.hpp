// The shuffle's planner: for each column and each destination link, send the partition raw or
// compressed, whichever this rank's model predicts to finish the shuffle sooner.
//
// Compression pays only where the link is slow next to the codec: over NVLink an H100 moves
// raw bytes at 150-300 GB/s a rank, faster than most codecs encode and decode them, while over
// PCIe, host memory or a network every byte saved is time saved. The planner decides per
// (column, destination), from what this rank measured:
//   bytes     the column's uncompressed bytes to each destination (shuffle_stats counts);
//   ratio     the codec's estimate on a sample of the column (codec::estimate);
//   speeds    the codec's encode and decode throughput on this device, in uncompressed bytes
//             per second, measured once per process and codec and type;
//   links     the bandwidth to each peer, measured once per communicator (or given);
//   rounds    how many rounds the pipeline runs, which hides all but the slowest stage.
// The model (docs/PLANNER.md):
//   encode E = sum over compressed (column, link) of bytes / encode speed
//   wire   W = the larger of the local copy's time and the sum over the other links of
//              (the link's raw bytes + compressed bytes / ratio) / bandwidth
//   decode D = sum over compressed (column, link) of bytes / decode speed
//   piped  P = (E + W + D) / rounds + (rounds - 1) / rounds * max(E, W, D)
//   time   T = overlap * P + (1 - overlap) * (E + W + D)
// P is what a perfect pipeline takes (round k encodes while round k - 1 is on the wire and
// k - 2 decodes); on one GPU the stages overlap only in part, since the codec kernels and the
// transfer share its SMs and memory bandwidth and each round's exchange waits for its frame
// sizes. `overlap` says how much (1: perfectly, 0: not at all); its default comes from
// measurements (docs/PLANNER.md). Raw partitions of
// fixed-width columns cost nothing but their wire time (they travel straight from the column
// into the output); raw string partitions travel as raw frames, whose copies the model charges
// at the raw codec's speeds. Decoding is charged for what this rank sends, as if its peers
// received the same: ranks plan on their own and exchange only the choices.
//
// The choice: every partition starts raw (or as the caller forced it); partitions are then
// tried in order of wire time saved per compute time added, and each is kept compressed when it
// lowers T. The plan compressing every unforced partition is kept instead when it predicts
// less. Last, the plan must beat sending every unforced partition raw by `min_gain` (a share
// of the raw time), else everything unforced goes raw: frames cost what the model does not
// see (a host wait for each round's frame sizes, packing, launches), so small predicted gains
// are not real ones (docs/PLANNER.md has the measurements). A pure function of its inputs, so
// it is tested with made-up devices and links.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zs {

/// How one partition (a column's rows for one destination) travels.
enum class carriage : std::uint8_t {
  raw = 0,         // uncompressed: straight from the column (fixed width) or as a raw frame
  compressed = 1,  // frames of the column's codec
};

/// What the planner knows of one column on this rank.
struct planner_column {
  std::string name;                   // how --explain names it: "column 2 (int32)"
  std::string codec;                  // the codec it would be compressed with
  std::vector<std::uint64_t> bytes;   // uncompressed bytes to each rank (ranks entries)
  double ratio = 1;                   // estimated uncompressed / frame bytes
  double encode_bps = 0;              // codec speeds, uncompressed bytes per second (> 0)
  double decode_bps = 0;
  /// The cost of a raw partition besides the wire: 0 when it travels straight from the column
  /// (fixed width), else the raw codec's speeds (strings: frames that copy).
  double raw_encode_bps = 0;
  double raw_decode_bps = 0;
  /// The caller's choice for every link, if any.
  std::optional<carriage> forced;
};

struct planner_inputs {
  int rank = 0;                       // this rank: its own "link" is the local copy
  std::vector<double> link_bps;       // bytes per second to each rank
  std::vector<planner_column> columns;
  std::uint64_t rounds = 1;
  double overlap = default_overlap;
  double min_gain = default_min_gain;
  static constexpr double default_overlap = 0.25;
  static constexpr double default_min_gain = 0.2;
};

/// Predicted seconds of each stage and of the whole pipeline.
struct stage_seconds {
  double encode = 0, wire = 0, decode = 0;
  double total = 0;
};

struct transfer_plan {
  planner_inputs inputs;
  std::vector<carriage> choice;       // [column * ranks + destination]
  stage_seconds predicted;            // of this plan
  stage_seconds all_raw;              // of sending every unforced partition raw

  carriage at(std::size_t column, int destination) const {
    return choice[column * inputs.link_bps.size() + static_cast<std::size_t>(destination)];
  }
  /// The plan as a table: per column and link the bytes, link speed, ratio, codec speeds, the
  /// predicted seconds raw and compressed on their own, and the choice; then the stages and
  /// totals of the plan against all raw.
  std::string explain() const;
};

/// The model's prediction for `choice` (as transfer_plan::choice).
stage_seconds predict(const planner_inputs& in, const std::vector<carriage>& choice);

/// Chooses raw or compressed for every (column, destination). Throws invalid_argument when the
/// inputs are inconsistent (link or byte counts not the number of ranks, a speed or link
/// bandwidth not positive, a ratio not positive, rounds 0, overlap or min_gain outside [0, 1]).
transfer_plan plan_transfers(planner_inputs in);

}  // namespace zs
