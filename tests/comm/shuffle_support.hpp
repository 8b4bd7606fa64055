// Deterministic columns and partitions for the shuffle and column collective tests: every rank
// can rebuild what any other rank sent, so each rank checks its received rows exactly.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/shuffle.hpp"
#include "zs/hash.hpp"
#include "zs_test.hpp"

namespace zs::test {

inline std::uint64_t noise(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return hash::mix64(hash::mix64(a * 0x9e3779b97f4a7c15ULL + b) ^ (c + 0x632be59bd9b4e019ULL));
}

/// Column `c` of rank `src`: `rows` values of `type`, mixing ordinary values, extremes, runs and
/// (floats) NaN, infinities and -0.0; strings empty, short, long and non-ASCII.
inline column make_column(value_type type, int src, std::size_t c, std::uint64_t rows) {
  if (type == value_type::string) {
    std::vector<std::string> strings(rows);
    for (std::uint64_t i = 0; i < rows; ++i) {
      std::uint64_t const n = noise(src, c, i);
      std::size_t length = n % 23;
      if (i % 97 == 5) length = 3000 + n % 2000;  // long strings
      if (i % 11 == 0) length = 0;                // empty strings
      std::string s(length, '\0');
      for (std::size_t j = 0; j < length; ++j) s[j] = static_cast<char>(noise(n, j, 7) & 0xff);  // any byte
      strings[i] = std::move(s);
    }
    return column::from_strings(strings);
  }
  column out = column::allocate(type, rows, memory_kind::host);
  std::size_t const width = value_width(type);
  auto* bytes = static_cast<std::byte*>(out.mutable_view().data);
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t v = noise(src, c, i / 4);  // runs of four equal values
    if (i % 13 == 0) v = ~std::uint64_t{0};
    if (i % 17 == 0) v = 0;
    if (i % 19 == 0) v = std::uint64_t{1} << (width * 8 - 1);  // the signed minimum
    if (type == value_type::float32 && i % 7 == 0) {
      float const special[] = {0.0f / 0.0f, 1.0f / 0.0f, -1.0f / 0.0f, -0.0f, -1e34f};
      std::uint32_t b;
      std::memcpy(&b, &special[(i / 7) % 5], 4);
      v = b;
    }
    if (type == value_type::float64 && i % 7 == 0) v = 0x7ff8000000000001ULL;  // a NaN payload
    if (type == value_type::int32 || type == value_type::int64) v = v % 1000 == 0 ? v : v >> (i % 40);
    if (type == value_type::int16 || type == value_type::uint16) v = v % 1000 == 0 ? v : v >> (i % 20);
    if (type == value_type::int8 || type == value_type::uint8) v = v % 100 == 0 ? v : v >> (i % 10);
    std::memcpy(bytes + i * width, &v, width);
  }
  return out;
}

/// Row counts of rank `src`'s column, uneven across ranks and columns.
inline std::uint64_t rows_of(int src, std::size_t c, std::uint64_t scale) {
  return scale * (1 + (static_cast<std::uint64_t>(src) * 7 + c * 3) % 5) + c;
}

/// Partition of `rows` rows of rank `src` over `ranks` destinations: uneven, some empty.
inline std::vector<std::uint64_t> partition_of(int src, std::size_t c, std::uint64_t rows, int ranks) {
  std::vector<std::uint64_t> weight(ranks);
  std::uint64_t total = 0;
  for (int d = 0; d < ranks; ++d) total += weight[d] = (static_cast<std::uint64_t>(src) * 5 + d * 3 + c) % 4;
  std::vector<std::uint64_t> offsets(ranks + 1, 0);
  std::uint64_t acc = 0;
  for (int d = 0; d < ranks; ++d) {
    acc += weight[d];
    offsets[d + 1] = total == 0 ? (d + 1 == ranks ? rows : 0) : rows * acc / total;
  }
  return offsets;
}

/// Appends rows [begin, end) of host column `from` to the expected bytes (values, or lengths
/// and characters of strings).
struct expected_column {
  value_type type;
  std::vector<std::byte> values;
  std::vector<std::int64_t> lengths;
};

inline void append_rows(expected_column& e, const column& from, std::uint64_t begin, std::uint64_t end) {
  auto const v = from.view();
  if (v.type == value_type::string) {
    auto const* chars = static_cast<const std::byte*>(v.data);
    e.values.insert(e.values.end(), chars + v.offsets[begin], chars + v.offsets[end]);
    for (std::uint64_t i = begin; i < end; ++i) e.lengths.push_back(v.offsets[i + 1] - v.offsets[i]);
  } else {
    std::size_t const w = value_width(v.type);
    auto const* p = static_cast<const std::byte*>(v.data);
    e.values.insert(e.values.end(), p + begin * w, p + end * w);
  }
}

/// Checks a received host column against the expected rows, byte for byte: every row of
/// strings, fixed-width values in the rows that hold one by got's mask (the callers check the
/// masks; the values under null rows are unspecified).
inline void expect_column(const column& got, const expected_column& e, const std::string& what) {
  ASSERT_EQ(got.type(), e.type) << what;
  ASSERT_EQ(got.memory(), memory_kind::host) << what;
  auto const v = got.view();
  ASSERT_EQ(got.data_bytes(), e.values.size()) << what;
  if (e.type == value_type::string) {
    EXPECT_TRUE(test::same_bytes(v.data, e.values.data(), e.values.size())) << what << ": characters differ";
  } else {
    EXPECT_TRUE(test::same_valid_rows(v.data, e.values.data(), got.size(), value_width(e.type), v.null_mask))
        << what << ": values differ";
  }
  if (e.type == value_type::string) {
    ASSERT_EQ(got.size(), e.lengths.size()) << what;
    EXPECT_EQ(v.offsets[0], 0) << what;
    for (std::size_t i = 0; i < e.lengths.size(); ++i) {
      ASSERT_EQ(v.offsets[i + 1] - v.offsets[i], e.lengths[i]) << what << ": length of row " << i;
    }
  } else {
    ASSERT_EQ(got.size(), e.values.size() / value_width(e.type)) << what;
  }
}

/// `rows` rows cut into `ranks` even ranges: row offsets, ranks + 1 of them.
inline std::vector<std::uint64_t> even_cut(std::uint64_t rows, int ranks) {
  std::vector<std::uint64_t> off(static_cast<std::size_t>(ranks) + 1);
  for (int d = 0; d <= ranks; ++d) off[static_cast<std::size_t>(d)] = rows * static_cast<std::uint64_t>(d) / ranks;
  return off;
}

/// Rank `src`'s string column for the choice between the string codecs: on even ranks `rows`
/// values drawn from 40 distinct strings of 20-40 random bytes (where fsst_dict wins), on odd
/// ranks every value distinct (where fsst does).
inline column repeating_or_distinct_strings(int src, std::uint64_t rows) {
  bool const repeating = src % 2 == 0;
  std::vector<std::string> strings(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t const n = noise(src, 99, repeating ? i % 40 : i);
    std::string s(20 + n % 21, '\0');
    for (std::size_t j = 0; j < s.size(); ++j) s[j] = static_cast<char>(noise(n, j, 3) & 0xff);
    strings[i] = std::move(s);
  }
  return column::from_strings(strings);
}

/// What rank `me` receives when every rank sends its repeating_or_distinct_strings(rows) cut by
/// even_cut.
inline expected_column expected_repeating_or_distinct(int me, int ranks, std::uint64_t rows) {
  auto const cut = even_cut(rows, ranks);
  expected_column e{value_type::string, {}, {}};
  for (int s = 0; s < ranks; ++s) append_rows(e, repeating_or_distinct_strings(s, rows), cut[me], cut[me + 1]);
  return e;
}

/// Rank `src`'s int32 column for the choice between bitpack and bitpack_ext: on even ranks
/// values below 16 with one in 200 a large outlier (patched frames take about half the bytes),
/// on odd ranks random values of 20 bits (the extended schemes save nothing).
inline column outlier_or_plain_ints(int src, std::uint64_t rows) {
  std::vector<std::int32_t> v(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t const n = noise(src, 77, i);
    if (src % 2 != 0) {
      v[i] = static_cast<std::int32_t>(n & 0xfffff);
    } else {
      v[i] = static_cast<std::int32_t>(n % 200 == 0 ? (n >> 8) & 0x3fffffff : n % 16);
    }
  }
  return column::from_values<std::int32_t>(v);
}

/// What rank `me` receives when every rank sends its outlier_or_plain_ints(rows) cut by even_cut.
inline expected_column expected_outlier_or_plain(int me, int ranks, std::uint64_t rows) {
  auto const cut = even_cut(rows, ranks);
  expected_column e{value_type::int32, {}, {}};
  for (int s = 0; s < ranks; ++s) append_rows(e, outlier_or_plain_ints(s, rows), cut[me], cut[me + 1]);
  return e;
}

inline const std::vector<value_type>& all_types() {
  // The narrow integers last: earlier columns keep their places (and their values).
  static const std::vector<value_type> types{value_type::int32,   value_type::int64,   value_type::uint32,
                                             value_type::uint64,  value_type::float32, value_type::float64,
                                             value_type::string,  value_type::int8,    value_type::int16,
                                             value_type::uint8,   value_type::uint16};
  return types;
}

/// Rank `r`'s columns: one of every type (all_types order), with row counts that differ between
/// ranks and columns.
inline std::vector<column> columns_of(int r, std::uint64_t scale) {
  std::vector<column> out;
  for (std::size_t c = 0; c < all_types().size(); ++c) {
    out.push_back(make_column(all_types()[c], r, c, rows_of(r, c, scale)));
  }
  return out;
}

inline std::vector<column_view> views(const std::vector<column>& columns) {
  std::vector<column_view> out;
  for (auto const& c : columns) out.push_back(c.view());
  return out;
}

/// 0, 1, ..., ranks - 1.
inline std::vector<int> every_rank(int ranks) {
  std::vector<int> out;
  for (int r = 0; r < ranks; ++r) out.push_back(r);
  return out;
}

/// Column c of the given ranks' columns_of, concatenated in the given order.
inline std::vector<expected_column> concatenated(const std::vector<int>& ranks, std::uint64_t scale) {
  std::vector<expected_column> out;
  for (auto type : all_types()) out.push_back({type, {}, {}});
  for (int r : ranks) {
    auto const cols = columns_of(r, scale);
    for (std::size_t c = 0; c < cols.size(); ++c) append_rows(out[c], cols[c], 0, cols[c].size());
  }
  return out;
}

/// Checks received host columns against the expected ones, column by column.
inline void expect_columns(const std::vector<column>& got, const std::vector<expected_column>& expected,
                           const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t c = 0; c < got.size(); ++c) {
    std::string const type(to_string(expected[c].type));
    expect_column(got[c], expected[c], what + ", column " + std::to_string(c) + " (" + type + ")");
  }
}

/// Rank r's share of `rows` rows: [rows * r / ranks, rows * (r + 1) / ranks).
inline std::pair<std::uint64_t, std::uint64_t> share_of(std::uint64_t rows, int r, int ranks) {
  auto const rr = static_cast<std::uint64_t>(r), n = static_cast<std::uint64_t>(ranks);
  return {rows * rr / n, rows * (rr + 1) / n};
}

/// Rows [begin, end) of `v`, without a copy: a string slice's offsets need not start at 0.
inline column_view slice(column_view v, std::uint64_t begin, std::uint64_t end) {
  v.count = end - begin;
  if (v.type == value_type::string) {
    v.offsets += begin;
  } else {
    v.data = static_cast<const std::byte*>(v.data) + begin * value_width(v.type);
  }
  return v;
}

/// What rank `me` must receive in every column when each rank s sends make_column(type_c, s, c,
/// rows_of(s, c, scale)) partitioned by partition_of.
inline std::vector<expected_column> expected_for(int me, int ranks, std::uint64_t scale) {
  std::vector<expected_column> out;
  for (std::size_t c = 0; c < all_types().size(); ++c) {
    expected_column e{all_types()[c], {}, {}};
    for (int s = 0; s < ranks; ++s) {
      std::uint64_t const rows = rows_of(s, c, scale);
      auto const col = make_column(all_types()[c], s, c, rows);
      auto const off = partition_of(s, c, rows, ranks);
      append_rows(e, col, off[me], off[me + 1]);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace zs::test
