// Null masks in their other forms (zs/null_mask.hpp): plain loops on the host, the kernels of
// kernels/common/null_mask_kernels.cu on the device.
#include "zs/null_mask.hpp"

#include <array>
#include <bit>
#include <string>

#include "common/null_mask_kernels.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace zs {
namespace {

namespace nk = kernels::null_mask;

constexpr std::array<unsigned, 4> null_mask_threads{128, 256, 512, 1024};

const kernel_spec& null_mask_spec [[maybe_unused]] = register_kernel({
    .name = nk::kernel_name,
    .defaults = {256, default_launch_waves, 0},
    .threads = null_mask_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "null masks: expanded to a byte per row, packed, counted, realigned, gathered by row",
});

void expect_pointer(const void* p, std::uint64_t count, const char* operation, const char* what) {
  if (count > 0 && p == nullptr) {
    ZS_FAIL(error_code::invalid_argument,
            std::string(operation) + ": " + what + " is null for " + std::to_string(count) + " rows");
  }
}

void expect_device(memory_kind memory, const char* operation) {
  if (memory == memory_kind::device && !cuda_device_available()) {
    ZS_FAIL(error_code::unsupported, std::string(operation) + ": device memory, but this machine has no usable CUDA device");
  }
}

// The last byte of a mask of `count` rows with its bits past the last row cleared.
std::uint8_t padded(std::uint8_t byte, std::uint64_t j, std::uint64_t count) {
  std::uint64_t const rows = count - 8 * j;
  return rows >= 8 ? byte : static_cast<std::uint8_t>(byte & ((1u << rows) - 1u));
}

}  // namespace

void expand_null_mask(const std::uint8_t* mask, std::uint64_t count, std::uint8_t* valid, memory_kind memory,
                      cudaStream_t stream) {
  constexpr const char* op = "expand_null_mask";
  expect_pointer(valid, count, op, "the output");
  if (count == 0) return;
  expect_device(memory, op);
  if (memory == memory_kind::device) {
    nk::expand(mask, count, valid, stream);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) valid[i] = row_is_valid(mask, i) ? 1 : 0;
}

void pack_null_mask(const std::uint8_t* valid, std::uint64_t count, std::uint8_t* mask, memory_kind memory,
                    cudaStream_t stream) {
  constexpr const char* op = "pack_null_mask";
  expect_pointer(valid, count, op, "the bytes to pack");
  expect_pointer(mask, count, op, "the output mask");
  if (count == 0) return;
  expect_device(memory, op);
  if (memory == memory_kind::device) {
    nk::pack(valid, count, mask, stream);
    return;
  }
  for (std::uint64_t j = 0; j < null_mask_bytes(count); ++j) {
    unsigned byte = 0;
    for (unsigned b = 0; b < 8 && 8 * j + b < count; ++b) byte |= (valid[8 * j + b] != 0 ? 1u : 0u) << b;
    mask[j] = static_cast<std::uint8_t>(byte);
  }
}

std::uint64_t count_nulls(const std::uint8_t* mask, std::uint64_t count, memory_kind memory, cudaStream_t stream) {
  if (mask == nullptr || count == 0) return 0;
  expect_device(memory, "count_nulls");
  if (memory == memory_kind::device) {
    device_buffer total(sizeof(unsigned long long), stream);
    ZS_CUDA_TRY(cudaMemsetAsync(total.data(), 0, sizeof(unsigned long long), stream));
    nk::count_nulls(mask, count, total.as<unsigned long long>(), stream);
    unsigned long long nulls = 0;
    copy_async(&nulls, total.data(), sizeof nulls, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    return nulls;
  }
  std::uint64_t valid = 0;
  for (std::uint64_t j = 0; j < null_mask_bytes(count); ++j) {
    valid += static_cast<std::uint64_t>(std::popcount(padded(mask[j], j, count)));
  }
  return count - valid;
}

void copy_null_mask_bits(const std::uint8_t* mask, std::uint64_t bit_offset, std::uint64_t count, std::uint8_t* out,
                         memory_kind memory, cudaStream_t stream) {
  constexpr const char* op = "copy_null_mask_bits";
  expect_pointer(mask, count, op, "the source mask");
  expect_pointer(out, count, op, "the output mask");
  if (count == 0) return;
  if (bit_offset > UINT64_MAX - count) {
    ZS_FAIL(error_code::invalid_argument, std::string(op) + ": bit offset " + std::to_string(bit_offset) + " + " +
                                              std::to_string(count) + " rows overflows");
  }
  expect_device(memory, op);
  if (memory == memory_kind::device) {
    nk::copy_bits(mask, bit_offset, count, out, stream);
    return;
  }
  std::uint64_t const source_bytes = null_mask_bytes(bit_offset + count);
  unsigned const shift = static_cast<unsigned>(bit_offset % 8);
  for (std::uint64_t j = 0; j < null_mask_bytes(count); ++j) {
    std::uint64_t const at = bit_offset / 8 + j;
    unsigned word = mask[at];
    if (shift != 0 && at + 1 < source_bytes) word |= static_cast<unsigned>(mask[at + 1]) << 8;
    out[j] = padded(static_cast<std::uint8_t>(word >> shift), j, count);
  }
}

}  // namespace zs
