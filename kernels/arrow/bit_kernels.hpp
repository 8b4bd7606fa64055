// Device steps of the Arrow interop (lib/src/arrow.cpp) that move bits: Arrow's bool arrays and
// validity bitmaps are bitmaps that may start at any bit (an array's offset), while a zshuffle
// bool8 column holds a byte per value and a null mask starts at bit 0 of its first byte.
//
// Bitmaps are Arrow's: bit i of a bitmap is bit (i % 8) of byte i / 8, least significant first.
// Every function runs on `stream` (device memory, no synchronisation) and does nothing for a
// count of 0.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zs::kernels::arrow {

/// out (null_mask_bytes(count) bytes) = bits [first_bit, first_bit + count) of `in`, shifted to
/// start at bit 0; the bits of the last byte past `count` are 0. For slices whose offset is not
/// a multiple of 8 (a byte copy serves the others).
void copy_bits(const std::uint8_t* in, std::uint64_t first_bit, std::uint64_t count, std::uint8_t* out,
               cudaStream_t stream);

/// out[i] = bit first_bit + i of `in` (0 or 1), for i < count: an Arrow bool array's values as
/// a bool8 column's bytes.
void unpack_bits(const std::uint8_t* in, std::uint64_t first_bit, std::uint64_t count, std::uint8_t* out,
                 cudaStream_t stream);

/// Bit i of out (null_mask_bytes(count) bytes) = (in[i] != 0), for i < count; the bits of the
/// last byte past `count` are 0: a bool8 column's bytes as an Arrow bool array's values.
void pack_bits(const std::uint8_t* in, std::uint64_t count, std::uint8_t* out, cudaStream_t stream);

}  // namespace zs::kernels::arrow
