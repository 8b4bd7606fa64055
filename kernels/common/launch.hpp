// How kernels are launched: the tunables come from the tuning table (host code chooses them;
// device code sees only zs/launch.hpp and names its registered kernel spec by name), the grid
// from the kernel's occupancy on the current device and the launch policy, and every launch is
// shown to the launch observer. Kernels loop over their work units with a grid stride, so any
// grid this gives is correct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "zs/error.hpp"
#include "zs/launch.hpp"
#include "zs/types.hpp"

namespace zs::kernels {

/// The launch of `kernel_fn` (a __global__ function) for `choice`: its occupancy at
/// choice.params.threads threads and `shared_bytes` of dynamic shared memory on the current
/// device (queried once per kernel, block size and device), then launch_policy over
/// `work_units`.
launch_record plan_launch(const void* kernel_fn, const launch_choice& choice, std::uint64_t work_units,
                          std::size_t shared_bytes = 0);

/// plan_launch for a kernel of one thread per item: its work units are blocks' worth of items.
inline launch_record plan_item_launch(const void* kernel_fn, const launch_choice& choice, std::uint64_t items) {
  std::uint64_t const threads = choice.params.threads == 0 ? 1 : choice.params.threads;
  return plan_launch(kernel_fn, choice, (items + threads - 1) / threads);
}

/// The choice for the small kernels of one thread per frame, segment or chunk.
launch_choice frame_ops_choice();

/// The choice for a launch of the kernel registered as `kernel` (zs::choose_launch with the
/// process-wide table on the current device), for launchers whose host code does not choose.
/// Throws zs::error (invalid_argument) when no kernel is registered under that name.
launch_choice choose_registered_launch(std::string_view kernel, std::optional<value_type> type,
                                       std::uint64_t batch_bytes);

/// The defaults of the kernel registered as `kernel`. Throws as choose_registered_launch.
launch_params registered_defaults(std::string_view kernel);

/// Throws zs::error (invalid_argument) unless `choice` was made for the kernel registered as
/// `kernel` and its params are ones that kernel accepts: a launcher's check of what the host
/// code handed it, naming the kernel and what is wrong.
void expect_launch_of(std::string_view kernel, const launch_choice& choice);

/// Enqueues the launch `record` describes (`enqueue` makes the <<<...>>> call on `stream`)
/// between the launch observer's calls, and checks it. Nothing is launched for an empty grid.
template <class Enqueue>
void observed_launch(const launch_record& record, cudaStream_t stream, Enqueue&& enqueue) {
  if (record.geometry.grid == 0) return;
  launch_observer* const observer = current_launch_observer();
  if (observer != nullptr) observer->before_launch(record, stream);
  enqueue();
  ZS_CUDA_CHECK_LAUNCH();
  if (observer != nullptr) observer->after_launch(record, stream);
}

#if defined(__CUDACC__)
/// Grid-stride loops over items of one thread each: for (i = first_item(); i < n; i += item_stride()).
__device__ inline std::uint64_t first_item() { return blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; }
__device__ inline std::uint64_t item_stride() { return std::uint64_t{gridDim.x} * blockDim.x; }
#endif

}  // namespace zs::kernels
