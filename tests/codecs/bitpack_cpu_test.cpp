// The bitpack codec's CPU reference, white box: the scheme it picks and its frames' sizes, ratios
// against shared/data/REFERENCE.md, and frames whose payload breaks the format's rules behind a
// valid checksum. Round trips, truncation, bit flips and the statuses every codec shares are in
// the codec conformance suite (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bitpack/bitpack_format.hpp"
#include "bitpack_test_inputs.hpp"
#include "codecs/bitpack/bitpack_codec.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

namespace bp = zs::bitpack;

const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }
// The codec of the extended schemes (pfor, pdfor, drfor beside the classic ones).
const zs::codec& extended() {
  static zs::codecs::bitpack_codec const codec(zs::codecs::bitpack_schemes::extended);
  return codec;
}

// The smallest payload of the classic schemes (raw, for, dfor, rfor) and of all of them.
template <typename Sizes>
std::uint64_t classic_min(const Sizes& sizes) {
  return std::min({sizes[0], sizes[1], sizes[2], sizes[3]});
}
template <typename Sizes>
std::uint64_t extended_min(const Sizes& sizes) {
  return *std::min_element(sizes.begin(), sizes.end());
}

struct encoded {
  std::vector<zs::encode_source> sources;
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> frame_bytes;
};

// Frame f of `parts` holds values [count f / parts, count (f + 1) / parts).
template <typename T>
encoded encode_parts(const std::vector<T>& v, std::size_t parts, const zs::codec& codec = bitpack()) {
  encoded e;
  for (std::size_t p = 0; p < parts; ++p) {
    std::size_t const begin = v.size() * p / parts, end = v.size() * (p + 1) / parts;
    e.sources.push_back({zs::value_type_of<T>::value, end - begin, v.data() + begin});
  }
  e.offsets = zs::layout_frames(codec, e.sources);
  e.frames.assign(e.offsets.back(), std::byte{0xEE});
  e.frame_bytes.assign(parts, 0);
  codec.encode_host({e.sources, e.frames.data(), e.offsets, e.frame_bytes.data()});
  return e;
}

zs::codec_id codec_of(const encoded& e, std::size_t f) {
  return static_cast<zs::codec_id>(e.frames[e.offsets[f] + 6]);
}

// Never larger than raw (the codec keeps raw when nothing beats it), and whole 32-bit words.
template <typename T>
void expect_frame_sizes(const std::vector<T>& v, std::size_t parts, const zs::codec& codec = bitpack()) {
  auto const e = encode_parts(v, parts, codec);
  for (std::size_t f = 0; f < parts; ++f) {
    EXPECT_LE(e.frame_bytes[f], zs::frame_header_bytes + e.sources[f].raw_bytes()) << "frame " << f;
    EXPECT_EQ(e.frame_bytes[f] % 4, 0U) << "frame " << f;
  }
}

template <typename T>
class BitpackCpuTyped : public ::testing::Test {};
using integer_types = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
TYPED_TEST_SUITE(BitpackCpuTyped, integer_types);

TYPED_TEST(BitpackCpuTyped, FramesAreNeverLargerThanRawAndWholeWords) {
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) {
    SCOPED_TRACE("n = " + std::to_string(v.size()));
    expect_frame_sizes(v, 1);
    expect_frame_sizes(v, 3);
    expect_frame_sizes(v, 1, extended());
    expect_frame_sizes(v, 3, extended());
  }
}

TYPED_TEST(BitpackCpuTyped, PicksTheSchemeThatFitsTheData) {
  using T = TypeParam;
  std::size_t const n = 10000;
  std::vector<T> sorted(n), runs(n), sorted_runs(n), small(n), outliers(n), jumps(n), random(n);
  std::mt19937_64 rng(7);
  for (std::size_t i = 0; i < n; ++i) {
    sorted[i] = static_cast<T>(1000 + 17 * i + rng() % 3);
    runs[i] = static_cast<T>(((i / 30) * 7919) % 1000 + 12345);  // runs of unsorted values
    sorted_runs[i] = static_cast<T>((i / 3) * 5 + 12345 + (i / 3) % 2);     // short runs, rising
    small[i] = static_cast<T>(rng() % 50);
    outliers[i] = static_cast<T>(rng() % 50 + (i % 500 == 499 ? 100000000 : 0));
    jumps[i] = static_cast<T>(1000 + 17 * i + (i / 500) * 1000000);
    random[i] = static_cast<T>(rng());
  }
  EXPECT_EQ(codec_of(encode_parts(sorted, 1), 0), zs::codec_id::bitpack_dfor);
  EXPECT_EQ(codec_of(encode_parts(runs, 1), 0), zs::codec_id::bitpack_rfor);
  EXPECT_EQ(codec_of(encode_parts(small, 1), 0), zs::codec_id::bitpack_for);
  EXPECT_EQ(codec_of(encode_parts(random, 1), 0), zs::codec_id::raw);
  // The registered codec keeps to the classic schemes; the extended one adds its three.
  for (auto const* v : {&sorted_runs, &outliers, &jumps}) {
    auto const id = codec_of(encode_parts(*v, 1), 0);
    EXPECT_TRUE(id == zs::codec_id::bitpack_for || id == zs::codec_id::bitpack_dfor || id == zs::codec_id::bitpack_rfor);
  }
  // Runs of length 1 with small steps: drfor is dfor with one width for 512 differences.
  EXPECT_EQ(codec_of(encode_parts(sorted, 1, extended()), 0), zs::codec_id::bitpack_drfor);
  EXPECT_EQ(codec_of(encode_parts(runs, 1, extended()), 0), zs::codec_id::bitpack_rfor);
  EXPECT_EQ(codec_of(encode_parts(small, 1, extended()), 0), zs::codec_id::bitpack_for);
  EXPECT_EQ(codec_of(encode_parts(random, 1, extended()), 0), zs::codec_id::raw);
  EXPECT_EQ(codec_of(encode_parts(sorted_runs, 1, extended()), 0), zs::codec_id::bitpack_drfor);
  EXPECT_EQ(codec_of(encode_parts(outliers, 1, extended()), 0), zs::codec_id::bitpack_pfor);
  EXPECT_EQ(codec_of(encode_parts(jumps, 1, extended()), 0), zs::codec_id::bitpack_pdfor);
  EXPECT_EQ(codec_of(encode_parts(std::vector<T>{}, 1), 0), zs::codec_id::raw);
  // A raw frame's payload is the values as they are, so the raw codec decodes it too.
  auto const e = encode_parts(random, 1);
  std::vector<T> out(n);
  std::vector<zs::decode_target> targets{{zs::value_type_of<T>::value, n, out.data()}};
  std::vector<zs::frame_status> status(1);
  zs::get_codec(zs::codec_id::raw).decode_host({e.frames.data(), e.offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::ok);
  EXPECT_EQ(out, random);
}

TYPED_TEST(BitpackCpuTyped, EncodedSizeIsTheSmallestScheme) {
  using T = TypeParam;
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) {
    zs::encode_source const s{zs::value_type_of<T>::value, v.size(), v.data()};
    auto const sizes = zs::codecs::bitpack_codec::scheme_payload_bytes(s);
    auto const e = encode_parts(v, 1);
    EXPECT_EQ(e.frame_bytes[0], zs::frame_header_bytes + classic_min(sizes));
    EXPECT_EQ(sizes[static_cast<int>(codec_of(e, 0))], e.frame_bytes[0] - zs::frame_header_bytes);
    auto const x = encode_parts(v, 1, extended());
    EXPECT_EQ(x.frame_bytes[0], zs::frame_header_bytes + extended_min(sizes));
    EXPECT_EQ(sizes[static_cast<int>(codec_of(x, 0))], x.frame_bytes[0] - zs::frame_header_bytes);
  }
}

TEST(BitpackCpu, MixedTypesInOneBatch) {
  std::vector<std::int32_t> a(3000);
  std::vector<std::uint64_t> b(1500);
  std::vector<std::int64_t> c(1, -5);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int32_t>(i % 100) - 50;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = (std::uint64_t{1} << 40) + i * i;
  std::vector<zs::encode_source> sources{{zs::value_type::int32, a.size(), a.data()},
                                         {zs::value_type::uint64, b.size(), b.data()},
                                         {zs::value_type::int64, 0, nullptr},
                                         {zs::value_type::int64, c.size(), c.data()}};
  auto const offsets = zs::layout_frames(bitpack(), sources);
  std::vector<std::byte> frames(offsets.back());
  std::vector<std::uint64_t> bytes(sources.size());
  bitpack().encode_host({sources, frames.data(), offsets, bytes.data()});
  std::vector<std::int32_t> a2(a.size());
  std::vector<std::uint64_t> b2(b.size());
  std::vector<std::int64_t> c2(c.size());
  std::vector<zs::decode_target> targets{{zs::value_type::int32, a.size(), a2.data()},
                                         {zs::value_type::uint64, b.size(), b2.data()},
                                         {zs::value_type::int64, 0, nullptr},
                                         {zs::value_type::int64, c.size(), c2.data()}};
  std::vector<zs::frame_status> status(sources.size());
  bitpack().decode_host({frames.data(), offsets, targets, status.data()});
  for (auto s : status) EXPECT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
  EXPECT_EQ(c2, c);
}

TEST(BitpackCpu, RefusesToEncodeFloatsAndStrings) {
  std::vector<float> f(4, 1.0f);
  std::vector<zs::encode_source> sources{{zs::value_type::float32, f.size(), f.data()}};
  std::vector<std::uint64_t> offsets{0, 256};
  std::vector<std::byte> frames(256);
  std::uint64_t bytes = 0;
  EXPECT_THROW(bitpack().encode_host({sources, frames.data(), offsets, &bytes}), zs::error);
}

// --- real data -------------------------------------------------------------------------------

// Ratios computed from the formats' definitions in shared/data/REFERENCE.md (32-bit words):
// for, dfor, rfor. Our for is that definition exactly. Our dfor leaves the tile's first
// position out of its block's reference and widths (the first value is stored anyway), so it is
// never worse. Our rfor block has one header word and the reference where the definition counts
// three header words per stream: 3 words fewer per 512 values.
struct reference_ratios {
  const char* file;
  double for_, dfor, rfor;
};

class BitpackCpuRealData : public ::testing::TestWithParam<reference_ratios> {};

template <typename T>
void check_real_column(const zs::column& c, const reference_ratios& r) {
  auto const* data = c.view().values<T>();
  std::vector<T> v(data, data + c.size());
  expect_frame_sizes(v, 7);
  expect_frame_sizes(v, 64);

  zs::encode_source const s{c.type(), c.size(), data};
  auto const sizes = zs::codecs::bitpack_codec::scheme_payload_bytes(s);
  double const raw = static_cast<double>(s.raw_bytes());
  double const rfor_blocks = static_cast<double>(bp::block_count(bp::scheme::rfor, c.size()));
  EXPECT_NEAR(raw / static_cast<double>(sizes[1]), r.for_, 0.0005 * r.for_) << "for";
  EXPECT_GE(raw / static_cast<double>(sizes[2]), r.dfor - 0.0005 * r.dfor) << "dfor";
  EXPECT_LE(raw / static_cast<double>(sizes[2]), r.dfor * 1.05) << "dfor";
  EXPECT_NEAR(raw / (static_cast<double>(sizes[3]) + 12 * rfor_blocks), r.rfor, 0.0005 * r.rfor) << "rfor";

  // One frame of the whole column takes the best scheme, header included.
  auto const e = encode_parts(v, 1);
  EXPECT_EQ(e.frame_bytes[0], zs::frame_header_bytes + classic_min(sizes));
  auto const x = encode_parts(v, 1, extended());
  EXPECT_EQ(x.frame_bytes[0], zs::frame_header_bytes + extended_min(sizes));
  expect_frame_sizes(v, 7, extended());
}

TEST_P(BitpackCpuRealData, MatchesTheReferenceRatios) {
  auto const r = GetParam();
  auto const c = zs::test::data_column(r.file);
  if (c.type() == zs::value_type::int32) {
    check_real_column<std::int32_t>(c, r);
  } else {
    ASSERT_EQ(c.type(), zs::value_type::uint32);
    check_real_column<std::uint32_t>(c, r);
  }
}

INSTANTIATE_TEST_SUITE_P(IntegerColumns, BitpackCpuRealData,
                         ::testing::Values(reference_ratios{"etopo5_elev_m.i32", 3.233, 3.672, 2.715},
                                           reference_ratios{"ncbi_tax_id.i32", 4.404, 13.579, 2.954},
                                           reference_ratios{"geoip4_lo.u32", 1.917, 2.523, 1.570}));

// --- corrupt frames --------------------------------------------------------------------------

// One frame of `v`, with helpers to edit its payload words and reseal its checksums, so that
// only the format's own rules can catch the edit.
struct one_frame {
  std::vector<zs::encode_source> sources;
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frame;

  const zs::codec* decoder = &bitpack();  // the codec that wrote the frame, which decodes it

  template <typename T>
  explicit one_frame(const std::vector<T>& v, const zs::codec& c = bitpack()) : decoder(&c) {
    auto e = encode_parts(v, 1, c);
    sources = e.sources;
    offsets = {0, e.frame_bytes[0]};
    frame.assign(e.frames.begin(), e.frames.begin() + static_cast<std::ptrdiff_t>(e.frame_bytes[0]));
  }
  zs::frame_header header() const { return zs::load_header(frame.data()); }
  zs::codec_id codec() const { return header().codec; }
  std::uint64_t blocks() const {
    auto const h = header();
    return bp::block_count(static_cast<bp::scheme>(h.codec), h.value_count);
  }
  std::uint32_t word(std::uint64_t i) const {
    return static_cast<std::uint32_t>(zs::detail::load_le(frame.data() + zs::frame_header_bytes + 4 * i, 4));
  }
  void set_word(std::uint64_t i, std::uint32_t w) {
    zs::detail::store_le(frame.data() + zs::frame_header_bytes + 4 * i, w, 4);
  }
  std::uint32_t start(std::uint64_t b) const { return word(b); }
  std::uint32_t data(std::uint64_t i) const { return word(blocks() + i); }
  void set_data(std::uint64_t i, std::uint32_t w) { set_word(blocks() + i, w); }
  // Recomputes the payload checksum (and so the header checksum) after an edit.
  void reseal(zs::frame_header h) {
    frame.resize(zs::frame_header_bytes + h.payload_bytes);
    offsets = {0, frame.size()};
    h.payload_checksum = zs::hash::checksum(frame.data() + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frame.data());
  }
  void reseal() { reseal(header()); }

  // Decodes into a sentinel-filled target; returns the status and whether the target is intact.
  template <typename T>
  std::pair<zs::frame_status, bool> decode_as(zs::value_type type = zs::value_type_of<T>::value) const {
    std::vector<T> out(sources[0].count, T{0x33});
    std::vector<zs::decode_target> targets{{type, sources[0].count, out.data()}};
    std::vector<zs::frame_status> status(1);
    decoder->decode_host({frame.data(), offsets, targets, status.data()});
    bool const intact = std::all_of(out.begin(), out.end(), [](T x) { return x == T{0x33}; });
    return {status[0], intact};
  }
};

template <typename T>
std::vector<T> small_values(std::size_t n) {  // for: miniblocks of 5 and of 9 bits
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 7919) % (i % 64 < 32 ? 30 : 400));
  return v;
}
template <typename T>
std::vector<T> outlier_values(std::size_t n) {  // pfor: one outlier per 128 values
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 7919) % 30 + (i % 128 == 100 ? 1000000 : 0));
  return v;
}
template <typename T>
std::vector<T> jump_values(std::size_t n) {  // pdfor: steady steps and a jump per 128 values
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(1000 + 3 * i + (i * 31) % 3 + (i / 128 + (i % 128 > 70)) * 1000000);
  return v;
}
template <typename T>
std::vector<T> sorted_run_values(std::size_t n) {  // drfor: short runs of rising values
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(5000 + (i / 3) * 2 + (i / 3) % 2 + (i % 7 == 0 ? 1 : 0));
  return v;
}
template <typename T>
std::vector<T> sorted_values(std::size_t n) {  // dfor
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(100000 + 3 * i + (i * 31) % 3);
  return v;
}
template <typename T>
std::vector<T> run_values(std::size_t n) {  // rfor: runs of unsorted values
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(((i / 100) * 7919) % 113 * 123457);
  return v;
}

template <typename T>
void expect_refused(const one_frame& f, const char* what) {
  auto const [status, intact] = f.template decode_as<T>();
  EXPECT_EQ(status, zs::frame_status::corrupt_payload) << what << ": " << zs::to_string(status);
  EXPECT_TRUE(intact) << what << ": the target was written";
}

TYPED_TEST(BitpackCpuTyped, CorruptForFramesAreRefusedWithoutTouchingTheTarget) {
  using T = TypeParam;
  std::uint32_t const width = 8 * sizeof(T), rw = width / 32;
  one_frame const good(small_values<T>(1000));
  ASSERT_EQ(good.codec(), zs::codec_id::bitpack_for);
  ASSERT_EQ(good.template decode_as<T>().first, zs::frame_status::ok);
  {
    one_frame f = good;  // a miniblock wider than the value type
    std::uint32_t const w = f.data(f.start(2) + rw);
    f.set_data(f.start(2) + rw, (w & 0xffffff00U) | (width + 1));
    f.reseal();
    expect_refused<T>(f, "width above the type's");
  }
  {
    one_frame f = good;  // a block start past the data section
    f.set_word(3, 0xfffffff0U);
    f.reseal();
    expect_refused<T>(f, "block start out of range");
  }
  {
    one_frame f = good;  // the first block must start at 0
    f.set_word(0, 1);
    f.reseal();
    expect_refused<T>(f, "first block start");
  }
  {
    one_frame f = good;  // widths that no longer match where the next block starts
    std::uint32_t const w = f.data(f.start(1) + rw);
    f.set_data(f.start(1) + rw, w + 1);
    f.reseal();
    expect_refused<T>(f, "block size inconsistent with the next start");
  }
  {
    one_frame f = good;  // data words in the parameters disagree with the payload size
    auto h = f.header();
    zs::detail::store_le(h.params.data() + 8, zs::detail::load_le(h.params.data() + 8, 8) + 1, 8);
    f.reseal(h);
    expect_refused<T>(f, "data words parameter");
  }
  {
    one_frame f = good;  // a payload cut short by one word, sizes resealed
    auto h = f.header();
    h.payload_bytes -= 4;
    zs::detail::store_le(h.params.data() + 8, zs::detail::load_le(h.params.data() + 8, 8) - 1, 8);
    f.reseal(h);
    expect_refused<T>(f, "last block cut");
  }
  {
    one_frame f = good;  // payload size not a whole number of words
    auto h = f.header();
    h.payload_bytes -= 1;
    f.reseal(h);
    expect_refused<T>(f, "payload of a partial word");
  }
  {
    one_frame f = good;  // parameters of another block size
    auto h = f.header();
    h.params[0] = std::byte{64};
    f.reseal(h);
    expect_refused<T>(f, "block size parameter");
  }
}

TYPED_TEST(BitpackCpuTyped, CorruptDforAndRforFramesAreRefused) {
  using T = TypeParam;
  std::uint32_t const width = 8 * sizeof(T), rw = width / 32;
  {
    one_frame const good(sorted_values<T>(2000));
    ASSERT_EQ(good.codec(), zs::codec_id::bitpack_dfor);
    ASSERT_EQ(good.template decode_as<T>().first, zs::frame_status::ok);
    one_frame f = good;
    f.set_word(0, 0);  // the first block starts after the first value
    f.reseal();
    expect_refused<T>(f, "dfor first start");
    f = good;
    f.set_word(4, f.start(4) - rw);  // block 4 starts a tile: its first value sits before it
    f.reseal();
    expect_refused<T>(f, "dfor tile start");
    f = good;
    auto h = f.header();
    h.params[2] = std::byte{8};  // another tile size
    f.reseal(h);
    expect_refused<T>(f, "dfor tile blocks parameter");
  }
  one_frame const good(run_values<T>(1500));
  ASSERT_EQ(good.codec(), zs::codec_id::bitpack_rfor);
  ASSERT_EQ(good.template decode_as<T>().first, zs::frame_status::ok);
  std::uint32_t const header = good.data(good.start(1));
  auto const h = bp::unpack_rfor_header(header);
  auto edit_header = [&](std::uint32_t w, const char* what) {
    one_frame f = good;
    f.set_data(f.start(1), w);
    f.reseal();
    expect_refused<T>(f, what);
  };
  edit_header(header | 0x80000000U, "rfor reserved bit");
  edit_header((header & ~(15U << 27)) | (10U << 27), "rfor length width 10");
  edit_header((header & ~(127U << 20)) | ((width + 1) << 20), "rfor value width above the type's");
  // More runs than values: header says 512 runs where the block is the last one of 476 values.
  {
    one_frame f = good;
    std::uint32_t const last = f.data(f.start(2));
    f.set_data(f.start(2), (last & ~1023U) | 511U);
    f.reseal();
    expect_refused<T>(f, "rfor runs above the block's values");
  }
  // Run lengths that no longer add up to the block: one more for every run.
  edit_header((header & ~(1023U << 10)) | ((h.min_length) << 10), "rfor lengths sum");
}

TEST(BitpackCpu, FramesOfOtherTypesOrRawSizesAreRefused) {
  // A raw frame whose payload is one word short of count x width.
  std::vector<std::uint32_t> random(100);
  std::mt19937 rng(3);
  for (auto& x : random) x = static_cast<std::uint32_t>(rng());
  one_frame f(random);
  ASSERT_EQ(f.codec(), zs::codec_id::raw);
  auto h = f.header();
  h.payload_bytes -= 4;
  f.reseal(h);
  expect_refused<std::uint32_t>(f, "raw payload of the wrong size");

  // A raw frame with non-zero codec parameters (the raw format requires zeros).
  f = one_frame(random);
  h = f.header();
  h.params[15] = std::byte{1};
  f.reseal(h);
  expect_refused<std::uint32_t>(f, "raw frame with non-zero parameters");

  // A raw frame of floats (valid for the raw codec) is not one this codec decodes.
  std::vector<float> floats(10, 2.5f);
  std::vector<zs::encode_source> sources{{zs::value_type::float32, floats.size(), floats.data()}};
  auto const& raw = zs::get_codec(zs::codec_id::raw);
  auto const offsets = zs::layout_frames(raw, sources);
  std::vector<std::byte> frames(offsets.back());
  std::uint64_t bytes = 0;
  raw.encode_host({sources, frames.data(), offsets, &bytes});
  std::vector<float> out(floats.size(), 0.0f);
  std::vector<zs::decode_target> targets{{zs::value_type::float32, floats.size(), out.data()}};
  std::vector<zs::frame_status> status(1);
  bitpack().decode_host({frames.data(), offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::unsupported_type);
  EXPECT_EQ(out, std::vector<float>(floats.size(), 0.0f));
}

// Narrow integers are coded as their 32-bit widening: a narrow frame that does not stay raw has
// exactly the payload (and scheme) of the same values as int32 (signed) or uint32 (unsigned).
template <typename Narrow, typename Wide>
void expect_payload_of_widening(const std::vector<Narrow>& v, const std::string& what) {
  std::vector<Wide> const wide(v.begin(), v.end());  // sign- or zero-extended
  auto const narrow_frame = encode_parts(v, 1);
  auto const wide_frame = encode_parts(wide, 1);
  zs::frame_header const n = zs::load_header(narrow_frame.frames.data());
  zs::frame_header const w = zs::load_header(wide_frame.frames.data());
  ASSERT_NE(n.codec, zs::codec_id::raw) << what << ": compresses";
  EXPECT_EQ(n.type, zs::value_type_of<Narrow>::value) << what;
  EXPECT_EQ(n.raw_bytes, v.size() * sizeof(Narrow)) << what;
  EXPECT_EQ(n.codec, w.codec) << what;
  ASSERT_EQ(n.payload_bytes, w.payload_bytes) << what;
  EXPECT_EQ(std::memcmp(narrow_frame.frames.data() + zs::frame_header_bytes,
                        wide_frame.frames.data() + zs::frame_header_bytes, n.payload_bytes), 0)
      << what << ": the payloads differ";
  std::vector<Narrow> out(v.size());
  std::vector<zs::decode_target> targets{{zs::value_type_of<Narrow>::value, v.size(), out.data()}};
  std::vector<zs::frame_status> status(1);
  bitpack().decode_host({narrow_frame.frames.data(), narrow_frame.offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::ok) << what << ": " << zs::to_string(status[0]);
  EXPECT_EQ(out, v) << what;
}

TEST(BitpackCpu, NarrowTypesAreCodedAsTheir32BitWidening) {
  std::vector<std::int8_t> small(1500), runs(2000);
  std::vector<std::int16_t> steps(1300);
  std::vector<std::uint8_t> bytes(700);
  std::vector<std::uint16_t> high(900);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<std::int8_t>(static_cast<int>(i % 7) - 3);
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i] = (i / 100) % 2 == 0 ? std::int8_t{-128} : std::int8_t{127};
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = static_cast<std::int16_t>(-30000 + 40 * static_cast<int>(i));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(250 + i % 6);
  for (std::size_t i = 0; i < high.size(); ++i) high[i] = static_cast<std::uint16_t>(65000 + i % 500);
  expect_payload_of_widening<std::int8_t, std::int32_t>(small, "int8 small values (for)");
  expect_payload_of_widening<std::int8_t, std::int32_t>(runs, "int8 runs of the extremes (rfor)");
  expect_payload_of_widening<std::int16_t, std::int32_t>(steps, "int16 steady steps (dfor)");
  expect_payload_of_widening<std::uint8_t, std::uint32_t>(bytes, "uint8 values near the maximum");
  expect_payload_of_widening<std::uint16_t, std::uint32_t>(high, "uint16 values near the maximum");
}

// A narrow frame left raw carries its narrow values as they are: raw's payload, count x width
// bytes (not a multiple of 4), never the widening.
TEST(BitpackCpu, NarrowFramesLeftRawCarryTheirBytes) {
  std::vector<std::uint8_t> random(1001);
  std::mt19937 rng(8);
  for (auto& x : random) x = static_cast<std::uint8_t>(rng());
  auto const e = encode_parts(random, 1);
  zs::frame_header const h = zs::load_header(e.frames.data());
  ASSERT_EQ(h.codec, zs::codec_id::raw);
  ASSERT_EQ(h.payload_bytes, random.size());
  EXPECT_EQ(std::memcmp(e.frames.data() + zs::frame_header_bytes, random.data(), random.size()), 0);
}

// A frame that claims a narrow type but whose payload decodes to values outside it (an int8
// frame holding 300) is corrupt: refused, its target untouched, never silently truncated.
template <typename Narrow, typename Wide>
void expect_out_of_range_refused(Wide bad, const std::string& what) {
  std::vector<Wide> wide(1200);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<Wide>(i % 50);
  wide[777] = bad;
  auto e = encode_parts(wide, 1);
  zs::frame_header h = zs::load_header(e.frames.data());
  ASSERT_NE(h.codec, zs::codec_id::raw) << what;
  h.type = zs::value_type_of<Narrow>::value;  // the same payload, now claiming the narrow type
  h.raw_bytes = wide.size() * sizeof(Narrow);
  zs::store_header(h, e.frames.data());
  std::vector<Narrow> out(wide.size(), Narrow{9});
  std::vector<zs::decode_target> targets{{h.type, wide.size(), out.data()}};
  std::vector<zs::frame_status> status(1);
  bitpack().decode_host({e.frames.data(), e.offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::corrupt_payload) << what << ": " << zs::to_string(status[0]);
  EXPECT_EQ(out, std::vector<Narrow>(wide.size(), Narrow{9})) << what << ": refused, but wrote its target";
  // The same frame with the value in range decodes.
  wide[777] = static_cast<Wide>(std::numeric_limits<Narrow>::min());
  auto good = encode_parts(wide, 1);
  h = zs::load_header(good.frames.data());
  h.type = zs::value_type_of<Narrow>::value;
  h.raw_bytes = wide.size() * sizeof(Narrow);
  zs::store_header(h, good.frames.data());
  bitpack().decode_host({good.frames.data(), good.offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::ok) << what << " in range: " << zs::to_string(status[0]);
  EXPECT_EQ(out[777], std::numeric_limits<Narrow>::min()) << what;
}

TEST(BitpackCpu, NarrowFramesWhoseValuesDoNotFitAreCorrupt) {
  expect_out_of_range_refused<std::int8_t, std::int32_t>(300, "int8 holding 300");
  expect_out_of_range_refused<std::int8_t, std::int32_t>(-129, "int8 holding -129");
  expect_out_of_range_refused<std::uint8_t, std::uint32_t>(256, "uint8 holding 256");
  expect_out_of_range_refused<std::int16_t, std::int32_t>(40000, "int16 holding 40000");
  expect_out_of_range_refused<std::uint16_t, std::uint32_t>(70000, "uint16 holding 70000");
  // A signed type's widening is sign-extended: 0xff as a 32-bit word is 255, not -1.
  expect_out_of_range_refused<std::int8_t, std::uint32_t>(0xffU, "int8 holding 0x000000ff");
}

// Random edits anywhere in the payload, resealed: the decoder either decodes (an edit of
// packed bits is still a valid frame) or refuses with corrupt_payload, and never reads or writes
// out of bounds (run under AddressSanitizer to check that).
TYPED_TEST(BitpackCpuTyped, RandomPayloadEditsNeverEscapeTheFrame) {
  using T = TypeParam;
  std::mt19937_64 rng(99);
  std::vector<std::vector<T>> inputs{small_values<T>(777),  sorted_values<T>(1300), run_values<T>(1100),
                                     outlier_values<T>(900), jump_values<T>(1000),  sorted_run_values<T>(1700)};
  for (auto const& v : inputs) {
    one_frame const good(v, extended());
    std::uint64_t const words = good.header().payload_bytes / 4;
    int refused = 0;
    for (int trial = 0; trial < 400; ++trial) {
      one_frame f = good;
      int const edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits; ++k) {
        std::uint64_t const i = rng() % words;
        f.set_word(i, f.word(i) ^ (1U << (rng() % 32)));
      }
      f.reseal();
      std::vector<T> out(v.size());
      std::vector<zs::decode_target> targets{{zs::value_type_of<T>::value, v.size(), out.data()}};
      std::vector<zs::frame_status> status(1);
      extended().decode_host({f.frame.data(), f.offsets, targets, status.data()});
      ASSERT_TRUE(status[0] == zs::frame_status::ok || status[0] == zs::frame_status::corrupt_payload)
          << zs::to_string(status[0]);
      refused += status[0] == zs::frame_status::corrupt_payload;
    }
    // Edits of block starts and widths are caught; edits of packed bits are not detectable.
    EXPECT_GT(refused, 0);
  }
}

// --- pfor, pdfor, drfor ----------------------------------------------------------------------

// Encodes `v` as one frame and decodes it back; the frame is the smallest scheme, header included.
template <typename T>
zs::codec_id expect_round_trip(const std::vector<T>& v, const std::string& what) {
  auto const e = encode_parts(v, 1, extended());
  zs::encode_source const s{zs::value_type_of<T>::value, v.size(), v.data()};
  auto const sizes = zs::codecs::bitpack_codec::scheme_payload_bytes(s);
  EXPECT_EQ(e.frame_bytes[0], zs::frame_header_bytes + extended_min(sizes)) << what;
  std::vector<T> out(v.size(), T{0x33});
  std::vector<zs::decode_target> targets{{zs::value_type_of<T>::value, v.size(), out.data()}};
  std::vector<zs::frame_status> status(1);
  extended().decode_host({e.frames.data(), e.offsets, targets, status.data()});
  EXPECT_EQ(status[0], zs::frame_status::ok) << what << ": " << zs::to_string(status[0]);
  EXPECT_EQ(out, v) << what << " (" << zs::to_string(codec_of(e, 0)) << ")";
  return codec_of(e, 0);
}

template <typename T>
class BitpackCpuAllTypes : public ::testing::Test {};
using all_integer_types = ::testing::Types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                           std::uint16_t, std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(BitpackCpuAllTypes, all_integer_types);

// Inputs the new schemes must get right: all equal, one outlier of the type's full width at
// every position of a miniblock, every position of a miniblock an outlier, runs of length 1 and
// of the whole frame, falling values (negative differences), sorted runs, no values.
template <typename T>
std::vector<std::pair<std::string, std::vector<T>>> scheme_edge_inputs() {
  using L = std::numeric_limits<T>;
  std::vector<std::pair<std::string, std::vector<T>>> in;
  in.emplace_back("no values", std::vector<T>{});
  in.emplace_back("all equal", std::vector<T>(3000, T{5}));
  in.emplace_back("all the maximum", std::vector<T>(700, L::max()));
  for (std::size_t k = 0; k < 32; ++k) {
    std::vector<T> one(300, static_cast<T>(L::min() + T{3}));
    one[64 + k] = L::max();  // an offset of the full width
    in.emplace_back("one outlier at " + std::to_string(64 + k), one);
    std::vector<T> low(300, static_cast<T>(L::max() - T{3}));
    low[32 + k] = L::min();  // one value far below the others: every other offset is wide
    in.emplace_back("one low outlier at " + std::to_string(32 + k), low);
  }
  std::vector<T> every(500, T{1});
  for (std::size_t k = 128; k < 160; ++k) every[k] = L::max();
  in.emplace_back("a miniblock of outliers", every);
  std::vector<T> many(1000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<T>(i % 9 == 0 ? L::max() - T(i % 5) : T(i % 4));
  in.emplace_back("an outlier in nine", many);
  std::vector<T> ones(1500), falling(1500), falling_runs(1500), sorted_runs(1600), mixed(1100);
  for (std::size_t i = 0; i < ones.size(); ++i) {
    ones[i] = static_cast<T>(L::min() + static_cast<T>(i % 100));  // runs of length 1
    falling[i] = static_cast<T>(L::max() - static_cast<T>(i % 120));
    falling_runs[i] = static_cast<T>(L::max() - static_cast<T>((i / 4) % 60));
  }
  for (std::size_t i = 0; i < sorted_runs.size(); ++i) sorted_runs[i] = static_cast<T>(L::min() + static_cast<T>((i / 5) % 100));
  for (std::size_t i = 0; i < mixed.size(); ++i) mixed[i] = static_cast<T>(((i / 3) % 2 == 0 ? 10 : 40) + (i / 6) % 7);
  in.emplace_back("runs of length 1", ones);
  in.emplace_back("falling values", falling);
  in.emplace_back("falling runs", falling_runs);
  in.emplace_back("rising runs", sorted_runs);
  in.emplace_back("runs up and down", mixed);
  std::vector<T> wrap(1300);
  using U = std::make_unsigned_t<T>;  // the sum wraps past the maximum: unsigned arithmetic
  for (std::size_t i = 0; i < wrap.size(); ++i) {
    wrap[i] = static_cast<T>(static_cast<U>(static_cast<U>(L::max()) - U{2} + static_cast<U>(i / 7)));
  }
  in.emplace_back("rising runs across the wrap", wrap);
  return in;
}

TYPED_TEST(BitpackCpuAllTypes, NewSchemesRoundTripOnEdgeInputs) {
  for (auto const& [what, v] : scheme_edge_inputs<TypeParam>()) {
    expect_round_trip(v, what);
    // Cut into frames that start anywhere in a block.
    auto const e = encode_parts(v, 3, extended());
    for (std::size_t f = 0; f < 3; ++f) {
      std::vector<TypeParam> out(e.sources[f].count);
      std::vector<zs::decode_target> targets{{zs::value_type_of<TypeParam>::value, out.size(), out.data()}};
      std::vector<zs::frame_status> status(1);
      std::vector<std::uint64_t> const offsets{0, e.offsets[f + 1] - e.offsets[f]};
      extended().decode_host({e.frames.data() + e.offsets[f], offsets, targets, status.data()});
      ASSERT_EQ(status[0], zs::frame_status::ok) << what << " part " << f;
      auto const* in = static_cast<const TypeParam*>(e.sources[f].values);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), in)) << what << " part " << f;
    }
  }
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) expect_round_trip(v, "adversarial, n = " + std::to_string(v.size()));
}

// Exact sizes, worked out by hand from docs/FORMAT.md.
TYPED_TEST(BitpackCpuTyped, PatchedAndRunDifferenceSizesAreExact) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  std::uint64_t const rw = sizeof(T) / 4;
  auto const sizes_of = [](const std::vector<T>& v) {
    return zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type_of<T>::value, v.size(), v.data()});
  };
  for (std::size_t k = 0; k < 128; ++k) {
    // 128 equal values but one of the full width above them: its miniblock packs at 0 bits,
    // with a bitmap word and its high bits (w bits: rw words). Start, reference, two widths
    // and the shifts.
    std::vector<T> v(128, L::min());
    v[k] = L::max();
    auto const sizes = sizes_of(v);
    EXPECT_EQ(sizes[8], 4 * (1 + rw + 3 + 1 + rw)) << "pfor, outlier at " << k;
    EXPECT_EQ(sizes[1], 4 * (1 + rw + 1 + 8 * sizeof(T))) << "for, outlier at " << k;
    expect_round_trip(v, "one outlier at " + std::to_string(k));
  }
  {
    // Offsets that are multiples of 256 (12 bits): shifted by 8, 4 bits a field.
    std::vector<T> v(128);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(1000 + 256 * (i % 16));
    EXPECT_EQ(sizes_of(v)[8], 4 * (1 + rw + 3 + 4 * 4));
    EXPECT_EQ(sizes_of(v)[1], 4 * (1 + rw + 1 + 4 * 12));
    // pdfor: the differences 256 and -3840 are -3840 + 0 or 4096 (1 bit shifted by 12): a
    // start, the first value, the block's reference and head words, 4 miniblocks of 1 bit.
    EXPECT_EQ(sizes_of(v)[9], 4 * (1 + rw + rw + 3 + 4));
    EXPECT_EQ(expect_round_trip(v, "aligned offsets"), zs::codec_id::bitpack_pdfor);
  }
  {
    // A miniblock of 30 values of 3 bits and two of 20: 3 words of low bits, a bitmap, and two
    // high parts of 17 bits (2 words), against 20 words unpatched.
    std::vector<T> v(32);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(5 + i % 8);
    v[3] = T{1000000};
    v[30] = T{999999};
    EXPECT_EQ(sizes_of(v)[8], 4 * (1 + rw + 3 + 3 + 1 + 2));
    expect_round_trip(v, "two outliers of 20 bits");
  }
  {
    // Runs of 4 of values falling by 7: differences -7, so the difference reference is -7 and
    // every field takes 0 bits, and lengths all equal take 0 bits: 1 + 2 rw words a block.
    std::vector<T> v(2048);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(T{100} * 100 - static_cast<T>(7 * (i / 4)));
    auto const sizes = sizes_of(v);
    EXPECT_EQ(sizes[10], 4 * 4 * (1 + 1 + 2 * rw)) << "drfor";
    EXPECT_EQ(expect_round_trip(v, "falling runs"), zs::codec_id::bitpack_drfor);
  }
  {
    // Runs of 2, 3, 2, 3, ... rising by 1, the last run cut short by the block: rfor stores 512 /
    // 2.5 = 205 lengths of 1 bit (7 words) and values of 8 bits (52 words); drfor 204 lengths
    // (7 words) and 204 differences of 0 bits. A block of runs of 3 but the last, of 2 (171 runs):
    // drfor's 170 lengths all equal take 0 bits, while rfor's 171 take 1 bit (6 words).
    std::vector<T> v(512);
    for (std::size_t i = 0, run = 0; i < v.size(); ++run) {
      for (std::size_t k = 0; k < 2 + run % 2 && i < v.size(); ++k) v[i++] = static_cast<T>(run);
    }
    auto sizes = sizes_of(v);
    EXPECT_EQ(sizes[3], 4 * (1 + 1 + rw + 52 + 7)) << "rfor";
    EXPECT_EQ(sizes[10], 4 * (1 + 1 + 2 * rw + 0 + 7)) << "drfor";
    expect_round_trip(v, "runs of 2 and 3");
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i / 3);  // the last run: 512 - 510
    sizes = sizes_of(v);
    EXPECT_EQ(sizes[3], 4 * (1 + 1 + rw + 43 + 6)) << "rfor";
    EXPECT_EQ(sizes[10], 4 * (1 + 1 + 2 * rw)) << "drfor: the last run's length is not stored";
    EXPECT_EQ(expect_round_trip(v, "runs of 3, the last of 2"), zs::codec_id::bitpack_drfor);
  }
  {
    // A block of one run, then a block of two: drfor takes 1 + rw words for the first, and for
    // the second 1 + rw where its step fits the header's 11 bits (5), else 1 + 2 rw (the step
    // as the difference reference, its field and the one stored length of 0 bits); rfor takes
    // 1 + rw and 1 + rw + 2 (a word of values and one of lengths).
    for (T const step : {T{5}, T{2047}, T{2048}}) {
      std::vector<T> v(1024, T{9});
      for (std::size_t i = 700; i < v.size(); ++i) v[i] = static_cast<T>(9 + step);
      auto const sizes = sizes_of(v);
      bool const in_header = step < 2048;
      EXPECT_EQ(sizes[3], 4 * (2 + (1 + rw) + (1 + rw + 2))) << "rfor, step " << +step;
      EXPECT_EQ(sizes[10], 4 * (2 + (1 + rw) + (in_header ? 1 + rw : 1 + 2 * rw))) << "drfor, step " << +step;
      // Where the step takes a word, 64-bit values tie, and the tie goes to rfor.
      EXPECT_EQ(expect_round_trip(v, "one run, then two, step " + std::to_string(+step)),
                in_header || rw == 1 ? zs::codec_id::bitpack_drfor : zs::codec_id::bitpack_rfor);
    }
  }
  {
    // All equal: one run a block, so drfor stores no difference reference: rfor and drfor both
    // take 1 + rw words a block, and the tie goes to rfor, the lower id.
    std::vector<T> v(5000, T{42});
    auto const sizes = sizes_of(v);
    EXPECT_EQ(sizes[3], 4 * 10 * (1 + 1 + rw));
    EXPECT_EQ(sizes[10], 4 * 10 * (1 + 1 + rw));
    EXPECT_EQ(expect_round_trip(v, "all equal"), zs::codec_id::bitpack_rfor);
  }
  {
    // Runs of length 1 rising by 3 (an arithmetic sequence): 511 differences and 512 lengths of
    // 0 bits.
    std::vector<T> v(512);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(3 * i);
    EXPECT_EQ(sizes_of(v)[10], 4 * (1 + 1 + 2 * rw));
    EXPECT_EQ(sizes_of(v)[2], 4 * (4 + rw + 4 * (rw + 1)));  // dfor: starts, first value, 4 blocks of 0 bits
  }
}

// A run block's lengths must cover its values exactly: rfor's all of them; drfor's stored ones
// (all runs but the last) must leave the last run at least one position.
TEST(BitpackCpu, RunLengthsMustCoverTheBlock) {
  for (auto const kind : {bp::scheme::rfor, bp::scheme::drfor}) {
    bool const delta = kind == bp::scheme::drfor;
    bp::frame_layout const f{kind, 32, 512, 1, 0};
    // Two runs of 8-bit lengths above a shortest of 1: header, reference(s), the values (rfor: 2
    // fields of 0 bits; drfor: one difference of 0 bits), then the lengths stream.
    auto const block = [&](std::uint32_t first, std::uint32_t second) {
      std::vector<std::uint32_t> words{bp::pack_rfor_header({2, 1, 0, 9}), 7};
      if (delta) words.push_back(0);
      words.push_back((first - 1) | (second - 1) << 9);
      words.push_back(0);
      return words;
    };
    for (std::uint32_t first : {1U, 255U, 511U, 512U}) {
      for (std::uint32_t second : {1U, 257U, 511U}) {
        auto const words = block(first, second);
        bool const covers = delta ? first < 512 : first + second == 512;
        EXPECT_EQ(bp::rfor_lengths_are_valid(f, words.data(), 0, 0), covers)
            << (delta ? "drfor" : "rfor") << ", lengths " << first << " and " << second;
      }
    }
  }
}

// Bit 31 of a run header (the step in the header) is valid in a drfor block of two runs only.
TEST(BitpackCpu, OnlyTwoRunDrforBlocksHoldTheirStepInTheHeader) {
  bp::rfor_header const back = bp::unpack_drfor_header(bp::pack_rfor_header({2, 300, 0, 0, true, 2047}));
  EXPECT_TRUE(back.step_in_header);
  EXPECT_EQ(back.step, 2047u);
  EXPECT_EQ(back.min_length, 300u);
  for (auto const kind : {bp::scheme::rfor, bp::scheme::drfor}) {
    for (std::uint32_t runs : {1U, 2U, 3U}) {
      std::uint32_t const word = bp::pack_rfor_header({runs, 1, 0, 0, true, 5});
      bp::frame_layout const f{kind, 32, 512, 1, 2};  // one block: the header and the first value
      EXPECT_EQ(bp::block_is_valid(f, 0, 0, word, 2), kind == bp::scheme::drfor && runs == 2)
          << (kind == bp::scheme::drfor ? "drfor" : "rfor") << ", " << runs << " runs";
    }
  }
}

TEST(BitpackCpu, LowWidthsTakeTheFewestWordsOfAnyWidth) {
  // best_low_width looks only at 0, the full width and the widths some field has; the search
  // over all widths must find no fewer words. min_patched_words_below must hold below every
  // width (the GPU search stops on it).
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20000; ++trial) {
    std::uint32_t const full = 1 + rng() % 64;
    std::uint32_t widths[32];
    std::uint32_t const kinds = 1 + rng() % 4;  // few distinct widths, as miniblocks have
    std::uint32_t palette[4];
    for (auto& p : palette) p = rng() % (full + 1);
    for (auto& w : widths) w = palette[rng() % kinds];
    widths[rng() % 32] = full;
    std::uint32_t at_least[65] = {};
    for (std::uint32_t w : widths) {
      for (std::uint32_t b = 0; b < w; ++b) ++at_least[b];
    }
    std::uint32_t fewest = full;
    for (std::uint32_t b = 0; b < full; ++b) fewest = std::min(fewest, bp::patched_miniblock_words(b, full, at_least[b]));
    std::uint32_t const low = bp::best_low_width(at_least, full);
    ASSERT_LE(low, full);
    ASSERT_EQ(bp::patched_miniblock_words(low, full, at_least[low]), fewest) << "trial " << trial;
    for (std::uint32_t b = 1; b < full; ++b) {
      for (std::uint32_t lower = 0; lower < b; ++lower) {
        ASSERT_GE(bp::patched_miniblock_words(lower, full, at_least[lower]), bp::min_patched_words_below(full, at_least[b]))
            << "trial " << trial << " b " << b << " lower " << lower;
      }
    }
  }
}

TEST(BitpackCpu, NewSchemesNeverLoseToTheOldOnes) {
  // The schemes are candidates beside the old ones, so a frame is never larger than before.
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::int64_t> v(1 + rng() % 3000);
    std::int64_t x = static_cast<std::int64_t>(rng() % 1000);
    for (auto& y : v) {
      x += static_cast<std::int64_t>(rng() % 5 == 0 ? rng() % 100 : 0) - (trial % 3 == 0 ? 40 : 0);
      y = rng() % 200 == 0 ? static_cast<std::int64_t>(rng()) : x;
    }
    auto const sizes = zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type::int64, v.size(), v.data()});
    auto const e = encode_parts(v, 1, extended());
    EXPECT_LE(e.frame_bytes[0], zs::frame_header_bytes + classic_min(sizes));
    expect_round_trip(v, "random walk " + std::to_string(trial));
  }
}

TYPED_TEST(BitpackCpuTyped, CorruptPatchedFramesAreRefused) {
  using T = TypeParam;
  std::uint32_t const width = 8 * sizeof(T), rw = width / 32;
  one_frame const good(outlier_values<T>(1000), extended());
  ASSERT_EQ(good.codec(), zs::codec_id::bitpack_pfor);
  ASSERT_EQ(good.template decode_as<T>().first, zs::frame_status::ok);
  std::uint32_t const low = good.data(good.start(2) + rw), full = good.data(good.start(2) + rw + 1);
  // Block 2's outlier is its value 100, value 4 of miniblock 3, the block's only patched one.
  ASSERT_GT(bp::width_of(full, 3), bp::width_of(low, 3));
  std::uint32_t const shifts = good.data(good.start(2) + rw + 2);
  std::uint32_t const bitmap_at = good.start(2) + rw + 3 + bp::widths_sum(low);
  ASSERT_EQ(good.data(bitmap_at), 1U << 4);
  auto edit = [&](std::uint64_t i, std::uint32_t w, const char* what) {
    one_frame f = good;
    f.set_data(i, w);
    f.reseal();
    expect_refused<T>(f, what);
  };
  auto byte3 = [](std::uint32_t word, std::uint32_t b) { return (word & 0x00ffffffU) | (b << 24); };
  edit(good.start(2) + rw + 1, byte3(full, width + 1), "full width above the type's");
  edit(good.start(2) + rw, byte3(low, bp::width_of(full, 3) + 1), "low width above the full width");
  edit(good.start(2) + rw + 1, byte3(full, bp::width_of(low, 3)), "patched miniblock without its section");
  edit(bitmap_at, 0, "empty exception bitmap");
  edit(bitmap_at, 0xffffffffU, "more exceptions than high bits");
  edit(good.start(2) + rw, low + 1, "low widths that miss the next block");
  edit(good.start(2) + rw + 2, byte3(shifts, width - bp::width_of(full, 3) + 1), "a shift past the type's width");
  edit(good.start(2) + rw + 2, byte3(shifts, width), "a shift of the type's width");
  {
    one_frame f = good;  // the first block must start at 0
    f.set_word(0, 1);
    f.reseal();
    expect_refused<T>(f, "pfor first start");
  }
  {
    one_frame f = good;  // a block start past the data section
    f.set_word(5, 0xfffffff0U);
    f.reseal();
    expect_refused<T>(f, "pfor block start out of range");
  }
  {
    // The last block holds 1000 - 896 = 104 values: an exception at 104 or later is past them.
    std::vector<T> v = outlier_values<T>(1000);
    v[999] = static_cast<T>(2000000);
    one_frame const last(v, extended());
    ASSERT_EQ(last.codec(), zs::codec_id::bitpack_pfor);
    std::uint32_t const l = last.data(last.start(7) + rw), fl = last.data(last.start(7) + rw + 1);
    ASSERT_GT(bp::width_of(fl, 3), bp::width_of(l, 3));
    std::uint32_t bitmap_index = 0;
    for (std::uint32_t j = 0; j < 3; ++j) bitmap_index += bp::width_of(fl, j) > bp::width_of(l, j);
    std::uint32_t const at = last.start(7) + rw + 3 + bp::widths_sum(l) + bitmap_index;
    std::uint32_t const bitmap = last.data(at);
    ASSERT_EQ(bitmap, (1U << (996 - 992)) | (1U << (999 - 992)));
    one_frame f = last;
    f.set_data(at, (bitmap & ~(1U << 7)) | (1U << 8));  // position 1000: past the frame's values
    f.reseal();
    expect_refused<T>(f, "exception past the last value");
    f = last;
    f.set_data(at, (bitmap & ~(1U << 7)) | (1U << 6));  // position 998: a valid place, other values
    f.reseal();
    EXPECT_EQ(f.template decode_as<T>().first, zs::frame_status::ok);
  }
  one_frame const delta(jump_values<T>(2000), extended());
  ASSERT_EQ(delta.codec(), zs::codec_id::bitpack_pdfor);
  ASSERT_EQ(delta.template decode_as<T>().first, zs::frame_status::ok);
  {
    one_frame f = delta;
    f.set_word(0, 0);  // the first block starts after the first value
    f.reseal();
    expect_refused<T>(f, "pdfor first start");
    f = delta;
    f.set_word(4, f.start(4) - rw);  // block 4 starts a tile: its first value sits before it
    f.reseal();
    expect_refused<T>(f, "pdfor tile start");
    f = delta;
    auto h = f.header();
    h.params[2] = std::byte{0};  // pdfor has tiles of 4 blocks
    f.reseal(h);
    expect_refused<T>(f, "pdfor tile blocks parameter");
  }
}

TYPED_TEST(BitpackCpuTyped, CorruptDrforFramesAreRefused) {
  using T = TypeParam;
  std::uint32_t const width = 8 * sizeof(T);
  one_frame const good(sorted_run_values<T>(1500), extended());
  ASSERT_EQ(good.codec(), zs::codec_id::bitpack_drfor);
  ASSERT_EQ(good.template decode_as<T>().first, zs::frame_status::ok);
  std::uint32_t const header = good.data(good.start(1));
  auto const h = bp::unpack_drfor_header(header);
  ASSERT_GT(h.runs, 2u);
  auto edit_header = [&](std::uint32_t w, const char* what) {
    one_frame f = good;
    f.set_data(f.start(1), w);
    f.reseal();
    expect_refused<T>(f, what);
  };
  edit_header(header | 0x80000000U, "drfor step in the header of a block of more than two runs");
  edit_header((header & ~(15U << 27)) | (10U << 27), "drfor length width 10");
  edit_header((header & ~(127U << 20)) | ((width + 1) << 20), "drfor difference width above the type's");
  edit_header((header & ~(1023U << 10)) | (h.min_length << 10), "drfor lengths sum");
  {
    one_frame f = good;  // more runs than the last block's 476 values
    std::uint32_t const last = f.data(f.start(2));
    f.set_data(f.start(2), (last & ~1023U) | 511U);
    f.reseal();
    expect_refused<T>(f, "drfor runs above the block's values");
  }
  {
    one_frame f = good;
    auto hd = f.header();
    hd.params[0] = std::byte{128};  // drfor has blocks of 512
    hd.params[1] = std::byte{0};
    f.reseal(hd);
    expect_refused<T>(f, "drfor block size parameter");
  }
}

TEST(BitpackCpu, FramesOfOtherCodecIdsAreNotBitpack) {
  // Ids 4..7 and 11 are other codecs': a bitpack frame relabelled as one is refused.
  one_frame const good(sorted_run_values<std::uint32_t>(600), extended());
  for (std::uint8_t id : {4, 5, 7, 11, 12}) {
    one_frame f = good;
    auto h = f.header();
    h.codec = static_cast<zs::codec_id>(id);
    f.reseal(h);
    auto const [status, intact] = f.template decode_as<std::uint32_t>();
    EXPECT_EQ(status, zs::frame_status::wrong_codec) << int{id};
    EXPECT_TRUE(intact);
  }
  // The registered codec's decoder takes only the classic schemes' ids.
  one_frame f = good;
  ASSERT_EQ(f.codec(), zs::codec_id::bitpack_drfor);
  f.decoder = &bitpack();
  EXPECT_EQ(f.template decode_as<std::uint32_t>().first, zs::frame_status::wrong_codec);
}

// Both codecs are registered: "bitpack" (the classic schemes, the integer default) and
// "bitpack_ext" (the extended ones), each decoding exactly the ids it writes.
TEST(BitpackCpu, BothSchemeSetsAreRegistered) {
  EXPECT_EQ(zs::default_codec(zs::value_type::int32).id(), zs::codec_id::bitpack_for);
  const zs::codec& ext = zs::get_codec("bitpack_ext");
  EXPECT_EQ(ext.id(), zs::codec_id::bitpack_pfor);
  EXPECT_EQ(&zs::get_codec(zs::codec_id::bitpack_pfor), &ext);
  EXPECT_EQ(ext.decodes(), extended().decodes());
  EXPECT_EQ(bitpack().decodes(), zs::codec_bit(zs::codec_id::raw) | zs::codec_bit(zs::codec_id::bitpack_for) |
                                     zs::codec_bit(zs::codec_id::bitpack_dfor) | zs::codec_bit(zs::codec_id::bitpack_rfor));
  std::vector<std::int32_t> sorted_runs(3000);
  for (std::size_t i = 0; i < sorted_runs.size(); ++i) sorted_runs[i] = static_cast<std::int32_t>(5 + (i / 3) * 2 + (i / 3) % 2);
  EXPECT_EQ(codec_of(encode_parts(sorted_runs, 1, ext), 0), zs::codec_id::bitpack_drfor);
}

}  // namespace
