// How kernels are launched: the tunables come from the tuning table (zs/tuning.hpp), the grid
// from the kernel's occupancy on the current device and the launch policy, and every launch is
// shown to the launch observer. Kernels loop over their work units with a grid stride, so any
// grid this gives is correct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/error.hpp"
#include "zs/tuning.hpp"

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
