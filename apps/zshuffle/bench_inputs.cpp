#include "bench_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <type_traits>
#include <unordered_set>

#include "zs/error.hpp"

namespace zs::cli {
namespace {

constexpr input_shape every_shape[] = {input_shape::as_is,    input_shape::sorted, input_shape::runs,
                                       input_shape::low_cardinality, input_shape::outliers, input_shape::fill,
                                       input_shape::nulls};

// One fixed seed per shape: the same column gives the same input in every run, so that figures
// of two builds compare.
std::mt19937_64 generator_for(input_shape shape) {
  return std::mt19937_64(0x7a73'6265'6e63'6800ULL + static_cast<std::uint64_t>(shape));
}

constexpr std::uint64_t distinct_values = 64;  // low_cardinality
constexpr int longest_run = 64;                // runs
constexpr std::uint64_t outlier_one_in = 1000;  // outliers: 0.1% of the rows
constexpr std::uint64_t fill_one_in = 10;       // fill: 10% of the rows
constexpr std::uint64_t null_run = 50;          // nulls: runs of 50 null rows,
constexpr std::uint64_t null_run_one_in = 5;    // a run in every 5 (a fifth of the rows)
constexpr std::uint64_t small_integer_mask = 1023;  // outliers: small integers are the low 10 bits,
constexpr std::uint64_t small_byte_mask = 31;       // or 5 bits for 8-bit types (whose maximum is 127 or 255)
constexpr double huge_float_scale = 1e20;           // outliers: huge floats are the value times this
constexpr double float_fill = -1e34;                 // fill: the sentinel of float columns (as in netCDF files)
constexpr std::string_view string_fill = "N/A";
constexpr std::size_t short_string_bytes = 8;   // outliers: small strings are the first 8 bytes
constexpr std::size_t huge_string_bytes = 4096;  // outliers: huge strings are the string repeated to 4 KiB

// Calls `f` with a value of the C++ type that holds values of `type` (fixed-width types but int128).
template <typename F>
decltype(auto) with_fixed_type(value_type type, F&& f) {
  switch (type) {
    case value_type::int8: return f(std::int8_t{});
    case value_type::int16: return f(std::int16_t{});
    case value_type::uint8:
    case value_type::bool8: return f(std::uint8_t{});
    case value_type::uint16: return f(std::uint16_t{});
    case value_type::int32: return f(std::int32_t{});
    case value_type::int64: return f(std::int64_t{});
    case value_type::uint32: return f(std::uint32_t{});
    case value_type::uint64: return f(std::uint64_t{});
    case value_type::float32: return f(float{});
    case value_type::float64: return f(double{});
    case value_type::int128:
      // The shapes (outliers, fills, conversions) take arithmetic that int128_value does not have.
      ZS_FAIL(error_code::unsupported, "bench inputs do not make int128 columns");
    case value_type::string: break;
  }
  ZS_FAIL(error_code::invalid_argument, "a fixed-width value type, not " + std::string(to_string(type)));
}

// The bytes of row i: its value, or its characters for strings.
std::string_view row_bytes(const column_view& v, std::uint64_t i) {
  auto const* data = static_cast<const char*>(v.data);
  if (v.type == value_type::string) {
    return {data + v.offsets[i], static_cast<std::size_t>(v.offsets[i + 1] - v.offsets[i])};
  }
  std::size_t const width = value_width(v.type);
  return {data + i * width, width};
}

// A host column of `type` whose rows are `rows` (each a value's bytes, or a string).
column column_of_rows(value_type type, const std::vector<std::string_view>& rows) {
  if (type != value_type::string) {
    column c = column::allocate(type, rows.size(), memory_kind::host);
    auto* out = static_cast<char*>(c.mutable_view().data);
    std::size_t const width = value_width(type);
    for (std::size_t i = 0; i < rows.size(); ++i) std::memcpy(out + i * width, rows[i].data(), width);
    return c;
  }
  std::uint64_t chars = 0;
  for (auto const r : rows) chars += r.size();
  column c = column::allocate(type, rows.size(), memory_kind::host, nullptr, chars);
  auto out = c.mutable_view();
  out.offsets[0] = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].empty()) std::memcpy(static_cast<char*>(out.data) + out.offsets[i], rows[i].data(), rows[i].size());
    out.offsets[i + 1] = out.offsets[i] + static_cast<std::int64_t>(rows[i].size());
  }
  return c;
}

// The rows of `c` at `rows`, in that order.
column gather(const column& c, const std::vector<std::uint64_t>& rows) {
  auto const v = c.view();
  std::vector<std::string_view> picked(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) picked[i] = row_bytes(v, rows[i]);
  return column_of_rows(c.type(), picked);
}

// A hash of a value's bytes that every build computes alike (FNV-1a).
std::uint64_t stable_hash(std::string_view bytes) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char const b : bytes) h = (h ^ static_cast<unsigned char>(b)) * 0x100000001b3ULL;
  return h;
}

template <typename T>
bool ascending(T a, T b) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isnan(a) && (std::isnan(b) || a < b);  // NaNs last, so that the order is strict and weak
  } else {
    return a < b;
  }
}

std::vector<std::uint64_t> sorted_rows(const column& c) {
  std::vector<std::uint64_t> rows(c.size());
  for (std::uint64_t i = 0; i < rows.size(); ++i) rows[i] = i;
  auto const v = c.view();
  if (c.type() == value_type::string) {
    std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) { return row_bytes(v, a) < row_bytes(v, b); });
  } else {
    with_fixed_type(c.type(), [&](auto zero) {
      using T = decltype(zero);
      const T* values = v.values<T>();
      std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) { return ascending(values[a], values[b]); });
      return 0;
    });
  }
  return rows;
}

std::vector<std::uint64_t> run_rows(std::uint64_t count) {
  auto random = generator_for(input_shape::runs);
  std::uniform_int_distribution<int> run_length(1, longest_run);
  std::vector<std::uint64_t> rows;
  rows.reserve(count);
  for (std::uint64_t source = 0; rows.size() < count; source = (source + 1) % count) {
    for (int k = run_length(random); k > 0 && rows.size() < count; --k) rows.push_back(source);
  }
  return rows;
}

std::vector<std::uint64_t> low_cardinality_rows(const column& c) {
  auto const v = c.view();
  // The first distinct values of the column, then every row onto one of them by its value's hash.
  std::unordered_set<std::string_view> seen;
  std::vector<std::uint64_t> kept;
  for (std::uint64_t i = 0; i < c.size() && kept.size() < distinct_values; ++i) {
    if (seen.insert(row_bytes(v, i)).second) kept.push_back(i);
  }
  std::vector<std::uint64_t> rows(c.size());
  for (std::uint64_t i = 0; i < rows.size(); ++i) rows[i] = kept[stable_hash(row_bytes(v, i)) % kept.size()];
  return rows;
}

// Rows chosen at random, one in `one_in`, the same in every run.
template <typename Replace>
void every_so_often(input_shape shape, std::uint64_t count, std::uint64_t one_in, Replace replace) {
  auto random = generator_for(shape);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (random() % one_in == 0) replace(i);
  }
}

column outliers_of(const column& real) {
  std::uint64_t const count = real.size();
  auto const v = real.view();
  if (real.type() == value_type::string) {
    // Small: the first bytes of each string; huge: the string repeated to 4 KiB.
    std::vector<std::string_view> rows(count);
    for (std::uint64_t i = 0; i < count; ++i) rows[i] = row_bytes(v, i).substr(0, short_string_bytes);
    std::deque<std::string> huge;  // a deque keeps its strings in place as it grows
    every_so_often(input_shape::outliers, count, outlier_one_in, [&](std::uint64_t i) {
      std::string_view const value = row_bytes(v, i);
      std::string_view const unit = value.empty() ? std::string_view("x") : value;
      std::string& text = huge.emplace_back();
      while (text.size() < huge_string_bytes) text.append(unit.substr(0, huge_string_bytes - text.size()));
      rows[i] = text;
    });
    return column_of_rows(value_type::string, rows);
  }
  column out = real.copy_to(memory_kind::host, nullptr);
  with_fixed_type(real.type(), [&](auto zero) {
    using T = decltype(zero);
    T* values = out.mutable_view().values<T>();
    if constexpr (std::is_integral_v<T>) {
      // Small: the low bits of each value; huge: near the type's largest value.
      using U = std::make_unsigned_t<T>;
      auto const mask = static_cast<U>(sizeof(T) == 1 ? small_byte_mask : small_integer_mask);
      for (std::uint64_t i = 0; i < count; ++i) values[i] = static_cast<T>(static_cast<U>(values[i]) & mask);
      every_so_often(input_shape::outliers, count, outlier_one_in,
                     [&](std::uint64_t i) { values[i] = static_cast<T>(std::numeric_limits<T>::max() - values[i]); });
    } else {
      // The real values stay (floats of measurements are small); the outliers are them scaled up.
      every_so_often(input_shape::outliers, count, outlier_one_in, [&](std::uint64_t i) {
        auto huge = static_cast<T>(static_cast<double>(values[i]) * huge_float_scale);
        if (!std::isfinite(huge) || values[i] == 0) huge = static_cast<T>(huge_float_scale);
        values[i] = huge;
      });
    }
    return 0;
  });
  return out;
}

column fill_of(const column& real) {
  std::uint64_t const count = real.size();
  if (real.type() == value_type::string) {
    auto const v = real.view();
    std::vector<std::string_view> rows(count);
    for (std::uint64_t i = 0; i < count; ++i) rows[i] = row_bytes(v, i);
    every_so_often(input_shape::fill, count, fill_one_in, [&](std::uint64_t i) { rows[i] = string_fill; });
    return column_of_rows(value_type::string, rows);
  }
  column out = real.copy_to(memory_kind::host, nullptr);
  with_fixed_type(real.type(), [&](auto zero) {
    using T = decltype(zero);
    T* values = out.mutable_view().values<T>();
    T sentinel = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) sentinel = static_cast<T>(float_fill);
    every_so_often(input_shape::fill, count, fill_one_in, [&](std::uint64_t i) { values[i] = sentinel; });
    return 0;
  });
  return out;
}

column nulls_of(const column& real) {
  std::uint64_t const count = real.size();
  column out = real.copy_to(memory_kind::host, nullptr);
  std::uint8_t* const mask = out.add_null_mask();
  std::fill(mask, mask + null_mask_bytes(count), std::uint8_t{0});
  auto const valid = [](std::uint64_t i) { return (i / null_run) % null_run_one_in != 2; };
  for (std::uint64_t i = 0; i < count; ++i) {
    if (valid(i)) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  if (real.type() == value_type::string) return out;
  auto random = generator_for(input_shape::nulls);
  auto* const bytes = static_cast<std::byte*>(out.mutable_view().data);
  std::size_t const width = value_width(real.type());
  for (std::uint64_t i = 0; i < count; ++i) {
    if (valid(i)) continue;
    std::uint64_t const bits = random();
    std::memcpy(bytes + i * width, &bits, std::min<std::size_t>(width, sizeof bits));
  }
  return out;
}

}  // namespace

std::span<const input_shape> all_input_shapes() noexcept { return every_shape; }

std::string_view to_string(input_shape shape) noexcept {
  switch (shape) {
    case input_shape::as_is: return "as-is";
    case input_shape::sorted: return "sorted";
    case input_shape::runs: return "runs";
    case input_shape::low_cardinality: return "low-cardinality";
    case input_shape::outliers: return "outliers";
    case input_shape::fill: return "fill";
    case input_shape::nulls: return "nulls";
  }
  return "unknown";
}

std::vector<input_shape> parse_input_shapes(const std::vector<std::string>& names) {
  std::vector<input_shape> chosen;
  auto const add = [&](input_shape s) {
    if (std::find(chosen.begin(), chosen.end(), s) == chosen.end()) chosen.push_back(s);
  };
  for (auto const& name : names) {
    if (name == "all") {
      for (auto const s : every_shape) add(s);
      continue;
    }
    auto const* found = std::find_if(std::begin(every_shape), std::end(every_shape),
                                     [&](input_shape s) { return to_string(s) == name; });
    if (found == std::end(every_shape)) {
      std::string known;
      for (auto const s : every_shape) known += std::string(to_string(s)) + ", ";
      ZS_FAIL(error_code::invalid_argument,
              "--shapes: no input shape is named '" + name + "' (shapes: " + known + "or all)");
    }
    add(*found);
  }
  if (chosen.empty()) ZS_FAIL(error_code::invalid_argument, "--shapes: name at least one shape, or all");
  return chosen;
}

std::string describe_shapes() {
  return "Input shapes (--shapes), each derived from the real column on the host, as many rows:\n"
         "  as-is            the real column\n"
         "  sorted           its values in ascending order (strings bytewise, NaNs last)\n"
         "  runs             each value repeated 1 to 64 times, at random\n"
         "  low-cardinality  every value mapped onto one of 64 distinct values of the column\n"
         "  outliers         99.9% small values (integers: their low 10 bits, 5 for 8-bit types;\n"
         "                   floats: as they are; strings: their first 8 bytes), 0.1% huge ones\n"
         "                   (integers: near the type's maximum; floats: times 1e20; strings:\n"
         "                   repeated to 4 KiB)\n"
         "  fill             10% of the rows replaced by one sentinel (integers: the type's maximum;\n"
         "                   floats: -1e34; strings: \"N/A\")\n"
         "  nulls            a null mask: a fifth of the rows null, in runs of 50; fixed-width null\n"
         "                   rows hold random bits (strings keep theirs). Codecs that use the mask\n"
         "                   (alp) code them as they like; the check compares the other rows\n"
         "Each is named <file>:<shape> in the output; the real column by its file name.";
}

bool converts_to(value_type from, value_type to) noexcept {
  if (from == to) return true;
  return (is_integer(from) && is_integer(to)) || (is_float(from) && is_float(to));
}

column convert_column(const column& host, value_type to) {
  if (!converts_to(host.type(), to)) {
    ZS_FAIL(error_code::invalid_argument, "a column of " + std::string(to_string(host.type())) +
                                              " values cannot be read as " + std::string(to_string(to)));
  }
  if (host.type() == to) return host.copy_to(memory_kind::host, nullptr);
  column out = column::allocate(to, host.size(), memory_kind::host);
  with_fixed_type(host.type(), [&](auto from_zero) {
    using From = decltype(from_zero);
    const From* in = host.view().values<From>();
    return with_fixed_type(to, [&](auto to_zero) {
      using To = decltype(to_zero);
      To* values = out.mutable_view().values<To>();
      for (std::uint64_t i = 0; i < host.size(); ++i) values[i] = static_cast<To>(in[i]);
      return 0;
    });
  });
  return out;
}

column shape_column(const column& real, input_shape shape) {
  ZS_EXPECTS(real.memory() == memory_kind::host, "a host column to shape");
  if (real.size() == 0) return real.copy_to(memory_kind::host, nullptr);
  switch (shape) {
    case input_shape::as_is: return real.copy_to(memory_kind::host, nullptr);
    case input_shape::sorted: return gather(real, sorted_rows(real));
    case input_shape::runs: return gather(real, run_rows(real.size()));
    case input_shape::low_cardinality: return gather(real, low_cardinality_rows(real));
    case input_shape::outliers: return outliers_of(real);
    case input_shape::fill: return fill_of(real);
    case input_shape::nulls: return nulls_of(real);
  }
  ZS_FAIL(error_code::invalid_argument, "an unknown input shape");
}

}  // namespace zs::cli
