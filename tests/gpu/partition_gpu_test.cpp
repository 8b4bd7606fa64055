// The partitioner on the GPU (zs/partition.hpp): for every input, the device table's partitions
// are the CPU path's byte for byte (offsets, every column, string offsets and characters), and the
// output stays in device memory. The CPU path itself is checked against an independent reference
// in tests/core/partition_test.cpp.
#include "zs/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "zs/device.hpp"
#include "zs/launch.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

using zs::value_type;

template <class... Columns>
zs::table make_table(std::vector<std::string> names, Columns&&... columns) {
  zs::table t;
  t.names = std::move(names);
  (t.columns.push_back(std::forward<Columns>(columns)), ...);
  return t;
}

template <typename T>
zs::column col(std::vector<T> values) {
  return zs::column::from_values(std::span<const T>(values));
}
zs::column strings(std::vector<std::string> values) { return zs::column::from_strings(values); }

zs::table copy_table(const zs::table& t, zs::memory_kind memory, cudaStream_t stream) {
  zs::table out;
  out.names = t.names;
  for (auto const& c : t.columns) out.columns.push_back(c.copy_to(memory, stream));
  return out;
}

// A mixed table of `rows` rows: int32 (few distinct), int64, uint32, uint64 (few distinct),
// float32 with -0.0 and NaNs, float64, strings (empty, repeated, non-ASCII).
zs::table mixed_table(std::uint64_t rows, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> a;
  std::vector<std::int64_t> b;
  std::vector<std::uint32_t> c;
  std::vector<std::uint64_t> d;
  std::vector<float> e;
  std::vector<double> f;
  std::vector<std::string> g;
  std::vector<std::string> const words{"", "a", "é", "日本語", "🙂", "zebra", std::string(300, 'x')};
  for (std::uint64_t i = 0; i < rows; ++i) {
    a.push_back(static_cast<std::int32_t>(rng() % 50) - 25);
    b.push_back(static_cast<std::int64_t>(rng()));
    c.push_back(static_cast<std::uint32_t>(rng()));
    d.push_back(rng() % 7);
    switch (rng() % 5) {
      case 0: e.push_back(-0.0f); break;
      case 1: e.push_back(std::numeric_limits<float>::quiet_NaN()); break;
      case 2: e.push_back(-std::numeric_limits<float>::quiet_NaN()); break;
      default: e.push_back(static_cast<float>(rng() % 1000) / 8.0f);
    }
    f.push_back(static_cast<double>(rng() % 100) - 50.5);
    g.push_back(words[rng() % words.size()] + std::string(rng() % 4, 'q'));
  }
  return make_table({"a", "b", "c", "d", "e", "f", "g"}, col(a), col(b), col(c), col(d), col(e), col(f),
                    strings(g));
}

// Gives host column `c` a null mask with row i valid where valid[i].
void set_validity(zs::column& c, const std::vector<bool>& valid) {
  std::uint8_t* const mask = c.add_null_mask();
  std::fill(mask, mask + zs::null_mask_bytes(c.size()), std::uint8_t{0});
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid[i]) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
  }
}

// mixed_table with null masks on the int32, uint32, float32 and string columns (different
// patterns, some random); the others have none.
zs::table nullable_mixed_table(std::uint64_t rows, std::uint32_t seed) {
  auto t = mixed_table(rows, seed);
  std::mt19937 rng(seed);
  std::vector<std::size_t> const nullable{0, 2, 4, 6};
  for (std::size_t k = 0; k < nullable.size(); ++k) {
    std::vector<bool> valid(rows);
    for (std::uint64_t i = 0; i < rows; ++i) valid[i] = k == 3 ? rng() % 3 != 0 : i % (k + 3) != 1;
    set_validity(t.columns[nullable[k]], valid);
  }
  return t;
}

class PartitionGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (zs::cuda_device_available()) stream_.emplace();
  }

  // The GPU's partitions of device copies of `host` are the CPU's of `host`.
  void expect_same_as_cpu(const zs::partitioned_table& cpu, const zs::partitioned_table& gpu) {
    EXPECT_EQ(gpu.partition_offsets, cpu.partition_offsets);
    EXPECT_EQ(gpu.rows.names, cpu.rows.names);
    ASSERT_EQ(gpu.rows.columns.size(), cpu.rows.columns.size());
    for (std::size_t c = 0; c < cpu.rows.columns.size(); ++c) {
      SCOPED_TRACE("column " + std::to_string(c));
      EXPECT_EQ(gpu.rows.columns[c].memory(), zs::memory_kind::device);
      auto const back = gpu.rows.columns[c].copy_to(zs::memory_kind::host, *stream_);
      zs::test::expect_same_column(back, cpu.rows.columns[c]);
      ASSERT_EQ(back.nullable(), cpu.rows.columns[c].nullable());
      EXPECT_EQ(back.validity(), cpu.rows.columns[c].validity()) << "null rows differ";
    }
  }

  void expect_hash(const zs::table& host, const std::vector<std::size_t>& keys, std::uint32_t partitions) {
    SCOPED_TRACE(std::to_string(partitions) + " partitions, first key " + std::to_string(keys.front()));
    zs::table const device = copy_table(host, zs::memory_kind::device, *stream_);
    expect_same_as_cpu(zs::hash_partition(host, keys, partitions),
                       zs::hash_partition(device, keys, partitions, *stream_));
  }

  // With the split points in host memory and in device memory.
  void expect_range(const zs::table& host, std::size_t key, const zs::column& splits) {
    SCOPED_TRACE("range, key " + std::to_string(key) + ", " + std::to_string(splits.size()) + " split points");
    zs::table const device = copy_table(host, zs::memory_kind::device, *stream_);
    auto const cpu = zs::range_partition(host, key, splits.view());
    expect_same_as_cpu(cpu, zs::range_partition(device, key, splits.view(), *stream_));
    zs::column const device_splits = splits.copy_to(zs::memory_kind::device, *stream_);
    expect_same_as_cpu(cpu, zs::range_partition(device, key, device_splits.view(), *stream_));
  }

  std::optional<zs::cuda_stream> stream_;
};

TEST_F(PartitionGpu, EmptyTable) {
  ZS_REQUIRE_GPU();
  auto const t = make_table({"i", "s", "d"}, col<std::int32_t>({}), strings({}), col<double>({}));
  expect_hash(t, {0, 1}, 4);
  expect_range(t, 1, strings({"m"}));
}

TEST_F(PartitionGpu, OneRowAndOneKeyForAllRows) {
  ZS_REQUIRE_GPU();
  expect_hash(make_table({"k", "v"}, col<std::int64_t>({42}), strings({"only"})), {0, 1}, 10);
  std::vector<std::int32_t> keys(100000, 77), values(100000);
  for (int i = 0; i < 100000; ++i) values[i] = i;
  expect_hash(make_table({"k", "v"}, col(keys), col(values)), {0}, 16);
}

TEST_F(PartitionGpu, PartitionCountsFromOneToMoreThanRows) {
  ZS_REQUIRE_GPU();
  auto const small = mixed_table(10, 1);
  expect_hash(small, {0}, 1000);
  expect_hash(small, {6}, zs::max_partitions);
  auto const t = mixed_table(50000, 2);
  for (std::uint32_t p : {1u, 2u, 3u, 255u, 256u, 257u, 65536u, 100003u}) expect_hash(t, {1}, p);
}

TEST_F(PartitionGpu, EveryKeyTypeAndMultipleKeys) {
  ZS_REQUIRE_GPU();
  auto const t = mixed_table(200000, 3);
  for (std::size_t key = 0; key < t.columns.size(); ++key) expect_hash(t, {key}, 61);
  expect_hash(t, {0, 6}, 13);
  expect_hash(t, {6, 0}, 13);
  expect_hash(t, {0, 3, 4, 5, 6}, 1024);
  expect_hash(t, {0, 0}, 5);
}

// Narrow key and value columns (1- and 2-byte gathers, keys hashed as their 32-bit widening),
// hashed and ranged, at odd row counts.
TEST_F(PartitionGpu, NarrowKeysAndColumns) {
  ZS_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  std::vector<std::int8_t> a;
  std::vector<std::int16_t> b;
  std::vector<std::uint8_t> c;
  std::vector<std::uint16_t> d;
  for (int i = 0; i < 100003; ++i) {
    a.push_back(static_cast<std::int8_t>(rng()));
    b.push_back(static_cast<std::int16_t>(rng()));
    c.push_back(static_cast<std::uint8_t>(rng()));
    d.push_back(static_cast<std::uint16_t>(rng()));
  }
  auto const t = make_table({"a", "b", "c", "d"}, col(a), col(b), col(c), col(d));
  for (std::size_t key = 0; key < t.columns.size(); ++key) expect_hash(t, {key}, 61);
  expect_hash(t, {0, 3}, 1000);
  expect_range(t, 0, col<std::int8_t>({-100, 0, 0, 90}));
  expect_range(t, 3, col<std::uint16_t>({1000, 40000}));
}

TEST_F(PartitionGpu, StringAndFloatEdgeKeys) {
  ZS_REQUIRE_GPU();
  std::vector<std::string> keys{"", "a", "é", "日本語", "🙂🙃", "", std::string(10000, 'x'), "a", "\xff\xfe",
                                std::string(1, '\0'), std::string(70001, 'q'), "Ünïcödé"};
  float const nan32 = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t const payload_bits = 0xffc01234u;
  float payload_nan = 0;
  std::memcpy(&payload_nan, &payload_bits, 4);
  std::vector<float> f{0.0f, -0.0f, nan32, -nan32, payload_nan, 1.5f, -1.5f, 0.0f, 3.0f, nan32, -0.0f, 7.0f};
  std::vector<double> d{-0.0, 0.0, std::nan("1"), -std::nan(""), 2.0, -2.0, 0.0, 1e300, -1e300, 5.0, 6.0, 7.0};
  auto const t = make_table({"s", "f", "d"}, strings(keys), col(f), col(d));
  for (std::uint32_t p : {1u, 2u, 5u, 97u, 1024u}) {
    expect_hash(t, {0}, p);
    expect_hash(t, {1}, p);
    expect_hash(t, {2}, p);
    expect_hash(t, {2, 1, 0}, p);
  }
}

TEST_F(PartitionGpu, RealColumns) {
  ZS_REQUIRE_GPU();
  // osm_poi_names (769,009 rows) beside the first rows of longer real columns.
  zs::column names = zs::test::data_column("osm_poi_names.txt");
  std::uint64_t const rows = names.size();
  zs::table t;
  t.names = {"osm_poi_names", "ncbi_tax_id", "airport_lat", "levitus_temp"};
  t.columns.push_back(std::move(names));
  for (std::string file : {"ncbi_tax_id.i32", "airport_lat.f64", "levitus_temp.f32"}) {
    zs::column const full = zs::test::data_column(file);
    ASSERT_GE(full.size(), rows) << file;
    zs::column cut = zs::column::allocate(full.type(), rows, zs::memory_kind::host);
    std::memcpy(cut.mutable_view().data, full.view().data, rows * zs::value_width(full.type()));
    t.columns.push_back(std::move(cut));
  }
  expect_hash(t, {0}, 64);
  expect_hash(t, {1}, 1000);
  expect_hash(t, {2, 0}, 7);
  expect_hash(t, {3}, 4096);
  expect_range(t, 1, col<std::int32_t>({100, 10000, 10000, 1000000}));
  expect_range(t, 0, strings({"A", "M", "Z", "a", "m", "\xc3\x80", "\xe4\xb8\x80"}));
  expect_range(t, 2, col<double>({-45.0, -0.0, 0.0, 30.5, 60.0}));
  expect_range(t, 3, col<float>({-1.0f, 0.0f, 10.0f, 20.0f}));
}

TEST_F(PartitionGpu, RangeTiesEmptySplitsAndEveryType) {
  ZS_REQUIRE_GPU();
  auto const t = mixed_table(100000, 4);
  expect_range(t, 0, col<std::int32_t>({-10, 0, 0, 12}));
  expect_range(t, 0, col<std::int32_t>({}));
  expect_range(t, 1, col<std::int64_t>({0}));
  expect_range(t, 2, col<std::uint32_t>({1u << 30, 1u << 31, 3u << 30}));
  expect_range(t, 3, col<std::uint64_t>({1, 3, 3, 6}));
  expect_range(t, 4, col<float>({-0.0f, 50.0f}));
  expect_range(t, 5, col<double>({-20.5, 0.0, 20.5}));
  expect_range(t, 6, strings({"", "a", "b", "zebra", "é"}));
}

// Split points given as a slice of a device string column, whose offsets do not start at 0.
TEST_F(PartitionGpu, RangeSplitPointsFromADeviceSlice) {
  ZS_REQUIRE_GPU();
  auto const t = mixed_table(20000, 5);
  zs::column const all = strings({"zzz-not-a-split", "a", "m", "é"});
  zs::column const device_all = all.copy_to(zs::memory_kind::device, *stream_);
  zs::column_view slice = device_all.view();
  slice.offsets += 1;
  slice.count = 3;
  zs::table const device = copy_table(t, zs::memory_kind::device, *stream_);
  expect_same_as_cpu(zs::range_partition(t, 6, strings({"a", "m", "é"}).view()),
                     zs::range_partition(device, 6, slice, *stream_));
}

// The per-row kernels loop with a grid stride: a grid far smaller than the rows, and the
// largest blocks, give the same partitions.
TEST_F(PartitionGpu, AnyLaunchGeometryGivesTheSamePartitions) {
  ZS_REQUIRE_GPU();
  // Puts the process-wide table back however the test ends.
  struct restore_tuning {
    zs::tuning_table saved = *zs::tuning();
    ~restore_tuning() { zs::set_tuning(saved); }
  } const restore;
  auto const t = mixed_table(300000, 6);
  zs::device_profile const& d = zs::current_device_profile();
  for (zs::launch_params p : {zs::launch_params{128, 1, 0}, zs::launch_params{1024, 0, 0}}) {
    zs::tuning_table forced;
    for (auto size : {zs::size_class::small, zs::size_class::medium, zs::size_class::large}) {
      forced.set({{d.name, d.compute_major, d.compute_minor, "partition_rows", std::nullopt, size}, p});
    }
    zs::set_tuning(forced);
    expect_hash(t, {0, 6}, 1000);
    expect_range(t, 6, strings({"a", "m"}));
  }
}

TEST_F(PartitionGpu, NullMasksAndNullKeysAsOnTheCpu) {
  ZS_REQUIRE_GPU();
  for (std::uint64_t rows : {0, 1, 13, 4096, 100003}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    auto const t = nullable_mixed_table(rows, 21);
    for (std::uint32_t p : {1u, 7u, 1000u}) {
      expect_hash(t, {0}, p);
      expect_hash(t, {6}, p);
      expect_hash(t, {1, 4, 6}, p);
    }
    expect_range(t, 0, col<std::int32_t>({-10, 0, 10}));
    expect_range(t, 6, strings({"a", "zebra"}));
  }
  // Every key null: one partition, rows in input order.
  auto all_null = make_table({"k", "v"}, col<std::int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}),
                             strings({"a", "b", "c", "d", "e", "f", "g", "h", "i"}));
  set_validity(all_null.columns[0], std::vector<bool>(9, false));
  expect_hash(all_null, {0}, 8);
  expect_range(all_null, 0, col<std::int64_t>({3}));
}

TEST_F(PartitionGpu, RealColumnNullWhereItHoldsItsFillValue) {
  ZS_REQUIRE_GPU();
  zs::column const temp = zs::test::data_column("levitus_temp.f32");
  std::uint64_t const rows = std::min<std::uint64_t>(temp.size(), 1u << 20);
  zs::column key = zs::column::allocate(value_type::float32, rows, zs::memory_kind::host);
  std::memcpy(key.mutable_view().data, temp.view().data, rows * 4);
  auto const* values = key.view().values<float>();
  // The fill value: the most frequent bit pattern.
  std::vector<std::uint32_t> bits(rows);
  std::memcpy(bits.data(), values, rows * 4);
  std::vector<std::uint32_t> sorted = bits;
  std::sort(sorted.begin(), sorted.end());
  std::uint32_t fill = 0;
  std::uint64_t best = 0;
  for (std::uint64_t i = 0; i < rows;) {
    std::uint64_t j = i;
    while (j < rows && sorted[j] == sorted[i]) ++j;
    if (j - i > best) best = j - i, fill = sorted[i];
    i = j;
  }
  ASSERT_GT(best, rows / 100) << "the column has a fill value";
  std::vector<bool> valid(rows);
  for (std::uint64_t i = 0; i < rows; ++i) valid[i] = bits[i] != fill;
  zs::column payload = key.copy_to(zs::memory_kind::host, nullptr);
  set_validity(key, valid);
  set_validity(payload, valid);
  auto const t = make_table({"temp", "payload"}, std::move(key), std::move(payload));
  expect_hash(t, {0}, 64);
  expect_range(t, 0, col<float>({0.0f, 10.0f, 20.0f}));
}

// int128 (decimal128) key and value columns: 16-byte gathers, keys hashed over their 16 bytes
// and ranged as signed 128-bit integers, nulls in both, at an odd row count.
TEST_F(PartitionGpu, Int128KeysAndColumns) {
  ZS_REQUIRE_GPU();
  std::mt19937_64 rng(128);
  std::uint64_t const rows = 100003;
  std::vector<zs::int128_value> keys(rows), values(rows);
  std::vector<std::int32_t> ids(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    switch (rng() % 4) {
      case 0: keys[i] = zs::int128_value::of(static_cast<std::int64_t>(rng() % 101) - 50); break;
      case 1: keys[i] = zs::int128_value{rng() % 5, -static_cast<std::int64_t>(rng() % 4) - 1}; break;
      case 2: keys[i] = i % 2 == 0 ? zs::int128_min : zs::int128_max; break;
      default: keys[i] = zs::int128_value{rng(), static_cast<std::int64_t>(rng())}; break;
    }
    values[i] = zs::int128_value{rng(), static_cast<std::int64_t>(rng())};
    ids[i] = static_cast<std::int32_t>(i);
  }
  auto t = make_table({"amount", "value", "id"}, col(keys), col(values), col(ids));
  t.columns[0].set_logical(zs::logical_type::decimal128(38, 2));
  std::vector<bool> key_valid(rows), value_valid(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    key_valid[i] = i % 11 != 3;
    value_valid[i] = rng() % 4 != 0;
  }
  set_validity(t.columns[0], key_valid);
  set_validity(t.columns[1], value_valid);
  for (std::uint32_t p : {1u, 61u, 1000u}) expect_hash(t, {0}, p);
  expect_hash(t, {2, 0}, 17);
  expect_hash(t, {1}, 7);
  expect_range(t, 0, col(std::vector<zs::int128_value>{zs::int128_min, zs::int128_value{0, -2}, zs::int128_value::of(-1),
                                                       zs::int128_value::of(0), zs::int128_value::of(0),
                                                       zs::int128_value{~std::uint64_t{0}, 0}, zs::int128_max}));
  auto const device = zs::hash_partition(copy_table(t, zs::memory_kind::device, *stream_), {0}, 61, *stream_);
  EXPECT_EQ(device.rows.columns[0].logical(), zs::logical_type::decimal128(38, 2));
}

TEST_F(PartitionGpu, DefaultStreamAndErrors) {
  ZS_REQUIRE_GPU();
  auto const host = mixed_table(1000, 7);
  zs::table const device = copy_table(host, zs::memory_kind::device, *stream_);
  stream_->synchronize();
  auto const on_default = zs::hash_partition(device, {2}, 9);
  // Ready on the default stream, which the test's own (non-blocking) stream does not wait for.
  ZS_CUDA_TRY(cudaStreamSynchronize(nullptr));
  expect_same_as_cpu(zs::hash_partition(host, {2}, 9), on_default);

  zs::table mixed;
  mixed.names = {"on_device", "on_host"};
  mixed.columns.push_back(col<std::int32_t>({1, 2}).copy_to(zs::memory_kind::device, *stream_));
  mixed.columns.push_back(col<std::int32_t>({3, 4}));
  auto const e = zs::test::thrown_error([&] { zs::hash_partition(mixed, {0}, 2, *stream_); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("column 1 ('on_host') is in host memory"), std::string::npos) << e->what();
  auto const unsorted = zs::test::thrown_error([&] {
    zs::column const splits = col<std::int64_t>({5, 1}).copy_to(zs::memory_kind::device, *stream_);
    zs::range_partition(device, 1, splits.view(), *stream_);
  });
  ASSERT_TRUE(unsorted.has_value());
  EXPECT_NE(std::string(unsorted->what()).find("not sorted"), std::string::npos) << unsorted->what();
}

}  // namespace
