// zs::context: where a job's collectives run, chosen once.
//
//   zs::mpi_environment mpi(&argc, &argv);
//   zs::context ctx;                       // over MPI_COMM_WORLD; picks this rank's GPU
//   auto mine = zs::shuffle_table(ctx, orders, {0}, {});
//   std::puts(ctx.description().c_str());  // "GPU (NVIDIA H100 80GB HBM3), frames over nccl"
//
// The path, the same on every rank:
//   nccl        every rank has a GPU of its own: GPU codecs, NCCL between the GPUs;
//   mpi_device  every rank has a GPU but some share one (NCCL cannot): GPU codecs, device bytes
//               through MPI (CUDA-aware where the library is, else staged through pinned host
//               memory; zs/comm/mpi_device_communicator.hpp);
//   cpu         some rank has no GPU, or options.cpu: the CPU reference codecs over MPI, host
//               memory only; the same formats and protocol.
// A context can instead adopt the application's MPI communicator and NCCL communicator, and
// installs the application's device memory resource (zs/memory.hpp) for its lifetime.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "zs/column.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/memory.hpp"

namespace zs {

struct context_options {
  /// The CPU path even where every rank has a GPU.
  bool cpu = false;
  /// Device memory for everything the context's collectives allocate on this rank's GPU
  /// (installed with set_device_resource while the context lives, then the previous one is
  /// put back); null: the device's pool.
  device_memory_resource* memory = nullptr;
};

class context {
 public:
  enum class path : std::uint8_t { nccl, mpi_device, cpu };

  /// Over the ranks of `comm` (duplicated; MPI must be initialised, see mpi_environment):
  /// selects this rank's GPU (device_for_rank: local rank modulo the GPUs, or ZS_DEVICES) and
  /// chooses the path as above. Collective over `comm`; a failure on one rank is every rank's
  /// zs::error.
  explicit context(MPI_Comm comm = MPI_COMM_WORLD, context_options options = {});
  /// Adopts `nccl`, made by the application over the same ranks as `comm` in the same order,
  /// on the GPU this rank has selected (cudaSetDevice before): the nccl path. `nccl` stays the
  /// application's (see nccl_communicator's adopting constructor). Collective over `comm`.
  context(MPI_Comm comm, ncclComm_t nccl, context_options options = {});
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  path which() const noexcept { return path_; }
  /// "GPU (NVIDIA H100 80GB HBM3), frames over nccl", or the CPU path and why.
  const std::string& description() const noexcept { return description_; }
  /// Where this path's columns live: device memory on the GPU paths, host memory on the CPU one.
  memory_kind memory() const noexcept { return path_ == path::cpu ? memory_kind::host : memory_kind::device; }

  communicator& host() noexcept { return *host_; }
  /// The device communicator; null on the CPU path.
  device_communicator* device() noexcept { return device_.get(); }
  /// The stream the context's GPU work runs on; null on the CPU path.
  cudaStream_t stream() const noexcept { return stream_ ? stream_->get() : nullptr; }
  /// This rank's GPU; -1 on the CPU path.
  int gpu() const noexcept { return gpu_; }

 private:
  void choose_gpu(bool cpu_only);
  void install_memory(device_memory_resource* memory);

  std::unique_ptr<mpi_communicator> host_;
  path path_ = path::cpu;
  int gpu_ = -1;
  std::string description_;
  std::optional<cuda_stream> stream_;
  std::unique_ptr<device_communicator> device_;
  std::optional<device_memory_resource*> previous_memory_;
};

/// shuffle_table (zs/comm/shuffle_table.hpp) on the context's path. A table in the other memory
/// than the path's is copied there first, and the result comes back in the input's memory, so
/// any table works on any path; device results are ready on ctx.stream().
shuffled_table shuffle_table(context& ctx, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, shuffle_stats* stats = nullptr);

}  // namespace zs
