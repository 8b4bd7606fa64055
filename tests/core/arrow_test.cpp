// Arrow interop on the host (zs/arrow.hpp): round trips of every value and logical type with
// null masks, zero-copy export (the exported buffers are the columns' own, null masks included;
// bool values packed into a bitmap), release callbacks called exactly once on every path
// (success, errors, children moved out), slices (validity and bool bitmaps at any bit offset),
// utf8 widening, large_utf8 rebasing, and an error naming the column for every input the import
// refuses.
#include "zs/arrow.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "arrow_hand_built.hpp"
#include "zs_test.hpp"

// The C structs' layout is a published ABI (64-bit platforms).
static_assert(sizeof(ArrowSchema) == 72);
static_assert(sizeof(ArrowArray) == 80);
static_assert(offsetof(ArrowArray, buffers) == 40 && offsetof(ArrowArray, release) == 64);
static_assert(offsetof(ArrowDeviceArray, device_id) == 80 && offsetof(ArrowDeviceArray, device_type) == 88);
static_assert(offsetof(ArrowDeviceArray, sync_event) == 96 && sizeof(ArrowDeviceArray) == 128);

namespace {

using zs::test::hand_built;
using zs::value_type;

template <typename T>
zs::column col(std::vector<T> values) {
  return zs::column::from_values(std::span<const T>(values));
}

// One column of every supported type, with edge values (extremes, -0.0, NaN, empty and
// non-ASCII strings).
zs::table every_type_table() {
  zs::table t;
  t.names = {"i32", "i64", "u32", "u64", "f32", "f64", "text"};
  t.columns.push_back(col<std::int32_t>({0, -1, std::numeric_limits<std::int32_t>::min(), 7, 2147483647}));
  t.columns.push_back(col<std::int64_t>({std::numeric_limits<std::int64_t>::min(), 0, 1, -5, 1LL << 40}));
  t.columns.push_back(col<std::uint32_t>({0, 1, 4294967295u, 12, 99}));
  t.columns.push_back(col<std::uint64_t>({~0ULL, 0, 3, 1ULL << 63, 42}));
  t.columns.push_back(col<float>({-0.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), 3e38f, -1e-38f}));
  t.columns.push_back(col<double>({-0.0, 2.25, std::numeric_limits<double>::infinity(), 1e308, -7.0}));
  std::vector<std::string> const text{"", "héllo", "日本語", "", "🙂 x"};
  t.columns.push_back(zs::column::from_strings(text));
  return t;
}

zs::table copy_table(const zs::table& t) {
  zs::table out;
  out.names = t.names;
  for (auto const& c : t.columns) out.columns.push_back(c.copy_to(zs::memory_kind::host, nullptr));
  return out;
}

void expect_same_table(const zs::table& a, const zs::table& b) {
  ASSERT_EQ(a.names, b.names);
  ASSERT_EQ(a.columns.size(), b.columns.size());
  for (std::size_t i = 0; i < a.columns.size(); ++i) {
    SCOPED_TRACE("column " + a.names[i]);
    zs::test::expect_same_column(a.columns[i], b.columns[i]);
  }
}

// Release counting around an exported schema and array: the shims count each call of the
// top-level callbacks, then run the exporter's own.
struct counted_release {
  static inline int schema_calls = 0;
  static inline int array_calls = 0;
  static inline void (*schema_release)(ArrowSchema*) = nullptr;
  static inline void (*array_release)(ArrowArray*) = nullptr;

  static void count_schema(ArrowSchema* s) {
    ++schema_calls;
    schema_release(s);
  }
  static void count_array(ArrowArray* a) {
    ++array_calls;
    array_release(a);
  }
  static void wrap(ArrowSchema& schema, ArrowArray& array) {
    schema_calls = array_calls = 0;
    schema_release = schema.release;
    array_release = array.release;
    schema.release = count_schema;
    array.release = count_array;
  }
};

// The error an import of `built` throws, checked to carry `code` and every one of `words`, and
// the arrays released exactly once even so.
void expect_import_error(hand_built& built, zs::error_code code, std::vector<std::string> const& words) {
  auto const e = zs::test::thrown_error([&] { (void)zs::import_from_arrow(&built.schema, &built.array); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), code) << e->what();
  for (auto const& word : words) EXPECT_NE(std::string(e->what()).find(word), std::string::npos) << e->what();
  built.expect_released_once();
}

TEST(Arrow, EveryTypeRoundTripsThroughExportAndImport) {
  zs::table const expected = every_type_table();
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(copy_table(expected), &schema, &array);
  counted_release::wrap(schema, array);

  zs::table const imported = zs::import_from_arrow(&schema, &array);
  expect_same_table(imported, expected);
  EXPECT_EQ(counted_release::schema_calls, 1);
  EXPECT_EQ(counted_release::array_calls, 1);
  EXPECT_EQ(schema.release, nullptr);
  EXPECT_EQ(array.release, nullptr);
}

TEST(Arrow, ExportIsZeroCopyAndDescribesEveryColumn) {
  zs::table t = every_type_table();
  std::vector<const void*> data, offsets;
  for (auto const& c : t.columns) {
    data.push_back(c.view().data);
    offsets.push_back(c.view().offsets);
  }
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);
  EXPECT_TRUE(t.columns.empty()) << "the table is moved into the export";

  EXPECT_STREQ(schema.format, "+s");
  ASSERT_EQ(schema.n_children, 7);
  ASSERT_EQ(array.n_children, 7);
  EXPECT_EQ(array.length, 5);
  EXPECT_EQ(array.n_buffers, 1);
  EXPECT_EQ(array.buffers[0], nullptr);
  std::vector<std::string> const formats{"i", "l", "I", "L", "f", "g", "U"};
  std::vector<std::string> const names{"i32", "i64", "u32", "u64", "f32", "f64", "text"};
  for (std::size_t i = 0; i < 7; ++i) {
    ArrowSchema const& s = *schema.children[i];
    ArrowArray const& a = *array.children[i];
    EXPECT_EQ(s.format, formats[i]);
    EXPECT_EQ(s.name, names[i]);
    EXPECT_EQ(s.flags & ARROW_FLAG_NULLABLE, 0);
    EXPECT_EQ(s.dictionary, nullptr);
    EXPECT_EQ(a.length, 5);
    EXPECT_EQ(a.offset, 0);
    EXPECT_EQ(a.null_count, 0);
    EXPECT_EQ(a.buffers[0], nullptr) << "no validity buffer";
    if (formats[i] == "U") {
      ASSERT_EQ(a.n_buffers, 3);
      EXPECT_EQ(a.buffers[1], offsets[i]) << "offsets are the column's own";
      EXPECT_EQ(a.buffers[2], data[i]) << "characters are the column's own";
    } else {
      ASSERT_EQ(a.n_buffers, 2);
      EXPECT_EQ(a.buffers[1], data[i]) << "values are the column's own";
    }
  }
  counted_release::wrap(schema, array);
  schema.release(&schema);
  array.release(&array);
  EXPECT_EQ(counted_release::schema_calls, 1);
  EXPECT_EQ(counted_release::array_calls, 1);
  EXPECT_EQ(schema.release, nullptr);
  EXPECT_EQ(array.release, nullptr);
}

TEST(Arrow, ChildMovedOutOutlivesItsReleasedParent) {
  zs::table t = every_type_table();
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);

  // The specification's move: copy the struct, mark the source released.
  ArrowArray text = *array.children[6];
  array.children[6]->release = nullptr;
  ArrowSchema text_schema = *schema.children[6];
  schema.children[6]->release = nullptr;
  array.release(&array);
  schema.release(&schema);

  EXPECT_STREQ(text_schema.format, "U");
  auto const* offs = static_cast<const std::int64_t*>(text.buffers[1]);
  auto const* chars = static_cast<const char*>(text.buffers[2]);
  EXPECT_EQ(std::string(chars + offs[1], chars + offs[2]), "héllo");
  text.release(&text);
  text_schema.release(&text_schema);
  EXPECT_EQ(text.release, nullptr);
  EXPECT_EQ(text_schema.release, nullptr);
}

TEST(Arrow, EmptyTablesAndEmptyColumnsRoundTrip) {
  {
    ArrowSchema schema;
    ArrowArray array;
    zs::export_to_arrow(zs::table{}, &schema, &array);
    EXPECT_EQ(array.n_children, 0);
    zs::table const imported = zs::import_from_arrow(&schema, &array);
    EXPECT_TRUE(imported.columns.empty());
  }
  zs::table t;
  t.names = {"n", "s"};
  t.columns.push_back(col<std::int64_t>({}));
  t.columns.push_back(zs::column::from_strings({}));
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(copy_table(t), &schema, &array);
  for (std::int64_t i = 0; i < array.n_children; ++i) {
    for (std::int64_t b = 1; b < array.children[i]->n_buffers; ++b) {
      EXPECT_NE(array.children[i]->buffers[b], nullptr) << "empty buffers are exported as non-NULL pointers";
    }
  }
  expect_same_table(zs::import_from_arrow(&schema, &array), t);

  // Another producer may pass NULL for zero-sized buffers.
  hand_built built;
  built.add("n", "l", 0, {nullptr, nullptr});
  built.add("s", "u", 0, {nullptr, nullptr, nullptr});
  built.finish(0);
  expect_same_table(zs::import_from_arrow(&built.schema, &built.array), t);
  built.expect_released_once();
}

TEST(Arrow, ImportReadsSlicesOfChildrenAndOfTheStruct) {
  hand_built built;
  // Child offsets 2 and 1, then the struct's own offset 1: rows 3..5 of `a`, 2..4 of `s`.
  built.add("a", "i", 6, {nullptr, built.keep<std::int32_t>({10, 11, 12, 13, 14, 15, 16, 17})}).offset = 2;
  built
      .add("s", "U", 5,
           {nullptr, built.keep<std::int64_t>({0, 1, 3, 6, 6, 10, 12}), built.keep(std::vector<char>{
                                                                              'a', 'b', 'b', 'c', 'c', 'c', 'd', 'd',
                                                                              'd', 'd', 'e', 'e'})})
      .offset = 1;
  built.finish(3);
  built.array.offset = 1;

  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  built.expect_released_once();
  ASSERT_EQ(t.columns.size(), 2u);
  zs::test::expect_same_column(t.columns[0], col<std::int32_t>({13, 14, 15}));
  EXPECT_EQ(t.columns[1].strings(), (std::vector<std::string>{"ccc", "", "dddd"}));
  EXPECT_EQ(t.columns[1].view().offsets[0], 0) << "offsets are rebased to start at 0";
  EXPECT_EQ(t.columns[1].data_bytes(), 7u) << "only the slice's characters are copied";
}

TEST(Arrow, LargeUtf8WithNonZeroFirstOffsetIsRebased) {
  hand_built built;
  // offsets[0] = 4: the first four characters belong to no row of this array.
  built.add("s", "U", 3,
            {nullptr, built.keep<std::int64_t>({4, 6, 6, 9}),
             built.keep(std::vector<char>{'x', 'x', 'x', 'x', 'h', 'i', 'y', 'o', 'u'})});
  built.finish(3);
  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  EXPECT_EQ(t.columns[0].strings(), (std::vector<std::string>{"hi", "", "you"}));
  EXPECT_EQ(t.columns[0].view().offsets[0], 0);
  EXPECT_EQ(t.columns[0].data_bytes(), 5u);
}

TEST(Arrow, Utf8IsWidenedToInt64OffsetsWithNonAsciiAndEmptyStrings) {
  std::vector<std::string> const all{"zero", "", "héllo", "日本語", "", "🙂", "end"};
  std::vector<std::int32_t> offsets{0};
  std::string chars;
  for (auto const& s : all) {
    chars += s;
    offsets.push_back(static_cast<std::int32_t>(chars.size()));
  }
  hand_built built;
  // Rows 1..5 of the array: a slice whose first offset is not 0.
  built.add("text", "u", 5,
            {nullptr, built.keep(offsets), built.keep(std::vector<char>(chars.begin(), chars.end()))})
      .offset = 1;
  built.finish(5);
  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  built.expect_released_once();
  ASSERT_EQ(t.columns[0].type(), value_type::string);
  EXPECT_EQ(t.columns[0].strings(), (std::vector<std::string>(all.begin() + 1, all.begin() + 6)));
  EXPECT_EQ(t.columns[0].view().offsets[0], 0);
  EXPECT_EQ(t.names, std::vector<std::string>{"text"});
}

TEST(Arrow, ValidityBufferWithoutNullsInTheImportedRowsIsAccepted) {
  hand_built built;
  // a: null_count 0 with a bitmap. b: one null, in a row past the struct's 3 rows. c: an unknown
  // count (-1) without a bitmap. d: an unknown count, its only null before its offset.
  built.add("a", "i", 3, {built.bitmap("111"), built.keep<std::int32_t>({1, 2, 3})});
  built.add("b", "i", 4, {built.bitmap("1110"), built.keep<std::int32_t>({4, 5, 6, 0})}).null_count = 1;
  built.add("c", "g", 3, {nullptr, built.keep<double>({1, 2, 3})}).null_count = -1;
  ArrowArray& d = built.add("d", "L", 3, {built.bitmap("0111"), built.keep<std::uint64_t>({0, 7, 8, 9})});
  d.offset = 1;
  d.null_count = -1;
  built.finish(3);
  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  built.expect_released_once();
  zs::test::expect_same_column(t.columns[1], col<std::int32_t>({4, 5, 6}));
  zs::test::expect_same_column(t.columns[3], col<std::uint64_t>({7, 8, 9}));
}

TEST(Arrow, ChildrenLongerThanTheStructAreReadOverTheStructsRows) {
  hand_built built;
  built.add("a", "l", 5, {nullptr, built.keep<std::int64_t>({1, 2, 3, 4, 5})});
  built.add("b", "l", 3, {nullptr, built.keep<std::int64_t>({7, 8, 9})});
  built.finish(3);
  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  zs::test::expect_same_column(t.columns[0], col<std::int64_t>({1, 2, 3}));
}

TEST(Arrow, ImportThroughTheDeviceInterfaceOfCpuArrays) {
  zs::table const expected = every_type_table();
  ArrowSchema schema;
  ArrowDeviceArray device_array{};
  zs::export_to_arrow(copy_table(expected), &schema, &device_array.array);
  device_array.device_type = ARROW_DEVICE_CPU;
  expect_same_table(zs::import_from_arrow_device(&schema, &device_array, nullptr), expected);
  EXPECT_EQ(schema.release, nullptr);
  EXPECT_EQ(device_array.array.release, nullptr);
}

// ---- every value and logical type, null masks, bools ---------------------------------------

TEST(Arrow, EveryValueAndLogicalTypeRoundTripsWithNullMasks) {
  zs::table const expected = zs::test::every_value_and_logical_type_table();
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(copy_table(expected), &schema, &array);
  std::vector<std::string> const formats = zs::test::every_value_and_logical_type_formats();
  ASSERT_EQ(schema.n_children, static_cast<std::int64_t>(formats.size()));
  for (std::size_t i = 0; i < formats.size(); ++i) {
    EXPECT_EQ(schema.children[i]->format, formats[i]) << "column " << expected.names[i];
  }
  zs::table const imported = zs::import_from_arrow(&schema, &array);
  zs::test::expect_same_table_and_nulls(imported, expected);
  EXPECT_EQ(schema.release, nullptr);
  EXPECT_EQ(array.release, nullptr);
}

TEST(Arrow, ExportSharesNullMasksAndCountsTheirNulls) {
  zs::table t = zs::test::every_value_and_logical_type_table();
  std::vector<const void*> masks;
  std::vector<std::int64_t> nulls;
  for (auto const& c : t.columns) {
    masks.push_back(c.view().null_mask);
    std::vector<bool> const valid = c.validity();
    nulls.push_back(static_cast<std::int64_t>(std::count(valid.begin(), valid.end(), false)));
  }
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);
  for (std::int64_t i = 0; i < array.n_children; ++i) {
    SCOPED_TRACE(schema.children[i]->name);
    ArrowArray const& child = *array.children[i];
    EXPECT_EQ(child.buffers[0], masks[i]) << "the validity buffer is the column's own mask";
    EXPECT_EQ(child.null_count, nulls[i]);
    EXPECT_EQ((schema.children[i]->flags & ARROW_FLAG_NULLABLE) != 0, masks[i] != nullptr);
  }
  EXPECT_EQ(array.children[2]->null_count, 13) << "u8 is all null";
  EXPECT_EQ(array.children[0]->null_count, 4);
  array.release(&array);
  schema.release(&schema);
}

TEST(Arrow, Bool8ExportsAsABitmapOfItsValues) {
  // 13 values (not a multiple of 8); any byte other than 0 is true.
  std::vector<std::uint8_t> const bytes{1, 0, 0, 1, 2, 0, 1, 1, 0, 255, 0, 0, 1};
  zs::column c = zs::column::allocate(value_type::bool8, bytes.size(), zs::memory_kind::host);
  std::copy(bytes.begin(), bytes.end(), c.mutable_view().values<std::uint8_t>());
  const void* values = c.view().data;
  zs::table t;
  t.names = {"flag"};
  t.columns.push_back(std::move(c));
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);
  EXPECT_STREQ(schema.children[0]->format, "b");
  ArrowArray const& child = *array.children[0];
  ASSERT_EQ(child.n_buffers, 2);
  EXPECT_NE(child.buffers[1], values) << "bool is not zero-copy: Arrow's values are bits";
  auto const* bits = static_cast<const std::uint8_t*>(child.buffers[1]);
  EXPECT_EQ(bits[0], 0b11011001);
  EXPECT_EQ(bits[1] & 0x1f, 0b10010);

  zs::table const back = zs::import_from_arrow(&schema, &array);
  ASSERT_EQ(back.columns[0].type(), value_type::bool8);
  auto const* got = back.columns[0].view().values<std::uint8_t>();
  for (std::size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(got[i], bytes[i] != 0 ? 1 : 0) << "row " << i;
}

TEST(Arrow, BoolBitmapsAtAnyOffsetExpandToBool8) {
  std::string const bits = "10110011100011110000101";  // 23 values
  for (std::int64_t child_offset : {0, 1, 3, 7, 8, 9}) {
    for (std::int64_t struct_offset : {0, 2, 5}) {
      SCOPED_TRACE("child offset " + std::to_string(child_offset) + ", struct offset " + std::to_string(struct_offset));
      std::int64_t const rows = 23 - child_offset - struct_offset;
      hand_built built;
      built.add("b", "b", 23 - child_offset, {nullptr, built.bitmap(bits)}).offset = child_offset;
      built.finish(rows);
      built.array.offset = struct_offset;
      zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
      built.expect_released_once();
      ASSERT_EQ(t.columns[0].type(), value_type::bool8);
      ASSERT_EQ(t.columns[0].size(), static_cast<std::uint64_t>(rows));
      EXPECT_FALSE(t.columns[0].nullable());
      auto const* got = t.columns[0].view().values<std::uint8_t>();
      for (std::int64_t i = 0; i < rows; ++i) {
        EXPECT_EQ(got[i], bits[static_cast<std::size_t>(child_offset + struct_offset + i)] == '1' ? 1 : 0) << "row " << i;
      }
    }
  }
}

TEST(Arrow, ValidityOfSlicesAtAnyOffsetBecomesTheNullMask) {
  std::string const validity = "1101100111011110001011101";  // 25 rows
  std::vector<std::int64_t> values(25);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i) * 11;
  for (std::int64_t child_offset : {0, 1, 5, 8, 13, 16}) {
    for (std::int64_t struct_offset : {0, 3}) {
      SCOPED_TRACE("child offset " + std::to_string(child_offset) + ", struct offset " + std::to_string(struct_offset));
      std::int64_t const rows = 25 - child_offset - struct_offset;
      hand_built built;
      ArrowArray& child = built.add("v", "l", 25 - child_offset, {built.bitmap(validity), built.keep(values)});
      child.offset = child_offset;
      child.null_count = -1;
      built.finish(rows);
      built.array.offset = struct_offset;
      zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
      built.expect_released_once();
      ASSERT_TRUE(t.columns[0].nullable());
      std::vector<bool> const got = t.columns[0].validity();
      auto const* v = t.columns[0].view().values<std::int64_t>();
      for (std::int64_t i = 0; i < rows; ++i) {
        std::size_t const row = static_cast<std::size_t>(child_offset + struct_offset + i);
        EXPECT_EQ(got[i], validity[row] == '1') << "row " << i;
        EXPECT_EQ(v[i], values[row]) << "row " << i;
      }
    }
  }
}

TEST(Arrow, NullableStringsAndBoolsImportTheirMasks) {
  hand_built built;
  built.add("s", "u", 9,
            {built.bitmap("1011010111"),
             built.keep<std::int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
             built.keep(std::vector<char>{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'})})
      .offset = 1;
  built.add("b", "b", 9, {built.bitmap("0111010011"), built.bitmap("1100110011")}).offset = 1;
  built.finish(9);
  built.array.children[0]->null_count = 3;
  built.array.children[1]->null_count = 3;
  zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
  built.expect_released_once();
  EXPECT_EQ(t.columns[0].strings(), (std::vector<std::string>{"b", "c", "d", "e", "f", "g", "h", "i", "j"}));
  EXPECT_EQ(t.columns[0].validity(), (std::vector<bool>{0, 1, 1, 0, 1, 0, 1, 1, 1}));
  EXPECT_EQ(t.columns[1].validity(), (std::vector<bool>{1, 1, 1, 0, 1, 0, 0, 1, 1}));
  auto const* b = t.columns[1].view().values<std::uint8_t>();
  EXPECT_EQ(std::vector<std::uint8_t>(b, b + 9), (std::vector<std::uint8_t>{1, 0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(Arrow, EveryTimeUnitAndZoneOfTheFormatsIsRead) {
  struct expected_type {
    const char* format;
    value_type storage;
    zs::logical_type logical;
  };
  using zs::logical_type;
  using zs::time_unit;
  std::vector<expected_type> const cases{
      {"tdD", value_type::int32, logical_type::date32()},
      {"tdm", value_type::int64, logical_type::date64()},
      {"tss:", value_type::int64, logical_type::timestamp(time_unit::second)},
      {"tsm:America/New_York", value_type::int64, logical_type::timestamp(time_unit::millisecond, "America/New_York")},
      {"tsu:UTC", value_type::int64, logical_type::timestamp(time_unit::microsecond, "UTC")},
      {"tsn:-03:30", value_type::int64, logical_type::timestamp(time_unit::nanosecond, "-03:30")},
      {"tDs", value_type::int64, logical_type::duration(time_unit::second)},
      {"tDn", value_type::int64, logical_type::duration(time_unit::nanosecond)},
      {"tts", value_type::int32, logical_type::time_of_day(time_unit::second)},
      {"ttm", value_type::int32, logical_type::time_of_day(time_unit::millisecond)},
      {"ttu", value_type::int64, logical_type::time_of_day(time_unit::microsecond)},
      {"ttn", value_type::int64, logical_type::time_of_day(time_unit::nanosecond)},
      {"d:9,2,32", value_type::int32, logical_type::decimal32(9, 2)},
      {"d:18,-4,64", value_type::int64, logical_type::decimal64(18, -4)},
      {"c", value_type::int8, {}},
      {"C", value_type::uint8, {}},
      {"s", value_type::int16, {}},
      {"S", value_type::uint16, {}},
  };
  for (auto const& c : cases) {
    SCOPED_TRACE(c.format);
    hand_built built;
    built.add("v", c.format, 2, {nullptr, built.keep<std::int64_t>({5, 6})});
    built.finish(2);
    zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
    ASSERT_EQ(t.columns[0].type(), c.storage);
    EXPECT_EQ(t.columns[0].logical(), c.logical) << zs::to_string(t.columns[0].logical());
  }
}

// ---- decimal128 --------------------------------------------------------------------------

// Both spellings of a 128-bit decimal ("d:P,S", Arrow's default width, and "d:P,S,128") import
// as int128 + decimal128(P, S), byte for byte, honouring the child's offset and its validity.
TEST(Arrow, Decimal128ImportsInBothSpellingsAsInt128WithItsNulls) {
  using zs::int128_value;
  std::vector<int128_value> const values{int128_value::of(7),        zs::int128_min,
                                         zs::int128_max,             int128_value::of(-1),
                                         int128_value{0, 1},         int128_value{0xfedcba9876543210ULL, -3},
                                         int128_value::of(INT64_MIN), int128_value{5, 0x40000000}};
  for (const char* format : {"d:38,4", "d:38,4,128"}) {
    SCOPED_TRACE(format);
    hand_built built;
    ArrowArray& child = built.add("price", format, 7, {built.bitmap("11011101"), built.keep(values)});
    child.offset = 1;
    child.null_count = 2;
    built.finish(7);
    zs::table const t = zs::import_from_arrow(&built.schema, &built.array);
    built.expect_released_once();
    ASSERT_EQ(t.columns.size(), 1u);
    zs::column const& c = t.columns[0];
    ASSERT_EQ(c.type(), value_type::int128);
    EXPECT_EQ(c.logical(), zs::logical_type::decimal128(38, 4));
    ASSERT_EQ(c.size(), 7u);
    EXPECT_EQ(c.validity(), (std::vector<bool>{1, 0, 1, 1, 1, 0, 1}));
    auto const* got = c.view().values<int128_value>();
    for (std::size_t i = 0; i < 7; ++i) {
      EXPECT_EQ(got[i], values[i + 1]) << "row " << i << ": " << zs::to_string(got[i]);
    }
  }
}

// A decimal128 column exports zero-copy as "d:P,S" and comes back alike, nulls, extremes and
// high words of both signs included; an int128 column without a logical type has no Arrow type.
TEST(Arrow, Decimal128RoundTripsZeroCopyAndBareInt128IsRefused) {
  using zs::int128_value;
  std::vector<int128_value> const values{zs::int128_min, zs::int128_max,  int128_value::of(-12345),
                                         int128_value{~std::uint64_t{0}, 0}, int128_value{0, -1},
                                         int128_value::of(0), int128_value{3, INT64_MIN + 1}, int128_value::of(99),
                                         int128_value{1ULL << 63, 1}};
  zs::table t;
  t.names = {"amount"};
  t.columns.push_back(zs::test::typed_column(values, zs::logical_type::decimal128(38, 10), "101101110"));
  zs::table const expected = copy_table(t);
  const void* data = t.columns[0].view().data;
  const void* mask = t.columns[0].view().null_mask;
  ArrowSchema schema;
  ArrowArray array;
  zs::export_to_arrow(std::move(t), &schema, &array);
  ASSERT_EQ(schema.n_children, 1);
  EXPECT_STREQ(schema.children[0]->format, "d:38,10");
  EXPECT_EQ(array.children[0]->buffers[1], data) << "the values are the column's own buffer";
  EXPECT_EQ(array.children[0]->buffers[0], mask);
  EXPECT_EQ(array.children[0]->null_count, 3);
  zs::table const back = zs::import_from_arrow(&schema, &array);
  zs::test::expect_same_table_and_nulls(back, expected);

  zs::table bare;
  bare.columns.push_back(col<int128_value>(values));
  ArrowSchema refused_schema{};
  ArrowArray refused_array{};
  auto const e = zs::test::thrown_error([&] { zs::export_to_arrow(std::move(bare), &refused_schema, &refused_array); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::unsupported) << e->what();
  EXPECT_NE(std::string(e->what()).find("int128"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("decimal128"), std::string::npos) << e->what();
  EXPECT_EQ(bare.columns.size(), 1u) << "a refused export leaves the table whole";
  EXPECT_EQ(refused_array.release, nullptr);
}

// ---- errors --------------------------------------------------------------------------------

TEST(ArrowErrors, UnsupportedFormatsNameTheColumnAndTheFormatAndListTheSupportedOnes) {
  // Half floats, 256-bit decimals and decimals of no Arrow width, binary, views, nested types,
  // the null type, intervals, unknown units and garbage.
  for (const char* format : {"e", "w:16", "d:40,2,256", "d:10,2,16", "z", "Z", "vu", "vz", "+l", "+L",
                             "+s", "+m", "+ud:0", "n", "tiM", "tdx", "tsx:", "ttx", "tDx", "d:x,2,64", "?", ""}) {
    SCOPED_TRACE(format);
    hand_built built;
    built.add("ok", "i", 1, {nullptr, built.keep<std::int32_t>({1})});
    built.add("odd", format, 1, {nullptr, built.keep<std::int64_t>({1})});
    built.finish(1);
    expect_import_error(built, zs::error_code::unsupported,
                        {"column 'odd' (child 1)", std::string("'") + format + "'", "supported", "large_utf8"});
  }
}

TEST(ArrowErrors, Decimal256NamesItsWidthAndTheWayOut) {
  hand_built built;
  built.add("price", "d:60,4,256", 1, {nullptr, built.keep<std::int64_t>({1, 0, 0, 0})});
  built.finish(1);
  expect_import_error(built, zs::error_code::unsupported, {"column 'price'", "256-bit decimal", "decimal128"});
}

TEST(ArrowErrors, DecimalPrecisionsBeyondTheirWidthAreRefused) {
  for (const char* format : {"d:10,2,32", "d:19,0,64", "d:0,0,64", "d:39,0", "d:39,2,128", "d:0,0"}) {
    SCOPED_TRACE(format);
    hand_built built;
    built.add("amount", format, 1, {nullptr, built.keep<std::int64_t>({1, 0})});
    built.finish(1);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 'amount'", format, "precision"});
  }
}

TEST(ArrowErrors, NullsOfWholeRowsAndBadNullCountsAreRefused) {
  {
    hand_built built;  // nulls at the struct level
    built.add("v", "l", 2, {nullptr, built.keep<std::int64_t>({1, 2})});
    built.finish(2);
    const void* struct_validity = built.bitmap("10");
    built.array.buffers = &struct_validity;
    built.array.null_count = 1;
    expect_import_error(built, zs::error_code::unsupported, {"struct", "whole rows"});
  }
  {
    hand_built built;  // a count without a bitmap breaks the specification
    built.add("v", "l", 2, {nullptr, built.keep<std::int64_t>({1, 2})}).null_count = 1;
    built.finish(2);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 'v'", "validity"});
  }
  {
    hand_built built;
    built.add("v", "l", 2, {built.bitmap("10"), built.keep<std::int64_t>({1, 2})}).null_count = -2;
    built.finish(2);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 'v'", "null_count -2"});
  }
}

TEST(ArrowErrors, DictionaryEncodedColumnsAreRefused) {
  hand_built built;
  ArrowSchema dictionary_schema{};
  dictionary_schema.format = "u";
  built.add("city", "i", 2, {nullptr, built.keep<std::int32_t>({0, 1})});
  built.finish(2);
  built.schema.children[0]->dictionary = &dictionary_schema;
  expect_import_error(built, zs::error_code::unsupported, {"column 'city'", "dictionary"});
}

TEST(ArrowErrors, ChildrenShorterThanTheStructAreRefused) {
  hand_built built;
  built.add("long", "l", 3, {nullptr, built.keep<std::int64_t>({1, 2, 3})});
  built.add("short", "l", 2, {nullptr, built.keep<std::int64_t>({1, 2})});
  built.finish(3);
  expect_import_error(built, zs::error_code::invalid_argument, {"column 'short'", "unequal length"});
}

TEST(ArrowErrors, ReleasedArraysAndSchemasAreRefused) {
  {
    hand_built built;
    built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1})});
    built.finish(1);
    built.array.release(&built.array);
    auto const e = zs::test::thrown_error([&] { (void)zs::import_from_arrow(&built.schema, &built.array); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("ArrowArray was already released"), std::string::npos) << e->what();
    built.expect_released_once();  // the schema is still released by the import, the array not twice
  }
  {
    hand_built built;
    built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1})});
    built.finish(1);
    built.schema.release(&built.schema);
    expect_import_error(built, zs::error_code::invalid_argument, {"ArrowSchema was already released"});
  }
  {
    hand_built built;  // a released child inside an unreleased parent
    built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1})});
    built.finish(1);
    built.array.children[0]->release(built.array.children[0]);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 'v'", "released"});
  }
}

TEST(ArrowErrors, WrongBufferCountsAreRefused) {
  {
    hand_built built;
    built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1}), nullptr});
    built.finish(1);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 'v'", "3 buffers", "has 2"});
  }
  {
    hand_built built;
    built.add("s", "U", 1, {nullptr, built.keep<std::int64_t>({0, 1})});
    built.finish(1);
    expect_import_error(built, zs::error_code::invalid_argument, {"column 's'", "2 buffers", "has 3"});
  }
  {
    hand_built built;
    built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1})});
    built.finish(1);
    built.array.n_buffers = 2;
    expect_import_error(built, zs::error_code::invalid_argument, {"struct", "2 buffers"});
  }
}

TEST(ArrowErrors, TopLevelMustBeAStruct) {
  hand_built built;
  built.finish(0);
  built.schema.format = "l";
  expect_import_error(built, zs::error_code::unsupported, {"struct", "+s", "'l'"});
}

TEST(ArrowErrors, MalformedStringOffsetsAreRefused) {
  hand_built built;
  built.add("s", "u", 2, {nullptr, built.keep<std::int32_t>({0, 3, 1}), built.keep<char>({'a', 'b', 'c'})});
  built.finish(2);
  expect_import_error(built, zs::error_code::invalid_argument, {"column 's'", "decreasing"});
}

TEST(ArrowErrors, UnsupportedDeviceTypesAreRefusedAndReleased) {
  hand_built built;
  built.add("v", "l", 1, {nullptr, built.keep<std::int64_t>({1})});
  built.finish(1);
  ArrowDeviceArray device_array = built.move_to_device_array(ARROW_DEVICE_OPENCL, 0);
  auto const e = zs::test::thrown_error(
      [&] { (void)zs::import_from_arrow_device(&built.schema, &device_array, nullptr); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::unsupported);
  EXPECT_NE(std::string(e->what()).find("device type 4"), std::string::npos) << e->what();
  EXPECT_EQ(device_array.array.release, nullptr);
  built.expect_released_once();
}

TEST(ArrowErrors, ExportRefusalsLeaveTheTableWhole) {
  {
    zs::table t = every_type_table();
    t.names.pop_back();
    ArrowSchema schema{};
    ArrowArray array{};
    auto const e = zs::test::thrown_error([&] { zs::export_to_arrow(std::move(t), &schema, &array); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("6 names for 7 columns"), std::string::npos) << e->what();
    EXPECT_EQ(t.columns.size(), 7u);
    EXPECT_EQ(array.release, nullptr);
  }
  {
    zs::table t = every_type_table();
    t.columns[3] = col<std::uint64_t>({1});
    ArrowSchema schema{};
    ArrowArray array{};
    auto const e = zs::test::thrown_error([&] { zs::export_to_arrow(std::move(t), &schema, &array); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e->what()).find("column 'u64'"), std::string::npos) << e->what();
    EXPECT_EQ(t.columns[0].size(), 5u);
  }
}

}  // namespace
