// The partitioner's entry points: argument checks, the CPU reference path, and the dispatch to
// the GPU path (partition_gpu.cpp) for device tables. Both paths compute each row's partition
// with the same functions (kernels/partition/partition_rows.hpp) and order rows stably by it.
#include "zs/partition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "partition/partition_rows.hpp"
#include "partition_gpu.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs {
namespace {

// "column 2 ('price')", or "column 2" for a table without names.
std::string column_label(const table& t, std::size_t index) {
  std::string label = "column " + std::to_string(index);
  if (index < t.names.size()) label += " ('" + t.names[index] + "')";
  return label;
}

[[noreturn]] void fail_argument(std::string_view operation, const std::string& message) {
  ZS_FAIL(error_code::invalid_argument, std::string(operation) + ": " + message);
}

// Checks what both operations ask of the table and returns its row count and memory.
std::pair<std::uint64_t, memory_kind> check_table(std::string_view operation, const table& t) {
  if (!t.names.empty() && t.names.size() != t.columns.size()) {
    fail_argument(operation, "the table has " + std::to_string(t.names.size()) + " names for " +
                                 std::to_string(t.columns.size()) + " columns");
  }
  if (t.columns.empty()) return {0, memory_kind::host};
  column const& first = t.columns.front();
  for (std::size_t c = 1; c < t.columns.size(); ++c) {
    column const& col = t.columns[c];
    if (col.size() != first.size()) {
      fail_argument(operation, column_label(t, c) + " has " + std::to_string(col.size()) + " rows, but " +
                                   column_label(t, 0) + " has " + std::to_string(first.size()) +
                                   ": a table's columns must be of equal length");
    }
    if (col.memory() != first.memory()) {
      fail_argument(operation, column_label(t, c) + " is in " +
                                   (col.memory() == memory_kind::device ? "device" : "host") + " memory, but " +
                                   column_label(t, 0) + " is not: a table's columns must share one memory kind");
    }
  }
  if (first.memory() == memory_kind::device && !cuda_device_available()) {
    ZS_FAIL(error_code::unsupported, std::string(operation) +
                                         ": the table is in device memory, but this machine has no usable CUDA device");
  }
  return {first.size(), first.memory()};
}

void check_key_index(std::string_view operation, const table& t, std::size_t key) {
  if (key >= t.columns.size()) {
    fail_argument(operation, "key column " + std::to_string(key) + " is out of range: the table has " +
                                 std::to_string(t.columns.size()) + " columns");
  }
}

// Calls f(std::integral_constant<value_type, T>{}) for the value type `type`.
template <class F>
decltype(auto) with_type(value_type type, F&& f) {
  switch (type) {
    case value_type::int8: return f(std::integral_constant<value_type, value_type::int8>{});
    case value_type::int16: return f(std::integral_constant<value_type, value_type::int16>{});
    case value_type::uint8:
    case value_type::bool8: return f(std::integral_constant<value_type, value_type::uint8>{});  // hashed as uint8
    case value_type::uint16: return f(std::integral_constant<value_type, value_type::uint16>{});
    case value_type::int32: return f(std::integral_constant<value_type, value_type::int32>{});
    case value_type::uint32: return f(std::integral_constant<value_type, value_type::uint32>{});
    case value_type::int64: return f(std::integral_constant<value_type, value_type::int64>{});
    case value_type::uint64: return f(std::integral_constant<value_type, value_type::uint64>{});
    case value_type::float32: return f(std::integral_constant<value_type, value_type::float32>{});
    case value_type::float64: return f(std::integral_constant<value_type, value_type::float64>{});
    case value_type::int128: return f(std::integral_constant<value_type, value_type::int128>{});
    case value_type::string: return f(std::integral_constant<value_type, value_type::string>{});
  }
  ZS_FAIL(error_code::unsupported, "value type " + std::to_string(static_cast<int>(type)) + " is not a column type");
}

template <value_type Type> struct cpp_type_of;
template <> struct cpp_type_of<value_type::int8> { using type = std::int8_t; };
template <> struct cpp_type_of<value_type::int16> { using type = std::int16_t; };
template <> struct cpp_type_of<value_type::uint8> { using type = std::uint8_t; };
template <> struct cpp_type_of<value_type::uint16> { using type = std::uint16_t; };
template <> struct cpp_type_of<value_type::int32> { using type = std::int32_t; };
template <> struct cpp_type_of<value_type::uint32> { using type = std::uint32_t; };
template <> struct cpp_type_of<value_type::int64> { using type = std::int64_t; };
template <> struct cpp_type_of<value_type::uint64> { using type = std::uint64_t; };
template <> struct cpp_type_of<value_type::float32> { using type = float; };
template <> struct cpp_type_of<value_type::float64> { using type = double; };
template <> struct cpp_type_of<value_type::int128> { using type = int128_value; };

// --- split points ------------------------------------------------------------------------------

// A host copy of `v` (host or device memory), string offsets rebased to 0.
column host_copy(const column_view& v, cudaStream_t stream) {
  bool const on_host = v.memory == memory_kind::host;
  auto const copy = [&](void* dst, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    if (on_host) {
      std::memcpy(dst, src, bytes);
    } else {
      copy_async(dst, src, bytes, stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    }
  };
  if (v.type != value_type::string) {
    column out = column::allocate(v.type, v.count, memory_kind::host);
    copy(out.mutable_view().data, v.data, v.count * value_width(v.type));
    return out;
  }
  std::vector<std::int64_t> offsets(v.count + 1, 0);
  if (v.offsets != nullptr) copy(offsets.data(), v.offsets, offsets.size() * sizeof(std::int64_t));
  auto const first = offsets.front();
  column out = column::allocate(v.type, v.count, memory_kind::host, nullptr,
                                static_cast<std::uint64_t>(offsets.back() - first));
  auto const o = out.mutable_view();
  for (std::size_t i = 0; i < offsets.size(); ++i) o.offsets[i] = offsets[i] - first;
  copy(o.data, static_cast<const char*>(v.data) + first, out.data_bytes());
  return out;
}

template <typename T>
std::string describe_value(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", static_cast<double>(value));
    return text;
  } else if constexpr (std::is_same_v<T, int128_value>) {
    return to_string(value);
  } else {
    return std::to_string(value);
  }
}

// The split points as a checked host column: the key's type, at most max_partitions - 1, no
// NaN, sorted non-decreasing.
column checked_split_points(const table& t, std::size_t key, const column_view& splits, cudaStream_t stream) {
  constexpr std::string_view op = "range_partition";
  column const& key_col = t.columns[key];
  if (splits.type != key_col.type()) {
    fail_argument(op, "the split points are " + std::string(to_string(splits.type)) + ", but key " +
                          column_label(t, key) + " is " + std::string(to_string(key_col.type())) +
                          ": split points must have the key column's type");
  }
  if (splits.null_mask != nullptr) {
    fail_argument(op, "the split points of key " + column_label(t, key) +
                          " have a null mask: split points must all be values (null keys go to partition 0)");
  }
  if (splits.count > max_partitions - 1) {
    fail_argument(op, std::to_string(splits.count) + " split points make more than max_partitions (" +
                          std::to_string(max_partitions) + ") partitions of key " + column_label(t, key));
  }
  if (splits.count > 0) {
    ZS_EXPECTS(splits.data != nullptr || splits.type == value_type::string, "split point values");
    ZS_EXPECTS(splits.type != value_type::string || splits.offsets != nullptr, "split point string offsets");
  }
  column host = host_copy(splits, stream);
  column_view const h = host.view();
  auto const where = [&](std::uint64_t i) {
    return "split point " + std::to_string(i) + " of key " + column_label(t, key);
  };
  if (h.type == value_type::string) {
    char const* chars = static_cast<const char*>(h.data);
    for (std::uint64_t i = 1; i < h.count; ++i) {
      if (partition_rows::string_less(partition_rows::string_at(chars, h.offsets, i),
                                      partition_rows::string_at(chars, h.offsets, i - 1))) {
        fail_argument(op, "the split points are not sorted: " + where(i) + " sorts before split point " +
                              std::to_string(i - 1));
      }
    }
    return host;
  }
  with_type(h.type, [&](auto type_tag) {
    if constexpr (decltype(type_tag)::value != value_type::string) {
      using T = typename cpp_type_of<decltype(type_tag)::value>::type;
      T const* v = static_cast<const T*>(h.data);
      for (std::uint64_t i = 0; i < h.count; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v[i])) fail_argument(op, where(i) + " is NaN: split points must be numbers");
        }
        if (i > 0 && v[i] < v[i - 1]) {
          fail_argument(op, "the split points are not sorted: " + where(i) + " (" + describe_value(v[i]) +
                                ") is below split point " + std::to_string(i - 1) + " (" +
                                describe_value(v[i - 1]) + ")");
        }
      }
    }
  });
  return host;
}

// --- the CPU path ------------------------------------------------------------------------------

// The values of column `in` in the order `order`, into a new host column.
column gather_values_host(const column& in, const std::vector<std::uint64_t>& order) {
  column_view const v = in.view();
  std::uint64_t const rows = order.size();
  if (v.type == value_type::string) {
    auto const* chars = static_cast<const char*>(v.data);
    std::uint64_t total = 0;
    for (std::uint64_t r : order) total += static_cast<std::uint64_t>(v.offsets[r + 1] - v.offsets[r]);
    column out = column::allocate(v.type, rows, memory_kind::host, nullptr, total);
    auto const o = out.mutable_view();
    auto* out_chars = static_cast<char*>(o.data);
    std::int64_t at = 0;
    o.offsets[0] = 0;
    for (std::uint64_t i = 0; i < rows; ++i) {
      std::uint64_t const r = order[i];
      auto const length = v.offsets[r + 1] - v.offsets[r];
      if (length > 0) std::memcpy(out_chars + at, chars + v.offsets[r], static_cast<std::size_t>(length));
      at += length;
      o.offsets[i + 1] = at;
    }
    return out;
  }
  column out = column::allocate(v.type, rows, memory_kind::host);
  auto const gather = [&]<typename Word>(Word*) {
    auto const* src = static_cast<const Word*>(v.data);
    auto* dst = static_cast<Word*>(out.mutable_view().data);
    for (std::uint64_t i = 0; i < rows; ++i) dst[i] = src[order[i]];
  };
  switch (value_width(v.type)) {
    case 1: gather(static_cast<std::uint8_t*>(nullptr)); break;
    case 2: gather(static_cast<std::uint16_t*>(nullptr)); break;
    case 4: gather(static_cast<std::uint32_t*>(nullptr)); break;
    case 8: gather(static_cast<std::uint64_t*>(nullptr)); break;
    case 16: gather(static_cast<int128_value*>(nullptr)); break;
    default: ZS_FAIL(error_code::internal, "gather: values of " + std::to_string(value_width(v.type)) + " bytes");
  }
  return out;
}

// The null mask of `in` gathered in the order `order` into `out` (both nullable or neither).
void gather_mask_host(const column& in, const std::vector<std::uint64_t>& order, column& out) {
  if (!in.nullable()) return;
  std::uint8_t const* const source = in.view().null_mask;
  std::uint8_t* const mask = out.add_null_mask();
  std::uint64_t const rows = order.size();
  for (std::uint64_t j = 0; j < null_mask_bytes(rows); ++j) {
    unsigned byte = 0;
    for (unsigned b = 0; b < 8 && 8 * j + b < rows; ++b) {
      byte |= (row_is_valid(source, order[8 * j + b]) ? 1u : 0u) << b;
    }
    mask[j] = static_cast<std::uint8_t>(byte);
  }
}

// The rows of column `in` in the order `order`, into a new host column (its null mask too).
column gather_host(const column& in, const std::vector<std::uint64_t>& order) {
  column out = gather_values_host(in, order);
  gather_mask_host(in, order, out);
  out.set_logical(in.logical());
  return out;
}

// The table in the order of `ids` (one partition id below `partitions` per row), stable within
// each partition: a counting sort.
partitioned_table gather_by_ids_host(const table& input, const std::vector<std::uint32_t>& ids,
                                     std::uint32_t partitions) {
  partitioned_table out;
  out.partition_offsets.assign(std::size_t{partitions} + 1, 0);
  for (std::uint32_t id : ids) ++out.partition_offsets[id + 1];
  for (std::size_t p = 0; p < partitions; ++p) out.partition_offsets[p + 1] += out.partition_offsets[p];
  std::vector<std::uint64_t> next(out.partition_offsets.begin(), out.partition_offsets.end() - 1);
  std::vector<std::uint64_t> order(ids.size());
  for (std::uint64_t row = 0; row < ids.size(); ++row) order[next[ids[row]]++] = row;
  out.rows.names = input.names;
  out.rows.columns.reserve(input.columns.size());
  for (column const& c : input.columns) out.rows.columns.push_back(gather_host(c, order));
  return out;
}

partitioned_table hash_partition_host(const table& input, std::uint64_t rows,
                                      std::span<const std::size_t> key_columns, std::uint32_t partitions) {
  std::vector<std::uint32_t> ids(rows);
  for (std::size_t k = 0; k < key_columns.size(); ++k) {
    column_view const key = input.columns[key_columns[k]].view();
    with_type(key.type, [&](auto type_tag) {
      for (std::uint64_t row = 0; row < rows; ++row) {
        std::uint32_t const h = partition_rows::key_hash_or_null<decltype(type_tag)::value>(
            key.data, key.offsets, key.null_mask, row, partition_hash_seed);
        ids[row] = k == 0 ? h : hash_combine(ids[row], h);
      }
    });
  }
  for (auto& id : ids) id %= partitions;
  return gather_by_ids_host(input, ids, partitions);
}

partitioned_table range_partition_host(const table& input, std::uint64_t rows, std::size_t key_column,
                                       const column& splits) {
  std::vector<std::uint32_t> ids(rows);
  column_view const key = input.columns[key_column].view();
  column_view const s = splits.view();
  auto const split_count = static_cast<std::uint32_t>(s.count);
  with_type(key.type, [&](auto type_tag) {
    if constexpr (decltype(type_tag)::value == value_type::string) {
      auto const* chars = static_cast<const char*>(key.data);
      for (std::uint64_t row = 0; row < rows; ++row) {
        ids[row] = partition_rows::row_is_null(key.null_mask, row)
                       ? 0
                       : partition_rows::string_range_of(partition_rows::string_at(chars, key.offsets, row),
                                                         static_cast<const char*>(s.data), s.offsets, split_count);
      }
    } else {
      using T = typename cpp_type_of<decltype(type_tag)::value>::type;
      auto const* keys = static_cast<const T*>(key.data);
      for (std::uint64_t row = 0; row < rows; ++row) {
        ids[row] = partition_rows::row_is_null(key.null_mask, row)
                       ? 0
                       : partition_rows::range_of(keys[row], static_cast<const T*>(s.data), split_count);
      }
    }
  });
  return gather_by_ids_host(input, ids, split_count + 1);
}

}  // namespace

partitioned_table hash_partition(const table& input, std::span<const std::size_t> key_columns,
                                 std::uint32_t partitions, cudaStream_t stream) {
  constexpr std::string_view op = "hash_partition";
  if (key_columns.empty()) fail_argument(op, "no key columns given: at least one column must be hashed");
  for (std::size_t key : key_columns) check_key_index(op, input, key);
  if (partitions == 0) fail_argument(op, "partitions is 0: rows need at least one partition");
  if (partitions > max_partitions) {
    fail_argument(op, std::to_string(partitions) + " partitions is above max_partitions (" +
                          std::to_string(max_partitions) + ")");
  }
  auto const [rows, memory] = check_table(op, input);
  if (memory == memory_kind::device) return detail::hash_partition_gpu(input, rows, key_columns, partitions, stream);
  return hash_partition_host(input, rows, key_columns, partitions);
}

partitioned_table range_partition(const table& input, std::size_t key_column, const column_view& split_points,
                                  cudaStream_t stream) {
  constexpr std::string_view op = "range_partition";
  check_key_index(op, input, key_column);
  auto const [rows, memory] = check_table(op, input);
  column const splits = checked_split_points(input, key_column, split_points, stream);
  if (memory == memory_kind::device) return detail::range_partition_gpu(input, rows, key_column, splits, stream);
  return range_partition_host(input, rows, key_column, splits);
}

}  // namespace zs
