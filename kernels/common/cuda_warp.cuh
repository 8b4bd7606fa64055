// The Warp of common/warp_tools.hpp on the GPU, and how a warp kernel splits its work units over
// its warps. CUDA only: include it from .cu files.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "common/warp_tools.hpp"
#include "zs/frame.hpp"

namespace zs::kernels::warp {

/// Every lane of the warp: the programs run with all 32 lanes, none exited or diverged.
inline constexpr unsigned full_mask = 0xffffffffU;

/// The Warp of warp_tools.hpp on the GPU.
struct cuda_warp {
  unsigned lane;

  __device__ cuda_warp() : lane(threadIdx.x % 32) {}
  __device__ void sync() const { __syncwarp(); }

  template <typename T>
  __device__ T shfl(T v, unsigned src) const { return __shfl_sync(full_mask, v, src); }
  template <typename T>
  __device__ T shfl_up(T v, unsigned d) const { return __shfl_up_sync(full_mask, v, d); }
  template <typename T>
  __device__ T shfl_down(T v, unsigned d) const { return __shfl_down_sync(full_mask, v, d); }
  template <typename T>
  __device__ T shfl_xor(T v, unsigned m) const { return __shfl_xor_sync(full_mask, v, m); }
  __device__ bool any(bool p) const { return __any_sync(full_mask, p) != 0; }
  __device__ std::uint32_t ballot(bool p) const { return __ballot_sync(full_mask, p); }
  __device__ std::uint32_t reduce_min(std::uint32_t v) const { return __reduce_min_sync(full_mask, v); }
  __device__ std::uint32_t reduce_max(std::uint32_t v) const { return __reduce_max_sync(full_mask, v); }
  __device__ std::uint32_t reduce_add(std::uint32_t v) const { return __reduce_add_sync(full_mask, v); }

  __device__ void copy4(std::uint32_t* dst, const std::uint32_t* src) const { __pipeline_memcpy_async(dst, src, 4); }
  __device__ void copy16(word4* dst, const word4* src) const { __pipeline_memcpy_async(dst, src, 16); }
  __device__ void commit() const { __pipeline_commit(); }
  // __pipeline_wait_prior takes a constant. The programs leave at most two groups pending
  // (copy_staged: stages - 2); were one to ask for more, waiting for more would stay correct.
  __device__ void wait_copies(unsigned pending) const {
    if (pending == 0) {
      __pipeline_wait_prior(0);
    } else if (pending == 1) {
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(2);
    }
    __syncwarp();
  }

  // Other warps may set a frame's status while this one reads it.
  __device__ frame_status load_status(const frame_status* p) const {
    return *static_cast<const volatile frame_status*>(p);
  }
  __device__ void store_status(frame_status* p, frame_status s) const { *p = s; }
  __device__ void add(std::uint64_t* p, std::uint64_t v) const {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
};

/// The work units [begin, end) of one warp.
struct warp_range {
  std::uint64_t begin, end;
};
/// This warp's index in the grid.
__device__ inline std::uint64_t warp_index() { return (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / 32; }
/// Each warp takes a contiguous range of the work units (segments or tiles), of a multiple of
/// `granule` units (the last warps may get fewer, or none).
__device__ inline warp_range range_of_warp(std::uint64_t units, std::uint64_t granule = 1) {
  std::uint64_t const warps = std::uint64_t{gridDim.x} * blockDim.x / 32;
  std::uint64_t const warp = warp_index();
  std::uint64_t const per = ((units + warps - 1) / warps + granule - 1) / granule * granule;
  std::uint64_t const begin = warp * per < units ? warp * per : units;
  return {begin, begin + per < units ? begin + per : units};
}

}  // namespace zs::kernels::warp
