// The raw codec's CPU reference path: round trips on real and adversarial columns, and frames
// that must be refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "zs/codec.hpp"
#include "zs/io.hpp"
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

// Decodes every frame of `e` into one column shaped like `like` and returns it with statuses.
std::pair<zs::column, std::vector<zs::frame_status>> decode_all(const encoded& e, const zs::column& like) {
  zs::column out = zs::test::empty_like(like, zs::memory_kind::host);
  auto const targets = zs::test::partition_targets(e.sources, out.mutable_view());
  std::vector<zs::frame_status> status(targets.size(), zs::frame_status::not_decoded);
  raw().decode_host({e.frames.data(), e.offsets, targets, status.data()});
  return {std::move(out), std::move(status)};
}

void expect_round_trip(const zs::column& c, std::size_t parts) {
  auto const e = encode_partitions(c, parts);
  for (std::size_t f = 0; f < parts; ++f) {
    auto const& s = e.sources[f];
    std::uint64_t const offsets = s.type == zs::value_type::string ? 8 * (s.count + 1) : 0;
    EXPECT_EQ(e.frame_bytes[f], zs::frame_header_bytes + offsets + s.raw_bytes());
  }
  auto [out, status] = decode_all(e, c);
  for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
  zs::test::expect_same_column(c, out);
}

}  // namespace

namespace {

class RawRealData : public ::testing::TestWithParam<const char*> {};

TEST_P(RawRealData, RoundTripsInSeveralPartitions) {
  auto const c = zs::test::data_column(GetParam());
  expect_round_trip(c, 1);
  expect_round_trip(c, 7);
}

INSTANTIATE_TEST_SUITE_P(AllColumns, RawRealData,
                         ::testing::Values("deb_paths.txt", "deb_descriptions.txt", "deb_maintainers.txt",
                                           "deb_homepages.txt", "osm_poi_names.txt", "geoip4_lo.u32",
                                           "ncbi_tax_id.i32", "etopo5_elev_m.i32", "airport_lat.f64",
                                           "levitus_temp.f32", "navy_wind_u.f32"));

TEST(RawAdversarial, EmptyColumnsAndEmptyPartitions) {
  expect_round_trip(zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{}), 3);
  expect_round_trip(zs::column::from_strings(std::vector<std::string>{}), 2);
  // More partitions than rows: most are empty.
  expect_round_trip(zs::column::from_values<std::uint64_t>(std::vector<std::uint64_t>{1, 2}), 5);
}

TEST(RawAdversarial, ExtremeIntegers) {
  using l64 = std::numeric_limits<std::int64_t>;
  expect_round_trip(zs::column::from_values<std::int64_t>(std::vector<std::int64_t>{l64::min(), l64::max(), 0, -1}), 2);
  expect_round_trip(zs::column::from_values<std::uint64_t>(std::vector<std::uint64_t>{UINT64_MAX, 0}), 1);
  expect_round_trip(zs::column::from_values<std::uint32_t>(std::vector<std::uint32_t>(1000, 7)), 3);
}

TEST(RawAdversarial, SpecialFloatsKeepTheirBits) {
  float const nanf = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> f{nanf, -nanf, std::numeric_limits<float>::infinity(), -0.0f, 0.0f,
                       std::numeric_limits<float>::denorm_min(), -1e34f};
  expect_round_trip(zs::column::from_values<float>(f), 2);
  std::vector<double> d{std::numeric_limits<double>::signaling_NaN(), -0.0, -std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::max()};
  expect_round_trip(zs::column::from_values<double>(d), 3);
}

TEST(RawAdversarial, EmptyLongAndNonAsciiStrings) {
  std::vector<std::string> s{"", "", std::string(1 << 20, 'L'), "naïve café", "日本語テキスト", std::string(1, '\0'),
                             "\xff\xfe", ""};
  expect_round_trip(zs::column::from_strings(s), 1);
  expect_round_trip(zs::column::from_strings(s), 4);
  expect_round_trip(zs::column::from_strings(std::vector<std::string>(100, "")), 3);
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

TEST(RawCorrupt, EveryTruncationOfABatchIsRefused) {
  auto const c = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{10, 20, 30, 40});
  auto e = encode_partitions(c, 1);
  for (std::uint64_t keep = 0; keep < e.frame_bytes[0]; ++keep) {
    std::vector<std::uint64_t> offsets{0, keep};
    std::vector<std::int32_t> out(4, -1);
    std::vector<zs::decode_target> targets{{zs::value_type::int32, 4, out.data()}};
    zs::frame_status status = zs::frame_status::ok;
    raw().decode_host({e.frames.data(), offsets, targets, &status});
    ASSERT_EQ(status, zs::frame_status::truncated) << "kept " << keep;
    ASSERT_EQ(out, std::vector<std::int32_t>(4, -1));
  }
}

TEST(RawCorrupt, ABadFrameDoesNotStopTheOthers) {
  auto const c = zs::column::from_values<std::uint32_t>(std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6});
  auto e = encode_partitions(c, 3);
  e.frames[e.offsets[1] + zs::frame_header_bytes] ^= std::byte{1};  // payload of frame 1
  auto [out, status] = decode_all(e, c);
  EXPECT_EQ(status[0], zs::frame_status::ok);
  EXPECT_EQ(status[1], zs::frame_status::bad_payload_checksum);
  EXPECT_EQ(status[2], zs::frame_status::ok);
  auto v = out.view().values<std::uint32_t>();
  EXPECT_EQ(v[0], 1u);
  EXPECT_EQ(v[5], 6u);
}

}  // namespace
