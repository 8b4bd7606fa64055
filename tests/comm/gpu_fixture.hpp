// The fixture of the GPU tests under mpirun, parameterised by the device communicator's backend.
// Each rank uses GPU (local rank mod GPU count). NCCL needs a GPU per rank, so its tests skip
// (with the reason) when ranks outnumber GPUs; the staged MPI backend lets ranks share a GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/mpi_device_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace zs::test {

enum class backend { nccl, mpi_staged };

/// Every backend, for INSTANTIATE_TEST_SUITE_P.
inline auto all_backends() { return ::testing::Values(backend::nccl, backend::mpi_staged); }

/// The test name suffix of a backend.
inline std::string backend_name(const ::testing::TestParamInfo<backend>& info) {
  return info.param == backend::nccl ? "nccl" : "mpi_staged";
}

class gpu_comm_test : public ::testing::TestWithParam<backend> {
 protected:
  void SetUp() override {
    ZS_REQUIRE_GPU();
    int devices = 0;
    ZS_CUDA_TRY(cudaGetDeviceCount(&devices));
    host_ = std::make_unique<mpi_communicator>();
    ZS_CUDA_TRY(cudaSetDevice(device_for_rank(devices)));
    if (GetParam() == backend::nccl && !ranks_have_distinct_gpus(*host_)) {
      GTEST_SKIP() << "NCCL needs one GPU per rank: " << host_->size() << " ranks, " << devices << " GPU(s)";
    }
    stream_ = std::make_unique<cuda_stream>();
    if (GetParam() == backend::nccl) {
      device_ = std::make_unique<nccl_communicator>(*host_);
    } else {
      // Small chunks, so a staged transfer runs its pipeline over many pieces.
      device_ = std::make_unique<mpi_device_communicator>(*host_, mpi_device_communicator::mode::staged,
                                                          std::uint64_t{64} << 10);
    }
  }

  std::vector<column> to_device(const std::vector<column>& host) {
    std::vector<column> out;
    for (auto const& c : host) out.push_back(c.copy_to(memory_kind::device, *stream_));
    return out;
  }
  std::vector<column> to_host(const std::vector<column>& device) {
    std::vector<column> out;
    for (auto const& c : device) out.push_back(c.copy_to(memory_kind::host, *stream_));
    return out;
  }

  std::unique_ptr<mpi_communicator> host_;
  std::unique_ptr<cuda_stream> stream_;
  std::unique_ptr<device_communicator> device_;
};

}  // namespace zs::test
