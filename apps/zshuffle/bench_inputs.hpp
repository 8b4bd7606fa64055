// The inputs of `zshuffle bench codec`: real columns, read as the type the benchmark runs on, and
// inputs of other shapes derived from them on the host, so that one real column shows how a
// codec does on sorted data, runs, few distinct values, rare outliers and fill values.
//
//   zs::column const real = zs::cli::convert_column(zs::io::read_column(file), zs::value_type::int64);
//   zs::column const runs = zs::cli::shape_column(real, zs::cli::input_shape::runs);
//
// Every shape is deterministic: the same column gives the same input in every run and build.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zs/column.hpp"
#include "zs/types.hpp"

namespace zs::cli {

enum class input_shape : std::uint8_t {
  as_is,            // the real column
  sorted,           // its values in ascending order (strings bytewise; NaNs last)
  runs,             // each value repeated 1 to 64 times (uniformly at random), as many rows as the column
  low_cardinality,  // every value mapped onto one of 64 distinct values of the column (equal stay equal)
  outliers,         // 99.9% small values, 0.1% huge ones
  fill,             // 10% of the rows replaced by one sentinel value (fill_value_text says which)
  nulls,            // a null mask, a fifth of the rows null in runs of 50, fixed-width null rows random bits
};

/// Every shape, in the order the benchmark runs them.
std::span<const input_shape> all_input_shapes() noexcept;
/// The shape's name on the command line and in the output: "as-is", "sorted", "runs",
/// "low-cardinality", "outliers", "fill", "nulls".
std::string_view to_string(input_shape shape) noexcept;
/// The shapes that --shapes names: each name once, or "all" for every shape, in the order given.
/// Throws zs::error (invalid_argument) naming an unknown name and listing the known ones.
std::vector<input_shape> parse_input_shapes(const std::vector<std::string>& names);

/// What every shape does to a column of each type, in words: the footer of --help.
std::string describe_shapes();

/// Whether a column of `from` values can be benchmarked as `to`: integers as any integer type,
/// floats as either float type, strings as strings only.
bool converts_to(value_type from, value_type to) noexcept;
/// A host column holding the values of `host` as `to` (a copy; C++ conversions: integers wrap
/// modulo 2^bits when narrowed, float64 rounds to the nearest float32). Throws zs::error
/// (invalid_argument) unless converts_to(host.type(), to).
column convert_column(const column& host, value_type to);

/// The input of `shape` derived from the host column `real`: the same type, and as many rows
/// for every shape (outliers of strings change their lengths, and so the character bytes); only
/// nulls gives it a null mask.
column shape_column(const column& real, input_shape shape);

}  // namespace zs::cli
