// The shuffle's planner (zs/comm/shuffle_planner.hpp) on made-up devices, codecs and links:
// where compression pays and where it does not, and what the model predicts.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "zs/comm/shuffle_planner.hpp"
#include "zs_test.hpp"

namespace {

constexpr double GB = 1e9;
constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

// A fixed-width column of `bytes` to each of `ranks` ranks, compressing `ratio` to 1 at the given
// encode and decode speeds (GB/s).
zs::planner_column column(int ranks, std::uint64_t bytes, double ratio, double encode_gbs, double decode_gbs) {
  zs::planner_column c;
  c.name = "column";
  c.codec = "for";
  c.bytes.assign(static_cast<std::size_t>(ranks), bytes);
  c.ratio = ratio;
  c.encode_bps = encode_gbs * GB;
  c.decode_bps = decode_gbs * GB;
  return c;
}

zs::planner_inputs inputs(int rank, std::vector<double> link_gbs, std::vector<zs::planner_column> columns,
                          std::uint64_t rounds = 4) {
  zs::planner_inputs in;
  in.rank = rank;
  for (double g : link_gbs) in.link_bps.push_back(g * GB);
  in.columns = std::move(columns);
  in.rounds = rounds;
  return in;
}

// An H100 pair over NVLink: 300 GB/s to the peer, 1.5 TB/s to itself.
std::vector<double> nvlink_pair() { return {1500, 300}; }

TEST(ShufflePlanner, FastLinksAndAModestCodecStayRaw) {
  // 4x at 200/400 GB/s: compressing costs more compute than the 300 GB/s link saves.
  auto const plan = zs::plan_transfers(inputs(0, nvlink_pair(), {column(2, 256 * MiB, 4, 200, 400)}));
  EXPECT_EQ(plan.at(0, 0), zs::carriage::raw);
  EXPECT_EQ(plan.at(0, 1), zs::carriage::raw);
  EXPECT_DOUBLE_EQ(plan.predicted.total, plan.all_raw.total);
  EXPECT_EQ(plan.predicted.encode, 0.0) << "raw fixed-width partitions cost no compute";
}

TEST(ShufflePlanner, SlowLinksCompressEverythingButTheLocalCopy) {
  // PCIe-class links (25 GB/s) against a 600/900 GB/s codec of ratio 4.
  auto const plan = zs::plan_transfers(inputs(1, {25, 1500, 25, 25}, {column(4, 256 * MiB, 4, 600, 900)}));
  for (int d : {0, 2, 3}) EXPECT_EQ(plan.at(0, d), zs::carriage::compressed) << d;
  EXPECT_EQ(plan.at(0, 1), zs::carriage::raw) << "the local copy is faster than any codec";
  EXPECT_LT(plan.predicted.total, plan.all_raw.total / 2);
}

TEST(ShufflePlanner, MixedLinksChoosePerLink) {
  // Rank 0 of four: rank 1 over NVLink, ranks 2 and 3 over a 25 GB/s network.
  auto const plan = zs::plan_transfers(inputs(0, {1500, 300, 25, 25}, {column(4, 64 * MiB, 5, 500, 800)}));
  EXPECT_EQ(plan.at(0, 0), zs::carriage::raw);
  EXPECT_EQ(plan.at(0, 2), zs::carriage::compressed);
  EXPECT_EQ(plan.at(0, 3), zs::carriage::compressed);
  EXPECT_LE(plan.predicted.total, plan.all_raw.total);
}

TEST(ShufflePlanner, IncompressibleColumnsStayRawAndCompressibleOnesGo) {
  auto const plan = zs::plan_transfers(
      inputs(0, {1500, 10}, {column(2, 64 * MiB, 1.0, 500, 800), column(2, 64 * MiB, 8, 500, 800)}));
  EXPECT_EQ(plan.at(0, 1), zs::carriage::raw);
  EXPECT_EQ(plan.at(1, 1), zs::carriage::compressed);
}

TEST(ShufflePlanner, SmallPredictedGainsAreNotWorthTheFrames) {
  // Compressing saves about 10% here: below min_gain, everything stays raw; with no margin the
  // model's choice stands.
  auto in = inputs(0, {1500, 300}, {column(2, 256 * MiB, 7, 600, 1300)});
  in.overlap = 0;
  auto const margin = zs::plan_transfers(in);
  EXPECT_EQ(margin.at(0, 1), zs::carriage::raw);
  in.min_gain = 0;
  auto const none = zs::plan_transfers(in);
  EXPECT_EQ(none.at(0, 1), zs::carriage::compressed);
  EXPECT_GT(none.predicted.total, 0.8 * none.all_raw.total) << "the case must be a small gain";
}

TEST(ShufflePlanner, ForcedChoicesAreKeptWhateverTheModelSays) {
  auto a = column(2, 64 * MiB, 8, 500, 800);
  a.forced = zs::carriage::raw;
  auto b = column(2, 64 * MiB, 1.01, 1, 1);
  b.forced = zs::carriage::compressed;
  auto const plan = zs::plan_transfers(inputs(0, {1500, 1}, {a, b}));
  for (int d : {0, 1}) {
    EXPECT_EQ(plan.at(0, d), zs::carriage::raw);
    EXPECT_EQ(plan.at(1, d), zs::carriage::compressed);
  }
}

TEST(ShufflePlanner, ThePredictionFollowsThePipelineModel) {
  // One compressed link: encode 1 ms, wire 0.5 ms, decode 0.5 ms over 4 rounds: the slowest
  // stage three quarters of the time, and all three once in the first round.
  auto in = inputs(0, {1e6, 1}, {column(2, 1000000, 2, 1, 2)}, 4);
  in.columns[0].bytes = {0, 1000000};
  in.overlap = 1;
  std::vector<zs::carriage> const choice{zs::carriage::raw, zs::carriage::compressed};
  auto const s = zs::predict(in, choice);
  EXPECT_NEAR(s.encode, 1e-3, 1e-12);
  EXPECT_NEAR(s.wire, 0.5e-3, 1e-12);
  EXPECT_NEAR(s.decode, 0.5e-3, 1e-12);
  EXPECT_NEAR(s.total, 2e-3 / 4 + 0.75 * 1e-3, 1e-12);
  in.overlap = 0;  // the stages one after another
  EXPECT_NEAR(zs::predict(in, choice).total, 2e-3, 1e-12);
  in.overlap = 0.5;
  EXPECT_NEAR(zs::predict(in, choice).total, 0.5 * (2e-3 / 4 + 0.75e-3) + 0.5 * 2e-3, 1e-12);
}

TEST(ShufflePlanner, RawStringsPayForTheirCopies) {
  // A raw string partition travels as raw frames: the model charges those copies, so on a fast
  // link a quick string codec wins where a fixed-width column would stay raw.
  auto s = column(2, 256 * MiB, 3, 400, 400);
  s.raw_encode_bps = s.raw_decode_bps = 300 * GB;
  auto const plan = zs::plan_transfers(inputs(0, {1500, 100}, {s}));
  EXPECT_GT(plan.all_raw.encode, 0.0);
  EXPECT_EQ(plan.at(0, 1), zs::carriage::compressed);
}

TEST(ShufflePlanner, ExplainNamesEveryColumnLinkAndTheTotals) {
  auto const plan = zs::plan_transfers(inputs(1, {25, 1500}, {column(2, 64 * MiB, 4, 600, 900)}));
  auto const text = plan.explain();
  EXPECT_NE(text.find("plan of rank 1"), std::string::npos) << text;
  EXPECT_NE(text.find("compressed"), std::string::npos) << text;
  EXPECT_NE(text.find("all raw"), std::string::npos) << text;
  EXPECT_NE(text.find("this plan"), std::string::npos) << text;
}

TEST(ShufflePlanner, InconsistentInputsAreRefused) {
  auto const refused = [](zs::planner_inputs in) {
    auto const e = zs::test::thrown_error([&] { zs::plan_transfers(in); });
    return e && e->code() == zs::error_code::invalid_argument;
  };
  EXPECT_TRUE(refused(inputs(2, nvlink_pair(), {})));                                   // rank out of range
  EXPECT_TRUE(refused(inputs(0, {1500, 0}, {})));                                       // a dead link
  EXPECT_TRUE(refused(inputs(0, nvlink_pair(), {column(3, 1, 2, 1, 1)})));              // bytes for 3 ranks
  EXPECT_TRUE(refused(inputs(0, nvlink_pair(), {column(2, 1, 0, 1, 1)})));              // ratio 0
  EXPECT_TRUE(refused(inputs(0, nvlink_pair(), {column(2, 1, 2, 0, 1)})));              // encode speed 0
  EXPECT_TRUE(refused(inputs(0, nvlink_pair(), {}, 0)));                                // no rounds
  auto bad_overlap = inputs(0, nvlink_pair(), {});
  bad_overlap.overlap = 1.5;
  EXPECT_TRUE(refused(bad_overlap));
}

}  // namespace
