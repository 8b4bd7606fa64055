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
  std::size_t shared_memory_per_block = 0;        // without opting in to more
  std::size_t shared_memory_per_block_optin = 0;  // the most a block may ask for
  int registers_per_sm = 0;
  int registers_per_block = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 32;
  /// Peak DRAM bandwidth from clock and bus width (bytes/s, one direction: read or write).
  double theoretical_bandwidth = 0;
  /// Measured device-to-device copy bandwidth (bytes read + written per second); 0 unless the
  /// profile came from query_device_with_bandwidth.
  double copy_bandwidth = 0;
};

/// Profiles of every visible device; empty when there is none (or no driver).
std::vector<device_profile> device_profiles();

/// The profile of device `ordinal`. Throws zs::error (cuda_error) for a device that is not there.
device_profile query_device(int ordinal);

/// The profile of device `ordinal`, queried once per process and cached (thread-safe; the
/// reference stays valid). Kernel launchers read it on every launch, so it must be cheap.
const device_profile& cached_device_profile(int ordinal);

/// The cached profile of the calling thread's current CUDA device.
const device_profile& current_device_profile();

/// query_device plus a copy-bandwidth measurement (measure_copy_bandwidth of `bytes`, median of
/// `repeats`) on `stream`, which must belong to device `ordinal` (the current device).
device_profile query_device_with_bandwidth(int ordinal, cudaStream_t stream,
                                           std::size_t bytes = std::size_t{1} << 30, int repeats = 10);

/// Measures the device-to-device copy bandwidth of the current device: bytes read plus bytes
/// written per second, the median of `repeats` copies of `bytes` bytes after a warm-up, timed
/// with CUDA events on `stream`. This is the memory-bound ceiling that kernel throughputs are
/// compared with.
double measure_copy_bandwidth(std::size_t bytes, int repeats, cudaStream_t stream);

}  // namespace zs
