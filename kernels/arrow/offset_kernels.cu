// An element-wise transform: CUB's DeviceTransform picks its own launch geometry for it, which
// suits a copy-bound step that runs once per imported string column.
#include <cub/device/device_transform.cuh>

#include "arrow/offset_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::arrow {
namespace {

template <typename Offset>
struct minus_base {
  std::int64_t base;
  __device__ std::int64_t operator()(Offset offset) const { return static_cast<std::int64_t>(offset) - base; }
};

template <typename Offset>
void rebase(const Offset* in, std::int64_t base, std::uint64_t count, std::int64_t* out, cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceTransform::Transform(in, out, static_cast<std::int64_t>(count), minus_base<Offset>{base},
                                              stream));
}

}  // namespace

void rebase_offsets(const std::int32_t* in, std::int64_t base, std::uint64_t count, std::int64_t* out,
                    cudaStream_t stream) {
  rebase(in, base, count, out, stream);
}

void rebase_offsets(const std::int64_t* in, std::int64_t base, std::uint64_t count, std::int64_t* out,
                    cudaStream_t stream) {
  rebase(in, base, count, out, stream);
}

}  // namespace zs::kernels::arrow
