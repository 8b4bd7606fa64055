// The codec-neutral warp tools (kernels/common/warp_tools.hpp) on their own, run on the CPU by
// an emulated warp (warp_emulator.hpp): reductions and scans against serial folds over the
// lanes, the checksum-term helpers against zs::hash::checksum, and the copies of payload ranges
// against word-by-word copies. Each codec's programs are checked through them elsewhere
// (warp_programs_test.cpp for bitpack); here a wrong tool fails by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/warp_tools.hpp"
#include "warp_emulator.hpp"
#include "zs/hash.hpp"

namespace {

namespace wt = zs::kernels::warp;
using emu = zs::test::warp_emulator;
using lanes_of = std::array<std::uint64_t, wt::warp_lanes>;

// --- reductions and scans --------------------------------------------------------------------

/// Values for the 32 lanes, as T: all lanes equal (at the type's extremes, zero and at random),
/// the extremes alternating or in one lane among random values, and random values over the whole
/// range or a narrow one, ascending or not.
template <typename T>
std::vector<std::array<T, wt::warp_lanes>> lane_patterns(std::uint64_t seed) {
  using limits = std::numeric_limits<T>;
  using values = std::array<T, wt::warp_lanes>;
  std::mt19937_64 rng(seed);
  auto const random = [&] { return static_cast<T>(rng()); };
  std::vector<values> out;
  for (T const v : {T{0}, T{1}, limits::min(), limits::max(), random()}) {
    values all;
    all.fill(v);
    out.push_back(all);
  }
  values alternating;
  for (unsigned l = 0; l < wt::warp_lanes; ++l) alternating[l] = l % 2 == 0 ? limits::min() : limits::max();
  out.push_back(alternating);
  for (unsigned const lane : {0U, 1U, 15U, 16U, 30U, 31U}) {
    for (T const extreme : {limits::min(), limits::max()}) {
      values one;
      for (auto& v : one) v = random();
      one[lane] = extreme;
      out.push_back(one);
    }
  }
  for (int i = 0; i < 40; ++i) {
    values mixed;
    for (auto& v : mixed) v = random();
    out.push_back(mixed);
  }
  for (int i = 0; i < 20; ++i) {
    values narrow;
    // In the unsigned type: a signed sum past the top would be undefined.
    using unsigned_t = std::make_unsigned_t<T>;
    auto const base = static_cast<unsigned_t>(random());
    for (auto& v : narrow) v = static_cast<T>(static_cast<unsigned_t>(base + rng() % 5));
    out.push_back(narrow);
    std::sort(narrow.begin(), narrow.end());
    out.push_back(narrow);
  }
  return out;
}

/// Every lane's result of warp_min, warp_max (and, for unsigned T, warp_sum and inclusive_sum)
/// against the serial fold; sums wrap modulo 2^(8 sizeof(T)), as on the GPU.
template <typename T>
void expect_reductions_match_serial_folds(std::uint64_t seed) {
  constexpr bool sums = std::is_unsigned_v<T>;  // the sums of signed values could overflow
  struct lanes_case {
    std::array<T, wt::warp_lanes> v, min, max, sum, prefix;
  };
  std::vector<lanes_case> cases;
  for (auto const& v : lane_patterns<T>(seed)) cases.push_back({v, {}, {}, {}, {}});
  emu::run(cases.size(), 0, [&](emu::warp& w, std::uint64_t u, std::byte*) {
    lanes_case& c = cases[u];
    T const mine = c.v[w.lane];
    c.min[w.lane] = wt::warp_min(w, mine);
    c.max[w.lane] = wt::warp_max(w, mine);
    if constexpr (sums) {
      c.sum[w.lane] = wt::warp_sum(w, mine);
      c.prefix[w.lane] = wt::inclusive_sum(w, mine);
    }
  }, [](emu::warp&) {});
  for (std::size_t u = 0; u < cases.size(); ++u) {
    lanes_case const& c = cases[u];
    T const least = *std::min_element(c.v.begin(), c.v.end());
    T const greatest = *std::max_element(c.v.begin(), c.v.end());
    T total = 0;
    if constexpr (sums) {
      for (unsigned l = 0; l < wt::warp_lanes; ++l) total = static_cast<T>(total + c.v[l]);
    }
    T running = 0;
    for (unsigned l = 0; l < wt::warp_lanes; ++l) {
      ASSERT_EQ(c.min[l], least) << "case " << u << ", lane " << l;
      ASSERT_EQ(c.max[l], greatest) << "case " << u << ", lane " << l;
      if constexpr (sums) {
        running = static_cast<T>(running + c.v[l]);
        ASSERT_EQ(c.sum[l], total) << "case " << u << ", lane " << l;
        ASSERT_EQ(c.prefix[l], running) << "case " << u << ", lane " << l;
      }
    }
  }
}

// 32-bit unsigned values take the warp's one-step reductions; the others go over shuffles.
TEST(WarpTools, ReductionsAndScansOfUnsigned32BitValuesMatchSerialFolds) {
  expect_reductions_match_serial_folds<std::uint32_t>(1);
}
TEST(WarpTools, ReductionsAndScansOfUnsigned64BitValuesMatchSerialFolds) {
  expect_reductions_match_serial_folds<std::uint64_t>(2);
}
TEST(WarpTools, MinimaAndMaximaOfSignedValuesMatchSerialFolds) {
  expect_reductions_match_serial_folds<std::int32_t>(3);
  expect_reductions_match_serial_folds<std::int64_t>(4);
}

// --- picking and carrying --------------------------------------------------------------------

// for_each_picked tests 32 units a round: ranges shorter and longer than a round, starting off
// a multiple of 32, with none, some and all units picked.
TEST(WarpTools, ForEachPickedVisitsExactlyThePickedUnitsInOrder) {
  struct pick_case {
    std::uint64_t begin, end;
    std::uint32_t every;  // unit s is picked where its hash % every == 0 (1: all)
    bool none;
    std::array<std::vector<std::uint64_t>, wt::warp_lanes> visited;
  };
  auto const picked = [](const pick_case& c, std::uint64_t s) {
    return !c.none && zs::hash::mix64(s) % c.every == 0;
  };
  std::vector<pick_case> cases;
  for (std::uint64_t const begin : {0ULL, 5ULL, 32ULL, 1000ULL}) {
    for (std::uint64_t const length : {0ULL, 1ULL, 31ULL, 32ULL, 33ULL, 100ULL}) {
      for (std::uint32_t const every : {1U, 2U, 7U}) {
        for (bool const none : {false, true}) cases.push_back({begin, begin + length, every, none, {}});
      }
    }
  }
  emu::run(cases.size(), 0, [&](emu::warp& w, std::uint64_t u, std::byte*) {
    pick_case& c = cases[u];
    wt::for_each_picked(w, c.begin, c.end, [&](std::uint64_t s) { return picked(c, s); },
                        [&](std::uint64_t s) { c.visited[w.lane].push_back(s); });
  }, [](emu::warp&) {});
  for (pick_case const& c : cases) {
    std::vector<std::uint64_t> want;
    for (std::uint64_t s = c.begin; s < c.end; ++s) {
      if (picked(c, s)) want.push_back(s);
    }
    for (unsigned l = 0; l < wt::warp_lanes; ++l) {
      ASSERT_EQ(c.visited[l], want) << "[" << c.begin << ", " << c.end << "), every " << c.every << ", none "
                                    << c.none << ", lane " << l;
    }
  }
}

// The carrier sums each lane's terms over a run of units of one frame and adds the warp's sum
// when the warp leaves the frame or flushes; frames may be revisited after others.
TEST(WarpTools, SumCarrierAddsEveryLanesTermsToTheirFrame) {
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> frames = {0, 0, 0, 3, 3, 1, 4, 4, 4, 4, 0, 2};
  std::vector<lanes_of> terms(frames.size());
  std::array<std::uint64_t, 5> want{}, got{};
  for (std::size_t i = 0; i < frames.size(); ++i) {
    for (auto& t : terms[i]) {
      t = rng();
      want[frames[i]] += t;
    }
  }
  emu::run(1, 0, [&](emu::warp& w, std::uint64_t, std::byte*) {
    wt::sum_carrier carrier;
    for (std::size_t i = 0; i < frames.size(); ++i) carrier.add(w, got.data(), frames[i], terms[i][w.lane]);
    carrier.flush(w, got.data());
    carrier.flush(w, got.data());  // a second flush adds nothing
  }, [](emu::warp&) {});
  EXPECT_EQ(got, want);
}

// with_flags instantiates the body once per combination and runs the one its flags name.
TEST(WarpTools, WithFlagsRunsTheBodyForItsFlags) {
  for (bool const a : {false, true}) {
    for (bool const b : {false, true}) {
      bool ran_a = !a, ran_b = !b;
      auto body = [&]<bool A, bool B>() {
        ran_a = A;
        ran_b = B;
      };
      wt::with_flags(a, b, body);
      EXPECT_EQ(ran_a, a);
      EXPECT_EQ(ran_b, b);
    }
  }
}

// --- checksum terms of payload ranges --------------------------------------------------------

/// How a warp adds up the checksum terms of a payload range, each helper as its callers use it.
enum class term_helper {
  emit_then_seam,     // emit_range writes the range; seam_term adds the straddling term after
  range_sum,          // from word(q), and the word after the range
  buffer_sum,         // from a buffer that holds the range and the word after it
  copy_with_after,    // copy_range<8>, given the word after the range
  copy_then_seam,     // copy_range<16> without it; seam_term adds the straddling term after
  staged_with_after,  // copy_staged, given the word after the range
  staged_then_seam,   // copy_staged without it
};
constexpr std::array all_term_helpers = {term_helper::emit_then_seam,   term_helper::range_sum,
                                         term_helper::buffer_sum,       term_helper::copy_with_after,
                                         term_helper::copy_then_seam,   term_helper::staged_with_after,
                                         term_helper::staged_then_seam};
const char* name_of(term_helper h) {
  switch (h) {
    case term_helper::emit_then_seam: return "emit_range + seam_term";
    case term_helper::range_sum: return "range_sum";
    case term_helper::buffer_sum: return "buffer_sum";
    case term_helper::copy_with_after: return "copy_range with the word after";
    case term_helper::copy_then_seam: return "copy_range + seam_term";
    case term_helper::staged_with_after: return "copy_staged with the word after";
    case term_helper::staged_then_seam: return "copy_staged + seam_term";
  }
  return "?";
}

/// A payload of `bytes` bytes, as T 32-bit words (the last one zero-padded, and a zero word
/// after an odd T: the 64-bit words of zs-sum64), split into three ranges [0, A), [A, B),
/// [B, T) that the warp sums one after the other, as three warps owning them would.
struct split_case {
  std::uint32_t bytes;
  std::uint64_t A, B, T;
  term_helper helper;
  std::vector<wt::word4> source, target;  // whole 16-byte chunks, with spares after the payload
  std::uint64_t sum = 0;                  // every lane adds its terms here

  const std::uint32_t* source_words() const { return reinterpret_cast<const std::uint32_t*>(source.data()); }
  std::uint32_t* target_words() { return reinterpret_cast<std::uint32_t*>(target.data()); }
};

/// This lane's terms of [a, b) through the case's helper; the target receives the range's words.
template <class Warp>
std::uint64_t lane_terms(Warp& w, split_case& c, std::uint64_t a, std::uint64_t b, std::byte* smem) {
  const std::uint32_t* src = c.source_words();
  std::uint32_t* dst = c.target_words();
  auto const n = static_cast<std::uint32_t>(b - a);
  auto const word = [&](std::uint64_t q) { return src[a + q]; };
  std::uint32_t const after = b < c.T ? src[b] : 0;
  auto* ring = reinterpret_cast<wt::word4*>(smem);
  switch (c.helper) {
    case term_helper::emit_then_seam: return wt::emit_range(w, dst, a, b, c.T, word);
    case term_helper::range_sum: return wt::range_sum(w, a, b, after, [&](std::uint32_t q) { return src[a + q]; });
    case term_helper::buffer_sum: return wt::buffer_sum(w, src + (a & ~std::uint64_t{1}), a & ~std::uint64_t{1}, a, b);
    case term_helper::copy_with_after: return wt::copy_range<8>(w, src + a, n, dst + a, a, c.T, src + b);
    case term_helper::copy_then_seam: return wt::copy_range<16>(w, src + a, n, dst + a, a, c.T, nullptr);
    case term_helper::staged_with_after: return wt::copy_staged(w, src + a, n, dst + a, a, c.T, src + b, ring);
    case term_helper::staged_then_seam: return wt::copy_staged(w, src + a, n, dst + a, a, c.T, nullptr, ring);
  }
  return 0;
}

bool writes_target(term_helper h) { return h != term_helper::range_sum && h != term_helper::buffer_sum; }
bool leaves_seams(term_helper h) {
  return h == term_helper::emit_then_seam || h == term_helper::copy_then_seam || h == term_helper::staged_then_seam;
}

// Payloads of 0 to 200 bytes, split at several word indexes (even and odd, at both ends and in
// the middle, ranges empty and of one word): every helper's terms over the three ranges, plus
// the seams where the helper leaves them, finish to zs::hash::checksum of the bytes.
TEST(WarpTools, ChecksumTermsOfSplitRangesAddUpToTheChecksum) {
  constexpr std::uint32_t garbage = 0xeeeeeeeeU;
  std::mt19937 rng(11);
  std::vector<split_case> cases;
  std::vector<std::uint64_t> want;
  for (std::uint32_t bytes = 0; bytes <= 200; ++bytes) {
    std::vector<std::byte> payload(bytes);
    for (auto& b : payload) b = static_cast<std::byte>(rng());
    std::uint64_t const T = (bytes + 3) / 4;
    std::vector<wt::word4> source((T + 8) / 4 + 2, wt::word4{0, 0, 0, 0});
    if (bytes != 0) std::memcpy(source.data(), payload.data(), bytes);  // little-endian words, zero-padded
    std::uint64_t const checksum = zs::hash::checksum(payload.data(), bytes);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> splits;
    for (std::uint64_t const A : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, T / 2,
                                  T == 0 ? 0 : T - 1}) {
      for (std::uint64_t const B : {A, A + 1, A + 2, A + 3, A + 9, T == 0 ? 0 : T - 1, T}) {
        if (A <= B && B <= T) splits.emplace_back(A, B);
      }
    }
    std::sort(splits.begin(), splits.end());
    splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
    for (auto const& [A, B] : splits) {
      for (term_helper const helper : all_term_helpers) {
        cases.push_back({bytes, A, B, T, helper, source,
                         std::vector<wt::word4>(source.size(), wt::word4{garbage, garbage, garbage, garbage})});
        want.push_back(checksum);
      }
    }
  }
  emu::run(cases.size(), wt::staged_copy_bytes, [&](emu::warp& w, std::uint64_t u, std::byte* smem) {
    split_case& c = cases[u];
    std::uint64_t const bounds[4] = {0, c.A, c.B, c.T};
    std::uint64_t mine = 0;
    for (int r = 0; r < 3; ++r) mine += lane_terms(w, c, bounds[r], bounds[r + 1], smem);
    w.sync();  // every range's words are in the target: the seams read across them
    if (leaves_seams(c.helper) && w.lane == 0) {
      for (int r = 0; r < 3; ++r) mine += wt::seam_term(c.target_words(), bounds[r], bounds[r + 1], c.T);
    }
    w.add(&c.sum, mine);
  }, [](emu::warp&) {});
  for (std::size_t u = 0; u < cases.size(); ++u) {
    split_case& c = cases[u];
    std::string const what = std::string(name_of(c.helper)) + ", " + std::to_string(c.bytes) + " bytes, split at " +
                             std::to_string(c.A) + " and " + std::to_string(c.B) + " of " + std::to_string(c.T) +
                             " words";
    ASSERT_EQ(zs::hash::finish(c.sum, c.bytes), want[u]) << what;
    if (!writes_target(c.helper)) continue;
    for (std::uint64_t q = 0; q < 4 * c.target.size(); ++q) {
      ASSERT_EQ(c.target_words()[q], q < c.T ? c.source_words()[q] : garbage) << what << ", target word " << q;
    }
  }
}

// --- copies of payload ranges ----------------------------------------------------------------

// The two copies (copy_range, through registers; copy_staged, through the ring) against a
// word-by-word copy and the checksum terms the range owns, for ranges of every length up to a
// few ring stages, at every source and target position within 16 bytes, ending inside the
// payload (with and without the word after it) or at its end.
TEST(WarpTools, CopiesWriteTheRangeAndHashTheTermsItOwns) {
  constexpr std::uint32_t stage_words = 4 * wt::stage_chunks;
  struct copy_case {
    std::uint32_t n, s;
    std::uint64_t A, T;
    int end;       // 0: the payload ends with the range; 1: the word after it is *after; 2: a seam
    bool staged;   // copy_staged, else copy_range
    std::vector<wt::word4> pool, payload;  // the pool's 16-byte chunks around the range are read
    std::uint64_t want = 0, got = 0;
    std::uint32_t* src() { return reinterpret_cast<std::uint32_t*>(pool.data() + 1) + s; }
    std::uint32_t* words() { return reinterpret_cast<std::uint32_t*>(payload.data()); }
  };
  std::uint32_t const after_word = 0x5eed5eedU;
  std::vector<std::uint32_t> lengths;
  for (std::uint32_t n = 0; n <= 12; ++n) lengths.push_back(n);
  for (std::uint32_t n : {31U, 129U, stage_words - 3, stage_words + 5, 3 * stage_words + 2, 5 * stage_words + 7}) {
    lengths.push_back(n);
  }
  std::mt19937 rng(7);
  std::vector<copy_case> cases;
  for (std::uint32_t n : lengths) {
    for (std::uint32_t s = 0; s < 4; ++s) {        // the source's word within 16 bytes
      for (std::uint64_t A = 0; A < 8; ++A) {      // the range's first payload word
        for (int end = 0; end < 3; ++end) {
          for (bool staged : {false, true}) {
            copy_case c{n, s, A, A + n + (end == 0 ? 0 : 3), end, staged, {}, {}};
            c.pool.resize((s + n + 3) / 4 + 2);
            for (auto& w : c.pool) w = {static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()),
                                        static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
            c.payload.assign((c.T + 3) / 4 + 2, wt::word4{0xeeeeeeeeU, 0xeeeeeeeeU, 0xeeeeeeeeU, 0xeeeeeeeeU});
            const std::uint32_t* src = c.src();
            for (std::uint64_t q = A + (A & 1); q < A + n; q += 2) {  // the terms the range owns
              std::uint64_t hi = 0;
              if (q + 1 < A + n) {
                hi = src[q + 1 - A];
              } else if (end == 1) {
                hi = after_word;
              } else if (end == 2) {
                continue;
              }
              c.want += zs::hash::term(q / 2, src[q - A] | (hi << 32));
            }
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
  emu::run(cases.size(), wt::staged_copy_bytes, [&](emu::warp& w, std::uint64_t u, std::byte* smem) {
    copy_case& c = cases[u];
    const std::uint32_t* after = c.end == 1 ? &after_word : nullptr;
    std::uint64_t const mine =
        c.staged ? wt::copy_staged(w, c.src(), c.n, c.words() + c.A, c.A, c.T, after, reinterpret_cast<wt::word4*>(smem))
                 : wt::copy_range<16>(w, c.src(), c.n, c.words() + c.A, c.A, c.T, after);
    std::uint64_t const sum = wt::warp_sum(w, mine);
    if (w.lane == 0) c.got = sum;
  }, [](emu::warp&) {});
  for (copy_case& c : cases) {
    std::string const what = std::string(c.staged ? "copy_staged" : "copy_range") + ", n " + std::to_string(c.n) +
                             ", source word " + std::to_string(c.s) + ", A " + std::to_string(c.A) + ", end " +
                             std::to_string(c.end);
    ASSERT_EQ(c.got, c.want) << what;
    for (std::uint64_t q = 0; q < 4 * c.payload.size(); ++q) {
      std::uint32_t const expect = q >= c.A && q < c.A + c.n ? c.src()[q - c.A] : 0xeeeeeeeeU;
      ASSERT_EQ(c.words()[q], expect) << what << ", payload word " << q;
    }
  }
}

}  // namespace
