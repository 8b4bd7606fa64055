// The codec conformance suite: every registered codec, on the CPU and on the GPU, for every value
// type it supports(), runs the same checks (tests/codecs/conformance.hpp is the harness):
//
//   RealColumnsRoundTripInUnevenFrames   every real column of the type, cut into frames of
//                                        uneven sizes, in one batch;
//   AdversarialInputsRoundTrip           empty, one value, all equal, the type's extremes,
//                                        random; special floats; hostile strings;
//     (both: on the GPU also the CPU's frames byte for byte, decoded on each side both ways)
//   EveryTruncationOfASmallFrameIsRefused
//   BitFlipsAreRefusedOrChangeNothing    and, with the checksums recomputed, the same frames
//                                        refused on the GPU as on the CPU;
//   FuzzSeedsDecodeAsOnTheCpu            the frames scripts/fuzz seeds the codec's fuzzer with;
//   OtherTypesCountsAndCodecsGetTheirStatus
//
// Test names read codec_side_type (Codecs/Conformance.BitFlipsAreRefusedOrChangeNothing/
// bitpack_gpu_int64). GPU cases report SKIPPED where there is no GPU; the real-data cases where
// the data folder is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bitpack_test_inputs.hpp"
#include "conformance.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

#if defined(ZS_CONFORMANCE_FIXTURE_CODEC)
#include "fixture_codec.hpp"
#endif

namespace zs::test::conformance {

// gtest prints a failing case's parameter: its name rather than its bytes.
void PrintTo(const suite_case& c, std::ostream* out) { *out << case_name(c); }

}  // namespace zs::test::conformance

namespace {

using namespace zs::test::conformance;

#if defined(ZS_CONFORMANCE_FIXTURE_CODEC)
// Codecs that only the tests register join the suite like the built-in ones: registered before
// gtest lists the cases. The fixture codec is the one with column parameters (format version 2).
[[maybe_unused]] const bool fixture_codec_registered = (zs::test::register_fixture_codec(), true);
#endif

// --- adversarial inputs ----------------------------------------------------------------------------

template <typename T>
zs::column column_of(const std::vector<T>& v) {
  return zs::column::from_values<T>(std::span<const T>(v));
}

/// Floats whose bits a codec must keep: NaNs of several payloads and signs, infinities, signed
/// zeros, denormals, the extremes, random bit patterns, and decimals (what ALP-like codecs target).
template <typename T>
std::vector<std::pair<std::string, std::vector<T>>> float_inputs() {
  using L = std::numeric_limits<T>;
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int mantissa_bits = L::digits - 1;
  constexpr U sign = U{1} << (8 * sizeof(T) - 1);
  constexpr U exponent = (sign - 1) & ~((U{1} << mantissa_bits) - 1);
  constexpr U quiet = U{1} << (mantissa_bits - 1);
  constexpr U mantissa = (U{1} << mantissa_bits) - 1;
  auto from_bits = [](U bits) {
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  };
  std::mt19937_64 rng(2024);
  std::vector<T> const nans{from_bits(exponent | quiet),           from_bits(exponent | 1),
                            from_bits(exponent | quiet | 0x1234),  from_bits(sign | exponent | quiet),
                            from_bits(exponent | (quiet - 1)),     from_bits(~U{0}),
                            from_bits(sign | exponent | 1),        L::quiet_NaN(),
                            L::signaling_NaN()};
  std::vector<T> const specials{L::infinity(), -L::infinity(), T{0}, -T{0}, L::denorm_min(), -L::denorm_min(),
                                from_bits(mantissa), L::min(), L::max(), L::lowest(), L::epsilon(), T{1}};

  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  inputs.emplace_back("empty", std::vector<T>{});
  inputs.emplace_back("one value", std::vector<T>{T(1.5)});
  inputs.emplace_back("all equal", std::vector<T>(1000, T(3.25)));
  inputs.emplace_back("extremes", std::vector<T>{L::lowest(), L::max(), L::min(), -L::min(), L::epsilon()});
  std::vector<T> alternating(1001), with_nans, infinities(300), zeros(513), denormals(700), bits(3000), random(3000),
      decimals(5000), mixed(2600);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 == 0 ? L::lowest() : L::max();
  inputs.emplace_back("lowest and max alternating", alternating);
  for (int round = 0; round < 60; ++round) {
    with_nans.insert(with_nans.end(), nans.begin(), nans.end());
    with_nans.push_back(static_cast<T>(round) * T(0.5));
  }
  inputs.emplace_back("NaNs of several payloads and signs", with_nans);
  for (std::size_t i = 0; i < infinities.size(); ++i) infinities[i] = i % 3 == 0 ? L::infinity() : i % 3 == 1 ? -L::infinity() : T(i);
  inputs.emplace_back("infinities", infinities);
  for (std::size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 2 == 0 ? T{0} : -T{0};
  inputs.emplace_back("signed zeros", zeros);
  for (std::size_t i = 0; i < denormals.size(); ++i) {
    denormals[i] = from_bits((i % 2 == 0 ? U{0} : sign) | (static_cast<U>(rng()) & mantissa) | (i % 7 == 0 ? U{1} : U{0}));
  }
  denormals[0] = L::denorm_min();
  denormals[1] = from_bits(mantissa);
  inputs.emplace_back("denormals", denormals);
  for (auto& x : bits) x = from_bits(static_cast<U>(rng()));
  inputs.emplace_back("random bit patterns", bits);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  for (auto& x : random) x = static_cast<T>(uniform(rng));
  inputs.emplace_back("random values", random);
  for (std::size_t i = 0; i < decimals.size(); ++i) {
    decimals[i] = i % 499 == 0 ? T(1) / T(3) : static_cast<T>(static_cast<double>(i % 1000) * 0.01 - 3.0);
  }
  inputs.emplace_back("decimals with a few exceptions", decimals);
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    mixed[i] = i % 2 == 0 ? specials[(i / 2) % specials.size()] : nans[(i / 2) % nans.size()];
  }
  inputs.emplace_back("every special value mixed", mixed);
  return inputs;
}

/// Strings a codec must carry byte for byte: empty ones, an all-empty column, one huge string,
/// invalid UTF-8, NUL and 0xFF bytes, incompressible random bytes, non-ASCII text.
std::vector<std::pair<std::string, std::vector<std::string>>> string_inputs() {
  std::mt19937_64 rng(77);
  std::vector<std::pair<std::string, std::vector<std::string>>> inputs;
  inputs.emplace_back("empty", std::vector<std::string>{});
  inputs.emplace_back("one empty string", std::vector<std::string>{""});
  inputs.emplace_back("one value", std::vector<std::string>{"alpha"});
  inputs.emplace_back("all empty", std::vector<std::string>(1000, ""));
  inputs.emplace_back("all equal", std::vector<std::string>(1000, "same value"));
  inputs.emplace_back("empty strings between others", std::vector<std::string>{"", "x", "", "", "yz", "", "", "", "w", ""});
  std::string huge(3 << 20, '\0');  // 3 MiB, neither constant nor random
  for (std::size_t i = 0; i < huge.size(); ++i) huge[i] = static_cast<char>('a' + (i * i + i / 7) % 26);
  inputs.emplace_back("one huge string", std::vector<std::string>{huge});
  inputs.emplace_back("huge string between short ones", std::vector<std::string>{"a", "", huge.substr(0, 1 << 20), "b"});
  inputs.emplace_back("invalid UTF-8",
                      std::vector<std::string>{"\xc3\x28", "\xa0\xa1", "\xe2\x28\xa1", "\xf0\x28\x8c\xbc", "\xf8\xa1\xa1\xa1\xa1",
                                               "\xed\xa0\x80", "\xc0\xaf", "\xff\xfe\xfd", "ok", "\x80"});
  std::vector<std::string> extremes_bytes;
  for (std::size_t n = 1; n <= 300; n += 13) {
    extremes_bytes.push_back(std::string(n, '\0'));
    extremes_bytes.push_back(std::string(n, '\xff'));
    std::string mixed(n, '\0');
    for (std::size_t i = 0; i < n; ++i) mixed[i] = i % 2 == 0 ? '\0' : '\xff';
    extremes_bytes.push_back(mixed);
  }
  inputs.emplace_back("bytes 0x00 and 0xFF", extremes_bytes);
  std::vector<std::string> random(2000);
  for (auto& s : random) {
    s.resize(rng() % 65);
    for (auto& ch : s) ch = static_cast<char>(rng());
  }
  inputs.emplace_back("incompressible random bytes", random);
  std::vector<std::string> const text{"naïve café", "日本語テキスト", "Ελληνικά", "😀🚀✨", "Zürich", "עברית",
                                      "e\xcc\x81", "Привет, мир", "中文", "\xef\xbb\xbf" "BOM"};
  std::vector<std::string> non_ascii;
  for (int round = 0; round < 50; ++round) non_ascii.insert(non_ascii.end(), text.begin(), text.end());
  inputs.emplace_back("non-ASCII text", non_ascii);
  inputs.emplace_back("lengths at byte and 16-bit edges",
                      std::vector<std::string>{std::string(255, 'x'), std::string(256, 'y'), std::string(65535, 'z'),
                                               std::string(65536, 'w'), std::string(1, 'v')});
  return inputs;
}

/// 128-bit integers whose 16 bytes a codec must keep: the extremes, high words of every sign
/// (small negatives are all ones above bit 63), int64 values sign-extended, random bit patterns.
std::vector<std::pair<std::string, std::vector<zs::int128_value>>> int128_inputs() {
  using zs::int128_value;
  std::mt19937_64 rng(128);
  std::vector<std::pair<std::string, std::vector<int128_value>>> inputs;
  inputs.emplace_back("empty", std::vector<int128_value>{});
  inputs.emplace_back("one value", std::vector<int128_value>{int128_value::of(42)});
  inputs.emplace_back("extremes", std::vector<int128_value>{zs::int128_min, zs::int128_max, int128_value::of(-1),
                                                             int128_value::of(0), int128_value{0, 1}});
  for (std::size_t n : {31, 33, 513, 4097}) {
    std::vector<int128_value> alternating(n), small(n), random(n), mixed_signs(n);
    for (std::size_t i = 0; i < n; ++i) {
      alternating[i] = i % 2 == 0 ? zs::int128_min : zs::int128_max;
      small[i] = int128_value::of(static_cast<std::int64_t>(rng() % 2001) - 1000);
      random[i] = int128_value{rng(), static_cast<std::int64_t>(rng())};
      mixed_signs[i] = int128_value{rng(), i % 3 == 0 ? -static_cast<std::int64_t>(i) : static_cast<std::int64_t>(i)};
    }
    std::string const rows = " (" + std::to_string(n) + " values)";
    inputs.emplace_back("min and max alternating" + rows, alternating);
    inputs.emplace_back("small integers of both signs" + rows, small);
    inputs.emplace_back("random bit patterns" + rows, random);
    inputs.emplace_back("high words negative and positive" + rows, mixed_signs);
    inputs.emplace_back("all equal" + rows, std::vector<int128_value>(n, int128_value{7, -7}));
  }
  return inputs;
}

/// Every adversarial input of `type`, each as a column in one frame and as one in three frames of
/// uneven sizes.
std::vector<test_column> adversarial_columns(zs::value_type type) {
  std::vector<test_column> out;
  auto add = [&](const std::string& name, zs::column c) {
    std::uint64_t const rows = c.size();
    out.push_back({name + ", one frame", copy_of(c), {rows}});
    out.push_back({name + ", three frames", std::move(c), three_uneven_frames(rows)});
  };
  auto add_integers = [&]<typename T>(const std::vector<std::vector<T>>& inputs) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      add("integers #" + std::to_string(k) + " (" + std::to_string(inputs[k].size()) + " values)", column_of(inputs[k]));
    }
  };
  switch (type) {
    case zs::value_type::int8: add_integers(zs::test::adversarial_inputs<std::int8_t>()); break;
    case zs::value_type::int16: add_integers(zs::test::adversarial_inputs<std::int16_t>()); break;
    case zs::value_type::uint8: add_integers(zs::test::adversarial_inputs<std::uint8_t>()); break;
    case zs::value_type::bool8: {
      auto const bytes = zs::test::adversarial_inputs<std::uint8_t>();  // their low bits, as 0 and 1
      for (std::size_t k = 0; k < bytes.size(); ++k) {
        zs::column c = zs::column::allocate(zs::value_type::bool8, bytes[k].size(), zs::memory_kind::host);
        for (std::size_t i = 0; i < bytes[k].size(); ++i) c.mutable_view().values<std::uint8_t>()[i] = bytes[k][i] & 1U;
        add("bools #" + std::to_string(k) + " (" + std::to_string(bytes[k].size()) + " values)", std::move(c));
      }
      break;
    }
    case zs::value_type::uint16: add_integers(zs::test::adversarial_inputs<std::uint16_t>()); break;
    case zs::value_type::int32: add_integers(zs::test::adversarial_inputs<std::int32_t>()); break;
    case zs::value_type::int64: add_integers(zs::test::adversarial_inputs<std::int64_t>()); break;
    case zs::value_type::uint32: add_integers(zs::test::adversarial_inputs<std::uint32_t>()); break;
    case zs::value_type::uint64: add_integers(zs::test::adversarial_inputs<std::uint64_t>()); break;
    case zs::value_type::float32:
      for (auto const& [name, v] : float_inputs<float>()) add(name, column_of(v));
      break;
    case zs::value_type::float64:
      for (auto const& [name, v] : float_inputs<double>()) add(name, column_of(v));
      break;
    case zs::value_type::string:
      for (auto const& [name, v] : string_inputs()) add(name, zs::column::from_strings(v));
      break;
    case zs::value_type::int128:
      for (auto const& [name, v] : int128_inputs()) add(name, column_of(v));
      break;
  }
  return out;
}

/// 300 unremarkable values of `type`.
zs::column pattern_column(zs::value_type type) {
  std::vector<std::int64_t> base(300);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = static_cast<std::int64_t>((i * 37) % 101) + 5;
  auto as = [&]<typename T>(T) {
    std::vector<T> v(base.begin(), base.end());
    return column_of(v);
  };
  switch (type) {
    case zs::value_type::int8: return as(std::int8_t{});
    case zs::value_type::int16: return as(std::int16_t{});
    case zs::value_type::uint8: return as(std::uint8_t{});
    case zs::value_type::bool8: {
      zs::column c = zs::column::allocate(zs::value_type::bool8, base.size(), zs::memory_kind::host);
      for (std::size_t i = 0; i < base.size(); ++i) c.mutable_view().values<std::uint8_t>()[i] = base[i] & 1;
      return c;
    }
    case zs::value_type::uint16: return as(std::uint16_t{});
    case zs::value_type::int32: return as(std::int32_t{});
    case zs::value_type::int64: return as(std::int64_t{});
    case zs::value_type::uint32: return as(std::uint32_t{});
    case zs::value_type::uint64: return as(std::uint64_t{});
    case zs::value_type::float32: return as(float{});
    case zs::value_type::float64: return as(double{});
    case zs::value_type::int128: {
      std::vector<zs::int128_value> v;
      for (auto b : base) v.push_back(zs::int128_value::of(b));
      return column_of(v);
    }
    case zs::value_type::string: break;
  }
  std::vector<std::string> s;
  for (auto b : base) s.push_back("value " + std::to_string(b));
  return zs::column::from_strings(s);
}

/// Collects failures of a check that runs thousands of times, and reports how many failed with
/// the first few, instead of one line each.
class failure_list {
 public:
  void add(const std::string& what) {
    if (count_++ < 8) text_ += "\n  " + what;
  }
  void report(const std::string& title) const {
    if (count_ != 0) ADD_FAILURE() << title << ": " << count_ << " failed, first:" << text_;
  }

 private:
  std::size_t count_ = 0;
  std::string text_;
};

// --- the suite ---------------------------------------------------------------------------------------

class Conformance : public ::testing::TestWithParam<suite_case> {
 protected:
  void SetUp() override {
    if (where() == side::gpu) {
      ZS_REQUIRE_GPU();
      stream_.emplace();
    }
  }

  const zs::codec& codec() const { return *GetParam().under_test; }
  side where() const { return GetParam().where; }
  zs::value_type type() const { return GetParam().type; }
  cudaStream_t stream() const { return stream_ ? stream_->get() : nullptr; }
  staged_batch stage(std::vector<test_column> columns, std::optional<side> on = std::nullopt) const {
    return staged_batch(std::move(columns), on.value_or(where()), stream());
  }

 private:
  std::optional<zs::cuda_stream> stream_;
};

TEST_P(Conformance, RealColumnsRoundTripInUnevenFrames) {
  std::string why;
  auto const folder = data_folder(why);
  if (!folder) GTEST_SKIP() << why;
  std::vector<test_column> columns;
  for (auto& r : real_columns(*folder, type())) {
    std::uint64_t const rows = r.head.size();
    columns.push_back({r.name, std::move(r.head), uneven_frames(rows)});
  }
  if (columns.empty()) GTEST_SKIP() << "no " << zs::to_string(type()) << " column in " << *folder;
  check_round_trip(codec(), stage(std::move(columns)), stream());
}

TEST_P(Conformance, AdversarialInputsRoundTrip) {
  check_round_trip(codec(), stage(adversarial_columns(type())), stream());
}

// A frame cut short by even one byte is refused as truncated (docs/FORMAT.md, "Validation": the
// header's payload size against the bytes available), whatever it holds; the decoder reads
// nothing past the cut (a guard page on the CPU) and writes nothing around its target. The
// cuts at multiples of 16 bytes share one decode call; the others each end a call, since a
// batch's next frame cannot start off a 16-byte boundary.
TEST_P(Conformance, EveryTruncationOfASmallFrameIsRefused) {
  staged_batch const b = stage(adversarial_columns(type()));
  encoded_frames const e = encode(codec(), where(), b, stream());
  // Small: 600 bytes besides the column parameters every frame of a codec with them carries.
  std::uint64_t const small = 600 + zs::params_section_bytes(codec().params_bytes(type()));
  auto const picked = pick_frames(e, b.host_sources(), small, std::uint64_t{1} << 20, 16);
  ASSERT_FALSE(picked.empty()) << "no frame of " << small << " bytes or less among the adversarial inputs";
  frame_set cuts;
  std::vector<target_shape> shapes;
  std::vector<std::pair<std::size_t, std::uint64_t>> cut_of;  // (frame, bytes kept)
  for (bool const on_boundary : {true, false}) {
    for (std::size_t f : picked) {
      for (std::uint64_t keep = 0; keep < e.sizes[f]; ++keep) {
        if ((keep % zs::frame_alignment == 0) != on_boundary) continue;
        cuts.add(e.frame(f), keep);
        shapes.push_back(target_shape::of(b.host_sources()[f]));
        cut_of.emplace_back(f, keep);
      }
    }
  }
  auto const d = decode(codec(), where(), cuts, shapes, stream());
  failure_list failures;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    auto const [f, keep] = cut_of[k];
    std::string const what = b.describe(f) + " (" + std::to_string(e.sizes[f]) + " bytes) cut to " + std::to_string(keep);
    if (d.status[k] != zs::frame_status::truncated) failures.add(what + ": " + std::string(zs::to_string(d.status[k])));
    if (!d.guards_intact(k)) failures.add(what + ": wrote around its target");
    // The CPU reference leaves a refused frame's target as it was (decode_batch::status).
    if (where() == side::cpu && !d.target_untouched(k)) failures.add(what + ": wrote its target");
  }
  failures.report(std::to_string(cuts.size()) + " truncated frames");
}

// Flipping any one bit of a frame is caught (by a checksum, mostly) or changes nothing the
// decoder gives back; intact copies between the flipped ones still decode. With both checksums
// recomputed after the flip, the codec's own checks decide: no status is required then, but the
// GPU gives the CPU's statuses and values, and nothing around a target is written.
TEST_P(Conformance, BitFlipsAreRefusedOrChangeNothing) {
  staged_batch const b = stage(adversarial_columns(type()));
  encoded_frames const e = encode(codec(), where(), b, stream());
  // Targets of at most 2 KiB: a frame takes up to 2,000 flipped copies, each with its target.
  auto const picked = pick_frames(e, b.host_sources(), UINT64_MAX, 2048, 8);
  ASSERT_FALSE(picked.empty());
  frame_set flipped, resealed;
  std::vector<target_shape> shapes;
  std::vector<std::pair<std::size_t, std::int64_t>> flip_of;  // (frame, bit; -1 for an intact copy)
  for (std::size_t f : picked) {
    auto const frame = e.frame(f);
    std::uint64_t const bits = 8 * frame.size();
    std::vector<std::uint64_t> chosen;
    if (bits <= 2000) {
      for (std::uint64_t bit = 0; bit < bits; ++bit) chosen.push_back(bit);
    } else {  // every header bit, and the rest spread over the payload
      for (std::uint64_t bit = 0; bit < 8 * zs::frame_header_bytes; ++bit) chosen.push_back(bit);
      std::uint64_t const header_bits = 8 * zs::frame_header_bytes, rest = 2000 - header_bits;
      for (std::uint64_t k = 0; k < rest; ++k) chosen.push_back(header_bits + k * (bits - header_bits) / rest);
    }
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      if (k % 64 == 0) {
        flipped.add_in_slot(frame);
        resealed.add_in_slot(frame);
        shapes.push_back(target_shape::of(b.host_sources()[f]));
        flip_of.emplace_back(f, -1);
      }
      std::vector<std::byte> copy(frame.begin(), frame.end());
      copy[chosen[k] / 8] ^= static_cast<std::byte>(1U << (chosen[k] % 8));
      flipped.add_in_slot(copy);
      reseal(copy);
      resealed.add_in_slot(copy);
      shapes.push_back(target_shape::of(b.host_sources()[f]));
      flip_of.emplace_back(f, static_cast<std::int64_t>(chosen[k]));
    }
  }
  auto describe = [&](std::size_t k) {
    auto const [f, bit] = flip_of[k];
    return b.describe(f) + (bit < 0 ? std::string(", intact copy") : ", bit " + std::to_string(bit) + " flipped");
  };

  auto const d = decode(codec(), where(), flipped, shapes, stream());
  failure_list failures;
  for (std::size_t k = 0; k < flipped.size(); ++k) {
    std::size_t const f = flip_of[k].first;
    bool const intact = flip_of[k].second < 0;
    if (intact || d.status[k] == zs::frame_status::ok) {
      if (auto const r = decoded_as(d, k, b.host_sources()[f]); !r) failures.add(describe(k) + ": " + r.message());
    } else {
      if (!d.guards_intact(k)) failures.add(describe(k) + ": wrote around its target");
      if (where() == side::cpu && !d.target_untouched(k)) failures.add(describe(k) + ": refused, but wrote its target");
    }
  }
  failures.report(std::to_string(flipped.size()) + " frames with a bit flipped");

  auto const r = decode(codec(), where(), resealed, shapes, stream());
  std::optional<decoded_frames> cpu;
  if (where() == side::gpu) cpu = decode(codec(), side::cpu, resealed, shapes, stream());
  failure_list resealed_failures;
  for (std::size_t k = 0; k < resealed.size(); ++k) {
    if (!r.guards_intact(k)) resealed_failures.add(describe(k) + ", resealed: wrote around its target");
    if (where() == side::cpu && r.status[k] != zs::frame_status::ok && !r.target_untouched(k)) {
      resealed_failures.add(describe(k) + ", resealed: refused, but wrote its target");
    }
    // Both sides must refuse the same frames; which check fires first may differ (the GPU
    // bitpack decoder checks a frame's layout before the checksum it sums while decoding).
    bool const gpu_ok = r.status[k] == zs::frame_status::ok;
    if (cpu && (cpu->status[k] == zs::frame_status::ok) != gpu_ok) {
      resealed_failures.add(describe(k) + ", resealed: " + std::string(zs::to_string(r.status[k])) + " on the GPU, " +
                            std::string(zs::to_string(cpu->status[k])) + " on the CPU");
    } else if (cpu && r.status[k] == zs::frame_status::ok && !same_decoded(r, *cpu, k, shapes[k].type)) {
      resealed_failures.add(describe(k) + ", resealed: decodes to other values on the GPU than on the CPU");
    }
  }
  resealed_failures.report(std::to_string(resealed.size()) + " frames with a bit flipped and checksums recomputed");
}

// The seeds fuzz/make_seeds.cpp writes for fuzz_decode_<codec>: CPU frames of slices of every real
// column of the type (at its start and its middle, of lengths around block sizes), and for raw the
// crafted frames whose sizes wrap. Each is decoded alone, with exactly its bytes, into the target
// the fuzzer gives it: the slices decode to their values, and every seed gets the CPU's status.
TEST_P(Conformance, FuzzSeedsDecodeAsOnTheCpu) {
  std::string why;
  auto const folder = data_folder(why);
  if (!folder) GTEST_SKIP() << why;
  std::vector<test_column> slices;
  for (auto const& r : real_columns(*folder, type())) {
    for (std::uint64_t rows : seed_slice_rows(type())) {
      for (std::uint64_t begin : {std::uint64_t{0}, r.source->rows / 2}) {
        if (begin + rows > r.source->rows) continue;
        zs::column c = begin == 0 ? slice(r.head, 0, rows) : slice(r.middle, 0, rows);
        if (c.size() != rows) continue;  // the head was cut shorter than the slice
        slices.push_back({r.name + "-" + std::to_string(begin) + "-" + std::to_string(rows), std::move(c), {rows}});
      }
    }
  }
  // Seeds are CPU frames whatever the side that decodes them.
  staged_batch const b = stage(std::move(slices), side::cpu);
  encoded_frames const e = encode(codec(), side::cpu, b, stream());
  frame_set seeds;
  std::vector<target_shape> shapes;
  std::vector<std::string> names;
  for (std::size_t f = 0; f < e.frames(); ++f) {
    seeds.add(e.frame(f), e.sizes[f]);
    shapes.push_back(fuzz_target_shape(e.frame(f)));
    names.push_back(b.column_at(f).name);
  }
  if (codec().id() == zs::codec_id::raw) {
    std::vector<std::pair<std::string, std::vector<std::byte>>> crafted;
    if (type() == zs::value_type::string) {
      crafted.emplace_back("strings-offsets-wrap", crafted_raw_frame(type(), (std::uint64_t{1} << 61) - 1, 8, 8));
      crafted.emplace_back("strings-empty", crafted_raw_frame(type(), 0, 0, 8));
    }
    if (type() == zs::value_type::int64) {
      crafted.emplace_back("int64-count-wraps", crafted_raw_frame(type(), (std::uint64_t{1} << 61) + 1, 8, 8));
    }
    for (auto const& [name, frame] : crafted) {
      seeds.add(frame, frame.size());
      shapes.push_back(fuzz_target_shape(frame));
      names.push_back(name);
    }
  }
  if (seeds.size() == 0) GTEST_SKIP() << "no seed of " << zs::to_string(type()) << " for this codec";

  auto const d = decode(codec(), where(), seeds, shapes, stream());
  std::optional<decoded_frames> cpu;
  if (where() == side::gpu) cpu = decode(codec(), side::cpu, seeds, shapes, stream());
  failure_list failures;
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    if (!d.guards_intact(k)) failures.add(names[k] + ": wrote around its target");
    if (k < e.frames()) {
      if (auto const r = decoded_as(d, k, b.host_sources()[k]); !r) failures.add(names[k] + ": " + r.message());
    } else if (where() == side::cpu && d.status[k] != zs::frame_status::ok && !d.target_untouched(k)) {
      failures.add(names[k] + ": refused, but wrote its target");
    }
    if (cpu && cpu->status[k] != d.status[k]) {
      failures.add(names[k] + ": " + std::string(zs::to_string(d.status[k])) + " on the GPU, " +
                   std::string(zs::to_string(cpu->status[k])) + " on the CPU");
    }
  }
  failures.report(std::to_string(seeds.size()) + " fuzz seeds");
}

// A frame decoded against a target of another type, another count or other characters, by
// another registered codec, or carrying another codec id, gets the status docs/FORMAT.md gives
// ("Validation": the first failing check), on either side; the right target still decodes.
TEST_P(Conformance, OtherTypesCountsAndCodecsGetTheirStatus) {
  using zs::frame_status;
  std::vector<test_column> columns;
  columns.push_back({"300 values", pattern_column(type()), {0, 1, 299}});
  staged_batch const b = stage(std::move(columns));
  encoded_frames const e = encode(codec(), where(), b, stream());
  auto const sources = b.host_sources();
  // Frames of a codec with column parameters are format version 2, and a decoder expects them
  // exactly where the codec has parameters for the target's type: else the version is wrong.
  auto const version_differs = [](const zs::codec& decoder, std::span<const std::byte> frame, zs::value_type t) {
    bool const has_params = zs::load_header(frame.data()).version != zs::frame_version;
    return has_params != (decoder.params_bytes(t) != 0);
  };

  frame_set frames;
  std::vector<target_shape> shapes;
  std::vector<frame_status> expected;
  std::vector<std::string> what;
  auto expect = [&](std::size_t f, target_shape shape, frame_status status, std::string description) {
    frames.add_in_slot(e.frame(f));
    shapes.push_back(shape);
    expected.push_back(status);
    what.push_back(b.describe(f) + ", " + description);
  };
  for (std::size_t f = 0; f < e.frames(); ++f) {
    target_shape const right = target_shape::of(sources[f]);
    expect(f, right, frame_status::ok, "the right target");
    for (zs::value_type other : every_value_type) {
      if (other == type()) continue;
      target_shape shape{other, right.count, 0};
      if (other == zs::value_type::string) shape.chars_bytes = sources[f].raw_bytes();
      expect(f, shape, version_differs(codec(), e.frame(f), other) ? frame_status::bad_version : frame_status::type_mismatch,
             "decoded as " + std::string(zs::to_string(other)));
    }
    expect(f, {type(), right.count + 1, right.chars_bytes}, frame_status::count_mismatch, "one value more");
    if (right.count != 0) {
      expect(f, {type(), right.count - 1, right.chars_bytes}, frame_status::count_mismatch, "one value fewer");
    }
    if (type() == zs::value_type::string) {
      expect(f, {type(), right.count, right.chars_bytes + 1}, frame_status::size_mismatch, "one character more");
    }
    // The codec id rewritten, the header resealed: ids this codec does not decode, and ids past
    // the last a frame may carry.
    for (unsigned id = 0; id < 256; ++id) {
      bool const beyond = id > zs::max_codec_id;
      if (!beyond && (codec().decodes() & (1U << id)) != 0) continue;
      if (beyond && id != zs::max_codec_id + 1U && id != 255) continue;
      std::vector<std::byte> copy(e.frame(f).begin(), e.frame(f).end());
      zs::frame_header h = zs::load_header(copy.data());
      h.codec = static_cast<zs::codec_id>(id);
      zs::store_header(h, copy.data());
      frames.add_in_slot(copy);
      shapes.push_back(right);
      expected.push_back(beyond ? frame_status::unknown_codec : frame_status::wrong_codec);
      what.push_back(b.describe(f) + ", codec id rewritten to " + std::to_string(id));
    }
  }
  auto const d = decode(codec(), where(), frames, shapes, stream());
  for (std::size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(d.status[k], expected[k]) << what[k] << ": " << zs::to_string(d.status[k]) << ", expected "
                                        << zs::to_string(expected[k]);
    EXPECT_TRUE(d.guards_intact(k)) << what[k] << ": wrote around its target";
    if (where() == side::cpu && expected[k] != frame_status::ok) {
      EXPECT_TRUE(d.target_untouched(k)) << what[k] << ": refused, but wrote its target";
    }
  }
  EXPECT_TRUE(decoded_as(d, 0, sources[0]));

  // Every other registered codec decodes these frames only where it accepts their codec id
  // (codec::decodes) and encodes their type, and then to the same values.
  auto const all = frame_set::of_batch(e);
  auto const right_shapes = shapes_of(sources);
  for (const zs::codec* other : zs::all_codecs()) {
    if (other == &codec()) continue;
    auto const o = decode(*other, where(), all, right_shapes, stream());
    for (std::size_t f = 0; f < e.frames(); ++f) {
      zs::frame_header const h = zs::load_header(e.frame(f).data());
      frame_status const want = version_differs(*other, e.frame(f), type())       ? frame_status::bad_version
                                : (zs::codec_bit(h.codec) & other->decodes()) == 0 ? frame_status::wrong_codec
                                : !other->supports(type())                       ? frame_status::unsupported_type
                                                                                 : frame_status::ok;
      std::string const who = b.describe(f) + " decoded by codec '" + std::string(other->name()) + "'";
      EXPECT_EQ(o.status[f], want) << who << ": " << zs::to_string(o.status[f]) << ", expected " << zs::to_string(want);
      if (want == frame_status::ok) {
        EXPECT_TRUE(decoded_as(o, f, sources[f])) << who;
      }
      EXPECT_TRUE(o.guards_intact(f)) << who << ": wrote around its target";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, Conformance, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<suite_case>& info) { return case_name(info.param); });

}  // namespace
