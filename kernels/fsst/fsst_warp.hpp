// The fsst decoder's warp programs (common/warp_tools.hpp): a whole warp checks or decodes one
// split, so that a batch of a few thousand splits still fills the GPU, and every lane reads and
// writes neighbouring bytes. The same code runs on the GPU (kernels/fsst/fsst_kernels.cu) and
// in the CPU tests through the warp emulator; it accepts and writes exactly what check_split
// and decode_split (fsst_format.hpp) do.
//
// A split's codes are taken in steps of step_codes bytes, lane_codes consecutive bytes a lane.
// Whether a byte is a code or the byte after an escape depends on every byte before it (a run of
// 0xFF bytes alternates escape, escaped 0xFF, escape, ...): each lane describes its bytes as a
// map from the state it enters with (after an escape or not) to the state it leaves with, the
// warp composes the maps with a scan, and each lane learns its entering state. A scan of the
// lanes' output lengths then gives each lane where its symbols go.
//
// The decoder gathers a step's output in a per-warp ring in shared memory (bytes at their
// positions relative to the 16-byte aligned address at or before the split's output), then
// writes every complete 16-byte group of it with one aligned 16-byte store per lane: no
// per-byte global stores but at the split's two ends, where a group holds bytes of the
// neighbouring splits (which other warps write).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/warp_tools.hpp"
#include "fsst/fsst_format.hpp"

namespace zs::fsst {

/// Code bytes a lane takes per step, and a warp per step.
inline constexpr std::uint32_t lane_codes = 8;
inline constexpr std::uint32_t step_codes = lane_codes * kernels::warp::warp_lanes;
/// The decoder's ring per warp: a step's output (at most 8 bytes a code) and the up to 15 bytes
/// of the group it leaves incomplete, with room to spare, a power of two so that positions wrap
/// with a mask.
inline constexpr std::uint32_t ring_bytes = 4096;
static_assert(ring_bytes >= step_codes * max_symbol_bytes + 16 && (ring_bytes & (ring_bytes - 1)) == 0);

/// Code c's symbol and length in a serialized table that load_decode_table accepted (zero for
/// codes it does not define): each thread of a block reads its codes' entries, so that a shared
/// table fills in parallel. The same entries as load_decode_table.
ZS_HD inline void load_decode_entry(const std::byte* block, std::uint32_t c, std::uint64_t& symbol,
                                    std::uint8_t& length) noexcept {
  auto const* b = reinterpret_cast<const std::uint8_t*>(block);
  symbol = 0;
  length = 0;
  std::uint32_t const count = (load_symbol(b, 8) >> 8) & 0xff;
  if (c >= count) return;
  // Code order: lengths 2, 3, ..., 8, then 1.
  std::uint32_t code = 0, at = table_header_bytes;
  for (std::uint32_t step = 0; step < 8; ++step) {
    std::uint32_t const l = step == 7 ? 1 : step + 2;
    std::uint32_t const of_length = b[9 + l - 1];
    if (c < code + of_length) {
      symbol = load_symbol(b + at + (c - code) * l, l);
      length = static_cast<std::uint8_t>(l);
      return;
    }
    code += of_length;
    at += of_length * l;
  }
}

/// The symbol count of a table that load_decode_table accepted.
ZS_HD inline std::uint32_t table_symbol_count(const std::byte* block) noexcept {
  return (load_symbol(reinterpret_cast<const std::uint8_t*>(block), 8) >> 8) & 0xff;
}

// ---- escape states: bit s of a map is the state after the bytes when entering in state s ----
// (state 1: the previous byte was an escape, so the next one stands for itself)

/// The map of `count` (at most 8) code bytes, little-endian in `bytes`.
ZS_HD inline std::uint32_t escape_map(std::uint64_t bytes, std::uint32_t count) noexcept {
  if (count == 0) return 2;  // no bytes: the state passes through
  // No escape among them (the bytes past count are 0): the state after them is 0 either way.
  std::uint64_t const inverted = ~bytes;
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  if (((inverted - ones) & ~inverted & (ones << 7)) == 0) return 0;
  std::uint32_t map = 0;
  for (std::uint32_t entering = 0; entering < 2; ++entering) {
    std::uint32_t s = entering;
    for (std::uint32_t j = 0; j < lane_codes; ++j) {
      if (j < count) s = s == 0 && ((bytes >> (8 * j)) & 0xff) == escape_code ? 1U : 0U;
    }
    map |= s << entering;
  }
  return map;
}
/// `later` after `earlier`.
ZS_HD constexpr std::uint32_t compose_maps(std::uint32_t later, std::uint32_t earlier) noexcept {
  return ((later >> (earlier & 1)) & 1) | (((later >> ((earlier >> 1) & 1)) & 1) << 1);
}
ZS_HD constexpr std::uint32_t apply_map(std::uint32_t map, std::uint32_t state) noexcept { return (map >> state) & 1; }

/// One lane's share of a step: its code bytes, how many, and the escape state it enters with.
struct lane_step {
  std::uint64_t bytes;
  std::uint32_t count;
  std::uint32_t entering;
};

/// Reads this lane's bytes of the step at `pos` of a split's `stored` code bytes, and works out
/// its entering state from `carry` (the state after the bytes before `pos`), which becomes the
/// state after the step. Every lane calls it together.
template <class Warp>
ZS_WARP_FN lane_step read_step(Warp& w, const std::uint8_t* in, std::uint64_t stored, std::uint64_t pos,
                               std::uint32_t& carry) {
  lane_step s{};
  std::uint64_t const first = pos + std::uint64_t{w.lane} * lane_codes;
  std::uint64_t const left = first < stored ? stored - first : 0;
  s.count = left < lane_codes ? static_cast<std::uint32_t>(left) : lane_codes;
  s.bytes = s.count == 0 ? 0 : load_bytes(in + first, s.count, left);
  // Inclusive scan of the maps: after it, lane l holds the map of lanes 0..l.
  std::uint32_t map = escape_map(s.bytes, s.count);
  for (unsigned d = 1; d < kernels::warp::warp_lanes; d <<= 1) {
    std::uint32_t const earlier = w.shfl_up(map, d);
    if (w.lane >= d) map = compose_maps(map, earlier);
  }
  std::uint32_t const before = w.shfl_up(map, 1);
  std::uint32_t const all = w.shfl(map, kernels::warp::warp_lanes - 1);
  s.entering = w.lane == 0 ? carry : apply_map(before, carry);
  carry = apply_map(all, carry);
  return s;
}

/// The bytes a lane's codes decode to, and whether one of them is undefined (check_split's rule).
struct lane_lengths {
  std::uint32_t bytes;
  bool undefined;
};

ZS_WARP_FN inline lane_lengths step_lengths(const decode_table& t, const lane_step& s) noexcept {
  lane_lengths r{0, false};
  std::uint32_t state = s.entering;
  ZS_UNROLL
  for (std::uint32_t j = 0; j < lane_codes; ++j) {
    std::uint32_t const code = (s.bytes >> (8 * j)) & 0xff;
    if (j >= s.count) {
      // past the split's last code
    } else if (state != 0) {
      r.bytes += 1;
      state = 0;
    } else if (code == escape_code) {
      state = 1;
    } else {
      std::uint32_t const length = t.length[code];
      r.undefined |= length == 0;
      r.bytes += length;
    }
  }
  return r;
}

/// Writes the ring's bytes of positions [from, to) (to - from at most ring_bytes, from a
/// multiple of 16) to `base` + position, but only those of positions [lo, hi): whole aligned
/// 16-byte groups with one store each, the groups cut by lo or hi byte by byte.
/// A ring of `Ring` bytes (a power of two; the decoder's ring_bytes unless said).
template <std::uint32_t Ring = ring_bytes, class Warp>
ZS_WARP_FN void flush_ring(Warp& w, const std::uint8_t* ring, std::uint8_t* base, std::uint64_t from,
                           std::uint64_t to, std::uint64_t lo, std::uint64_t hi) {
  static_assert((Ring & (Ring - 1)) == 0, "a ring wraps with a mask");
  for (std::uint64_t g = from + 16 * std::uint64_t{w.lane}; g < to; g += 16 * kernels::warp::warp_lanes) {
    auto const* src = ring + (g & (Ring - 1));
    if (g >= lo && g + 16 <= hi && g + 16 <= to) {
      auto const* words = reinterpret_cast<const std::uint64_t*>(src);
      store16(base + g, words[0], words[1]);
    } else {
      for (std::uint64_t k = 0; k < 16; ++k) {
        if (g + k >= lo && g + k < hi && g + k < to) base[g + k] = src[k];
      }
    }
  }
}

/// decode_split by a warp, checking the split as it goes: its `n` characters to `out`, through
/// `ring` (ring_bytes of this warp's shared memory, 16-byte aligned), and check_split's verdict,
/// the same in every lane. Whatever the codes, it reads only in[0, stored) and writes only
/// out[0, n); where the verdict is false, what it wrote there is unspecified. Checking while
/// writing spares a pass over the codes: the decoder reads each code once.
template <class Warp>
ZS_WARP_FN bool decode_split_warp(Warp& w, const decode_table& t, const std::uint8_t* in, std::uint64_t stored,
                                  std::uint8_t* out, std::uint64_t n, std::uint8_t* ring) {
  // Positions count from the aligned address at or before out: out's bytes are [lo, hi).
  std::uint64_t const lo = reinterpret_cast<std::uintptr_t>(out) & 15;
  std::uint64_t const hi = lo + n;
  std::uint8_t* const base = out - lo;
  if (stored > n) return false;
  if (stored == n) {
    // Stored raw: each lane an aligned group at a time, read a word at a time.
    for (std::uint64_t g = 16 * std::uint64_t{w.lane}; g < hi; g += 16 * kernels::warp::warp_lanes) {
      if (g >= lo && g + 16 <= hi) {
        std::uint64_t const k = g - lo;
        store16(base + g, load_bytes(in + k, 8, n - k), load_bytes(in + k + 8, 8, n - k - 8));
      } else {
        for (std::uint64_t k = 0; k < 16; ++k) {
          if (g + k >= lo && g + k < hi) base[g + k] = in[g + k - lo];
        }
      }
    }
    return true;
  }
  std::uint64_t produced = lo;  // positions written to the ring so far
  std::uint64_t flushed = 0;    // positions before it are in out (a multiple of 16)
  std::uint32_t carry = 0;
  bool undefined = false;       // a code the table does not define (it decodes to nothing)
  for (std::uint64_t pos = 0; pos < stored; pos += step_codes) {
    lane_step const s = read_step(w, in, stored, pos, carry);
    // Where the lane's first symbol goes: a scan of the lanes' output lengths. The symbols are
    // looked up again below rather than kept from here (8 words a lane more held across the
    // scan cost occupancy).
    lane_lengths const lengths = step_lengths(t, s);
    undefined |= lengths.undefined;
    std::uint32_t const bytes = lengths.bytes;
    std::uint32_t inclusive = bytes;
    for (unsigned d = 1; d < kernels::warp::warp_lanes; d <<= 1) {
      std::uint32_t const earlier = w.shfl_up(inclusive, d);
      if (w.lane >= d) inclusive += earlier;
    }
    std::uint32_t const step_bytes = w.shfl(inclusive, kernels::warp::warp_lanes - 1);
    // Ring positions wrap at ring_bytes: their low 32 bits are enough.
    auto at = static_cast<std::uint32_t>(produced) + (inclusive - bytes);
    std::uint32_t state = s.entering;
    ZS_UNROLL
    for (std::uint32_t j = 0; j < lane_codes; ++j) {
      std::uint32_t const code = (s.bytes >> (8 * j)) & 0xff;
      std::uint64_t symbol = 0;
      std::uint32_t length = 0;
      if (j < s.count) {
        if (state != 0) {
          symbol = code;
          length = 1;
          state = 0;
        } else if (code == escape_code) {
          state = 1;
        } else {
          symbol = t.symbol[code];
          length = t.length[code];
        }
      }
      ZS_UNROLL
      for (std::uint32_t k = 0; k < max_symbol_bytes; ++k) {
        if (k < length) ring[(at + k) & (ring_bytes - 1)] = static_cast<std::uint8_t>(symbol >> (8 * k));
      }
      at += length;
    }
    produced += step_bytes;
    w.sync();
    // The complete groups go out; the incomplete last one stays for the next step. Codes that
    // decode to more than n characters (a bad split) are cut at hi.
    std::uint64_t const complete = produced / 16 * 16;
    flush_ring(w, ring, base, flushed, complete, lo, hi);
    flushed = complete;
    w.sync();
  }
  flush_ring(w, ring, base, flushed, hi, lo, hi);
  w.sync();
  // An escape must have its byte: the state after the last code is 0.
  return !w.any(undefined) && carry == 0 && produced == hi;
}

// ---- the warp encoder ----
//
// The greedy parse is serial: where a match starts depends on every match before it. A warp
// encodes a split in steps of encode_step_chars characters from a position b that the true parse
// starts a match at (0, then where the previous step ended). Lane l parses the encode_lane_chars
// characters from b + 16 l on as if a match started there, and records where its matches start.
// Two greedy parses that start a match at the same position agree from there on, so each lane
// then carries its parse on into the next lane's characters until it reaches a position where
// the next lane's parse also starts a match (its hand-over): the next lane's codes from there on
// are the true ones, and the lane before supplies those up to it. Where a hand-over misses the
// next lane's parse (the two did not meet within the next lane's characters), that lane parses
// again from the hand-over, and the warp repeats until every hand-over lands. Lane 0 starts at
// b, so the lanes are right from lane 0 on, one more each round: at most 32 rounds, on ordinary
// text one. Each lane keeps its codes in its own staging slot; a scan of the pieces' lengths
// places them in an output ring, whose complete 16-byte groups go out with aligned 16-byte
// stores. The same codes, and the same no_fit verdict, as encode_split.

/// Characters a lane parses first per step, and a warp per step.
inline constexpr std::uint32_t encode_lane_chars = 16;
inline constexpr std::uint32_t encode_step_chars = encode_lane_chars * kernels::warp::warp_lanes;
/// A lane's codes per step: its matches start in its own and the next lane's characters (its
/// first at or after its own, its last before the next lane's end), 32 positions, two bytes
/// each at most.
inline constexpr std::uint32_t encode_stage_bytes = 4 * encode_lane_chars;
/// The encoder's output ring per warp: a step's codes (matches starting in [b, b + 512), at most
/// 2 bytes each) and the up to 15 bytes of the incomplete group before them.
inline constexpr std::uint32_t encode_ring_bytes = 2048;
static_assert(encode_ring_bytes >= 2 * encode_step_chars + 16);
/// Shared memory of the warp encoder per warp (16-byte aligned): the ring, then a staging slot
/// per lane.
inline constexpr std::uint32_t encode_warp_shared_bytes =
    encode_ring_bytes + kernels::warp::warp_lanes * encode_stage_bytes;

/// One lane's parse in a step of the warp encoder: its codes from `start` on, in its staging slot.
/// Positions are a split's, 32 bits.
struct lane_parse {
  std::uint32_t start = 0;   // where the parse began
  std::uint32_t hand = 0;    // where it stopped: the next lane's codes start there
  std::uint32_t starts = 0;  // bit k: a match starts at s + k (s: the lane's first character)
  std::uint32_t bytes = 0;   // code bytes in the slot
  // Byte k of before_low (k < 8), or k - 8 of before_high: the code bytes before position s + k,
  // where bit k of starts is set (two words, not an array, so that they stay in registers).
  std::uint64_t before_low = 0, before_high = 0;

  ZS_HD void record_start(std::uint32_t k) noexcept {
    starts |= 1U << k;
    std::uint64_t const entry = std::uint64_t{bytes} << (8 * (k % 8));
    if (k < 8) {
      before_low |= entry;
    } else {
      before_high |= entry;
    }
  }
  ZS_HD std::uint32_t bytes_before(std::uint32_t k) const noexcept {
    return static_cast<std::uint32_t>(((k < 8 ? before_low : before_high) >> (8 * (k % 8))) & 0xff);
  }
  // The greedy match at the cursor: its codes into `stage`, and the cursor past it.
  ZS_HD void emit(const encode_table& t, basic_greedy_cursor<std::uint32_t>& c, std::uint8_t* stage) noexcept {
    std::uint32_t const m = c.match(t);
    if (m == escape_match) {
      stage[bytes++] = escape_code;
      stage[bytes++] = static_cast<std::uint8_t>(c.lo & 0xff);
      c.advance(1);
    } else {
      stage[bytes++] = static_cast<std::uint8_t>(m & 0xff);
      c.advance(m >> 8);
    }
  }
};

/// Asks for the line at p to be brought into L2 (on the GPU; nothing on the CPU): the warp
/// encoder's next step, whose characters are read once, arrives while this one is parsed.
ZS_HD inline void prefetch_l2(const void* p) noexcept {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

/// encode_split by a warp: the codes of in[0, n) (n below 2^32: a split) into out (16-byte
/// aligned), or no_fit when they would take more than `capacity` bytes (then what out holds is
/// undefined), the same answer in every lane. `shared`: encode_warp_shared_bytes of this warp's
/// shared memory, 16-byte aligned.
template <class Warp>
ZS_WARP_FN std::uint64_t encode_split_warp(Warp& w, const encode_table& t, const std::uint8_t* in, std::uint64_t n,
                                           std::uint8_t* out, std::uint64_t capacity, std::uint8_t* shared) {
  constexpr unsigned last_lane = kernels::warp::warp_lanes - 1;
  auto const count = static_cast<std::uint32_t>(n);
  std::uint8_t* const ring = shared;
  std::uint8_t* const stage = shared + encode_ring_bytes + std::size_t{w.lane} * encode_stage_bytes;
  std::uint32_t produced = 0;  // code bytes of the split so far (in out or the ring)
  std::uint32_t flushed = 0;   // those in out (a multiple of 16)
  for (std::uint32_t b = 0; b < count;) {
    // This lane's characters [s, e), and the next lane's [e, e_next) (none for the last lane:
    // the next step starts where it stops).
    std::uint32_t const first = b + encode_lane_chars * w.lane;
    std::uint32_t const s = first < count ? first : count;
    std::uint32_t const e = count - s < encode_lane_chars ? count : s + encode_lane_chars;
    std::uint32_t e_next = e;
    if (w.lane != last_lane) e_next = count - e < encode_lane_chars ? count : e + encode_lane_chars;
    // Lanes 0..3 touch the next step's four 128-byte lines (what it reads, give or take a line).
    if (w.lane < 4 && first + encode_step_chars + 112 * w.lane < count) {
      prefetch_l2(in + first + encode_step_chars + 112 * w.lane);
    }
    lane_parse r;
    r.start = s;
    basic_greedy_cursor<std::uint32_t> c{};
    bool parse = true;      // this lane parses (again) in this round
    std::uint32_t from = b;  // the previous lane's hand-over (b for lane 0)
    for (;;) {
      if (parse) {
        std::uint32_t const start = r.start;
        r = lane_parse{};
        r.start = start;
        c.start(in, count, start);
        while (c.p < e) {
          r.record_start(c.p - s);
          r.emit(t, c, stage);
        }
      }
      std::uint32_t const next_starts = w.shfl_down(r.starts, 1);
      if (parse) {
        // On into the next lane's characters until its parse starts a match here too.
        while (c.p < e_next && ((next_starts >> (c.p - e)) & 1) == 0) r.emit(t, c, stage);
        r.hand = c.p;
      }
      from = w.shfl_up(r.hand, 1);
      if (w.lane == 0) from = b;
      bool const lands = from == r.start || (from < e && ((r.starts >> (from - s)) & 1) != 0);
      parse = !lands;
      if (!w.any(parse)) break;
      if (parse) r.start = from;
    }
    // This lane's piece: its codes from the hand-over on.
    std::uint32_t const skip = from == r.start ? 0 : r.bytes_before(from - s);
    std::uint32_t const piece = r.bytes - skip;
    std::uint32_t inclusive = piece;
    for (unsigned d = 1; d < kernels::warp::warp_lanes; d <<= 1) {
      std::uint32_t const earlier = w.shfl_up(inclusive, d);
      if (w.lane >= d) inclusive += earlier;
    }
    std::uint32_t const step_bytes = w.shfl(inclusive, last_lane);
    if (std::uint64_t{produced} + step_bytes > capacity) return no_fit;
    // Ring positions wrap at encode_ring_bytes.
    std::uint32_t const at = produced + (inclusive - piece);
    for (std::uint32_t k = 0; k < piece; ++k) ring[(at + k) & (encode_ring_bytes - 1)] = stage[skip + k];
    produced += step_bytes;
    w.sync();
    std::uint32_t const complete = produced / 16 * 16;
    flush_ring<encode_ring_bytes>(w, ring, out, flushed, complete, 0, complete);
    flushed = complete;
    w.sync();
    b = w.shfl(r.hand, last_lane);
  }
  flush_ring<encode_ring_bytes>(w, ring, out, flushed, produced, 0, produced);
  w.sync();
  return produced;
}

}  // namespace zs::fsst
