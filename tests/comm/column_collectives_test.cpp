// Compressed all-gather and broadcast of columns through the CPU reference codecs, under mpirun
// with 1..4 ranks. Every rank rebuilds what every other rank passed, so each checks its outputs
// row for row.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "comm_test.hpp"
#include "fixture_codec.hpp"
#include "tapped_communicator.hpp"
#include "null_shuffle_support.hpp"
#include "shuffle_support.hpp"
#include "zs/comm/column_collectives.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/frame.hpp"
#include "zs_test.hpp"

namespace {

using namespace std::chrono_literals;
using zs::test::all_types;
using zs::test::columns_of;
using zs::test::concatenated;
using zs::test::every_rank;
using zs::test::expect_columns;
using zs::test::expect_error;
using zs::test::scoped_env;
using zs::test::thrown_error;
using zs::test::tapped_communicator;
using zs::test::views;

constexpr std::uint64_t scale = 300;

/// Views that name the types only: what a non-root rank may pass to broadcast.
std::vector<zs::column_view> types_only() {
  std::vector<zs::column_view> out;
  for (auto type : all_types()) out.push_back(zs::column_view{type});
  return out;
}

/// The uncompressed bytes of `cols` as shuffle_stats counts them: values, or characters plus
/// 8 bytes per string.
std::uint64_t raw_bytes_of(const std::vector<zs::column>& cols) {
  std::uint64_t total = 0;
  for (auto const& c : cols) total += c.data_bytes() + (c.type() == zs::value_type::string ? 8 * c.size() : 0);
  return total;
}

/// String i of rank r in the uneven test: empty for i == 1, otherwise non-ASCII and of growing
/// length.
std::string label(int r, int i) {
  if (i == 1) return {};
  std::string s(1, 'r');
  s += std::to_string(r);
  s += "\xc3\xa9";  // e with an acute accent, in UTF-8
  s.append(static_cast<std::size_t>(i), 'x');
  return s;
}

/// A host string column view over `offsets`, with no characters behind them: offsets that run
/// backwards make it malformed in a way only its contents show.
zs::column_view backwards_strings(const std::int64_t (&offsets)[2]) {
  static const char chars[8] = {};
  return zs::column_view{zs::value_type::string, 1, zs::memory_kind::host, chars, offsets};
}

// ---------------------------------------------------------------------------------------------
// allgather

TEST(ColumnAllgatherHost, EveryTypeArrivesFromEveryRankInRankOrder) {
  zs::mpi_communicator comm;
  auto const mine = columns_of(comm.rank(), scale);
  zs::shuffle_stats stats;
  auto const out = zs::allgather(comm, views(mine), {}, &stats);
  expect_columns(out, concatenated(every_rank(comm.size()), scale), "allgather");
  EXPECT_EQ(stats.raw_bytes, raw_bytes_of(mine));
  EXPECT_EQ(stats.rounds, 1u);
  EXPECT_EQ(stats.wire_bytes % zs::frame_alignment, 0u);
  EXPECT_GE(stats.wire_bytes, mine.size() * zs::frame_header_bytes);
}

TEST(ColumnAllgatherHost, RawCodecForcedOnEveryColumn) {
  zs::mpi_communicator comm;
  auto const mine = columns_of(comm.rank(), scale);
  zs::shuffle_options options;
  options.codec = zs::codec_id::raw;
  zs::shuffle_stats stats;
  auto const out = zs::allgather(comm, views(mine), options, &stats);
  expect_columns(out, concatenated(every_rank(comm.size()), scale), "allgather, raw codec");
  EXPECT_GE(stats.wire_bytes, stats.raw_bytes);  // raw frames add headers and padding
}

// A codec with column parameters: prepared from the contributor's column, carried by its frame.
TEST(ColumnAllgatherHost, CodecWithColumnParametersOnEveryColumn) {
  zs::test::register_fixture_codec();
  zs::mpi_communicator comm;
  auto const mine = columns_of(comm.rank(), scale);
  zs::shuffle_options options;
  options.codec = zs::test::fixture_codec_id;
  auto const out = zs::allgather(comm, views(mine), options);
  expect_columns(out, concatenated(every_rank(comm.size()), scale), "allgather, fixture codec");
  for (int root = 0; root < comm.size(); ++root) {
    auto const got = zs::broadcast(comm, views(columns_of(root, scale)), root, options);
    expect_columns(got, concatenated({root}, scale), "broadcast, fixture codec, root " + std::to_string(root));
  }
}

// The wire carries the frames as encoded, not the worst-case room the encoder was given.
TEST(ColumnAllgatherHost, SmallIntegersTakeFarFewerBytesOnTheWire) {
  zs::mpi_communicator mpi;
  tapped_communicator comm(mpi);
  std::vector<std::int64_t> values(20000 + 1000 * static_cast<std::size_t>(comm.rank()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>((i * 7 + comm.rank()) % 200);
  auto const col = zs::column::from_values<std::int64_t>(values);
  std::vector<zs::column_view> in{col.view()};
  zs::shuffle_stats stats;
  auto const out = zs::allgather(comm, in, {}, &stats);
  EXPECT_EQ(stats.raw_bytes, values.size() * 8);
  EXPECT_LT(stats.wire_bytes * 4, stats.raw_bytes) << "8-bit values in 64-bit slots should pack at least 4:1";
  // What actually arrived: every rank's frames, each far smaller than its rows.
  EXPECT_EQ(comm.allreduce_sum(stats.wire_bytes), comm.frame_bytes_received());
  EXPECT_LT(comm.frame_bytes_received() * 4, comm.allreduce_sum(stats.raw_bytes));
  ASSERT_EQ(out.size(), 1u);
  std::uint64_t row = 0;
  for (int r = 0; r < comm.size(); ++r) {
    std::uint64_t const n = 20000 + 1000 * static_cast<std::uint64_t>(r);
    for (std::uint64_t i = 0; i < n; ++i, ++row) {
      ASSERT_EQ(out[0].view().values<std::int64_t>()[row], static_cast<std::int64_t>((i * 7 + r) % 200))
          << "rank " << r << ", row " << i;
    }
  }
  EXPECT_EQ(out[0].size(), row);
}

// Rank r passes the r-th slice of a real column (string slices whose offsets do not start at
// 0); every rank gets the whole column back.
TEST(ColumnAllgatherHost, SlicesOfRealColumnsReassembleTheWholeColumn) {
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  for (const char* file : {"etopo5_elev_m.i32", "deb_maintainers.txt", "airport_lat.f64", "osm_poi_names.txt"}) {
    auto const whole = zs::test::data_column(file);
    auto const [b, e] = zs::test::share_of(whole.size(), me, ranks);
    std::vector<zs::column_view> in{zs::test::slice(whole.view(), b, e)};
    auto const out = zs::allgather(comm, in, {});
    zs::test::expected_column expected{whole.type(), {}, {}};
    zs::test::append_rows(expected, whole, 0, whole.size());
    ASSERT_EQ(out.size(), 1u);
    zs::test::expect_column(out[0], expected, file);
  }
}

// A string column left to the default codec takes fsst_dict where the contributors' estimates,
// added up over the ranks, say so: one codec a column on every rank. A codec named is kept. Rank
// r passes a column of repeated values (repeating_or_distinct_strings(2 r)) and one of distinct
// values (2 r + 1).
TEST(ColumnAllgatherHost, StringColumnsTakeTheDictionaryWhereTheRanksEstimatesSaySo) {
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  constexpr std::uint64_t rows = 3000;
  auto const repeating = zs::test::repeating_or_distinct_strings(2 * me, rows);
  auto const distinct = zs::test::repeating_or_distinct_strings(2 * me + 1, rows);
  std::vector<zs::column_view> const in{repeating.view(), distinct.view()};
  std::vector<zs::test::expected_column> expected(2, {zs::value_type::string, {}, {}});
  for (int r = 0; r < ranks; ++r) {
    for (int k = 0; k < 2; ++k) {
      zs::test::append_rows(expected[k], zs::test::repeating_or_distinct_strings(2 * r + k, rows), 0, rows);
    }
  }
  for (bool named : {false, true}) {
    zs::shuffle_options options;
    if (named) options.codec = zs::codec_id::fsst;
    zs::shuffle_stats stats;
    auto const out = zs::allgather(comm, in, options, &stats);
    expect_columns(out, expected, named ? "fsst named" : "fsst or fsst_dict");
    std::vector<zs::codec_id> const wanted{named ? zs::codec_id::fsst : zs::codec_id::fsst_dict, zs::codec_id::fsst};
    EXPECT_EQ(stats.column_codecs, wanted) << (named ? "fsst named" : "chosen");
  }
  // A broadcast: the root's estimates alone decide.
  int const root = ranks - 1;
  zs::shuffle_stats stats;
  auto const out = zs::broadcast(comm, in, root, {}, &stats);
  std::vector<zs::test::expected_column> from_root(2, {zs::value_type::string, {}, {}});
  for (int k = 0; k < 2; ++k) {
    zs::test::append_rows(from_root[k], zs::test::repeating_or_distinct_strings(2 * root + k, rows), 0, rows);
  }
  expect_columns(out, from_root, "broadcast");
  EXPECT_EQ(stats.column_codecs, (std::vector<zs::codec_id>{zs::codec_id::fsst_dict, zs::codec_id::fsst}));
}

TEST(ColumnAllgatherHost, NoColumnsEmptyColumnsAndRanksWithoutRows) {
  zs::mpi_communicator comm;
  zs::shuffle_stats stats;
  EXPECT_TRUE(zs::allgather(comm, {}, {}, &stats).empty());
  EXPECT_EQ(stats.wire_bytes, 0u);

  auto const no_ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{});
  auto const no_strings = zs::column::from_strings(std::vector<std::string>{});
  std::vector<zs::column_view> empty{no_ints.view(), no_strings.view()};
  auto const out = zs::allgather(comm, empty, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].size(), 0u);
  EXPECT_EQ(out[1].size(), 0u);
  EXPECT_EQ(out[1].view().offsets[0], 0);

  // Odd ranks contribute nothing; even rank r contributes r + 1 strings, one of them empty.
  int const me = comm.rank();
  std::vector<std::string> strings;
  std::vector<std::uint32_t> numbers;
  if (me % 2 == 0) {
    for (int i = 0; i <= me; ++i) {
      strings.push_back(label(me, i));
      numbers.push_back(static_cast<std::uint32_t>(me * 100 + i));
    }
  }
  auto const s = zs::column::from_strings(strings);
  auto const n = zs::column::from_values<std::uint32_t>(numbers);
  std::vector<zs::column_view> uneven{s.view(), n.view()};
  auto const got = zs::allgather(comm, uneven, {});
  std::vector<std::string> expected_strings;
  std::vector<std::uint32_t> expected_numbers;
  for (int r = 0; r < comm.size(); r += 2) {
    for (int i = 0; i <= r; ++i) {
      expected_strings.push_back(label(r, i));
      expected_numbers.push_back(static_cast<std::uint32_t>(r * 100 + i));
    }
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].strings(), expected_strings);
  ASSERT_EQ(got[1].size(), expected_numbers.size());
  EXPECT_TRUE(std::equal(expected_numbers.begin(), expected_numbers.end(), got[1].view().values<std::uint32_t>()));
}

TEST(ColumnAllgatherHost, BadColumnOnOneRankFailsEveryRank) {
  zs::mpi_communicator comm;
  bool const last = comm.rank() == comm.size() - 1;
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1, 2, 3, 4});
  zs::column_view bad = ints.view();
  if (last) bad.data = nullptr;  // rows, but no values
  std::vector<zs::column_view> in{bad};
  EXPECT_ZS_ERROR(zs::allgather(comm, in, {}), zs::error_code::invalid_argument);

  // A device column handed to the host path.
  in[0] = ints.view();
  if (last) in[0].memory = zs::memory_kind::device;
  EXPECT_ZS_ERROR(zs::allgather(comm, in, {}), zs::error_code::invalid_argument);

  // The communicator is still usable.
  in[0] = ints.view();
  auto const out = zs::allgather(comm, in, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].size(), 4u * static_cast<unsigned>(comm.size()));
}

// String offsets that run backwards are only found while encoding, after the argument round:
// the failure still reaches every rank, through the manifest, before any frame moves.
TEST(ColumnAllgatherHost, StringOffsetsRunningBackwardsOnOneRankFailEveryRank) {
  zs::mpi_communicator comm;
  auto const fine = zs::column::from_strings(std::vector<std::string>{"a", "bc"});
  static const std::int64_t backwards[2] = {5, 2};
  std::vector<zs::column_view> in{comm.rank() == 0 ? backwards_strings(backwards) : fine.view()};
  EXPECT_ZS_ERROR(zs::allgather(comm, in, {}), zs::error_code::invalid_argument);
}

TEST(ColumnAllgatherHost, RanksPassingDifferentColumnsFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1});
  auto const floats = zs::column::from_values<float>(std::vector<float>{1.0f});
  std::vector<zs::column_view> types{comm.rank() == 1 ? floats.view() : ints.view()};
  EXPECT_ZS_ERROR(zs::allgather(comm, types, {}), zs::error_code::invalid_argument);
  std::vector<zs::column_view> counts{ints.view()};
  if (comm.rank() == 1) counts.push_back(ints.view());
  EXPECT_ZS_ERROR(zs::allgather(comm, counts, {}), zs::error_code::invalid_argument);
}

TEST(ColumnAllgatherHost, CodecThatCannotEncodeATypeFailsEveryRank) {
  zs::mpi_communicator comm;
  auto const floats = zs::column::from_values<double>(std::vector<double>{1.5, -2.0});
  std::vector<zs::column_view> in{floats.view()};
  zs::shuffle_options options;
  options.codec = zs::codec_id::bitpack_for;  // integers only
  EXPECT_ZS_ERROR(zs::allgather(comm, in, options), zs::error_code::unsupported);
}

TEST(ColumnAllgatherHost, FrameDamagedInTransitOnOneRankFailsEveryRank) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  tapped_communicator comm(mpi, victim);
  auto const mine = columns_of(comm.rank(), scale);
  EXPECT_ZS_ERROR(zs::allgather(comm, views(mine), {}), zs::error_code::corrupt_frame);
  if (comm.rank() == victim) {
    EXPECT_EQ(comm.damaged(), 1);
  }
  // Once the link is healthy again, the same call delivers every row.
  comm.stop();
  expect_columns(zs::allgather(comm, views(mine), {}), concatenated(every_rank(comm.size()), scale), "after the error");
}

// ---------------------------------------------------------------------------------------------
// broadcast

TEST(ColumnBroadcastHost, EveryTypeFromEveryRoot) {
  zs::mpi_communicator comm;
  for (int root = 0; root < comm.size(); ++root) {
    auto const mine = comm.rank() == root ? columns_of(root, scale) : std::vector<zs::column>{};
    auto const in = comm.rank() == root ? views(mine) : types_only();
    zs::shuffle_stats stats;
    auto const out = zs::broadcast(comm, in, root, {}, &stats);
    expect_columns(out, concatenated({root}, scale), "broadcast from " + std::to_string(root));
    // Every rank reports the root's columns.
    EXPECT_EQ(stats.raw_bytes, raw_bytes_of(columns_of(root, scale)));
    EXPECT_EQ(comm.allreduce_min(stats.wire_bytes), comm.allreduce_max(stats.wire_bytes));
    EXPECT_EQ(stats.rounds, 1u);
  }
}

// Only the types of non-root views are read: ranks may pass the columns they have.
TEST(ColumnBroadcastHost, ColumnsOfOtherRanksAreIgnored) {
  zs::mpi_communicator comm;
  int const root = comm.size() / 2;
  auto const mine = columns_of(comm.rank(), scale);
  auto const out = zs::broadcast(comm, views(mine), root, {});
  expect_columns(out, concatenated({root}, scale), "broadcast from " + std::to_string(root));
}

TEST(ColumnBroadcastHost, NoColumnsAndEmptyColumns) {
  zs::mpi_communicator comm;
  EXPECT_TRUE(zs::broadcast(comm, {}, 0, {}).empty());
  auto const no_doubles = zs::column::from_values<double>(std::vector<double>{});
  auto const no_strings = zs::column::from_strings(std::vector<std::string>{});
  std::vector<zs::column_view> in{no_doubles.view(), no_strings.view()};
  auto const out = zs::broadcast(comm, in, comm.size() - 1, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), zs::value_type::float64);
  EXPECT_EQ(out[0].size(), 0u);
  EXPECT_EQ(out[1].size(), 0u);
  EXPECT_EQ(out[1].view().offsets[0], 0);
}

TEST(ColumnBroadcastHost, RootOutsideTheGroupFailsEveryRank) {
  zs::mpi_communicator comm;
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1, 2});
  std::vector<zs::column_view> in{ints.view()};
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, comm.size(), {}), zs::error_code::invalid_argument);
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, -1, {}), zs::error_code::invalid_argument);
  // Only one rank names a root outside the group.
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, comm.rank() == 0 ? comm.size() : 0, {}), zs::error_code::invalid_argument);
}

TEST(ColumnBroadcastHost, RanksDisagreeingOnRootOrTypesFailEveryRank) {
  zs::mpi_communicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks to disagree";
  auto const ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1, 2});
  std::vector<zs::column_view> in{ints.view()};
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, comm.rank() == 1 ? 1 : 0, {}), zs::error_code::invalid_argument);
  std::vector<zs::column_view> types{comm.rank() == 1 ? zs::column_view{zs::value_type::uint32} : ints.view()};
  EXPECT_ZS_ERROR(zs::broadcast(comm, types, 0, {}), zs::error_code::invalid_argument);
}

TEST(ColumnBroadcastHost, BadColumnAtTheRootFailsEveryRank) {
  zs::mpi_communicator comm;
  int const root = comm.size() - 1;
  auto const ints = zs::column::from_values<std::int64_t>(std::vector<std::int64_t>{7, 8, 9});
  zs::column_view bad = ints.view();
  bad.data = nullptr;
  std::vector<zs::column_view> in{comm.rank() == root ? bad : zs::column_view{zs::value_type::int64}};
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, root, {}), zs::error_code::invalid_argument);

  static const std::int64_t backwards[2] = {5, 2};
  std::vector<zs::column_view> strings{backwards_strings(backwards)};
  EXPECT_ZS_ERROR(zs::broadcast(comm, strings, root, {}), zs::error_code::invalid_argument);

  // A non-root rank's views are not read: a null data pointer there is fine.
  std::vector<zs::column_view> fine{comm.rank() == root ? ints.view() : bad};
  auto const out = zs::broadcast(comm, fine, root, {});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 3u);
  EXPECT_EQ(out[0].view().values<std::int64_t>()[2], 9);
}

TEST(ColumnBroadcastHost, FrameDamagedInTransitOnOneRankFailsEveryRank) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  tapped_communicator comm(mpi, victim);
  auto const root_columns = columns_of(0, scale);
  auto const in = comm.rank() == 0 ? views(root_columns) : types_only();
  EXPECT_ZS_ERROR(zs::broadcast(comm, in, 0, {}), zs::error_code::corrupt_frame);
  if (comm.rank() == victim) {
    EXPECT_EQ(comm.damaged(), 1);
  }
  comm.stop();
  expect_columns(zs::broadcast(comm, in, 0, {}), concatenated({0}, scale), "after the error");
}

// ---------------------------------------------------------------------------------------------
// Failures on one rank reach every rank, named

TEST(ColumnCollectiveFailures, BadColumnOnOneRankIsNamedWithItsRankColumnAndCheckOnEveryRank) {
  zs::mpi_communicator comm;
  int const culprit = comm.size() - 1;
  auto const columns = columns_of(comm.rank(), 10);
  auto in = views(columns);
  if (comm.rank() == culprit) in[6].offsets = nullptr;  // column 6 is the string column
  expect_error(thrown_error([&] { zs::allgather(comm, in, {}); }), zs::error_code::invalid_argument,
               {"allgather: checking the arguments failed on rank " + std::to_string(culprit),
                "column 6 (string): a string column without offsets"});
}

TEST(ColumnCollectiveFailures, OutOfMemoryWhileEncodingOnOneRankFailsEveryAllgather) {
  zs::mpi_communicator comm;
  int const culprit = comm.size() - 1;
  auto const mine = columns_of(comm.rank(), 10);
  std::optional<scoped_env> fault;
  if (comm.rank() == culprit) fault.emplace("ZS_FAULT", "collective.encode=oom");
  auto const e = thrown_error([&] { zs::allgather(comm, views(mine), {}); });
  fault.reset();
  expect_error(e, zs::error_code::out_of_memory, {"allgather: encoding failed on rank " + std::to_string(culprit)});
  expect_columns(zs::allgather(comm, views(mine), {}), concatenated(every_rank(comm.size()), 10), "after the error");
}

TEST(ColumnCollectiveFailures, ErrorWhileEncodingAtTheRootFailsEveryBroadcast) {
  zs::mpi_communicator comm;
  int const root = comm.size() - 1;
  auto const root_columns = columns_of(root, 10);
  auto const in = comm.rank() == root ? views(root_columns) : types_only();
  std::optional<scoped_env> fault;
  if (comm.rank() == root) fault.emplace("ZS_FAULT", "collective.encode=error");
  auto const e = thrown_error([&] { zs::broadcast(comm, in, root, {}); });
  fault.reset();
  expect_error(e, zs::error_code::internal,
               {"broadcast: encoding failed on rank " + std::to_string(root), "injected fault at collective.encode"});
}

// A damaged count in the column sizes would size every rank's outputs; its seal fails instead.
TEST(ColumnCollectiveFailures, ColumnSizesDamagedInTransitFailEveryAllgatherAsACorruptFrame) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  tapped_communicator comm(mpi, victim, /*damaged_payload=*/0);  // the column sizes come first
  auto const mine = columns_of(comm.rank(), 10);
  expect_error(thrown_error([&] { zs::allgather(comm, views(mine), {}); }), zs::error_code::corrupt_frame,
               {"failed on rank " + std::to_string(victim), "the column sizes from rank 0: the checksum does not match"});
  comm.stop();
  expect_columns(zs::allgather(comm, views(mine), {}), concatenated(every_rank(comm.size()), 10), "after the damage");
}

TEST(ColumnCollectiveFailures, ColumnSizesDamagedInTransitFailEveryBroadcastAsACorruptFrame) {
  zs::mpi_communicator mpi;
  int const victim = mpi.size() - 1;
  tapped_communicator comm(mpi, victim, /*damaged_payload=*/0);
  auto const root_columns = columns_of(0, 10);
  auto const in = comm.rank() == 0 ? views(root_columns) : types_only();
  expect_error(thrown_error([&] { zs::broadcast(comm, in, 0, {}); }), zs::error_code::corrupt_frame,
               {"failed on rank " + std::to_string(victim), "the column sizes from rank 0: the checksum does not match"});
}

TEST(ColumnCollectiveTimeout, OptionsTimeoutHoldsForTheCallOnly) {
  zs::mpi_communicator mpi;
  tapped_communicator comm(mpi);
  comm.set_timeout(42s);
  auto const mine = columns_of(comm.rank(), 10);
  zs::shuffle_options options;
  options.timeout = 2500ms;
  zs::allgather(comm, views(mine), options);
  zs::broadcast(comm, views(mine), 0, options);
  ASSERT_FALSE(comm.timeouts_seen().empty());
  for (auto const seen : comm.timeouts_seen()) EXPECT_EQ(seen, 2500ms);
  EXPECT_EQ(comm.timeout(), 42s);
}

// The validity every rank expects of column c from the given ranks' columns_of with
// add_null_masks, concatenated in that order.
std::vector<bool> expected_validity(const std::vector<int>& ranks, std::size_t c) {
  std::vector<bool> out;
  for (int r : ranks) {
    for (std::uint64_t i = 0; i < zs::test::rows_of(r, c, scale); ++i) out.push_back(zs::test::row_valid(r, c, i));
  }
  return out;
}

// Null masks of every kind (random, all valid, all null, on odd ranks only, none) on every type:
// the rows and their nulls from every rank, compressed and raw.
TEST(ColumnAllgatherHostNulls, EveryTypeWithMasksOfEveryKind) {
  zs::mpi_communicator comm;
  auto mine = columns_of(comm.rank(), scale);
  zs::test::add_null_masks(mine, comm.rank());
  zs::shuffle_options raw;
  raw.codec = zs::codec_id::raw;
  for (auto const& [name, options] : {std::pair{"default codecs", zs::shuffle_options{}}, {"raw", raw}}) {
    zs::shuffle_stats stats;
    auto const out = zs::allgather(comm, views(mine), options, &stats);
    expect_columns(out, concatenated(every_rank(comm.size()), scale), name);
    for (std::size_t c = 0; c < out.size(); ++c) {
      ASSERT_EQ(out[c].nullable(), zs::test::nullable_somewhere(c, comm.size())) << name << ", column " << c;
      if (out[c].nullable()) {
        EXPECT_EQ(out[c].validity(), expected_validity(every_rank(comm.size()), c)) << name << ", column " << c;
      }
    }
    EXPECT_GT(stats.raw_bytes, raw_bytes_of(mine)) << name << ": the validity is in the totals";
  }
}

TEST(ColumnBroadcastHostNulls, EveryTypeWithMasksFromEveryRoot) {
  zs::mpi_communicator comm;
  auto mine = columns_of(comm.rank(), scale);
  zs::test::add_null_masks(mine, comm.rank());
  for (int root = 0; root < comm.size(); ++root) {
    // The other ranks pass types only: the root alone says which columns are nullable.
    auto const in = comm.rank() == root ? views(mine) : types_only();
    auto const out = zs::broadcast(comm, in, root, {});
    expect_columns(out, concatenated({root}, scale), "root " + std::to_string(root));
    for (std::size_t c = 0; c < out.size(); ++c) {
      bool const nullable = zs::test::null_kind_of(root, c) != zs::test::null_kind::none;
      ASSERT_EQ(out[c].nullable(), nullable) << "root " << root << ", column " << c;
      if (nullable) {
        EXPECT_EQ(out[c].validity(), expected_validity({root}, c)) << "root " << root << ", column " << c;
      }
    }
  }
}

// A nullable column in the wrong memory on one rank is every rank's error, before anything moves.
TEST(ColumnAllgatherHostNulls, ABadNullableColumnOnOneRankFailsEveryRank) {
  zs::mpi_communicator comm;
  int const culprit = comm.size() - 1;
  auto mine = columns_of(comm.rank(), scale);
  zs::test::add_null_masks(mine, comm.rank());
  auto in = views(mine);
  if (comm.rank() == culprit) in[0].memory = zs::memory_kind::device;
  expect_error(thrown_error([&] { zs::allgather(comm, in, {}); }), zs::error_code::invalid_argument,
               {"allgather: checking the arguments failed on rank " + std::to_string(culprit), "column 0 (int32)"});
}

}  // namespace
