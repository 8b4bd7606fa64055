// A struct array built by hand, as another producer would hand it over through the Arrow C Data
// Interface, for the Arrow interop tests (tests/core/arrow_test.cpp, tests/gpu/arrow_gpu_test.cpp);
// and the table of every value and logical type, with null masks, that both round-trip.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

#include "zs/arrow.hpp"
#include "zs/column.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace zs::test {

/// The test owns every buffer, in host or device memory (`memory`); each node's release callback
/// counts its calls, and the top-level ones also release the children not moved out, as the
/// specification requires, so a test can check that every node was released exactly once.
class hand_built {
 public:
  ArrowSchema schema{};
  ArrowArray array{};

  explicit hand_built(memory_kind memory = memory_kind::host) : memory_(memory) {}
  hand_built(const hand_built&) = delete;
  hand_built& operator=(const hand_built&) = delete;

  /// A buffer holding `values`, in the builder's memory.
  template <typename T>
  const void* keep(std::vector<T> values) {
    std::size_t const bytes = values.size() * sizeof(T);
    if (memory_ == memory_kind::device) {
      auto& buffer = device_storage_.emplace_back(bytes == 0 ? 1 : bytes, nullptr);
      if (bytes != 0) copy_async(buffer.data(), values.data(), bytes, nullptr);
      ZS_CUDA_TRY(cudaStreamSynchronize(nullptr));
      return buffer.data();
    }
    auto& buffer = host_storage_.emplace_back(bytes);
    if (bytes != 0) std::memcpy(buffer.data(), values.data(), bytes);
    return buffer.data();
  }
  /// A validity bitmap from "1" (valid) and "0" (null) characters, row 0 first.
  const void* bitmap(const std::string& bits) {
    std::vector<std::uint8_t> bytes((bits.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      if (bits[i] == '1') bytes[i / 8] = static_cast<std::uint8_t>(bytes[i / 8] | (1u << (i % 8)));
    }
    return keep(bytes);
  }

  /// A child column; returns its array to adjust (offset, null_count ...).
  ArrowArray& add(const char* name, const char* format, std::int64_t length, std::vector<const void*> buffers) {
    auto& b = buffer_lists_.emplace_back(std::move(buffers));
    ArrowSchema& s = child_schemas_.emplace_back();
    s.format = format;
    s.name = name;
    s.release = count_release<ArrowSchema>;
    s.private_data = &counters_.emplace_back(0);
    ArrowArray& a = child_arrays_.emplace_back();
    a.length = length;
    a.n_buffers = static_cast<std::int64_t>(b.size());
    a.buffers = b.data();
    a.release = count_release<ArrowArray>;
    a.private_data = &counters_.emplace_back(0);
    return a;
  }

  /// Fills the top-level struct of `length` rows over the children added so far.
  void finish(std::int64_t length) {
    for (auto& s : child_schemas_) schema_children_.push_back(&s);
    for (auto& a : child_arrays_) array_children_.push_back(&a);
    schema.format = "+s";
    schema.name = "";
    schema.n_children = static_cast<std::int64_t>(child_schemas_.size());
    schema.children = schema_children_.data();
    schema.release = release_top<ArrowSchema>;
    schema.private_data = &counters_.emplace_back(0);
    array.length = length;
    array.n_buffers = 1;
    array.buffers = top_buffers_;
    array.n_children = static_cast<std::int64_t>(child_arrays_.size());
    array.children = array_children_.data();
    array.release = release_top<ArrowArray>;
    array.private_data = &counters_.emplace_back(0);
  }

  /// `array` moved into an ArrowDeviceArray of `device_type` on `device_id` (the specification's
  /// move: `array` is marked released; its release callback travels with the copy).
  ArrowDeviceArray move_to_device_array(ArrowDeviceType device_type, std::int64_t device_id,
                                        void* sync_event = nullptr) {
    ArrowDeviceArray out{};
    out.array = array;
    array.release = nullptr;
    out.device_type = device_type;
    out.device_id = device_id;
    out.sync_event = sync_event;
    return out;
  }

  /// Checks that every node, top and children, was released exactly once.
  void expect_released_once() const {
    for (int const calls : counters_) EXPECT_EQ(calls, 1) << "a release callback ran " << calls << " times";
    EXPECT_EQ(schema.release, nullptr);
  }

 private:
  template <typename Node>
  static void count_release(Node* node) {
    ++*static_cast<int*>(node->private_data);
    node->release = nullptr;
  }
  template <typename Node>
  static void release_top(Node* node) {
    for (std::int64_t i = 0; i < node->n_children; ++i) {
      if (node->children[i]->release != nullptr) node->children[i]->release(node->children[i]);
    }
    count_release(node);
  }

  memory_kind memory_;
  std::deque<std::vector<std::byte>> host_storage_;
  std::deque<device_buffer> device_storage_;
  std::deque<std::vector<const void*>> buffer_lists_;
  std::deque<ArrowSchema> child_schemas_;
  std::deque<ArrowArray> child_arrays_;
  std::deque<int> counters_;
  std::vector<ArrowSchema*> schema_children_;
  std::vector<ArrowArray*> array_children_;
  const void* top_buffers_[1] = {nullptr};
};

/// Gives the host column `c` a null mask from the "1" (valid) and "0" (null) characters of
/// `validity`, row 0 first; none when `validity` is empty.
inline void set_validity(column& c, std::string const& validity) {
  if (validity.empty()) return;
  std::uint8_t* mask = c.add_null_mask();
  std::fill(mask, mask + null_mask_bytes(c.size()), std::uint8_t{0});
  for (std::size_t i = 0; i < validity.size(); ++i) {
    if (validity[i] == '1') mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
}

/// A host column of `values` with the logical type `logical` and the null mask of `validity`.
template <typename T>
column typed_column(std::vector<T> const& values, logical_type logical = {}, std::string const& validity = "") {
  column c = column::allocate(value_type_of<T>::value, values.size(), memory_kind::host);
  for (std::size_t i = 0; i < values.size(); ++i) c.mutable_view().values<T>()[i] = values[i];
  c.set_logical(std::move(logical));
  set_validity(c, validity);
  return c;
}

/// A host bool8 column of `values` (1 and 0) with the null mask of `validity`.
inline column bool_column(std::vector<bool> const& values, std::string const& validity = "") {
  column c = column::allocate(value_type::bool8, values.size(), memory_kind::host);
  for (std::size_t i = 0; i < values.size(); ++i) c.mutable_view().values<std::uint8_t>()[i] = values[i] ? 1 : 0;
  set_validity(c, validity);
  return c;
}

/// 13 rows (not a multiple of 8) of every value type and every logical type, some columns with
/// null masks (nulls in the first and last byte of the mask, all null, a mask without nulls).
inline table every_value_and_logical_type_table() {
  constexpr std::size_t rows = 13;
  auto sequence = [&]<typename T>(T first, T step) {
    std::vector<T> v(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      if constexpr (std::is_integral_v<T>) {  // modulo 2^64, then wrapped to T: no signed overflow
        v[i] = static_cast<T>(static_cast<std::uint64_t>(first) + i * static_cast<std::uint64_t>(step));
      } else {
        v[i] = first + static_cast<T>(i) * step;
      }
    }
    return v;
  };
  std::string const some_nulls = "0110111011110";
  std::string const all_null(rows, '0');
  std::string const no_nulls(rows, '1');
  table t;
  auto add = [&](std::string name, column c) {
    t.names.push_back(std::move(name));
    t.columns.push_back(std::move(c));
  };
  add("i8", typed_column(sequence(std::int8_t{-128}, std::int8_t{21}), {}, some_nulls));
  add("i16", typed_column(sequence(std::int16_t{-32768}, std::int16_t{5003})));
  add("u8", typed_column(sequence(std::uint8_t{0}, std::uint8_t{21}), {}, all_null));
  add("u16", typed_column(sequence(std::uint16_t{65535}, std::uint16_t{65000})));
  add("i32", typed_column(sequence(std::int32_t{-2147483647}, std::int32_t{300000007}), {}, no_nulls));
  add("i64", typed_column(sequence(std::int64_t{-5}, std::int64_t{1} << 40)));
  add("u32", typed_column(sequence(std::uint32_t{4294967295u}, std::uint32_t{123456789})));
  add("u64", typed_column(sequence(std::uint64_t{1} << 63, std::uint64_t{99}), {}, some_nulls));
  add("f32", typed_column(sequence(-1.5f, 0.25f)));
  add("f64", typed_column(sequence(-0.0, 1e300), {}, some_nulls));
  std::vector<bool> truth(rows);
  for (std::size_t i = 0; i < rows; ++i) truth[i] = i % 3 == 0 || i == rows - 1;
  add("bool", bool_column(truth));
  add("bool_nulls", bool_column(std::vector<bool>(truth.rbegin(), truth.rend()), some_nulls));
  std::vector<std::string> text(rows);
  for (std::size_t i = 0; i < rows; ++i) text[i] = i % 4 == 0 ? "" : "row " + std::to_string(i) + " héllo";
  add("text", column::from_strings(text));
  column text_nulls = column::from_strings(text);
  set_validity(text_nulls, some_nulls);
  add("text_nulls", std::move(text_nulls));
  add("date32", typed_column(sequence(std::int32_t{-719162}, std::int32_t{70000}), logical_type::date32(), some_nulls));
  add("date64", typed_column(sequence(std::int64_t{0}, std::int64_t{86400000}), logical_type::date64()));
  std::string const zones[] = {"UTC", "", "Europe/Paris", "+07:00"};
  for (int u = 0; u < 4; ++u) {
    auto const unit = static_cast<time_unit>(u);
    std::string const suffix(to_string(unit));
    add("ts_" + suffix, typed_column(sequence(std::int64_t{-1000}, std::int64_t{1} << 33),
                                     logical_type::timestamp(unit, zones[u]), u == 2 ? some_nulls : ""));
    add("duration_" + suffix, typed_column(sequence(std::int64_t{7}, std::int64_t{-3}), logical_type::duration(unit)));
  }
  add("time32_s", typed_column(sequence(std::int32_t{0}, std::int32_t{6000}), logical_type::time_of_day(time_unit::second)));
  add("time32_ms", typed_column(sequence(std::int32_t{1}, std::int32_t{6000000}),
                                logical_type::time_of_day(time_unit::millisecond)));
  add("time64_us", typed_column(sequence(std::int64_t{2}, std::int64_t{6000000000}),
                                logical_type::time_of_day(time_unit::microsecond), some_nulls));
  add("time64_ns", typed_column(sequence(std::int64_t{3}, std::int64_t{6000000000000}),
                                logical_type::time_of_day(time_unit::nanosecond)));
  add("dec32", typed_column(sequence(std::int32_t{-999999999}, std::int32_t{150000000}), logical_type::decimal32(9, 2)));
  add("dec64", typed_column(sequence(std::int64_t{-5}, std::int64_t{77777777777}), logical_type::decimal64(18, -3),
                            some_nulls));
  // 128-bit decimals: the extremes, small values of both signs (high words all ones or zero),
  // and high words of both signs under arbitrary low words.
  std::vector<int128_value> const wide{int128_min,           int128_max,
                                       int128_value::of(-1), int128_value::of(0),
                                       int128_value::of(1),  int128_value::of(INT64_MIN),
                                       int128_value{0, 1},   int128_value{0x0123456789abcdefULL, -2},
                                       int128_value{~std::uint64_t{0}, 0x7fffffff},
                                       int128_value{42, -0x7fffffff},
                                       int128_value::of(-99999), int128_value{1, INT64_MIN},
                                       int128_value{~std::uint64_t{0} - 1, INT64_MAX - 1}};
  static_assert(rows == 13, "one decimal128 value per row");
  add("dec128", typed_column(wide, logical_type::decimal128(38, 10), some_nulls));
  std::vector<int128_value> small;  // within 5 digits, as decimal128(5, -2) promises
  for (std::int64_t const v : sequence(std::int64_t{-99999}, std::int64_t{15384})) small.push_back(int128_value::of(v));
  add("dec128_small", typed_column(small, logical_type::decimal128(5, -2)));
  return t;
}

/// The Arrow format each column of every_value_and_logical_type_table exports as.
inline std::vector<std::string> every_value_and_logical_type_formats() {
  return {"c",        "s",      "C",    "S",   "i",   "l",   "I",   "L",          "f",   "g",    "b",   "b",
          "U",        "U",      "tdD",  "tdm", "tss:UTC", "tDs", "tsm:", "tDm", "tsu:Europe/Paris", "tDu",
          "tsn:+07:00", "tDn", "tts", "ttm", "ttu", "ttn", "d:9,2,32", "d:18,-3,64", "d:38,10", "d:5,-2"};
}

/// Host columns alike: type, logical type, values (null rows included), string offsets, and
/// row by row validity (a column without a mask is alike one whose mask marks every row valid).
inline void expect_same_column_and_nulls(const column& a, const column& b) {
  expect_same_column(a, b);
  EXPECT_EQ(a.logical(), b.logical()) << to_string(a.logical()) << " vs " << to_string(b.logical());
  EXPECT_EQ(a.validity(), b.validity()) << "null masks differ";
}

inline void expect_same_table_and_nulls(const table& a, const table& b) {
  ASSERT_EQ(a.names, b.names);
  ASSERT_EQ(a.columns.size(), b.columns.size());
  for (std::size_t i = 0; i < a.columns.size(); ++i) {
    SCOPED_TRACE("column " + a.names[i]);
    expect_same_column_and_nulls(a.columns[i], b.columns[i]);
  }
}

}  // namespace zs::test
