// zs-sum64: the payload checksum of the wire format (docs/FORMAT.md, "Checksum").
//
// The payload is read as little-endian 64-bit words (the last one zero-padded). Each word is
// mixed with its index, and the mixed terms are added modulo 2^64. Addition is associative
// and commutative, so a GPU computes the same value with any split of the words over threads
// and blocks; the index inside each term keeps the checksum sensitive to reordering.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/hd.hpp"

namespace zs::hash {

/// The finalizer of MurmurHash3: every input bit affects every output bit.
ZS_HD constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/// The contribution of 64-bit word number `index` to the sum.
ZS_HD constexpr std::uint64_t term(std::uint64_t index, std::uint64_t word) noexcept {
  return mix64(word + (index + 1) * 0x9e3779b97f4a7c15ULL);
}

/// Turns the sum of all terms of a payload of `bytes` bytes into its checksum.
ZS_HD constexpr std::uint64_t finish(std::uint64_t sum, std::uint64_t bytes) noexcept {
  return mix64(sum ^ (bytes * 0xd6e8feb86659fd93ULL));
}

/// Little-endian 64-bit word `index` of `data` (of `bytes` bytes), zero-padded past the end.
ZS_HD inline std::uint64_t load_word(const std::byte* data, std::uint64_t bytes,
                                     std::uint64_t index) noexcept {
  std::uint64_t const begin = index * 8;
  std::uint64_t word = 0;
  for (std::uint64_t k = 0; k < 8 && begin + k < bytes; ++k) {
    word |= static_cast<std::uint64_t>(data[begin + k]) << (8 * k);
  }
  return word;
}

/// The checksum of `bytes` bytes at `data`, computed serially (CPU reference, small buffers).
ZS_HD inline std::uint64_t checksum(const std::byte* data, std::uint64_t bytes) noexcept {
  std::uint64_t sum = 0;
  std::uint64_t const words = (bytes + 7) / 8;
  for (std::uint64_t i = 0; i < words; ++i) sum += term(i, load_word(data, bytes, i));
  return finish(sum, bytes);
}

}  // namespace zs::hash
