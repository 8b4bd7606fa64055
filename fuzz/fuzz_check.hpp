// What the fuzz targets share: a check that stops the run with a message, and byte helpers.
//
// A target that finds a broken invariant must crash, so that libFuzzer saves the input that
// broke it (crash-*) and stops; an exception or a return would pass unnoticed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

/// Stops the fuzz run, printing `what` and where, when `condition` is false.
#define ZS_FUZZ_CHECK(condition, what)                                                         \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s (%s)\n", __FILE__, __LINE__, what,  \
                   #condition);                                                                \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace zs::fuzz {

/// The byte every target buffer is filled with before a decode, to see what was written.
inline constexpr std::byte canary{0xa5};

/// Whether every byte of `bytes` is still the canary.
inline bool untouched(std::span<const std::byte> bytes) noexcept {
  for (std::byte b : bytes) {
    if (b != canary) return false;
  }
  return true;
}

/// Whether two byte ranges hold the same bytes (either may be empty, with a null pointer).
inline bool same_bytes(const void* a, const void* b, std::size_t bytes) noexcept {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

/// A copy of the fuzz input as bytes.
inline std::vector<std::byte> bytes_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> out(size);
  if (size != 0) std::memcpy(out.data(), data, size);
  return out;
}

}  // namespace zs::fuzz
