#include <cub/device/device_memcpy.cuh>

#include "common/batch_ops.hpp"
#include "zs/error.hpp"

namespace zs::kernels {
namespace {

__global__ void gather_i64_kernel(const std::int64_t* values, const std::uint64_t* index, std::int64_t* out,
                                  std::size_t count) {
  std::size_t const i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < count) out[i] = values[index[i]];
}

}  // namespace

std::size_t copy_buffers_temp_bytes(std::size_t count) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, bytes, static_cast<const void* const*>(nullptr),
                                         static_cast<void* const*>(nullptr),
                                         static_cast<const std::uint64_t*>(nullptr),
                                         static_cast<std::int64_t>(count)));
  return bytes;
}

void copy_buffers(const void* const* src, void* const* dst, const std::uint64_t* sizes, std::size_t count,
                  void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(temp, temp_bytes, src, dst, sizes, static_cast<std::int64_t>(count),
                                         stream));
}

void gather_i64(const std::int64_t* values, const std::uint64_t* index, std::int64_t* out, std::size_t count,
                cudaStream_t stream) {
  if (count == 0) return;
  constexpr unsigned threads = 256;
  gather_i64_kernel<<<static_cast<unsigned>((count + threads - 1) / threads), threads, 0, stream>>>(
      values, index, out, count);
  ZS_CUDA_CHECK_LAUNCH();
}

}  // namespace zs::kernels
