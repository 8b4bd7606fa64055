// What the partitioner computes for one row: its key's hash and its range partition. The CPU
// path (lib/src/partition.cpp) and the GPU kernels call these same functions, so the two paths
// cannot disagree on a row.
#pragma once

#include <cstdint>
#include <type_traits>

#include "zs/column.hpp"
#include "zs/hd.hpp"
#include "zs/partition.hpp"

namespace zs::partition_rows {

/// The string of `row` of a string column: its first byte and its length.
struct string_ref {
  const unsigned char* bytes;
  std::uint64_t size;
};
ZS_HD inline string_ref string_at(const char* chars, const std::int64_t* offsets, std::uint64_t row) noexcept {
  return {reinterpret_cast<const unsigned char*>(chars) + offsets[row],
          static_cast<std::uint64_t>(offsets[row + 1] - offsets[row])};
}

/// The hash of the key of `row` in a column of `Type` (values or characters at `data`, string
/// offsets at `offsets`), as zs/partition.hpp defines it.
template <value_type Type>
ZS_HD inline std::uint32_t key_hash(const void* data, const std::int64_t* offsets, std::uint64_t row,
                                    std::uint32_t seed) noexcept {
  if constexpr (Type == value_type::int8) {
    return hash_key(static_cast<const std::int8_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::int16) {
    return hash_key(static_cast<const std::int16_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::uint8) {
    return hash_key(static_cast<const std::uint8_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::uint16) {
    return hash_key(static_cast<const std::uint16_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::int32) {
    return hash_key(static_cast<const std::int32_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::uint32) {
    return hash_key(static_cast<const std::uint32_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::int64) {
    return hash_key(static_cast<const std::int64_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::uint64) {
    return hash_key(static_cast<const std::uint64_t*>(data)[row], seed);
  } else if constexpr (Type == value_type::float32) {
    return hash_key(static_cast<const float*>(data)[row], seed);
  } else if constexpr (Type == value_type::float64) {
    return hash_key(static_cast<const double*>(data)[row], seed);
  } else if constexpr (Type == value_type::int128) {
    return hash_key(static_cast<const int128_value*>(data)[row], seed);
  } else {
    string_ref const s = string_at(static_cast<const char*>(data), offsets, row);
    return murmur3_x86_32(s.bytes, s.size, seed);
  }
}

/// Whether row `row` of the validity bitmap `mask` is null (never, where mask is nullptr).
ZS_HD inline bool row_is_null(const std::uint8_t* mask, std::uint64_t row) noexcept {
  return mask != nullptr && ((mask[row >> 3] >> (row & 7)) & 1u) == 0;
}

/// The hash of the key of `row` as hash_partition combines it: null_key_hash for a null row of
/// a nullable key column (`mask`, nullptr when it has none), key_hash otherwise.
template <value_type Type>
ZS_HD inline std::uint32_t key_hash_or_null(const void* data, const std::int64_t* offsets, const std::uint8_t* mask,
                                            std::uint64_t row, std::uint32_t seed) noexcept {
  return row_is_null(mask, row) ? null_key_hash : key_hash<Type>(data, offsets, row, seed);
}

/// Whether string a sorts before string b: byte by byte as unsigned bytes, a prefix first.
ZS_HD inline bool string_less(string_ref a, string_ref b) noexcept {
  std::uint64_t const common = a.size < b.size ? a.size : b.size;
  for (std::uint64_t i = 0; i < common; ++i) {
    if (a.bytes[i] != b.bytes[i]) return a.bytes[i] < b.bytes[i];
  }
  return a.size < b.size;
}

/// The range partition of a fixed-width key: the number of split points at or below it (the
/// first partition whose upper split is greater), S for a NaN key.
template <typename T>
ZS_HD inline std::uint32_t range_of(T key, const T* splits, std::uint32_t split_count) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    if (key != key) return split_count;  // NaN: after every number
  }
  std::uint32_t low = 0, high = split_count;
  while (low < high) {
    std::uint32_t const mid = low + (high - low) / 2;
    if (key < splits[mid]) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return low;
}

/// The same for a string key, against string split points (characters and offsets).
ZS_HD inline std::uint32_t string_range_of(string_ref key, const char* split_chars, const std::int64_t* split_offsets,
                                           std::uint32_t split_count) noexcept {
  std::uint32_t low = 0, high = split_count;
  while (low < high) {
    std::uint32_t const mid = low + (high - low) / 2;
    if (string_less(key, string_at(split_chars, split_offsets, mid))) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return low;
}

}  // namespace zs::partition_rows
