// The alp codec's CPU reference, white box: bit-exact round trips of every kind of float bit
// pattern (NaN payloads, -0.0, infinities, denormals, extremes), the vector modes it picks, the
// fill-value path, the format rules its decoder checks, and the ratios on the real float
// columns against the ALP reference library and nvCOMP Bitcomp (shared/data/REFERENCE.md).
// Round trips of every codec against the GPU, truncation and bit flips are in the conformance
// suite (conformance_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "alp/alp_format.hpp"
#include "codecs/alp/alp_codec.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs_test.hpp"

namespace {

const zs::codec& alp_codec() { return zs::get_codec(zs::codec_id::alp); }

template <typename T>
using bits_t = typename zs::alp::float_traits<T>::bits_t;

// Frames of one column on the CPU: the column's parameters prepared from all its partitions.
struct encoded {
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> bytes;
  std::vector<zs::encode_source> sources;
  std::vector<std::byte> params;
  std::uint64_t total() const {
    std::uint64_t t = 0;
    for (auto b : bytes) t += b;
    return t;
  }
};

// `mask`: the column's validity bitmap (nullptr: no nulls); each part reads it from its row on.
template <typename T>
encoded encode_host(const std::vector<T>& values, std::size_t parts = 1, const std::vector<std::uint8_t>* mask = nullptr) {
  encoded e;
  zs::value_type const type = zs::value_type_of<T>::value;
  for (std::size_t p = 0; p < parts; ++p) {
    std::uint64_t const begin = values.size() * p / parts, end = values.size() * (p + 1) / parts;
    e.sources.push_back({type, end - begin, values.data() + begin});
    if (mask != nullptr) {
      e.sources.back().null_mask = mask->data();
      e.sources.back().null_mask_bit = begin;
    }
  }
  std::vector<std::uint64_t> const piece_begin{0, e.sources.size()};
  zs::value_type const types[] = {type};
  auto const params_offsets = zs::layout_params(alp_codec(), types);
  e.params.resize(params_offsets.back());
  alp_codec().prepare_host({e.sources, piece_begin}, e.params.data(), params_offsets);
  for (auto& s : e.sources) s.params = e.params.data();
  e.offsets = zs::layout_frames(alp_codec(), e.sources);
  e.frames.resize(e.offsets.back());
  e.bytes.resize(e.sources.size());
  alp_codec().encode_host({e.sources, e.frames.data(), e.offsets, e.bytes.data()});
  return e;
}

template <typename T>
std::vector<zs::frame_status> decode_host(const encoded& e, std::vector<T>& out) {
  std::vector<zs::decode_target> targets;
  std::uint64_t at = 0;
  for (auto const& s : e.sources) {
    targets.push_back({s.type, s.count, out.data() + at});
    at += s.count;
  }
  std::vector<zs::frame_status> status(targets.size(), zs::frame_status::not_decoded);
  alp_codec().decode_host({e.frames.data(), e.offsets, targets, status.data()});
  return status;
}

// Encodes and decodes `values`; every decoded value must have the bits it had.
template <typename T>
std::uint64_t expect_round_trip(const std::vector<T>& values, std::size_t parts = 1) {
  encoded const e = encode_host(values, parts);
  std::vector<T> out(values.size(), T{0});
  auto const status = decode_host(e, out);
  for (std::size_t f = 0; f < status.size(); ++f) {
    EXPECT_EQ(status[f], zs::frame_status::ok) << "frame " << f;
  }
  EXPECT_TRUE(values.empty() || std::memcmp(out.data(), values.data(), values.size() * sizeof(T)) == 0)
      << "decoded bits differ";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (zs::alp::bits_of(out[i]) != zs::alp::bits_of(values[i])) {
      ADD_FAILURE() << "value " << i << ": " << values[i] << " came back as " << out[i];
      break;
    }
  }
  return e.total();
}

template <typename T>
T from_bits(bits_t<T> b) {
  return std::bit_cast<T>(b);
}

// The vector modes of a column's frames, counted (codecs::vector_mix of each frame, added up):
// ALP, ALP_RD, raw, and how many took the fill path.
zs::codecs::alp_vector_mix modes_of(const encoded& e) {
  zs::codecs::alp_vector_mix m;
  for (std::size_t f = 0; f < e.sources.size(); ++f) {
    auto const one = zs::codecs::vector_mix({e.frames.data() + e.offsets[f], e.bytes[f]}, e.sources[f].type);
    m.alp += one.alp;
    m.alp_rd += one.alp_rd;
    m.raw += one.raw;
    m.with_fill += one.with_fill;
  }
  return m;
}

// Recomputes a frame's checksums after an edit, so only the codec's own checks can refuse it.
void reseal(std::byte* frame) {
  zs::frame_header h = zs::load_header(frame);
  h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
  zs::store_header(h, frame);
}

template <typename T>
class AlpCpu : public ::testing::Test {};
using float_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AlpCpu, float_types);

TYPED_TEST(AlpCpu, DecimalValuesCodeAsAlpAndShrink) {
  using T = TypeParam;
  std::vector<T> values(10000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(static_cast<double>(i % 977) / 100.0);
  std::uint64_t const bytes = expect_round_trip(values);
  EXPECT_LT(bytes * 2, values.size() * sizeof(T));
  zs::codecs::alp_vector_mix const m = modes_of(encode_host(values));
  EXPECT_EQ(m.alp, zs::alp::vector_count(values.size()));
}

TYPED_TEST(AlpCpu, AllNanPayloadsRoundTrip) {
  using T = TypeParam;
  using B = bits_t<T>;
  B const exponent = std::bit_cast<B>(std::numeric_limits<T>::infinity());
  std::vector<T> values;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) {
    B payload = static_cast<B>(rng()) & ~(exponent | (B{1} << (sizeof(T) * 8 - 1)));
    if (payload == 0) payload = 1;
    B const sign = (i % 3 == 0) ? (B{1} << (sizeof(T) * 8 - 1)) : 0;
    values.push_back(from_bits<T>(sign | exponent | payload));
  }
  expect_round_trip(values);
  std::vector<T> const quiet(2048, std::numeric_limits<T>::quiet_NaN());
  EXPECT_LT(expect_round_trip(quiet), 2048 * sizeof(T) / 4) << "one NaN pattern throughout is a fill value";
}

TYPED_TEST(AlpCpu, AllNegativeZeroRoundTripsSmall) {
  using T = TypeParam;
  std::vector<T> const values(5000, T(-0.0));
  EXPECT_LT(expect_round_trip(values), 5000 * sizeof(T) / 4);
}

TYPED_TEST(AlpCpu, RandomBitPatternsRoundTripNoLargerThanRaw) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  std::vector<T> values(7777);
  for (auto& v : values) v = from_bits<T>(static_cast<bits_t<T>>(rng()));
  std::uint64_t const bytes = expect_round_trip(values, 3);
  // Raw vectors at worst: a vector header and an end offset per 1024 values, and the frames'.
  EXPECT_LE(bytes, values.size() * sizeof(T) + 8 * 24 + 3 * 256);
}

TYPED_TEST(AlpCpu, ConstantColumnIsAlmostFree) {
  using T = TypeParam;
  std::vector<T> const values(100000, T(3.25));
  EXPECT_LT(expect_round_trip(values) * 20, values.size() * sizeof(T));
}

TYPED_TEST(AlpCpu, SpecialValuesAndExtremesRoundTrip) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  std::vector<T> const specials{T(0.0),          T(-0.0),         L::infinity(),    -L::infinity(), L::quiet_NaN(),
                                L::signaling_NaN(), L::denorm_min(), -L::denorm_min(), L::min(),       -L::min(),
                                L::max(),         L::lowest(),     L::epsilon(),     T(1e-30),       T(-1e30),
                                T(0.1),           T(123.456),      T(-7.0)};
  std::vector<T> values;
  for (int i = 0; i < 2500; ++i) {
    values.push_back(i % 5 == 0 ? specials[static_cast<std::size_t>(i / 5) % specials.size()] : T(i) / T(8));
  }
  expect_round_trip(values);
  expect_round_trip(specials);
}

TYPED_TEST(AlpCpu, AlternatingHugeAndTinyRoundTrips) {
  using T = TypeParam;
  std::vector<T> values(4096);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = i % 2 == 0 ? std::numeric_limits<T>::max() / T(i + 1) : std::numeric_limits<T>::denorm_min() * T(i);
  }
  expect_round_trip(values);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 2 == 0 ? T(1e30) : T(1e-30);
  expect_round_trip(values);
}

TYPED_TEST(AlpCpu, PartialLastVectorsAndTinyFrames) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{1023}, std::size_t{1024},
                        std::size_t{1025}, std::size_t{3000}}) {
    std::vector<T> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<T>(static_cast<double>(i) * 0.25 - 7.5);
    expect_round_trip(values);
    expect_round_trip(values, 5);
  }
}

// Climate columns mark missing cells with one fill value (-1e34 here) in runs: the fill path
// takes them out with a map of one bit per value instead of an exception each.
TYPED_TEST(AlpCpu, FillValuesCostAboutABitEach) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  std::vector<T> values(64 * 1024);
  std::vector<T> present;
  for (std::size_t i = 0; i < values.size(); ++i) {
    bool const missing = (i / 100) % 3 == 1;  // a third missing, in runs of 100
    values[i] = missing ? T(-1e34) : static_cast<T>(static_cast<double>(rng() % 4000) / 100.0);
    if (!missing) present.push_back(values[i]);
  }
  std::uint64_t const bytes = expect_round_trip(values, 4);
  zs::codecs::alp_vector_mix const m = modes_of(encode_host(values, 4));
  EXPECT_GT(m.with_fill, 0U);
  // What the present values alone take, plus per vector its map (a bit per cell) and the
  // headers, lane counts and part-filled rows of the vectors the missing cells spread them
  // over: far below an exception for each missing cell (6 or 10 bytes).
  std::uint64_t const alone = encode_host(present, 4).total();
  std::uint64_t const vectors = values.size() / zs::alp::vector_values;
  std::uint64_t const lane_counts = zs::alp::float_traits<T>::lanes;
  EXPECT_LE(bytes, alone + vectors * (zs::alp::fill_map_bytes + 96 + lane_counts)) << "the present values alone: " << alone;
}

// A validity bitmap of `rows` rows: row i holds a value where valid(i).
template <class Valid>
std::vector<std::uint8_t> mask_of(std::size_t rows, Valid valid) {
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(rows), 0);
  for (std::size_t i = 0; i < rows; ++i) {
    if (valid(i)) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  return mask;
}

// Decodes `e` and checks every row that holds a value by `mask` bit for bit; returns what the
// decoder gave back.
template <typename T>
std::vector<T> expect_valid_rows_back(const encoded& e, const std::vector<T>& values, const std::vector<std::uint8_t>& mask) {
  std::vector<T> out(values.size(), T{0});
  for (auto const status : decode_host(e, out)) EXPECT_EQ(status, zs::frame_status::ok);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (zs::row_is_valid(mask.data(), i) && zs::alp::bits_of(out[i]) != zs::alp::bits_of(values[i])) {
      ADD_FAILURE() << "row " << i << ": " << values[i] << " came back as " << out[i];
      break;
    }
  }
  return out;
}

// Null rows hold whatever was left there (here random bit patterns: NaNs, infinities, huge and
// denormal values). Given the mask, the encoder codes them as fill cells: the column costs about
// what it costs where those rows hold a fill value, far less than coding what they hold. The
// parts' rows do not start on a byte of the mask.
TYPED_TEST(AlpCpu, NullRowsCostWhatFillCellsCost) {
  using T = TypeParam;
  std::mt19937_64 rng(41);
  std::size_t const rows = 64 * 1024 + 13;
  auto const mask = mask_of(rows, [&](std::size_t i) { return (i / 100) % 3 != 1 && rng() % 50 != 0; });
  std::vector<T> values(rows), filled(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    bool const valid = zs::row_is_valid(mask.data(), i);
    values[i] = valid ? static_cast<T>(static_cast<double>(rng() % 4000) / 100.0) : from_bits<T>(static_cast<bits_t<T>>(rng()));
    filled[i] = valid ? values[i] : T(-1e34);
  }
  encoded const masked = encode_host(values, 3, &mask);
  std::vector<T> const back = expect_valid_rows_back(masked, values, mask);
  zs::alp::column_params p;
  ASSERT_TRUE(zs::alp::load_params<T>(masked.params.data(), p));
  ASSERT_TRUE(p.has_fill) << "a third of the rows are null";
  for (std::size_t i = 0; i < rows; ++i) {
    if (!zs::row_is_valid(mask.data(), i)) {
      ASSERT_EQ(zs::alp::bits_of(back[i]), p.fill) << "null row " << i;
    }
  }
  EXPECT_GT(modes_of(masked).with_fill, 0U);
  std::uint64_t const as_fill = encode_host(filled, 3).total();
  std::uint64_t const unmasked = encode_host(values, 3).total();
  std::printf("%zu rows, a third null: %llu bytes with the mask, %llu with -1e34 in the null rows, %llu coding what they hold\n",
              rows, static_cast<unsigned long long>(masked.total()), static_cast<unsigned long long>(as_fill),
              static_cast<unsigned long long>(unmasked));
  EXPECT_LE(masked.total(), as_fill + as_fill / 100) << "null rows as fill cells: " << as_fill;
  EXPECT_LT(2 * masked.total(), unmasked) << "what the null rows hold, coded: " << unmasked;
}

// Null rows too few for a fill value (here 1 in 97, below a 32nd) repeat their vector's first
// value: no exception, no wider offsets, whatever they held. A vector without a value decodes
// to +0.0 throughout.
TYPED_TEST(AlpCpu, RareNullRowsRepeatTheirVectorsFirstValue) {
  using T = TypeParam;
  std::mt19937_64 rng(43);
  std::size_t const rows = 16 * 1024;
  std::size_t const empty_vector = 5;  // every row null
  auto const valid = [&](std::size_t i) { return i / zs::alp::vector_values != empty_vector && i % 97 != 3; };
  auto const mask = mask_of(rows, valid);
  std::vector<T> values(rows), repeated(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    values[i] = valid(i) ? static_cast<T>(static_cast<double>(rng() % 100000) / 1000.0)
                         : (i % 2 == 0 ? std::numeric_limits<T>::quiet_NaN() : -std::numeric_limits<T>::infinity());
  }
  for (std::size_t i = 0; i < rows; ++i) {
    std::size_t const v = i / zs::alp::vector_values;
    std::size_t first = v * zs::alp::vector_values;
    while (first < rows && first / zs::alp::vector_values == v && !valid(first)) ++first;
    repeated[i] = valid(i) ? values[i] : v == empty_vector ? T{0} : values[first];
  }
  encoded const masked = encode_host(values, 2, &mask);
  std::vector<T> const back = expect_valid_rows_back(masked, values, mask);
  zs::alp::column_params p;
  ASSERT_TRUE(zs::alp::load_params<T>(masked.params.data(), p));
  ASSERT_FALSE(p.has_fill);
  EXPECT_EQ(std::memcmp(back.data(), repeated.data(), rows * sizeof(T)), 0) << "the stand-ins of null rows";
  std::uint64_t const unmasked = encode_host(values, 2).total();
  EXPECT_LE(masked.total(), encode_host(repeated, 2).total() + 64);
  EXPECT_LT(masked.total(), unmasked);
}

// A column of null rows only: a map and a header per vector, whatever the rows hold.
TYPED_TEST(AlpCpu, AColumnOfNullRowsCostsAMapPerVector) {
  using T = TypeParam;
  std::mt19937_64 rng(47);
  std::size_t const rows = 10 * 1024 + 500;
  std::vector<std::uint8_t> const mask(zs::null_mask_bytes(rows), 0);
  std::vector<T> values(rows);
  for (auto& v : values) v = from_bits<T>(static_cast<bits_t<T>>(rng()));
  encoded const masked = encode_host(values, 1, &mask);
  std::vector<T> const back = expect_valid_rows_back(masked, values, mask);
  for (T const v : back) ASSERT_EQ(zs::alp::bits_of(v), 0U);
  std::uint64_t const vectors = zs::alp::vector_count(rows);
  EXPECT_LE(masked.total(), zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes) +
                                vectors * (8 + zs::alp::vector_header_bytes + zs::alp::fill_map_bytes + 8));
}

TYPED_TEST(AlpCpu, HighPrecisionValuesCodeAsAlpRd) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<T> dist(T(1), T(2));
  std::vector<T> values(20000);
  for (auto& v : values) v = dist(rng);
  std::uint64_t const bytes = expect_round_trip(values);
  zs::codecs::alp_vector_mix const m = modes_of(encode_host(values));
  EXPECT_EQ(m.alp_rd, zs::alp::vector_count(values.size()));
  EXPECT_LT(bytes, values.size() * sizeof(T));
}

TYPED_TEST(AlpCpu, ParametersOfAColumnAreTheSameFromEitherSide) {
  // prepare_column is what a GPU thread runs too; here: the same block from the same pieces.
  using T = TypeParam;
  std::vector<T> values(5000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(static_cast<double>(i) / 1000.0);
  encoded const a = encode_host(values, 3);
  encoded const b = encode_host(values, 3);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.frames, b.frames);
  zs::alp::column_params p;
  ASSERT_TRUE(zs::alp::load_params<T>(a.params.data(), p));
  EXPECT_GE(p.candidates, 1);
}

// The GPU decoder splits each vector's two decode phases over the 32 lanes of a warp; the CPU
// runs them as one worker. Both splits give every vector's bits, on every kind of vector.
TYPED_TEST(AlpCpu, DecodePhasesSplitOverLanesGiveTheSameValues) {
  using T = TypeParam;
  std::mt19937_64 rng(23);
  std::vector<T> values(16 * 1024 + 300);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::size_t const kind = (i / 1024) % 4;
    double const decimal = static_cast<double>(rng() % 100000) / 1000.0;
    bool const missing = (i / 45) % 2 == 0;  // fill runs in vectors of kinds 0 and 2
    if (kind == 0) values[i] = missing ? T(-1e34) : static_cast<T>(decimal);
    if (kind == 1) values[i] = static_cast<T>(decimal);
    if (kind == 2) values[i] = missing ? T(-1e34) : static_cast<T>(1.0 + static_cast<double>(rng() % 1000003) / 1000003.0);
    if (kind == 3) values[i] = std::bit_cast<T>(static_cast<bits_t<T>>(rng()));
  }
  encoded const e = encode_host(values);
  zs::alp::column_params p;
  ASSERT_TRUE(zs::alp::load_params<T>(e.params.data(), p));
  const std::byte* body = e.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
  std::uint64_t const vectors = zs::alp::vector_count(values.size());
  zs::codecs::alp_vector_mix const m = modes_of(e);
  EXPECT_GT(m.alp, 0U);
  EXPECT_GT(m.alp_rd, 0U);
  EXPECT_GT(m.with_fill, 0U);
  for (std::uint64_t v = 0; v < vectors; ++v) {
    const std::byte* vec = body + 8 * vectors + zs::alp::vector_start(body, v);
    std::uint32_t const count = zs::alp::values_in_vector(values.size(), v);
    zs::alp::vector_fields f;
    ASSERT_TRUE(zs::alp::check_vector<T>(vec, zs::alp::vector_end(body, v) - zs::alp::vector_start(body, v), count, p, f));
    std::vector<T> lanes(count);
    for (std::uint32_t lane = 0; lane < 32; ++lane) zs::alp::decode_cells<T>(vec, count, p, f, lanes.data(), lane, 32);
    for (std::uint32_t lane = 0; lane < 32; ++lane) zs::alp::patch_cells<T>(vec, count, f, lanes.data(), lane, 32);
    EXPECT_EQ(std::memcmp(lanes.data(), values.data() + v * zs::alp::vector_values, count * sizeof(T)), 0)
        << "vector " << v << " (mode " << static_cast<int>(vec[0]) << ")";
  }
}

// --- what the decoder refuses ---

template <typename T>
std::byte* first_vector(encoded& e) {
  std::byte* body = e.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
  return body + 8 * zs::alp::vector_count(e.sources[0].count);
}

template <typename T>
zs::frame_status status_after(encoded e, void (*edit)(encoded&)) {
  edit(e);
  reseal(e.frames.data());
  std::vector<T> out(e.sources[0].count);
  return decode_host(e, out)[0];
}

template <typename T>
std::vector<T> with_exceptions() {
  std::vector<T> values(2048);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 50 == 7 ? T(1) / T(3) : T(i % 100) / T(4);
  return values;
}

TYPED_TEST(AlpCpu, DecoderRefusesBrokenVectors) {
  using T = TypeParam;
  encoded const e = encode_host(with_exceptions<T>());
  ASSERT_EQ(static_cast<std::uint8_t>(first_vector<T>(const_cast<encoded&>(e))[0]), zs::alp::mode_alp);
  // An unknown mode; a width above the type's; an exponent above the largest; a factor above
  // the exponent; more exceptions than the vector holds; a fill flag without fill cells.
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { first_vector<T>(x)[0] = std::byte{3}; }), zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { first_vector<T>(x)[1] = std::byte{65}; }), zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { first_vector<T>(x)[2] = std::byte{19}; }), zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) {
              first_vector<T>(x)[3] = static_cast<std::byte>(static_cast<int>(first_vector<T>(x)[2]) + 1);
            }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { zs::detail::store_le(first_vector<T>(x) + 4, 2000, 2); }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { first_vector<T>(x)[0] |= std::byte{0x80}; }),
            zs::frame_status::corrupt_payload);
}

// Applies `edit` to the first vector's sections (which check_vector finds in the frame as
// encoded) and answers the status the damaged frame decodes with.
template <typename T, class Edit>
zs::frame_status status_after_sections(encoded e, Edit edit) {
  zs::alp::column_params p;
  zs::alp::vector_fields f;
  EXPECT_TRUE(zs::alp::load_params<T>(e.params.data(), p));
  std::byte* v = first_vector<T>(e);
  std::byte* body = e.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
  EXPECT_TRUE(zs::alp::check_vector<T>(v, zs::alp::vector_end(body, 0), 1024, p, f));
  zs::alp::vector_sections const s = zs::alp::sections_of<T>(v, 1024, f);
  edit(f, const_cast<std::byte*>(s.lane_counts), const_cast<std::byte*>(s.positions));
  reseal(e.frames.data());
  std::vector<T> out(e.sources[0].count);
  return decode_host(e, out)[0];
}

TYPED_TEST(AlpCpu, DecoderRefusesUnorderedExceptionsAndBadEnds) {
  using T = TypeParam;
  constexpr std::uint32_t lanes = zs::alp::float_traits<T>::lanes;
  encoded const e = encode_host(with_exceptions<T>());
  ASSERT_EQ(static_cast<std::uint8_t>(first_vector<T>(const_cast<encoded&>(e))[0]), zs::alp::mode_alp);
  // The encoder's exceptions: lane by lane, each lane's by increasing position.
  status_after_sections<T>(e, [&](const zs::alp::vector_fields& f, std::byte* counts, std::byte* positions) {
    ASSERT_GE(f.exceptions, 4U);
    std::uint32_t x = 0;
    for (std::uint32_t l = 0; l < lanes; ++l) {
      for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(counts[l]); ++k, ++x) {
        std::uint32_t const j = zs::detail::load_le(positions + 2 * x, 2) & zs::alp::position_mask;
        EXPECT_EQ(j % lanes, l);
        if (k > 0) EXPECT_GT(j, zs::detail::load_le(positions + 2 * (x - 1), 2) & zs::alp::position_mask);
      }
    }
    EXPECT_EQ(x, f.exceptions);
  });
  auto const swap_words = [](std::byte* positions, std::uint32_t a, std::uint32_t b) {
    std::swap(positions[2 * a], positions[2 * b]);
    std::swap(positions[2 * a + 1], positions[2 * b + 1]);
  };
  // Two positions swapped: within a lane (out of order) or across lanes (in another's run).
  EXPECT_EQ(status_after_sections<T>(e,
                                     [&](const zs::alp::vector_fields&, std::byte* counts, std::byte* positions) {
                                       std::uint32_t l = 0;
                                       std::uint32_t x = 0;
                                       for (; l < lanes && static_cast<std::uint32_t>(counts[l]) < 2; ++l) x += static_cast<std::uint32_t>(counts[l]);
                                       ASSERT_LT(l, lanes) << "no lane holds two exceptions";
                                       swap_words(positions, x, x + 1);
                                     }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after_sections<T>(e, [&](const zs::alp::vector_fields& f, std::byte*, std::byte* positions) {
              swap_words(positions, 0, f.exceptions - 1);
            }),
            zs::frame_status::corrupt_payload);
  // Lane counts that do not sum to the exceptions, or that move a position to another lane.
  EXPECT_EQ(status_after_sections<T>(e, [&](const zs::alp::vector_fields&, std::byte* counts, std::byte*) {
              counts[lanes - 1] = static_cast<std::byte>(static_cast<unsigned>(counts[lanes - 1]) + 1);
            }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after_sections<T>(e,
                                     [&](const zs::alp::vector_fields&, std::byte* counts, std::byte*) {
                                       std::uint32_t l = 0;
                                       while (l + 1 < lanes && counts[l] == std::byte{0}) ++l;
                                       counts[l] = static_cast<std::byte>(static_cast<unsigned>(counts[l]) - 1);
                                       counts[l + 1] = static_cast<std::byte>(static_cast<unsigned>(counts[l + 1]) + 1);
                                     }),
            zs::frame_status::corrupt_payload);
  // A vector end that is not the next start, and one past the data.
  EXPECT_EQ(status_after<T>(e, [](encoded& x) {
              std::byte* b = x.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
              zs::detail::store_le(b, zs::alp::vector_end(b, 0) + 8, 8);
            }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) {
              std::byte* b = x.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
              zs::detail::store_le(b + 8, ~std::uint64_t{0} << 3, 8);
            }),
            zs::frame_status::corrupt_payload);
}

template <typename T>
std::byte* second_vector(encoded& e) {
  std::byte* body = e.frames.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
  return body + 8 * zs::alp::vector_count(e.sources[0].count) + zs::alp::vector_start(body, 1);
}

TYPED_TEST(AlpCpu, DecoderRefusesBadFillMaps) {
  using T = TypeParam;
  std::vector<T> values(1500);  // the second vector holds 476 cells
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = (i / 20) % 2 == 0 ? T(-1e34) : T(i % 100) / T(4);
  encoded const e = encode_host(values);
  ASSERT_NE(static_cast<std::uint8_t>(second_vector<T>(const_cast<encoded&>(e))[0]) & zs::alp::fill_flag, 0);
  // A fill cell past the vector's 476 cells; one fill cell (cell 16) fewer than the header's count.
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { second_vector<T>(x)[zs::alp::vector_header_bytes + 500 / 8] |= std::byte{1}; }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { second_vector<T>(x)[zs::alp::vector_header_bytes + 2] &= std::byte{0xfe}; }),
            zs::frame_status::corrupt_payload);
  std::vector<T> out(values.size());
  EXPECT_EQ(decode_host(e, out)[0], zs::frame_status::ok);
}

TYPED_TEST(AlpCpu, DecoderRefusesBadColumnParameters) {
  using T = TypeParam;
  encoded const e = encode_host(with_exceptions<T>());
  auto params_at = [](encoded& x) { return x.frames.data() + zs::frame_header_bytes + zs::params_prefix_bytes; };
  (void)params_at;
  // No candidates; a non-zero reserved byte; a fill flag of 2; another non-zero reserved byte.
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { x.frames[zs::frame_header_bytes + zs::params_prefix_bytes] = std::byte{0}; }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { x.frames[zs::frame_header_bytes + zs::params_prefix_bytes + 11] = std::byte{1}; }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { x.frames[zs::frame_header_bytes + zs::params_prefix_bytes + 12] = std::byte{2}; }),
            zs::frame_status::corrupt_payload);
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { x.frames[zs::frame_header_bytes + zs::params_prefix_bytes + 31] = std::byte{1}; }),
            zs::frame_status::corrupt_payload);
  // Codec parameters in the header other than 1024 values per vector.
  EXPECT_EQ(status_after<T>(e, [](encoded& x) { x.frames[41] = std::byte{0}; }), zs::frame_status::corrupt_payload);
}

// --- the real float columns ---

struct real_float_column {
  const char* file;
  double alp_reference;  // shared/data/REFERENCE.md: the ALP reference library
  double bitcomp;        // nvCOMP Bitcomp, 64 KiB chunks, H100
};
constexpr real_float_column real_float_columns[] = {
    {"airport_lat.f64", 2.159, 1.506},
    {"levitus_temp.f32", 1.153, 1.987},
    {"navy_wind_u.f32", 1.145, 1.097},
};

template <typename T>
void check_real_column(const real_float_column& c, const zs::column& col) {
  const T* data = col.view().values<T>();
  std::vector<T> const values(data, data + col.size());
  // Frames of 1 MiB of values, as a shuffle of a few ranks cuts a column.
  std::size_t const parts = std::max<std::size_t>(1, values.size() * sizeof(T) / (std::size_t{1} << 20));
  std::uint64_t const bytes = expect_round_trip(values, parts);
  double const ratio = static_cast<double>(values.size() * sizeof(T)) / static_cast<double>(bytes);
  zs::codecs::alp_vector_mix const m = modes_of(encode_host(values, parts));
  std::printf("%-18s ratio %.3f (ALP reference %.3f, Bitcomp %.3f); vectors: ALP %llu, ALP_RD %llu, raw %llu, fill path %llu\n",
              c.file, ratio, c.alp_reference, c.bitcomp, static_cast<unsigned long long>(m.alp),
              static_cast<unsigned long long>(m.alp_rd), static_cast<unsigned long long>(m.raw),
              static_cast<unsigned long long>(m.with_fill));
  EXPECT_GE(ratio, std::max(c.alp_reference, c.bitcomp)) << c.file;
}

// codecs::vector_mix, what bench codec reports per float column: every vector counted once, and
// a frame the CPU reference refuses (a damaged vector, a wrong type, cut short) refused.
TEST(AlpCpuVectorMix, CountsEveryVectorAndRefusesWhatTheDecoderRefuses) {
  std::vector<double> values(5000);
  std::mt19937_64 rng(7);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Decimals with two digits (ALP), the last vectors random bit patterns (ALP_RD or raw).
    values[i] = i < 3072 ? static_cast<double>(static_cast<std::int64_t>(rng() % 100000)) / 100.0
                         : std::bit_cast<double>(rng());
  }
  encoded const e = encode_host(values);
  std::span<const std::byte> const frame(e.frames.data(), e.bytes[0]);
  auto const m = zs::codecs::vector_mix(frame, zs::value_type::float64);
  EXPECT_EQ(m.alp + m.alp_rd + m.raw, zs::alp::vector_count(values.size()));
  EXPECT_EQ(m.alp, 3U);
  EXPECT_EQ(m.with_fill, 0U);

  auto const refused = [](std::span<const std::byte> bytes, zs::value_type type) {
    try {
      zs::codecs::vector_mix(bytes, type);
    } catch (const zs::error& err) {
      return err.code() == zs::error_code::corrupt_frame;
    }
    return false;
  };
  EXPECT_TRUE(refused(frame, zs::value_type::float32));
  EXPECT_TRUE(refused(frame.first(frame.size() - 8), zs::value_type::float64));
  std::vector<std::byte> damaged(frame.begin(), frame.end());
  std::byte* body = damaged.data() + zs::frame_header_bytes + zs::params_section_bytes(zs::alp::params_bytes);
  std::uint64_t const vectors = zs::alp::vector_count(values.size());
  body[8 * vectors] = std::byte{0x7f};  // the first vector's mode: none defined
  reseal(damaged.data());
  EXPECT_TRUE(refused(damaged, zs::value_type::float64));
}

// Null rows on the real columns, holding random bit patterns: (a) a fifth of the rows null, in
// runs of 50 (a dropped sensor, a missing join partner), and (b) the cells of the column's most
// frequent value, where it is a fill value (at least a 32nd of the rows: levitus_temp's), null.
// Given the mask, neither costs more than the column as it comes; without it, (a) costs more.
template <typename T>
void check_real_nulls(const real_float_column& c, const zs::column& col) {
  const T* data = col.view().values<T>();
  std::vector<T> const as_it_comes(data, data + col.size());
  std::size_t const rows = as_it_comes.size();
  std::size_t const parts = std::max<std::size_t>(1, rows * sizeof(T) / (std::size_t{1} << 20));
  auto const ratio = [&](const encoded& e) { return static_cast<double>(rows * sizeof(T)) / static_cast<double>(e.total()); };
  double const plain = ratio(encode_host(as_it_comes, parts));
  std::mt19937_64 rng(53);
  auto const scribbled = [&](const std::vector<std::uint8_t>& mask) {
    std::vector<T> v = as_it_comes;
    for (std::size_t i = 0; i < rows; ++i) {
      if (!zs::row_is_valid(mask.data(), i)) v[i] = from_bits<T>(static_cast<bits_t<T>>(rng()));
    }
    return v;
  };

  auto const fifth = mask_of(rows, [](std::size_t i) { return (i / 50) % 5 != 2; });
  std::vector<T> const a = scribbled(fifth);
  encoded const a_masked = encode_host(a, parts, &fifth);
  expect_valid_rows_back(a_masked, a, fifth);
  double const a_unmasked = ratio(encode_host(a, parts));
  std::printf("%-18s as it comes %.3f; a fifth null: %.3f with the mask, %.3f without", c.file, plain,
              ratio(a_masked), a_unmasked);
  EXPECT_GE(ratio(a_masked), plain) << c.file;
  EXPECT_LT(a_unmasked, plain) << c.file;

  std::unordered_map<bits_t<T>, std::size_t> counts;
  for (T const v : as_it_comes) ++counts[std::bit_cast<bits_t<T>>(v)];
  auto const top = std::max_element(counts.begin(), counts.end(), [](auto& x, auto& y) { return x.second < y.second; });
  if (top->second * 32 >= rows) {
    auto const fill_null = mask_of(rows, [&](std::size_t i) { return std::bit_cast<bits_t<T>>(as_it_comes[i]) != top->first; });
    std::vector<T> const b = scribbled(fill_null);
    encoded const b_masked = encode_host(b, parts, &fill_null);
    expect_valid_rows_back(b_masked, b, fill_null);
    std::printf("; its fill cells null: %.3f with the mask", ratio(b_masked));
    EXPECT_GE(ratio(b_masked), plain) << c.file;
  }
  std::printf("\n");
}

// Calls check(c, column, T{}) for every real float column, T its value type.
template <class Check>
void for_each_real_float_column(Check check) {
  for (auto const& c : real_float_columns) {
    zs::column const col = zs::test::data_column(c.file);
    if (col.type() == zs::value_type::float64) {
      check(c, col, double{});
    } else {
      check(c, col, float{});
    }
  }
}

TEST(AlpCpuRealColumns, NullRowsCostNoMoreThanTheValuesTheyHide) {
  if (std::getenv("ZS_DATA_DIR") == nullptr) GTEST_SKIP() << "ZS_DATA_DIR is not set: no real columns";
  for_each_real_float_column([](const real_float_column& c, const zs::column& col, auto zero) {
    check_real_nulls<decltype(zero)>(c, col);
  });
}

TEST(AlpCpuRealColumns, RoundTripAtLeastTheReferencesRatios) {
  if (std::getenv("ZS_DATA_DIR") == nullptr) GTEST_SKIP() << "ZS_DATA_DIR is not set: no real columns";
  for_each_real_float_column([](const real_float_column& c, const zs::column& col, auto zero) {
    check_real_column<decltype(zero)>(c, col);
  });
}

}  // namespace
