// The communicator's timeout: where it comes from and how it is set. What happens when it
// passes ends the job, so that is tested by a program of its own (timeout_probe.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "comm_test.hpp"
#include "zs/comm/mpi_communicator.hpp"

namespace {

using namespace std::chrono_literals;
using zs::test::scoped_env;

TEST(communicator_timeout, defaults_to_ten_minutes_without_ZS_TIMEOUT) {
  EXPECT_EQ(zs::communicator::default_timeout, 600s);
  scoped_env const unset("ZS_TIMEOUT", nullptr);
  EXPECT_EQ(zs::timeout_from_environment(), 600s);
  scoped_env const empty("ZS_TIMEOUT", "");
  EXPECT_EQ(zs::timeout_from_environment(), 600s);
}

TEST(communicator_timeout, ZS_TIMEOUT_counts_whole_seconds_and_zero_waits_forever) {
  {
    scoped_env const five("ZS_TIMEOUT", "5");
    EXPECT_EQ(zs::timeout_from_environment(), 5s);
  }
  scoped_env const forever("ZS_TIMEOUT", "0");
  EXPECT_EQ(zs::timeout_from_environment(), 0ms);
}

TEST(communicator_timeout, a_malformed_ZS_TIMEOUT_is_an_invalid_argument) {
  for (const char* text : {"abc", "-1", "+5", " 5", "5 ", "1.5", "5s", "0x10", "99999999999999999999", "9223372036854776"}) {
    scoped_env const bad("ZS_TIMEOUT", text);
    zs::test::expect_error(zs::test::thrown_error([] { zs::timeout_from_environment(); }),
                           zs::error_code::invalid_argument, {"ZS_TIMEOUT='" + std::string(text) + "'"});
  }
}

TEST(communicator_timeout, a_new_mpi_communicator_starts_with_ZS_TIMEOUT) {
  scoped_env const seven("ZS_TIMEOUT", "7");
  zs::mpi_communicator comm;
  EXPECT_EQ(comm.timeout(), 7s);
}

// Read on one rank alone, a malformed value would fail that rank only and leave the others
// waiting for it in the constructor's collectives.
TEST(communicator_timeout, a_malformed_ZS_TIMEOUT_on_one_rank_fails_every_rank) {
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int const culprit = world_size - 1;
  std::optional<scoped_env> bad;
  if (world_rank == culprit) bad.emplace("ZS_TIMEOUT", "ten");
  zs::test::expect_error(zs::test::thrown_error([] { zs::mpi_communicator comm; }), zs::error_code::invalid_argument,
                         {"ZS_TIMEOUT is malformed on rank " + std::to_string(culprit)});
}

TEST(communicator_timeout, set_timeout_takes_zero_or_more) {
  zs::mpi_communicator comm;
  comm.set_timeout(1500ms);
  EXPECT_EQ(comm.timeout(), 1500ms);
  comm.set_timeout(0ms);
  EXPECT_EQ(comm.timeout(), 0ms);
  EXPECT_ZS_ERROR(comm.set_timeout(-1ms), zs::error_code::invalid_argument);
  EXPECT_EQ(comm.timeout(), 0ms);
  // A timeout leaves fast collectives alone.
  comm.set_timeout(2s);
  EXPECT_EQ(comm.allreduce_sum(1), static_cast<std::uint64_t>(comm.size()));
}

}  // namespace
