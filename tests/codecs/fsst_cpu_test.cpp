// The fsst codec's CPU reference, white box: its symbol tables, its splits, the rules only its
// own checks catch, its ratios on the real string columns against the FSST reference library's
// (shared/data/REFERENCE.md), the GPU decoder's warp programs run by the warp emulator, and the
// choice between fsst and fsst_dict per column by their estimates (directly and through the spill).
// Round trips of hostile inputs, truncation and bit flips are in the codec conformance suite.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codecs/fsst/fsst_mode.hpp"
#include "codecs/fsst/fsst_table_builder.hpp"
#include "fsst/fsst_format.hpp"
#include "fsst/fsst_warp.hpp"
#include "warp_emulator.hpp"
#include "zs/codec.hpp"
#include "zs/spill.hpp"
#include "zs_test.hpp"

namespace {

const zs::codec& fsst() { return zs::get_codec(zs::codec_id::fsst); }

// Frames of one batch, each partition of `c` its own column (its own table) or all one column.
struct encoded {
  std::vector<zs::encode_source> sources;
  std::vector<std::byte> params;
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> frame_bytes;
};

encoded encode(const zs::column& c, std::size_t parts, bool table_per_part) {
  encoded e;
  e.sources = zs::test::partition_sources(c.view(), c.view(), parts);
  std::size_t const columns = table_per_part ? parts : 1;
  std::vector<std::uint64_t> piece_begin(columns + 1);
  for (std::size_t k = 0; k <= columns; ++k) piece_begin[k] = table_per_part ? k : (k == 0 ? 0 : parts);
  std::vector<zs::value_type> types(columns, zs::value_type::string);
  auto const params_offsets = zs::layout_params(fsst(), types);
  e.params.assign(params_offsets.back(), std::byte{0});
  fsst().prepare_host({e.sources, piece_begin}, e.params.data(), params_offsets);
  for (std::size_t f = 0; f < parts; ++f) e.sources[f].params = e.params.data() + params_offsets[table_per_part ? f : 0];
  e.offsets = zs::layout_frames(fsst(), e.sources);
  e.frames.assign(e.offsets.back(), std::byte{0xEE});
  e.frame_bytes.assign(parts, 0);
  fsst().encode_host({e.sources, e.frames.data(), e.offsets, e.frame_bytes.data()});
  return e;
}

// Decodes every frame of `e` back into a column shaped as `c`; the statuses.
std::vector<zs::frame_status> decode(const encoded& e, const zs::column& c, zs::column& out) {
  out = zs::column::allocate(zs::value_type::string, c.size(), zs::memory_kind::host, nullptr, c.data_bytes());
  auto const targets = zs::test::partition_targets(e.sources, out.mutable_view());
  std::vector<zs::frame_status> status(targets.size(), zs::frame_status::not_decoded);
  fsst().decode_host({e.frames.data(), e.offsets, targets, status.data()});
  return status;
}

void expect_round_trip(const zs::column& c, std::size_t parts, bool table_per_part = false) {
  auto const e = encode(c, parts, table_per_part);
  zs::column out;
  auto const status = decode(e, c, out);
  for (std::size_t f = 0; f < parts; ++f) ASSERT_EQ(status[f], zs::frame_status::ok) << "frame " << f;
  EXPECT_EQ(out.strings(), c.strings());
}

std::vector<std::byte> table_of(const std::vector<std::string>& strings) {
  auto const c = zs::column::from_strings(strings);
  return encode(c, 1, false).params;
}

// Bytes of the frame's compressed characters: the split data and offsets (not the lengths
// frame), plus the table as the reference exports it (header + symbol bytes).
std::uint64_t character_bytes(const std::byte* frame) {
  zs::frame_header const h = zs::load_header(frame);
  std::uint64_t const body_at = zs::params_section_bytes(zs::fsst::table_bytes);
  zs::fsst::body_layout l{};
  EXPECT_TRUE(zs::fsst::read_layout(h, h.payload_bytes - body_at, l));
  zs::fsst::decode_table t{};
  EXPECT_TRUE(zs::fsst::load_decode_table(frame + zs::frame_header_bytes + zs::params_prefix_bytes, t));
  std::uint64_t symbol_bytes = 0;
  for (std::uint32_t k = 0; k < t.count; ++k) symbol_bytes += t.length[k];
  return l.data_bytes + 8 * (l.splits + 1) + zs::fsst::table_header_bytes + symbol_bytes;
}

}  // namespace

TEST(FsstTable, SerializedInTheReferenceLayout) {
  auto const block = table_of(std::vector<std::string>(500, "http://www.example.org/index.html"));
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(block.data(), t));
  EXPECT_GT(t.count, 0U);
  std::uint64_t const version = zs::detail::load_le(block.data(), 8);
  EXPECT_EQ(version >> 32, zs::fsst::reference_version);
  EXPECT_EQ((version >> 8) & 0xff, t.count);
  EXPECT_EQ(version & 0xff, 1U);  // endianness marker
  // Codes run through lengths 2, 3, ..., 8, then 1.
  auto group = [](std::uint32_t l) { return l == 1 ? 8U : l - 1; };
  for (std::uint32_t c = 1; c < t.count; ++c) EXPECT_LE(group(t.length[c - 1]), group(t.length[c])) << "code " << c;
  // A repeated string compresses to long symbols.
  bool has_long = false;
  for (std::uint32_t c = 0; c < t.count; ++c) has_long |= t.length[c] == 8;
  EXPECT_TRUE(has_long);
}

TEST(FsstTable, RefusesTablesThatBreakTheLayout) {
  auto const good = table_of({"abcabcabc", "abcd", "xyzxyz"});
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(good.data(), t));
  auto broken = [&](auto edit) {
    auto b = good;
    edit(b);
    return !zs::fsst::load_decode_table(b.data(), t);
  };
  EXPECT_TRUE(broken([](auto& b) { b[4] = std::byte{0}; }));                         // version
  EXPECT_TRUE(broken([](auto& b) { b[0] = std::byte{2}; }));                         // endianness marker
  EXPECT_TRUE(broken([](auto& b) { b[8] = std::byte{1}; }));                         // zero-terminated mode
  EXPECT_TRUE(broken([](auto& b) { b[9] = static_cast<std::byte>(std::to_integer<std::uint8_t>(b[9]) + 1); }));  // counts
  EXPECT_TRUE(broken([](auto& b) { b[zs::fsst::table_bytes - 1] = std::byte{1}; }));  // padding
  EXPECT_TRUE(broken([](auto& b) { b[2] = std::byte{7}; }));                         // terminator
}

TEST(FsstTable, EmptyAndIncompressibleSamplesGiveValidTables) {
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(table_of({}).data(), t));
  EXPECT_EQ(t.count, 0U);
  ASSERT_TRUE(zs::fsst::load_decode_table(table_of({"", "", ""}).data(), t));
  std::mt19937_64 rng(7);
  std::string noise(100000, '\0');
  for (auto& ch : noise) ch = static_cast<char>(rng());
  ASSERT_TRUE(zs::fsst::load_decode_table(table_of({noise}).data(), t));
  EXPECT_LE(t.count, 255U);
}

TEST(FsstSplits, EncodedSplitsAreSmallerThanTheirCharactersAndTheRestRaw) {
  std::mt19937_64 rng(11);
  std::string noise(3 * zs::fsst::default_split_bytes + 100, '\0');
  for (auto& ch : noise) ch = static_cast<char>(rng());
  std::string text;
  while (text.size() < 2 * zs::fsst::default_split_bytes) text += "the quick brown fox jumps over the lazy dog; ";
  auto const c = zs::column::from_strings(std::vector<std::string>{text, noise, text});
  auto const e = encode(c, 1, false);
  zs::frame_header const h = zs::load_header(e.frames.data());
  std::uint64_t const body_at = zs::params_section_bytes(zs::fsst::table_bytes);
  zs::fsst::body_layout l{};
  ASSERT_TRUE(zs::fsst::read_layout(h, h.payload_bytes - body_at, l));
  EXPECT_EQ(l.split_bytes, zs::fsst::default_split_bytes);
  EXPECT_EQ(l.splits, zs::fsst::split_count(c.data_bytes(), l.split_bytes));
  const std::byte* body = e.frames.data() + zs::frame_header_bytes + body_at;
  ASSERT_TRUE(zs::fsst::check_split_offsets(body, l, c.data_bytes()));
  std::size_t raw = 0, packed = 0;
  for (std::uint64_t i = 0; i < l.splits; ++i) {
    std::uint64_t const size = zs::detail::load_le(body + l.offsets_at + 8 * (i + 1), 8) -
                               zs::detail::load_le(body + l.offsets_at + 8 * i, 8);
    std::uint64_t const chars = zs::fsst::split_chars(c.data_bytes(), l.split_bytes, i);
    (size == chars ? raw : packed) += 1;
  }
  EXPECT_GE(raw, 3U);     // the noise
  EXPECT_GE(packed, 4U);  // the text
  expect_round_trip(c, 1);
}

TEST(FsstCodec, HostileInputsRoundTrip) {
  std::string one(100u << 20, '\0');  // one 100 MB string
  std::mt19937_64 rng(3);
  for (std::size_t i = 0; i < one.size(); i += 64) one[i] = "abcdefgh"[rng() % 8];
  expect_round_trip(zs::column::from_strings(std::vector<std::string>{one}), 1);
  expect_round_trip(zs::column::from_strings(std::vector<std::string>(100000, "")), 3);
  expect_round_trip(zs::column::from_strings(std::vector<std::string>{std::string(70000, '\0'), std::string(70000, '\xff'),
                                                                      std::string(5, '\0') + std::string(5, '\xff')}),
                    2);
  expect_round_trip(zs::column::from_strings(std::vector<std::string>{"\xc3\x28", "\xa0\xa1", "\xe2\x28\xa1", "\xf0\x28\x8c\xbc",
                                                                      "\xed\xa0\x80", "\xff\xfe\xfd"}),
                    2);
  std::vector<std::string> noise(5000);
  for (auto& s : noise) {
    s.resize(rng() % 100);
    for (auto& ch : s) ch = static_cast<char>(rng());
  }
  auto const c = zs::column::from_strings(noise);
  auto const e = encode(c, 4, true);
  // Incompressible characters cost little more than raw: the splits go raw.
  std::uint64_t total = 0;
  for (auto b : e.frame_bytes) total += b;
  EXPECT_LT(static_cast<double>(total), 1.02 * static_cast<double>(c.data_bytes() + 8 * c.size()) + 4 * 3000);
  expect_round_trip(c, 4, true);
}

TEST(FsstCodec, RefusesFramesThatBreakItsRules) {
  auto const c = zs::column::from_strings(std::vector<std::string>(3000, "repeat after me, repeat after me"));
  auto const good = encode(c, 1, false);
  auto refused = [&](auto edit) {
    encoded e = good;
    std::byte* frame = e.frames.data();
    zs::frame_header h = zs::load_header(frame);
    edit(h, frame + zs::frame_header_bytes);
    // Reseal: the rules under test, not the checksums, must refuse the frame.
    h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frame);
    zs::column out;
    return decode(e, c, out)[0] == zs::frame_status::corrupt_payload;
  };
  std::uint64_t const body_at = zs::params_section_bytes(zs::fsst::table_bytes);
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data(), 24, 8); }));
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data(), 0, 8); }));
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, 16, 8); }));
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, ~0ULL, 8); }));
  EXPECT_TRUE(refused([&](zs::frame_header& h, std::byte* payload) {
    zs::fsst::body_layout l{};
    ASSERT_TRUE(zs::fsst::read_layout(h, h.payload_bytes - body_at, l));
    // A split offset past the data section.
    zs::detail::store_le(payload + body_at + l.offsets_at + 8, l.data_bytes + 1, 8);
  }));
  EXPECT_TRUE(refused([&](zs::frame_header& h, std::byte* payload) {
    zs::fsst::body_layout l{};
    ASSERT_TRUE(zs::fsst::read_layout(h, h.payload_bytes - body_at, l));
    // The last code of the first split made an escape without its byte.
    std::uint64_t const end = zs::detail::load_le(payload + body_at + l.offsets_at + 8, 8);
    payload[body_at + l.data_at + end - 1] = std::byte{zs::fsst::escape_code};
  }));
  EXPECT_TRUE(refused([&](zs::frame_header&, std::byte* payload) {
    // The first value (or reference) of the packed lengths off by one: they no longer add up.
    std::byte* lengths = payload + body_at;
    zs::frame_header const inner = zs::load_header(lengths);
    std::uint64_t const per_block = inner.codec == zs::codec_id::bitpack_rfor ? 512 : 128;
    std::uint64_t const starts = inner.codec == zs::codec_id::raw ? 0 : (inner.value_count + per_block - 1) / per_block;
    lengths[zs::frame_header_bytes + 4 * starts] ^= std::byte{1};
  }));
  EXPECT_TRUE(refused([&](zs::frame_header&, std::byte* payload) {
    // A code the table does not define.
    zs::fsst::decode_table t{};
    ASSERT_TRUE(zs::fsst::load_decode_table(payload + zs::params_prefix_bytes, t));
    zs::fsst::body_layout l{};
    zs::frame_header const h = zs::load_header(payload - zs::frame_header_bytes);
    ASSERT_TRUE(zs::fsst::read_layout(h, h.payload_bytes - body_at, l));
    ASSERT_LT(t.count, 254U);
    payload[body_at + l.data_at] = static_cast<std::byte>(254);
  }));
}

// Ratios of the characters (split data and offsets plus the table as exported; the lengths not
// counted, as the reference counts none) in blocks of about 1 MiB of whole strings, a table
// each, against the FSST reference library's 1 MiB figures.
TEST(FsstCodec, RealColumnsRoundTripAndCompressAsTheReference) {
  struct column_case {
    const char* file;
    double reference_ratio;
  };
  for (auto const& [file, reference] : {column_case{"deb_descriptions.txt", 1.879}, {"deb_homepages.txt", 2.263},
                                        {"deb_maintainers.txt", 3.159}, {"deb_paths.txt", 2.248},
                                        {"osm_poi_names.txt", 1.481}}) {
    auto const c = zs::test::data_column(file);
    std::size_t const parts = std::max<std::size_t>(1, (c.data_bytes() + (1u << 19)) >> 20);
    auto const e = encode(c, parts, true);
    std::uint64_t bytes = 0;
    for (std::size_t f = 0; f < parts; ++f) bytes += character_bytes(e.frames.data() + e.offsets[f]);
    double const ratio = static_cast<double>(c.data_bytes()) / static_cast<double>(bytes);
    std::printf("%-22s %zu blocks: ratio %.3f (reference %.3f, %.3f of it)\n", file, parts, ratio, reference,
                ratio / reference);
    EXPECT_GE(ratio, 0.95 * reference) << file;
    zs::column out;
    auto const status = decode(e, c, out);
    for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok) << file;
    EXPECT_EQ(out.strings(), c.strings()) << file;
  }
}

// The GPU decoder's 16-byte stores (decode_split_wide, which the CPU reference also runs) give
// the bytes of the plain decoder at every alignment of the output.
TEST(FsstSplits, WideStoresWriteTheSameBytesAtEveryAlignment) {
  std::string text;
  std::mt19937_64 rng(5);
  while (text.size() < 5000) text += std::string("one two three four ") + static_cast<char>(rng() % 256);
  auto const block = table_of({text});
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(block.data(), t));
  zs::fsst::encode_table e{};
  zs::fsst::build_encode_table(t, e);
  for (std::size_t n : {0, 1, 7, 15, 16, 17, 33, 100, 4999}) {
    auto const* in = reinterpret_cast<const std::uint8_t*>(text.data());
    std::vector<std::uint8_t> coded(2 * n + 2);
    std::uint64_t stored = zs::fsst::encode_split(e, in, n, coded.data(), n == 0 ? 0 : n - 1);
    if (stored == zs::fsst::no_fit) {
      std::memcpy(coded.data(), in, n);
      stored = n;
    }
    ASSERT_TRUE(zs::fsst::check_split(t, coded.data(), stored, n));
    for (std::size_t shift = 0; shift < 16; ++shift) {
      alignas(16) std::uint8_t out[5000 + 64];
      std::memset(out, 0xAB, sizeof out);
      zs::fsst::decode_split_wide(t, coded.data(), stored, out + shift, n);
      EXPECT_EQ(std::memcmp(out + shift, in, n), 0) << n << " bytes at alignment " << shift;
      EXPECT_EQ(out[shift + n], 0xAB) << "wrote past the split, " << n << " bytes at alignment " << shift;
      if (shift > 0) {
        EXPECT_EQ(out[shift - 1], 0xAB) << "wrote before the split";
      }
    }
  }
}

namespace {

const zs::codec& fsst_dict() { return zs::get_codec(zs::codec_id::fsst_dict); }

// Frames of `c` in `parts` partitions with `codec`, one table for the column.
std::pair<std::uint64_t, std::vector<zs::frame_status>> round_trip_with(const zs::codec& codec, const zs::column& c,
                                                                       std::size_t parts, zs::column& out) {
  auto sources = zs::test::partition_sources(c.view(), c.view(), parts);
  std::vector<std::uint64_t> const piece_begin{0, parts};
  auto const po = zs::layout_params(codec, std::vector<zs::value_type>{zs::value_type::string});
  std::vector<std::byte> params(po.back());
  codec.prepare_host({sources, piece_begin}, params.data(), po);
  for (auto& s : sources) s.params = params.data();
  auto const offsets = zs::layout_frames(codec, sources);
  std::vector<std::byte> frames(offsets.back());
  std::vector<std::uint64_t> sizes(parts);
  codec.encode_host({sources, frames.data(), offsets, sizes.data()});
  out = zs::column::allocate(zs::value_type::string, c.size(), zs::memory_kind::host, nullptr, c.data_bytes());
  auto const targets = zs::test::partition_targets(sources, out.mutable_view());
  std::vector<zs::frame_status> status(parts, zs::frame_status::not_decoded);
  codec.decode_host({frames.data(), offsets, targets, status.data()});
  std::uint64_t total = 0;
  for (auto s : sizes) total += s;
  return {total, status};
}

}  // namespace

// deb_maintainers has 2,247 distinct values in 63,440 rows: as a dictionary it beats nvCOMP's
// Zstd (17.0 on its characters alone, REFERENCE.md) counting every frame byte.
TEST(FsstDict, LowCardinalityColumnsCompressAsADictionary) {
  auto const c = zs::test::data_column("deb_maintainers.txt");
  for (std::size_t parts : {1, 4}) {
    zs::column out;
    auto const [bytes, status] = round_trip_with(fsst_dict(), c, parts, out);
    for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok);
    EXPECT_EQ(out.strings(), c.strings());
    double const ratio = static_cast<double>(c.data_bytes()) / static_cast<double>(bytes);
    std::printf("deb_maintainers as a dictionary in %zu frames: ratio %.2f (characters / frame bytes)\n", parts, ratio);
    EXPECT_GE(ratio, 17.0);
  }
}

// The estimates choose: the dictionary for low-cardinality columns, plain fsst where most values
// are distinct.
TEST(FsstDict, EstimatesPickTheDictionaryWhereItPays) {
  for (auto const& [file, dictionary_wins] : {std::pair{"deb_maintainers.txt", true}, {"osm_poi_names.txt", false}}) {
    auto const c = zs::test::data_column(file);
    auto const sources = zs::test::partition_sources(c.view(), c.view(), 8);
    std::vector<std::uint64_t> const piece_begin{0, sources.size()};
    zs::sample_batch const samples{sources, piece_begin};
    double const plain = fsst().estimate_host(samples)[0].ratio();
    double const dict = fsst_dict().estimate_host(samples)[0].ratio();
    EXPECT_EQ(dict > plain, dictionary_wins) << file << ": fsst " << plain << ", fsst_dict " << dict;
  }
}

TEST(FsstDict, HostileInputsRoundTrip) {
  std::mt19937_64 rng(21);
  std::vector<std::vector<std::string>> inputs;
  inputs.push_back({});
  inputs.push_back(std::vector<std::string>(5000, ""));
  inputs.push_back({std::string(200000, '\0'), std::string(3, '\xff'), std::string(200000, '\0'), ""});
  std::vector<std::string> noise(3000);
  for (auto& s : noise) {
    s.resize(rng() % 40);
    for (auto& ch : s) ch = static_cast<char>(rng());
  }
  inputs.push_back(noise);
  for (auto const& strings : inputs) {
    auto const c = zs::column::from_strings(strings);
    for (std::size_t parts : {1, 3}) {
      zs::column out;
      auto const [bytes, status] = round_trip_with(fsst_dict(), c, parts, out);
      for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok);
      EXPECT_EQ(out.strings(), c.strings());
    }
  }
}

TEST(FsstDict, RefusesFramesThatBreakItsRules) {
  std::vector<std::string> strings;
  for (int i = 0; i < 2000; ++i) strings.push_back("value " + std::to_string(i % 13));
  auto const c = zs::column::from_strings(strings);
  auto sources = zs::test::partition_sources(c.view(), c.view(), 1);
  std::vector<std::uint64_t> const piece_begin{0, 1};
  auto const po = zs::layout_params(fsst_dict(), std::vector<zs::value_type>{zs::value_type::string});
  std::vector<std::byte> params(po.back());
  fsst_dict().prepare_host({sources, piece_begin}, params.data(), po);
  sources[0].params = params.data();
  auto const offsets = zs::layout_frames(fsst_dict(), sources);
  std::vector<std::byte> good(offsets.back());
  std::uint64_t size = 0;
  fsst_dict().encode_host({sources, good.data(), offsets, &size});
  std::uint64_t const body_at = zs::params_section_bytes(zs::fsst::table_bytes);
  auto refused = [&](auto edit) {
    auto frames = good;
    zs::frame_header h = zs::load_header(frames.data());
    edit(h, frames.data() + zs::frame_header_bytes);
    h.payload_checksum = zs::hash::checksum(frames.data() + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frames.data());
    zs::column out = zs::column::allocate(zs::value_type::string, c.size(), zs::memory_kind::host, nullptr, c.data_bytes());
    auto const targets = zs::test::partition_targets(sources, out.mutable_view());
    zs::frame_status status = zs::frame_status::not_decoded;
    fsst_dict().decode_host({frames.data(), offsets, targets, &status});
    return status == zs::frame_status::corrupt_payload;
  };
  EXPECT_FALSE(refused([](zs::frame_header&, std::byte*) {}));
  // Fewer distinct values than the codes name; more than the rows.
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, 12, 8); }));
  EXPECT_TRUE(refused([](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, 2001, 8); }));
  // A dictionary larger than its section could hold; the reserved word not zero.
  EXPECT_TRUE(refused([&](zs::frame_header&, std::byte* payload) { zs::detail::store_le(payload + body_at + 8, ~0ULL, 8); }));
  EXPECT_TRUE(refused([&](zs::frame_header&, std::byte* payload) { zs::detail::store_le(payload + body_at + 24, 1, 8); }));
  // A codes frame that does not fill its place.
  EXPECT_TRUE(refused([&](zs::frame_header&, std::byte* payload) {
    zs::detail::store_le(payload + body_at, zs::detail::load_le(payload + body_at, 8) + 16, 8);
  }));
}

// The encoder reads through a window of words and gathers its output in words (what the GPU
// runs): the same codes as the greedy match taken at every position, for every length and
// alignment of input and output.
TEST(FsstSplits, WindowedEncoderGivesTheGreedyCodes) {
  std::string text;
  std::mt19937_64 rng(17);
  while (text.size() < 3000) {
    text += (rng() % 3 == 0) ? std::string(1, static_cast<char>(rng())) : std::string("abcdefgh ijklmnop qrstuvwx ");
  }
  auto const block = table_of({text});
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(block.data(), t));
  zs::fsst::encode_table e{};
  zs::fsst::build_encode_table(t, e);
  auto const* in = reinterpret_cast<const std::uint8_t*>(text.data());
  for (std::size_t skew : {0, 1, 5}) {
    for (std::size_t n = 0; n < 300; n += (n < 40 ? 1 : 37)) {
      std::vector<std::uint8_t> expected;
      for (std::size_t p = 0; p < n;) {
        std::uint32_t const m = zs::fsst::match(e, in + skew + p, n - p);
        if (m == zs::fsst::escape_match) {
          expected.push_back(zs::fsst::escape_code);
          expected.push_back(in[skew + p]);
          p += 1;
        } else {
          expected.push_back(static_cast<std::uint8_t>(m & 0xff));
          p += m >> 8;
        }
      }
      std::vector<std::uint8_t> out(2 * n + 8 + skew, 0xCD);
      std::uint64_t const got = zs::fsst::encode_split(e, in + skew, n, out.data() + skew, 2 * n);
      ASSERT_EQ(got, expected.size()) << n << " bytes, skew " << skew;
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin() + skew)) << n << " bytes, skew " << skew;
      EXPECT_EQ(out[skew + got], 0xCD) << "wrote past the codes";
      // A capacity one short of the codes is no fit.
      if (!expected.empty()) {
        EXPECT_EQ(zs::fsst::encode_split(e, in + skew, n, out.data(), expected.size() - 1), zs::fsst::no_fit);
      }
    }
  }
}

// ---- the GPU decoder's warp programs (kernels/fsst/fsst_warp.hpp), run by the warp emulator ----

namespace {

// A table with symbols of every length, and code streams drawn from it: codes, and escapes of
// random bytes (0xFF often, so that runs of 0xFF alternate escapes and escaped bytes).
struct code_streams {
  zs::fsst::decode_table table{};
  std::mt19937_64 rng{23};

  code_streams() {
    std::string text;
    std::mt19937_64 r(3);
    while (text.size() < 20000) text += std::string("alpha beta gamma delta /usr/share/doc ") + static_cast<char>(r());
    auto const block = table_of({text});
    EXPECT_TRUE(zs::fsst::load_decode_table(block.data(), table));
    EXPECT_GT(table.count, 16U);
  }

  // Codes for about `target` characters; their decoded length in `n`.
  std::vector<std::uint8_t> draw(std::size_t target, std::uint64_t& n, unsigned escape_percent) {
    std::vector<std::uint8_t> codes;
    n = 0;
    while (n < target) {
      if (rng() % 100 < escape_percent) {
        codes.push_back(zs::fsst::escape_code);
        codes.push_back(rng() % 2 == 0 ? 0xFF : static_cast<std::uint8_t>(rng()));
        n += 1;
      } else {
        auto const code = static_cast<std::uint8_t>(rng() % table.count);
        codes.push_back(code);
        n += table.length[code];
      }
    }
    return codes;
  }
};

// decode_split_warp's verdict (every lane must agree), checking that, whatever the codes, it
// wrote nothing outside the split's n characters.
bool warp_check(const zs::fsst::decode_table& t, const std::vector<std::uint8_t>& codes, std::uint64_t n) {
  // Room past the codes, as in a frame, so that a lane's window may reach past the split.
  std::vector<std::uint8_t> padded(codes);
  padded.resize(codes.size() + 64, 0x5A);
  std::vector<std::array<std::uint64_t, 2>> storage((n + 64) / 16 + 2);  // 16-byte aligned
  auto* out = reinterpret_cast<std::uint8_t*>(storage.data());
  std::memset(out, 0xAB, storage.size() * 16);
  constexpr std::size_t at = 16 + 5;  // not a 16-byte boundary: both ends cut a group
  bool verdict[32];
  zs::test::warp_emulator::run(
      1, zs::fsst::ring_bytes,
      [&](auto& w, std::uint64_t, std::byte* smem) {
        verdict[w.lane] = zs::fsst::decode_split_warp(w, t, padded.data(), codes.size(), out + at, n,
                                                      reinterpret_cast<std::uint8_t*>(smem));
      },
      [](auto&) {});
  for (unsigned l = 1; l < 32; ++l) EXPECT_EQ(verdict[l], verdict[0]) << "lanes disagree";
  for (std::size_t k = 0; k < at; ++k) EXPECT_EQ(out[k], 0xAB) << "wrote before the split";
  for (std::size_t k = at + n; k < storage.size() * 16; ++k) EXPECT_EQ(out[k], 0xAB) << "wrote past the split";
  return verdict[0];
}

// decode_split_warp's output at out + shift, with guard bytes around it.
void expect_warp_decode(const zs::fsst::decode_table& t, const std::vector<std::uint8_t>& codes, std::uint64_t n,
                        std::size_t shift) {
  std::vector<std::uint8_t> expected(n + 1);
  zs::fsst::decode_split(t, codes.data(), codes.size(), expected.data(), n);
  std::vector<std::array<std::uint64_t, 2>> storage((n + 64) / 16 + 2);  // 16-byte aligned
  auto* out = reinterpret_cast<std::uint8_t*>(storage.data());
  std::memset(out, 0xAB, storage.size() * 16);
  zs::test::warp_emulator::run(
      1, zs::fsst::ring_bytes,
      [&](auto& w, std::uint64_t, std::byte* smem) {
        EXPECT_TRUE(zs::fsst::decode_split_warp(w, t, codes.data(), codes.size(), out + 16 + shift, n,
                                                reinterpret_cast<std::uint8_t*>(smem)));
      },
      [](auto&) {});
  ASSERT_EQ(std::memcmp(out + 16 + shift, expected.data(), n), 0) << n << " bytes at alignment " << shift;
  for (std::size_t k = 0; k < 16 + shift; ++k) ASSERT_EQ(out[k], 0xAB) << "wrote before the split";
  for (std::size_t k = 16 + shift + n; k < storage.size() * 16; ++k) ASSERT_EQ(out[k], 0xAB) << "wrote past the split";
}

}  // namespace

TEST(FsstWarp, TableEntriesReadInParallelMatchTheParsedTable) {
  std::mt19937_64 rng(29);
  std::string noise(50000, '\0');
  for (auto& ch : noise) ch = static_cast<char>(rng());
  for (auto const& block : {table_of({}), table_of({"abcabcabc", "abcd"}), table_of({noise}),
                            table_of(std::vector<std::string>(300, "http://www.example.org/index.html")),
                            table_of({noise.substr(0, 3000) + std::string(5000, 'q') + "rstuvwxyz rstuvwxyz"})}) {
    zs::fsst::decode_table t{};
    ASSERT_TRUE(zs::fsst::load_decode_table(block.data(), t));
    EXPECT_EQ(zs::fsst::table_symbol_count(block.data()), t.count);
    for (std::uint32_t c = 0; c < 256; ++c) {
      std::uint64_t symbol = 1;
      std::uint8_t length = 1;
      zs::fsst::load_decode_entry(block.data(), c, symbol, length);
      EXPECT_EQ(symbol, t.symbol[c]) << "code " << c;
      EXPECT_EQ(length, t.length[c]) << "code " << c;
    }
  }
}

TEST(FsstWarp, DecoderVerdictAgreesWithTheSplitCheckerAndStaysInsideTheSplit) {
  code_streams s;
  for (unsigned escapes : {0U, 5U, 50U, 100U}) {
    for (std::size_t target : {1, 7, 100, 700, 5000}) {
      std::uint64_t n = 0;
      auto codes = s.draw(target, n, escapes);
      auto expect_same = [&](const std::vector<std::uint8_t>& c, std::uint64_t chars, const char* what) {
        EXPECT_EQ(warp_check(s.table, c, chars), zs::fsst::check_split(s.table, c.data(), c.size(), chars))
            << what << ", " << c.size() << " codes for " << chars << " characters, " << escapes << "% escapes";
      };
      expect_same(codes, n, "as drawn");
      expect_same(codes, n + 1, "one character more");
      expect_same(codes, n - 1, "one character fewer");
      auto cut = codes;
      cut.pop_back();
      expect_same(cut, n - 1, "last byte cut");
      auto dangling = codes;
      dangling.push_back(zs::fsst::escape_code);
      expect_same(dangling, n + 1, "an escape without its byte");
      auto undefined = codes;
      undefined[undefined.size() / 2] = static_cast<std::uint8_t>(s.table.count);  // an undefined code, or
      expect_same(undefined, n, "a code changed");                                 // an escaped byte changed
      // Runs of 0xFF of every parity at the end, across lane and step boundaries.
      for (std::size_t run = 1; run <= 9; ++run) {
        auto ff = codes;
        ff.insert(ff.end(), run, 0xFF);
        expect_same(ff, n + run / 2, "a run of 0xFF");
      }
    }
  }
  // Raw and oversized splits.
  std::vector<std::uint8_t> const raw(100, 0xFF);
  EXPECT_TRUE(warp_check(s.table, raw, 100));
  EXPECT_FALSE(warp_check(s.table, raw, 99));
}

TEST(FsstWarp, DecoderWritesTheSplitAtEveryAlignment) {
  code_streams s;
  for (unsigned escapes : {0U, 30U}) {
    for (std::size_t target : {1, 2, 15, 16, 17, 300, 2049, 9000}) {
      std::uint64_t n = 0;
      auto const codes = s.draw(target, n, escapes);
      if (codes.size() >= n) continue;  // not an encoded split (those are smaller than their characters)
      ASSERT_TRUE(zs::fsst::check_split(s.table, codes.data(), codes.size(), n));
      for (std::size_t shift = 0; shift < 16; ++shift) expect_warp_decode(s.table, codes, n, shift);
    }
  }
  // A whole split of text as the encoder codes it, and one stored raw.
  std::string text;
  while (text.size() < zs::fsst::default_split_bytes) text += "the quick brown fox jumps over the lazy dog\xff; ";
  text.resize(zs::fsst::default_split_bytes);
  auto const block = table_of({text});
  zs::fsst::decode_table t{};
  ASSERT_TRUE(zs::fsst::load_decode_table(block.data(), t));
  zs::fsst::encode_table e{};
  zs::fsst::build_encode_table(t, e);
  std::vector<std::uint8_t> coded(2 * text.size());
  auto const* in = reinterpret_cast<const std::uint8_t*>(text.data());
  std::uint64_t const stored = zs::fsst::encode_split(e, in, text.size(), coded.data(), text.size() - 1);
  ASSERT_NE(stored, zs::fsst::no_fit);
  coded.resize(stored);
  for (std::size_t shift : {0, 3, 8, 15}) expect_warp_decode(t, coded, text.size(), shift);
  std::vector<std::uint8_t> const raw(in, in + 1000);
  for (std::size_t shift : {0, 1, 9}) expect_warp_decode(t, raw, raw.size(), shift);
}

// ---- the GPU encoder's warp program (kernels/fsst/fsst_warp.hpp), run by the warp emulator ----

namespace {

// encode_split_warp's result and output for in[0, n) (every lane must agree on the result).
std::uint64_t warp_encode(const zs::fsst::encode_table& e, const std::uint8_t* in, std::uint64_t n,
                          std::uint64_t capacity, std::vector<std::uint8_t>& codes) {
  std::vector<std::array<std::uint64_t, 2>> storage((2 * n + 64) / 16 + 2);  // 16-byte aligned
  auto* out = reinterpret_cast<std::uint8_t*>(storage.data());
  std::memset(out, 0xAB, storage.size() * 16);
  std::uint64_t result[32];
  zs::test::warp_emulator::run(
      1, zs::fsst::encode_warp_shared_bytes,
      [&](auto& w, std::uint64_t, std::byte* smem) {
        result[w.lane] = zs::fsst::encode_split_warp(w, e, in, n, out, capacity, reinterpret_cast<std::uint8_t*>(smem));
      },
      [](auto&) {});
  for (unsigned l = 1; l < 32; ++l) EXPECT_EQ(result[l], result[0]) << "lanes disagree";
  if (result[0] != zs::fsst::no_fit) {
    codes.assign(out, out + result[0]);
    for (std::size_t k = result[0]; k < storage.size() * 16; ++k) EXPECT_EQ(out[k], 0xAB) << "wrote past the codes";
  }
  return result[0];
}

// The warp encoder against encode_split on `text` cut to lengths around its steps' sizes, at
// the splits' capacity (n - 1) and with room for any codes.
void expect_warp_encoder_matches(const std::string& text, const zs::fsst::encode_table& e) {
  auto const* in = reinterpret_cast<const std::uint8_t*>(text.data());
  std::vector<std::uint64_t> lengths{0, 1, 2, 7, 8, 15, 16, 17, 31, 33, 100, 511, 512, 513, 519, 1024, 1500};
  lengths.push_back(text.size());
  for (std::uint64_t n : lengths) {
    if (n > text.size()) continue;
    for (std::uint64_t capacity : {n == 0 ? 0 : n - 1, 2 * n + 8}) {
      std::vector<std::uint8_t> expected(2 * n + 8), got;
      std::uint64_t const want = zs::fsst::encode_split(e, in, n, expected.data(), capacity);
      std::uint64_t const have = warp_encode(e, in, n, capacity, got);
      ASSERT_EQ(have, want) << n << " characters, capacity " << capacity;
      if (want != zs::fsst::no_fit) {
        EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin())) << n << " characters";
      }
    }
  }
}

zs::fsst::encode_table encode_table_of(const std::string& sample) {
  auto const block = table_of({sample});
  zs::fsst::decode_table t{};
  EXPECT_TRUE(zs::fsst::load_decode_table(block.data(), t));
  zs::fsst::encode_table e{};
  zs::fsst::build_encode_table(t, e);
  return e;
}

}  // namespace

TEST(FsstWarp, EncoderGivesTheGreedyCodesOnText) {
  std::string text;
  std::mt19937_64 rng(41);
  char const* words[] = {"alpha ", "beta ", "gamma ", "delta ", "/usr/share/doc/", "Restaurant ", "Straße "};
  while (text.size() < 17000) {
    text += rng() % 5 == 0 ? std::string(1, static_cast<char>(rng())) : std::string(words[rng() % 7]);
  }
  expect_warp_encoder_matches(text, encode_table_of(text));
}

// Runs of one byte under a table whose only symbol is 3 (or 5) of them: a parse started off the
// true one's phase never meets it, so hand-overs miss and lanes parse again, one after another.
TEST(FsstWarp, EncoderGivesTheGreedyCodesWhereParsesNeverMeet) {
  std::string const runs(4000, 'a');
  for (std::uint32_t length : {3U, 5U}) {
    zs::fsst::decode_table d{};
    d.symbol[0] = zs::fsst::load_symbol(reinterpret_cast<const std::uint8_t*>(runs.data()), length);
    d.length[0] = static_cast<std::uint8_t>(length);
    d.count = 1;
    zs::fsst::encode_table e{};
    zs::fsst::build_encode_table(d, e);
    expect_warp_encoder_matches(runs, e);
  }
  std::string periodic;
  while (periodic.size() < 4000) periodic += "abc";
  expect_warp_encoder_matches(periodic, encode_table_of(periodic));
}

// Bytes the table mostly lacks: escapes (two code bytes per character), so no fit at the
// splits' capacity, and the codes still the greedy ones with room for them.
TEST(FsstWarp, EncoderGivesTheGreedyCodesOnEscapes) {
  std::string noise;
  std::mt19937_64 rng(7);
  while (noise.size() < 3000) noise += static_cast<char>(rng() % 3 == 0 ? 0xFF : rng());
  expect_warp_encoder_matches(noise, encode_table_of("the quick brown fox jumps over the lazy dog"));
  std::string mixed;
  while (mixed.size() < 3000) mixed += rng() % 2 == 0 ? std::string("the quick ") : std::string(1, static_cast<char>(rng()));
  expect_warp_encoder_matches(mixed, encode_table_of("the quick brown fox jumps over the lazy dog"));
}

// --- the mode of a string column: fsst or fsst_dict ----------------------------------------------

namespace {

// The choice from estimates on one sample: the whole column as one piece.
const zs::codec& mode_for(const zs::column& c) {
  auto const pieces = zs::test::partition_sources(c.view(), c.view(), 1);
  std::vector<std::uint64_t> const piece_begin{0, 1};
  return zs::codecs::choose_string_mode(fsst(), [&](const zs::codec& k) {
    return k.estimate_host(zs::sample_batch{pieces, piece_begin}).front().ratio();
  });
}

}  // namespace

TEST(FsstMode, RepeatedValuesChooseTheDictionaryAndMostlyDistinctOnesFsst) {
  EXPECT_EQ(mode_for(zs::test::data_column("deb_maintainers.txt")).id(), zs::codec_id::fsst_dict);
  EXPECT_EQ(mode_for(zs::test::data_column("deb_descriptions.txt")).id(), zs::codec_id::fsst);
}

TEST(FsstMode, OnlyFsstIsReplacedAndOnlyWhereTheDictionarySavesAnEighth) {
  const zs::codec& raw = zs::get_codec(zs::codec_id::raw);
  EXPECT_EQ(&zs::codecs::choose_string_mode(raw, [](const zs::codec&) { return 1.0; }), &raw);
  EXPECT_EQ(zs::codecs::choose_string_mode(fsst(), [](const zs::codec&) { return 2.0; }).id(), zs::codec_id::fsst);
  auto const dict_ratio = [](double ratio) {
    return [ratio](const zs::codec& c) { return c.id() == zs::codec_id::fsst_dict ? ratio : 2.0; };
  };
  EXPECT_EQ(zs::codecs::choose_string_mode(fsst(), dict_ratio(2.2)).id(), zs::codec_id::fsst);
  EXPECT_EQ(zs::codecs::choose_string_mode(fsst(), dict_ratio(2.0 * 8 / 7)).id(), zs::codec_id::fsst_dict);
  EXPECT_EQ(zs::codecs::choose_string_mode(800, 701).id(), zs::codec_id::fsst);
  EXPECT_EQ(zs::codecs::choose_string_mode(800, 700).id(), zs::codec_id::fsst_dict);
}

TEST(FsstMode, TheSpillChoosesItPerColumn) {
  struct column_case {
    const char* file;
    zs::codec_id mode;
  };
  for (auto const& [file, mode] : {column_case{"deb_maintainers.txt", zs::codec_id::fsst_dict},
                                   column_case{"deb_descriptions.txt", zs::codec_id::fsst}}) {
    SCOPED_TRACE(file);
    auto const c = zs::test::data_column(file);
    zs::spill_options options;
    options.pcie_bandwidth = 1e6;  // a link slow enough that compressing pays where it saves anything
    auto parked = zs::spill(c.view(), cudaStream_t{}, options);
    // The spill sends raw what its estimate says does not shrink; the codec it weighed is then
    // not reported, and must not have been fsst_dict.
    if (mode == zs::codec_id::fsst_dict) {
      EXPECT_EQ(parked.report().codec, mode) << parked.report().codec_name;
    } else {
      EXPECT_NE(parked.report().codec, zs::codec_id::fsst_dict) << parked.report().codec_name;
    }
    EXPECT_EQ(zs::restore(parked, zs::memory_kind::host, cudaStream_t{}).strings(), c.strings());
  }
}
