// Device steps on null masks (validity bitmaps): zs/null_mask.hpp is their host side, and the
// partitioner gathers masks with gather_null_mask. Launchers take device arrays and a stream and
// never synchronise; per-row kernels launch with the geometry of the registered kernel
// "null_mask" (lib/src/null_mask.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zs::kernels::null_mask {

/// The name of the kernel spec these kernels launch with.
inline constexpr const char* kernel_name = "null_mask";

/// valid[i] = bit i of mask (1 for every row where mask is nullptr), i < count.
void expand(const std::uint8_t* mask, std::uint64_t count, std::uint8_t* valid, cudaStream_t stream);

/// Bit i of mask = (valid[i] != 0), i < count; the last byte's padding bits 0.
void pack(const std::uint8_t* valid, std::uint64_t count, std::uint8_t* mask, cudaStream_t stream);

/// Adds the null rows among rows [0, count) of mask to *nulls (device memory).
void count_nulls(const std::uint8_t* mask, std::uint64_t count, unsigned long long* nulls, cudaStream_t stream);

/// Bits [bit_offset, bit_offset + count) of mask into bits [0, count) of out (padding bits 0).
void copy_bits(const std::uint8_t* mask, std::uint64_t bit_offset, std::uint64_t count, std::uint8_t* out,
               cudaStream_t stream);

/// Bit i of out = bit rows[i] of mask, i < count (padding bits 0): a mask gathered with its rows.
void gather(const std::uint8_t* mask, const std::uint64_t* rows, std::uint64_t count, std::uint8_t* out,
            cudaStream_t stream);

}  // namespace zs::kernels::null_mask
