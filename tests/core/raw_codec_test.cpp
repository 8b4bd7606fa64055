// The raw codec's CPU reference path, white box: its frame sizes and the rules of its format
// that only its own checks catch. Round trips, truncation, bit flips and the statuses every codec
// shares are in the codec conformance suite (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "guarded_bytes.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

const zs::codec& raw() { return zs::get_codec(zs::codec_id::raw); }

// A host column split into `parts` partitions, each encoded into one frame of one batch.
struct encoded {
  std::vector<zs::encode_source> sources;
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> frame_bytes;
};

encoded encode_partitions(const zs::column& c, std::size_t parts) {
  encoded e;
  e.sources = zs::test::partition_sources(c.view(), c.view(), parts);
  e.offsets = zs::layout_frames(raw(), e.sources);
  e.frames.assign(e.offsets.back(), std::byte{0xEE});
  e.frame_bytes.assign(parts, 0);
  raw().encode_host({e.sources, e.frames.data(), e.offsets, e.frame_bytes.data()});
  return e;
}

// docs/FORMAT.md, "Codec 0: raw": the payload is the values as they are, after count + 1
// offsets for strings.
void expect_raw_frame_sizes(const zs::column& c, std::size_t parts) {
  auto const e = encode_partitions(c, parts);
  for (std::size_t f = 0; f < parts; ++f) {
    auto const& s = e.sources[f];
    std::uint64_t const offsets = s.type == zs::value_type::string ? 8 * (s.count + 1) : 0;
    EXPECT_EQ(e.frame_bytes[f], zs::frame_header_bytes + offsets + s.raw_bytes()) << "frame " << f;
  }
}

}  // namespace

namespace {

TEST(RawFormat, FramesAreTheHeaderThenTheValuesAsTheyAre) {
  expect_raw_frame_sizes(zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{}), 3);
  expect_raw_frame_sizes(zs::column::from_values<std::uint64_t>(std::vector<std::uint64_t>{1, 2, 3, 4, 5}), 2);
  expect_raw_frame_sizes(zs::column::from_values<double>(std::vector<double>(1000, -0.0)), 7);
  expect_raw_frame_sizes(zs::column::from_strings(std::vector<std::string>{"", "ab", "", "naïve", std::string(300, 'x')}), 3);
}

TEST(RawCodec, RefusesBatchesThatBreakItsContract) {
  std::vector<std::int32_t> v{1, 2, 3};
  std::vector<zs::encode_source> sources{{zs::value_type::int32, 3, v.data()}};
  std::vector<std::uint64_t> offsets{0, 64};  // room for the header only
  std::vector<std::byte> out(64);
  std::uint64_t bytes = 0;
  EXPECT_THROW(raw().encode_host({sources, out.data(), offsets, &bytes}), zs::error);
  std::vector<std::uint64_t> unaligned{8, 200};
  out.resize(200);
  EXPECT_THROW(raw().encode_host({sources, out.data(), unaligned, &bytes}), zs::error);
}

TEST(Registry, KnowsRawAndRefusesCodecsNotBuiltIn) {
  EXPECT_EQ(zs::get_codec(zs::codec_id::raw).name(), "raw");
  try {
    zs::get_codec(static_cast<zs::codec_id>(77));
    FAIL() << "expected an error";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::unsupported);
  }
}

// Corrupt string offsets behind a valid checksum: only the codec's own checks can catch them.
TEST(RawCorrupt, StringOffsetsOutOfOrderAreRefusedAndTheTargetIsUntouched) {
  auto const c = zs::column::from_strings(std::vector<std::string>{"ab", "cde", "f"});
  auto e = encode_partitions(c, 1);
  std::byte* frame = e.frames.data();
  std::byte* payload = frame + zs::frame_header_bytes;
  zs::detail::store_le(payload + 8, 5, 8);  // offsets 0,5,5,6: "ab" now claims 5 bytes...
  zs::detail::store_le(payload + 16, 4, 8);  // ...and then the offsets go down: 0,5,4,6
  auto h = zs::load_header(frame);
  h.payload_checksum = zs::hash::checksum(payload, h.payload_bytes);
  zs::store_header(h, frame);

  zs::column out = zs::column::allocate(zs::value_type::string, 3, zs::memory_kind::host, nullptr, 6);
  auto o = out.mutable_view();
  std::memset(o.data, 'Q', 6);
  for (int i = 0; i < 4; ++i) o.offsets[i] = -7;
  std::vector<zs::decode_target> targets{{zs::value_type::string, 3, o.data, o.offsets, 0, 6}};
  zs::frame_status status = zs::frame_status::not_decoded;
  raw().decode_host({e.frames.data(), e.offsets, targets, &status});
  EXPECT_EQ(status, zs::frame_status::corrupt_payload);
  EXPECT_EQ(std::string(static_cast<const char*>(o.data), 6), "QQQQQQ");
  EXPECT_EQ(o.offsets[0], -7);
}

// A string frame whose payload size, 8 x (count + 1) + raw bytes, wraps to the 16 bytes it has.
// The decoder used to accept the size and read count + 1 offsets from those 16 bytes; past them
// lies a guard page, so such a read faults here.
TEST(RawCorrupt, AStringFrameWhoseSizeWrapsIsRefusedWithoutReadingPastIt) {
  std::uint64_t const count = (std::uint64_t{1} << 60) - 1;   // offsets: 8 x 2^60 = 2^63 bytes
  std::uint64_t const chars = (std::uint64_t{1} << 63) + 16;  // 2^63 + 2^63 + 16 wraps to 16
  std::uint64_t const payload_bytes = 16;
  zs::test::guarded_bytes frame(zs::frame_header_bytes + payload_bytes);
  std::byte* payload = frame.data() + zs::frame_header_bytes;
  zs::detail::store_le(payload, 0, 8);  // offsets 0, 1: each one read looks plausible
  zs::detail::store_le(payload + 8, 1, 8);
  zs::frame_header h;
  h.codec = zs::codec_id::raw;
  h.type = zs::value_type::string;
  h.value_count = count;
  h.raw_bytes = chars;
  h.payload_bytes = payload_bytes;
  h.payload_checksum = zs::hash::checksum(payload, payload_bytes);
  zs::store_header(h, frame.data());

  std::vector<char> out_chars(8, 'Q');
  std::vector<std::int64_t> out_offsets(4, -7);
  std::vector<zs::decode_target> targets{{zs::value_type::string, count, out_chars.data(), out_offsets.data(), 0, chars}};
  std::vector<std::uint64_t> offsets{0, frame.size()};
  zs::frame_status status = zs::frame_status::not_decoded;
  raw().decode_host({frame.data(), offsets, targets, &status});
  EXPECT_EQ(status, zs::frame_status::corrupt_payload);
  EXPECT_EQ(out_offsets, std::vector<std::int64_t>(4, -7));
  EXPECT_EQ(out_chars, std::vector<char>(8, 'Q'));
}

// docs/FORMAT.md: the raw codec has no parameters, all 16 bytes zero. A frame with any other
// bytes there is not one the raw encoder wrote.
TEST(RawCorrupt, NonZeroCodecParametersAreRefusedAndTheTargetIsUntouched) {
  std::vector<zs::column> columns;
  columns.push_back(zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{4, 5, 6}));
  columns.push_back(zs::column::from_strings(std::vector<std::string>{"ab", "", "c"}));
  for (auto const& c : columns) {
    for (std::size_t byte : {std::size_t{0}, std::size_t{7}, std::size_t{15}}) {
      SCOPED_TRACE(std::string(zs::to_string(c.type())) + ", parameter byte " + std::to_string(byte));
      auto e = encode_partitions(c, 1);
      auto h = zs::load_header(e.frames.data());
      h.params[byte] = std::byte{1};
      zs::store_header(h, e.frames.data());
      zs::column out = zs::test::empty_like(c, zs::memory_kind::host);
      auto o = out.mutable_view();
      std::memset(o.data, 0x5A, c.data_bytes());
      auto const targets = zs::test::partition_targets(e.sources, o);
      zs::frame_status status = zs::frame_status::not_decoded;
      raw().decode_host({e.frames.data(), e.offsets, targets, &status});
      EXPECT_EQ(status, zs::frame_status::corrupt_payload);
      EXPECT_EQ(std::string(static_cast<const char*>(o.data), c.data_bytes()), std::string(c.data_bytes(), 'Z'));
    }
  }
}

// A destination describes memory the caller has: one whose size cannot be written in 64 bits is
// a broken argument, refused before any decoder sizes its work from it.
TEST(RawCodec, RefusesTargetsWhoseSizeDoesNotFitIn64Bits) {
  std::vector<std::byte> frame(64);
  std::vector<std::uint64_t> offsets{0, 64};
  std::int64_t offsets_room[2] = {};
  char chars[1] = {};
  zs::frame_status status = zs::frame_status::not_decoded;
  for (zs::decode_target const t : {zs::decode_target{zs::value_type::string, zs::max_string_count + 1, chars, offsets_room},
                                    zs::decode_target{zs::value_type::int64, UINT64_MAX / 8 + 1, chars},
                                    zs::decode_target{zs::value_type::string, 1, chars, offsets_room, 16, UINT64_MAX - 8}}) {
    std::vector<zs::decode_target> targets{t};
    try {
      raw().decode_host({frame.data(), offsets, targets, &status});
      ADD_FAILURE() << "a target of " << t.count << " values was accepted";
    } catch (const zs::error& e) {
      EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("fits in 64 bits"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(status, zs::frame_status::not_decoded);
}

// The frames of a batch are laid out from the sources' sizes; ones that cannot be added up in 64
// bits used to wrap into a small buffer size.
TEST(RawCodec, LayingOutFramesTooLargeForMemoryThrowsOutOfMemory) {
  std::int64_t const string_offsets[2] = {0, 0};
  std::vector<zs::encode_source> sources{{zs::value_type::string, 1, "", string_offsets, UINT64_MAX - 20}};
  try {
    auto const offsets = zs::layout_frames(raw(), sources);
    ADD_FAILURE() << "laid out a frame of 2^64 bytes as " << offsets.back() << " bytes";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::out_of_memory);
  }
  std::vector<std::uint8_t> values(8);
  std::vector<zs::encode_source> halves{{zs::value_type::string, 1, values.data(), string_offsets, UINT64_MAX / 2},
                                        {zs::value_type::string, 1, values.data(), string_offsets, UINT64_MAX / 2}};
  EXPECT_THROW(zs::layout_frames(raw(), halves), zs::error);
}

}  // namespace
