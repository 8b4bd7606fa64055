// The partition store on the CPU path (host tables, CPU reference codecs): the budget holds at
// every step, pieces come back exactly and in order whichever tier they were in, each policy
// picks its victims, and failures lose nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "zs/error.hpp"
#include "zs/partition_store.hpp"
#include "zs_test.hpp"

namespace {

// Piece `k` of a partition: `rows` rows of an int64 column (compressible runs) and a string one.
zs::table piece_of(std::uint64_t k, std::uint64_t rows) {
  std::vector<std::int64_t> values(rows);
  std::vector<std::string> words(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    values[i] = static_cast<std::int64_t>(k * 1000 + i / 16);
    words[i] = i % 7 == 0 ? "" : "piece " + std::to_string(k) + " row " + std::to_string(i);
  }
  zs::table t;
  t.names = {"n", "s"};
  t.columns.push_back(zs::column::from_values<std::int64_t>(values));
  t.columns.push_back(zs::column::from_strings(words));
  return t;
}

void expect_piece(const zs::table& got, std::uint64_t k, std::uint64_t rows, const std::string& what) {
  auto const want = piece_of(k, rows);
  ASSERT_EQ(got.columns.size(), 2u) << what;
  EXPECT_EQ(got.names, want.names) << what;
  ASSERT_EQ(got.columns[0].size(), rows) << what;
  EXPECT_EQ(got.columns[0].memory(), zs::memory_kind::host) << what;
  auto const* a = got.columns[0].view().values<std::int64_t>();
  auto const* b = want.columns[0].view().values<std::int64_t>();
  EXPECT_TRUE(std::equal(a, a + rows, b)) << what;
  EXPECT_EQ(got.columns[1].strings(), want.columns[1].strings()) << what;
}

TEST(PartitionStore, TheBudgetHoldsAndPiecesComeBackInOrder) {
  std::uint64_t const rows = 5000, bytes = zs::partition_store::bytes_of(piece_of(0, rows));
  for (auto policy : {zs::spill_policy::oldest_first, zs::spill_policy::largest_first}) {
    zs::partition_store store({.budget_bytes = 3 * bytes + bytes / 2, .policy = policy});
    for (std::uint64_t k = 0; k < 12; ++k) {
      store.insert(k % 4, piece_of(k, rows), nullptr);
      EXPECT_LE(store.stats().resident_bytes, 3 * bytes + bytes / 2);
    }
    auto const s = store.stats();
    EXPECT_EQ(s.partitions, 4u);
    EXPECT_EQ(s.pieces, 12u);
    EXPECT_EQ(s.spills, 9u) << "three pieces fit, the other nine were spilled";
    EXPECT_LE(s.high_water_bytes, 3 * bytes + bytes / 2);
    EXPECT_GE(s.high_water_bytes, 3 * bytes);
    std::uint64_t inserted = 0;
    for (std::uint64_t k = 0; k < 12; ++k) inserted += zs::partition_store::bytes_of(piece_of(k, rows));
    EXPECT_EQ(s.spilled_bytes + s.resident_bytes, inserted);
    EXPECT_GT(s.spilled_frame_bytes, 0u);
    for (std::uint64_t id = 0; id < 4; ++id) {
      auto const pieces = store.extract(id, nullptr);
      ASSERT_EQ(pieces.size(), 3u);
      for (std::uint64_t j = 0; j < 3; ++j) expect_piece(pieces[j], id + 4 * j, rows, "piece " + std::to_string(id + 4 * j));
    }
    EXPECT_EQ(store.stats().resident_bytes, 0u);
    EXPECT_EQ(store.stats().spilled_bytes, 0u);
    EXPECT_EQ(store.stats().spilled_frame_bytes, 0u);
    EXPECT_EQ(store.stats().restores, 9u);
    EXPECT_TRUE(store.ids().empty());
  }
}

TEST(PartitionStore, EachPolicyPicksItsVictim) {
  std::uint64_t const small = zs::partition_store::bytes_of(piece_of(0, 1000));
  std::uint64_t const large = zs::partition_store::bytes_of(piece_of(1, 4000));
  for (auto policy : {zs::spill_policy::oldest_first, zs::spill_policy::largest_first}) {
    zs::partition_store store({.budget_bytes = small + large + small / 2, .policy = policy});
    store.insert(0, piece_of(0, 1000), nullptr);  // oldest, small
    store.insert(1, piece_of(1, 4000), nullptr);  // large
    store.insert(2, piece_of(2, 1000), nullptr);  // needs room: one of the two goes
    EXPECT_EQ(store.stats().spills, 1u);
    // oldest_first spills piece 0, which frees enough: {large, small} stay; largest_first
    // spills the large one: {small, small} stay.
    EXPECT_EQ(store.stats().resident_bytes,
              policy == zs::spill_policy::oldest_first ? large + small : small + small);
    expect_piece(store.extract(1, nullptr).at(0), 1, 4000, "the large piece");
    expect_piece(store.extract(0, nullptr).at(0), 0, 1000, "the oldest piece");
  }
}

TEST(PartitionStore, APieceLargerThanTheBudgetIsSpilledAtOnce) {
  zs::partition_store store({.budget_bytes = 100});
  store.insert(9, piece_of(3, 2000), nullptr);
  EXPECT_EQ(store.stats().resident_bytes, 0u);
  EXPECT_EQ(store.stats().high_water_bytes, 0u);
  EXPECT_EQ(store.stats().spills, 1u);
  expect_piece(store.extract(9, nullptr).at(0), 3, 2000, "spilled at once");
}

TEST(PartitionStore, NullMasksCountAgainstTheBudgetAndComeBackFromEitherTier) {
  auto nullable_piece = [](std::uint64_t k, std::uint64_t rows) {
    zs::table t = piece_of(k, rows);
    std::uint8_t* const mask = t.columns[0].add_null_mask();
    for (std::uint64_t b = 0; b < zs::null_mask_bytes(rows); ++b) mask[b] = static_cast<std::uint8_t>(0x5a ^ k);
    return t;
  };
  zs::table const probe = nullable_piece(1, 1000);
  std::uint64_t const bytes = zs::partition_store::bytes_of(probe);
  EXPECT_EQ(bytes, zs::partition_store::bytes_of(piece_of(1, 1000)) + zs::null_mask_bytes(1000));
  // Room for one piece and its mask, not two: the second insert spills the first.
  zs::partition_store store({.budget_bytes = bytes + bytes / 2});
  store.insert(1, nullable_piece(1, 1000), nullptr);
  store.insert(2, nullable_piece(2, 1000), nullptr);
  EXPECT_EQ(store.stats().spills, 1u);
  EXPECT_LE(store.stats().high_water_bytes, bytes + bytes / 2);
  EXPECT_GT(store.stats().spilled_frame_bytes, zs::null_mask_bytes(1000));
  for (std::uint64_t k : {1u, 2u}) {
    auto const got = store.extract(k, nullptr);
    ASSERT_EQ(got.size(), 1u);
    expect_piece(got[0], k, 1000, "piece " + std::to_string(k));
    EXPECT_FALSE(got[0].columns[1].nullable());
    ASSERT_TRUE(got[0].columns[0].nullable());
    EXPECT_EQ(got[0].columns[0].validity(), nullable_piece(k, 1000).columns[0].validity());
  }
  EXPECT_EQ(store.stats().spilled_frame_bytes, 0u);
}

TEST(PartitionStore, BadRequestsAreClearErrorsAndLoseNothing) {
  zs::partition_store store({.budget_bytes = 1 << 20});
  store.insert(1, piece_of(1, 100), nullptr);
  auto const unknown = zs::test::thrown_error([&] { store.extract(2, nullptr); });
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(unknown->what()).find("partition 2 is not in the store"), std::string::npos);
  zs::table uneven = piece_of(2, 100);
  uneven.columns[1] = zs::column::from_strings(std::vector<std::string>{"one"});
  EXPECT_EQ(zs::test::thrown_error([&] { store.insert(3, std::move(uneven), nullptr); })->code(),
            zs::error_code::invalid_argument);
  EXPECT_EQ(store.ids(), (std::vector<std::uint64_t>{1}));
  expect_piece(store.extract(1, nullptr).at(0), 1, 100, "kept");
}

// A spill that cannot get host memory: the insert that needed room throws, and every piece is
// still there, resident.
TEST(PartitionStore, AFailedSpillKeepsEveryPiece) {
  std::uint64_t const bytes = zs::partition_store::bytes_of(piece_of(0, 1000));
  zs::partition_store store({.budget_bytes = bytes + bytes / 2});
  store.insert(0, piece_of(0, 1000), nullptr);
  zs::table second = piece_of(1, 1000);
  ::setenv("ZS_FAULT", "spill.host_allocation=oom", 1);
  auto const e = zs::test::thrown_error([&] { store.insert(1, std::move(second), nullptr); });
  ::unsetenv("ZS_FAULT");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::out_of_memory);
  expect_piece(second, 1, 1000, "the piece that could not go in is still the caller's");
  EXPECT_EQ(store.stats().resident_bytes, bytes);
  EXPECT_EQ(store.stats().spills, 0u);
  expect_piece(store.extract(0, nullptr).at(0), 0, 1000, "still resident");
}

}  // namespace
