// Null masks for the shuffle tests: every rank can rebuild which rows of any rank's columns are
// null (shuffle_support.hpp's columns, with masks of several kinds), so each rank checks the
// null rows it received exactly, and what their validity cost on the wire.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shuffle_support.hpp"
#include "zs/column.hpp"
#include "zs/comm/shuffle.hpp"

namespace zs::test {

/// The kind of null mask rank `src` gives column c of columns_of.
enum class null_kind { none, random, all_valid, all_null, odd_ranks_only };

inline null_kind null_kind_of(int src, std::size_t c) {
  switch (c % 5) {
    case 0: return null_kind::random;
    case 1: return null_kind::all_valid;
    case 2: return src % 2 == 1 ? null_kind::random : null_kind::none;  // nullable on odd ranks only
    case 3: return null_kind::all_null;
    default: return null_kind::none;
  }
}

/// Whether row i of rank src's column c holds a value.
inline bool row_valid(int src, std::size_t c, std::uint64_t i) {
  switch (null_kind_of(src, c)) {
    case null_kind::random: return noise(static_cast<std::uint64_t>(src) + 77, c, i) % 3 != 0;
    case null_kind::all_null: return false;
    default: return true;
  }
}

/// Gives rank src's host columns their null masks (none where null_kind_of says none).
inline void add_null_masks(std::vector<column>& columns, int src) {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (null_kind_of(src, c) == null_kind::none) continue;
    std::uint8_t* const mask = columns[c].add_null_mask();
    std::fill(mask, mask + null_mask_bytes(columns[c].size()), std::uint8_t{0});
    for (std::uint64_t i = 0; i < columns[c].size(); ++i) {
      if (row_valid(src, c, i)) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
    }
  }
}

/// Whether column c is nullable on some rank of `ranks`: then it arrives nullable everywhere.
inline bool nullable_somewhere(std::size_t c, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    if (null_kind_of(r, c) != null_kind::none) return true;
  }
  return false;
}

/// Whether column c's rows are all valid, or all null, on every rank of `ranks` (a rank without
/// a mask counts as all valid): then no validity travels, and each receiver writes the mask.
inline bool uniform_somewhere_nullable(std::size_t c, int ranks) {
  bool all_valid = true, all_null = true;
  for (int r = 0; r < ranks; ++r) {
    auto const kind = null_kind_of(r, c);
    all_valid = all_valid && (kind == null_kind::none || kind == null_kind::all_valid);
    all_null = all_null && kind == null_kind::all_null;
  }
  return nullable_somewhere(c, ranks) && (all_valid || all_null);
}

/// Checks the null masks of what rank `me` received (host columns) when every rank s sent its
/// columns_of(s, scale) with add_null_masks, partitioned by partition_of.
inline void expect_received_nulls(const std::vector<column>& got, int me, int ranks, std::uint64_t scale,
                                  const std::string& what) {
  ASSERT_EQ(got.size(), all_types().size()) << what;
  for (std::size_t c = 0; c < got.size(); ++c) {
    std::string const where = what + ", column " + std::to_string(c) + " (" + std::string(to_string(got[c].type())) + ")";
    ASSERT_EQ(got[c].nullable(), nullable_somewhere(c, ranks)) << where;
    std::vector<bool> expected;
    for (int s = 0; s < ranks; ++s) {
      std::uint64_t const rows = rows_of(s, c, scale);
      auto const off = partition_of(s, c, rows, ranks);
      for (std::uint64_t i = off[me]; i < off[me + 1]; ++i) expected.push_back(row_valid(s, c, i));
    }
    EXPECT_EQ(got[c].validity(), expected) << where << ": null rows differ";
  }
}

/// Checks the validity's share of this rank's stats: a byte per row sent of every column with
/// both valid and null rows, included in the column's totals; nothing for columns without masks
/// or with masks of one value everywhere (uniform_somewhere_nullable); on the wire, raw where
/// `raw_columns` says so, otherwise a bit a row and the frames' headers (the bitmap codec).
inline void expect_null_stats(const shuffle_stats& stats, const std::vector<column>& sent, int ranks,
                              const std::vector<bool>& raw_columns, const std::string& what) {
  ASSERT_EQ(stats.column_null_raw_bytes.size(), sent.size()) << what;
  ASSERT_EQ(stats.column_null_wire_bytes.size(), sent.size()) << what;
  std::uint64_t const frames = static_cast<std::uint64_t>(ranks) * stats.rounds;  // per column
  for (std::size_t c = 0; c < sent.size(); ++c) {
    std::string const where = what + ", column " + std::to_string(c);
    if (!nullable_somewhere(c, ranks) || uniform_somewhere_nullable(c, ranks)) {
      EXPECT_EQ(stats.column_null_raw_bytes[c], 0u) << where << ": no validity sent";
      EXPECT_EQ(stats.column_null_wire_bytes[c], 0u) << where << ": no validity sent";
      continue;
    }
    std::uint64_t const rows = sent[c].size();
    EXPECT_EQ(stats.column_null_raw_bytes[c], rows) << where << ": a byte per row";
    EXPECT_GE(stats.column_raw_bytes[c], rows) << where << ": counted in the column's raw bytes";
    EXPECT_GE(stats.column_wire_bytes[c], stats.column_null_wire_bytes[c]) << where;
    if (raw_columns[c]) {
      EXPECT_EQ(stats.column_null_wire_bytes[c], rows) << where << ": sent raw with its column";
      continue;
    }
    // Frame headers and alignment: at most 128 bytes a frame (FORMAT.md: a 64-byte header).
    std::uint64_t const overhead = 128 * frames;
    EXPECT_LE(stats.column_null_wire_bytes[c], overhead + (rows + 7) / 8 + 8 * frames)
        << where << ": a bit a row (" << rows << " rows)";
  }
}

}  // namespace zs::test
