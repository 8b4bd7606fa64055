#include "zs/device.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs {

device_profile query_device(int ordinal) {
  cudaDeviceProp p{};
  ZS_CUDA_TRY(cudaGetDeviceProperties(&p, ordinal));
  device_profile d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.global_memory_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.shared_memory_per_sm = p.sharedMemPerMultiprocessor;
  d.shared_memory_per_block = p.sharedMemPerBlock;
  d.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  d.registers_per_sm = p.regsPerMultiprocessor;
  d.registers_per_block = p.regsPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.warp_size = p.warpSize;
  int clock_khz = 0;
  int bus_bits = 0;
  ZS_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  ZS_CUDA_TRY(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal));
  // Double data rate: two transfers per clock.
  d.theoretical_bandwidth = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0);
  return d;
}

std::vector<device_profile> device_profiles() {
  std::vector<device_profile> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return out;
  }
  for (int i = 0; i < count; ++i) out.push_back(query_device(i));
  return out;
}

const device_profile& cached_device_profile(int ordinal) {
  // Profiles never change while a process runs; cudaGetDeviceProperties can take milliseconds,
  // far too long for every kernel launch. Entries are never erased, so references stay valid.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<const device_profile>> profiles;
  std::lock_guard<std::mutex> const lock(mutex);
  auto it = profiles.find(ordinal);
  if (it == profiles.end()) {
    it = profiles.emplace(ordinal, std::make_unique<const device_profile>(query_device(ordinal))).first;
  }
  return *it->second;
}

const device_profile& current_device_profile() {
  int ordinal = 0;
  ZS_CUDA_TRY(cudaGetDevice(&ordinal));
  return cached_device_profile(ordinal);
}

device_profile query_device_with_bandwidth(int ordinal, cudaStream_t stream, std::size_t bytes, int repeats) {
  int current = 0;
  ZS_CUDA_TRY(cudaGetDevice(&current));
  ZS_EXPECTS(current == ordinal, "the device to measure is the current device (its stream measures it)");
  device_profile d = query_device(ordinal);
  d.copy_bandwidth = measure_copy_bandwidth(bytes, repeats, stream);
  return d;
}

double measure_copy_bandwidth(std::size_t bytes, int repeats, cudaStream_t stream) {
  ZS_EXPECTS(bytes > 0 && repeats > 0, "a positive size and repeat count");
  device_buffer src(bytes, stream);
  device_buffer dst(bytes, stream);
  ZS_CUDA_TRY(cudaMemsetAsync(src.data(), 0x3c, bytes, stream));
  cuda_event start, stop;
  std::vector<float> ms;
  ZS_CUDA_TRY(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));  // warm-up
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    ZS_CUDA_TRY(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  double const seconds = ms[ms.size() / 2] / 1e3;
  return 2.0 * static_cast<double>(bytes) / seconds;
}

}  // namespace zs
