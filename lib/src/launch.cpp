// Occupancy queries for kernel launches (kernels/common/launch.hpp).
#include <map>
#include <mutex>
#include <tuple>

#include "common/launch.hpp"

namespace zs::kernels {
namespace {

// The occupancy calculator costs a driver call; a kernel's answer for one block size and shared
// memory size on one device never changes, and launches repeat the same few combinations.
int blocks_per_sm(const void* kernel_fn, int device, unsigned threads, std::size_t shared_bytes) {
  using key = std::tuple<const void*, int, unsigned, std::size_t>;
  static std::mutex mutex;
  static std::map<key, int> cache;
  key const k{kernel_fn, device, threads, shared_bytes};
  {
    std::lock_guard<std::mutex> const lock(mutex);
    if (auto const it = cache.find(k); it != cache.end()) return it->second;
  }
  int blocks = 0;
  ZS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_fn, static_cast<int>(threads),
                                                            shared_bytes));
  std::lock_guard<std::mutex> const lock(mutex);
  cache.emplace(k, blocks);
  return blocks;
}

}  // namespace

launch_record plan_launch(const void* kernel_fn, const launch_choice& choice, std::uint64_t work_units,
                          std::size_t shared_bytes) {
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  device_profile const& profile = cached_device_profile(device);
  launch_record r;
  r.choice = choice;
  r.shared_bytes = shared_bytes;
  r.work_units = work_units;
  int const occupancy = work_units == 0 ? 1 : blocks_per_sm(kernel_fn, device, choice.params.threads, shared_bytes);
  r.geometry = launch_policy(profile, choice.params, occupancy, work_units);
  return r;
}

launch_choice frame_ops_choice() { return choose_launch(kernel_id::frame_ops, std::nullopt, 0); }

}  // namespace zs::kernels
