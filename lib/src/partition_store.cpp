#include "zs/partition_store.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "zs/error.hpp"
#include "zs/log.hpp"

namespace zs {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Host memory a spilled column takes: its values' frames and its null mask's.
std::uint64_t frame_bytes_of(const spilled_column& c) {
  return c.report().spilled_bytes + c.report().null_mask_spilled_bytes;
}

}  // namespace

partition_store::partition_store(partition_store_options options) : options_(std::move(options)) {}

std::uint64_t partition_store::bytes_of(const table& t) noexcept {
  std::uint64_t bytes = 0;
  for (auto const& c : t.columns) {
    bytes += c.data_bytes();
    if (c.type() == value_type::string) bytes += 8 * (c.size() + 1);
    if (c.nullable()) bytes += null_mask_bytes(c.size());
  }
  return bytes;
}

void partition_store::insert(std::uint64_t id, table&& t, cudaStream_t stream) {
  for (std::size_t c = 1; c < t.columns.size(); ++c) {
    if (t.columns[c].size() != t.columns[0].size() || t.columns[c].memory() != t.columns[0].memory()) {
      ZS_FAIL(error_code::invalid_argument, "partition_store: a piece of partition " + std::to_string(id) +
                                                " has columns of unequal length or in different memory (column " +
                                                std::to_string(c) + ")");
    }
  }
  if (t.names.empty()) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) t.names.push_back("column " + std::to_string(c));
  } else if (t.names.size() != t.columns.size()) {
    ZS_FAIL(error_code::invalid_argument, "partition_store: a piece of partition " + std::to_string(id) + " has " +
                                              std::to_string(t.names.size()) + " names for " +
                                              std::to_string(t.columns.size()) + " columns");
  }
  // `t` is moved from only once nothing can fail: a failed insert leaves it with the caller.
  piece p;
  p.order = next_order_;
  p.bytes = bytes_of(t);
  bool const on_device = !t.columns.empty() && t.columns.front().memory() == memory_kind::device;
  if (options_.keep_compressed && on_device) {
    p.spilled = encode(t, memory_kind::device, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));  // the frames are complete; the rows may go
    for (auto const& c : p.spilled.columns) p.held += frame_bytes_of(c);
    p.where = place::compressed;
    if (p.held > options_.budget_bytes) {
      move_piece_to_host(p, stream);  // larger than the whole budget, even compressed
    } else {
      make_room(p.held, stream);
      stats_.resident_bytes += p.held;
      stats_.compressed_bytes += p.held;
      stats_.compressed_raw_bytes += p.bytes;
    }
  } else if (p.bytes > options_.budget_bytes) {
    // Larger than the whole budget: it never becomes resident.
    spill_piece(p, t, stream);
  } else {
    make_room(p.bytes, stream);
    p.held = p.bytes;
    p.resident = std::move(t);
    stats_.resident_bytes += p.held;
  }
  stats_.high_water_bytes = std::max(stats_.high_water_bytes, stats_.resident_bytes);
  ++next_order_;
  partitions_[id].push_back(std::move(p));
  stats_.partitions = partitions_.size();
  ++stats_.pieces;
}

// Moves resident pieces out by the policy until `bytes` more fit in the budget: spills them, or
// moves the frames of compressed ones to host memory. A failure throws; the pieces moved before
// it stay moved (and are counted so), the rest resident.
void partition_store::make_room(std::uint64_t bytes, cudaStream_t stream) {
  while (stats_.resident_bytes + bytes > options_.budget_bytes) {
    piece* victim = nullptr;
    for (auto& [id, pieces] : partitions_) {
      for (auto& p : pieces) {
        if (p.where == place::spilled || p.held == 0) continue;
        bool const better = victim == nullptr ||
                            (options_.policy == spill_policy::oldest_first ? p.order < victim->order
                                                                           : p.held > victim->held);
        if (better) victim = &p;
      }
    }
    if (victim == nullptr) break;  // nothing resident left with bytes (the budget holds `bytes`)
    std::uint64_t const held = victim->held;
    if (victim->where == place::compressed) {
      move_piece_to_host(*victim, stream);
      stats_.compressed_bytes -= held;
      stats_.compressed_raw_bytes -= victim->bytes;
    } else {
      spill_piece(*victim, victim->resident, stream);
      victim->resident.columns.clear();
    }
    stats_.resident_bytes -= held;
  }
}

// The rows' columns as frames in `frames_in`, each column's codec chosen once (see the header).
spilled_table partition_store::encode(const table& rows, memory_kind frames_in, cudaStream_t stream) {
  spilled_table out;
  for (std::size_t c = 0; c < rows.columns.size(); ++c) {
    column const& col = rows.columns[c];
    spill_options options = options_.spill;
    options.name = rows.names[c];
    options.frames_in = frames_in;
    auto const key = std::make_pair(c, col.type());
    if (auto const it = chosen_.find(key); it != chosen_.end()) {
      options.chosen_before = it->second.codec;
      options.prepared = it->second.prepared;
    }
    out.columns.push_back(spill(col.view(), stream, options));
    out.names.push_back(rows.names[c]);
    out.logical_types.push_back(col.logical());
    spilled_column const& spilled = out.columns.back();
    if (col.size() == 0) continue;
    // The first choice stays; a host piece's choice gains the preparation of a later device piece.
    auto const [it, first] = chosen_.try_emplace(key, choice{spilled.report().codec, spilled.preparation()});
    if (!first && it->second.prepared == nullptr && spilled.report().codec == it->second.codec) {
      it->second.prepared = spilled.preparation();
    }
  }
  return out;
}

// Spills `rows` as piece p's frames in host memory. The caller drops the rows afterwards; a
// failure leaves both as they were.
void partition_store::spill_piece(piece& p, const table& rows, cudaStream_t stream) {
  auto const start = clock_type::now();
  spilled_table spilled = encode(rows, memory_kind::host, stream);
  auto const enqueued = clock_type::now();
  // The spill's copies read the rows; they must be done before the rows can go.
  if (!rows.columns.empty() && rows.columns.front().memory() == memory_kind::device) {
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  for (auto const& c : spilled.columns) stats_.spilled_frame_bytes += frame_bytes_of(c);
  p.spilled = std::move(spilled);
  p.where = place::spilled;
  stats_.spilled_bytes += p.bytes;
  ++stats_.spills;
  stats_.spill_seconds += seconds_since(start);
  if (log::enabled(log::level::debug)) {
    log::debug("partition_store: spilled a piece of " + std::to_string(p.bytes) + " bytes in " +
               std::to_string(seconds_since(start) * 1e3) + " ms (waiting for its copies " +
               std::to_string(seconds_since(enqueued) * 1e3) + " ms)");
  }
}

// A compressed piece's frames to host memory, by plain copies.
void partition_store::move_piece_to_host(piece& p, cudaStream_t stream) {
  auto const start = clock_type::now();
  move_to_host(p.spilled, stream);
  for (auto const& c : p.spilled.columns) stats_.spilled_frame_bytes += frame_bytes_of(c);
  p.where = place::spilled;
  stats_.spilled_bytes += p.bytes;
  ++stats_.spills;
  stats_.spill_seconds += seconds_since(start);
}

std::vector<table> partition_store::extract(std::uint64_t id, cudaStream_t stream) {
  auto const it = partitions_.find(id);
  if (it == partitions_.end()) {
    ZS_FAIL(error_code::invalid_argument, "partition_store: partition " + std::to_string(id) + " is not in the store");
  }
  // Restore everything first: a bad frame throws before anything leaves the store.
  auto const start = clock_type::now();
  std::vector<table> out;
  for (auto& p : it->second) {
    if (p.where == place::resident) continue;
    out.push_back(restore(p.spilled, stream));
  }
  stats_.restore_seconds += seconds_since(start);
  std::size_t restored = 0;
  std::vector<table> pieces;
  for (auto& p : it->second) {
    switch (p.where) {
      case place::spilled:
        for (auto const& c : p.spilled.columns) stats_.spilled_frame_bytes -= frame_bytes_of(c);
        stats_.spilled_bytes -= p.bytes;
        ++stats_.restores;
        pieces.push_back(std::move(out[restored++]));
        break;
      case place::compressed:
        stats_.resident_bytes -= p.held;
        stats_.compressed_bytes -= p.held;
        stats_.compressed_raw_bytes -= p.bytes;
        pieces.push_back(std::move(out[restored++]));
        break;
      case place::resident:
        stats_.resident_bytes -= p.held;
        pieces.push_back(std::move(p.resident));
        break;
    }
  }
  stats_.pieces -= it->second.size();
  partitions_.erase(it);
  stats_.partitions = partitions_.size();
  return pieces;
}

std::optional<codec_id> partition_store::chosen_codec(std::size_t position, value_type type) const {
  auto const it = chosen_.find({position, type});
  if (it == chosen_.end()) return std::nullopt;
  return it->second.codec;
}

std::vector<std::uint64_t> partition_store::ids() const {
  std::vector<std::uint64_t> out;
  for (auto const& [id, pieces] : partitions_) out.push_back(id);
  return out;
}

}  // namespace zs
