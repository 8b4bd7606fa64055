// What a spilled_column holds (zs/spill.hpp), and what the host side (spill.cpp) and the device
// side (spill_gpu.cpp) of spilling share.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/spill.hpp"

namespace zs {

struct spill_preparation {
  codec_id codec = codec_id::raw;
  value_type type = value_type::int32;
  /// The codec's column parameters for one column (device memory), empty for a codec without
  /// them. Freed on the legacy default stream: by the time the last holder drops it, every
  /// encode that read it has completed (a spill waits for its encodes before it returns).
  device_buffer params;
};

}  // namespace zs

namespace zs::detail {

/// Host memory that holds frames: pinned where a GPU is there (fast, asynchronous copies), else
/// ordinary. Pinned blocks go back to a process-wide cache when dropped, for the next spill.
struct pinned_slab;  // spill.cpp

class spill_block {
 public:
  spill_block() = default;
  /// `bytes` of host memory, pinned when `pinned`. Throws zs::error (out_of_memory) naming
  /// `column` when it cannot be allocated.
  spill_block(std::uint64_t bytes, bool pinned, const std::string& column);
  /// Frames kept in device memory (spill_options::frames_in device), `bytes` of `frames`.
  spill_block(device_buffer&& frames, std::uint64_t bytes);
  ~spill_block();
  spill_block(spill_block&& other) noexcept;
  spill_block& operator=(spill_block&& other) noexcept;
  spill_block(const spill_block&) = delete;
  spill_block& operator=(const spill_block&) = delete;

  std::byte* data() noexcept;
  const std::byte* data() const noexcept;
  std::uint64_t size() const noexcept { return bytes_; }
  bool on_device() const noexcept { return !device_.empty(); }

 private:
  void give_back() noexcept;
  device_buffer device_;       // frames kept on the device, freed on the stream they were made on
  pinned_buffer pinned_;       // a block of its own (large blocks)
  pinned_slab* slab_ = nullptr;  // or a part of a shared pinned slab (small blocks) at slab_data_
  std::byte* slab_data_ = nullptr;
  host_buffer plain_;
  std::uint64_t bytes_ = 0;
};

/// One frame of a spilled column: its rows, and where its bytes lie.
struct spilled_frame {
  std::uint64_t row = 0, rows = 0;
  std::uint64_t chars_begin = 0, chars = 0;  // strings: its characters in the column
  std::uint64_t block = 0, offset = 0, bytes = 0;
};

struct spill_state {
  spill_state() = default;
  // Pinned blocks go back to the cache when dropped: the spill's copies into them must be done.
  ~spill_state() {
    if (spill_stop) ZS_CUDA_TRY_NOTHROW(cudaEventSynchronize(spill_stop->get()));
  }
  /// Waits until the spill's copies to host memory are done, and drops what they read.
  void wait_for_spill() {
    if (spill_stop) spill_stop->synchronize();
    staging.clear();
  }
  spill_state(const spill_state&) = delete;
  spill_state& operator=(const spill_state&) = delete;

  std::string name;
  value_type type = value_type::int32;
  std::uint64_t count = 0, chars_bytes = 0;
  memory_kind origin = memory_kind::host;
  spill_report report;
  std::vector<spill_block> blocks;
  std::vector<spilled_frame> frames;  // in row order; frames of one block are consecutive
  /// The raw fast path (spill_gpu.cpp): a device column for which the choice fell on raw is one
  /// plain copy of its values into blocks[0] (a string column's count + 1 offsets as they were,
  /// then its characters), without frames (no encode, no pack: as fast as cudaMemcpy). The file
  /// tier frames it on the host when asked.
  bool unframed = false;
  /// An unframed string column's first offset, subtracted from every offset on restore.
  std::int64_t first_offset = 0;
  /// Where the blocks are: host memory, or the device (spill_options::frames_in) until
  /// move_to_host.
  memory_kind frames_memory = memory_kind::host;
  /// Pinned host memory the spill's copies may still read (their lists): kept until they are done.
  std::vector<spill_block> staging;
  // The spill's time: events around it on the device, or the host's clock for a host spill.
  std::optional<cuda_event> spill_start, spill_stop;
  double spill_host_seconds = 0;
  double restore_seconds = 0;
  /// What the spill chose and prepared (device spills of columns with rows); see spill.hpp.
  std::shared_ptr<const spill_preparation> preparation;
  /// The column's null mask, spilled as a column of its bytes (uint8, raw frames: each frame
  /// checksummed); null for a column without one.
  std::unique_ptr<spill_state> null_mask;
};

/// The frames a column is cut into: rows and characters per frame, about options.frame_bytes of
/// uncompressed bytes each, grouped in batches of about options.batch_bytes (a frame's `block` is
/// its batch).
struct frame_plan {
  std::vector<spilled_frame> frames;
  std::vector<std::size_t> batch_begin;  // batches + 1 entries: frames of batch b
};
/// Boundary rows of about `frame_bytes` each for a column of `count` rows and `raw_bytes`
/// uncompressed bytes (0 frames for an empty column).
std::vector<std::uint64_t> frame_boundaries(std::uint64_t count, std::uint64_t raw_bytes, std::uint64_t frame_bytes);
/// The plan from boundary rows and, for strings, the column's offsets at them (relative to the
/// first row's offset). With short_ends, a column of more than two batches starts and ends
/// with a batch of an eighth of batch_bytes: the pipeline's two ends overlap nothing (the first
/// batch's encoding runs before any copy, the last batch's copy, or on restore its decoding,
/// after every other), which matters where the copies bound it, not the codec.
frame_plan plan_frames(value_type type, std::span<const std::uint64_t> rows, std::span<const std::int64_t> ends,
                       std::uint64_t batch_bytes, bool short_ends = false);

/// The encode source of frame `f` over the column `v` (memory of the side that encodes).
encode_source frame_source(const column_view& v, const spilled_frame& f);
/// The decode target of frame `f` into the column `out`.
decode_target frame_target(const mutable_column_view& out, const spilled_frame& f);

/// Uncompressed bytes as shuffle statistics count them: values, or characters + 8 per string.
std::uint64_t uncompressed_bytes(value_type type, std::uint64_t count, std::uint64_t chars);

/// Codec speeds, uncompressed bytes per second.
struct codec_speed {
  double encode_bps = 0, decode_bps = 0;
};

/// Seconds a spill and a restore of `raw_bytes` take compressed `ratio` times by a codec of
/// `speed` over a link of `pcie_bps`: each direction about the slower of its codec pass and its
/// copy, which batches overlap.
double predicted_compressed_seconds(double raw_bytes, double ratio, codec_speed speed, double pcie_bps);

/// Whether a slower integer codec of smaller frames (extended ratio and speed: bitpack_ext, or
/// dict) is predicted to spill and restore faster than the one chosen so far (classic).
bool prefers_extended(double raw_bytes, double classic_ratio, codec_speed classic_speed, double extended_ratio,
                      codec_speed extended_speed, double pcie_bps);

/// The codec choice of zs/spill.hpp from the figures, into `r` (its raw_bytes and, when forced,
/// its codec set): the figures, the predictions, and unless forced the codec.
void decide_codec(spill_report& r, const codec& candidate, double ratio, codec_speed speed, double pcie_bps);

/// The side a spill runs on: how it estimates a ratio, measures a codec's speed and knows the link.
struct spill_side {
  virtual ~spill_side() = default;
  /// The codec's ratio on `sample` (frames of the column).
  virtual double ratio(const codec& c, std::span<const encode_source> sample) = 0;
  /// The codec's speed on this column, measured once per process (and device), codec, type and
  /// column name (`column_name`, the spill's name): how fast a codec runs depends on the values as
  /// well as their type (fsst_dict on a column of few distinct strings runs twice as fast as on
  /// one of many), so one column's figures must not choose for another.
  virtual codec_speed speed(const codec& c, const std::string& column_name) = 0;
  virtual double pcie_bps() = 0;
};
/// Fills s.report (s.type, count and chars_bytes set): the codec, and the figures of the choice.
void choose_codec(spill_state& s, const spill_options& options, const column_view& v, const frame_plan& p,
                  spill_side& side);
/// Up to `most` frames spread over the column, as encode sources: a sample for estimates.
std::vector<encode_source> spread_sample(const column_view& v, const frame_plan& p, std::size_t most);
/// The column's first frames, up to `bytes` uncompressed (at least one): where speeds are measured.
std::vector<spilled_frame> leading_frames(const frame_plan& p, value_type type, std::uint64_t bytes);
/// The frames of block b, from frame `from` on: [first, last).
std::pair<std::size_t, std::size_t> frames_of_block(const spill_state& s, std::size_t b, std::size_t from);

/// "column 'name' (int32)" for messages.
std::string describe(const std::string& name, value_type type);

/// Throws zs::error (corrupt_frame) naming the column and the first frame whose status is not ok.
void throw_if_bad_frames(const spill_state& s, std::span<const frame_status> statuses, std::size_t first_frame);

// --- the device side (spill_gpu.cpp) ---

/// Spills the device column `v` into `s` (type, count, name and chars_bytes set).
void spill_on_device(spill_state& s, const column_view& v, cudaStream_t stream, const spill_options& options);
/// Restores `s` into device memory.
column restore_on_device(spill_state& s, cudaStream_t stream);
/// The string offsets of the device column `v` at `rows`, relative to its first row's.
std::vector<std::int64_t> device_offsets_at(const column_view& v, std::span<const std::uint64_t> rows,
                                            cudaStream_t stream);

}  // namespace zs::detail
