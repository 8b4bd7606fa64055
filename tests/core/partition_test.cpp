// The partitioner on the CPU (zs/partition.hpp): the hash checked against published
// MurmurHash3_x86_32 values, then every output checked against an independent reference: each
// row's partition computed here from the bytes of its keys, rows grouped by it in input order.
#include "zs/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "zs_test.hpp"

namespace {

using zs::value_type;

// --- the reference ------------------------------------------------------------------------------

// The bytes a key value is hashed over, written out here rather than taken from the library:
// little-endian value bytes, floats normalised (-0.0 to 0.0, any NaN to the quiet NaN).
std::string key_bytes(const zs::column_view& c, std::uint64_t row) {
  if (c.type == value_type::string) {
    auto const* chars = static_cast<const char*>(c.data);
    return std::string(chars + c.offsets[row], static_cast<std::size_t>(c.offsets[row + 1] - c.offsets[row]));
  }
  std::size_t const width = zs::value_width(c.type);
  std::string bytes(static_cast<const char*>(c.data) + row * width, width);
  if (width < 4) {
    // Narrow integers: the 4 bytes of their 32-bit widening, sign-extended for int8 and int16.
    bool const is_signed = c.type == value_type::int8 || c.type == value_type::int16;
    char const fill = is_signed && (static_cast<unsigned char>(bytes.back()) & 0x80) != 0 ? '\xff' : '\0';
    bytes.append(4 - width, fill);
  } else if (c.type == value_type::float32) {
    float f = 0;
    std::memcpy(&f, bytes.data(), 4);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) bits = 0x7fc00000u;
    if (f == 0.0f) bits = 0;
    std::memcpy(bytes.data(), &bits, 4);
  } else if (c.type == value_type::float64) {
    double d = 0;
    std::memcpy(&d, bytes.data(), 8);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    if (std::isnan(d)) bits = 0x7ff8000000000000ull;
    if (d == 0.0) bits = 0;
    std::memcpy(bytes.data(), &bits, 8);
  }
  return bytes;
}

// Whether row `row` of host column `c` is null, read bit by bit here.
bool is_null(const zs::column_view& c, std::uint64_t row) {
  return c.null_mask != nullptr && ((c.null_mask[row / 8] >> (row % 8)) & 1) == 0;
}

std::uint32_t reference_row_hash(const zs::table& t, const std::vector<std::size_t>& keys, std::uint64_t row) {
  std::uint32_t h = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    zs::column_view const key = t.columns[keys[k]].view();
    std::string const bytes = key_bytes(key, row);
    // A null key hashes to the documented constant, whatever its slot holds.
    std::uint32_t const kh = is_null(key, row) ? 0xffffffffu : zs::murmur3_x86_32(bytes.data(), bytes.size(), 0);
    h = k == 0 ? kh : h ^ (kh + 0x9e3779b9u + (h << 6) + (h >> 2));
  }
  return h;
}

std::vector<std::uint32_t> reference_hash_ids(const zs::table& t, const std::vector<std::size_t>& keys,
                                              std::uint32_t partitions) {
  std::uint64_t const rows = t.columns.empty() ? 0 : t.columns[0].size();
  std::vector<std::uint32_t> ids(rows);
  for (std::uint64_t r = 0; r < rows; ++r) ids[r] = reference_row_hash(t, keys, r) % partitions;
  return ids;
}

// Gives host column `c` a null mask with row i valid where valid[i], written bit by bit.
void set_validity(zs::column& c, const std::vector<bool>& valid) {
  std::uint8_t* const mask = c.add_null_mask();
  std::fill(mask, mask + zs::null_mask_bytes(c.size()), std::uint8_t{0});
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid[i]) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
  }
}

// Rows `order` of host column `c`, as a new host column (with their validity where c has a mask).
zs::column take_rows(const zs::column& c, const std::vector<std::uint64_t>& order) {
  zs::column out;
  if (c.type() == value_type::string) {
    auto const all = c.strings();
    std::vector<std::string> picked;
    for (auto r : order) picked.push_back(all[r]);
    out = zs::column::from_strings(picked);
  } else {
    std::size_t const width = zs::value_width(c.type());
    out = zs::column::allocate(c.type(), order.size(), zs::memory_kind::host);
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::memcpy(static_cast<char*>(out.mutable_view().data) + i * width,
                  static_cast<const char*>(c.view().data) + order[i] * width, width);
    }
  }
  if (c.nullable()) {
    auto const valid = c.validity();
    std::vector<bool> picked;
    for (auto r : order) picked.push_back(valid[r]);
    set_validity(out, picked);
  }
  return out;
}

// The result `ids` must give: partitions in order, rows of each in input order.
void expect_partitioned_as(const zs::table& input, const std::vector<std::uint32_t>& ids, std::uint32_t partitions,
                           const zs::partitioned_table& got) {
  std::vector<std::uint64_t> order(ids.size());
  for (std::uint64_t r = 0; r < ids.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return ids[a] < ids[b]; });
  std::vector<std::uint64_t> offsets(std::size_t{partitions} + 1, 0);
  for (std::uint32_t id : ids) {
    ASSERT_LT(id, partitions);
    ++offsets[id + 1];
  }
  for (std::uint32_t p = 0; p < partitions; ++p) offsets[p + 1] += offsets[p];
  EXPECT_EQ(got.partitions(), partitions);
  ASSERT_EQ(got.partition_offsets, offsets);
  EXPECT_EQ(got.rows.names, input.names);
  ASSERT_EQ(got.rows.columns.size(), input.columns.size());
  for (std::size_t c = 0; c < input.columns.size(); ++c) {
    SCOPED_TRACE("column " + std::to_string(c));
    EXPECT_EQ(got.rows.columns[c].memory(), zs::memory_kind::host);
    auto const expected = take_rows(input.columns[c], order);
    zs::test::expect_same_column(got.rows.columns[c], expected);
    ASSERT_EQ(got.rows.columns[c].nullable(), input.columns[c].nullable()) << "a mask is kept, none is made";
    EXPECT_EQ(got.rows.columns[c].validity(), expected.validity()) << "null rows differ";
  }
}

void expect_hash_partitioned(const zs::table& input, const std::vector<std::size_t>& keys, std::uint32_t partitions) {
  auto const got = zs::hash_partition(input, keys, partitions);
  expect_partitioned_as(input, reference_hash_ids(input, keys, partitions), partitions, got);
}

template <typename T>
zs::column col(std::vector<T> values) {
  return zs::column::from_values(std::span<const T>(values));
}
zs::column strings(std::vector<std::string> values) { return zs::column::from_strings(values); }

// A table of `names` and `columns` (columns are move-only, so no initializer list).
template <class... Columns>
zs::table make_table(std::vector<std::string> names, Columns&&... columns) {
  zs::table t;
  t.names = std::move(names);
  (t.columns.push_back(std::forward<Columns>(columns)), ...);
  return t;
}

// A mixed table of `rows` rows: int32, int64, uint32, uint64, float32, float64, string.
zs::table mixed_table(std::uint64_t rows, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> a;
  std::vector<std::int64_t> b;
  std::vector<std::uint32_t> c;
  std::vector<std::uint64_t> d;
  std::vector<float> e;
  std::vector<double> f;
  std::vector<std::string> g;
  for (std::uint64_t i = 0; i < rows; ++i) {
    a.push_back(static_cast<std::int32_t>(rng() % 50) - 25);
    b.push_back(static_cast<std::int64_t>(rng()));
    c.push_back(static_cast<std::uint32_t>(rng()));
    d.push_back(rng() % 7);
    e.push_back(static_cast<float>(rng() % 1000) / 8.0f);
    f.push_back(static_cast<double>(rng() % 100) - 50.5);
    g.push_back(std::string(rng() % 20, static_cast<char>('a' + rng() % 3)));
  }
  return make_table({"a", "b", "c", "d", "e", "f", "g"},
                    col(a), col(b), col(c), col(d), col(e), col(f), strings(g));
}

// --- the hash ------------------------------------------------------------------------------------

// Published MurmurHash3_x86_32 values (the reference implementation's), so the hash is checked
// against something other than itself.
TEST(PartitionHash, MurmurHash3MatchesPublishedValues) {
  struct vector {
    std::vector<unsigned char> bytes;
    std::uint32_t seed;
    std::uint32_t hash;
  };
  std::vector<vector> const vectors{
      {{}, 0, 0},
      {{}, 1, 0x514E28B7u},
      {{}, 0xffffffffu, 0x81F16F39u},
      {{0xff, 0xff, 0xff, 0xff}, 0, 0x76293B50u},
      {{0x21, 0x43, 0x65, 0x87}, 0, 0xF55B516Bu},
      {{0x21, 0x43, 0x65, 0x87}, 0x5082EDEEu, 0x2362F9DEu},
      {{0x21, 0x43, 0x65}, 0, 0x7E4A8634u},
      {{0x21, 0x43}, 0, 0xA0F7B07Au},
      {{0x21}, 0, 0x72661CF4u},
      {{0, 0, 0, 0}, 0, 0x2362F9DEu},
      {{0, 0, 0}, 0, 0x85F0B427u},
      {{0, 0}, 0, 0x30F4C306u},
      {{0}, 0, 0x514E28B7u},
  };
  for (auto const& v : vectors) {
    EXPECT_EQ(zs::murmur3_x86_32(v.bytes.data(), v.bytes.size(), v.seed), v.hash)
        << v.bytes.size() << " bytes, seed " << v.seed;
  }
  std::string const fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(zs::murmur3_x86_32(fox.data(), fox.size(), 0x9747b28cu), 0x2FA826CDu);
  EXPECT_EQ(zs::hash_key(std::string_view("Hello, world!"), 1234), 0xFAF6CDB3u);
  EXPECT_EQ(zs::hash_key(std::string_view("aaaa"), 0x9747b28cu), 0x5A97808Au);
  EXPECT_EQ(zs::hash_key(std::string_view("abc"), 0x9747b28cu), 0xC84A62DDu);
  EXPECT_EQ(zs::hash_key(std::string_view(""), 0), 0u);
}

TEST(PartitionHash, FixedWidthKeysHashTheirLittleEndianBytes) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t const word = rng();
    auto const w32 = static_cast<std::uint32_t>(word);
    auto const seed = static_cast<std::uint32_t>(rng());
    EXPECT_EQ(zs::hash_key(w32, seed), zs::murmur3_x86_32(&w32, 4, seed));
    EXPECT_EQ(zs::hash_key(static_cast<std::int32_t>(w32), seed), zs::murmur3_x86_32(&w32, 4, seed));
    EXPECT_EQ(zs::hash_key(word, seed), zs::murmur3_x86_32(&word, 8, seed));
    EXPECT_EQ(zs::hash_key(static_cast<std::int64_t>(word), seed), zs::murmur3_x86_32(&word, 8, seed));
    double d = 0;
    std::memcpy(&d, &word, 8);
    if (!std::isnan(d) && d != 0) {
      EXPECT_EQ(zs::hash_key(d, seed), zs::murmur3_x86_32(&d, 8, seed));
    }
  }
}

// Narrow integers hash as their 32-bit widening: a value hashes alike in every integer type of
// at most 32 bits that holds it.
TEST(PartitionHash, NarrowKeysHashAsTheir32BitWidening) {
  for (int v = -128; v <= 127; ++v) {
    EXPECT_EQ(zs::hash_key(static_cast<std::int8_t>(v)), zs::hash_key(static_cast<std::int32_t>(v))) << v;
    EXPECT_EQ(zs::hash_key(static_cast<std::int16_t>(v)), zs::hash_key(static_cast<std::int32_t>(v))) << v;
  }
  for (unsigned v = 0; v <= 255; ++v) {
    EXPECT_EQ(zs::hash_key(static_cast<std::uint8_t>(v)), zs::hash_key(static_cast<std::uint32_t>(v))) << v;
    EXPECT_EQ(zs::hash_key(static_cast<std::uint8_t>(v)), zs::hash_key(static_cast<std::uint16_t>(v))) << v;
  }
  for (int v : {-32768, -1000, 32767}) {
    EXPECT_EQ(zs::hash_key(static_cast<std::int16_t>(v)), zs::hash_key(static_cast<std::int32_t>(v))) << v;
  }
  EXPECT_EQ(zs::hash_key(std::uint16_t{65535}), zs::hash_key(std::uint32_t{65535}));
  EXPECT_EQ(zs::hash_key(std::int8_t{-1}), zs::murmur3_x86_32("\xff\xff\xff\xff", 4, 0));
  EXPECT_EQ(zs::hash_key(std::uint8_t{255}), zs::murmur3_x86_32("\xff\0\0\0", 4, 0));
}

// A table keyed by a narrow column partitions as the reference says, and as the same table
// keyed by the column's int32 widening.
TEST(HashPartition, NarrowKeysAndColumns) {
  std::mt19937_64 rng(21);
  std::vector<std::int8_t> a;
  std::vector<std::int16_t> b;
  std::vector<std::uint8_t> c;
  std::vector<std::uint16_t> d;
  std::vector<std::int32_t> wide;
  for (int i = 0; i < 3000; ++i) {
    a.push_back(static_cast<std::int8_t>(rng()));
    b.push_back(static_cast<std::int16_t>(rng()));
    c.push_back(static_cast<std::uint8_t>(rng()));
    d.push_back(static_cast<std::uint16_t>(rng()));
    wide.push_back(a.back());
  }
  auto const t = make_table({"a", "b", "c", "d", "wide"}, col(a), col(b), col(c), col(d), col(wide));
  for (std::size_t key = 0; key < 4; ++key) {
    for (std::uint32_t p : {3u, 64u}) {
      SCOPED_TRACE("key " + std::to_string(key) + ", " + std::to_string(p) + " partitions");
      expect_hash_partitioned(t, {key}, p);
    }
  }
  expect_hash_partitioned(t, {1, 3}, 17);
  EXPECT_EQ(zs::hash_partition(t, {0}, 50).partition_offsets, zs::hash_partition(t, {4}, 50).partition_offsets);
}

TEST(PartitionHash, EqualFloatsHashEqualNegativeZeroAndEveryNaN) {
  EXPECT_EQ(zs::hash_key(-0.0f), zs::hash_key(0.0f));
  EXPECT_EQ(zs::hash_key(-0.0), zs::hash_key(0.0));
  float const nan32 = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(zs::hash_key(-nan32), zs::hash_key(nan32));
  EXPECT_EQ(zs::hash_key(std::numeric_limits<float>::signaling_NaN()), zs::hash_key(nan32));
  std::uint32_t const payload_bits = 0x7f800123u;
  float payload_nan = 0;
  std::memcpy(&payload_nan, &payload_bits, 4);
  ASSERT_TRUE(std::isnan(payload_nan));
  EXPECT_EQ(zs::hash_key(payload_nan), zs::hash_key(nan32));
  double const nan64 = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t const payload64 = 0xfff0000000abcdefull;
  double payload_nan64 = 0;
  std::memcpy(&payload_nan64, &payload64, 8);
  ASSERT_TRUE(std::isnan(payload_nan64));
  EXPECT_EQ(zs::hash_key(payload_nan64), zs::hash_key(nan64));
  EXPECT_EQ(zs::hash_key(-nan64), zs::hash_key(nan64));
  // The normalised NaN is the quiet NaN's bytes.
  std::uint32_t const quiet = 0x7fc00000u;
  EXPECT_EQ(zs::hash_key(nan32), zs::murmur3_x86_32(&quiet, 4, 0));
  EXPECT_NE(zs::hash_key(1.0f), zs::hash_key(-1.0f));
}

TEST(PartitionHash, CombineIsOrderSensitive) {
  std::uint32_t const a = zs::hash_key(std::int32_t{1}), b = zs::hash_key(std::int32_t{2});
  EXPECT_NE(zs::hash_combine(a, b), zs::hash_combine(b, a));
  EXPECT_EQ(zs::hash_combine(a, b), a ^ (b + 0x9e3779b9u + (a << 6) + (a >> 2)));
}

// --- hash partitioning ------------------------------------------------------------------------------

TEST(HashPartition, EmptyTableGivesEmptyPartitionsAndColumns) {
  auto const t = make_table({"i", "s", "d"}, col<std::int32_t>({}), strings({}), col<double>({}));
  auto const got = zs::hash_partition(t, {0, 1}, 4);
  EXPECT_EQ(got.partition_offsets, (std::vector<std::uint64_t>(5, 0)));
  ASSERT_EQ(got.rows.columns.size(), 3u);
  for (auto const& c : got.rows.columns) EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(got.rows.columns[1].view().offsets[0], 0);
  expect_hash_partitioned(t, {2}, 3);
}

TEST(HashPartition, OneRowLandsInItsHashsPartition) {
  auto const t = make_table({"k", "v"}, col<std::int64_t>({42}), strings({"only"}));
  auto const got = zs::hash_partition(t, {0}, 10);
  std::uint32_t const p = zs::hash_key(std::int64_t{42}) % 10;
  for (std::uint32_t q = 0; q <= 10; ++q) EXPECT_EQ(got.partition_offsets[q], q <= p ? 0u : 1u) << q;
  EXPECT_EQ(got.rows.columns[1].strings(), std::vector<std::string>{"only"});
  expect_hash_partitioned(t, {0, 1}, 10);
}

TEST(HashPartition, LogicalTypesStayOnTheirColumns) {
  auto t = make_table({"when", "day", "note"}, col<std::int64_t>({5, 1, 9, 5}), col<std::int32_t>({1, 2, 3, 4}),
                      strings({"a", "b", "c", "d"}));
  t.columns[0].set_logical(zs::logical_type::timestamp(zs::time_unit::microsecond, "UTC"));
  t.columns[1].set_logical(zs::logical_type::date32());
  auto const got = zs::hash_partition(t, {0}, 3);
  EXPECT_EQ(got.rows.columns[0].logical(), zs::logical_type::timestamp(zs::time_unit::microsecond, "UTC"));
  EXPECT_EQ(got.rows.columns[1].logical(), zs::logical_type::date32());
  EXPECT_TRUE(got.rows.columns[2].logical().is_none());
  auto const split = zs::range_partition(t, 1, col<std::int32_t>({2}).view());
  EXPECT_EQ(split.rows.columns[1].logical(), zs::logical_type::date32());
}

TEST(HashPartition, AllRowsOfOneKeyStayTogetherInInputOrder) {
  std::vector<std::int32_t> keys(500, 77), values(500);
  for (int i = 0; i < 500; ++i) values[i] = i;
  auto const t = make_table({"k", "v"}, col(keys), col(values));
  auto const got = zs::hash_partition(t, {0}, 16);
  std::uint32_t const p = zs::hash_key(std::int32_t{77}) % 16;
  EXPECT_EQ(got.partition_offsets[p], 0u);
  EXPECT_EQ(got.partition_offsets[p + 1], 500u);
  auto const* v = got.rows.columns[1].view().values<std::int32_t>();
  EXPECT_TRUE(std::is_sorted(v, v + 500)) << "rows of a partition keep their input order";
  expect_hash_partitioned(t, {0}, 16);
}

TEST(HashPartition, MorePartitionsThanRows) {
  auto const t = mixed_table(10, 1);
  expect_hash_partitioned(t, {0}, 1000);
  expect_hash_partitioned(t, {6}, zs::max_partitions);
}

TEST(HashPartition, OnePartitionKeepsTheTableAsItIs) {
  auto const t = mixed_table(300, 2);
  auto const got = zs::hash_partition(t, {1}, 1);
  EXPECT_EQ(got.partition_offsets, (std::vector<std::uint64_t>{0, 300}));
  for (std::size_t c = 0; c < t.columns.size(); ++c) zs::test::expect_same_column(got.rows.columns[c], t.columns[c]);
}

TEST(HashPartition, EveryKeyTypeAndPartitionCount) {
  auto const t = mixed_table(2000, 3);
  for (std::size_t key = 0; key < t.columns.size(); ++key) {
    for (std::uint32_t p : {2u, 3u, 7u, 64u, 1000u}) {
      SCOPED_TRACE("key " + std::to_string(key) + ", " + std::to_string(p) + " partitions");
      expect_hash_partitioned(t, {key}, p);
    }
  }
}

TEST(HashPartition, MultipleKeysCombineInKeyOrder) {
  auto const t = mixed_table(3000, 4);
  expect_hash_partitioned(t, {0, 6}, 13);
  expect_hash_partitioned(t, {6, 0}, 13);
  expect_hash_partitioned(t, {0, 3, 5, 6}, 32);
  expect_hash_partitioned(t, {0, 0}, 5);  // a key may repeat
  // (a, b) and (b, a) hash differently: the rows spread otherwise.
  auto const ab = zs::hash_partition(t, {0, 3}, 64), ba = zs::hash_partition(t, {3, 0}, 64);
  EXPECT_NE(ab.partition_offsets, ba.partition_offsets);
}

TEST(HashPartition, StringKeysEmptyNonAsciiAndLong) {
  std::vector<std::string> keys{"",      "a",          "é",           "日本語", "🙂🙃", "", std::string(10000, 'x'),
                                "a",     "\xff\xfe",   std::string(1, '\0'), "é",     std::string(70001, 'q'),
                                "Ünïcödé", "abc\0def"};
  keys.back().push_back('\0');
  std::vector<std::int32_t> ids(keys.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i);
  auto const t = make_table({"s", "id"}, strings(keys), col(ids));
  for (std::uint32_t p : {1u, 2u, 5u, 97u}) expect_hash_partitioned(t, {0}, p);
  auto const got = zs::hash_partition(t, {0}, 97);
  // Equal strings meet: the two "" rows, the two "a" rows and the two "é" rows each share a partition.
  auto const part_of = [&](std::string_view s) { return zs::hash_key(s) % 97; };
  EXPECT_EQ(part_of(""), 0u % 97);  // MurmurHash3 of no bytes with seed 0 is 0
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::uint32_t const p = part_of(keys[i]);
    auto const& out = got.rows.columns[1];
    auto const* out_ids = out.view().values<std::int32_t>();
    bool const found = std::find(out_ids + got.partition_offsets[p], out_ids + got.partition_offsets[p + 1],
                                 static_cast<std::int32_t>(i)) != out_ids + got.partition_offsets[p + 1];
    EXPECT_TRUE(found) << "row " << i << " not in partition " << p;
  }
}

TEST(HashPartition, EqualFloatKeysMeetNegativeZeroAndNaNs) {
  float const nan32 = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t const payload_bits = 0xffc01234u;
  float payload_nan = 0;
  std::memcpy(&payload_nan, &payload_bits, 4);
  std::vector<float> f{0.0f, -0.0f, nan32, -nan32, payload_nan, 1.5f, -1.5f, 0.0f};
  std::vector<double> d{-0.0, 0.0, std::nan("1"), -std::nan(""), std::numeric_limits<double>::quiet_NaN(), 2.0, -2.0,
                        0.0};
  std::vector<std::int32_t> ids{0, 1, 2, 3, 4, 5, 6, 7};
  auto const t = make_table({"f", "d", "id"}, col(f), col(d), col(ids));
  for (std::size_t key : {0u, 1u}) {
    auto const got = zs::hash_partition(t, {key}, 1024);
    auto const& out = got.rows.columns[2];
    auto const partition_of_row = [&](std::int32_t row) {
      auto const* v = out.view().values<std::int32_t>();
      auto const at = static_cast<std::uint64_t>(std::find(v, v + 8, row) - v);
      return static_cast<std::uint32_t>(
          std::upper_bound(got.partition_offsets.begin(), got.partition_offsets.end(), at) -
          got.partition_offsets.begin() - 1);
    };
    EXPECT_EQ(partition_of_row(0), partition_of_row(1)) << "-0.0 and 0.0, key " << key;
    EXPECT_EQ(partition_of_row(0), partition_of_row(7));
    EXPECT_EQ(partition_of_row(2), partition_of_row(3)) << "NaNs, key " << key;
    EXPECT_EQ(partition_of_row(2), partition_of_row(4)) << "NaNs, key " << key;
    expect_hash_partitioned(t, {key}, 1024);
  }
  expect_hash_partitioned(t, {0, 1}, 3);
}

TEST(HashPartition, RealColumns) {
  // Real columns cut to the shortest of them, so that they make one table.
  std::vector<std::string> const files{"ncbi_tax_id.i32", "geoip4_lo.u32",      "airport_lat.f64",
                                       "levitus_temp.f32", "deb_maintainers.txt", "osm_poi_names.txt"};
  std::vector<zs::column> full;
  for (auto const& f : files) full.push_back(zs::test::data_column(f));
  std::uint64_t rows = UINT64_MAX;
  for (auto const& c : full) rows = std::min(rows, c.size());
  std::vector<std::uint64_t> first(rows);
  for (std::uint64_t i = 0; i < rows; ++i) first[i] = i;
  zs::table t;
  for (std::size_t i = 0; i < files.size(); ++i) {
    t.names.push_back(files[i]);
    t.columns.push_back(take_rows(full[i], first));
  }
  expect_hash_partitioned(t, {0}, 64);
  expect_hash_partitioned(t, {4}, 7);
  expect_hash_partitioned(t, {5, 2}, 1000);
  expect_hash_partitioned(t, {3}, 16);  // float fill values: one partition holds them all
}

// --- range partitioning ------------------------------------------------------------------------------

// The range partition of each row, computed here: splits at or below the key (NaN: all).
template <typename T>
std::vector<std::uint32_t> reference_range_ids(const std::vector<T>& keys, const std::vector<T>& splits) {
  std::vector<std::uint32_t> ids;
  for (T k : keys) {
    std::uint32_t p = 0;
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(k)) p = static_cast<std::uint32_t>(splits.size());
    }
    if (p == 0) {
      while (p < splits.size() && !(k < splits[p])) ++p;
    }
    ids.push_back(p);
  }
  return ids;
}

TEST(RangePartition, TiesGoToThePartitionTheSplitBegins) {
  std::vector<std::int32_t> keys{5, 1, 10, 9, 10, 20, 25, 0, 30, -4};
  std::vector<std::int32_t> splits{1, 10, 10, 25};
  auto const t = make_table({"k"}, col(keys));
  auto const got = zs::range_partition(t, 0, col(splits).view());
  // 0 -4 | 5 1 9 | (empty: equal splits) | 10 10 20 | 25 30
  EXPECT_EQ(got.partition_offsets, (std::vector<std::uint64_t>{0, 2, 5, 5, 8, 10}));
  auto const* out = got.rows.columns[0].view().values<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(out, out + 10), (std::vector<std::int32_t>{0, -4, 5, 1, 9, 10, 10, 20, 25, 30}));
  expect_partitioned_as(t, reference_range_ids(keys, splits), 5, got);
}

TEST(RangePartition, NoSplitPointsIsOnePartition) {
  auto const t = mixed_table(100, 5);
  auto const got = zs::range_partition(t, 1, col<std::int64_t>({}).view());
  EXPECT_EQ(got.partition_offsets, (std::vector<std::uint64_t>{0, 100}));
  for (std::size_t c = 0; c < t.columns.size(); ++c) zs::test::expect_same_column(got.rows.columns[c], t.columns[c]);
}

TEST(RangePartition, FloatsNegativeZeroEqualsZeroAndNaNGoesLast) {
  double const nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> keys{-0.0, 0.0, nan, -1.0, 3.5, -nan, 1e300, -1e300};
  std::vector<double> splits{-0.0, 3.5};
  auto const t = make_table({"d"}, col(keys));
  auto const got = zs::range_partition(t, 0, col(splits).view());
  EXPECT_EQ(got.partition_offsets, (std::vector<std::uint64_t>{0, 2, 4, 8}));
  expect_partitioned_as(t, reference_range_ids(keys, splits), 3, got);
  std::vector<float> fkeys{0.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  auto const tf = make_table({"f"}, col(fkeys));
  expect_partitioned_as(tf, reference_range_ids(fkeys, std::vector<float>{0.0f, 1.0f}), 3,
                        zs::range_partition(tf, 0, col(std::vector<float>{0.0f, 1.0f}).view()));
}

TEST(RangePartition, StringsCompareAsUnsignedBytes) {
  std::vector<std::string> keys{"b", "", "apple", "é", "z", "B", "banana", "ba", "\x7f", "日本"};
  std::vector<std::string> splits{"a", "b", "ba", "\x80"};
  auto const t = make_table({"s"}, strings(keys));
  auto const got = zs::range_partition(t, 0, strings(splits).view());
  std::vector<std::uint32_t> ids;
  for (auto const& k : keys) {
    std::uint32_t p = 0;
    while (p < splits.size() && !(std::string_view(k) < std::string_view(splits[p]))) ++p;  // char_traits: unsigned
    ids.push_back(p);
  }
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{2, 0, 1, 4, 3, 0, 3, 3, 3, 4}));
  expect_partitioned_as(t, ids, 5, got);
}

TEST(RangePartition, EveryFixedWidthTypeAndRealSplits) {
  auto const t = mixed_table(1500, 6);
  auto const a = t.columns[0].view().values<std::int32_t>();
  std::vector<std::int32_t> const akeys(a, a + 1500);
  expect_partitioned_as(t, reference_range_ids(akeys, std::vector<std::int32_t>{-10, 0, 0, 12}), 5,
                        zs::range_partition(t, 0, col<std::int32_t>({-10, 0, 0, 12}).view()));
  auto const d = t.columns[3].view().values<std::uint64_t>();
  std::vector<std::uint64_t> const dkeys(d, d + 1500);
  expect_partitioned_as(t, reference_range_ids(dkeys, std::vector<std::uint64_t>{3}), 2,
                        zs::range_partition(t, 3, col<std::uint64_t>({3}).view()));

  // Real data: split a real column at quantiles of its own values.
  zs::column const elevation = zs::test::data_column("etopo5_elev_m.i32");
  auto const* e = elevation.view().values<std::int32_t>();
  std::vector<std::int32_t> keys(e, e + elevation.size());
  std::vector<std::int32_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> splits;
  for (int q = 1; q < 10; ++q) splits.push_back(sorted[sorted.size() * q / 10]);
  zs::table real;
  real.names = {"elevation"};
  real.columns.push_back(col(keys));
  expect_partitioned_as(real, reference_range_ids(keys, splits), 10, zs::range_partition(real, 0, col(splits).view()));
}

// --- errors -------------------------------------------------------------------------------------

void expect_invalid(const std::optional<zs::error>& e, const std::string& words) {
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument) << e->what();
  EXPECT_NE(std::string(e->what()).find(words), std::string::npos) << e->what();
}

TEST(PartitionErrors, NameWhatIsWrongAndTheColumn) {
  auto const t = mixed_table(10, 8);
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(t, std::span<const std::size_t>{}, 4); }),
                 "no key columns");
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(t, {0, 9}, 4); }),
                 "key column 9 is out of range: the table has 7 columns");
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(t, {0}, 0); }), "partitions is 0");
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(t, {0}, zs::max_partitions + 1); }),
                 "above max_partitions");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 7, col<std::int32_t>({}).view()); }),
                 "key column 7 is out of range");

  auto uneven = make_table({"id", "name"}, col<std::int32_t>({1, 2, 3}), strings({"a", "b"}));
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(uneven, {0}, 2); }),
                 "column 1 ('name') has 2 rows, but column 0 ('id') has 3");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(uneven, 0, col<std::int32_t>({2}).view()); }),
                 "column 1 ('name') has 2 rows");
  auto misnamed = make_table({"only"}, col<std::int32_t>({1}), col<std::int32_t>({2}));
  expect_invalid(zs::test::thrown_error([&] { zs::hash_partition(misnamed, {0}, 2); }), "1 names for 2 columns");
}

TEST(PartitionErrors, SplitPointsOfTheWrongTypeUnsortedOrNaN) {
  auto const t = make_table({"id", "price", "name"}, col<std::int32_t>({1, 2}), col<double>({1.0, 2.0}),
                                                      strings({"x", "y"}));
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 0, col<std::int64_t>({1}).view()); }),
                 "the split points are int64, but key column 0 ('id') is int32");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 0, col<std::int32_t>({1, 5, 3}).view()); }),
                 "not sorted: split point 2 of key column 0 ('id') (3) is below split point 1 (5)");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 1, col<double>({1.0, std::nan("")}).view()); }),
                 "split point 1 of key column 1 ('price') is NaN");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 2, strings({"b", "a"}).view()); }),
                 "not sorted: split point 1 of key column 2 ('name') sorts before split point 0");
  // Equal split points are sorted.
  EXPECT_NO_THROW(zs::range_partition(t, 2, strings({"a", "a"}).view()));
}

// --- nulls ----------------------------------------------------------------------------------------

// Row i valid unless i % period == phase.
std::vector<bool> every_nth_null(std::uint64_t rows, std::uint64_t period, std::uint64_t phase) {
  std::vector<bool> valid(rows);
  for (std::uint64_t i = 0; i < rows; ++i) valid[i] = i % period != phase;
  return valid;
}

// mixed_table with null masks on the int32 key (every 5th row), the uint32 (every 3rd), the
// string (every 4th) and, seeded, random nulls on the float64; the int64 and float32 have none.
zs::table nullable_mixed_table(std::uint64_t rows, std::uint32_t seed) {
  auto t = mixed_table(rows, seed);
  set_validity(t.columns[0], every_nth_null(rows, 5, 1));
  set_validity(t.columns[2], every_nth_null(rows, 3, 0));
  set_validity(t.columns[6], every_nth_null(rows, 4, 2));
  std::mt19937 rng(seed);
  std::vector<bool> random(rows);
  for (std::uint64_t i = 0; i < rows; ++i) random[i] = rng() % 2 == 0;
  set_validity(t.columns[5], random);
  return t;
}

TEST(PartitionNulls, NullKeyHashIsTheDocumentedConstant) { EXPECT_EQ(zs::null_key_hash, 0xffffffffu); }

TEST(HashPartition, MasksTravelWithTheirRowsAndNullKeysHashAsTheConstant) {
  for (std::uint64_t rows : {0, 1, 9, 1000}) {
    auto const t = nullable_mixed_table(rows, 11);
    for (std::uint32_t partitions : {1u, 2u, 7u, 64u}) {
      SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(partitions) + " partitions");
      expect_hash_partitioned(t, {0}, partitions);      // nullable int32 key
      expect_hash_partitioned(t, {6}, partitions);      // nullable string key
      expect_hash_partitioned(t, {1, 2}, partitions);   // a plain key, then a nullable one
      expect_hash_partitioned(t, {6, 0, 3}, partitions);
    }
  }
}

TEST(HashPartition, RowsOfANullKeyLandTogetherWhateverTheirSlotsHold) {
  // Null rows hold different values (which are unspecified): they must still meet.
  auto t = make_table({"key", "payload"}, col<std::int64_t>({5, 1, 2, 3, 5, 4, 7, 8}),
                      strings({"a", "", "bb", "ccc", "dd", "e", "ff", "g"}));
  set_validity(t.columns[0], {true, false, false, true, true, false, false, true});
  set_validity(t.columns[1], {true, true, false, true, false, true, true, true});
  std::uint32_t const partitions = 16;
  auto const got = zs::hash_partition(t, {0}, partitions);
  expect_partitioned_as(t, reference_hash_ids(t, {0}, partitions), partitions, got);
  std::uint32_t const null_partition = zs::null_key_hash % partitions;
  auto const key_valid = got.rows.columns[0].validity();
  std::uint64_t nulls_there = 0;
  for (auto r = got.partition_offsets[null_partition]; r < got.partition_offsets[null_partition + 1]; ++r) {
    nulls_there += key_valid[r] ? 0 : 1;
  }
  EXPECT_EQ(nulls_there, 4u) << "the four null keys share the partition of null_key_hash";
  // A string key column that is all null: one partition holds every row, in input order.
  auto all_null = make_table({"s"}, strings({"x", "y", "", "zz"}));
  set_validity(all_null.columns[0], {false, false, false, false});
  auto const one = zs::hash_partition(all_null, {0}, 5);
  EXPECT_EQ(one.partition_offsets[null_partition % 5 + 1] - one.partition_offsets[null_partition % 5], 4u);
  EXPECT_EQ(one.rows.columns[0].strings(), (std::vector<std::string>{"x", "y", "", "zz"}));
  EXPECT_EQ(one.rows.columns[0].validity(), std::vector<bool>(4, false));
}

TEST(HashPartition, ANullableColumnOfNoRowsStaysNullable) {
  auto t = make_table({"k", "s"}, col<std::int32_t>({}), strings({}));
  t.columns[1].add_null_mask();
  auto const got = zs::hash_partition(t, {0}, 3);
  EXPECT_FALSE(got.rows.columns[0].nullable());
  EXPECT_TRUE(got.rows.columns[1].nullable());
  EXPECT_EQ(got.rows.columns[1].size(), 0u);
}

TEST(RangePartition, NullKeysGoToPartitionZero) {
  auto t = make_table({"k", "v"}, col<std::int64_t>({50, -3, 7, 100, 7, 0, 999, 12}),
                      strings({"a", "b", "c", "d", "e", "f", "g", "h"}));
  std::vector<bool> const valid{true, false, true, false, true, true, false, true};
  set_validity(t.columns[0], valid);
  set_validity(t.columns[1], every_nth_null(8, 3, 1));
  std::vector<std::int64_t> const keys{50, -3, 7, 100, 7, 0, 999, 12};
  std::vector<std::int64_t> const splits{0, 10, 60};
  auto ids = reference_range_ids(keys, splits);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!valid[i]) ids[i] = 0;
  }
  auto const got = zs::range_partition(t, 0, col<std::int64_t>(splits).view());
  expect_partitioned_as(t, ids, 4, got);
  EXPECT_EQ(got.partition_offsets[1], 3u) << "the three null keys, none of the values below 0";

  // String keys: nulls before everything, even the empty string's partition.
  auto s = make_table({"name"}, strings({"zeta", "", "alpha", "mu", "beta"}));
  set_validity(s.columns[0], {true, true, false, true, false});
  auto const by_name = zs::range_partition(s, 0, strings({"b", "n"}).view());
  expect_partitioned_as(s, {2, 0, 0, 1, 0}, 3, by_name);
}

TEST(PartitionErrors, SplitPointsWithANullMaskAreRefused) {
  auto const t = make_table({"id"}, col<std::int32_t>({1, 2}));
  auto splits = col<std::int32_t>({1, 5});
  set_validity(splits, {true, false});
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 0, splits.view()); }),
                 "the split points of key column 0 ('id') have a null mask");
}

TEST(HashPartition, RealColumnNullWhereItHoldsItsFillValue) {
  // A real float column whose most frequent value is a fill value for "no measurement": as a
  // data engine would read it, those rows are null. Key and payload both.
  zs::column const temp = zs::test::data_column("levitus_temp.f32");
  zs::column const names = zs::test::data_column("osm_poi_names.txt");
  std::uint64_t const rows = std::min<std::uint64_t>({temp.size(), names.size(), 200000});
  std::vector<std::uint64_t> first(rows);
  for (std::uint64_t i = 0; i < rows; ++i) first[i] = i;
  zs::table t;
  t.names = {"temp", "name", "temp_payload"};
  t.columns.push_back(take_rows(temp, first));
  t.columns.push_back(take_rows(names, first));
  t.columns.push_back(take_rows(temp, first));
  auto const* values = t.columns[0].view().values<float>();
  std::map<std::uint32_t, std::uint64_t> seen;
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    ++seen[bits];
  }
  auto const fill = std::max_element(seen.begin(), seen.end(), [](auto& a, auto& b) { return a.second < b.second; });
  ASSERT_GT(fill->second, rows / 100) << "the column has a fill value";
  std::vector<bool> valid(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    valid[i] = bits != fill->first;
  }
  set_validity(t.columns[0], valid);
  set_validity(t.columns[2], valid);
  set_validity(t.columns[1], every_nth_null(rows, 10, 3));
  expect_hash_partitioned(t, {0}, 64);
  expect_hash_partitioned(t, {1, 0}, 7);
}

// --- int128 (decimal128) ----------------------------------------------------------------------

// The reference's own 128-bit arithmetic: the compiler's __int128, not zs::int128_value.
__extension__ using wide_int = __int128;
__extension__ using wide_uint = unsigned __int128;
wide_int as_wide(zs::int128_value v) {
  return static_cast<wide_int>(static_cast<wide_uint>(static_cast<std::uint64_t>(v.high)) << 64 | v.low);
}

// Values whose high words are negative, zero and positive, the extremes, and keys that repeat.
std::vector<zs::int128_value> int128_keys(std::uint64_t rows, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<zs::int128_value> keys(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    switch (rng() % 5) {
      case 0: keys[i] = zs::int128_value::of(static_cast<std::int64_t>(rng() % 41) - 20); break;
      case 1: keys[i] = zs::int128_value{rng() % 3, -static_cast<std::int64_t>(rng() % 3) - 1}; break;
      case 2: keys[i] = zs::int128_value{rng() % 3, static_cast<std::int64_t>(rng() % 3) + 1}; break;
      case 3: keys[i] = i % 2 == 0 ? zs::int128_min : zs::int128_max; break;
      default: keys[i] = zs::int128_value{rng(), static_cast<std::int64_t>(rng())}; break;
    }
  }
  return keys;
}

TEST(PartitionHash, Int128KeysHashTheir16LittleEndianBytes) {
  std::mt19937_64 rng(128);
  for (int i = 0; i < 1000; ++i) {
    zs::int128_value const v{rng(), static_cast<std::int64_t>(rng())};
    auto const seed = static_cast<std::uint32_t>(rng());
    unsigned char bytes[16];
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<unsigned char>(v.low >> (8 * b));
      bytes[8 + b] = static_cast<unsigned char>(static_cast<std::uint64_t>(v.high) >> (8 * b));
    }
    EXPECT_EQ(zs::hash_key(v, seed), zs::murmur3_x86_32(bytes, 16, seed));
  }
  // Sixteen 0xff bytes: -1 is all ones, above bit 63 too.
  EXPECT_EQ(zs::hash_key(zs::int128_value::of(-1)), zs::murmur3_x86_32(std::string(16, '\xff').data(), 16, 0));
}

// Whole rows travel with an int128 key (nullable) and an int128 value column, by the reference
// hash over the key's 16 bytes; the result is the same on every call.
TEST(HashPartition, Int128KeysAndColumnsGatherWholeRows) {
  std::uint64_t const rows = 2000;
  auto const keys = int128_keys(rows, 11);
  auto const values = int128_keys(rows, 12);
  std::vector<std::int32_t> ids(rows);
  std::vector<std::string> names(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    ids[i] = static_cast<std::int32_t>(i);
    names[i] = "row " + std::to_string(i);
  }
  auto t = make_table({"amount", "id", "value", "name"}, col(keys), col(ids), col(values), strings(names));
  t.columns[0].set_logical(zs::logical_type::decimal128(38, 6));
  set_validity(t.columns[0], every_nth_null(rows, 9, 4));
  set_validity(t.columns[2], every_nth_null(rows, 7, 0));
  for (std::uint32_t partitions : {1u, 2u, 13u, 300u}) {
    SCOPED_TRACE(std::to_string(partitions) + " partitions");
    expect_hash_partitioned(t, {0}, partitions);
  }
  expect_hash_partitioned(t, {1, 0}, 17);
  expect_hash_partitioned(t, {2, 3}, 5);
  auto const once = zs::hash_partition(t, {0}, 64);
  auto const again = zs::hash_partition(t, {0}, 64);
  EXPECT_EQ(once.partition_offsets, again.partition_offsets);
  for (std::size_t c = 0; c < t.columns.size(); ++c) zs::test::expect_same_column(once.rows.columns[c], again.rows.columns[c]);
  EXPECT_EQ(once.rows.columns[0].logical(), zs::logical_type::decimal128(38, 6));
  // Rows of one key value stay together: every copy of int128_min lands in one partition.
  std::uint32_t const min_home = zs::hash_key(zs::int128_min) % 64;
  auto const* out = once.rows.columns[0].view().values<zs::int128_value>();
  auto const valid = once.rows.columns[0].validity();
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (!valid[r] || out[r] != zs::int128_min) continue;
    EXPECT_GE(r, once.partition_offsets[min_home]);
    EXPECT_LT(r, once.partition_offsets[min_home + 1]);
  }
}

// int128 keys compare as signed 128-bit integers: a negative high word sorts below every
// non-negative one, and the low word compares unsigned.
TEST(RangePartition, Int128KeysCompareAsSigned128BitIntegers) {
  std::uint64_t const rows = 1500;
  auto const keys = int128_keys(rows, 21);
  std::vector<zs::int128_value> const splits{zs::int128_min,
                                             zs::int128_value{0, -2},
                                             zs::int128_value::of(-3),
                                             zs::int128_value::of(0),
                                             zs::int128_value::of(0),
                                             zs::int128_value{~std::uint64_t{0}, 0},
                                             zs::int128_value{1, 2},
                                             zs::int128_max};
  auto const t = make_table({"k", "n"}, col(keys), strings(std::vector<std::string>(rows, "x")));
  std::vector<std::uint32_t> ids;
  for (auto const& k : keys) {
    std::uint32_t p = 0;
    while (p < splits.size() && !(as_wide(k) < as_wide(splits[p]))) ++p;
    ids.push_back(p);
  }
  expect_partitioned_as(t, ids, 9, zs::range_partition(t, 0, col(splits).view()));
}

TEST(PartitionErrors, UnsortedInt128SplitPointsAreNamedInDecimal) {
  auto const t = make_table({"amount"}, col(std::vector<zs::int128_value>{zs::int128_value::of(1)}));
  expect_invalid(zs::test::thrown_error([&] {
                   zs::range_partition(t, 0, col(std::vector<zs::int128_value>{zs::int128_value{0, 1},
                                                                               zs::int128_value::of(-5)})
                                                 .view());
                 }),
                 "split point 1 of key column 0 ('amount') (-5) is below split point 0 (18446744073709551616)");
  expect_invalid(zs::test::thrown_error([&] { zs::range_partition(t, 0, col<std::int64_t>({1}).view()); }),
                 "the split points are int64, but key column 0 ('amount') is int128");
}

}  // namespace
