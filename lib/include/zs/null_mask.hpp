// Null masks (validity bitmaps, zs/column.hpp) in the forms that operations need them in.
//
// A null mask holds bit (i % 8) of byte i / 8 for row i: 1 where the row holds a value, 0 where
// it is null. Operations that move rows (a shuffle slicing by rows, a codec that packs bytes)
// want one byte per row instead, and Arrow arrays may start their bitmap at any bit. These
// functions convert between the two and count nulls, on host memory (plain loops, done when
// they return) or device memory (kernels ordered on `stream`, which they do not wait for, except
// count_nulls, which returns a number). Every pointer is in `memory`; counts of 0 touch nothing.
//
//   std::vector<std::uint8_t> valid(col.size());
//   zs::expand_null_mask(col.view().null_mask, col.size(), valid.data(), zs::memory_kind::host);
//   // valid[i] == 1 where row i holds a value, 0 where it is null
//
// Bits of a mask's last byte past its last row are written as 0 and ignored on reading.
// Errors: zs::error (invalid_argument) for a null pointer where rows are to be read or written;
// unsupported for device memory on a machine without a usable GPU; cuda_error from a CUDA call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "zs/column.hpp"

namespace zs {

/// valid[i] = 1 where row i of `mask` holds a value, 0 where it is null, for i < count.
/// `mask` nullptr means no nulls: every byte is 1. `valid` holds count bytes.
void expand_null_mask(const std::uint8_t* mask, std::uint64_t count, std::uint8_t* valid, memory_kind memory,
                      cudaStream_t stream = nullptr);

/// The inverse: bit i of `mask` = (valid[i] != 0), for i < count; `mask` holds
/// null_mask_bytes(count) bytes, its padding bits 0.
void pack_null_mask(const std::uint8_t* valid, std::uint64_t count, std::uint8_t* mask, memory_kind memory,
                    cudaStream_t stream = nullptr);

/// The null rows among rows [0, count) of `mask` (0 for nullptr). On the device it waits for
/// `stream` to read the count.
std::uint64_t count_nulls(const std::uint8_t* mask, std::uint64_t count, memory_kind memory,
                          cudaStream_t stream = nullptr);

/// Bits [bit_offset, bit_offset + count) of `mask` into bits [0, count) of `out`, a byte-aligned
/// mask of null_mask_bytes(count) bytes (padding bits 0): an Arrow array's validity that starts
/// at bit `bit_offset` of its buffer, as a column's null mask. Reads no byte of `mask` past the
/// one holding bit bit_offset + count - 1. `mask` and `out` must not overlap.
void copy_null_mask_bits(const std::uint8_t* mask, std::uint64_t bit_offset, std::uint64_t count, std::uint8_t* out,
                         memory_kind memory, cudaStream_t stream = nullptr);

}  // namespace zs
