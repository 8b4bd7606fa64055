#include <cub/device/device_memcpy.cuh>

#include "common/batch_ops.hpp"
#include "common/launch.hpp"
#include "zs/error.hpp"

namespace zs::kernels {
namespace {

__global__ void gather_i64_kernel(const std::int64_t* values, const std::uint64_t* index, std::int64_t* out,
                                  std::size_t count) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) out[i] = values[index[i]];
}

__global__ void store_words_kernel(const std::uint64_t* from, std::uint64_t* to, std::size_t count) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) to[i] = from[i];
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
  launch_choice const choice = choose_registered_launch("gather", value_type::int64, count * sizeof(std::int64_t));
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(gather_i64_kernel), choice, count);
  observed_launch(r, stream, [&] {
    gather_i64_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(values, index, out, count);
  });
}

void store_words(const std::uint64_t* from, std::uint64_t* to, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  // An item kernel over 8-byte items like gather's: its geometry.
  launch_choice const choice = choose_registered_launch("gather", value_type::int64, count * sizeof(std::uint64_t));
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(store_words_kernel), choice, count);
  observed_launch(r, stream, [&] { store_words_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(from, to, count); });
}

}  // namespace zs::kernels
