// The bitmap codec's CPU reference, white box: the mode it picks for each kind of byte column
// (constant, bits, bytes) at row counts around a byte of bits and past a million, the body it
// writes (sizes, the bit order of an Arrow validity bitmap), and the bodies its decoder refuses
// behind valid checksums. Round trips of every codec against the GPU, truncation and bit flips
// are in the conformance suite (conformance_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bitmap/bitmap_format.hpp"
#include "bitmap_test_inputs.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

namespace inputs = zs::test::bitmap_inputs;
using zs::bitmap::mode;

const zs::codec& bitmap() { return zs::get_codec(zs::codec_id::bitmap); }

// One frame of `values` as `type`, written by the CPU reference, exactly its bytes.
std::vector<std::byte> encode_one(const std::vector<std::uint8_t>& values, zs::value_type type = zs::value_type::uint8) {
  zs::encode_source const source{type, values.size(), values.data()};
  std::vector<zs::encode_source> const sources{source};
  auto const offsets = zs::layout_frames(bitmap(), sources);
  std::vector<std::byte> frames(offsets.back());
  std::uint64_t bytes = 0;
  bitmap().encode_host({sources, frames.data(), offsets, &bytes});
  frames.resize(bytes);
  return frames;
}

// Decodes one frame (given exactly its bytes) into `rows` bytes that start as 0xA5.
struct decoded {
  zs::frame_status status;
  std::vector<std::uint8_t> values;
};
decoded decode_one(const std::vector<std::byte>& frame, std::uint64_t rows, zs::value_type type) {
  decoded d{zs::frame_status::not_decoded, std::vector<std::uint8_t>(rows, 0xA5)};
  zs::decode_target const target{type, rows, d.values.data()};
  std::vector<zs::decode_target> const targets{target};
  std::vector<std::uint64_t> const offsets{0, frame.size()};
  bitmap().decode_host({frame.data(), offsets, targets, &d.status});
  return d;
}

mode mode_of(const std::vector<std::byte>& frame) { return zs::bitmap::mode_of(frame.data() + zs::frame_header_bytes); }

TEST(BitmapCodec, IsRegisteredUnderItsIdAndNameButNeverADefault) {
  EXPECT_EQ(bitmap().id(), zs::codec_id::bitmap);
  EXPECT_EQ(static_cast<int>(zs::codec_id::bitmap), 11);
  EXPECT_EQ(&zs::get_codec("bitmap"), &bitmap());
  EXPECT_EQ(zs::to_string(zs::codec_id::bitmap), "bitmap");
  for (auto type : {zs::value_type::uint8, zs::value_type::bool8}) {
    EXPECT_TRUE(bitmap().supports(type));
    EXPECT_NE(&zs::default_codec(type), &bitmap()) << zs::to_string(type);
  }
  for (auto type : {zs::value_type::int8, zs::value_type::int32, zs::value_type::uint16, zs::value_type::string}) {
    EXPECT_FALSE(bitmap().supports(type)) << zs::to_string(type);
  }
}

TEST(BitmapCodec, PicksTheModeTheFormatGivesAndRoundTrips) {
  for (auto const& in : inputs::all()) {
    SCOPED_TRACE(in.name);
    auto const frame = encode_one(in.values, in.type);
    std::uint64_t const rows = in.values.size();
    ASSERT_EQ(mode_of(frame), in.expected);
    EXPECT_EQ(frame.size(), zs::frame_header_bytes + zs::bitmap::payload_bytes(in.expected, rows));
    EXPECT_LE(frame.size(), zs::frame_header_bytes + zs::bitmap::body_header_bytes + rows) << "never above raw + 8";
    EXPECT_EQ(zs::load_header(frame.data()).codec, zs::codec_id::bitmap);
    auto const d = decode_one(frame, rows, in.type);
    ASSERT_EQ(d.status, zs::frame_status::ok) << zs::to_string(d.status);
    EXPECT_TRUE(d.values == in.values) << "decoded values differ";
  }
}

TEST(BitmapCodec, ConstantFramesCostTheSameWhateverTheirRows) {
  for (std::uint8_t value : {0, 1, 42, 255}) {
    auto const one = encode_one(std::vector<std::uint8_t>(1, value));
    auto const many = encode_one(std::vector<std::uint8_t>(1'000'003, value));
    EXPECT_EQ(mode_of(many), mode::constant);
    EXPECT_EQ(many.size(), one.size());
    EXPECT_EQ(many.size(), zs::frame_header_bytes + 9);
    EXPECT_EQ(many[zs::frame_header_bytes + 8], static_cast<std::byte>(value));
  }
}

TEST(BitmapCodec, BitsAreLeastSignificantFirstAsInAnArrowValidityBitmap) {
  std::vector<std::uint8_t> const values{1, 0, 1, 1, 0, 0, 0, 0, 1, 1};
  auto const frame = encode_one(values, zs::value_type::bool8);
  ASSERT_EQ(mode_of(frame), mode::bits);
  ASSERT_EQ(frame.size(), zs::frame_header_bytes + 8 + 2);
  const std::byte* body = frame.data() + zs::frame_header_bytes;
  EXPECT_EQ(body[0], std::byte{1});
  for (int k = 1; k < 8; ++k) EXPECT_EQ(body[k], std::byte{0}) << "padding byte " << k;
  EXPECT_EQ(body[8], std::byte{0x0D});  // rows 0, 2, 3
  EXPECT_EQ(body[9], std::byte{0x03});  // rows 8, 9; bits past row 9 zero
}

TEST(BitmapCodec, AnEmptyFrameIsAnEmptyBitmap) {
  auto const frame = encode_one({});
  EXPECT_EQ(mode_of(frame), mode::bits);
  EXPECT_EQ(frame.size(), zs::frame_header_bytes + zs::bitmap::body_header_bytes);
  EXPECT_EQ(decode_one(frame, 0, zs::value_type::uint8).status, zs::frame_status::ok);
}

TEST(BitmapCodec, ManyFramesOfABatchEachPickTheirOwnMode) {
  // Null masks of a shuffle: one column cut into partitions, some all valid, some mixed.
  std::vector<std::uint8_t> column(100'000, 1);
  for (std::size_t i = 40'000; i < 60'000; i += 3) column[i] = 0;
  for (std::size_t i = 80'000; i < 90'000; ++i) column[i] = 0;
  column[95'000] = 7;
  auto const c = zs::column::from_values<std::uint8_t>(column);
  auto const sources = zs::test::partition_sources(c.view(), c.view(), 10);
  auto const offsets = zs::layout_frames(bitmap(), sources);
  std::vector<std::byte> frames(offsets.back());
  std::vector<std::uint64_t> bytes(sources.size());
  bitmap().encode_host({sources, frames.data(), offsets, bytes.data()});
  std::vector<mode> const expected{mode::constant, mode::constant, mode::constant, mode::constant, mode::bits,
                                   mode::bits,     mode::constant, mode::constant, mode::constant, mode::bytes};
  for (std::size_t f = 0; f < sources.size(); ++f) {
    EXPECT_EQ(zs::bitmap::mode_of(frames.data() + offsets[f] + zs::frame_header_bytes), expected[f]) << "frame " << f;
  }
  zs::column out = zs::test::empty_like(c, zs::memory_kind::host);
  auto const targets = zs::test::partition_targets(sources, out.mutable_view());
  std::vector<zs::frame_status> status(sources.size(), zs::frame_status::not_decoded);
  bitmap().decode_host({frames.data(), offsets, targets, status.data()});
  EXPECT_NO_THROW(zs::throw_if_failed(status));
  zs::test::expect_same_column(out, c);
}

TEST(BitmapCodec, BodiesThatBreakTheRulesAreRefusedAndLeaveTheTargetAsItWas) {
  std::vector<std::uint8_t> alternating(13), with_two(13);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = with_two[i] = static_cast<std::uint8_t>(i % 2);
  with_two[5] = 2;
  auto const constant = encode_one(std::vector<std::uint8_t>(13, 1));
  auto const bits = encode_one(alternating);
  auto const bytes = encode_one(with_two);
  ASSERT_EQ(mode_of(constant), mode::constant);
  ASSERT_EQ(mode_of(bits), mode::bits);
  ASSERT_EQ(mode_of(bytes), mode::bytes);
  auto const corrupt = inputs::corruptions(constant, bits, bytes);
  ASSERT_GE(corrupt.size(), 40u);
  for (auto const& c : corrupt) {
    zs::frame_header const h = zs::load_header(c.frame.data());
    auto const d = decode_one(c.frame, 13, h.type);
    EXPECT_EQ(d.status, c.expected) << c.name << ": " << zs::to_string(d.status);
    EXPECT_EQ(d.values, std::vector<std::uint8_t>(13, 0xA5)) << c.name << ": refused, but wrote its target";
  }
}

TEST(BitmapCodec, RowsOtherThanTheTargetsAreRefusedBeforeTheBody) {
  auto const frame = encode_one(std::vector<std::uint8_t>(100, 1));
  EXPECT_EQ(decode_one(frame, 99, zs::value_type::uint8).status, zs::frame_status::count_mismatch);
  EXPECT_EQ(decode_one(frame, 101, zs::value_type::uint8).status, zs::frame_status::count_mismatch);
  EXPECT_EQ(decode_one(frame, 100, zs::value_type::bool8).status, zs::frame_status::type_mismatch);
}

TEST(BitmapCodec, OtherTypesAreNotEncoded) {
  std::vector<std::int32_t> const values{1, 0, 1};
  zs::encode_source const source{zs::value_type::int32, values.size(), values.data()};
  std::vector<zs::encode_source> const sources{source};
  std::vector<std::uint64_t> const offsets{0, 256};
  std::vector<std::byte> frames(256);
  std::uint64_t bytes = 0;
  auto const e = zs::test::thrown_error([&] { bitmap().encode_host({sources, frames.data(), offsets, &bytes}); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::unsupported);
}

}  // namespace
