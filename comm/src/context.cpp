#include "zs/comm/context.hpp"

#include <cuda_runtime_api.h>

#include <utility>

#include "zs/comm/agreement.hpp"
#include "zs/comm/mpi_device_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"

namespace zs {

namespace {
constexpr std::string_view operation = "context";
}  // namespace

context::context(MPI_Comm comm, context_options options) : host_(std::make_unique<mpi_communicator>(comm)) {
  choose_gpu(options.cpu);
  if (gpu_ < 0) return;
  install_memory(options.memory);
  if (ranks_have_distinct_gpus(*host_)) {
    device_ = std::make_unique<nccl_communicator>(*host_);
    path_ = path::nccl;
  } else {
    device_ = std::make_unique<mpi_device_communicator>(*host_);
    path_ = path::mpi_device;
  }
  description_ += ", frames over " + std::string(device_->transport());
}

context::context(MPI_Comm comm, ncclComm_t nccl, context_options options)
    : host_(std::make_unique<mpi_communicator>(comm)) {
  agree_on(*host_, operation, "adopting the NCCL communicator", [&] {
    if (options.cpu) ZS_FAIL(error_code::invalid_argument, "options.cpu with an NCCL communicator to adopt");
    ZS_CUDA_TRY(cudaGetDevice(&gpu_));
    description_ = "GPU (" + query_device(gpu_).name + ")";
    stream_.emplace();
  });
  install_memory(options.memory);
  device_ = std::make_unique<nccl_communicator>(*host_, nccl);
  path_ = path::nccl;
  description_ += ", frames over nccl (adopted)";
}

context::~context() {
  // The collectives' buffers are gone with the device communicator and the stream; the
  // application's resource may go once it is no longer installed.
  device_.reset();
  if (stream_) ZS_CUDA_TRY_NOTHROW(cudaStreamSynchronize(stream_->get()));
  stream_.reset();
  if (previous_memory_) {
    set_device_resource(gpu_, *previous_memory_ == &pool_memory_resource() ? nullptr : *previous_memory_);
  }
}

void context::choose_gpu(bool cpu_only) {
  int devices = 0;
  bool const have_gpu = !cpu_only && cuda_device_available() && cudaGetDeviceCount(&devices) == cudaSuccess &&
                        devices > 0;
  if (!host_->all_ok(have_gpu)) {
    description_ = cpu_only ? "CPU reference codecs (options.cpu), frames over MPI"
                            : "CPU reference codecs over MPI: not every rank has a GPU";
    return;
  }
  agree_on(*host_, operation, "choosing this rank's GPU", [&] {
    int const gpu = device_for_rank(devices, host_->get());
    ZS_CUDA_TRY(cudaSetDevice(gpu));
    description_ = "GPU (" + query_device(gpu).name + ")";
    stream_.emplace();
    gpu_ = gpu;
  });
}

void context::install_memory(device_memory_resource* memory) {
  if (memory != nullptr) previous_memory_ = set_device_resource(gpu_, memory);
}

shuffled_table shuffle_table(context& ctx, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, shuffle_stats* stats) {
  memory_kind const path_memory = ctx.memory();
  memory_kind const input_memory = input.columns.empty() ? path_memory : input.columns.front().memory();
  table moved;
  const table* source = &input;
  if (input_memory != path_memory) {
    agree_on(ctx.host(), "shuffle_table", "copying the table to the path's memory", [&] {
      moved.names = input.names;
      for (auto const& c : input.columns) moved.columns.push_back(c.copy_to(path_memory, ctx.stream()));
    });
    source = &moved;
  }
  shuffled_table out = ctx.device() != nullptr
                           ? shuffle_table(*ctx.device(), *source, key_columns, options, ctx.stream(), stats)
                           : shuffle_table(ctx.host(), *source, key_columns, options, stats);
  if (input_memory != path_memory) {
    agree_on(ctx.host(), "shuffle_table", "copying the result back", [&] {
      for (auto& c : out.rows.columns) c = c.copy_to(input_memory, ctx.stream());
    });
  }
  return out;
}

}  // namespace zs
