// The codec framework on the CPU: the registry, column parameters (format version 2), embedded
// frames, estimates, and the fixture codec that composes them.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fixture_codec.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs_test.hpp"

namespace {

using zs::frame_status;

const zs::codec& raw() { return zs::get_codec(zs::codec_id::raw); }

const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }

// A codec that only names itself: for registry checks.
class named_codec final : public zs::codec {
 public:
  named_codec(zs::codec_id id, std::string_view name, std::uint64_t params = 0) : id_(id), name_(name), params_(params) {}
  std::uint64_t params_bytes(zs::value_type) const noexcept override { return params_; }
  zs::codec_id id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return name_; }
  bool supports(zs::value_type) const noexcept override { return false; }
  std::uint64_t max_frame_bytes(const zs::encode_source&) const noexcept override { return 0; }

 protected:
  void encode_payloads_async(const zs::device_encode_batch&, const zs::encode_batch&, void*, std::size_t,
                             zs::detail::upload_image&, cudaStream_t) const override {}
  void encode_payload_host(const zs::encode_source&, std::byte*, std::uint64_t) const override {}
  void decode_payloads_async(const zs::device_decode_batch&, const zs::decode_batch&, void*, std::size_t,
                             zs::detail::upload_image&, cudaStream_t) const override {}
  frame_status decode_payload_host(const zs::frame_header&, const std::byte*, const zs::decode_target&) const override {
    return frame_status::corrupt_payload;
  }

 private:
  zs::codec_id id_;
  std::string_view name_;
  std::uint64_t params_;
};

TEST(CodecRegistry, FindsCodecsByIdAndNameAndRefusesClashes) {
  EXPECT_EQ(&zs::get_codec("raw"), &raw());
  EXPECT_EQ(&zs::get_codec("bitpack"), &bitpack());
  auto const unknown = zs::test::thrown_error([] { zs::get_codec("nosuch"); });
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->code(), zs::error_code::unsupported);
  EXPECT_NE(std::string(unknown->message()).find("registered: raw, bitpack"), std::string::npos) << unknown->message();

  static const named_codec same_id(zs::codec_id::raw, "other");
  static const named_codec same_name(static_cast<zs::codec_id>(30), "raw");
  static const named_codec too_high(static_cast<zs::codec_id>(32), "high");
  static const named_codec huge_params(static_cast<zs::codec_id>(29), "huge", zs::max_params_bytes + 1);
  for (const zs::codec* c : {static_cast<const zs::codec*>(&same_id), static_cast<const zs::codec*>(&same_name),
                             static_cast<const zs::codec*>(&too_high), static_cast<const zs::codec*>(&huge_params)}) {
    auto const e = zs::test::thrown_error([&] { zs::register_codec(*c); });
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), zs::error_code::invalid_argument) << c->name();
  }
  // Ids stay sorted and the registry unchanged by refusals.
  auto const all = zs::all_codecs();
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1]->id(), all[i]->id());
}

TEST(CodecRegistry, DefaultCodecIsTheMostPreferredThatEncodesTheType) {
  zs::test::register_fixture_codec();  // preference -1: never a default
  for (auto type : {zs::value_type::int32, zs::value_type::uint64}) EXPECT_EQ(&zs::default_codec(type), &bitpack());
  for (auto type : {zs::value_type::float32, zs::value_type::float64}) {
    EXPECT_EQ(&zs::default_codec(type), &zs::get_codec(zs::codec_id::alp));
  }
  EXPECT_EQ(&zs::default_codec(zs::value_type::string), &zs::get_codec(zs::codec_id::fsst));
}

// One frame of `values` with `c`, column parameters prepared from the values themselves.
struct encoded_frame {
  std::vector<std::byte> bytes;
  std::vector<std::byte> params;
};

template <typename T>
encoded_frame encode_one(const zs::codec& c, const std::vector<T>& values, zs::value_type type) {
  zs::encode_source s{type, values.size(), values.data()};
  std::vector<std::uint64_t> const begin{0, 1};
  auto const params_at = zs::layout_params(c, std::vector<zs::value_type>{type});
  encoded_frame out;
  out.params.resize(std::max<std::uint64_t>(params_at.back(), 1));
  c.prepare_host({std::span(&s, 1), begin}, out.params.data(), params_at);
  if (c.params_bytes(type) != 0) s.params = out.params.data();
  auto const layout = zs::layout_frames(c, std::span(&s, 1));
  out.bytes.resize(layout.back());
  std::uint64_t written = 0;
  c.encode_host({std::span(&s, 1), out.bytes.data(), layout, &written});
  out.bytes.resize(written);
  return out;
}

template <typename T>
frame_status decode_one(const zs::codec& c, const std::vector<std::byte>& frame, std::vector<T>& out,
                        zs::value_type type) {
  zs::decode_target t{type, out.size(), out.data()};
  std::uint64_t const offsets[2] = {0, frame.size()};
  frame_status status = frame_status::not_decoded;
  c.decode_host({frame.data(), offsets, std::span(&t, 1), &status});
  return status;
}

TEST(ColumnParameters, FramesAreVersionTwoWithTheParametersFirstAndDecode) {
  auto const& fixture = zs::test::register_fixture_codec();
  std::vector<std::int32_t> values(5000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i % 100);
  auto const e = encode_one(fixture, values, zs::value_type::int32);
  auto const h = zs::load_header(e.bytes.data());
  EXPECT_EQ(h.version, zs::frame_version_params);
  EXPECT_EQ(h.codec, zs::test::fixture_codec_id);
  const std::byte* payload = e.bytes.data() + zs::frame_header_bytes;
  EXPECT_EQ(zs::detail::load_le(payload, 8), 16u);  // P
  EXPECT_EQ(zs::detail::load_le(payload + 8, 8), h.payload_bytes - zs::params_section_bytes(16));
  // The sample compresses, so the column's parameters name bitpack, and the body is an embedded
  // bitpack frame (payload checksum 0) that fills it.
  EXPECT_EQ(payload[16], static_cast<std::byte>(zs::codec_id::bitpack_for));
  auto const inner = zs::load_header(payload + zs::params_section_bytes(16));
  EXPECT_EQ(inner.payload_checksum, 0u);
  EXPECT_EQ(inner.payload_bytes + 64, h.payload_bytes - zs::params_section_bytes(16));
  EXPECT_LT(e.bytes.size(), values.size() * 4 / 3);

  std::vector<std::int32_t> back(values.size(), -1);
  ASSERT_EQ(decode_one(fixture, e.bytes, back, zs::value_type::int32), frame_status::ok);
  EXPECT_EQ(back, values);
}

TEST(ColumnParameters, RandomValuesChooseRawAndStringsWork) {
  auto const& fixture = zs::test::register_fixture_codec();
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> values(3000);
  for (auto& v : values) v = rng();
  auto const e = encode_one(fixture, values, zs::value_type::uint64);
  EXPECT_EQ(e.bytes[zs::frame_header_bytes + 16], static_cast<std::byte>(zs::codec_id::raw));
  std::vector<std::uint64_t> back(values.size());
  ASSERT_EQ(decode_one(fixture, e.bytes, back, zs::value_type::uint64), frame_status::ok);
  EXPECT_EQ(back, values);
}

TEST(ColumnParameters, APrefixOrVersionThatDisagreesWithTheCodecIsRefused) {
  auto const& fixture = zs::test::register_fixture_codec();
  std::vector<std::int64_t> values(700, 3);
  auto const good = encode_one(fixture, values, zs::value_type::int64);
  std::vector<std::int64_t> back(values.size());

  // The header must be re-sealed after each edit, so the prefix check (not the checksums) fires.
  auto reseal = [](std::vector<std::byte> frame) {
    zs::frame_header h = zs::load_header(frame.data());
    h.payload_checksum = zs::hash::checksum(frame.data() + 64, h.payload_bytes);
    zs::store_header(h, frame.data());
    return frame;
  };
  auto wrong_p = good.bytes;
  zs::detail::store_le(wrong_p.data() + 64, 32, 8);
  EXPECT_EQ(decode_one(fixture, reseal(wrong_p), back, zs::value_type::int64), frame_status::corrupt_payload);
  auto wrong_body = good.bytes;
  zs::detail::store_le(wrong_body.data() + 72, 1, 8);
  EXPECT_EQ(decode_one(fixture, reseal(wrong_body), back, zs::value_type::int64), frame_status::corrupt_payload);
  auto unknown_inner = good.bytes;
  unknown_inner[64 + 16] = std::byte{9};
  EXPECT_EQ(decode_one(fixture, reseal(unknown_inner), back, zs::value_type::int64), frame_status::corrupt_payload);
  auto version_one = good.bytes;
  zs::frame_header h = zs::load_header(version_one.data());
  h.version = zs::frame_version;
  zs::store_header(h, version_one.data());
  EXPECT_EQ(decode_one(fixture, version_one, back, zs::value_type::int64), frame_status::bad_version);

  // A version 2 frame is not a frame of a codec without column parameters, and the reverse.
  auto const plain = encode_one(raw(), values, zs::value_type::int64);
  auto as_two = plain.bytes;
  h = zs::load_header(as_two.data());
  h.version = zs::frame_version_params;
  zs::store_header(h, as_two.data());
  EXPECT_EQ(decode_one(raw(), as_two, back, zs::value_type::int64), frame_status::bad_version);
  EXPECT_EQ(decode_one(raw(), plain.bytes, back, zs::value_type::int64), frame_status::ok);
}

TEST(ColumnParameters, EncodingWithoutPreparedParametersIsAClearError) {
  auto const& fixture = zs::test::register_fixture_codec();
  std::vector<std::int32_t> values(10, 1);
  zs::encode_source s{zs::value_type::int32, values.size(), values.data()};
  auto const layout = zs::layout_frames(fixture, std::span(&s, 1));
  std::vector<std::byte> frame(layout.back());
  std::uint64_t written = 0;
  auto const e = zs::test::thrown_error([&] { fixture.encode_host({std::span(&s, 1), frame.data(), layout, &written}); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->message()).find("prepare"), std::string::npos) << e->message();
}

TEST(EmbeddedFrames, CarryNoPayloadChecksumAndAreNotCheckedForOne) {
  std::vector<std::uint32_t> values(1000);
  std::iota(values.begin(), values.end(), 5u);
  zs::encode_source s{zs::value_type::uint32, values.size(), values.data()};
  auto const layout = zs::layout_frames(bitpack(), std::span(&s, 1));
  std::vector<std::byte> frame(layout.back());
  std::uint64_t written = 0;
  bitpack().encode_host({std::span(&s, 1), frame.data(), layout, &written, true});
  frame.resize(written);
  EXPECT_EQ(zs::load_header(frame.data()).payload_checksum, 0u);
  std::vector<std::uint32_t> back(values.size());
  zs::decode_target t{zs::value_type::uint32, back.size(), back.data()};
  std::uint64_t const offsets[2] = {0, frame.size()};
  frame_status status = frame_status::not_decoded;
  bitpack().decode_host({frame.data(), offsets, std::span(&t, 1), &status, true});
  EXPECT_EQ(status, frame_status::ok);
  EXPECT_EQ(back, values);
  // As a frame of its own it fails its checksum.
  bitpack().decode_host({frame.data(), offsets, std::span(&t, 1), &status});
  EXPECT_EQ(status, frame_status::bad_payload_checksum);
}

TEST(Estimates, CountTheFramesOfABoundedShareOfEachColumn) {
  // Two columns: one that packs to a few bits a value, one of random values.
  std::vector<std::int64_t> small(200000), noise(1000);
  std::mt19937_64 rng(3);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<std::int64_t>(i % 7);
  for (auto& v : noise) v = static_cast<std::int64_t>(rng());
  std::vector<zs::encode_source> pieces{{zs::value_type::int64, small.size() / 2, small.data()},
                                        {zs::value_type::int64, small.size() / 2, small.data() + small.size() / 2},
                                        {zs::value_type::int64, noise.size(), noise.data()}};
  std::vector<std::uint64_t> const begin{0, 2, 3};
  auto const by_bitpack = bitpack().estimate_host({pieces, begin});
  auto const by_raw = raw().estimate_host({pieces, begin});
  ASSERT_EQ(by_bitpack.size(), 2u);
  // A bounded share: about estimate_sample_bytes of the first column, all of the small second.
  EXPECT_LE(by_bitpack[0].raw_bytes, zs::codec::estimate_sample_bytes);
  EXPECT_GE(by_bitpack[0].raw_bytes, zs::codec::estimate_sample_bytes / 2);
  EXPECT_EQ(by_bitpack[1].raw_bytes, noise.size() * 8);
  EXPECT_GT(by_bitpack[0].ratio(), 10.0);
  EXPECT_LT(by_bitpack[1].ratio(), 1.01);
  EXPECT_LT(by_raw[0].ratio(), 1.0);  // headers
  EXPECT_EQ(by_raw[0].raw_bytes, by_bitpack[0].raw_bytes);
}

TEST(Estimates, StringSamplesAreCutAtRowBoundaries) {
  std::vector<std::string> rows;
  for (int i = 0; i < 40000; ++i) rows.push_back("row " + std::to_string(i));
  auto const col = zs::column::from_strings(rows);
  auto const v = col.view();
  zs::encode_source s{zs::value_type::string, v.count, v.data, v.offsets,
                      static_cast<std::uint64_t>(v.offsets[v.count] - v.offsets[0])};
  std::vector<std::uint64_t> const begin{0, 1};
  auto const e = raw().estimate_host({std::span(&s, 1), begin});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_LE(e[0].raw_bytes, zs::codec::estimate_sample_bytes);
  EXPECT_GT(e[0].raw_bytes, 0u);
  EXPECT_GT(e[0].frame_bytes, e[0].raw_bytes);  // raw frames: headers
}

}  // namespace
