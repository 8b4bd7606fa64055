// main() of the MPI test binaries, run under mpirun with 1..4 ranks.
//
// Every rank runs every test (the communicator tests are collective). Rank 0 prints gtest's
// usual output; the other ranks print only their failures, prefixed with their rank, so a
// failure there is never silent. The exit code is non-zero on every rank when any rank failed,
// so mpirun (and ctest) see it whichever rank it was.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "zs/comm/mpi_communicator.hpp"

namespace {

class mpi_test_environment final : public ::testing::Environment {
 public:
  mpi_test_environment(int* argc, char*** argv)
      : mpi_(std::make_unique<zs::mpi_environment>(argc, argv)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  int rank() const noexcept { return rank_; }

  /// Combines the ranks' results, reports them on rank 0 and finalizes MPI. Called from main
  /// after RUN_ALL_TESTS rather than from TearDown, which gtest skips for --gtest_list_tests.
  /// Returns the process exit code, the same on every rank.
  int finish(bool passed_here) {
    int const failed_here = passed_here ? 0 : 1;
    std::vector<int> failed(static_cast<std::size_t>(size_), 0);
    int const status = MPI_Allgather(&failed_here, 1, MPI_INT, failed.data(), 1, MPI_INT,
                                     MPI_COMM_WORLD);
    std::string failed_ranks;
    for (int p = 0; p < size_; ++p) {
      if (failed[static_cast<std::size_t>(p)] == 0) continue;
      if (!failed_ranks.empty()) failed_ranks += ", ";
      failed_ranks += std::to_string(p);
    }
    if (rank_ == 0) {
      if (failed_ranks.empty()) {
        std::printf("[ MPI      ] all %d rank(s) passed\n", size_);
      } else {
        std::printf("[ MPI      ] FAILED on rank(s) %s of %d\n", failed_ranks.c_str(), size_);
      }
      std::fflush(stdout);
    }
    mpi_.reset();
    return status == MPI_SUCCESS && failed_ranks.empty() ? 0 : 1;
  }

 private:
  std::unique_ptr<zs::mpi_environment> mpi_;
  int rank_ = 0;
  int size_ = 1;
};

// Stands in for gtest's printer on ranks other than 0: failures only.
class rank_failure_printer final : public ::testing::EmptyTestEventListener {
 public:
  explicit rank_failure_printer(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "unknown file", result.line_number(),
                 result.message());
    std::fflush(stderr);
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
    std::fflush(stderr);
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // gtest owns its environments and never deletes them before exit; `environment` stays valid.
  auto* const environment = new mpi_test_environment(&argc, &argv);
  ::testing::AddGlobalTestEnvironment(environment);

  // Collective tests must run in the same order everywhere: with --gtest_shuffle, every rank
  // takes rank 0's seed.
  if (GTEST_FLAG_GET(shuffle)) {
    int seed = GTEST_FLAG_GET(random_seed);
    if (seed == 0) seed = static_cast<int>(std::time(nullptr) % 99999) + 1;
    MPI_Bcast(&seed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    GTEST_FLAG_SET(random_seed, seed);
  }

  if (environment->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new rank_failure_printer(environment->rank()));
  }

  bool const passed = RUN_ALL_TESTS() == 0;
  return environment->finish(passed);
}
