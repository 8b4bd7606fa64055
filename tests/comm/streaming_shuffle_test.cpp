// streaming_shuffle on the CPU path under mpirun: results identical to the bulk shuffle_table of
// the same data under a budget far below the data, partitions outnumbering (and fewer than) the
// ranks, and the failures, local and collective.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "comm_test.hpp"
#include "streaming_shuffle_support.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/comm/streaming_shuffle.hpp"

namespace {

using namespace zs::test::streaming;

zs::table as_is(zs::table t) { return t; }

zs::streaming_shuffle_options tight_budget() {
  zs::streaming_shuffle_options options;
  options.budget_bytes = 3000;  // far below one partition's rows: every exchange spills
  options.batch_bytes = 6000;   // several exchanges while rows are produced
  options.shuffle.round_bytes = 4096;
  return options;
}

TEST(StreamingShuffle, UnderBudgetPressureMatchesTheBulkShuffleTable) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  for (std::uint32_t per_rank : {1u, 3u}) {
    std::uint32_t const partitions = per_rank * static_cast<std::uint32_t>(ranks);
    zs::streaming_shuffle s(comm, names(), types(), partitions, tight_budget());
    auto const mine = rows_of(me);
    stream_rows(comm, s, mine, 97, as_is);
    s.insert_finished();
    EXPECT_GT(s.stats().exchanges, 1u);

    zs::table_shuffle_options bulk_options;
    bulk_options.partitions_per_rank = per_rank;
    std::size_t const keys[] = {0};
    auto const bulk = zs::shuffle_table(comm, table_of(mine), keys, bulk_options);
    auto const bulk_rows = rows_in(bulk.rows);

    auto const owned = s.owned_partitions();
    ASSERT_EQ(owned.size(), per_rank);
    for (std::uint32_t j = 0; j < per_rank; ++j) {
      std::uint32_t const p = owned[j];
      EXPECT_EQ(p, bulk.first_partition + j);
      zs::table got = s.extract(p);
      EXPECT_EQ(got.names, names());
      std::vector<row> const want(bulk_rows.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j]),
                                  bulk_rows.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j + 1]));
      auto const rows = rows_in(got);
      EXPECT_EQ(rows.size(), want.size()) << "partition " << p;
      EXPECT_TRUE(rows == want) << "partition " << p << ": rows differ from shuffle_table's";
      EXPECT_TRUE(rows == expected_partition(p, partitions, ranks)) << "partition " << p;
    }
    auto const& st = s.stats();
    EXPECT_LE(st.store.high_water_bytes, 3000u);
    EXPECT_GT(st.store.spills, 0u) << "the budget should have forced spills";
    EXPECT_EQ(st.store.pieces, 0u);
    EXPECT_EQ(st.buffered_bytes, 0u);
  }
}

TEST(StreamingShuffle, BudgetSmallerThanOneRowStillDeliversEverything) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  auto options = tight_budget();
  options.budget_bytes = 8;  // no piece is ever resident
  options.spill.codec = zs::codec_id::raw;
  zs::streaming_shuffle s(comm, names(), types(), 2 * static_cast<std::uint32_t>(ranks), options);
  stream_rows(comm, s, rows_of(me), 300, as_is);
  s.insert_finished();
  for (std::uint32_t p : s.owned_partitions()) {
    EXPECT_TRUE(rows_in(s.extract(p)) == expected_partition(p, s.partitions(), ranks)) << "partition " << p;
  }
  EXPECT_EQ(s.stats().store.high_water_bytes, 0u);
}

TEST(StreamingShuffle, PartitionsOutnumberRanksUnevenly) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::uint32_t const partitions = 2 * static_cast<std::uint32_t>(ranks) + 1;
  zs::streaming_shuffle s(comm, names(), types(), partitions, tight_budget());
  // Every partition has exactly one owner, in contiguous blocks.
  std::vector<std::uint64_t> owned_counts = comm.allgather(s.owned_partitions().size());
  std::uint64_t total = 0;
  for (auto n : owned_counts) total += n;
  EXPECT_EQ(total, partitions);
  for (std::uint32_t p : s.owned_partitions()) EXPECT_EQ(s.owner(p), me);
  stream_rows(comm, s, rows_of(me), 211, as_is);
  s.insert_finished();
  for (std::uint32_t p : s.owned_partitions()) {
    EXPECT_TRUE(rows_in(s.extract(p)) == expected_partition(p, partitions, ranks)) << "partition " << p;
  }
}

TEST(StreamingShuffle, FewerPartitionsThanRanks) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  zs::streaming_shuffle s(comm, names(), types(), 1, tight_budget());
  EXPECT_EQ(s.owner(0), 0);
  EXPECT_EQ(s.owned_partitions().size(), me == 0 ? 1u : 0u);
  stream_rows(comm, s, rows_of(me), 500, as_is);
  s.insert_finished();
  if (me == 0) {
    EXPECT_TRUE(rows_in(s.extract(0)) == expected_partition(0, 1, ranks));
  }
}

TEST(StreamingShuffle, AnOwnedPartitionWithoutRowsExtractsEmpty) {
  zs::mpi_communicator comm;
  zs::streaming_shuffle s(comm, names(), types(), 4 * static_cast<std::uint32_t>(comm.size()), {});
  s.insert_finished();
  for (std::uint32_t p : s.owned_partitions()) {
    zs::table t = s.extract(p);
    ASSERT_EQ(t.columns.size(), 4u);
    EXPECT_EQ(t.columns[3].type(), zs::value_type::string);
    for (auto const& c : t.columns) EXPECT_EQ(c.size(), 0u);
  }
}

// Column 2 nullable: a row is null where its origin is a multiple of 5 (so the mask follows the row).
zs::table with_nulls(zs::table t) {
  auto const* origin = t.columns[1].view().values<std::int32_t>();
  std::uint64_t const rows = t.columns[2].size();
  std::uint8_t* const mask = t.columns[2].add_null_mask();
  std::fill(mask, mask + zs::null_mask_bytes(rows), std::uint8_t{0});
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (origin[i] % 5 != 0) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  return t;
}

TEST(StreamingShuffle, NullableColumnsKeepTheirMasksAsTheBulkShuffleTableDoes) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::uint32_t const per_rank = 2, partitions = per_rank * static_cast<std::uint32_t>(ranks);
  zs::streaming_shuffle s(comm, names(), types(), partitions, tight_budget());
  auto const mine = rows_of(me);
  stream_rows(comm, s, mine, 113, with_nulls);
  s.insert_finished();
  zs::table_shuffle_options bulk_options;
  bulk_options.partitions_per_rank = per_rank;
  std::size_t const keys[] = {0};
  auto const bulk = zs::shuffle_table(comm, with_nulls(table_of(mine)), keys, bulk_options);
  auto const bulk_valid = bulk.rows.columns[2].validity();
  auto const owned = s.owned_partitions();
  for (std::uint32_t j = 0; j < per_rank; ++j) {
    zs::table got = s.extract(owned[j]);
    EXPECT_TRUE(rows_in(got) == expected_partition(owned[j], partitions, ranks)) << "partition " << owned[j];
    ASSERT_TRUE(got.columns[2].nullable() || got.columns[2].size() == 0);
    std::vector<bool> const want(bulk_valid.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j]),
                                 bulk_valid.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j + 1]));
    EXPECT_EQ(got.columns[2].validity(), want) << "partition " << owned[j];
    EXPECT_FALSE(got.columns[0].nullable());
  }
  EXPECT_GT(s.stats().store.spills, 0u);
}

TEST(StreamingShuffle, LocalMisusesAreClearErrorsAndLoseNothing) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::uint32_t const partitions = static_cast<std::uint32_t>(ranks);
  zs::streaming_shuffle s(comm, names(), types(), partitions, {});
  // Out of range, wrong column count, wrong type: refused, nothing buffered.
  EXPECT_ZS_ERROR(s.insert(partitions, table_of(rows_of(me))), zs::error_code::invalid_argument);
  zs::table short_table = table_of(rows_of(me));
  short_table.columns.pop_back();
  EXPECT_ZS_ERROR(s.insert(0, std::move(short_table)), zs::error_code::invalid_argument);
  zs::table wrong_type = table_of(rows_of(me));
  wrong_type.columns[1] = zs::column::from_values<float>(std::vector<float>(wrong_type.columns[0].size(), 1.0f));
  EXPECT_ZS_ERROR(s.insert(0, std::move(wrong_type)), zs::error_code::invalid_argument);
  EXPECT_EQ(s.stats().buffered_bytes, 0u);
  // Extract before the end, then the real data goes through.
  EXPECT_ZS_ERROR(s.extract(static_cast<std::uint32_t>(me)), zs::error_code::invalid_argument);
  stream_rows(comm, s, rows_of(me), 400, as_is);
  s.insert_finished();
  EXPECT_ZS_ERROR(s.insert(0, table_of(rows_of(me))), zs::error_code::invalid_argument);
  EXPECT_ZS_ERROR(s.extract(partitions + 3), zs::error_code::invalid_argument);
  if (ranks > 1) {
    auto const e = zs::test::thrown_error([&] { s.extract(static_cast<std::uint32_t>((me + 1) % ranks)); });
    zs::test::expect_error(e, zs::error_code::invalid_argument, {"owns it"});
  }
  auto const p = static_cast<std::uint32_t>(me);
  EXPECT_TRUE(rows_in(s.extract(p)) == expected_partition(p, partitions, ranks));
  auto const again = zs::test::thrown_error([&] { s.extract(p); });
  zs::test::expect_error(again, zs::error_code::invalid_argument, {"extracted already"});
}

TEST(StreamingShuffle, RanksDisagreeingOnTypesAllThrowNamingTheRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  auto mine = types();
  if (comm.rank() == comm.size() - 1) mine[0] = zs::value_type::float64;
  auto const e = zs::test::thrown_error([&] { zs::streaming_shuffle s(comm, names(), mine, 4, {}); });
  zs::test::expect_error(e, zs::error_code::invalid_argument,
                         {"failed on rank " + std::to_string(comm.size() - 1), "differs from rank 0"});
}

TEST(StreamingShuffle, RanksDisagreeingOnPartitionsAllThrow) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  std::uint32_t const partitions = comm.rank() == 1 ? 5 : 4;
  auto const e = zs::test::thrown_error([&] { zs::streaming_shuffle s(comm, names(), types(), partitions, {}); });
  zs::test::expect_error(e, zs::error_code::invalid_argument, {"failed on rank 1"});
}

// Exchanges run on a thread of their own (options.overlap, where the communicator allows it)
// or before progress() returns: the same rows either way, and the statistics say which ran.
TEST(StreamingShuffle, ExchangesInTheBackgroundOrNotGiveTheSameRows) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::uint32_t const partitions = 2 * static_cast<std::uint32_t>(ranks);
  for (bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    auto options = tight_budget();
    options.overlap = overlap;
    zs::streaming_shuffle s(comm, names(), types(), partitions, options);
    stream_rows(comm, s, rows_of(me), 61, as_is);
    s.insert_finished();
    auto const& st = s.stats();
    EXPECT_GT(st.exchanges, 2u);
    if (overlap && comm.callable_from_any_thread()) {
      EXPECT_GT(st.background_exchanges, 0u);
    } else {
      EXPECT_EQ(st.background_exchanges, 0u);
    }
    for (std::uint32_t p : s.owned_partitions()) {
      EXPECT_TRUE(rows_in(s.extract(p)) == expected_partition(p, partitions, ranks)) << "partition " << p;
    }
  }
}

// An exchange that fails on its own thread before the data moved (here: in zs::shuffle's plan on
// the last rank) is every rank's error at the next collective call, and its batch goes back to
// the buffer: the next exchange delivers every row.
TEST(StreamingShuffle, ABackgroundExchangeFailureSurfacesAtTheNextCallAndKeepsItsRows) {
  zs::mpi_communicator comm;
  if (!comm.callable_from_any_thread()) GTEST_SKIP() << "this MPI does not allow calls from another thread";
  int const me = comm.rank(), ranks = comm.size(), last = ranks - 1;
  std::uint32_t const partitions = static_cast<std::uint32_t>(ranks);
  auto options = tight_budget();
  options.batch_bytes = 1;  // every rank's first piece starts an exchange
  zs::streaming_shuffle s(comm, names(), types(), partitions, options);
  auto const mine = rows_of(me);
  std::size_t const half = mine.size() / 2;
  auto const insert_rows = [&](std::size_t first, std::size_t end) {
    std::vector<std::vector<row>> by_partition(partitions);
    for (std::size_t i = first; i < end; ++i) by_partition[partition_of(mine[i], partitions)].push_back(mine[i]);
    for (std::uint32_t p = 0; p < partitions; ++p) {
      if (!by_partition[p].empty()) s.insert(p, table_of(by_partition[p]));
    }
  };
  insert_rows(0, half);
  if (me == last) setenv("ZS_FAULT", "shuffle.plan=error", 1);
  EXPECT_TRUE(s.progress()) << "an exchange starts and runs on";
  insert_rows(half, mine.size());  // while it runs
  auto const e = zs::test::thrown_error([&] { s.flush(); });
  if (me == last) unsetenv("ZS_FAULT");
  zs::test::expect_error(e, zs::error_code::internal, {"rank " + std::to_string(last)});
  EXPECT_EQ(s.stats().exchanges, 0u);
  EXPECT_GT(s.stats().buffered_bytes, 0u) << "the failed batch is back in the buffer";
  s.insert_finished();
  for (std::uint32_t p : s.owned_partitions()) {
    EXPECT_TRUE(rows_in(s.extract(p)) == expected_partition(p, partitions, ranks)) << "partition " << p;
  }
}

TEST(StreamingShuffle, NoHostMemoryForASpillIsEveryRanksError) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), last = comm.size() - 1;
  auto options = tight_budget();
  options.spill.codec = zs::codec_id::raw;
  zs::streaming_shuffle s(comm, names(), types(), static_cast<std::uint32_t>(comm.size()), options);
  for (auto& piece : {rows_of(me)}) {
    for (std::uint32_t p = 0; p < s.partitions(); ++p) {
      std::vector<row> part;
      for (auto const& r : piece) {
        if (partition_of(r, s.partitions()) == p) part.push_back(r);
      }
      if (!part.empty()) s.insert(p, table_of(part));
    }
  }
  if (me == last) setenv("ZS_FAULT", "spill.host_allocation=oom", 1);
  auto const e = zs::test::thrown_error([&] { s.flush(); });
  if (me == last) unsetenv("ZS_FAULT");
  zs::test::expect_error(e, zs::error_code::out_of_memory,
                         {"keeping the received rows failed on rank " + std::to_string(last)});
  // Received rows may be lost on that rank: the shuffle says so rather than returning short rows.
  EXPECT_ZS_ERROR(s.flush(), zs::error_code::invalid_argument);
}

}  // namespace
