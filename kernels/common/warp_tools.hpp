// Warp tools for the GPU codecs: what a codec's warp programs are written against, and the
// codec-neutral pieces they share (reductions and scans over the lanes, the checksum terms of
// payload ranges, copies of payload ranges through registers or a ring of asynchronous copies).
//
// A warp program is a function template over a Warp, its lane's handle on the warp, written
// once for two executors: the CUDA one (common/cuda_warp.cuh) and a CPU emulation of a warp
// (tests/codecs/warp_emulator.hpp), which runs the very same programs with one coroutine per
// lane so that CI checks the GPU logic. A Warp has:
//   unsigned lane;                               0..31
//   void sync();                                 __syncwarp: lanes meet, shared memory settles
//   T shfl(v, src), shfl_up(v, d), shfl_down(v, d), shfl_xor(v, m)
//                                                u32 and u64; up/down give a lane its own value
//                                                where the source lane is outside the warp
//   bool any(p)                                  whether p holds in any lane (a vote: one step,
//                                                where a reduction over shuffles takes five)
//   u32 ballot(p)                                bit l: whether p holds in lane l
//   u32 reduce_min(v), reduce_max(v), reduce_add(v)
//                                                the least, the greatest and the sum (modulo
//                                                2^32) of v over the lanes (one step, likewise)
//   copy4(dst, src), copy16(dst, src)            this lane's asynchronous copy of 4 or 16 bytes
//                                                (a word4) from global to shared memory
//   commit();                                    closes this lane's group of copies
//   wait_copies(pending);                        waits until at most `pending` of this lane's
//                                                latest groups are in flight, then sync()
//   load_status(p), store_status(p, s)           frame statuses, which other warps may write
//   void add(std::uint64_t* p, std::uint64_t v)  atomic add (checksum sums)
// Shared memory is handed in by the executor, one region per warp. The tools that take a Warp
// are called by every lane of the warp together (they shuffle or meet); the others are plain
// functions of one thread.
//
// Functions that run on both sides are ZS_HD (zs/hd.hpp); those that take a Warp are
// ZS_WARP_FN, device code under nvcc and plain functions for the emulator. ZS_UNROLL asks nvcc
// to unroll the loop it precedes, ZS_UNROLL_4 to unroll it four times (for long bodies, whose
// full unrolling would outgrow the instruction cache); the CPU build ignores both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "zs/frame.hpp"
#include "zs/hash.hpp"
#include "zs/hd.hpp"

#if defined(__CUDACC__)
#define ZS_WARP_FN __device__
#define ZS_UNROLL _Pragma("unroll")
#define ZS_UNROLL_4 _Pragma("unroll 4")
#else
#define ZS_WARP_FN
#define ZS_UNROLL
#define ZS_UNROLL_4
#endif

namespace zs::kernels::warp {

inline constexpr std::uint32_t warp_lanes = 32;

// --- small helpers ---------------------------------------------------------------------------

template <typename T>
ZS_HD constexpr T min_of(T a, T b) noexcept { return b < a ? b : a; }
template <typename T>
ZS_HD constexpr T max_of(T a, T b) noexcept { return a < b ? b : a; }

template <typename U>
ZS_HD constexpr U sign_bit() noexcept { return U{1} << (8 * sizeof(U) - 1); }

/// 1 where x is not 0, else 0: as a minimum, one instruction the compiler keeps rather than
/// turning it into a compare and a select.
ZS_HD inline std::uint32_t nonzero(std::uint32_t x) noexcept {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm("min.u32 %0, %1, 1;" : "=r"(r) : "r"(x));
  return r;
#else
  return x != 0 ? 1U : 0U;
#endif
}

ZS_HD inline std::uint32_t lowest_bit(std::uint32_t x) noexcept {  // x != 0
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__ffs(static_cast<int>(x))) - 1;
#else
  return static_cast<std::uint32_t>(__builtin_ctz(x));
#endif
}
ZS_HD inline std::uint32_t bit_count(std::uint32_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(x));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(x));
#endif
}

struct alignas(16) word4 {
  std::uint32_t x, y, z, w;
};
struct alignas(8) word2 {
  std::uint32_t x, y;
};

/// The values of a 16-byte chunk into x[first ..].
template <typename U>
ZS_HD inline void unpack_word4(const word4& c, U* x) noexcept {
  if constexpr (sizeof(U) == 4) {
    x[0] = c.x;
    x[1] = c.y;
    x[2] = c.z;
    x[3] = c.w;
  } else {
    x[0] = static_cast<U>(c.x) | (static_cast<U>(c.y) << 32);
    x[1] = static_cast<U>(c.z) | (static_cast<U>(c.w) << 32);
  }
}

template <typename U>
ZS_HD inline bool aligned16(const U* p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0;
}

template <typename U>
ZS_HD inline bool aligned8(const U* p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & 7) == 0;
}

/// Runs f.template operator()<A, B>() with the run-time flags a and b as its template
/// arguments: a loop specialised for each combination, which tests neither flag inside.
template <class F>
ZS_HD inline void with_flags(bool a, bool b, F& f) {
  if (a) {
    if (b) {
      f.template operator()<true, true>();
    } else {
      f.template operator()<true, false>();
    }
  } else if (b) {
    f.template operator()<false, true>();
  } else {
    f.template operator()<false, false>();
  }
}

// --- warp collectives ------------------------------------------------------------------------

/// The least (warp_min) and the greatest (warp_max) of v over the lanes, in every lane: 32-bit
/// unsigned values in one step (a warp reduction), others over shuffles.
template <class Warp, typename T>
ZS_WARP_FN T warp_min(Warp& w, T v) {
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    return w.reduce_min(v);
  } else {
    for (unsigned m = 16; m > 0; m >>= 1) v = min_of(v, w.shfl_xor(v, m));
    return v;
  }
}
template <class Warp, typename T>
ZS_WARP_FN T warp_max(Warp& w, T v) {
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    return w.reduce_max(v);
  } else {
    for (unsigned m = 16; m > 0; m >>= 1) v = max_of(v, w.shfl_xor(v, m));
    return v;
  }
}
/// The sum over the lanes (modulo 2^w), in every lane.
template <class Warp, typename T>
ZS_WARP_FN T warp_sum(Warp& w, T v) {
  for (unsigned m = 16; m > 0; m >>= 1) v = static_cast<T>(v + w.shfl_xor(v, m));
  return v;
}
/// Inclusive prefix sum over the lanes (modulo 2^w).
template <class Warp, typename T>
ZS_WARP_FN T inclusive_sum(Warp& w, T v) {
  for (unsigned d = 1; d < warp_lanes; d <<= 1) {
    T const other = w.shfl_up(v, d);
    if (w.lane >= d) v = static_cast<T>(v + other);
  }
  return v;
}

/// Runs visit(s) on the whole warp for each work unit s (a segment, a tile) of [begin, end), in
/// order, for which pick(s) holds. Lanes test 32 units at once, so a warp spends little on
/// those it skips.
template <class Warp, class Pick, class Visit>
ZS_WARP_FN void for_each_picked(Warp& w, std::uint64_t begin, std::uint64_t end, Pick pick, Visit visit) {
  for (std::uint64_t base = begin; base < end; base += warp_lanes) {
    for (std::uint32_t mask = w.ballot(base + w.lane < end && pick(base + w.lane)); mask != 0; mask &= mask - 1) {
      visit(base + lowest_bit(mask));
    }
  }
}

// --- checksum terms of a range of payload words ----------------------------------------------
// The payload checksum (zs/hash.hpp) adds one term per 64-bit word k, made of the 32-bit words
// 2k and 2k + 1. Warps own ranges [A, B) of 32-bit payload words (of T in all); a range owns
// the 64-bit words whose first half it holds. The second half is then in the range, or is the
// zero padding at T, or, when B is odd and below T, the first word of the next range.

/// Writes words [A, B) of `payload` from word(q), q = index - A, and returns this lane's sum of
/// the terms the range owns, all but the one that straddles B (see seam_term).
template <class Warp, class WordFn>
ZS_WARP_FN std::uint64_t emit_range(Warp& w, std::uint32_t* payload, std::uint64_t A, std::uint64_t B,
                                    std::uint64_t T, WordFn word) {
  std::uint64_t sum = 0;
  for (std::uint64_t k = A / 2 + w.lane; 2 * k < B; k += warp_lanes) {
    std::uint64_t const i = 2 * k;
    std::uint32_t lo = 0, hi = 0;
    if (i >= A) {
      lo = word(i - A);
      payload[i] = lo;
    }
    if (i + 1 < B) {
      hi = word(i + 1 - A);
      payload[i + 1] = hi;
    }
    if (i >= A && (i + 1 < B || i + 1 == T)) sum += hash::term(k, lo | (std::uint64_t{hi} << 32));
  }
  return sum;
}

/// The term straddling the end B of a range [A, B) of a payload of T words, or 0 where none does.
ZS_HD inline std::uint64_t seam_term(const std::uint32_t* payload, std::uint64_t A, std::uint64_t B,
                                     std::uint64_t T) noexcept {
  if (B <= A || B % 2 == 0 || B >= T) return 0;
  return hash::term((B - 1) / 2, payload[B - 1] | (std::uint64_t{payload[B]} << 32));
}

/// This lane's sum of every term the range [A, B) owns, the straddling one included, with
/// word(q) giving word A + q for q < B - A and `after` the word after B (0 at the payload's end).
template <class Warp, class WordFn>
ZS_WARP_FN std::uint64_t range_sum(Warp& w, std::uint64_t A, std::uint64_t B, std::uint32_t after, WordFn word) {
  // Indices relative to A in 32 bits (a range is at most a tile); only term numbers need 64.
  auto const lead = static_cast<std::uint32_t>(A & 1);  // word A: the high half of a term before
  auto const n = static_cast<std::uint32_t>(B - A);
  std::uint64_t const k0 = (A + lead) / 2;
  std::uint64_t sum = 0;
  for (std::uint32_t j = w.lane; lead + 2 * j < n; j += warp_lanes) {
    std::uint32_t const q = lead + 2 * j;
    std::uint32_t const hi = q + 1 < n ? word(q + 1) : after;
    sum += hash::term(k0 + j, word(q) | (std::uint64_t{hi} << 32));
  }
  return sum;
}

/// This lane's sum of every term the range [A, B) owns, the straddling one included, with
/// words[i] holding word C + i (C even, `words` on 8 bytes) through the word after B.
template <class Warp>
ZS_WARP_FN std::uint64_t buffer_sum(Warp& w, const std::uint32_t* words, std::uint64_t C, std::uint64_t A,
                                    std::uint64_t B) {
  std::uint64_t const k0 = (A + 1) / 2;  // an odd A is the high half of a term before
  auto const terms = static_cast<std::uint32_t>((B + 1) / 2 - k0);
  auto const* pairs = reinterpret_cast<const word2*>(words) + (k0 - C / 2);
  std::uint64_t sum = 0;
  // Two terms a round: their hashes are independent, so one's latency hides the other's.
  for (std::uint32_t i = w.lane; i < terms; i += 2 * warp_lanes) {
    word2 const p = pairs[i];
    sum += hash::term(k0 + i, p.x | (std::uint64_t{p.y} << 32));
    if (i + warp_lanes < terms) {
      word2 const q = pairs[i + warp_lanes];
      sum += hash::term(k0 + i + warp_lanes, q.x | (std::uint64_t{q.y} << 32));
    }
  }
  return sum;
}

/// Adds the checksum terms of one work unit into sums[frame]: each lane keeps its own sum while
/// the warp stays in one frame, and the warp adds them up in one atomic when it leaves it. Every
/// lane calls add and flush together.
struct sum_carrier {
  std::uint64_t frame = ~std::uint64_t{0};
  std::uint64_t sum = 0;

  template <class Warp>
  ZS_WARP_FN void add(Warp& w, std::uint64_t* sums, std::uint64_t f, std::uint64_t lane_sum) {
    if (f != frame) flush(w, sums);
    frame = f;
    sum += lane_sum;
  }
  template <class Warp>
  ZS_WARP_FN void flush(Warp& w, std::uint64_t* sums) {
    if (frame == ~std::uint64_t{0}) return;
    std::uint64_t const s = warp_sum(w, sum);
    if (w.lane == 0) w.add(sums + frame, s);
    frame = ~std::uint64_t{0};
    sum = 0;
  }
};

// --- copies of payload ranges, with their checksum terms -------------------------------------

/// How copy_range stores its terms and hashes the one that straddles its end. A term straddles
/// the end of range n words long when its second word is word n: past the payload's end it is
/// zero padding; else it is *after, or, where after is nullptr, a seam the caller adds later
/// (seam_term).
struct term_store {
  std::uint32_t* dst;
  std::uint32_t n;
  bool wide;          // dst + q sits on 8 bytes for every term q: one 8-byte store a term
  bool ends_payload;  // A + n >= T
  const std::uint32_t* after;
};

/// The start of copy_range's copy of words [A, A + n) of a payload of T words to dst: where A
/// is odd, word A is the high half of a term the range before owns, and is copied only; `lead`
/// says so, k0 is the range's first term, `store` how its terms are stored.
struct copy_start {
  std::uint32_t lead;
  std::uint64_t k0;
  term_store store;
};
template <class Warp>
ZS_WARP_FN copy_start start_copy(Warp& w, const std::uint32_t* src, std::uint32_t n, std::uint32_t* dst,
                                 std::uint64_t A, std::uint64_t T, const std::uint32_t* after) {
  auto const lead = static_cast<std::uint32_t>(A & 1);
  if (lead != 0 && w.lane == 0 && n != 0) dst[0] = src[0];
  return {lead, (A + lead) / 2, {dst, n, aligned8(dst + lead), A + n >= T, after}};
}

/// The second word of a term whose first word ends a range, into hi: zero padding where the
/// range ends the payload, else *after; false where after is nullptr (a seam, which the caller
/// adds).
ZS_HD inline bool word_after_range(bool ends_payload, const std::uint32_t* after, std::uint32_t& hi) {
  if (ends_payload) {
    hi = 0;
    return true;
  }
  if (after == nullptr) return false;
  hi = *after;
  return true;
}

/// Stores the term whose first word is word q of the range, lo and hi its words (hi unread where
/// q + 1 == n), and returns hash::term of it as term number k, or 0 for a seam.
ZS_HD inline std::uint64_t store_term(const term_store& ts, std::uint32_t q, std::uint64_t k, std::uint32_t lo,
                                      std::uint32_t hi) {
  if (q + 1 < ts.n) {
    if (ts.wide) {
      *reinterpret_cast<word2*>(ts.dst + q) = word2{lo, hi};
    } else {
      ts.dst[q] = lo;
      ts.dst[q + 1] = hi;
    }
  } else {
    ts.dst[q] = lo;
    if (!word_after_range(ts.ends_payload, ts.after, hi)) return 0;
  }
  return hash::term(k, lo | (std::uint64_t{hi} << 32));
}

/// Copies the n words at `src` (global memory), words [A, A + n) of a payload of T words, to
/// dst[0..n), and returns this lane's sum of the checksum terms that range owns. The term that
/// straddles its end is included when `after` points at the payload word after the range
/// (decoding: src + n), else (nullptr) left to the caller (seam_term). Lane l takes the
/// range's terms l, l + 32, ...: both halves of a term in one lane, so every lane hashes;
/// Regs words a lane per round, all loads of a round issued together, and both words of a term
/// loaded and stored as one 8-byte access where the source or the target sits on 8 bytes (two
/// 4-byte accesses of a warp touch the same sectors twice). Indices are relative to A (32-bit):
/// only the term's number needs 64 bits.
template <unsigned Regs, class Warp>
ZS_WARP_FN std::uint64_t copy_range(Warp& w, const std::uint32_t* src, std::uint32_t n, std::uint32_t* dst,
                                    std::uint64_t A, std::uint64_t T, const std::uint32_t* after) {
  static_assert(Regs % 2 == 0);
  constexpr unsigned pairs = Regs / 2;
  auto const [lead, k0, ts] = start_copy(w, src, n, dst, A, T, after);
  std::uint64_t sum = 0;
  // The kind of loads is fixed per range, as a template argument: tested per load, it took the
  // registers that made the bitpack encoder's pass 2 (80 a thread) spill.
  auto const rounds = [&]<bool WideLoads>() {
    for (std::uint32_t j0 = w.lane; lead + 2 * j0 < n; j0 += warp_lanes * pairs) {
      std::uint32_t lo[pairs], hi[pairs];
ZS_UNROLL
      for (unsigned t = 0; t < pairs; ++t) {
        std::uint32_t const q = lead + 2 * (j0 + warp_lanes * t);
        if (WideLoads && q + 1 < n) {
          word2 const p = *reinterpret_cast<const word2*>(src + q);
          lo[t] = p.x;
          hi[t] = p.y;
        } else {
          lo[t] = q < n ? src[q] : 0;
          hi[t] = q + 1 < n ? src[q + 1] : 0;
        }
      }
ZS_UNROLL
      for (unsigned t = 0; t < pairs; ++t) {
        std::uint32_t const q = lead + 2 * (j0 + warp_lanes * t);
        if (q >= n) break;
        sum += store_term(ts, q, k0 + j0 + warp_lanes * t, lo[t], hi[t]);
      }
    }
  };
  if (aligned8(src + lead)) {
    rounds.template operator()<true>();
  } else {
    rounds.template operator()<false>();
  }
  return sum;
}

/// The hash::term of the words lo, hi, where lo is word j (of n) of a range that starts at
/// payload word A: 0 where j is outside the range; where j + 1 == n, hi is word_after_range
/// (0 for a seam).
ZS_HD inline std::uint64_t end_term(std::int64_t j, std::uint32_t n, std::uint32_t lo, std::uint32_t hi,
                                    std::uint64_t A, bool ends_payload, const std::uint32_t* after) {
  if (j < 0 || j >= n) return 0;
  if (j + 1 == n && !word_after_range(ends_payload, after, hi)) return 0;
  return hash::term((A + static_cast<std::uint64_t>(j)) / 2, lo | (std::uint64_t{hi} << 32));
}
static_assert(frame_alignment % 8 == 0 && frame_header_bytes % 8 == 0,
              "payloads start on 8 bytes: copy_staged takes a target chunk's words as two terms");

/// A copy of a range as copy_range's, but the words travel through `ring`, shared memory of
/// staged_copy_bytes a warp: `stages` stages of `stage_chunks` 16-byte chunks, filled by
/// asynchronous copies, so that stages - 1 stages are on their way while one is hashed and
/// stored, and no registers hold words in flight. Each lane stores whole 16-byte chunks of the
/// target (per word only at the range's two ends), which on the H200 measured 0.5% faster end
/// to end on geoip4_lo than storing 8-byte terms (bench/RESULTS.md, twelfth round; this is the
/// bitpack encoder's pass 2, where every measurement here was taken). Its speed
/// holds where fewer warps fit a SM, or where memory is further away in bytes (the H200).
/// Against 8 stages of 512 B, 4 of 2 KB and 8 of 1 KB, 4 of 1 KB measured as fast as any with
/// every warp, and within 2% of the fastest with fewer, on the H100; on the H200 the larger
/// rings were 2 to 3% slower (bench/RESULTS.md, eighth and ninth rounds). The source's 16-byte
/// chunks around the range are read whole: its buffer must start and end on 16 bytes (the
/// bitpack encoder's pool of pass 1 does).
inline constexpr std::uint32_t stage_chunks = 64;
inline constexpr std::uint32_t stages = 4;
inline constexpr std::size_t staged_copy_bytes = std::size_t{stages} * stage_chunks * 16;
template <class Warp>
ZS_WARP_FN std::uint64_t copy_staged(Warp& w, const std::uint32_t* src, std::uint32_t n, std::uint32_t* dst,
                                     std::uint64_t A, std::uint64_t T, const std::uint32_t* after, word4* ring) {
  constexpr std::uint32_t stage_words = 4 * stage_chunks;
  constexpr std::uint32_t ring_words = stages * stage_words;
  auto const o = static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(src) / 4) % 4);
  auto const* chunks = reinterpret_cast<const word4*>(src - o);
  std::uint32_t const total_chunks = (o + n + 3) / 4;
  std::uint32_t const total_stages = (total_chunks + stage_chunks - 1) / stage_chunks;
  auto const issue = [&](std::uint32_t st) {
    if (st < total_stages) {
      word4* slot = ring + (st % stages) * stage_chunks;
      std::uint32_t const c0 = st * stage_chunks;
      for (std::uint32_t c = w.lane; c < stage_chunks && c0 + c < total_chunks; c += warp_lanes) {
        w.copy16(slot + c, chunks + c0 + c);
      }
    }
    w.commit();
  };
  static_assert((ring_words & (ring_words - 1)) == 0);
  const auto* words = reinterpret_cast<const std::uint32_t*>(ring);
  // Range word j from the ring (j may run past the range: the ring holds whole source chunks).
  auto const word = [&](std::int64_t j) { return words[static_cast<std::uint64_t>(o + j) & (ring_words - 1)]; };
  // The target in whole 16-byte chunks: chunk c holds the range's words [4 c - d_off, + 4), and
  // its two terms are its words (0, 1) and (2, 3): payloads start on 8 bytes.
  auto const d_off = static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(dst) / 4) % 4);
  auto* D = reinterpret_cast<word4*>(dst - d_off);
  std::uint32_t const chunks_out = (d_off + n + 3) / 4;
  bool const ends_payload = A + n >= T;
  std::uint64_t sum = 0;
ZS_UNROLL
  for (std::uint32_t st = 0; st + 1 < stages; ++st) issue(st);
  std::uint32_t c = w.lane;  // this lane's next target chunk
  for (std::uint32_t st = 0; st < total_stages; ++st) {
    w.wait_copies(stages - 2);
    // The chunks whose words have arrived.
    std::int64_t const arrived = std::int64_t{(st + 1) * stage_words} - o;
    bool const last_stage = st + 1 == total_stages;
    for (;; c += warp_lanes) {
      std::int64_t const j0 = std::int64_t{4} * c - d_off;
      if (c >= chunks_out || (!last_stage && j0 + 4 > arrived)) break;
      word4 const v{word(j0), word(j0 + 1), word(j0 + 2), word(j0 + 3)};
      if (j0 >= 0 && j0 + 4 <= n) {
        D[c] = v;
        std::uint64_t const k = (A + static_cast<std::uint64_t>(j0)) / 2;
        sum += hash::term(k, v.x | (std::uint64_t{v.y} << 32)) + hash::term(k + 1, v.z | (std::uint64_t{v.w} << 32));
      } else {  // an end of the range: only its words, and the terms whose first word they hold
        auto* d = reinterpret_cast<std::uint32_t*>(D + c);
        if (j0 >= 0) d[0] = v.x;
        if (j0 + 1 >= 0 && j0 + 1 < n) d[1] = v.y;
        if (j0 + 2 >= 0 && j0 + 2 < n) d[2] = v.z;
        if (j0 + 3 < n) d[3] = v.w;
        sum += end_term(j0, n, v.x, v.y, A, ends_payload, after) + end_term(j0 + 2, n, v.z, v.w, A, ends_payload, after);
      }
    }
    w.sync();  // every lane is done with the oldest stage: it takes the next one
    issue(st + stages - 1);
  }
  return sum;
}

}  // namespace zs::kernels::warp
