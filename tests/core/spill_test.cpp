// Compressed spill on the CPU path (zs/spill.hpp): host columns spilled through the CPU reference
// codecs and restored, the choice of codec, the failures, and the file tier. White box where a
// test corrupts spilled frames in place (lib/src/spill_state.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "measured_speeds.hpp"
#include "spill_state.hpp"
#include "zs/codec.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs/spill.hpp"
#include "spill_test_inputs.hpp"
#include "zs_test.hpp"

namespace {

namespace fs = std::filesystem;
using zs::memory_kind;
using zs::value_type;

using zs::test::spill_inputs::all_types;
using zs::test::spill_inputs::sample_column;
using zs::test::spill_inputs::small_frames;

std::string type_name(value_type t) { return std::string(zs::to_string(t)); }

void expect_round_trip(const zs::column& original, const zs::spill_options& options) {
  zs::spilled_column handle = zs::spill(original.view(), nullptr, options);
  EXPECT_EQ(handle.type(), original.type());
  EXPECT_EQ(handle.size(), original.size());
  EXPECT_EQ(handle.origin(), memory_kind::host);
  if (options.codec) {
    EXPECT_EQ(handle.report().codec, *options.codec);
  }
  zs::column back = zs::restore(handle, nullptr);
  ASSERT_EQ(back.memory(), memory_kind::host);
  zs::test::expect_same_column(original, back);
  // The handle keeps its frames: a second restore gives the same column.
  zs::column again = zs::restore(handle, memory_kind::host, nullptr);
  zs::test::expect_same_column(original, again);
}

TEST(Spill, EveryTypeRoundTripsForcedRawAndForcedDefaultCodecAndAuto) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    zs::column const c = sample_column(type, 5000);
    expect_round_trip(c, small_frames(zs::codec_id::raw));
    expect_round_trip(c, small_frames(zs::default_codec(type).id()));
    expect_round_trip(c, small_frames());
  }
}

TEST(Spill, ForcedCodecCompressesAndReportsWhatWasSpilled) {
  zs::column const c = sample_column(value_type::int64, 20000);
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::int64).id()));
  auto const& r = handle.report();
  EXPECT_TRUE(r.forced);
  EXPECT_TRUE(r.compressed());
  EXPECT_EQ(r.raw_bytes, 20000u * 8);
  EXPECT_GT(r.ratio(), 2.0) << "small integers in 64 bits compress";
  EXPECT_GT(r.frames, 8u) << "4 KiB frames";
  EXPECT_GT(r.estimated_ratio, 1.0);
  EXPECT_GT(r.encode_bps, 0.0);
  EXPECT_GT(r.predicted_compressed_seconds, 0.0);
  EXPECT_GE(handle.spill_seconds(), 0.0);
  (void)zs::restore(handle, nullptr);
  EXPECT_GT(handle.restore_seconds(), 0.0);
}

// Speeds are measured on the column and remembered under its name: a later spill of the same
// name reuses the figures, another name measures its own (codecs run at different speeds on
// different values, docs/SPILL.md).
TEST(Spill, CodecSpeedsAreRememberedPerColumnName) {
  zs::column const c = sample_column(value_type::int32, 600000);  // 2.4 MB: above half the 4 MiB sample
  zs::spill_options options = small_frames();
  options.pcie_bandwidth = 1e3;  // so that the speeds are needed
  auto const encode_bps = [&](const std::string& name) {
    options.name = name;
    zs::spilled_column const h = zs::spill(c.view(), nullptr, options);
    EXPECT_TRUE(h.report().compressed());
    return h.report().encode_bps;
  };
  double const first = encode_bps("speeds, column a");
  EXPECT_GT(first, 0.0);
  EXPECT_EQ(encode_bps("speeds, column a"), first) << "the same name reuses the figures";
  EXPECT_NE(encode_bps("speeds, column b"), first) << "another name measures its own";
}

// The rule the spill and the shuffle's planner share for remembered speeds.
TEST(MeasuredSpeeds, AFigureServesSamplesUpToTwiceItsBytesAndALargerOneReplacesIt) {
  zs::detail::measured_speeds<int, double> speeds;
  EXPECT_FALSE(speeds.find(1, 100));
  speeds.remember(1, 1000, 5.0);  // measured on a few rows
  EXPECT_EQ(speeds.find(1, 1), 5.0);
  EXPECT_EQ(speeds.find(1, 2000), 5.0);
  EXPECT_FALSE(speeds.find(1, 2001)) << "a column of many more bytes measures its own";
  EXPECT_FALSE(speeds.find(2, 10)) << "another key";
  speeds.remember(1, 1 << 20, 7.0);
  EXPECT_EQ(speeds.find(1, 2000), 7.0) << "the larger sample's figure serves the small ones too";
  EXPECT_EQ(speeds.find(1, 2 << 20), 7.0);
  speeds.remember(1, 500, 9.0);
  EXPECT_EQ(speeds.find(1, 100), 7.0) << "a smaller sample does not replace a larger one";
}

TEST(Spill, EmptyColumnsAndOneValueRoundTrip) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    for (std::uint64_t rows : {0, 1}) {
      zs::column const c = sample_column(type, rows);
      expect_round_trip(c, small_frames());
      expect_round_trip(c, small_frames(zs::default_codec(type).id()));
    }
  }
}

TEST(Spill, AutomaticChoiceCompressesOnlyWhereTheLinkIsSlowerThanTheCodec) {
  zs::column const c = sample_column(value_type::int32, 50000);
  zs::spill_options slow_link = small_frames();
  slow_link.pcie_bandwidth = 1e3;  // far slower than any codec
  auto compressed = zs::spill(c.view(), nullptr, slow_link);
  EXPECT_FALSE(compressed.report().forced);
  // The default codec, or an alternative its estimate beats (dict: the column's differences).
  EXPECT_NE(compressed.report().codec, zs::codec_id::raw);
  EXPECT_LT(compressed.report().predicted_compressed_seconds, compressed.report().predicted_raw_seconds);
  EXPECT_DOUBLE_EQ(compressed.report().pcie_bps, 1e3);

  zs::spill_options fast_link = small_frames();
  fast_link.pcie_bandwidth = 1e18;  // far faster than any codec
  auto raw = zs::spill(c.view(), nullptr, fast_link);
  EXPECT_EQ(raw.report().codec, zs::codec_id::raw);
  EXPECT_EQ(raw.report().codec_name, "raw");
  EXPECT_GT(raw.report().predicted_compressed_seconds, raw.report().predicted_raw_seconds);
  zs::test::expect_same_column(c, zs::restore(compressed, nullptr));
  zs::test::expect_same_column(c, zs::restore(raw, nullptr));
}

TEST(Spill, DecisionComparesOverlappedDirectionsWithRawTransfers) {
  zs::spill_report r;
  r.raw_bytes = 1000;
  const zs::codec& bitpack = zs::default_codec(value_type::int32);
  // Ratio 4 over a 100 B/s link, codec at 1000 B/s: 2 x max(1, 2.5) = 5 s against 20 s raw.
  zs::detail::decide_codec(r, bitpack, 4.0, {1000, 1000}, 100);
  EXPECT_DOUBLE_EQ(r.predicted_raw_seconds, 20.0);
  EXPECT_DOUBLE_EQ(r.predicted_compressed_seconds, 5.0);
  EXPECT_EQ(r.codec, bitpack.id());
  // The same codec at 40 B/s: 2 x 25 s, slower than raw.
  zs::detail::decide_codec(r, bitpack, 4.0, {40, 40}, 100);
  EXPECT_EQ(r.codec, zs::codec_id::raw);
}

// bitpack_ext wins where the link time its smaller frames save exceeds what its slower kernels
// add: over a slow link, not over a fast one.
TEST(Spill, ExtendedSchemesWhereTheirFramesSaveMoreThanTheirKernelsCost) {
  // 1000 bytes; classic ratio 2.5 at 1000 B/s each way, extended ratio 3.8 at 300 B/s.
  // Over 100 B/s: classic 2 x max(1, 4) = 8 s, extended 2 x max(3.33, 2.63) = 6.67 s.
  EXPECT_TRUE(zs::detail::prefers_extended(1000, 2.5, {1000, 1000}, 3.8, {300, 300}, 100));
  EXPECT_DOUBLE_EQ(zs::detail::predicted_compressed_seconds(1000, 2.5, {1000, 1000}, 100), 8.0);
  // Over 1000 B/s: classic 2 x max(1, 0.4) = 2 s, extended 2 x 3.33 s.
  EXPECT_FALSE(zs::detail::prefers_extended(1000, 2.5, {1000, 1000}, 3.8, {300, 300}, 1000));
}

// A spill of an integer column whose frames bitpack_ext makes far smaller (values whose low
// bits are all zero, which pfor shifts away), over a slow link, takes bitpack_ext; the restore
// gives the column back.
TEST(Spill, IntegerColumnsTakeTheExtendedSchemesOverASlowLink) {
  std::vector<std::int32_t> values(200'000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(((i * 2654435761U) % 4096) << 12);
  zs::column const c = zs::column::from_values<std::int32_t>(values);
  zs::spill_options slow = small_frames();
  slow.pcie_bandwidth = 1e6;
  auto spilled = zs::spill(c.view(), nullptr, slow);
  EXPECT_EQ(spilled.report().codec, zs::codec_id::bitpack_pfor);
  EXPECT_EQ(spilled.report().codec_name, "bitpack_ext");
  zs::test::expect_same_column(c, zs::restore(spilled, nullptr));
}

// An integer column of few values spread over the whole range (64 distinct int64 values), over a
// slow link, takes dict: its codes pack into about 7 bits a row where bitpack_ext needs 64.
TEST(Spill, IntegerColumnsOfFewDistinctValuesTakeADictionaryOverASlowLink) {
  std::vector<std::int64_t> values(200'000);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<std::int64_t>(((i * 2654435761U) % 64) * 0x9E3779B97F4A7C15ULL);
  }
  zs::column const c = zs::column::from_values<std::int64_t>(values);
  zs::spill_options slow = small_frames();
  slow.frame_bytes = 64 << 10;  // 8192 rows a frame: room for a dictionary of 512 entries
  slow.batch_bytes = 256 << 10;
  slow.name = "few int64 values";
  slow.pcie_bandwidth = 1e3;  // slow enough for any build's CPU codecs (the sanitizers' too)
  auto spilled = zs::spill(c.view(), nullptr, slow);
  EXPECT_EQ(spilled.report().codec, zs::codec_id::dict);
  EXPECT_EQ(spilled.report().codec_name, "dict");
  EXPECT_GT(spilled.report().estimated_ratio, 6.0);  // 7 bits of code a row, and each frame's dictionary
  zs::test::expect_same_column(c, zs::restore(spilled, nullptr));
}

TEST(Spill, ShortEndsCutTheFirstAndLastBatchOfALongColumn) {
  using zs::value_type;
  // 1000 frames of 1000 int32 values (4000 bytes each) in batches of 40000 bytes: a first and a
  // last batch of an eighth (one frame), the others of ten frames.
  auto const rows = zs::detail::frame_boundaries(1'000'000, 4'000'000, 4000);
  ASSERT_EQ(rows.size(), 1001u);
  auto const p = zs::detail::plan_frames(value_type::int32, rows, {}, 40'000, true);
  ASSERT_EQ(p.frames.size(), 1000u);
  std::vector<std::size_t> sizes;
  for (std::size_t b = 0; b + 1 < p.batch_begin.size(); ++b) sizes.push_back(p.batch_begin[b + 1] - p.batch_begin[b]);
  ASSERT_GE(sizes.size(), 3u);
  EXPECT_EQ(sizes.front(), 1u);
  EXPECT_EQ(sizes.back(), 1u);
  for (std::size_t b = 1; b + 1 < sizes.size(); ++b) EXPECT_LE(sizes[b], 10u) << "batch " << b;
  EXPECT_EQ(sizes.size(), 2u + 100u);  // 998 frames in the middle: 99 of ten and one of eight
  for (std::size_t f = 0; f < p.frames.size(); ++f) {
    EXPECT_EQ(p.frames[f].row, rows[f]);
    EXPECT_EQ(p.frames[f].block, static_cast<std::size_t>(std::upper_bound(p.batch_begin.begin(), p.batch_begin.end(), f) -
                                                          p.batch_begin.begin() - 1));
  }
  // Without short ends, and with them on two batches or fewer: equal batches.
  auto const plain = zs::detail::plan_frames(value_type::int32, rows, {}, 40'000);
  EXPECT_EQ(plain.batch_begin.size(), 101u);
  auto const two = zs::detail::plan_frames(value_type::int32, rows, {}, 2'000'000, true);
  EXPECT_EQ(two.batch_begin, (std::vector<std::size_t>{0, 500, 1000}));
}

TEST(Spill, RealColumnsRoundTrip) {
  for (auto const& file : zs::io::list_columns(zs::io::data_dir())) {
    SCOPED_TRACE(file.filename().string());
    zs::column const c = zs::io::read_column(file);
    zs::spill_options o;
    o.name = file.filename().string();
    o.codec = zs::default_codec(c.type()).id();
    auto handle = zs::spill(c.view(), nullptr, o);
    EXPECT_EQ(handle.name(), o.name);
    zs::test::expect_same_column(c, zs::restore(handle, nullptr));
    o.codec.reset();
    auto automatic = zs::spill(c.view(), nullptr, o);
    zs::test::expect_same_column(c, zs::restore(automatic, nullptr));
  }
}

TEST(Spill, TablesAndTypedBuffersRoundTrip) {
  zs::table t;
  t.names = {"ints", "names", "doubles"};
  t.columns.push_back(sample_column(value_type::int32, 3000));
  t.columns.push_back(sample_column(value_type::string, 3000));
  t.columns.push_back(sample_column(value_type::float64, 3000));
  t.columns[0].set_logical(zs::logical_type::date32());
  zs::spilled_table spilled = zs::spill(t, nullptr, small_frames());
  ASSERT_EQ(spilled.columns.size(), 3u);
  EXPECT_EQ(spilled.columns[1].name(), "names");
  zs::table back = zs::restore(spilled, nullptr);
  EXPECT_EQ(back.names, t.names);
  EXPECT_EQ(back.columns[0].logical(), zs::logical_type::date32());
  EXPECT_TRUE(back.columns[2].logical().is_none());
  for (std::size_t c = 0; c < 3; ++c) zs::test::expect_same_column(t.columns[c], back.columns[c]);

  zs::column const values = sample_column(value_type::uint64, 1234);
  auto handle = zs::spill(values.view().data, value_type::uint64, 1234, memory_kind::host, nullptr, small_frames());
  zs::test::expect_same_column(values, zs::restore(handle, nullptr));
  auto const strings = zs::test::thrown_error([&] {
    (void)zs::spill(values.view().data, value_type::string, 3, memory_kind::host, nullptr);
  });
  ASSERT_TRUE(strings);
  EXPECT_EQ(strings->code(), zs::error_code::invalid_argument);
}

TEST(Spill, CorruptedHostFrameThrowsNamingTheColumnAndKeepsTheData) {
  zs::column const c = sample_column(value_type::int32, 5000);
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::int32).id()));
  auto& state = handle.state();
  ASSERT_GE(state.frames.size(), 3u);
  auto const& f = state.frames[2];
  std::byte& victim = state.blocks[f.block].data()[f.offset + f.bytes - 1];  // the payload's last byte
  victim ^= std::byte{0x10};
  auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, nullptr); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::corrupt_frame);
  EXPECT_NE(e->message().find("column 'test'"), std::string::npos) << e->message();
  EXPECT_NE(e->message().find("frame 2"), std::string::npos) << e->message();
  EXPECT_NE(e->message().find("checksum"), std::string::npos) << e->message();
  // Nothing was lost: the handle still holds every frame; undoing the damage restores the column.
  EXPECT_TRUE(handle.holds_data());
  victim ^= std::byte{0x10};
  zs::test::expect_same_column(c, zs::restore(handle, nullptr));
}

// A copy of `c` with a null mask where every third row (and the first) is null.
zs::column with_nulls(const zs::column& c) {
  zs::column out = c.copy_to(memory_kind::host, nullptr);
  std::uint8_t* const mask = out.add_null_mask();
  std::uint64_t const bytes = zs::null_mask_bytes(out.size());
  for (std::uint64_t b = 0; b < bytes; ++b) mask[b] = 0;
  for (std::uint64_t i = 0; i < out.size(); ++i) {
    if (i % 3 != 0) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  return out;
}

TEST(Spill, NullableColumnsRoundTripWithTheirMaskForEveryTypeAndCodecAlsoThroughAFile) {
  auto const file = fs::temp_directory_path() / ("zs_spill_nullable_" + std::to_string(::getpid()));
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    // (A column of 0 rows has a mask of 0 bytes, which its view cannot tell from none.)
    for (std::uint64_t rows : {1, 13, 5000}) {
      zs::column const c = with_nulls(sample_column(type, rows));
      for (auto const codec : {std::optional<zs::codec_id>(zs::codec_id::raw),
                               std::optional<zs::codec_id>(zs::default_codec(type).id()),
                               std::optional<zs::codec_id>()}) {
        auto handle = zs::spill(c.view(), nullptr, small_frames(codec));
        EXPECT_TRUE(handle.nullable());
        EXPECT_EQ(handle.report().null_mask_bytes, zs::null_mask_bytes(rows));
        EXPECT_GT(handle.report().null_mask_spilled_bytes, zs::null_mask_bytes(rows));
        zs::column const back = zs::restore(handle, nullptr);
        ASSERT_TRUE(back.nullable());
        EXPECT_EQ(back.validity(), c.validity());
        zs::test::expect_same_column(c, back);
        // The file tier carries the mask in a section of its own.
        zs::spill_to_file(handle, file);
        auto loaded = zs::restore_from_file(file);
        EXPECT_TRUE(loaded.nullable());
        EXPECT_EQ(loaded.report().null_mask_bytes, zs::null_mask_bytes(rows));
        EXPECT_EQ(loaded.report().null_mask_spilled_bytes, handle.report().null_mask_spilled_bytes);
        EXPECT_EQ(loaded.report().spilled_bytes, handle.report().spilled_bytes);
        zs::column const from_file = zs::restore(loaded, nullptr);
        ASSERT_TRUE(from_file.nullable());
        EXPECT_EQ(from_file.validity(), c.validity());
        zs::test::expect_same_column(c, from_file);
      }
    }
  }
  fs::remove(file);
}

TEST(Spill, AColumnWithoutAMaskComesBackWithoutOne) {
  zs::column const c = sample_column(value_type::int64, 100);
  auto handle = zs::spill(c.view(), nullptr, small_frames());
  EXPECT_FALSE(handle.nullable());
  EXPECT_EQ(handle.report().null_mask_bytes, 0u);
  EXPECT_FALSE(zs::restore(handle, nullptr).nullable());
}

TEST(Spill, ADamagedNullMaskFrameIsCaughtAndKeepsTheData) {
  zs::column const c = with_nulls(sample_column(value_type::int32, 5000));
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::codec_id::raw));
  auto& mask = *handle.state().null_mask;
  ASSERT_FALSE(mask.frames.empty());
  auto const& f = mask.frames.back();
  std::byte& victim = mask.blocks[f.block].data()[f.offset + f.bytes - 1];
  victim ^= std::byte{0x01};
  auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, nullptr); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::corrupt_frame);
  EXPECT_NE(e->message().find("null mask"), std::string::npos) << e->message();
  victim ^= std::byte{0x01};
  EXPECT_EQ(zs::restore(handle, nullptr).validity(), c.validity());
}

TEST(Spill, MovedFromHandleRefusesToRestore) {
  zs::column const c = sample_column(value_type::float32, 100);
  auto handle = zs::spill(c.view(), nullptr);
  zs::spilled_column moved = std::move(handle);
  EXPECT_FALSE(handle.holds_data());  // NOLINT(bugprone-use-after-move): the point of the test
  auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, nullptr); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(e->message().find("moved from"), std::string::npos) << e->message();
  zs::test::expect_same_column(c, zs::restore(moved, nullptr));
  zs::spilled_column never;
  EXPECT_FALSE(never.holds_data());
  EXPECT_THROW((void)never.report(), zs::error);
}

TEST(Spill, HostAllocationFailureIsAClearErrorNamingTheColumn) {
  zs::column const c = sample_column(value_type::int64, 1000);
  ::setenv("ZS_FAULT", "spill.host_allocation=oom", 1);
  auto const e = zs::test::thrown_error([&] { (void)zs::spill(c.view(), nullptr, small_frames()); });
  ::unsetenv("ZS_FAULT");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::out_of_memory);
  EXPECT_NE(e->message().find("column 'test'"), std::string::npos) << e->message();
  // The next spill, without the fault, works.
  auto handle = zs::spill(c.view(), nullptr, small_frames());
  zs::test::expect_same_column(c, zs::restore(handle, nullptr));
}

TEST(Spill, ForcedCodecThatDoesNotEncodeTheTypeIsRefused) {
  zs::column const c = sample_column(value_type::string, 10);
  auto const e = zs::test::thrown_error([&] {
    (void)zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::int32).id()));
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::unsupported);
  EXPECT_NE(e->message().find("does not encode string"), std::string::npos) << e->message();
}

TEST(Spill, DeviceRestoreWithoutAGpuSaysSo) {
  if (zs::cuda_device_available()) GTEST_SKIP() << "this machine has a GPU: the GPU tests restore to it";
  zs::column const c = sample_column(value_type::int32, 10);
  auto handle = zs::spill(c.view(), nullptr);
  auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, memory_kind::device, nullptr); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->message().find("no CUDA device"), std::string::npos) << e->message();
}

// --- the file tier ---

class SpillFile : public ::testing::Test {
 protected:
  fs::path path_ = fs::temp_directory_path() / ("zs_spill_test_" + std::to_string(::getpid()) + ".zsspill");
  void TearDown() override { fs::remove(path_); }

  std::string read_all() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write_all(const std::string& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  zs::error_code code_of_restore() const {
    auto const e = zs::test::thrown_error([&] { (void)zs::restore_from_file(path_); });
    return e ? e->code() : zs::error_code::internal;
  }
};

TEST_F(SpillFile, EveryTypeRoundTripsThroughAFile) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    for (std::uint64_t rows : {0, 1, 5000}) {
      zs::column const c = sample_column(type, rows);
      auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(type).id()));
      zs::spill_to_file(handle, path_);
      auto loaded = zs::restore_from_file(path_);
      EXPECT_EQ(loaded.name(), "test");
      EXPECT_EQ(loaded.report().codec, handle.report().codec);
      EXPECT_EQ(loaded.report().spilled_bytes, handle.report().spilled_bytes);
      EXPECT_EQ(loaded.report().frames, handle.report().frames);
      zs::test::expect_same_column(c, zs::restore(loaded, nullptr));
    }
  }
}

TEST_F(SpillFile, TruncatedFileIsDetected) {
  zs::column const c = sample_column(value_type::string, 5000);
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::string).id()));
  zs::spill_to_file(handle, path_);
  std::string const whole = read_all();
  for (std::size_t keep : {whole.size() - 1, whole.size() - 100, whole.size() / 2, std::size_t{40}, std::size_t{3}}) {
    SCOPED_TRACE(keep);
    write_all(whole.substr(0, keep));
    auto const e = zs::test::thrown_error([&] { (void)zs::restore_from_file(path_); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), zs::error_code::corrupt_frame);
    EXPECT_NE(e->message().find(path_.string()), std::string::npos) << e->message();
  }
  write_all(whole + "x");
  EXPECT_EQ(code_of_restore(), zs::error_code::corrupt_frame);
}

TEST_F(SpillFile, CorruptedByteIsDetectedWherever) {
  zs::column const c = sample_column(value_type::int64, 5000);
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::int64).id()));
  zs::spill_to_file(handle, path_);
  std::string const whole = read_all();
  // The header, the frame table, a frame header, payloads.
  for (std::size_t at : {std::size_t{9}, std::size_t{100}, whole.size() / 3, whole.size() / 2, whole.size() - 20}) {
    SCOPED_TRACE(at);
    std::string damaged = whole;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    write_all(damaged);
    EXPECT_EQ(code_of_restore(), zs::error_code::corrupt_frame);
  }
  write_all(whole);
  auto loaded = zs::restore_from_file(path_);
  zs::test::expect_same_column(c, zs::restore(loaded, nullptr));
}

TEST_F(SpillFile, ADamagedOrMissingMaskSectionIsCaught) {
  zs::column const c = with_nulls(sample_column(value_type::int32, 5000));
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::codec_id::raw));
  zs::spill_to_file(handle, path_);
  std::string const whole = read_all();
  // The mask's frames end the file: a byte of its last frame, then the file cut inside it.
  std::string damaged = whole;
  damaged[whole.size() - 40] = static_cast<char>(damaged[whole.size() - 40] ^ 0x01);
  write_all(damaged);
  auto e = zs::test::thrown_error([&] { (void)zs::restore_from_file(path_); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::corrupt_frame);
  EXPECT_NE(e->message().find("null mask"), std::string::npos) << e->message();
  write_all(whole.substr(0, whole.size() - 100));
  EXPECT_EQ(code_of_restore(), zs::error_code::corrupt_frame);
  // The flag that announces the mask (the word after the version), cleared: the header's
  // checksum, which covers it, no longer matches.
  damaged = whole;
  damaged[16] = static_cast<char>(damaged[16] ^ 0x01);
  write_all(damaged);
  EXPECT_EQ(code_of_restore(), zs::error_code::corrupt_frame);
  write_all(whole);
  auto loaded = zs::restore_from_file(path_);
  EXPECT_EQ(zs::restore(loaded, nullptr).validity(), c.validity());
}

// A file of version 1 (no flags word, no mask section), as earlier releases wrote: still read.
TEST_F(SpillFile, VersionOneFilesStillRead) {
  zs::column const c = sample_column(value_type::int64, 5000);
  auto handle = zs::spill(c.view(), nullptr, small_frames(zs::default_codec(value_type::int64).id()));
  zs::spill_to_file(handle, path_);
  std::string const v2 = read_all();
  auto const word = [&](std::size_t at) { return zs::detail::load_le(reinterpret_cast<const std::byte*>(v2.data()) + at, 8); };
  ASSERT_EQ(word(8), 2u);
  ASSERT_EQ(word(16), 0u);  // no mask
  // Section header at 24: 8 words, then the name and 7 words per frame, then the checksum.
  std::size_t const table_end = 24 + 64 + word(24 + 56) + 56 * word(24 + 40);
  std::string v1 = v2.substr(0, 8);
  v1.append(v2, 8, 8);
  v1[8] = 1;
  v1.append(v2, 24, table_end - 24);
  std::byte sum[8];
  zs::detail::store_le(sum, zs::hash::checksum(reinterpret_cast<const std::byte*>(v1.data()), v1.size()), 8);
  v1.append(reinterpret_cast<const char*>(sum), 8);
  v1.append(v2, table_end + 8, std::string::npos);
  write_all(v1);
  auto loaded = zs::restore_from_file(path_);
  EXPECT_FALSE(loaded.nullable());
  zs::test::expect_same_column(c, zs::restore(loaded, nullptr));
}

TEST_F(SpillFile, MissingFileIsAnIoError) {
  EXPECT_EQ(code_of_restore(), zs::error_code::io_error);
  zs::spilled_column empty;
  EXPECT_THROW(zs::spill_to_file(empty, path_), zs::error);
}

}  // namespace
