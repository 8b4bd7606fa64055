// Arrow interop on the GPU (zs/arrow.hpp, the C Device Data Interface): device tables round trip
// through export and import with every supported type, the export is zero-copy and hands over a
// sync event recorded on the producer's stream, imports of CUDA arrays land in device memory with
// slices honoured, utf8 widened and large_utf8 rebased on the GPU, every value and logical type
// with null masks (validity bitmaps shifted and bool bitmaps expanded on the GPU at any offset,
// bool8 packed into bitmaps on export), and the import's refusals (the wrong device) release the
// arrays exactly once.
#include "zs/arrow.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "arrow_hand_built.hpp"
#include "zs_test.hpp"

namespace {

using zs::memory_kind;
using zs::test::hand_built;
using zs::value_type;

template <typename T>
zs::column col(std::vector<T> values) {
  return zs::column::from_values(std::span<const T>(values));
}

zs::table every_type_table() {
  zs::table t;
  t.names = {"i32", "i64", "u32", "u64", "f32", "f64", "text"};
  t.columns.push_back(col<std::int32_t>({0, -1, std::numeric_limits<std::int32_t>::min(), 7, 2147483647, 3}));
  t.columns.push_back(col<std::int64_t>({std::numeric_limits<std::int64_t>::min(), 0, 1, -5, 1LL << 40, 9}));
  t.columns.push_back(col<std::uint32_t>({0, 1, 4294967295u, 12, 99, 5}));
  t.columns.push_back(col<std::uint64_t>({~0ULL, 0, 3, 1ULL << 63, 42, 6}));
  t.columns.push_back(col<float>({-0.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), 3e38f, -1e-38f, 2}));
  t.columns.push_back(col<double>({-0.0, 2.25, std::numeric_limits<double>::infinity(), 1e308, -7.0, 8}));
  std::vector<std::string> const text{"", "héllo", "日本語", "", "🙂 x", std::string(1000, 'z')};
  t.columns.push_back(zs::column::from_strings(text));
  return t;
}

zs::table copy_table(const zs::table& t, memory_kind memory, cudaStream_t stream) {
  zs::table out;
  out.names = t.names;
  for (auto const& c : t.columns) out.columns.push_back(c.copy_to(memory, stream));
  if (memory == memory_kind::device) ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

// Checks a device table against a host one, byte for byte.
void expect_same_device_table(const zs::table& device, const zs::table& host, cudaStream_t stream) {
  ASSERT_EQ(device.names, host.names);
  ASSERT_EQ(device.columns.size(), host.columns.size());
  for (std::size_t i = 0; i < host.columns.size(); ++i) {
    SCOPED_TRACE("column " + host.names[i]);
    EXPECT_EQ(device.columns[i].memory(), memory_kind::device);
    zs::test::expect_same_column(device.columns[i].copy_to(memory_kind::host, stream), host.columns[i]);
  }
}

// Counts the calls of an exported array's top-level release callback, then runs the exporter's.
struct counted_array_release {
  static inline int calls = 0;
  static inline void (*original)(ArrowArray*) = nullptr;
  static void count(ArrowArray* a) {
    ++calls;
    original(a);
  }
  static void wrap(ArrowArray& array) {
    calls = 0;
    original = array.release;
    array.release = count;
  }
};

class ArrowGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    ZS_REQUIRE_GPU();
    stream_.emplace();
    ZS_CUDA_TRY(cudaGetDevice(&device_));
  }
  cudaStream_t stream() const { return stream_->get(); }

  std::optional<zs::cuda_stream> stream_;
  int device_ = 0;
};

TEST_F(ArrowGpu, EveryTypeRoundTripsThroughDeviceExportAndImport) {
  zs::table const expected = every_type_table();
  zs::table device = copy_table(expected, memory_kind::device, stream());
  std::vector<const void*> data, offsets;
  for (auto const& c : device.columns) {
    data.push_back(c.view().data);
    offsets.push_back(c.view().offsets);
  }

  ArrowSchema schema;
  ArrowDeviceArray exported;
  zs::export_to_arrow_device(std::move(device), &schema, &exported, stream());
  EXPECT_EQ(exported.device_type, ARROW_DEVICE_CUDA);
  EXPECT_EQ(exported.device_id, device_);
  ASSERT_NE(exported.sync_event, nullptr);
  ZS_CUDA_TRY(cudaEventSynchronize(*static_cast<cudaEvent_t*>(exported.sync_event)));
  ASSERT_EQ(exported.array.n_children, 7);
  for (std::size_t i = 0; i < 7; ++i) {
    ArrowArray const& child = *exported.array.children[i];
    EXPECT_EQ(child.buffers[0], nullptr);
    if (expected.columns[i].type() == value_type::string) {
      EXPECT_STREQ(schema.children[i]->format, "U");
      EXPECT_EQ(child.buffers[1], offsets[i]) << "offsets are the column's own";
      EXPECT_EQ(child.buffers[2], data[i]) << "characters are the column's own";
    } else {
      EXPECT_EQ(child.buffers[1], data[i]) << "values are the column's own";
    }
  }

  counted_array_release::wrap(exported.array);
  zs::table const imported = zs::import_from_arrow_device(&schema, &exported, stream());
  EXPECT_EQ(counted_array_release::calls, 1);
  EXPECT_EQ(exported.array.release, nullptr);
  EXPECT_EQ(schema.release, nullptr);
  expect_same_device_table(imported, expected, stream());
}

TEST_F(ArrowGpu, ExportWithoutAStreamHasNoSyncEvent) {
  zs::table device = copy_table(every_type_table(), memory_kind::device, stream());
  ArrowSchema schema;
  ArrowDeviceArray exported;
  zs::export_to_arrow_device(std::move(device), &schema, &exported);
  EXPECT_EQ(exported.sync_event, nullptr);
  EXPECT_EQ(exported.device_id, device_);
  counted_array_release::wrap(exported.array);
  exported.array.release(&exported.array);
  schema.release(&schema);
  EXPECT_EQ(counted_array_release::calls, 1);
}

TEST_F(ArrowGpu, ExportsRefuseColumnsInTheOtherMemory) {
  ArrowSchema schema{};
  ArrowArray array{};
  ArrowDeviceArray device_array{};
  {
    zs::table host = every_type_table();
    auto const e =
        zs::test::thrown_error([&] { zs::export_to_arrow_device(std::move(host), &schema, &device_array); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("host memory"), std::string::npos) << e->what();
    EXPECT_EQ(host.columns.size(), 7u);
  }
  {
    zs::table device = copy_table(every_type_table(), memory_kind::device, stream());
    auto const e = zs::test::thrown_error([&] { zs::export_to_arrow(std::move(device), &schema, &array); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("device memory"), std::string::npos) << e->what();
    EXPECT_EQ(device.columns.size(), 7u);
  }
}

TEST_F(ArrowGpu, DeviceImportReadsSlicesWidensUtf8AndRebasesLargeUtf8) {
  std::vector<std::string> const all{"zero", "", "héllo", "日本語", "", "🙂", "end"};
  std::vector<std::int32_t> offsets32{0};
  std::vector<std::int64_t> offsets64{3};  // large_utf8 offsets that start at 3
  std::string chars;
  for (auto const& s : all) {
    chars += s;
    offsets32.push_back(static_cast<std::int32_t>(chars.size()));
    offsets64.push_back(static_cast<std::int64_t>(chars.size()) + 3);
  }
  std::vector<char> const char_bytes(chars.begin(), chars.end());
  std::vector<char> shifted{'p', 'a', 'd'};
  shifted.insert(shifted.end(), chars.begin(), chars.end());

  hand_built built(memory_kind::device);
  // Child offset 1 plus the struct's offset 1: rows 2..5 of each child.
  built.add("u", "u", 6, {nullptr, built.keep(offsets32), built.keep(char_bytes)}).offset = 1;
  built.add("U", "U", 6, {nullptr, built.keep(offsets64), built.keep(shifted)}).offset = 1;
  built.add("n", "l", 7, {nullptr, built.keep<std::int64_t>({0, 1, 2, 3, 4, 5, 6})}).offset = 1;
  built.add("f", "f", 6, {built.bitmap("1111110"), built.keep<float>({0, 1, 2, 3, 4, 5, 6})}).offset = 0;
  built.finish(4);
  built.array.offset = 1;
  ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_CUDA, device_);

  zs::table const t = zs::import_from_arrow_device(&built.schema, &device_array, stream());
  built.expect_released_once();
  zs::table expected;
  expected.names = {"u", "U", "n", "f"};
  std::vector<std::string> const rows(all.begin() + 2, all.begin() + 6);
  expected.columns.push_back(zs::column::from_strings(rows));
  expected.columns.push_back(zs::column::from_strings(rows));
  expected.columns.push_back(col<std::int64_t>({2, 3, 4, 5}));
  expected.columns.push_back(col<float>({1, 2, 3, 4}));
  expect_same_device_table(t, expected, stream());
}

TEST_F(ArrowGpu, DeviceImportWaitsForTheSyncEvent) {
  zs::cuda_stream producer;
  zs::table const expected = every_type_table();
  zs::table device = copy_table(expected, memory_kind::device, producer);
  ArrowSchema schema;
  ArrowDeviceArray exported;
  // A producer stream still busy: the import must order its copies after the event.
  zs::export_to_arrow_device(std::move(device), &schema, &exported, producer.get());
  expect_same_device_table(zs::import_from_arrow_device(&schema, &exported, stream()), expected, stream());
}

// A device table's columns copied to the host, masks and logical types included.
zs::table to_host(const zs::table& device, cudaStream_t stream) {
  zs::table out;
  out.names = device.names;
  for (auto const& c : device.columns) {
    EXPECT_EQ(c.memory(), memory_kind::device);
    out.columns.push_back(c.copy_to(memory_kind::host, stream));
  }
  return out;
}

TEST_F(ArrowGpu, EveryValueAndLogicalTypeRoundTripsWithNullMasksOnTheDevice) {
  zs::table const expected = zs::test::every_value_and_logical_type_table();
  zs::table device = copy_table(expected, memory_kind::device, stream());
  std::vector<const void*> masks, data;
  for (auto const& c : device.columns) {
    masks.push_back(c.view().null_mask);
    data.push_back(c.view().data);
  }
  ArrowSchema schema;
  ArrowDeviceArray exported;
  zs::export_to_arrow_device(std::move(device), &schema, &exported, stream());
  ASSERT_NE(exported.sync_event, nullptr);
  std::vector<std::string> const formats = zs::test::every_value_and_logical_type_formats();
  ASSERT_EQ(exported.array.n_children, static_cast<std::int64_t>(formats.size()));
  for (std::size_t i = 0; i < formats.size(); ++i) {
    SCOPED_TRACE(expected.names[i]);
    ArrowArray const& child = *exported.array.children[i];
    EXPECT_EQ(schema.children[i]->format, formats[i]);
    EXPECT_EQ(child.buffers[0], masks[i]) << "the validity buffer is the column's own mask";
    EXPECT_EQ(child.null_count, masks[i] == nullptr ? 0 : -1) << "device null counts are left unknown";
    if (formats[i] == "b") {
      EXPECT_NE(child.buffers[1], data[i]) << "bool values are packed into a bitmap";
    } else if (formats[i] != "U") {
      EXPECT_EQ(child.buffers[1], data[i]) << "values are the column's own";
    }
  }
  zs::table const imported = zs::import_from_arrow_device(&schema, &exported, stream());
  EXPECT_EQ(exported.array.release, nullptr);
  zs::test::expect_same_table_and_nulls(to_host(imported, stream()), expected);
}

TEST_F(ArrowGpu, BoolExportWithoutAStreamIsReadyOnReturn) {
  zs::table t;
  t.names = {"flag"};
  std::vector<bool> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = (i * 7) % 5 < 2;
  t.columns.push_back(zs::test::bool_column(values).copy_to(memory_kind::device, stream()));
  ZS_CUDA_TRY(cudaStreamSynchronize(stream()));
  ArrowSchema schema;
  ArrowDeviceArray exported;
  zs::export_to_arrow_device(std::move(t), &schema, &exported);
  EXPECT_EQ(exported.sync_event, nullptr);
  std::vector<std::uint8_t> bits(125);
  ZS_CUDA_TRY(cudaMemcpy(bits.data(), exported.array.children[0]->buffers[1], bits.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(((bits[i / 8] >> (i % 8)) & 1) != 0, values[i]) << "row " << i;
  }
  exported.array.release(&exported.array);
  schema.release(&schema);
}

TEST_F(ArrowGpu, DeviceImportShiftsValidityAndExpandsBoolsAtAnyOffset) {
  std::string const validity = "11011001110111100010111011010011";  // 32 rows
  std::string const bools = "01101110001011010011101100111010";
  std::vector<std::int32_t> values(32);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i) * 3 - 7;
  for (std::int64_t child_offset : {0, 3, 8, 11}) {
    for (std::int64_t struct_offset : {0, 5}) {
      SCOPED_TRACE("child offset " + std::to_string(child_offset) + ", struct offset " + std::to_string(struct_offset));
      std::int64_t const rows = 32 - child_offset - struct_offset;
      hand_built built(memory_kind::device);
      ArrowArray& v = built.add("v", "i", 32 - child_offset, {built.bitmap(validity), built.keep(values)});
      v.offset = child_offset;
      v.null_count = -1;
      ArrowArray& b = built.add("b", "b", 32 - child_offset, {built.bitmap(validity), built.bitmap(bools)});
      b.offset = child_offset;
      b.null_count = 1;
      built.finish(rows);
      built.array.offset = struct_offset;
      ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_CUDA, device_);
      zs::table const t = to_host(zs::import_from_arrow_device(&built.schema, &device_array, stream()), stream());
      built.expect_released_once();
      ASSERT_EQ(t.columns[1].type(), value_type::bool8);
      std::vector<bool> const valid_v = t.columns[0].validity(), valid_b = t.columns[1].validity();
      auto const* got_v = t.columns[0].view().values<std::int32_t>();
      auto const* got_b = t.columns[1].view().values<std::uint8_t>();
      for (std::int64_t i = 0; i < rows; ++i) {
        std::size_t const row = static_cast<std::size_t>(child_offset + struct_offset + i);
        EXPECT_EQ(valid_v[i], validity[row] == '1') << "row " << i;
        EXPECT_EQ(valid_b[i], validity[row] == '1') << "row " << i;
        EXPECT_EQ(got_v[i], values[row]) << "row " << i;
        EXPECT_EQ(got_b[i], bools[row] == '1' ? 1 : 0) << "row " << i;
      }
    }
  }
}

// A CUDA decimal128 child, in both spellings, lands in device memory as int128 +
// decimal128(P, S): its 16-byte values as they are, from the child's and the struct's offsets,
// and its validity shifted on the GPU; exported again it is "d:P,S" over the same buffer.
TEST_F(ArrowGpu, Decimal128ImportsToTheDeviceAndExportsBackZeroCopy) {
  using zs::int128_value;
  std::string const validity = "1101100111011110101";  // 19 rows
  std::vector<int128_value> values(19);
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto const k = static_cast<std::int64_t>(i);
    values[i] = i % 4 == 0 ? int128_value::of(-k * 1000003) : int128_value{~std::uint64_t{0} - i, (k % 3 - 1) * (std::int64_t{1} << 40)};
  }
  values[5] = zs::int128_min;
  values[6] = zs::int128_max;
  for (const char* format : {"d:38,2", "d:38,2,128"}) {
    SCOPED_TRACE(format);
    hand_built built(memory_kind::device);
    ArrowArray& child = built.add("amount", format, 16, {built.bitmap(validity), built.keep(values)});
    child.offset = 3;
    child.null_count = -1;
    built.finish(14);
    built.array.offset = 2;  // rows 5 .. 18 of the buffers
    ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_CUDA, device_);
    zs::table imported = zs::import_from_arrow_device(&built.schema, &device_array, stream());
    built.expect_released_once();
    ASSERT_EQ(imported.columns.size(), 1u);
    EXPECT_EQ(imported.columns[0].memory(), memory_kind::device);
    EXPECT_EQ(imported.columns[0].logical(), zs::logical_type::decimal128(38, 2));
    zs::table const host = to_host(imported, stream());
    ASSERT_EQ(host.columns[0].type(), value_type::int128);
    ASSERT_EQ(host.columns[0].size(), 14u);
    std::vector<bool> const valid = host.columns[0].validity();
    auto const* got = host.columns[0].view().values<int128_value>();
    for (std::size_t i = 0; i < 14; ++i) {
      EXPECT_EQ(valid[i], validity[i + 5] == '1') << "row " << i;
      EXPECT_EQ(got[i], values[i + 5]) << "row " << i << ": " << zs::to_string(got[i]);
    }

    const void* data = imported.columns[0].view().data;
    ArrowSchema schema;
    ArrowDeviceArray exported;
    zs::export_to_arrow_device(std::move(imported), &schema, &exported, stream());
    EXPECT_STREQ(schema.children[0]->format, "d:38,2");
    EXPECT_EQ(exported.array.children[0]->buffers[1], data) << "the values are the column's own buffer";
    zs::table const again = zs::import_from_arrow_device(&schema, &exported, stream());
    zs::test::expect_same_table_and_nulls(to_host(again, stream()), host);
  }
}

TEST_F(ArrowGpu, ArraysOnAnotherDeviceAreRefused) {
  hand_built built(memory_kind::device);
  built.add("v", "i", 1, {nullptr, built.keep<std::int32_t>({1})});
  built.finish(1);
  ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_CUDA, device_ + 1);
  auto const e =
      zs::test::thrown_error([&] { (void)zs::import_from_arrow_device(&built.schema, &device_array, stream()); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("GPU " + std::to_string(device_ + 1)), std::string::npos) << e->what();
  built.expect_released_once();
}

TEST_F(ArrowGpu, PinnedHostArraysImportIntoHostColumns) {
  zs::pinned_buffer values(3 * sizeof(std::int64_t));
  values.as<std::int64_t>()[0] = 4;
  values.as<std::int64_t>()[1] = 5;
  values.as<std::int64_t>()[2] = 6;
  hand_built built;
  built.add("v", "l", 3, {nullptr, values.data()});
  built.finish(3);
  ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_CUDA_HOST, 0);
  zs::table const t = zs::import_from_arrow_device(&built.schema, &device_array, stream());
  built.expect_released_once();
  ASSERT_EQ(t.columns[0].memory(), memory_kind::host);
  zs::test::expect_same_column(t.columns[0], col<std::int64_t>({4, 5, 6}));
}

}  // namespace
