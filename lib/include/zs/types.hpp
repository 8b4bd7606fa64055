// Value types that columns hold and frames carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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
  bool8 = 12,  // one byte per value, 0 (false) or 1 (true): cuDF's BOOL8, not Arrow's bitmap
  int128 = 13,  // 16 bytes per value, two's complement, little-endian: Arrow's decimal128 layout
};

/// The largest on-wire id; ids run from 1 to this one without gaps (new types are appended).
inline constexpr std::uint8_t last_value_type_id = 13;

/// Bytes of one value for fixed-width types; 0 for strings.
ZS_HD constexpr std::size_t value_width(value_type type) noexcept {
  switch (type) {
    case value_type::int8:
    case value_type::uint8:
    case value_type::bool8: return 1;
    case value_type::int16:
    case value_type::uint16: return 2;
    case value_type::int32:
    case value_type::uint32:
    case value_type::float32: return 4;
    case value_type::int64:
    case value_type::uint64:
    case value_type::float64: return 8;
    case value_type::int128: return 16;
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
/// Integer types, bool8 among them: its storage is a uint8 (0 or 1), and every path that takes
/// integers (the bitpack codec, key hashing) takes bool8 as it takes uint8. int128 is not one:
/// no integer codec packs 128-bit values, so it travels raw, and it is hashed and compared as
/// its own type (int128_value).
ZS_HD constexpr bool is_integer(value_type type) noexcept {
  switch (type) {
    case value_type::bool8:
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
/// Signed integers of the integer codecs: int8, int16, int32, int64 (not int128, see above).
ZS_HD constexpr bool is_signed_integer(value_type type) noexcept {
  return type == value_type::int8 || type == value_type::int16 || type == value_type::int32 ||
         type == value_type::int64;
}
constexpr bool is_float(value_type type) noexcept {
  return type == value_type::float32 || type == value_type::float64;
}

std::string_view to_string(value_type type) noexcept;
/// Parses "int8", "uint16", "int32", "uint64", "int128", "float32", "string", "bool8" (or "bool") ...;
/// throws zs::error (unsupported) on an unknown name.
value_type parse_value_type(std::string_view name);

/// One value of an int128 column as it lies in memory: a 128-bit two's-complement integer in 16
/// little-endian bytes, the low 64 bits first (the layout of Arrow's decimal128 and of a
/// little-endian __int128). A plain pair of words rather than __int128, so host and device code
/// of every compiler agree on it; its alignment is 8, which Arrow's buffers satisfy.
/// Comparisons are those of the signed 128-bit integer.
struct int128_value {
  std::uint64_t low = 0;  // bits 0..63
  std::int64_t high = 0;  // bits 64..127, the sign in bit 127

  /// `value` sign-extended to 128 bits.
  ZS_HD static constexpr int128_value of(std::int64_t value) noexcept {
    return {static_cast<std::uint64_t>(value), value < 0 ? -1 : 0};
  }
  ZS_HD constexpr bool is_negative() const noexcept { return high < 0; }

  friend ZS_HD constexpr bool operator==(int128_value a, int128_value b) noexcept {
    return a.low == b.low && a.high == b.high;
  }
  friend ZS_HD constexpr bool operator!=(int128_value a, int128_value b) noexcept { return !(a == b); }
  friend ZS_HD constexpr bool operator<(int128_value a, int128_value b) noexcept {
    return a.high != b.high ? a.high < b.high : a.low < b.low;
  }
  friend ZS_HD constexpr bool operator>(int128_value a, int128_value b) noexcept { return b < a; }
  friend ZS_HD constexpr bool operator<=(int128_value a, int128_value b) noexcept { return !(b < a); }
  friend ZS_HD constexpr bool operator>=(int128_value a, int128_value b) noexcept { return !(a < b); }
};
static_assert(sizeof(int128_value) == 16, "an int128 value is 16 bytes, without padding");

/// The largest and smallest int128 values: 2^127 - 1 and -2^127.
inline constexpr int128_value int128_max{~std::uint64_t{0}, INT64_MAX};
inline constexpr int128_value int128_min{0, INT64_MIN};

/// The decimal text of `value`: "-170141183460469231731687303715884105728" for int128_min.
std::string to_string(int128_value value);

// ---------------------------------------------------------------------------------------------
// Logical types: what a column's values mean beyond their storage type. A date is an int32 of
// days, a timestamp an int64 of some unit since the epoch, a decimal an integer of unscaled
// digits. The logical type is metadata of a column (zs::column::logical): codecs, frames and the
// shuffle see and move only the storage type; Arrow interop (zs/arrow.hpp) reads and writes it.

/// The unit of a time-based logical type.
enum class time_unit : std::uint8_t { second, millisecond, microsecond, nanosecond };

/// The kinds of logical type, each with the one storage type it lies over.
enum class logical_kind : std::uint8_t {
  none,       // the storage type means itself
  date32,     // int32: days since 1970-01-01
  date64,     // int64: milliseconds since 1970-01-01
  timestamp,  // int64: `unit`s since 1970-01-01 00:00:00 UTC; `timezone` optional
  duration,   // int64: a length of time in `unit`s
  time32,     // int32: seconds or milliseconds since midnight
  time64,     // int64: microseconds or nanoseconds since midnight
  decimal32,  // int32: the unscaled value; precision 1..9
  decimal64,  // int64: the unscaled value; precision 1..18
  decimal128,  // int128: the unscaled value; precision 1..38
};

/// A logical type: a kind and the parameters that kind uses (the others stay at their defaults,
/// so that two equal types compare equal). Build them with the named constructors, which check
/// their parameters.
///
/// Decimals of 32, 64 and 128 bits lie over int32, int64 and int128; 256-bit decimals have no
/// storage type in zshuffle, and Arrow imports refuse them.
struct logical_type {
  logical_kind kind = logical_kind::none;
  time_unit unit = time_unit::second;  // timestamp, duration, time32 (s, ms), time64 (us, ns)
  std::uint8_t precision = 0;          // decimals: significant digits
  std::int32_t scale = 0;              // decimals: value = unscaled x 10^-scale (may be negative)
  std::string timezone;                // timestamp: an IANA name ("Europe/Paris") or offset; empty: none

  static logical_type date32();
  static logical_type date64();
  static logical_type timestamp(time_unit unit, std::string timezone = {});
  static logical_type duration(time_unit unit);
  /// time32 (seconds, milliseconds) or time64 (microseconds, nanoseconds), by the unit.
  static logical_type time_of_day(time_unit unit);
  static logical_type decimal32(int precision, int scale);
  static logical_type decimal64(int precision, int scale);
  static logical_type decimal128(int precision, int scale);

  bool is_none() const noexcept { return kind == logical_kind::none; }
  bool operator==(const logical_type&) const = default;
};

/// The storage type under a logical kind (int32, int64 or int128); none has no storage of its own.
value_type storage_type(logical_kind kind);

/// "date32", "timestamp[us, UTC]", "decimal64(12, 2)", "decimal128(38, 10)", "none" ...
std::string to_string(const logical_type& type);
std::string_view to_string(time_unit unit) noexcept;  // "s", "ms", "us", "ns"

/// Throws zs::error (invalid_argument) when `type` is not a valid logical type over `storage`:
/// another storage type than its kind's, a unit its kind does not take, a decimal precision
/// outside 1..9 (decimal32), 1..18 (decimal64) or 1..38 (decimal128), or parameters its kind
/// does not use.
/// A logical type of kind none is valid over every storage type.
void check_logical_type(const logical_type& type, value_type storage);

/// The value_type of a C++ value type, for templates.
template <typename T>
struct value_type_of;
static_assert(sizeof(bool) == 1, "bool8 columns are filled from bool values");
template <> struct value_type_of<bool> { static constexpr value_type value = value_type::bool8; };
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
template <> struct value_type_of<int128_value> { static constexpr value_type value = value_type::int128; };

}  // namespace zs
