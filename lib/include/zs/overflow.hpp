// Size arithmetic that says when it would wrap.
//
// Sizes that come from outside (frame headers, files, peers, arguments) are multiplied and
// added before anything is allocated or read; an unsigned sum or product that wraps gives a
// small, plausible size and a read or write far past a buffer. Every such computation asks
// these first. They run on the host and on the GPU (frame validation uses them).
#pragma once

#include <cstdint>

#include "zs/hd.hpp"

namespace zs {

/// Whether a x b does not fit in 64 bits.
ZS_HD constexpr bool mul_overflows(std::uint64_t a, std::uint64_t b) noexcept {
  return a != 0 && b > UINT64_MAX / a;
}

/// Whether a + b does not fit in 64 bits.
ZS_HD constexpr bool add_overflows(std::uint64_t a, std::uint64_t b) noexcept { return b > UINT64_MAX - a; }

}  // namespace zs
