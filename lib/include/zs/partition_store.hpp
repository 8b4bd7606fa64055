// A store of partitions under a memory budget: pieces of tables kept by partition id, moved to
// host memory in compressed form (zs::spill) when keeping them would pass the budget, and given
// back whole on extract.
//
//   zs::partition_store store({.budget_bytes = 8ull << 30});       // 8 GiB of device memory
//   store.insert(7, std::move(piece), stream);    // may spill older pieces to stay in budget
//   ...
//   std::vector<zs::table> pieces = store.extract(7, stream);      // in insertion order, on the device
//
// What counts against the budget: the bytes of the resident pieces (values; characters and
// offsets of strings; null masks of nullable columns), in the memory they were inserted in (device tables on the GPU path, host
// tables on the CPU path). Before an insert would pass the budget, resident pieces are spilled
// by the policy until the new one fits; a piece larger than the whole budget is spilled at once.
// So the resident bytes never pass the budget; stats() reports their high-water mark. Spilled
// pieces live in pinned host memory as checksummed frames; extract restores them (into the
// memory they came from) after checking every frame. What extract returns has left the store
// and no longer counts.
//
// Codecs: each column's codec is chosen (spill_options, zs/spill.hpp) on the first spill of a
// piece that has rows in it, and that choice is kept for the same column (position and type) of
// later pieces (spill_options::chosen_before), with the column parameters prepared for it (an
// FSST symbol table; spill_options::prepared): the pieces of one partitioned stream are alike,
// and estimating each piece or building its table anew would cost more than spilling it. A
// codec forced in options.spill applies to every piece.
//
// Failures are zs::error and lose nothing: extracting an unknown partition (invalid_argument,
// naming it), a spill that cannot allocate host memory (out_of_memory; the piece stays resident
// and the insert that needed the room throws, leaving the store as it was), a frame damaged in
// host memory (corrupt_frame on extract; the partition's pieces stay in the store).
//
// Not thread safe: one caller at a time. Work is ordered on the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "zs/column.hpp"
#include "zs/spill.hpp"

namespace zs {

enum class spill_policy : std::uint8_t {
  oldest_first,   // the pieces inserted first go first (they are likely to wait longest)
  largest_first,  // the largest resident pieces go first (fewest spills per byte freed)
};

struct partition_store_options {
  /// Bytes the resident pieces may hold at most.
  std::uint64_t budget_bytes = std::uint64_t{1} << 30;
  spill_policy policy = spill_policy::oldest_first;
  /// How pieces are spilled (codec chosen per column against PCIe unless forced).
  spill_options spill;
  /// Device pieces are kept compressed: encoded on insert into frames in device memory
  /// (spill_options::frames_in device: each column compressed where that saves a tenth of its
  /// bytes, else a raw copy), which count against the budget with their frame bytes; under
  /// pressure those frames move to host memory by plain copies, with no second encode; extract
  /// decodes them. More rows fit under the budget, at the price of an encode on insert and a
  /// decode on extract. Host pieces are kept as they are.
  bool keep_compressed = false;
};

struct partition_store_stats {
  std::uint64_t resident_bytes = 0;    // now
  std::uint64_t high_water_bytes = 0;  // the most resident at any time
  std::uint64_t spilled_bytes = 0;     // uncompressed bytes of the pieces spilled now
  std::uint64_t spilled_frame_bytes = 0;  // what they take in host memory (null masks' frames included)
  std::uint64_t spills = 0, restores = 0;  // pieces moved out and back, since the start
  /// keep_compressed: frame bytes of the pieces kept compressed on the device now (part of
  /// resident_bytes), and the uncompressed bytes they stand for.
  std::uint64_t compressed_bytes = 0, compressed_raw_bytes = 0;
  std::uint64_t partitions = 0, pieces = 0;  // held now
  double spill_seconds = 0;    // host wall time in spills (inserts that had to make room)
  double restore_seconds = 0;  // host wall time restoring spilled pieces on extract
};

class partition_store {
 public:
  explicit partition_store(partition_store_options options);
  partition_store(partition_store&&) noexcept = default;
  partition_store& operator=(partition_store&&) noexcept = default;
  partition_store(const partition_store&) = delete;
  partition_store& operator=(const partition_store&) = delete;

  /// Adds `piece` (host or device columns of equal length; names optional) to partition `id`.
  /// Throws invalid_argument for columns of unequal length or mixed memory, out_of_memory when
  /// a spill finds no host memory; `piece` is then left with the caller.
  void insert(std::uint64_t id, table&& piece, cudaStream_t stream);
  /// Removes partition `id` and returns its pieces in insertion order, resident in the memory
  /// they were inserted in, ready in `stream` order.
  std::vector<table> extract(std::uint64_t id, cudaStream_t stream);
  bool contains(std::uint64_t id) const { return partitions_.count(id) > 0; }
  /// The ids held, ascending.
  std::vector<std::uint64_t> ids() const;
  const partition_store_stats& stats() const noexcept { return stats_; }
  /// The codec chosen for the column at `position` of type `type` (see "Codecs" above); unset
  /// while no piece with rows has been spilled.
  std::optional<codec_id> chosen_codec(std::size_t position, value_type type) const;

  /// The bytes a table counts against the budget.
  static std::uint64_t bytes_of(const table& t) noexcept;

 private:
  enum class place : std::uint8_t {
    resident,    // `resident`, as inserted
    compressed,  // `spilled`, its frames in device memory (keep_compressed)
    spilled,     // `spilled`, its frames in host memory
  };
  struct piece {
    std::uint64_t order = 0;  // insertion order over the whole store
    std::uint64_t bytes = 0;  // bytes_of the rows
    std::uint64_t held = 0;   // what it counts against the budget while on the device
    table resident;
    spilled_table spilled;
    place where = place::resident;
  };
  void make_room(std::uint64_t bytes, cudaStream_t stream);
  spilled_table encode(const table& rows, memory_kind frames_in, cudaStream_t stream);
  void spill_piece(piece& p, const table& rows, cudaStream_t stream);
  void move_piece_to_host(piece& p, cudaStream_t stream);

  partition_store_options options_;
  std::map<std::uint64_t, std::deque<piece>> partitions_;
  struct choice {
    codec_id codec = codec_id::raw;
    std::shared_ptr<const spill_preparation> prepared;  // null for a host piece's choice
  };
  std::map<std::pair<std::size_t, value_type>, choice> chosen_;  // by column position and type
  std::uint64_t next_order_ = 0;
  partition_store_stats stats_;
};

}  // namespace zs
