#include "common/null_mask_kernels.hpp"

#include <optional>

#include "common/launch.hpp"
#include "zs/error.hpp"

namespace zs::kernels::null_mask {
namespace {

// One launch over `items` items of one thread each, with the geometry of the "null_mask" spec
// (`bytes`: what it reads, for the choice of its size class).
template <class... Params, class... Args>
void launch_items(void (*kernel)(Params...), std::uint64_t items, std::uint64_t bytes, cudaStream_t stream,
                  Args... args) {
  if (items == 0) return;
  launch_choice const choice = choose_registered_launch(kernel_name, std::nullopt, bytes);
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), choice, items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

__device__ inline std::uint8_t bit_of(const std::uint8_t* mask, std::uint64_t row) {
  return static_cast<std::uint8_t>((mask[row >> 3] >> (row & 7)) & 1u);
}

// The bits of output byte j past the last of `count` rows cleared.
__device__ inline unsigned padded(unsigned byte, std::uint64_t j, std::uint64_t count) {
  std::uint64_t const first = 8 * j;
  return count - first >= 8 ? byte : byte & ((1u << (count - first)) - 1u);
}

__global__ void expand_kernel(const std::uint8_t* mask, std::uint64_t count, std::uint8_t* valid) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) {
    valid[i] = mask == nullptr ? std::uint8_t{1} : bit_of(mask, i);
  }
}

// One thread per output byte: its eight rows.
__global__ void pack_kernel(const std::uint8_t* valid, std::uint64_t count, std::uint8_t* mask) {
  std::uint64_t const bytes = (count + 7) / 8;
  for (std::uint64_t j = first_item(); j < bytes; j += item_stride()) {
    unsigned byte = 0;
    std::uint64_t const first = 8 * j;
    for (unsigned b = 0; b < 8 && first + b < count; ++b) byte |= (valid[first + b] != 0 ? 1u : 0u) << b;
    mask[j] = static_cast<std::uint8_t>(byte);
  }
}

// One thread per mask byte; one atomic per warp (every block is whole warps).
__global__ void count_nulls_kernel(const std::uint8_t* mask, std::uint64_t count, unsigned long long* nulls) {
  std::uint64_t const bytes = (count + 7) / 8;
  unsigned long long mine = 0;
  for (std::uint64_t j = first_item(); j < bytes; j += item_stride()) {
    std::uint64_t const rows = count - 8 * j >= 8 ? 8 : count - 8 * j;
    mine += rows - static_cast<unsigned long long>(__popc(padded(mask[j], j, count)));
  }
  for (int lane_gap = 16; lane_gap > 0; lane_gap /= 2) mine += __shfl_down_sync(0xffffffffu, mine, lane_gap);
  if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(nulls, mine);
}

// One thread per output byte: bits [8j, 8j + 8) of the output are bits [offset + 8j, ...) of the
// source, from its byte (offset + 8j) / 8 and, when the offset is not byte-aligned, the next one
// (only where that byte holds one of the bits copied).
__global__ void copy_bits_kernel(const std::uint8_t* mask, std::uint64_t bit_offset, std::uint64_t count,
                                 std::uint8_t* out) {
  std::uint64_t const bytes = (count + 7) / 8;
  std::uint64_t const source_bytes = (bit_offset + count + 7) / 8;
  unsigned const shift = static_cast<unsigned>(bit_offset & 7);
  for (std::uint64_t j = first_item(); j < bytes; j += item_stride()) {
    std::uint64_t const at = bit_offset / 8 + j;
    unsigned word = mask[at];
    if (shift != 0 && at + 1 < source_bytes) word |= static_cast<unsigned>(mask[at + 1]) << 8;
    out[j] = static_cast<std::uint8_t>(padded((word >> shift) & 0xffu, j, count));
  }
}

__global__ void gather_kernel(const std::uint8_t* mask, const std::uint64_t* rows, std::uint64_t count,
                              std::uint8_t* out) {
  std::uint64_t const bytes = (count + 7) / 8;
  for (std::uint64_t j = first_item(); j < bytes; j += item_stride()) {
    unsigned byte = 0;
    std::uint64_t const first = 8 * j;
    for (unsigned b = 0; b < 8 && first + b < count; ++b) byte |= static_cast<unsigned>(bit_of(mask, rows[first + b])) << b;
    out[j] = static_cast<std::uint8_t>(byte);
  }
}

}  // namespace

void expand(const std::uint8_t* mask, std::uint64_t count, std::uint8_t* valid, cudaStream_t stream) {
  launch_items(expand_kernel, count, count, stream, mask, count, valid);
}

void pack(const std::uint8_t* valid, std::uint64_t count, std::uint8_t* mask, cudaStream_t stream) {
  launch_items(pack_kernel, (count + 7) / 8, count, stream, valid, count, mask);
}

void count_nulls(const std::uint8_t* mask, std::uint64_t count, unsigned long long* nulls, cudaStream_t stream) {
  launch_items(count_nulls_kernel, (count + 7) / 8, (count + 7) / 8, stream, mask, count, nulls);
}

void copy_bits(const std::uint8_t* mask, std::uint64_t bit_offset, std::uint64_t count, std::uint8_t* out,
               cudaStream_t stream) {
  launch_items(copy_bits_kernel, (count + 7) / 8, (count + 7) / 8, stream, mask, bit_offset, count, out);
}

void gather(const std::uint8_t* mask, const std::uint64_t* rows, std::uint64_t count, std::uint8_t* out,
            cudaStream_t stream) {
  launch_items(gather_kernel, (count + 7) / 8, count * 8, stream, mask, rows, count, out);
}

}  // namespace zs::kernels::null_mask
