// The bitmap codec's format rules (docs/FORMAT.md, "Codec 11: bitmap"), shared by the CPU
// reference (lib/src/codecs/bitmap/bitmap_codec.cpp) and the GPU kernels, so that both write the
// same bytes and refuse the same frames.
//
// One byte per value (uint8, bool8): null masks as a byte per row, flags, small categories.
// The body (the whole payload: no column parameters) is
//
//   offset  size  field
//        0     1  mode: 0 constant, 1 bits, 2 bytes
//        1     7  zero
//        8     .  the mode's data:
//                   constant  1 byte, the value of every row
//                   bits      ceil(n / 8) bytes, row i in bit i % 8 of byte i / 8 (LSB first, as an
//                             Arrow validity bitmap); every row 0 or 1, bits past row n - 1 zero
//                   bytes     n bytes, the values as they are
//
// The encoder writes the smallest body the values allow, ties to the lower mode: constant when
// there is at least one row and every row has the same value, else bits when every row is 0 or
// 1 (an empty frame too), else bytes. So a frame of all-valid or all-null rows costs 64 + 9 bytes
// whatever its rows, and no frame exceeds raw by more than the 8 bytes of the body's header.
// Codec parameters: none, all 16 bytes zero.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

namespace zs::bitmap {

enum class mode : std::uint8_t { constant = 0, bits = 1, bytes = 2 };
inline constexpr std::uint8_t last_mode = static_cast<std::uint8_t>(mode::bytes);

/// The mode byte and its zero padding, before the mode's data.
inline constexpr std::uint64_t body_header_bytes = 8;

/// The value types the codec encodes: those of one byte a value that every byte value fits.
ZS_HD constexpr bool encodes(value_type type) noexcept {
  return type == value_type::uint8 || type == value_type::bool8;
}

/// Bytes of a mode's data for `rows` rows (the body after its header).
ZS_HD constexpr std::uint64_t data_bytes(mode m, std::uint64_t rows) noexcept {
  switch (m) {
    case mode::constant: return 1;
    case mode::bits: return rows / 8 + (rows % 8 != 0 ? 1 : 0);
    case mode::bytes: return rows;
  }
  return rows;
}

/// What a scan of a frame's values found: whether every row equals the first, and whether every
/// row is 0 or 1 (both hold for no rows).
struct content {
  bool all_equal = true;
  bool all_binary = true;
};

/// The encoder's choice: the smallest body, ties to the lower mode. A constant body (1 byte)
/// is never larger than a bits body of a row or more, and a bits body never larger than bytes,
/// so the choice reduces to the first mode the content allows.
ZS_HD constexpr mode choose(std::uint64_t rows, content c) noexcept {
  if (rows != 0 && c.all_equal) return mode::constant;
  if (c.all_binary) return mode::bits;
  return mode::bytes;
}

/// Payload bytes of a body in mode `m` for `rows` rows. Sizes of encoder sources fit: a
/// source's bytes are rows, and a frame of them needs 64 + 8 + rows bytes of buffer.
ZS_HD constexpr std::uint64_t payload_bytes(mode m, std::uint64_t rows) noexcept {
  return body_header_bytes + data_bytes(m, rows);
}

/// Writes the body's header: the mode byte and its padding.
ZS_HD inline void store_body_header(std::byte* payload, mode m) noexcept {
  payload[0] = static_cast<std::byte>(m);
  for (std::uint64_t k = 1; k < body_header_bytes; ++k) payload[k] = std::byte{0};
}

/// The mode of a body that passed check_frame.
ZS_HD inline mode mode_of(const std::byte* payload) noexcept { return static_cast<mode>(payload[0]); }

/// The value of row `row` of a body that passed check_frame.
ZS_HD inline std::uint8_t value_at(mode m, const std::byte* data, std::uint64_t row) noexcept {
  switch (m) {
    case mode::constant: return static_cast<std::uint8_t>(data[0]);
    case mode::bits: return static_cast<std::uint8_t>((static_cast<unsigned>(data[row / 8]) >> (row % 8)) & 1U);
    case mode::bytes: break;
  }
  return static_cast<std::uint8_t>(data[row]);
}

/// The bitmap codec's checks of a frame whose header passed validate_header (its payload bytes
/// lie inside the frame) and whose payload passed its checksum, before any value is written:
/// a type it encodes (else unsupported_type); zero codec parameters; a body header with a known
/// mode and zero padding; payload bytes exactly those of the mode and the header's rows; in bits
/// mode, zero bits past the last row (corrupt_payload for any of these). Reads only payload bytes
/// below the header's payload bytes: the body header once it is known to be there, and in bits
/// mode the last data byte once the size is known to include it.
ZS_HD inline frame_status check_frame(const frame_header& h, const std::byte* payload) noexcept {
  if (!encodes(h.type)) return frame_status::unsupported_type;
  for (std::size_t k = 0; k < codec_params_bytes; ++k) {
    if (h.params[k] != std::byte{0}) return frame_status::corrupt_payload;
  }
  if (h.payload_bytes < body_header_bytes) return frame_status::corrupt_payload;
  auto const m = static_cast<std::uint8_t>(payload[0]);
  if (m > last_mode) return frame_status::corrupt_payload;
  for (std::uint64_t k = 1; k < body_header_bytes; ++k) {
    if (payload[k] != std::byte{0}) return frame_status::corrupt_payload;
  }
  std::uint64_t const rows = h.value_count;
  // Compared by subtraction: body_header_bytes + rows may not fit in 64 bits for a forged count.
  if (h.payload_bytes - body_header_bytes != data_bytes(static_cast<mode>(m), rows)) {
    return frame_status::corrupt_payload;
  }
  if (static_cast<mode>(m) == mode::bits && rows % 8 != 0) {
    auto const last = static_cast<unsigned>(payload[body_header_bytes + rows / 8]);
    if ((last >> (rows % 8)) != 0) return frame_status::corrupt_payload;
  }
  return frame_status::ok;
}

}  // namespace zs::bitmap
