// The raw codec's format rules (docs/FORMAT.md, "Codec 0: raw"), shared by the CPU reference
// (lib/src/codecs/raw_codec.cpp) and the GPU kernels, so that both refuse the same frames.
//
//   fixed width: the count values as they are; payload bytes = raw bytes.
//   strings:     count + 1 int64 offsets relative to the first character (the first 0, never
//                decreasing, the last equal to raw bytes), then the characters;
//                payload bytes = 8 x (count + 1) + raw bytes.
//   parameters:  none; all 16 bytes zero.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/overflow.hpp"
#include "zs/types.hpp"

namespace zs::raw {

/// A size no frame can have: a frame needs 64 header bytes besides its payload.
inline constexpr std::uint64_t unrepresentable_bytes = UINT64_MAX;

/// Payload bytes of a raw frame of `count` values of `type` and `raw_bytes` uncompressed bytes;
/// unrepresentable_bytes when they do not fit in 64 bits.
ZS_HD constexpr std::uint64_t payload_bytes(value_type type, std::uint64_t count, std::uint64_t raw_bytes) noexcept {
  if (type != value_type::string) return raw_bytes;
  if (count > max_string_count) return unrepresentable_bytes;
  std::uint64_t const offsets = (count + 1) * sizeof(std::int64_t);
  return add_overflows(offsets, raw_bytes) ? unrepresentable_bytes : offsets + raw_bytes;
}

/// Whether all 16 bytes of codec parameters are zero, as the raw format requires.
ZS_HD inline bool params_are_zero(const frame_header& h) noexcept {
  for (std::size_t k = 0; k < codec_params_bytes; ++k) {
    if (h.params[k] != std::byte{0}) return false;
  }
  return true;
}

/// The raw codec's checks of a header that passed validate_header, before any payload byte is
/// read: zero parameters, and payload bytes as the format gives them (so a string frame's
/// payload holds its count + 1 offsets: its count cannot exceed what the payload can hold).
/// corrupt_payload when either fails.
ZS_HD inline frame_status check_header(const frame_header& h) noexcept {
  if (!params_are_zero(h)) return frame_status::corrupt_payload;
  std::uint64_t const expected = payload_bytes(h.type, h.value_count, h.raw_bytes);
  if (expected == unrepresentable_bytes || h.payload_bytes != expected) return frame_status::corrupt_payload;
  return frame_status::ok;
}

}  // namespace zs::raw
