// Columns, errors and the reading of column files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/io.hpp"
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
  try {
    ZS_FAIL(zs::error_code::size_mismatch, "ranks disagree");
    FAIL() << "expected an error";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::size_mismatch);
    EXPECT_NE(std::string(e.file()).find("column_test.cpp"), std::string::npos);
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("size mismatch: ranks disagree"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ZS_EXPECTS(1 + 1 == 3, "arithmetic"), zs::error);
}

TEST(Types, ParseAndNameEveryValueType) {
  for (auto t : {zs::value_type::int32, zs::value_type::int64, zs::value_type::uint32,
                 zs::value_type::uint64, zs::value_type::float32, zs::value_type::float64,
                 zs::value_type::string}) {
    EXPECT_EQ(zs::parse_value_type(zs::to_string(t)), t);
  }
  EXPECT_THROW(zs::parse_value_type("int128"), zs::error);
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
