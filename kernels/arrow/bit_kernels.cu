// One thread per output byte, launched through cub::DeviceFor::Bulk, which picks its own
// geometry: these steps run once per imported or exported column and are bound by memory.
#include <cub/device/device_for.cuh>

#include "arrow/bit_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::arrow {
namespace {

// Bytes of a bitmap of `count` bits.
constexpr std::uint64_t bitmap_bytes(std::uint64_t count) { return count / 8 + (count % 8 != 0); }

// The 8 bits of `in` from bit `bit` on (bits past the bitmap's last byte are not read beyond
// `last_byte`), as one byte.
__device__ inline std::uint8_t bits_at(const std::uint8_t* in, std::uint64_t bit, std::uint64_t last_byte) {
  std::uint64_t const byte = bit / 8;
  unsigned const shift = static_cast<unsigned>(bit % 8);
  unsigned value = in[byte] >> shift;
  if (shift != 0 && byte + 1 <= last_byte) value |= static_cast<unsigned>(in[byte + 1]) << (8 - shift);
  return static_cast<std::uint8_t>(value);
}

// Keeps the low `count - 8 j` bits of output byte j where the bitmap ends inside it.
__device__ inline std::uint8_t trimmed(std::uint8_t value, std::uint64_t j, std::uint64_t count) {
  std::uint64_t const left = count - j * 8;
  return left >= 8 ? value : static_cast<std::uint8_t>(value & ((1U << left) - 1U));
}

struct copy_bits_op {
  const std::uint8_t* in;
  std::uint64_t first_bit;
  std::uint64_t count;
  std::uint8_t* out;
  __device__ void operator()(std::uint64_t j) const {
    std::uint64_t const last_byte = (first_bit + count - 1) / 8;
    out[j] = trimmed(bits_at(in, first_bit + j * 8, last_byte), j, count);
  }
};

struct unpack_bits_op {
  const std::uint8_t* in;
  std::uint64_t first_bit;
  std::uint8_t* out;
  __device__ void operator()(std::uint64_t i) const {
    std::uint64_t const bit = first_bit + i;
    out[i] = static_cast<std::uint8_t>((in[bit / 8] >> (bit % 8)) & 1U);
  }
};

struct pack_bits_op {
  const std::uint8_t* in;
  std::uint64_t count;
  std::uint8_t* out;
  __device__ void operator()(std::uint64_t j) const {
    unsigned value = 0;
    std::uint64_t const begin = j * 8;
    std::uint64_t const end = begin + 8 < count ? begin + 8 : count;
    for (std::uint64_t i = begin; i < end; ++i) value |= static_cast<unsigned>(in[i] != 0) << (i - begin);
    out[j] = static_cast<std::uint8_t>(value);
  }
};

}  // namespace

void copy_bits(const std::uint8_t* in, std::uint64_t first_bit, std::uint64_t count, std::uint8_t* out,
               cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceFor::Bulk(bitmap_bytes(count), copy_bits_op{in, first_bit, count, out}, stream));
}

void unpack_bits(const std::uint8_t* in, std::uint64_t first_bit, std::uint64_t count, std::uint8_t* out,
                 cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceFor::Bulk(count, unpack_bits_op{in, first_bit, out}, stream));
}

void pack_bits(const std::uint8_t* in, std::uint64_t count, std::uint8_t* out, cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceFor::Bulk(bitmap_bytes(count), pack_bits_op{in, count, out}, stream));
}

}  // namespace zs::kernels::arrow
