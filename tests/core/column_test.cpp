// Columns, errors and the reading of column files.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "prompt_io.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/io.hpp"
#include "zs/overflow.hpp"
#include "zs_test.hpp"

namespace {

TEST(Column, FromValuesCopiesAndReportsSizes) {
  std::vector<std::uint32_t> values{5, 0, 4294967295u};
  auto c = zs::column::from_values<std::uint32_t>(values);
  EXPECT_EQ(c.type(), zs::value_type::uint32);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.data_bytes(), 12u);
  EXPECT_EQ(c.memory(), zs::memory_kind::host);
  values[0] = 99;  // the column owns a copy
  EXPECT_EQ(c.view().values<std::uint32_t>()[0], 5u);
  EXPECT_EQ(c.view().values<std::uint32_t>()[2], 4294967295u);
}

TEST(Column, StringsRoundTripIncludingEmptyAndNonAscii) {
  std::vector<std::string> strings{"", "a", "", "Zürich 東京", std::string(1000, 'x'), ""};
  auto c = zs::column::from_strings(strings);
  EXPECT_EQ(c.size(), strings.size());
  auto v = c.view();
  EXPECT_EQ(v.offsets[0], 0);
  EXPECT_EQ(static_cast<std::uint64_t>(v.offsets[strings.size()]), c.data_bytes());
  EXPECT_EQ(c.strings(), strings);
}

TEST(Column, MoveLeavesTheSourceEmpty) {
  std::vector<std::int64_t> values{1, 2, 3};
  auto a = zs::column::from_values<std::int64_t>(values);
  const void* data = a.view().data;
  zs::column b = std::move(a);
  EXPECT_EQ(b.view().data, data);
  EXPECT_EQ(b.size(), 3u);
}

TEST(Column, HostCopyIsDeep) {
  std::vector<std::string> strings{"one", "two", ""};
  auto a = zs::column::from_strings(strings);
  auto b = a.copy_to(zs::memory_kind::host, nullptr);
  EXPECT_NE(b.view().data, a.view().data);
  EXPECT_EQ(b.strings(), strings);
}

TEST(Error, CarriesCodeFileAndLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    ZS_FAIL(zs::error_code::size_mismatch, "ranks disagree");
    FAIL() << "expected an error";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::size_mismatch);
    EXPECT_NE(std::string(e.file()).find("column_test.cpp"), std::string::npos);
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.message(), "ranks disagree");
  }
  EXPECT_THROW(ZS_EXPECTS(1 + 1 == 3, "arithmetic"), zs::error);
}

// Users read what(); the place of the check is for a debug log, and never a build machine's path.
TEST(Error, WhatNamesNoSourcePlaceAndWhereIsRelativeToTheSourceTree) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    ZS_FAIL(zs::error_code::size_mismatch, "ranks disagree");
  } catch (const zs::error& e) {
    EXPECT_STREQ(e.what(), "zshuffle: size mismatch: ranks disagree");
    EXPECT_EQ(e.where(), "tests/core/column_test.cpp:" + std::to_string(line));
  }
  // A place outside the tree (a caller's own file) keeps its name.
  zs::error const outside(zs::error_code::internal, "x", "/elsewhere/app.cpp", 7);
  EXPECT_EQ(outside.where(), "/elsewhere/app.cpp:7");
}

// Counts come from files, arguments and peers. Sizes computed from absurd ones used to wrap to
// small allocations that "succeeded": (count + 1) x 8 offsets of 2^61 - 1 strings is 0 bytes.
TEST(Column, AllocationsWhoseSizeWouldWrapThrowOutOfMemoryNamingTheSize) {
  auto const expect_out_of_memory = [](std::uint64_t count, zs::value_type type, const std::string& size) {
    try {
      zs::column::allocate(type, count, zs::memory_kind::host);
      ADD_FAILURE() << "a column of " << count << " " << zs::to_string(type) << " values was allocated";
    } catch (const zs::error& e) {
      EXPECT_EQ(e.code(), zs::error_code::out_of_memory);
      EXPECT_NE(std::string(e.what()).find(size), std::string::npos) << e.what();
    }
  };
  expect_out_of_memory((std::uint64_t{1} << 61) - 1, zs::value_type::string, "2305843009213693951");
  expect_out_of_memory(zs::max_string_count + 1, zs::value_type::string, "2305843009213693951");
  expect_out_of_memory(std::uint64_t{1} << 61, zs::value_type::int64, "2305843009213693952");
  expect_out_of_memory(UINT64_MAX, zs::value_type::uint32, "18446744073709551615");
}

TEST(Column, CountFitsSaysWhenSizesStayWithin64Bits) {
  EXPECT_TRUE(zs::count_fits(zs::value_type::string, zs::max_string_count));
  EXPECT_FALSE(zs::count_fits(zs::value_type::string, zs::max_string_count + 1));
  EXPECT_TRUE(zs::count_fits(zs::value_type::int32, UINT64_MAX / 4));
  EXPECT_FALSE(zs::count_fits(zs::value_type::int32, UINT64_MAX / 4 + 1));
  EXPECT_TRUE(zs::count_fits(zs::value_type::float64, 0));
}

// Rounding a size within 63 bytes of 2^64 up to the 64-byte alignment wrapped to 0.
TEST(HostBuffer, ASizeThatCannotBeRoundedUpThrowsOutOfMemoryNamingIt) {
  for (std::size_t const bytes : {SIZE_MAX, SIZE_MAX - 10, SIZE_MAX - 62}) {
    try {
      zs::host_buffer const b(bytes);
      ADD_FAILURE() << "a host buffer of " << bytes << " bytes was allocated";
    } catch (const zs::error& e) {
      EXPECT_EQ(e.code(), zs::error_code::out_of_memory);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bytes)), std::string::npos) << e.what();
    }
  }
}

TEST(Overflow, MultiplicationsAndAdditionsThatWrapAreSeen) {
  EXPECT_FALSE(zs::mul_overflows(0, UINT64_MAX));
  EXPECT_FALSE(zs::mul_overflows(UINT64_MAX, 1));
  EXPECT_TRUE(zs::mul_overflows(UINT64_MAX, 2));
  EXPECT_FALSE(zs::mul_overflows(std::uint64_t{1} << 32, (std::uint64_t{1} << 32) - 1));
  EXPECT_TRUE(zs::mul_overflows(std::uint64_t{1} << 32, std::uint64_t{1} << 32));
  EXPECT_FALSE(zs::add_overflows(UINT64_MAX - 5, 5));
  EXPECT_TRUE(zs::add_overflows(UINT64_MAX - 5, 6));
  EXPECT_FALSE(zs::add_overflows(0, UINT64_MAX));
}

TEST(Types, ParseAndNameEveryValueType) {
  for (auto t : {zs::value_type::int32, zs::value_type::int64, zs::value_type::uint32,
                 zs::value_type::uint64, zs::value_type::float32, zs::value_type::float64,
                 zs::value_type::string, zs::value_type::int8, zs::value_type::int16,
                 zs::value_type::uint8, zs::value_type::uint16, zs::value_type::bool8, zs::value_type::int128}) {
    EXPECT_EQ(zs::parse_value_type(zs::to_string(t)), t);
  }
  EXPECT_EQ(zs::parse_value_type("bool"), zs::value_type::bool8);
  EXPECT_THROW(zs::parse_value_type("int256"), zs::error);
}

// The narrow integers: their wire ids (appended, never renumbered), widths and kinds.
TEST(Types, NarrowIntegersHaveTheirIdsWidthsAndKinds) {
  EXPECT_EQ(static_cast<int>(zs::value_type::int8), 8);
  EXPECT_EQ(static_cast<int>(zs::value_type::int16), 9);
  EXPECT_EQ(static_cast<int>(zs::value_type::uint8), 10);
  EXPECT_EQ(static_cast<int>(zs::value_type::uint16), 11);
  EXPECT_EQ(zs::to_string(zs::value_type::uint16), "uint16");
  for (auto t : {zs::value_type::int8, zs::value_type::uint8}) EXPECT_EQ(zs::value_width(t), 1u);
  for (auto t : {zs::value_type::int16, zs::value_type::uint16}) EXPECT_EQ(zs::value_width(t), 2u);
  for (auto t : {zs::value_type::int8, zs::value_type::int16, zs::value_type::uint8, zs::value_type::uint16}) {
    EXPECT_TRUE(zs::is_valid(t));
    EXPECT_TRUE(zs::is_integer(t));
    EXPECT_FALSE(zs::is_float(t));
  }
  EXPECT_TRUE(zs::is_signed_integer(zs::value_type::int8));
  EXPECT_FALSE(zs::is_signed_integer(zs::value_type::uint16));
  EXPECT_FALSE(zs::is_valid(static_cast<zs::value_type>(zs::last_value_type_id + 1)));
  EXPECT_EQ(zs::value_type_of<std::int8_t>::value, zs::value_type::int8);
  EXPECT_EQ(zs::value_type_of<std::uint16_t>::value, zs::value_type::uint16);
}

// bool8: wire id 12, a byte per value, taken as a uint8 wherever integers go.
TEST(Types, Bool8IsOneByteWithId12AndCountsAsAnUnsignedInteger) {
  EXPECT_EQ(static_cast<int>(zs::value_type::bool8), 12);
  EXPECT_EQ(zs::to_string(zs::value_type::bool8), "bool8");
  EXPECT_EQ(zs::value_width(zs::value_type::bool8), 1u);
  EXPECT_TRUE(zs::is_valid(zs::value_type::bool8));
  EXPECT_TRUE(zs::is_integer(zs::value_type::bool8));
  EXPECT_FALSE(zs::is_signed_integer(zs::value_type::bool8));
  EXPECT_FALSE(zs::is_float(zs::value_type::bool8));
  EXPECT_EQ(zs::value_type_of<bool>::value, zs::value_type::bool8);
  std::vector<char> const flags{1, 0, 1};
  bool const values[] = {true, false, true};
  auto c = zs::column::from_values<bool>(values);
  EXPECT_EQ(c.type(), zs::value_type::bool8);
  EXPECT_EQ(c.data_bytes(), 3u);
  EXPECT_EQ(std::vector<char>(c.view().values<char>(), c.view().values<char>() + 3), flags);
}

// int128: wire id 13 (the last), 16 bytes a value, not an integer of the integer codecs.
TEST(Types, Int128IsSixteenBytesWithId13AndNoIntegerOfTheCodecs) {
  EXPECT_EQ(static_cast<int>(zs::value_type::int128), 13);
  EXPECT_EQ(zs::last_value_type_id, 13);
  EXPECT_EQ(zs::to_string(zs::value_type::int128), "int128");
  EXPECT_EQ(zs::parse_value_type("int128"), zs::value_type::int128);
  EXPECT_EQ(zs::value_width(zs::value_type::int128), 16u);
  EXPECT_TRUE(zs::is_valid(zs::value_type::int128));
  EXPECT_FALSE(zs::is_integer(zs::value_type::int128));
  EXPECT_FALSE(zs::is_signed_integer(zs::value_type::int128));
  EXPECT_FALSE(zs::is_float(zs::value_type::int128));
  EXPECT_TRUE(zs::count_fits(zs::value_type::int128, UINT64_MAX / 16));
  EXPECT_FALSE(zs::count_fits(zs::value_type::int128, UINT64_MAX / 16 + 1));
  EXPECT_EQ(zs::value_type_of<zs::int128_value>::value, zs::value_type::int128);
  zs::int128_value const values[] = {zs::int128_value::of(-1), zs::int128_max};
  auto c = zs::column::from_values<zs::int128_value>(values);
  EXPECT_EQ(c.type(), zs::value_type::int128);
  EXPECT_EQ(c.data_bytes(), 32u);
  // Little-endian two's complement, low word first: -1 is sixteen 0xff bytes.
  auto const* bytes = c.view().values<unsigned char>();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 0xffu) << i;
  EXPECT_EQ(bytes[16 + 15], 0x7fu);
}

TEST(Types, Int128ValuesCompareAsSignedIntegersAndPrintInDecimal) {
  using zs::int128_value;
  EXPECT_LT(int128_value::of(-1), int128_value::of(0));
  EXPECT_LT(zs::int128_min, int128_value::of(INT64_MIN));
  EXPECT_LT(int128_value::of(INT64_MAX), (int128_value{0, 1}));  // 2^64 above every int64
  EXPECT_LT((int128_value{~std::uint64_t{0}, 0}), (int128_value{0, 1}));  // the low word is unsigned
  EXPECT_LT((int128_value{0, -1}), (int128_value{~std::uint64_t{0}, -1}));
  EXPECT_LT(int128_value::of(5), zs::int128_max);
  EXPECT_EQ(int128_value::of(-7), (int128_value{~std::uint64_t{0} - 6, -1}));
  EXPECT_EQ(zs::to_string(int128_value::of(0)), "0");
  EXPECT_EQ(zs::to_string(int128_value::of(-42)), "-42");
  EXPECT_EQ(zs::to_string(int128_value::of(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(zs::to_string(int128_value{0, 1}), "18446744073709551616");
  EXPECT_EQ(zs::to_string(zs::int128_max), "170141183460469231731687303715884105727");
  EXPECT_EQ(zs::to_string(zs::int128_min), "-170141183460469231731687303715884105728");
}

TEST(LogicalTypes, Decimal128LiesOverInt128WithUpTo38Digits) {
  using zs::logical_kind;
  using zs::logical_type;
  logical_type const d = logical_type::decimal128(38, 10);
  EXPECT_EQ(d.kind, logical_kind::decimal128);
  EXPECT_EQ(d.precision, 38);
  EXPECT_EQ(d.scale, 10);
  EXPECT_EQ(zs::storage_type(logical_kind::decimal128), zs::value_type::int128);
  EXPECT_EQ(zs::to_string(d), "decimal128(38, 10)");
  EXPECT_EQ(zs::to_string(logical_type::decimal128(1, -3)), "decimal128(1, -3)");
  EXPECT_NO_THROW(zs::check_logical_type(d, zs::value_type::int128));
  EXPECT_THROW(zs::check_logical_type(d, zs::value_type::int64), zs::error);
  EXPECT_THROW(zs::check_logical_type(logical_type::decimal64(18, 0), zs::value_type::int128), zs::error);
  auto const e = zs::test::thrown_error([] { (void)logical_type::decimal128(39, 0); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("1 to 38"), std::string::npos) << e->what();
  EXPECT_THROW((void)logical_type::decimal128(0, 0), zs::error);
  logical_type too_precise = d;
  too_precise.precision = 39;
  EXPECT_THROW(zs::check_logical_type(too_precise, zs::value_type::int128), zs::error);
  zs::int128_value const values[] = {zs::int128_value::of(12345)};
  auto c = zs::column::from_values<zs::int128_value>(values);
  c.set_logical(d);
  EXPECT_EQ(c.logical(), d);
}

TEST(LogicalTypes, NamedConstructorsPickTheirKindAndStorage) {
  using zs::logical_kind;
  using zs::logical_type;
  using zs::time_unit;
  EXPECT_EQ(logical_type::date32().kind, logical_kind::date32);
  EXPECT_EQ(zs::storage_type(logical_kind::date32), zs::value_type::int32);
  EXPECT_EQ(zs::storage_type(logical_kind::date64), zs::value_type::int64);
  EXPECT_EQ(logical_type::time_of_day(time_unit::millisecond).kind, logical_kind::time32);
  EXPECT_EQ(logical_type::time_of_day(time_unit::nanosecond).kind, logical_kind::time64);
  EXPECT_EQ(zs::storage_type(logical_kind::time32), zs::value_type::int32);
  EXPECT_EQ(zs::storage_type(logical_kind::decimal32), zs::value_type::int32);
  EXPECT_EQ(zs::storage_type(logical_kind::decimal64), zs::value_type::int64);
  EXPECT_EQ(zs::to_string(logical_type::timestamp(time_unit::microsecond, "UTC")), "timestamp[us, UTC]");
  EXPECT_EQ(zs::to_string(logical_type::duration(time_unit::second)), "duration[s]");
  EXPECT_EQ(zs::to_string(logical_type::decimal64(12, -2)), "decimal64(12, -2)");
  EXPECT_EQ(zs::to_string(logical_type{}), "none");
  EXPECT_TRUE(logical_type{}.is_none());
  EXPECT_NE(logical_type::timestamp(time_unit::second), logical_type::timestamp(time_unit::second, "UTC"));
  EXPECT_THROW(zs::storage_type(logical_kind::none), zs::error);
}

TEST(LogicalTypes, InvalidParametersAreRefusedWithAClearMessage) {
  using zs::logical_type;
  auto const e = zs::test::thrown_error([] { (void)logical_type::decimal32(10, 2); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("1 to 9"), std::string::npos) << e->what();
  EXPECT_THROW((void)logical_type::decimal64(19, 0), zs::error);
  EXPECT_THROW((void)logical_type::decimal64(0, 0), zs::error);
  logical_type zoned_date = logical_type::date32();
  zoned_date.timezone = "UTC";
  EXPECT_THROW(zs::check_logical_type(zoned_date, zs::value_type::int32), zs::error);
  logical_type time32_in_us = logical_type::time_of_day(zs::time_unit::second);
  time32_in_us.unit = zs::time_unit::microsecond;
  EXPECT_THROW(zs::check_logical_type(time32_in_us, zs::value_type::int32), zs::error);
  EXPECT_NO_THROW(zs::check_logical_type(logical_type{}, zs::value_type::string));
}

TEST(Column, LogicalTypeIsCheckedAgainstTheStorageAndKeptByCopies) {
  std::vector<std::int64_t> const values{1, 2, 3};
  auto c = zs::column::from_values<std::int64_t>(values);
  EXPECT_TRUE(c.logical().is_none());
  auto const ts = zs::logical_type::timestamp(zs::time_unit::nanosecond, "Asia/Tokyo");
  c.set_logical(ts);
  EXPECT_EQ(c.logical(), ts);
  auto const e = zs::test::thrown_error([&] { c.set_logical(zs::logical_type::date32()); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("int32"), std::string::npos) << e->what();
  EXPECT_EQ(c.logical(), ts) << "a refused logical type leaves the column as it was";

  std::uint8_t* mask = c.add_null_mask();
  mask[0] = 0b101;
  zs::column const copy = c.copy_to(zs::memory_kind::host, nullptr);
  EXPECT_EQ(copy.logical(), ts);
  EXPECT_EQ(copy.validity(), (std::vector<bool>{true, false, true}));
  zs::column moved = std::move(c);
  EXPECT_EQ(moved.logical(), ts);
  EXPECT_THROW(zs::column::from_strings({}).set_logical(zs::logical_type::date64()), zs::error);
}

class ColumnFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("zs_column_files_" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
};

TEST_F(ColumnFiles, ReadsLinesAsStrings) {
  write("s.txt", "alpha\n\nbeta\ngamma");  // an empty line, and no final newline
  auto c = zs::io::read_column(dir_ / "s.txt");
  EXPECT_EQ(c.strings(), (std::vector<std::string>{"alpha", "", "beta", "gamma"}));
}

TEST_F(ColumnFiles, ReadsFixedWidthValues) {
  std::int32_t const values[] = {-5, 7, 2147483647};
  write("v.i32", std::string(reinterpret_cast<const char*>(values), sizeof values));
  auto c = zs::io::read_column(dir_ / "v.i32");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.view().values<std::int32_t>()[0], -5);
  EXPECT_EQ(c.view().values<std::int32_t>()[2], 2147483647);
}

TEST_F(ColumnFiles, ReadsNarrowIntegers) {
  std::int8_t const bytes[] = {-128, -1, 0, 127};
  write("v.i8", std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
  auto c = zs::io::read_column(dir_ / "v.i8");
  ASSERT_EQ(c.type(), zs::value_type::int8);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c.view().values<std::int8_t>()[0], -128);
  EXPECT_EQ(c.view().values<std::int8_t>()[3], 127);
  std::uint16_t const words[] = {0, 65535, 300};
  write("w.u16", std::string(reinterpret_cast<const char*>(words), sizeof words));
  auto w = zs::io::read_column(dir_ / "w.u16");
  ASSERT_EQ(w.type(), zs::value_type::uint16);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w.view().values<std::uint16_t>()[1], 65535);
  EXPECT_EQ(zs::io::type_of_file("x.i16"), zs::value_type::int16);
  EXPECT_EQ(zs::io::type_of_file("x.u8"), zs::value_type::uint8);
  EXPECT_EQ(zs::io::type_of_file("x.b8"), zs::value_type::bool8);
  EXPECT_EQ(zs::io::type_of_file("x.i128"), zs::value_type::int128);
  write("odd.i16", "abc");  // 3 bytes: not a whole int16
  EXPECT_THROW(zs::io::read_column(dir_ / "odd.i16"), zs::error);
}

TEST_F(ColumnFiles, RejectsTruncatedAndMissingFiles) {
  write("bad.f64", "1234567");  // 7 bytes: not a whole double
  try {
    zs::io::read_column(dir_ / "bad.f64");
    FAIL() << "expected an error";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::io_error);
  }
  EXPECT_THROW(zs::io::read_column(dir_ / "absent.u32"), zs::error);
  EXPECT_THROW(zs::io::read_column(dir_ / "unknown.bin"), zs::error);
}

// Paths that are not regular files are refused at once: a FIFO used to block until a writer
// came, a device such as /dev/zero to be read until memory ran out.
TEST_F(ColumnFiles, RefusesFifosAndDirectoriesAtOnce) {
  std::filesystem::path const fifo = dir_ / "pipe.u32";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  zs::test::expect_io_error_within_seconds(5, fifo, [&] { zs::io::read_column(fifo); }, "a FIFO");
  std::filesystem::create_directories(dir_ / "folder.i64");
  zs::test::expect_io_error_within_seconds(5, {}, [&] { zs::io::read_column(dir_ / "folder.i64"); },
                                           "a directory");
}

TEST_F(ColumnFiles, RefusesDevicesAtOnce) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero on this machine";
  std::filesystem::create_symlink("/dev/zero", dir_ / "zero.u64");
  zs::test::expect_io_error_within_seconds(5, {}, [&] { zs::io::read_column(dir_ / "zero.u64"); },
                                           "a character device");
}

TEST(DataFiles, EveryRealColumnLoadsWithItsDocumentedRowCount) {
  struct expected { const char* file; std::uint64_t rows; };
  for (auto [file, rows] : {expected{"deb_paths.txt", 600000}, expected{"deb_descriptions.txt", 63440},
                            expected{"deb_maintainers.txt", 63440}, expected{"deb_homepages.txt", 58999},
                            expected{"osm_poi_names.txt", 769009}, expected{"geoip4_lo.u32", 385602},
                            expected{"ncbi_tax_id.i32", 2670456}, expected{"etopo5_elev_m.i32", 4000000},
                            expected{"airport_lat.f64", 1200000}, expected{"levitus_temp.f32", 1296000},
                            expected{"navy_wind_u.f32", 1387584}}) {
    EXPECT_EQ(zs::test::data_column(file).size(), rows) << file;
  }
}

}  // namespace
