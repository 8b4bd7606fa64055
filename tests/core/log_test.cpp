// The log (zs/log.hpp): level names, the threshold, the rank prefix, ZS_LOG_LEVEL.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "zs/log.hpp"

namespace {

namespace logging = zs::log;

// What the log writes to stderr while `step` runs.
template <typename Step>
std::string logged(Step step) {
  testing::internal::CaptureStderr();
  step();
  return testing::internal::GetCapturedStderr();
}

// Leaves the log as the environment of the test run sets it.
class Log : public testing::Test {
 protected:
  void TearDown() override {
    unsetenv("ZS_LOG_LEVEL");
    logging::configure_from_environment();
  }
};

TEST_F(Log, LevelNamesReadBack) {
  for (auto l : {logging::level::trace, logging::level::debug, logging::level::info, logging::level::warn, logging::level::error,
                 logging::level::off}) {
    EXPECT_EQ(logging::parse_level(logging::to_string(l)), l) << logging::to_string(l);
  }
  EXPECT_EQ(logging::parse_level("warning"), std::nullopt);
  EXPECT_EQ(logging::parse_level(""), std::nullopt);
  EXPECT_EQ(logging::parse_level("INFO"), std::nullopt);
}

TEST_F(Log, MessagesBelowTheThresholdAreDropped) {
  logging::set_rank(-1);
  logging::set_level(logging::level::warn);
  EXPECT_EQ(logged([] { logging::info("not shown"); }), "");
  EXPECT_EQ(logged([] { logging::warn("shown"); }), "zshuffle: warning: shown\n");
  EXPECT_EQ(logged([] { logging::error("also shown"); }), "zshuffle: error: also shown\n");
  EXPECT_FALSE(logging::enabled(logging::level::debug));

  logging::set_level(logging::level::trace);
  EXPECT_EQ(logged([] { logging::debug("now shown"); }), "zshuffle: debug: now shown\n");
  logging::set_level(logging::level::off);
  EXPECT_EQ(logged([] { logging::error("dropped"); }), "");
  EXPECT_FALSE(logging::enabled(logging::level::error));
}

TEST_F(Log, EveryLineNamesTheRankOnceItIsKnown) {
  logging::set_level(logging::level::info);
  logging::set_rank(3);
  EXPECT_EQ(logged([] { logging::info("a round"); }), "zshuffle: rank 3: info: a round\n");
  logging::set_rank(-1);
  EXPECT_EQ(logged([] { logging::info("a round"); }), "zshuffle: info: a round\n");
}

TEST_F(Log, TheEnvironmentSetsLevelAndRank) {
  setenv("ZS_LOG_LEVEL", "debug", 1);
  setenv("OMPI_COMM_WORLD_RANK", "7", 1);
  logging::configure_from_environment();
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(logging::current_level(), logging::level::debug);
  EXPECT_EQ(logged([] { logging::debug("planning"); }), "zshuffle: rank 7: debug: planning\n");
}

TEST_F(Log, AnUnknownLevelIsAWarningAndTheDefaultHolds) {
  setenv("ZS_LOG_LEVEL", "verbose", 1);
  std::string const out = logged([] { logging::configure_from_environment(); });
  EXPECT_NE(out.find("warning: ZS_LOG_LEVEL='verbose' is not a level"), std::string::npos) << out;
  EXPECT_EQ(logging::current_level(), logging::level::warn);
}

}  // namespace
