// Value types that columns hold and frames carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zs/hd.hpp"

namespace zs {

/// The on-wire id of a column's value type (docs/FORMAT.md, "Value types").
enum class value_type : std::uint8_t {
  int32 = 1,
  int64 = 2,
  uint32 = 3,
  uint64 = 4,
  float32 = 5,
  float64 = 6,
  string = 7,  // int64 offsets (count + 1) into a character buffer: the Arrow large-string layout
  int8 = 8,
  int16 = 9,
  uint8 = 10,
  uint16 = 11,
};

/// The largest on-wire id; ids run from 1 to this one without gaps (new types are appended).
inline constexpr std::uint8_t last_value_type_id = 11;

/// Bytes of one value for fixed-width types; 0 for strings.
ZS_HD constexpr std::size_t value_width(value_type type) noexcept {
  switch (type) {
    case value_type::int8:
    case value_type::uint8: return 1;
    case value_type::int16:
    case value_type::uint16: return 2;
    case value_type::int32:
    case value_type::uint32:
    case value_type::float32: return 4;
    case value_type::int64:
    case value_type::uint64:
    case value_type::float64: return 8;
    case value_type::string: return 0;
  }
  return 0;
}

ZS_HD constexpr bool is_valid(value_type type) noexcept {
  auto const v = static_cast<std::uint8_t>(type);
  return v >= 1 && v <= last_value_type_id;
}

/// The most values a string column or frame may hold: its count + 1 int64 offsets must take at
/// most 2^64 - 1 bytes.
inline constexpr std::uint64_t max_string_count = UINT64_MAX / sizeof(std::int64_t) - 1;

/// Whether `count` values of `type` have sizes that fit in 64 bits: count x width bytes of
/// values, or for strings (width 0) count + 1 offsets of 8 bytes. Sizes from frames, files and
/// peers are checked with this before anything is computed from them.
ZS_HD constexpr bool count_fits(value_type type, std::uint64_t count) noexcept {
  std::uint64_t const width = value_width(type);
  return width == 0 ? count <= max_string_count : count <= UINT64_MAX / width;
}
ZS_HD constexpr bool is_integer(value_type type) noexcept {
  switch (type) {
    case value_type::int8:
    case value_type::int16:
    case value_type::int32:
    case value_type::int64:
    case value_type::uint8:
    case value_type::uint16:
    case value_type::uint32:
    case value_type::uint64: return true;
    default: return false;
  }
}
/// Signed integers: int8, int16, int32, int64.
ZS_HD constexpr bool is_signed_integer(value_type type) noexcept {
  return type == value_type::int8 || type == value_type::int16 || type == value_type::int32 ||
         type == value_type::int64;
}
constexpr bool is_float(value_type type) noexcept {
  return type == value_type::float32 || type == value_type::float64;
}

std::string_view to_string(value_type type) noexcept;
/// Parses "int8", "uint16", "int32", "uint64", "float32", "string" ...; throws zs::error on an unknown name.
value_type parse_value_type(std::string_view name);

/// The value_type of a C++ value type, for templates.
template <typename T>
struct value_type_of;
template <> struct value_type_of<std::int8_t> { static constexpr value_type value = value_type::int8; };
template <> struct value_type_of<std::int16_t> { static constexpr value_type value = value_type::int16; };
template <> struct value_type_of<std::uint8_t> { static constexpr value_type value = value_type::uint8; };
template <> struct value_type_of<std::uint16_t> { static constexpr value_type value = value_type::uint16; };
template <> struct value_type_of<std::int32_t> { static constexpr value_type value = value_type::int32; };
template <> struct value_type_of<std::int64_t> { static constexpr value_type value = value_type::int64; };
template <> struct value_type_of<std::uint32_t> { static constexpr value_type value = value_type::uint32; };
template <> struct value_type_of<std::uint64_t> { static constexpr value_type value = value_type::uint64; };
template <> struct value_type_of<float> { static constexpr value_type value = value_type::float32; };
template <> struct value_type_of<double> { static constexpr value_type value = value_type::float64; };

}  // namespace zs
