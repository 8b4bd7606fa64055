// The MPI environment, facts about the MPI and NCCL libraries, and the MPI/NCCL error checks.
#include <gtest/gtest.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <nccl.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "comm_test.hpp"
#include "zs/comm/error.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/nccl.hpp"

namespace {

using zs::error_code;
using zs::test::scoped_env;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

TEST(mpi_environment, leaves_an_mpi_that_someone_else_started_alone) {
  int argc = 0;
  char** argv = nullptr;
  {
    zs::mpi_environment nested(&argc, &argv);
    EXPECT_FALSE(nested.owns_mpi());
    int provided = -1;
    ASSERT_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
    EXPECT_EQ(nested.provided_level(), provided);
  }
  int finalized = 1;
  ASSERT_EQ(MPI_Finalized(&finalized), MPI_SUCCESS);
  EXPECT_EQ(finalized, 0) << "a non-owning mpi_environment finalized MPI";
}

TEST(mpi_environment, reports_a_thread_level_below_the_requirement) {
  int provided = 0;
  ASSERT_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
  if (provided == MPI_THREAD_MULTIPLE) {
    GTEST_SKIP() << "this MPI provides MPI_THREAD_MULTIPLE: no level above it to require";
  }
  int argc = 0;
  char** argv = nullptr;
  EXPECT_ZS_ERROR(zs::mpi_environment(&argc, &argv, provided + 1), error_code::mpi_error);
}

TEST(mpi_library, version_is_the_first_line_of_the_library_string) {
  std::string const version = zs::mpi_library_version();
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(version.find('\n'), std::string::npos);
  char full[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  ASSERT_EQ(MPI_Get_library_version(full, &length), MPI_SUCCESS);
  EXPECT_EQ(std::string(full, static_cast<std::size_t>(length)).rfind(version, 0), 0U)
      << "'" << version << "' does not begin the library string";
}

TEST(mpi_library, cuda_awareness_follows_the_environment_override) {
  {
    scoped_env const env("ZS_MPI_CUDA_AWARE", "1");
    auto const support = zs::mpi_cuda_aware();
    EXPECT_EQ(support.value, zs::cuda_awareness::yes);
    EXPECT_NE(support.source.find("ZS_MPI_CUDA_AWARE"), std::string::npos);
  }
  {
    scoped_env const env("ZS_MPI_CUDA_AWARE", "0");
    EXPECT_EQ(zs::mpi_cuda_aware().value, zs::cuda_awareness::no);
  }
  {
    scoped_env const env("ZS_MPI_CUDA_AWARE", "yes");
    EXPECT_ZS_ERROR(zs::mpi_cuda_aware(), error_code::invalid_argument);
  }
}

TEST(mpi_library, cuda_awareness_without_override_matches_what_the_library_says) {
  scoped_env const env("ZS_MPI_CUDA_AWARE", nullptr);
  auto const support = zs::mpi_cuda_aware();
  EXPECT_FALSE(support.source.empty());
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  EXPECT_EQ(support.value, MPIX_Query_cuda_support() == 1 ? zs::cuda_awareness::yes
                                                          : zs::cuda_awareness::no);
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  EXPECT_EQ(support.value, zs::cuda_awareness::no);
#else
  EXPECT_EQ(support.value, zs::cuda_awareness::unknown);
#endif
}

TEST(mpi_library, local_rank_prefers_the_launcher_variables_in_order) {
  {
    scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", "5");
    scoped_env const slurm("SLURM_LOCALID", "9");
    EXPECT_EQ(zs::local_rank(), 5);
  }
  {
    scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", nullptr);
    scoped_env const slurm("SLURM_LOCALID", "9");
    EXPECT_EQ(zs::local_rank(), 9);
  }
  {
    scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", "3x");
    EXPECT_ZS_ERROR(zs::local_rank(), error_code::invalid_argument);
  }
  {
    scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", "-1");
    EXPECT_ZS_ERROR(zs::local_rank(), error_code::invalid_argument);
  }
}

TEST(mpi_library, local_rank_without_launcher_variables_counts_ranks_on_this_node) {
  // Open MPI tells how many ranks share this node; the fallback must agree with a launch where
  // they all do.
  const char* local_size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  bool const one_node = local_size != nullptr && std::atoi(local_size) == world_size;
  // Every rank must take the same branch: the fallback is collective.
  int one_node_everywhere = one_node ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &one_node_everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!one_node_everywhere) {
    GTEST_SKIP() << "needs every rank on one node, launched by Open MPI's mpirun";
  }
  scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", nullptr);
  scoped_env const slurm("SLURM_LOCALID", nullptr);
  EXPECT_EQ(zs::local_rank(), world_rank());
}

TEST(mpi_library, device_for_rank_defaults_to_local_rank_modulo_devices) {
  scoped_env const devices("ZS_DEVICES", nullptr);
  scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", "5");
  EXPECT_EQ(zs::device_for_rank(2), 1);
  EXPECT_EQ(zs::device_for_rank(8), 5);
  EXPECT_ZS_ERROR(zs::device_for_rank(0), error_code::invalid_argument);
}

TEST(mpi_library, device_for_rank_follows_the_override_list) {
  scoped_env const ompi("OMPI_COMM_WORLD_LOCAL_RANK", "3");
  {
    scoped_env const devices("ZS_DEVICES", "1,0");
    EXPECT_EQ(zs::device_for_rank(2), 0);  // local rank 3 takes entry 3 mod 2 = 1
  }
  {
    scoped_env const devices("ZS_DEVICES", "2");
    EXPECT_EQ(zs::device_for_rank(4), 2);
  }
  for (const char* bad : {"4", "a", "1,,0", "-1", "1x"}) {
    scoped_env const devices("ZS_DEVICES", bad);
    EXPECT_ZS_ERROR(zs::device_for_rank(4), error_code::invalid_argument);
  }
}

int returns(int code) { return code; }

TEST(comm_errors, mpi_try_turns_a_failing_call_into_an_mpi_error) {
  zs::mpi_communicator comm;  // errors come back as codes on its duplicate
  char byte = 0;
  int expected_code = MPI_SUCCESS;
  try {
    ZS_MPI_TRY(MPI_Send(&byte, -1, MPI_BYTE, 0, 0, comm.get()));
    ADD_FAILURE() << "a negative count was accepted";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), error_code::mpi_error);
    std::string const what = e.what();
    EXPECT_NE(what.find("MPI_Send(&byte, -1"), std::string::npos) << what;
    EXPECT_STREQ(e.file(), __FILE__);  // the place of the check, kept for a debug log
    expected_code = MPI_Send(&byte, -1, MPI_BYTE, 0, 0, comm.get());
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    ASSERT_EQ(MPI_Error_string(expected_code, text, &length), MPI_SUCCESS);
    EXPECT_NE(what.find(std::string(text, static_cast<std::size_t>(length))), std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(ZS_MPI_TRY(returns(MPI_SUCCESS)));
}

TEST(comm_errors, nccl_try_turns_a_failing_call_into_an_nccl_error) {
  try {
    ZS_NCCL_TRY(ncclGetVersion(nullptr));
    ADD_FAILURE() << "ncclGetVersion(nullptr) succeeded";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), error_code::nccl_error);
    std::string const what = e.what();
    EXPECT_NE(what.find(ncclGetErrorString(ncclInvalidArgument)), std::string::npos) << what;
  }
  // A non-blocking operation still in progress is not success here.
  EXPECT_ZS_ERROR(ZS_NCCL_TRY(ncclInProgress), error_code::nccl_error);
  int version = 0;
  EXPECT_NO_THROW(ZS_NCCL_TRY(ncclGetVersion(&version)));
}

TEST(comm_errors, nothrow_variants_report_to_stderr) {
  ::testing::internal::CaptureStderr();
  ZS_MPI_TRY_NOTHROW(returns(MPI_ERR_COUNT));
  ZS_NCCL_TRY_NOTHROW(ncclSystemError);
  ZS_MPI_TRY_NOTHROW(returns(MPI_SUCCESS));
  std::string const printed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("returns(MPI_ERR_COUNT) failed"), std::string::npos) << printed;
  EXPECT_NE(printed.find("ncclSystemError failed"), std::string::npos) << printed;
  EXPECT_NE(printed.find(ncclGetErrorString(ncclSystemError)), std::string::npos) << printed;
  EXPECT_EQ(printed.find("MPI_SUCCESS"), std::string::npos) << printed;
}

TEST(nccl_library, version_is_major_minor_patch_of_the_loaded_library) {
  std::string const version = zs::nccl_version();
  std::smatch parts;
  ASSERT_TRUE(std::regex_match(version, parts, std::regex(R"((\d+)\.(\d+)\.(\d+))"))) << version;
  // The loaded library may be newer than the header, but not of another major version.
  EXPECT_EQ(std::stoi(parts[1].str()), NCCL_MAJOR) << version;
  int code = 0;
  ASSERT_EQ(ncclGetVersion(&code), ncclSuccess);
  EXPECT_EQ(std::stoi(parts[3].str()), code % 100) << version;
}

}  // namespace
