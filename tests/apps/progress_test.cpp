// The command line's progress line: when it shows, and what it says (apps/zshuffle/progress.hpp).
#include <gtest/gtest.h>

#include "progress.hpp"

namespace {

using zs::cli::format_bytes;
using zs::cli::format_progress;
using zs::cli::progress_flags;
using zs::cli::progress_wanted;

TEST(ProgressWanted, OnATerminalRankZeroAndAProcessOutsideMpiShowIt) {
  EXPECT_TRUE(progress_wanted(progress_flags{}, true, 0));
  EXPECT_TRUE(progress_wanted(progress_flags{}, true, -1));
}

TEST(ProgressWanted, OtherRanksNeverShowIt) {
  EXPECT_FALSE(progress_wanted(progress_flags{}, true, 1));
  EXPECT_FALSE(progress_wanted(progress_flags{.quiet = false, .forced = true}, true, 3));
}

TEST(ProgressWanted, StderrThatIsNoTerminalStaysQuietUnlessForced) {
  EXPECT_FALSE(progress_wanted(progress_flags{}, false, 0));
  EXPECT_TRUE(progress_wanted(progress_flags{.quiet = false, .forced = true}, false, 0));
}

TEST(ProgressWanted, QuietWinsEverywhere) {
  EXPECT_FALSE(progress_wanted(progress_flags{.quiet = true, .forced = false}, true, 0));
  EXPECT_FALSE(progress_wanted(progress_flags{.quiet = true, .forced = true}, true, 0));
}

TEST(FormatBytes, KeepsThreeSignificantDigitsInPowersOf1024) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(64.0 * 1024), "64.0 KiB");
  EXPECT_EQ(format_bytes(48.0 * 1024 * 1024), "48.0 MiB");
  EXPECT_EQ(format_bytes(412.25 * 1024 * 1024), "412 MiB");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
}

TEST(FormatProgress, SaysPhaseStepBytesAndRate) {
  EXPECT_EQ(format_progress({.phase = "shuffle", .unit = "round", .done = 3, .total = 24,
                             .bytes = 48.0 * 1024 * 1024, .seconds = 0.5, .detail = {}}),
            "shuffle: round 3 of 24, 48.0 MiB, 96.0 MiB/s");
}

TEST(FormatProgress, LeavesOutWhatItDoesNotKnow) {
  EXPECT_EQ(format_progress({.phase = "tune", .unit = "entry", .done = 5, .total = 36, .detail = "checksum any large"}),
            "tune: entry 5 of 36 (checksum any large)");
  // Bytes without a time: no rate.
  EXPECT_EQ(format_progress({.phase = "soak", .unit = "shuffle", .done = 1, .total = 2, .bytes = 2048, .detail = {}}),
            "soak: shuffle 1 of 2, 2.00 KiB");
}

}  // namespace
