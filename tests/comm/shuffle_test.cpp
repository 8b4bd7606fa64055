// The compressed shuffle through the CPU reference codecs, under mpirun with 1..4 ranks.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "comm_test.hpp"
#include "fixture_codec.hpp"
#include "null_shuffle_support.hpp"
#include "shuffle_support.hpp"
#include "tapped_communicator.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/io.hpp"
#include "zs/null_mask.hpp"
#include "zs_test.hpp"

namespace {

using namespace std::chrono_literals;
using zs::test::expect_error;
using zs::test::thrown_error;

struct local_columns {
  std::vector<zs::column> columns;
  std::vector<std::vector<std::uint64_t>> offsets;
  std::vector<zs::shuffle_column> inputs() const {
    std::vector<zs::shuffle_column> in;
    for (std::size_t c = 0; c < columns.size(); ++c) in.push_back({columns[c].view(), offsets[c]});
    return in;
  }
};

local_columns make_local(int me, int ranks, std::uint64_t scale) {
  local_columns l{zs::test::columns_of(me, scale), {}};
  for (std::size_t c = 0; c < l.columns.size(); ++c) {
    l.offsets.push_back(zs::test::partition_of(me, c, l.columns[c].size(), ranks));
  }
  return l;
}

// Every column compressed on every link: what the protocol tests below exercise, whatever a
// planner would choose on this machine.
zs::shuffle_options compress_everything() {
  zs::shuffle_options options;
  options.plan = zs::shuffle_options::planning::compress;
  return options;
}

zs::shuffle_stats check_all_types(std::uint64_t scale, std::uint64_t round_bytes, std::uint64_t min_rounds,
                                  zs::shuffle_options options = {}) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), scale);
  options.round_bytes = round_bytes;
  zs::shuffle_stats stats;
  auto const out = zs::shuffle(comm, local.inputs(), options, &stats);
  auto const expected = zs::test::expected_for(comm.rank(), comm.size(), scale);
  zs::test::expect_columns(out, expected, "shuffle");
  EXPECT_GE(stats.rounds, min_rounds);
  EXPECT_GT(stats.wire_bytes, 0u);
  return stats;
}

TEST(ShuffleHost, EveryTypeWithUnevenAndEmptyPartitions) {
  auto const stats = check_all_types(300, std::uint64_t{256} << 20, 1);
  ASSERT_TRUE(stats.plan.has_value()) << "the planner decides by default";
  EXPECT_GT(stats.plan->predicted.total, 0.0);
}

TEST(ShuffleHost, ManySmallRoundsGiveTheSameRows) { check_all_types(300, 4096, 8); }

TEST(ShuffleHost, EveryColumnCompressedOnEveryLink) {
  auto const stats = check_all_types(300, 4096, 8, compress_everything());
  EXPECT_FALSE(stats.plan.has_value()) << "nothing was left to the planner";
}

// Made-up links: the local copy is free and every other link crawls, so each column goes raw to
// this rank and compressed to the others, and string and fixed-width partitions of both kinds
// meet in the same rounds.
TEST(ShuffleHost, PlannedRawToItselfAndCompressedToOthers) {
  zs::mpi_communicator comm;
  zs::shuffle_options options;
  options.link_bandwidth.assign(static_cast<std::size_t>(comm.size()), 1e3);
  options.link_bandwidth[static_cast<std::size_t>(comm.rank())] = 1e15;
  auto const stats = check_all_types(300, 4096, 8, options);
  ASSERT_TRUE(stats.plan.has_value());
  auto const& plan = *stats.plan;
  for (std::size_t c = 0; c < plan.inputs.columns.size(); ++c) {
    auto const& col = plan.inputs.columns[c];
    EXPECT_EQ(plan.at(c, comm.rank()), zs::carriage::raw) << col.name;
    for (int d = 0; d < comm.size(); ++d) {
      if (d != comm.rank() && col.bytes[static_cast<std::size_t>(d)] > 4096 && col.ratio > 1.5) {
        EXPECT_EQ(plan.at(c, d), zs::carriage::compressed) << col.name << " to rank " << d << "\n" << plan.explain();
      }
    }
  }
}

// Links so fast that no codec could pay even if it compressed to nothing: the plan is all raw,
// and no column's ratio was estimated (an estimate encodes a sample on every call). With slow
// links the same columns are estimated.
TEST(ShuffleHost, NoEstimateWhereNoRatioCouldPay) {
  zs::mpi_communicator comm;
  zs::shuffle_options fast, slow;
  fast.link_bandwidth.assign(static_cast<std::size_t>(comm.size()), 1e15);
  slow.link_bandwidth.assign(static_cast<std::size_t>(comm.size()), 1e3);
  auto const fast_plan = *check_all_types(300, 4096, 8, fast).plan;
  auto const slow_plan = *check_all_types(300, 4096, 8, slow).plan;
  bool estimated = false;
  for (std::size_t c = 0; c < fast_plan.inputs.columns.size(); ++c) {
    EXPECT_EQ(fast_plan.inputs.columns[c].ratio, 1.0) << fast_plan.inputs.columns[c].name;
    for (int d = 0; d < comm.size(); ++d) EXPECT_EQ(fast_plan.at(c, d), zs::carriage::raw);
    estimated = estimated || slow_plan.inputs.columns[c].ratio != 1.0;
  }
  EXPECT_TRUE(estimated) << slow_plan.explain();
}

// The caller forces some columns: raw everywhere, or a codec everywhere; the rest is planned.
TEST(ShuffleHost, ColumnsForcedRawOrCompressedKeepTheirChoice) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 300);
  zs::shuffle_options options;
  options.column_codecs.resize(local.columns.size());
  options.column_codecs[0] = zs::codec_id::raw;
  options.column_codecs[1] = zs::default_codec(local.columns[1].type()).id();
  zs::shuffle_stats stats;
  auto const out = zs::shuffle(comm, local.inputs(), options, &stats);
  zs::test::expect_columns(out, zs::test::expected_for(comm.rank(), comm.size(), 300), "forced columns");
  ASSERT_TRUE(stats.plan.has_value());
  for (int d = 0; d < comm.size(); ++d) {
    EXPECT_EQ(stats.plan->at(0, d), zs::carriage::raw);
    EXPECT_EQ(stats.plan->at(1, d), zs::carriage::compressed);
  }
  EXPECT_EQ(stats.column_wire_bytes[0], stats.column_raw_bytes[0]) << "a raw fixed-width column travels as it is";
  EXPECT_LT(stats.plan->predicted.total, 60.0) << "the forced codec's speeds are measured for the prediction\n"
                                               << stats.plan->explain();
  EXPECT_NE(stats.plan->explain().find("raw (forced)"), std::string::npos);
}

TEST(ShuffleHost, ColumnCodecsOfTheWrongLengthAreRefused) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 10);
  zs::shuffle_options options;
  options.column_codecs.resize(1);
  EXPECT_ZS_ERROR(zs::shuffle(comm, local.inputs(), options), zs::error_code::invalid_argument);
}

TEST(ShuffleHost, NoColumnsAndEmptyColumns) {
  zs::mpi_communicator comm;
  EXPECT_TRUE(zs::shuffle(comm, {}, {}).empty());
  auto const empty_ints = zs::column::from_values<std::int64_t>(std::vector<std::int64_t>{});
  auto const empty_strings = zs::column::from_strings(std::vector<std::string>{});
  std::vector<std::uint64_t> const zeros(comm.size() + 1, 0);
  std::vector<zs::shuffle_column> in{{empty_ints.view(), zeros}, {empty_strings.view(), zeros}};
  auto const out = zs::shuffle(comm, in, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].size(), 0u);
  EXPECT_EQ(out[1].size(), 0u);
  EXPECT_EQ(out[1].view().offsets[0], 0);
}

TEST(ShuffleHost, RawCodecForcedOnEveryColumn) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 50);
  zs::shuffle_options options;
  options.codec = zs::codec_id::raw;
  auto const out = zs::shuffle(comm, local.inputs(), options);
  auto const expected = zs::test::expected_for(comm.rank(), comm.size(), 50);
  for (std::size_t c = 0; c < out.size(); ++c) zs::test::expect_column(out[c], expected[c], std::to_string(c));
}

// A codec with column parameters (the framework's fixture, which picks bitpack or raw per
// column from a sample): prepared once per column and round, carried by every frame.
TEST(ShuffleHost, CodecWithColumnParametersOnEveryColumn) {
  zs::test::register_fixture_codec();
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 300);
  zs::shuffle_options options;
  options.codec = zs::test::fixture_codec_id;
  for (std::uint64_t round_bytes : {std::uint64_t{256} << 20, std::uint64_t{4096}}) {
    options.round_bytes = round_bytes;
    zs::shuffle_stats stats;
    auto const out = zs::shuffle(comm, local.inputs(), options, &stats);
    zs::test::expect_columns(out, zs::test::expected_for(comm.rank(), comm.size(), 300),
                             "rounds " + std::to_string(stats.rounds));
  }
}

// Rank s sends its s-th slice of a real column, cut into one contiguous range per destination.
TEST(ShuffleHost, RealColumnsArriveIntact) {
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  for (const char* file : {"etopo5_elev_m.i32", "deb_maintainers.txt", "airport_lat.f64"}) {
    auto const whole = zs::test::data_column(file);
    auto cut = [&](int s) {
      auto [b, e] = zs::test::share_of(whole.size(), s, ranks);
      std::vector<std::uint64_t> off(ranks + 1);
      for (int d = 0; d <= ranks; ++d) off[d] = (e - b) * d / ranks;
      return off;
    };
    auto const [b, e] = zs::test::share_of(whole.size(), me, ranks);
    auto const off = cut(me);
    std::vector<zs::shuffle_column> in{{zs::test::slice(whole.view(), b, e), off}};
    zs::test::expected_column expected{whole.type(), {}, {}};
    for (int s = 0; s < ranks; ++s) {
      auto const o = cut(s);
      std::uint64_t const base = zs::test::share_of(whole.size(), s, ranks).first;
      zs::test::append_rows(expected, whole, base + o[me], base + o[me + 1]);
    }
    for (auto options : {zs::shuffle_options{}, compress_everything()}) {
      options.round_bytes = 1 << 20;
      zs::shuffle_stats stats;
      auto const out = zs::shuffle(comm, in, options, &stats);
      zs::test::expect_column(out[0], expected, file);
      // 2,247 distinct maintainers in 63,440 rows: every rank's share repeats.
      if (options.plan == zs::shuffle_options::planning::compress && std::string_view(file) == "deb_maintainers.txt") {
        EXPECT_EQ(stats.column_codecs.at(0), zs::codec_id::fsst_dict) << file;
      }
    }
  }
}

// Each sender chooses its string codec from its own rows, so one column arrives as fsst frames
// from some ranks and fsst_dict frames from others; a codec named by the caller is kept.
TEST(ShuffleHost, EachSenderTakesTheDictionaryWhereItsStringsRepeat) {
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  constexpr std::uint64_t rows = 6000;
  auto const expected = zs::test::expected_repeating_or_distinct(me, ranks, rows);
  auto const mine = zs::test::repeating_or_distinct_strings(me, rows);
  auto const cut = zs::test::even_cut(rows, ranks);
  std::vector<zs::shuffle_column> const in{{mine.view(), cut}};
  for (bool named : {false, true}) {
    zs::shuffle_options options = compress_everything();
    options.round_bytes = 64 << 10;
    if (named) options.column_codecs = {zs::codec_id::fsst};
    zs::shuffle_stats stats;
    auto const out = zs::shuffle(comm, in, options, &stats);
    zs::test::expect_column(out[0], expected, named ? "fsst named" : "fsst or fsst_dict");
    ASSERT_EQ(stats.column_codecs.size(), 1u);
    auto const wanted = !named && me % 2 == 0 ? zs::codec_id::fsst_dict : zs::codec_id::fsst;
    EXPECT_EQ(stats.column_codecs[0], wanted) << "rank " << me << (named ? ", fsst named" : "");
    EXPECT_GE(stats.rounds, 2u);
  }
}

// An integer column left to the default takes dict (here bitpack_ext's patched frames inside it)
// where the planner predicts it shorter:
// over slow links, from the ranks whose rows it shrinks, while the others send bitpack frames
// of the same column; a codec named by the caller is kept, and links fast enough to send raw
// need neither.
TEST(ShuffleHost, EachSenderTakesTheExtendedSchemesWhereThePlannerPredictsThemShorter) {
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  constexpr std::uint64_t rows = 40000;
  auto const mine = zs::test::outlier_or_plain_ints(me, rows);
  auto const expected = zs::test::expected_outlier_or_plain(me, ranks, rows);
  auto const cut = zs::test::even_cut(rows, ranks);
  std::vector<zs::shuffle_column> const in{{mine.view(), cut}};
  for (bool named : {false, true}) {
    zs::shuffle_options options;
    options.round_bytes = 64 << 10;
    options.link_bandwidth.assign(static_cast<std::size_t>(ranks), 1e3);
    if (named) options.column_codecs = {zs::codec_id::bitpack_for};
    zs::shuffle_stats stats;
    auto const out = zs::shuffle(comm, in, options, &stats);
    zs::test::expect_column(out[0], expected, named ? "bitpack named" : "bitpack or dict");
    ASSERT_EQ(stats.column_codecs.size(), 1u);
    auto const wanted = !named && me % 2 == 0 ? zs::codec_id::dict : zs::codec_id::bitpack_for;
    EXPECT_EQ(stats.column_codecs[0], wanted) << "rank " << me << (named ? ", bitpack named" : "") << "\n"
                                               << (stats.plan ? stats.plan->explain() : "no plan");
    // A named codec compresses on every link: nothing is left to the planner.
    ASSERT_EQ(stats.plan.has_value(), !named);
    if (!named) EXPECT_EQ(stats.plan->inputs.columns[0].codec, me % 2 != 0 ? "bitpack" : "dict");
  }
  zs::shuffle_options fast;
  fast.link_bandwidth.assign(static_cast<std::size_t>(ranks), 1e15);
  zs::shuffle_stats stats;
  zs::test::expect_column(zs::shuffle(comm, in, fast, &stats)[0], expected, "fast links");
  EXPECT_EQ(stats.column_codecs.at(0), zs::codec_id::raw) << "rank " << me;
}

TEST(ShuffleHost, BadRowOffsetsOnOneRankFailEveryRank) {
  zs::mpi_communicator comm;
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1, 2, 3, 4});
  std::vector<std::uint64_t> off(comm.size() + 1, 0);
  off.back() = comm.rank() == 0 ? 5 : 4;  // rank 0 claims a row it does not have
  std::vector<zs::shuffle_column> in{{ints.view(), off}};
  EXPECT_ZS_ERROR(zs::shuffle(comm, in, {}), zs::error_code::invalid_argument);
  // The communicator is still usable: now every rank sends its four rows to the last rank.
  off.back() = 4;
  auto const out = zs::shuffle(comm, in, {});
  bool const last = comm.rank() == comm.size() - 1;
  EXPECT_EQ(out[0].size(), last ? 4u * static_cast<unsigned>(comm.size()) : 0u);
}

TEST(ShuffleHost, RanksPassingDifferentTypesFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1});
  auto const floats = zs::column::from_values<float>(std::vector<float>{1.0f});
  std::vector<std::uint64_t> off(comm.size() + 1, 1);
  off[0] = 0;
  std::vector<zs::shuffle_column> in{{comm.rank() == 1 ? floats.view() : ints.view(), off}};
  EXPECT_ZS_ERROR(zs::shuffle(comm, in, {}), zs::error_code::invalid_argument);
}

// A frame damaged on its way to one rank (in a middle round) fails the shuffle on every rank,
// and the communicator delivers every row once the link is healthy again.
TEST(ShuffleHost, FrameDamagedInTransitOnOneRankFailsEveryRank) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  zs::test::tapped_communicator comm(mpi, victim);
  auto const local = make_local(comm.rank(), comm.size(), 300);
  zs::shuffle_options options;
  options.round_bytes = 4096;  // many rounds: the damage lands in the first, the others still run
  EXPECT_ZS_ERROR(zs::shuffle(comm, local.inputs(), options), zs::error_code::corrupt_frame);
  if (comm.rank() == victim) {
    EXPECT_EQ(comm.damaged(), 1);
  }
  comm.stop();
  auto const out = zs::shuffle(comm, local.inputs(), options);
  zs::test::expect_columns(out, zs::test::expected_for(comm.rank(), comm.size(), 300), "after the damage");
}

// ---------------------------------------------------------------------------------------------
// Failures on one rank reach every rank, named (issue: a failure on one rank alone used to throw
// there only and leave the others waiting forever).

// The last rank fails; with one rank, that is rank 0 itself.
int culprit_of(const zs::communicator& comm) { return comm.size() - 1; }

TEST(ShuffleFailures, RoundBytesZeroOnOneRankFailsEveryRankNamingIt) {
  zs::mpi_communicator comm;
  int const culprit = culprit_of(comm);
  auto const local = make_local(comm.rank(), comm.size(), 20);
  zs::shuffle_options options;
  if (comm.rank() == culprit) options.round_bytes = 0;
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), options); }), zs::error_code::invalid_argument,
               {"checking the arguments failed on rank " + std::to_string(culprit), "round_bytes is 0"});
  // Nothing moved, and the communicator is still usable.
  options.round_bytes = 1 << 20;
  zs::test::expect_columns(zs::shuffle(comm, local.inputs(), options),
                           zs::test::expected_for(comm.rank(), comm.size(), 20), "after the error");
}

TEST(ShuffleFailures, RanksPassingDifferentRoundBytesFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const local = make_local(comm.rank(), comm.size(), 20);
  zs::shuffle_options options;
  options.round_bytes = comm.rank() == 1 ? 4096 : 65536;
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), options); }), zs::error_code::invalid_argument,
               {"the ranks pass different columns or options", "rank 0 passes", "round_bytes 65536", "rank 1 passes",
                "round_bytes 4096"});
}

TEST(ShuffleFailures, RanksPassingDifferentCodecsFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const ints = zs::column::from_values<std::int64_t>(std::vector<std::int64_t>{1, 2, 3});
  std::vector<std::uint64_t> off(comm.size() + 1, 3);
  off[0] = 0;
  std::vector<zs::shuffle_column> in{{ints.view(), off}};
  zs::shuffle_options options;
  if (comm.rank() == 1) options.codec = zs::codec_id::raw;
  expect_error(thrown_error([&] { zs::shuffle(comm, in, options); }), zs::error_code::invalid_argument,
               {"rank 1 passes 1 column(s) [int64 raw]"});
}

// Link figures on one rank only would leave the others measuring (a collective) alone.
TEST(ShuffleFailures, LinkFiguresOnSomeRanksOnlyFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const local = make_local(comm.rank(), comm.size(), 10);
  zs::shuffle_options options;
  if (comm.rank() == 1) options.link_bandwidth.assign(static_cast<std::size_t>(comm.size()), 1e9);
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), options); }), zs::error_code::invalid_argument,
               {"links given"});
}

TEST(ShuffleFailures, OutOfMemoryWhilePlanningOnOneRankFailsEveryRank) {
  zs::mpi_communicator comm;
  int const culprit = culprit_of(comm);
  auto const local = make_local(comm.rank(), comm.size(), 20);
  std::optional<zs::test::scoped_env> fault;
  if (comm.rank() == culprit) fault.emplace("ZS_FAULT", "shuffle.plan=oom");
  auto const e = thrown_error([&] { zs::shuffle(comm, local.inputs(), {}); });
  fault.reset();
  expect_error(e, zs::error_code::out_of_memory, {"planning failed on rank " + std::to_string(culprit)});
}

TEST(ShuffleFailures, BadColumnOnOneRankIsNamedWithItsRankColumnAndCheckOnEveryRank) {
  zs::mpi_communicator comm;
  int const culprit = culprit_of(comm);
  auto const local = make_local(comm.rank(), comm.size(), 20);
  auto in = local.inputs();
  // Column 6 is the string column: one offset too many on the culprit.
  std::vector<std::uint64_t> too_long(local.offsets[6]);
  too_long.push_back(too_long.back());
  if (comm.rank() == culprit) in[6].row_offsets = too_long;
  auto const ranks = std::to_string(comm.size() + 1);
  expect_error(thrown_error([&] { zs::shuffle(comm, in, {}); }), zs::error_code::invalid_argument,
               {"failed on rank " + std::to_string(culprit), "column 6 (string)",
                "row_offsets has " + std::to_string(comm.size() + 2) + " entries, expected ranks + 1 = " + ranks});
}

// A damaged count in the manifest used to size the outputs (2^61 rows: a wrapped or absurd
// allocation); now its seal fails, on every rank.
TEST(ShuffleFailures, ManifestDamagedInTransitFailsEveryRankAsACorruptFrame) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  zs::test::tapped_communicator comm(mpi, victim, /*damaged_payload=*/0);  // the manifest comes first
  auto const local = make_local(comm.rank(), comm.size(), 20);
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), compress_everything()); }), zs::error_code::corrupt_frame,
               {"reading the manifest failed on rank " + std::to_string(victim),
                "the manifest from rank 0: the checksum does not match"});
  if (comm.rank() == victim) {
    EXPECT_EQ(comm.damaged(), 1);
  }
  comm.stop();
  zs::test::expect_columns(zs::shuffle(comm, local.inputs(), {}), zs::test::expected_for(comm.rank(), comm.size(), 20),
                           "after the damage");
}

// A damaged frame size used to reach the buffer sizes of the frame exchange.
TEST(ShuffleFailures, FrameSizesDamagedInTransitFailEveryRankAsACorruptFrame) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  zs::test::tapped_communicator comm(mpi, victim, /*damaged_payload=*/1);  // round 0's frame sizes
  auto const local = make_local(comm.rank(), comm.size(), 20);
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), compress_everything()); }), zs::error_code::corrupt_frame,
               {"round 0 failed on rank " + std::to_string(victim),
                "the frame sizes of round 0 from rank 0: the checksum does not match"});
}

// ---------------------------------------------------------------------------------------------
// Progress

TEST(ShuffleProgress, CalledOnceARoundWithBytesThatAddUpToTheStats) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 300);
  zs::shuffle_options options;
  options.round_bytes = 4096;  // many rounds
  std::vector<zs::shuffle_progress> seen;
  options.progress = [&](const zs::shuffle_progress& p) { seen.push_back(p); };
  zs::shuffle_stats stats;
  zs::test::expect_columns(zs::shuffle(comm, local.inputs(), options, &stats),
                           zs::test::expected_for(comm.rank(), comm.size(), 300), "with progress");
  ASSERT_GE(stats.rounds, 8u);
  ASSERT_EQ(seen.size(), stats.rounds);
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].rounds_done, k + 1);
    EXPECT_EQ(seen[k].rounds, stats.rounds);
    EXPECT_EQ(seen[k].raw_bytes_total, stats.raw_bytes);
    if (k > 0) EXPECT_GE(seen[k].raw_bytes, seen[k - 1].raw_bytes);
  }
  EXPECT_EQ(seen.back().raw_bytes, stats.raw_bytes);
  EXPECT_EQ(seen.back().wire_bytes, stats.wire_bytes);
}

TEST(ShuffleProgress, ACallbackThatThrowsOnOneRankFailsEveryRankNamingIt) {
  zs::mpi_communicator comm;
  int const culprit = culprit_of(comm);
  auto const local = make_local(comm.rank(), comm.size(), 20);
  zs::shuffle_options options;
  if (comm.rank() == culprit) {
    options.progress = [](const zs::shuffle_progress&) { throw std::runtime_error("the display went away"); };
  }
  expect_error(thrown_error([&] { zs::shuffle(comm, local.inputs(), options); }), zs::error_code::internal,
               {"rank " + std::to_string(culprit), "the display went away"});
}

// ---------------------------------------------------------------------------------------------
// Timeouts

TEST(ShuffleTimeout, OptionsTimeoutHoldsForTheCallOnlyWhetherItSucceedsOrFails) {
  zs::mpi_communicator mpi;
  zs::test::tapped_communicator comm(mpi);
  comm.set_timeout(42s);
  auto const local = make_local(comm.rank(), comm.size(), 20);
  zs::shuffle_options options;
  options.timeout = 3s;
  zs::shuffle(comm, local.inputs(), options);
  ASSERT_FALSE(comm.timeouts_seen().empty());
  for (auto const seen : comm.timeouts_seen()) EXPECT_EQ(seen, 3s);
  EXPECT_EQ(comm.timeout(), 42s);

  options.round_bytes = 0;
  EXPECT_ZS_ERROR(zs::shuffle(comm, local.inputs(), options), zs::error_code::invalid_argument);
  EXPECT_EQ(comm.timeout(), 42s);

  // Without options.timeout the communicator's own applies.
  options = {};
  zs::shuffle(comm, local.inputs(), options);
  EXPECT_EQ(comm.timeouts_seen().back(), 42s);
}

// --- null masks ------------------------------------------------------------------------------------

// Every type with masks of every kind (random, all valid, all null, on odd ranks only, none):
// the received rows and their nulls, and what the validity cost, for the planner's choice,
// everything compressed, everything raw and some columns forced raw.
TEST(ShuffleHostNulls, EveryTypeWithMasksOfEveryKind) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::uint64_t const scale = 1500;
  auto local = make_local(me, ranks, scale);
  zs::test::add_null_masks(local.columns, me);
  std::size_t const C = local.columns.size();
  struct variant {
    std::string name;
    zs::shuffle_options options;
    std::vector<bool> raw;
  };
  std::vector<variant> variants;
  variants.push_back({"planned", {}, {}});
  variants.push_back({"compressed, small rounds", compress_everything(), std::vector<bool>(C, false)});
  variants.back().options.round_bytes = 16384;
  variants.push_back({"all raw", {}, std::vector<bool>(C, true)});
  variants.back().options.codec = zs::codec_id::raw;
  variants.push_back({"some raw", compress_everything(), std::vector<bool>(C, false)});
  variants.back().options.column_codecs.assign(C, std::nullopt);
  for (std::size_t c = 0; c < C; c += 2) {
    variants.back().options.column_codecs[c] = zs::codec_id::raw;
    variants.back().raw[c] = true;
  }
  for (auto const& v : variants) {
    SCOPED_TRACE(v.name);
    zs::shuffle_stats stats;
    auto const out = zs::shuffle(comm, local.inputs(), v.options, &stats);
    zs::test::expect_columns(out, zs::test::expected_for(me, ranks, scale), v.name);
    zs::test::expect_received_nulls(out, me, ranks, scale, v.name);
    // The planner's choices are its own; the other variants say how each column travels.
    if (!v.raw.empty()) zs::test::expect_null_stats(stats, local.columns, ranks, v.raw, v.name);
    std::uint64_t column_total = 0;
    for (auto b : stats.column_raw_bytes) column_total += b;
    EXPECT_EQ(column_total, stats.raw_bytes) << "the validity is in the totals too";
  }
}

// A mask of all valid rows costs its headers and runs: checked on a column large enough that a
// bit per row would show.
TEST(ShuffleHostNulls, AMaskOfOneValueEverywhereSendsNoValidity) {
  zs::mpi_communicator comm;
  std::uint64_t const rows = 200003;  // not a multiple of 8: the masks' last bytes are partial
  std::vector<std::int64_t> values(rows);
  for (std::uint64_t i = 0; i < rows; ++i) values[i] = static_cast<std::int64_t>(i * 2654435761u % 1000003);
  std::vector<std::uint64_t> offsets;
  for (int d = 0; d <= comm.size(); ++d) offsets.push_back(rows * static_cast<std::uint64_t>(d) / static_cast<std::uint64_t>(comm.size()));
  for (bool const valid : {true, false}) {
    auto col = zs::column::from_values<std::int64_t>(values);
    std::uint8_t* const mask = col.add_null_mask();
    std::fill(mask, mask + zs::null_mask_bytes(rows), static_cast<std::uint8_t>(valid ? 0xff : 0));
    std::vector<zs::shuffle_column> const in{{col.view(), offsets}};
    zs::shuffle_stats stats;
    auto const out = zs::shuffle(comm, in, compress_everything(), &stats);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_TRUE(out[0].nullable());
    std::uint64_t const got = out[0].size();
    EXPECT_EQ(zs::count_nulls(out[0].view().null_mask, got, zs::memory_kind::host), valid ? 0u : got);
    // Padding bits after the last row stay clear, as in every mask the library writes.
    if (got % 8 != 0) {
      EXPECT_EQ(out[0].view().null_mask[got / 8] >> (got % 8), 0) << "valid " << valid;
    }
    EXPECT_EQ(stats.column_null_raw_bytes[0], 0u) << "valid " << valid;
    EXPECT_EQ(stats.column_null_wire_bytes[0], 0u) << "valid " << valid;
  }
}

// A column with no mask anywhere stays without one, and the call's stats say its validity cost
// nothing.
TEST(ShuffleHostNulls, ColumnsWithoutMasksArriveWithoutMasks) {
  zs::mpi_communicator comm;
  auto const local = make_local(comm.rank(), comm.size(), 50);
  zs::shuffle_stats stats;
  auto const out = zs::shuffle(comm, local.inputs(), {}, &stats);
  for (auto const& c : out) EXPECT_FALSE(c.nullable());
  EXPECT_EQ(stats.column_null_raw_bytes, std::vector<std::uint64_t>(out.size(), 0));
  EXPECT_EQ(stats.column_null_wire_bytes, std::vector<std::uint64_t>(out.size(), 0));
}

// A nullable column in the wrong memory on one rank is every rank's error, before anything moves.
TEST(ShuffleHostNulls, ABadNullableColumnOnOneRankFailsEveryRank) {
  zs::mpi_communicator comm;
  auto local = make_local(comm.rank(), comm.size(), 20);
  zs::test::add_null_masks(local.columns, comm.rank());
  auto in = local.inputs();
  int const bad = comm.size() - 1;
  if (comm.rank() == bad) in[0].column.memory = zs::memory_kind::device;
  auto const e = thrown_error([&] { zs::shuffle(comm, in, {}); });
  expect_error(e, zs::error_code::invalid_argument,
               {"shuffle: checking the arguments failed on rank " + std::to_string(bad), "column 0 (int32)",
                "device memory"});
}

}  // namespace
