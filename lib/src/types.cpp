#include "zs/types.hpp"

#include <string>
#include <utility>

#include "zs/error.hpp"

namespace zs {

std::string_view to_string(value_type type) noexcept {
  switch (type) {
    case value_type::int32: return "int32";
    case value_type::int64: return "int64";
    case value_type::uint32: return "uint32";
    case value_type::uint64: return "uint64";
    case value_type::float32: return "float32";
    case value_type::float64: return "float64";
    case value_type::string: return "string";
    case value_type::int8: return "int8";
    case value_type::int16: return "int16";
    case value_type::uint8: return "uint8";
    case value_type::uint16: return "uint16";
    case value_type::bool8: return "bool8";
    case value_type::int128: return "int128";
  }
  return "invalid";
}

value_type parse_value_type(std::string_view name) {
  if (name == "bool") return value_type::bool8;
  for (std::uint8_t v = 1; v <= last_value_type_id; ++v) {
    auto const type = static_cast<value_type>(v);
    if (to_string(type) == name) return type;
  }
  ZS_FAIL(error_code::unsupported, "unknown value type '" + std::string(name) + "'");
}

std::string to_string(int128_value value) {
  // The magnitude as an unsigned 128-bit number in four 32-bit limbs, most significant first,
  // divided by 10 until it is zero. Negating in unsigned arithmetic gives int128_min's
  // magnitude 2^127 too.
  std::uint64_t low = value.low, high = static_cast<std::uint64_t>(value.high);
  if (value.is_negative()) {
    low = ~low + 1;
    high = ~high + (low == 0 ? 1 : 0);
  }
  std::uint32_t limbs[4] = {static_cast<std::uint32_t>(high >> 32), static_cast<std::uint32_t>(high),
                            static_cast<std::uint32_t>(low >> 32), static_cast<std::uint32_t>(low)};
  std::string digits;
  bool zero = false;
  while (!zero) {
    std::uint64_t remainder = 0;
    zero = true;
    for (std::uint32_t& limb : limbs) {
      std::uint64_t const current = (remainder << 32) | limb;
      limb = static_cast<std::uint32_t>(current / 10);
      remainder = current % 10;
      zero = zero && limb == 0;
    }
    digits.push_back(static_cast<char>('0' + remainder));
  }
  if (value.is_negative()) digits.push_back('-');
  return {digits.rbegin(), digits.rend()};
}

// --- logical types ---------------------------------------------------------------------------

namespace {

[[noreturn]] void fail_logical(const std::string& message) { ZS_FAIL(error_code::invalid_argument, message); }

bool is_time_kind(logical_kind kind) noexcept {
  return kind == logical_kind::timestamp || kind == logical_kind::duration || kind == logical_kind::time32 ||
         kind == logical_kind::time64;
}

bool is_decimal_kind(logical_kind kind) noexcept {
  return kind == logical_kind::decimal32 || kind == logical_kind::decimal64 || kind == logical_kind::decimal128;
}

// The most significant digits a decimal of `kind` holds: those of its storage type's maximum.
int max_decimal_precision(logical_kind kind) noexcept {
  switch (kind) {
    case logical_kind::decimal32: return 9;
    case logical_kind::decimal64: return 18;
    case logical_kind::decimal128: return 38;
    default: return 0;
  }
}

std::string_view kind_name(logical_kind kind) noexcept {
  switch (kind) {
    case logical_kind::none: return "none";
    case logical_kind::date32: return "date32";
    case logical_kind::date64: return "date64";
    case logical_kind::timestamp: return "timestamp";
    case logical_kind::duration: return "duration";
    case logical_kind::time32: return "time32";
    case logical_kind::time64: return "time64";
    case logical_kind::decimal32: return "decimal32";
    case logical_kind::decimal64: return "decimal64";
    case logical_kind::decimal128: return "decimal128";
  }
  return "invalid";
}

logical_type make(logical_kind kind, time_unit unit = time_unit::second, int precision = 0, int scale = 0) {
  logical_type t;
  t.kind = kind;
  t.unit = unit;
  t.precision = static_cast<std::uint8_t>(precision);
  t.scale = scale;
  return t;
}

logical_type checked(logical_type type) {
  check_logical_type(type, storage_type(type.kind));
  return type;
}

}  // namespace

std::string_view to_string(time_unit unit) noexcept {
  switch (unit) {
    case time_unit::second: return "s";
    case time_unit::millisecond: return "ms";
    case time_unit::microsecond: return "us";
    case time_unit::nanosecond: return "ns";
  }
  return "invalid";
}

logical_type logical_type::date32() { return make(logical_kind::date32); }
logical_type logical_type::date64() { return make(logical_kind::date64); }

logical_type logical_type::timestamp(time_unit unit, std::string timezone) {
  logical_type t = make(logical_kind::timestamp, unit);
  t.timezone = std::move(timezone);
  return checked(std::move(t));
}

logical_type logical_type::duration(time_unit unit) { return checked(make(logical_kind::duration, unit)); }

logical_type logical_type::time_of_day(time_unit unit) {
  bool const wide = unit == time_unit::microsecond || unit == time_unit::nanosecond;
  return checked(make(wide ? logical_kind::time64 : logical_kind::time32, unit));
}

namespace {

logical_type decimal(logical_kind kind, int precision, int scale) {
  int const most = max_decimal_precision(kind);
  if (precision < 1 || precision > most) {
    fail_logical(std::string(kind_name(kind)) + " takes a precision of 1 to " + std::to_string(most) +
                 " digits, not " + std::to_string(precision));
  }
  return checked(make(kind, time_unit::second, precision, scale));
}

}  // namespace

logical_type logical_type::decimal32(int precision, int scale) {
  return decimal(logical_kind::decimal32, precision, scale);
}
logical_type logical_type::decimal64(int precision, int scale) {
  return decimal(logical_kind::decimal64, precision, scale);
}
logical_type logical_type::decimal128(int precision, int scale) {
  return decimal(logical_kind::decimal128, precision, scale);
}

value_type storage_type(logical_kind kind) {
  switch (kind) {
    case logical_kind::date32:
    case logical_kind::time32:
    case logical_kind::decimal32: return value_type::int32;
    case logical_kind::date64:
    case logical_kind::timestamp:
    case logical_kind::duration:
    case logical_kind::time64:
    case logical_kind::decimal64: return value_type::int64;
    case logical_kind::decimal128: return value_type::int128;
    case logical_kind::none: break;
  }
  ZS_FAIL(error_code::invalid_argument, "the logical kind " + std::string(kind_name(kind)) + " has no storage type");
}

std::string to_string(const logical_type& type) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict) about "[" + std::string(...) here.
  std::string out(kind_name(type.kind));
  if (is_time_kind(type.kind)) {
    out.append("[").append(to_string(type.unit));
    if (!type.timezone.empty()) out.append(", ").append(type.timezone);
    out.append("]");
  } else if (is_decimal_kind(type.kind)) {
    out.append("(").append(std::to_string(type.precision)).append(", ").append(std::to_string(type.scale)).append(")");
  }
  return out;
}

void check_logical_type(const logical_type& type, value_type storage) {
  if (type.kind == logical_kind::none) {
    if (type != logical_type{}) fail_logical("a logical type of kind none carries no unit, precision, scale or zone");
    return;
  }
  std::string const name = to_string(type);
  if (kind_name(type.kind) == "invalid") {
    fail_logical("logical kind " + std::to_string(static_cast<int>(type.kind)) + " is not one zshuffle knows");
  }
  value_type const expected = storage_type(type.kind);
  if (storage != expected) {
    fail_logical("the logical type " + name + " lies over " + std::string(to_string(expected)) + " values, not " +
                 std::string(to_string(storage)));
  }
  bool const unit_ok = [&] {
    switch (type.kind) {
      case logical_kind::timestamp:
      case logical_kind::duration: return to_string(type.unit) != "invalid";
      case logical_kind::time32: return type.unit == time_unit::second || type.unit == time_unit::millisecond;
      case logical_kind::time64: return type.unit == time_unit::microsecond || type.unit == time_unit::nanosecond;
      default: return type.unit == time_unit::second;  // the default: no unit
    }
  }();
  if (!unit_ok) fail_logical("the logical type " + name + " does not take that unit");
  if (!type.timezone.empty() && type.kind != logical_kind::timestamp) {
    fail_logical("only timestamps carry a time zone, not " + name);
  }
  if (is_decimal_kind(type.kind) && (type.precision < 1 || type.precision > max_decimal_precision(type.kind))) {
    fail_logical("the logical type " + name + " needs a precision of 1 to " +
                 std::to_string(max_decimal_precision(type.kind)) + " digits");
  }
  if (!is_decimal_kind(type.kind) && (type.precision != 0 || type.scale != 0)) {
    fail_logical("only decimals carry a precision and a scale, not " + name);
  }
}

}  // namespace zs
