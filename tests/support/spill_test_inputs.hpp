// Inputs of the spill tests (tests/core/spill_test.cpp on the CPU, tests/gpu/spill_gpu_test.cpp
// on the GPU): options that cut a small column into many frames and batches, and a compressible
// column of every value type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/spill.hpp"
#include "zs/types.hpp"

namespace zs::test::spill_inputs {

using zs::value_type;

// Small frames and batches, so that a column of a few thousand rows makes many frames in
// several batches, as a large column does with the defaults.
inline zs::spill_options small_frames(std::optional<zs::codec_id> codec = std::nullopt) {
  zs::spill_options o;
  o.codec = codec;
  o.frame_bytes = 4096;
  o.batch_bytes = 16384;
  o.name = "test";
  return o;
}

// A compressible host column of `type`: small values with a trend, repeated strings.
inline zs::column sample_column(value_type type, std::uint64_t rows) {
  auto const make = [&]<typename T>(T) {
    std::vector<T> v(rows);
    for (std::uint64_t i = 0; i < rows; ++i) v[i] = static_cast<T>((i * 7) % 100 + i / 64);
    return zs::column::from_values<T>(v);
  };
  switch (type) {
    case value_type::int8: return make(std::int8_t{});
    case value_type::int16: return make(std::int16_t{});
    case value_type::uint8: return make(std::uint8_t{});
    case value_type::uint16: return make(std::uint16_t{});
    case value_type::int32: return make(std::int32_t{});
    case value_type::int64: return make(std::int64_t{});
    case value_type::uint32: return make(std::uint32_t{});
    case value_type::uint64: return make(std::uint64_t{});
    case value_type::float32: {
      std::vector<float> v(rows);
      for (std::uint64_t i = 0; i < rows; ++i) v[i] = static_cast<float>(static_cast<double>(i % 1000) / 100.0);
      return zs::column::from_values<float>(v);
    }
    case value_type::float64: {
      std::vector<double> v(rows);
      for (std::uint64_t i = 0; i < rows; ++i) v[i] = static_cast<double>(i % 5000) / 100.0 - 20.0;
      return zs::column::from_values<double>(v);
    }
    case value_type::string: {
      std::vector<std::string> v(rows);
      for (std::uint64_t i = 0; i < rows; ++i) v[i] = (i % 5 == 0 ? "" : "name-" + std::to_string(i % 37) + "/path");
      return zs::column::from_strings(v);
    }
    case value_type::bool8: {
      // A byte per value, 0 or 1, in runs as flags come (std::vector<bool> holds no bytes to copy).
      auto const v = std::make_unique<bool[]>(rows);
      for (std::uint64_t i = 0; i < rows; ++i) v[i] = (i / 16) % 3 == 0;
      return zs::column::from_values<bool>(std::span<const bool>(v.get(), rows));
    }
    case value_type::int128: {
      // The integers' small trending values, every tenth negated, sign-extended to 16 bytes.
      std::vector<zs::int128_value> v(rows);
      for (std::uint64_t i = 0; i < rows; ++i) {
        auto const value = static_cast<std::int64_t>((i * 7) % 100 + i / 64);
        v[i] = zs::int128_value::of(i % 10 == 0 ? -value : value);
      }
      return zs::column::from_values<zs::int128_value>(v);
    }
  }
  return {};
}

inline const value_type all_types[] = {value_type::int32,   value_type::int64,   value_type::uint32, value_type::uint64,
                                 value_type::float32, value_type::float64, value_type::string, value_type::int8,
                                 value_type::int16,   value_type::uint8,   value_type::uint16, value_type::bool8,
                                 value_type::int128};

}  // namespace zs::test::spill_inputs
