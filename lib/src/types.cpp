#include "zs/types.hpp"

#include <string>

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
  }
  return "invalid";
}

value_type parse_value_type(std::string_view name) {
  for (std::uint8_t v = 1; v <= last_value_type_id; ++v) {
    auto const type = static_cast<value_type>(v);
    if (to_string(type) == name) return type;
  }
  ZS_FAIL(error_code::unsupported, "unknown value type '" + std::string(name) + "'");
}

}  // namespace zs
