// What a GPU offers: the facts that decide launch geometry and whether compression pays.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zs {

struct device_profile {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  int compute_major = 0;
  int compute_minor = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_memory_per_sm = 0;
  std::size_t shared_memory_per_block_optin = 0;  // the most a block may ask for
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  /// Peak DRAM bandwidth from clock and bus width (bytes/s, one direction: read or write).
  double theoretical_bandwidth = 0;
};

/// Profiles of every visible device; empty when there is none (or no driver).
std::vector<device_profile> device_profiles();

/// The profile of device `ordinal`. Throws zs::error (cuda_error) for a device that is not there.
device_profile query_device(int ordinal);

/// Measures the device-to-device copy bandwidth of the current device: bytes read plus bytes
/// written per second, the median of `repeats` copies of `bytes` bytes after a warm-up, timed
/// with CUDA events on `stream`. This is the memory-bound ceiling that kernel throughputs are
/// compared with.
double measure_copy_bandwidth(std::size_t bytes, int repeats, cudaStream_t stream);

}  // namespace zs
