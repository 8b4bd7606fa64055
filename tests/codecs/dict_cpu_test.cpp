// The dict codec's CPU reference: where it writes a dictionary and where it does not, what the
// dictionary holds, round trips of every type with the types' extremes among the values, frames
// never larger than bitpack_ext's by more than a header, and the format's rules on frames that
// break them. The conformance suite adds real columns, truncations and bit flips
// (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "dict/dict_format.hpp"
#include "dict_test_inputs.hpp"
#include "zs/codec.hpp"

namespace {

namespace inputs = zs::test::dict_inputs;

const zs::codec& dict() { return zs::get_codec(zs::codec_id::dict); }
const zs::codec& packer() { return zs::get_codec(zs::codec_id::bitpack_pfor); }

struct encoded {
  std::vector<std::byte> bytes;
  std::uint64_t size = 0;
};

encoded encode(const zs::codec& c, const inputs::input& in) {
  zs::encode_source const source{in.type, in.rows, in.bytes.data()};
  std::vector<std::uint64_t> const offsets = zs::layout_frames(c, std::span(&source, 1));
  encoded e;
  e.bytes.assign(offsets.back(), std::byte{0xEE});
  c.encode_host({std::span(&source, 1), e.bytes.data(), offsets, &e.size});
  e.bytes.resize(e.size);
  return e;
}

zs::frame_status decode(const std::vector<std::byte>& frame, zs::value_type type, std::uint64_t rows,
                        std::vector<std::byte>& out) {
  std::uint64_t const offsets[2] = {0, frame.size()};
  zs::decode_target const target{type, rows, out.data()};
  zs::frame_status status = zs::frame_status::not_decoded;
  dict().decode_host({frame.data(), offsets, std::span(&target, 1), &status});
  return status;
}

TEST(DictCpu, EveryInputRoundTripsAndTakesADictionaryOrRunsOnlyWhereSmaller) {
  std::size_t dictionaries = 0, runs = 0;
  for (auto const& in : inputs::all()) {
    SCOPED_TRACE(in.name);
    encoded const frame = encode(dict(), in);
    encoded const plain = encode(packer(), in);
    zs::frame_header const h = zs::load_header(frame.bytes.data());
    zs::dict::fields const f = zs::dict::load_fields(h);
    if (f.entries == 0) {
      // Plain: the bitpack_ext frame itself behind one header (embedded: no checksum of its own).
      ASSERT_EQ(frame.size, plain.size + zs::frame_header_bytes);
      zs::frame_header const inner = zs::load_header(frame.bytes.data() + zs::frame_header_bytes);
      EXPECT_EQ(inner.codec, zs::load_header(plain.bytes.data()).codec);
      EXPECT_EQ(std::memcmp(frame.bytes.data() + 2 * zs::frame_header_bytes, plain.bytes.data() + zs::frame_header_bytes,
                            plain.size - zs::frame_header_bytes),
                0);
    } else if (f.runs()) {
      ++runs;
      EXPECT_LE(f.run_count(), zs::dict::max_runs(in.rows)) << "runs past the limit";
      EXPECT_LT(h.payload_bytes, plain.size) << "runs where they are not smaller";
    } else {
      ++dictionaries;
      EXPECT_TRUE(in.within_limit) << "a dictionary of more values than the limit";
      EXPECT_LT(h.payload_bytes, plain.size) << "a dictionary where it is not smaller";
    }
    std::vector<std::byte> out(in.bytes.size() + 1, std::byte{0xA5});
    ASSERT_EQ(decode(frame.bytes, in.type, in.rows, out), zs::frame_status::ok);
    if (!in.bytes.empty()) EXPECT_EQ(std::memcmp(out.data(), in.bytes.data(), in.bytes.size()), 0);
    EXPECT_EQ(out.back(), std::byte{0xA5}) << "a write past the target";
  }
  EXPECT_GT(dictionaries, 50U) << "the inputs should take dictionaries often";
  EXPECT_GE(runs, 9U) << "the long runs of every type should take the runs form";
}

// Long runs of many values: a field per run (its length and its value, each packed by
// bitpack_ext), where bitpack_ext's blocks pay a header and a reference per 512 rows at least.
TEST(DictCpu, LongRunsTakeTheRunsFormAtAFieldPerRun) {
  for (zs::value_type const type : {zs::value_type::int32, zs::value_type::uint64, zs::value_type::int16}) {
    SCOPED_TRACE(to_string(type));
    inputs::input const in = inputs::long_runs(type, 1 << 20, 5000, 4000, 13);
    encoded const frame = encode(dict(), in);
    zs::dict::fields const f = zs::dict::load_fields(zs::load_header(frame.bytes.data()));
    ASSERT_TRUE(f.runs());
    // About 2000 rows a run: some 525 runs.
    EXPECT_GT(f.run_count(), 400U);
    EXPECT_LT(f.run_count(), 700U);
    std::uint64_t const plain = encode(packer(), in).size;
    EXPECT_GT(static_cast<double>(plain) / static_cast<double>(frame.size), 4.0) << "plain " << plain << ", runs " << frame.size;
    std::vector<std::byte> out(in.bytes.size());
    ASSERT_EQ(decode(frame.bytes, in.type, in.rows, out), zs::frame_status::ok);
    EXPECT_EQ(out, in.bytes);
  }
  EXPECT_EQ(zs::dict::max_runs(15), 0U);
  EXPECT_EQ(zs::dict::max_runs(16), 4U);
  EXPECT_EQ(zs::dict::max_runs(std::uint64_t{1} << 32), 0U) << "lengths are uint32";
}

TEST(DictCpu, AColumnOf64ValuesOfAnySpreadTakesAbout6BitsARow) {
  for (zs::value_type const type : {zs::value_type::int32, zs::value_type::uint64, zs::value_type::int64}) {
    inputs::input const in = inputs::few_distinct(type, 1 << 18, 64, false, 7);
    encoded const frame = encode(dict(), in);
    zs::dict::fields const f = zs::dict::load_fields(zs::load_header(frame.bytes.data()));
    EXPECT_EQ(f.entries, 64U) << to_string(type);
    double const bits_a_row = 8.0 * static_cast<double>(frame.size) / static_cast<double>(in.rows);
    EXPECT_LT(bits_a_row, 7.1) << to_string(type);  // 6 bits of code, and the blocks' headers
    EXPECT_GT(static_cast<double>(encode(packer(), in).size) / static_cast<double>(frame.size), 4.0) << to_string(type);
  }
}

TEST(DictCpu, TheDictionaryIsTheDistinctValuesInTheTypesOrder) {
  for (zs::value_type const type : inputs::integer_types) {
    SCOPED_TRACE(to_string(type));
    inputs::input const in = inputs::few_distinct(type, 4096, 40, true, 11);
    encoded const frame = encode(dict(), in);
    zs::dict::fields const f = zs::dict::load_fields(zs::load_header(frame.bytes.data()));
    ASSERT_EQ(f.entries, 40U);
    std::size_t const width = zs::value_width(type);
    std::vector<std::byte> values(f.entries * width);
    std::uint64_t const offsets[2] = {0, f.dictionary_bytes};
    zs::decode_target const target{type, f.entries, values.data()};
    zs::frame_status status = zs::frame_status::not_decoded;
    packer().decode_host({frame.bytes.data() + zs::frame_header_bytes, offsets, std::span(&target, 1), &status, true});
    ASSERT_EQ(status, zs::frame_status::ok);
    std::uint64_t const flip = zs::dict::key_flip(type);
    for (std::uint64_t k = 1; k < f.entries; ++k) {
      std::uint64_t a = 0, b = 0;
      std::memcpy(&a, values.data() + (k - 1) * width, width);
      std::memcpy(&b, values.data() + k * width, width);
      EXPECT_LT(a ^ flip, b ^ flip) << "entries " << k - 1 << " and " << k;
    }
  }
}

TEST(DictCpu, TheLimitIsOneEntryPer16RowsUpTo4096) {
  EXPECT_EQ(zs::dict::entry_limit(15), 0U);
  EXPECT_EQ(zs::dict::entry_limit(16), 1U);
  EXPECT_EQ(zs::dict::entry_limit(1000), 62U);
  EXPECT_EQ(zs::dict::entry_limit(std::uint64_t{1} << 30), zs::dict::max_entries);
  EXPECT_EQ(zs::dict::table_slots(1000), 128U);
  EXPECT_EQ(zs::dict::table_slots(std::uint64_t{1} << 30), 8192U);
  // One value above the limit: plain, however well a dictionary would have done.
  inputs::input const over = inputs::few_distinct(zs::value_type::int32, 1000, 63, false, 3);
  ASSERT_FALSE(over.within_limit);
  EXPECT_EQ(zs::dict::load_fields(zs::load_header(encode(dict(), over).bytes.data())).entries, 0U);
}

TEST(DictCpu, FramesThatBreakTheRulesAreRefusedAndTheirTargetsLeftAsTheyWere) {
  for (auto const& bad : inputs::bad_frames()) {
    SCOPED_TRACE(bad.name);
    std::vector<std::byte> out(bad.rows * zs::value_width(bad.type), std::byte{0xA5});
    EXPECT_EQ(decode(bad.bytes, bad.type, bad.rows, out), zs::frame_status::corrupt_payload);
    for (std::byte const b : out) ASSERT_EQ(b, std::byte{0xA5});
  }
}

TEST(DictCpu, AHandMadeFrameOfRunsTheEncoderWouldNotWriteDecodes) {
  // Two runs of the same value, and more runs than the encoder takes: the rules bind what a
  // decoder reads.
  std::vector<std::uint64_t> const lengths{3, 1, 2, 1, 1}, values{9, 9, 4, 0, 9};
  std::vector<std::byte> const frame = inputs::hand_made_runs(zs::value_type::int64, lengths, values, 8);
  std::vector<std::byte> out(8 * 8);
  ASSERT_EQ(decode(frame, zs::value_type::int64, 8, out), zs::frame_status::ok);
  std::int64_t got[8];
  std::memcpy(got, out.data(), sizeof got);
  std::int64_t const expected[8] = {9, 9, 9, 9, 4, 4, 0, 9};
  EXPECT_TRUE(std::equal(got, got + 8, expected));
}

TEST(DictCpu, AHandMadeFrameOfAnUnsortedDictionaryDecodes) {
  // The rules bind what a decoder reads, not the encoder's choices.
  std::vector<std::uint64_t> const dictionary{900, 3, 77};
  std::vector<std::uint64_t> codes(50);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = i % 3;
  std::vector<std::byte> const frame = inputs::hand_made_frame(zs::value_type::uint32, dictionary, codes);
  std::vector<std::byte> out(50 * 4);
  ASSERT_EQ(decode(frame, zs::value_type::uint32, 50, out), zs::frame_status::ok);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, out.data() + 4 * i, 4);
    EXPECT_EQ(v, dictionary[codes[i]]);
  }
}

}  // namespace
