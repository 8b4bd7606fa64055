// The alp codec's per-vector coders for a warp (alp_format.hpp gives the format and the
// one-worker reference they match): a warp chooses, writes, checks and decodes a vector of
// 1024 values, lane l holding cells l, l + 32, ... (cell 32k + lane in row k), so its loads
// and stores of a row are one coalesced run. They take a Warp (common/warp_tools.hpp): the
// GPU kernels (alp_kernels.cu) run them on cuda_warp, the CPU tests on the warp emulator, and
// both check them against the reference byte for byte.
//
// Every function that takes a Warp is called by all 32 lanes together with the same arguments.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "alp/alp_format.hpp"
#include "common/warp_tools.hpp"

// A call the compiler keeps as a call: the registers of its body (the ALP_RD sort's 32 keys a
// lane) are then not added to those its caller holds live around it.
#if defined(__CUDA_ARCH__)
#define ZS_ALP_OUTLINED __noinline__
#else
#define ZS_ALP_OUTLINED
#endif

namespace zs::kernels::alp {

namespace fmt = ::zs::alp;

inline constexpr unsigned warp_lanes = 32;
inline constexpr unsigned full_mask = 0xffffffffU;
/// Shared memory decode_vector_warp stages a vector's main section in: the largest there is, an
/// ALP_RD vector of doubles with 3-bit codes and 63-bit right parts (1024 values, FastLanes'
/// 16 lanes of 64 rows); ALP offsets take at most 8 KiB.
inline constexpr std::size_t decode_stage_bytes_per_warp =
    fmt::packed_bytes(16, 64, 64, 3) + fmt::packed_bytes(16, 64, 64, 63);
/// Rows of a vector as the warp holds it: row k is cells 32k .. 32k + 31.
inline constexpr unsigned cell_rows = fmt::vector_values / warp_lanes;
/// Shared memory write_vector_warp stages a vector's integers in (8 bytes a value whatever the
/// type, so one kernel codes both).
inline constexpr std::size_t stage_bytes_per_warp = fmt::vector_values * sizeof(std::uint64_t);

template <typename T>
ZS_HD constexpr T min_of(T a, T b) noexcept { return b < a ? b : a; }
template <typename T>
ZS_HD constexpr T max_of(T a, T b) noexcept { return a < b ? b : a; }

ZS_HD inline std::uint32_t popc32(std::uint32_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(x));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(x));
#endif
}
ZS_HD inline int bit_length64(std::uint64_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return x == 0 ? 0 : 64 - __clzll(static_cast<long long>(x));
#else
  return x == 0 ? 0 : 64 - __builtin_clzll(x);
#endif
}
/// The position of the set bit of `mask` with n set bits below it (n < popc(mask)).
ZS_HD inline std::uint32_t nth_set_bit(std::uint32_t mask, std::uint32_t n) noexcept {
#if defined(__CUDA_ARCH__)
  return __fns(mask, 0, static_cast<int>(n + 1));
#else
  for (; n > 0; --n) mask &= mask - 1;
  return static_cast<std::uint32_t>(__builtin_ctz(mask));
#endif
}

/// The lanes below `lane`, as a mask.
ZS_HD inline unsigned lanes_below(unsigned lane) { return lane == 0 ? 0U : full_mask >> (32 - lane); }

template <class Warp>
ZS_WARP_FN std::uint32_t warp_sum(Warp& w, std::uint32_t x) { return w.reduce_add(x); }

template <class Warp>
ZS_WARP_FN long long warp_min(Warp& w, long long x) {
  for (unsigned d = 16; d > 0; d >>= 1) x = min_of(x, w.shfl_xor(x, d));
  return x;
}
template <class Warp>
ZS_WARP_FN long long warp_max(Warp& w, long long x) {
  for (unsigned d = 16; d > 0; d >>= 1) x = max_of(x, w.shfl_xor(x, d));
  return x;
}

/// The exclusive prefix sum of x over the lanes; `total` gets the sum of all.
template <class Warp>
ZS_WARP_FN std::uint32_t warp_exclusive_sum(Warp& w, std::uint32_t x, std::uint32_t& total) {
  unsigned const lane = w.lane;
  std::uint32_t inclusive = x;
  for (unsigned d = 1; d < 32; d <<= 1) {
    std::uint32_t const up = w.shfl_up(inclusive, d);
    if (lane >= d) inclusive += up;
  }
  total = w.shfl(inclusive, 31);
  return inclusive - x;
}

/// The cells of row `lane` that lie inside a vector of `count` values, as a mask (lane k: row k).
ZS_HD inline std::uint32_t valid_cells_of_row(std::uint32_t count, unsigned row) {
  std::uint32_t const first = row * warp_lanes;
  if (count <= first) return 0;
  return count - first >= warp_lanes ? full_mask : (1U << (count - first)) - 1;
}

/// The kept cells of each row (lane k: row k's mask, the cells that are not taken out as fill)
/// and the kept cells before each row (an exclusive scan), so kept value j of cell c of row k is
/// base_k + popc(kept_k & lanes below c).
struct kept_rows {
  std::uint32_t mask;  // this lane's row
  std::uint32_t base;  // this lane's row
  std::uint32_t kept;  // in the vector
};
template <class Warp>
ZS_WARP_FN kept_rows scan_kept(Warp& w, std::uint32_t kept_mask) {
  kept_rows r;
  r.mask = kept_mask;
  r.base = warp_exclusive_sum(w, popc32(kept_mask), r.kept);
  return r;
}

// --- the ALP arithmetic with a vector's scales looked up once ---------------------------------

/// 10^e, 10^-f (encoding) and 10^f, 10^-e (decoding) in the value's precision: the very
/// constants fmt::fit_int and fmt::decode_int compute, so the integers and values are theirs.
template <typename Float>
struct alp_scales {
  Float up_e;
  Float down_f;
  Float up_f;
  Float down_e;
};
template <typename Float>
ZS_HD inline alp_scales<Float> scales_of(int e, int f) {
  return {fmt::pow10_as<Float>(e), fmt::inv_pow10_as<Float>(f), fmt::pow10_as<Float>(f), fmt::inv_pow10_as<Float>(e)};
}
template <typename Float>
ZS_HD inline Float decode_scaled(std::int64_t d, const alp_scales<Float>& s) {
  return fmt::mul(fmt::mul(static_cast<Float>(d), s.up_f), s.down_e);
}
/// fmt::fit_int, step for step.
template <typename Float>
ZS_HD inline fmt::fit fit_scaled(Float v, const alp_scales<Float>& s, std::int64_t& d, std::int32_t& correction) {
  using word_t = typename fmt::float_traits<Float>::bits_t;
  Float const x = fmt::mul(fmt::mul(v, s.up_e), s.down_f);
  double const xd = static_cast<double>(x);
  if (!(xd >= -fmt::float_traits<Float>::int_limit && xd <= fmt::float_traits<Float>::int_limit)) return fmt::fit::none;
  d = fmt::round_to_int(x);
  word_t const diff = static_cast<word_t>(fmt::bits_of(v) - fmt::bits_of(decode_scaled<Float>(d, s)));
  if (diff == 0) return fmt::fit::exact;
  auto const signed_diff = static_cast<std::int64_t>(
      sizeof(Float) == 4 ? static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(diff)))
                         : static_cast<std::int64_t>(static_cast<std::uint64_t>(diff)));
  if (signed_diff < -32767 || signed_diff > 32767) return fmt::fit::none;
  correction = static_cast<std::int32_t>(signed_diff);
  return fmt::fit::corrected;
}

/// The integers one ALP candidate gives a group of cells: their range and exception counts.
struct alp_stats {
  long long lo = LLONG_MAX;
  long long hi = LLONG_MIN;
  std::uint32_t exceptions = 0;
  std::uint32_t corrections = 0;
};
ZS_HD inline void add_fit(alp_stats& s, fmt::fit how, std::int64_t d) {
  if (how != fmt::fit::exact) ++s.exceptions;
  if (how == fmt::fit::none) return;  // its slot holds the base: no part of the range
  if (how == fmt::fit::corrected) ++s.corrections;
  s.lo = min_of(s.lo, static_cast<long long>(d));
  s.hi = max_of(s.hi, static_cast<long long>(d));
}
ZS_HD inline alp_stats merged(const alp_stats& a, const alp_stats& b) {
  return {min_of(a.lo, b.lo), max_of(a.hi, b.hi), a.exceptions + b.exceptions, a.corrections + b.corrections};
}
template <class Warp>
ZS_WARP_FN alp_stats warp_total(Warp& w, const alp_stats& s) {
  return {warp_min(w, s.lo), warp_max(w, s.hi), warp_sum(w, s.exceptions), warp_sum(w, s.corrections)};
}

/// fmt::analyze_alp's fields from the warp's totals of a view.
template <typename Float>
ZS_HD inline fmt::vector_fields alp_fields(const alp_stats& s, int e, int f, bool fill, std::uint32_t fills) {
  fmt::vector_fields v;
  v.mode = fmt::mode_alp;
  v.exponent = e;
  v.factor = f;
  v.exceptions = s.exceptions;
  v.corrections = s.corrections;
  bool const any = s.lo <= s.hi;  // some value fits: the range is the reference's
  long long const lo = any ? s.lo : 0;
  long long const hi = any ? s.hi : 0;
  v.base = static_cast<std::uint64_t>(lo);
  v.bits = bit_length64(static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo));
  v.fill = fill;
  v.fills = fill ? fills : 0;
  return v;
}

/// The fewest bytes an ALP_RD vector of this view can take with a split at `right_bits` (no
/// code bits, no exceptions): when an earlier option is no larger, ALP_RD cannot win there, nor
/// at any later split (the floor grows with the right part).
template <typename Float>
ZS_HD inline std::uint64_t rd_floor_bytes(std::uint32_t count, bool fill, std::uint32_t fills, int right_bits) {
  using traits = fmt::float_traits<Float>;
  std::uint32_t const rows = (count - (fill ? fills : 0) + traits::lanes - 1) / traits::lanes;
  return fmt::vector_header_bytes + (fill ? fmt::fill_map_bytes : 0) + fmt::dict_bytes +
         fmt::packed_bytes(traits::lanes, traits::width, rows, right_bits);
}

// --- ALP_RD: the left parts' counts by a warp -------------------------------------------------
//
// fmt::analyze_rd sorts the kept values' top 16 bits and counts the runs of equal left parts at
// every split. The warp does the same on 1024 keys held 32 a lane: a bitonic sort (element
// 32 * lane + k in key[k]: distances below 32 within a lane's registers, the others between
// lanes by shuffles), then, per split, the runs' starts as a bit mask per lane, their lengths
// from the next start, each lane's 8 longest and the warp's 8 longest over 8 warp maxima.

/// The sort key of a cell that is not among the kept values: above every 16-bit top part at
/// every split (0x10000 >> s is greater than 0xffff >> s), so such cells sort last and end the
/// last run of kept values.
inline constexpr std::uint32_t rd_absent_key = 0x10000;

/// Sorts the warp's 1024 keys ascending: element 32 * lane + k is key[k].
template <class Warp>
ZS_WARP_FN void sort_keys_warp(Warp& w, std::uint32_t (&key)[cell_rows]) {
  unsigned const lane = w.lane;
ZS_UNROLL
  for (unsigned size = 2; size <= fmt::vector_values; size <<= 1) {
ZS_UNROLL
    for (unsigned j = size >> 1; j > 0; j >>= 1) {
      if (j >= warp_lanes) {
        // Partners in lane ^ (j / 32), the same register: the lower element keeps the smaller
        // key where its block of `size` elements ascends.
        unsigned const lane_bit = j / warp_lanes;
        bool const descending = ((lane * warp_lanes) & size) != 0;
        bool const keep_max = ((lane & lane_bit) != 0) != descending;
ZS_UNROLL
        for (unsigned k = 0; k < cell_rows; ++k) {
          std::uint32_t const other = w.shfl_xor(key[k], lane_bit);
          key[k] = keep_max ? max_of(key[k], other) : min_of(key[k], other);
        }
      } else {
ZS_UNROLL
        for (unsigned k = 0; k < cell_rows; ++k) {
          if ((k & j) != 0) continue;
          bool const descending = ((lane * warp_lanes + k) & size) != 0;
          std::uint32_t const lo = min_of(key[k], key[k | j]);
          std::uint32_t const hi = max_of(key[k], key[k | j]);
          key[k] = descending ? hi : lo;
          key[k | j] = descending ? lo : hi;
        }
      }
    }
  }
}

/// key[k] for a k the lanes agree on, without indexing registers at run time.
ZS_WARP_FN inline std::uint32_t key_in_register(const std::uint32_t (&key)[cell_rows], unsigned k) {
  std::uint32_t v = 0;
ZS_UNROLL
  for (unsigned i = 0; i < cell_rows; ++i) v = i == k ? key[i] : v;
  return v;
}

/// A run of equal left parts as one number: its length above, and 1023 - its first position
/// below, so that the greater number is the longer run, of equal ones the smaller left part
/// (analyze_rd's order). 0: no run.
ZS_HD inline std::uint32_t run_rank(std::uint32_t length, std::uint32_t first) { return length << 10 | (1023U - first); }
ZS_HD inline std::uint32_t run_length(std::uint32_t rank) { return rank >> 10; }
ZS_HD inline std::uint32_t run_first(std::uint32_t rank) { return 1023U - (rank & 1023U); }

/// The warp's longest runs of equal left parts at one split, for both views of a vector whose
/// fill cells are among the sorted keys: `kept` the view's kept values, `top` its 8 longest
/// runs' ranks, the greatest first (0 past the last run).
struct rd_runs {
  std::uint32_t kept;
  std::uint32_t top[fmt::max_dict];
};

/// The ranks of the warp's longest runs of equal left parts (key >> shift) among the first
/// `count` sorted keys (the vector's cells, fill cells included), in every lane: `all` gets the
/// 8 longest of the vector's cells. Where `fills` is not 0, `less_fill` gets those of the
/// vector without its fill cells, from the same sort: the fill cells all have the key
/// `fill_key`, so they sit in the run of fill_key >> shift, and that view's runs are the same
/// runs with that one shortened by `fills` (gone where nothing else is left in it). Taking the
/// 9 longest of all cells is enough for it: a run among the 8 longest without the fill cells
/// has at most the fill's run above it beside those 7. A rank's first position is the run's
/// in the sort of all cells: the order of the runs, so of equal lengths the smaller left part
/// still goes first. `before` is the key before key[0] (lane l - 1's last; lane 0: ~0, which
/// starts a run).
template <class Warp>
ZS_WARP_FN void longest_runs_warp(Warp& w, const std::uint32_t (&key)[cell_rows], std::uint32_t before, int shift,
                                  std::uint32_t count, std::uint32_t fill_key, std::uint32_t fills, rd_runs& all,
                                  rd_runs& less_fill) {
  constexpr int depth = fmt::max_dict + 1;
  unsigned const lane = w.lane;
  bool const both = fills != 0;
  std::uint32_t starts = 0;  // bit k: a run starts at key[k]
  std::uint32_t previous = before >> shift;
ZS_UNROLL
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const part = key[k] >> shift;
    starts |= part != previous ? 1U << k : 0U;
    previous = part;
  }
  // The first start after this lane's keys: the least first start of the lanes above (1024
  // where none: the cells fill the vector).
  std::uint32_t after = starts != 0 ? lane * warp_lanes + static_cast<std::uint32_t>(warp::lowest_bit(starts))
                                    : fmt::vector_values;
  after = w.shfl_down(after, 1);
  if (lane == warp_lanes - 1) after = fmt::vector_values;
ZS_UNROLL
  for (unsigned d = 1; d < warp_lanes; d <<= 1) after = min_of(after, w.shfl_down(after, d));
  // This lane's longest runs that start among the vector's cells, by insertion.
  std::uint32_t top[depth];
ZS_UNROLL
  for (int i = 0; i < depth; ++i) top[i] = 0;
  for (std::uint32_t left = starts & valid_cells_of_row(count, lane); left != 0; left &= left - 1) {
    std::uint32_t const k = warp::lowest_bit(left);
    std::uint32_t const first = lane * warp_lanes + k;
    // A run ends at the next start, in the vector or not: the keys past it start their own.
    std::uint32_t const higher = k == warp_lanes - 1 ? 0U : starts & (full_mask << (k + 1));
    std::uint32_t const end = higher == 0 ? after : lane * warp_lanes + warp::lowest_bit(higher);
    std::uint32_t x = run_rank(end - first, first);
    if (x > top[depth - 1]) {
ZS_UNROLL
      for (int i = 0; i < depth; ++i) {
        std::uint32_t const greater = max_of(top[i], x);
        x = min_of(top[i], x);
        top[i] = greater;
      }
    }
  }
  // The warp's longest: the greatest head, its lane popping it (ranks are unique), 8 times, 9
  // where the view without the fill cells needs one more.
  int const rounds = both ? depth : fmt::max_dict;
  std::uint32_t head[depth];
ZS_UNROLL
  for (int r = 0; r < depth; ++r) {
    head[r] = 0;
    if (r >= rounds) continue;
    std::uint32_t const greatest = w.reduce_max(top[0]);
    head[r] = greatest;
    if (greatest != 0 && top[0] == greatest) {
ZS_UNROLL
      for (int i = 0; i + 1 < depth; ++i) top[i] = top[i + 1];
      top[depth - 1] = 0;
    }
  }
  all.kept = count;
ZS_UNROLL
  for (int r = 0; r < fmt::max_dict; ++r) all.top[r] = head[r];
  if (!both) return;
  // The fill's run: its length and first position over the lanes.
  std::uint32_t const fill_part = fill_key >> shift;
  std::uint32_t in_fill_run = 0;  // bit k: key[k] is in it
ZS_UNROLL
  for (unsigned k = 0; k < cell_rows; ++k) in_fill_run |= (key[k] >> shift) == fill_part ? 1U << k : 0U;
  std::uint32_t const length = w.reduce_add(popc32(in_fill_run));
  std::uint32_t const first = w.reduce_min(in_fill_run != 0 ? lane * warp_lanes + warp::lowest_bit(in_fill_run)
                                                            : fmt::vector_values);
  std::uint32_t const fill_rank = run_rank(length, first);
  std::uint32_t shortened = length > fills ? run_rank(length - fills, first) : 0U;
  // The heads less the fill's run, then the shortened run in its place by rank.
  less_fill.kept = count - fills;
  bool passed = false;
ZS_UNROLL
  for (int r = 0; r < fmt::max_dict; ++r) {
    passed = passed || head[r] == fill_rank;
    std::uint32_t const kept_head = passed ? head[r + 1] : head[r];
    less_fill.top[r] = max_of(kept_head, shortened);
    shortened = min_of(kept_head, shortened);
  }
}

/// The warp's vector: lane l holds cells l, l + 32, ... (cell 32k + lane in row k); which of
/// them lie in the vector and which hold the column's fill value (bit k each). The passes keep
/// only these masks and read the cells again where they need them (from cache): the values
/// themselves would hold 32 registers a lane (64 for doubles) through every pass.
struct cell_masks {
  std::uint32_t valid = 0;
  std::uint32_t fill = 0;
};
template <class Warp, typename Float>
ZS_WARP_FN cell_masks load_masks(const Warp& w, const Float* first, std::uint32_t count, bool has_fill,
                                 std::uint64_t fill_bits) {
  unsigned const lane = w.lane;
  cell_masks cells;
ZS_UNROLL
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const c = k * warp_lanes + lane;
    bool const inside = c < count;
    cells.valid |= inside ? 1U << k : 0U;
    bool const is_fill = inside && has_fill && static_cast<std::uint64_t>(fmt::bits_of(first[c])) == fill_bits;
    cells.fill |= is_fill ? 1U << k : 0U;
  }
  return cells;
}
/// Cell 32k + lane of the vector, or 0 past its end.
template <typename Float>
ZS_HD inline Float cell_value(const Float* first, std::uint32_t count, unsigned k, unsigned lane) {
  std::uint32_t const c = k * warp_lanes + lane;
  return c < count ? first[c] : Float(0);
}

/// The fill mask of row `lane` (lane k gets row k's: bit c for cell 32k + c).
template <class Warp>
ZS_WARP_FN std::uint32_t fill_row_of_lane(Warp& w, const cell_masks& cells) {
  unsigned const lane = w.lane;
  std::uint32_t mine = 0;
ZS_UNROLL
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const row = w.ballot(((cells.fill >> k) & 1U) != 0);
    if (lane == k) mine = row;
  }
  return mine;
}

/// The ALP_RD option of one view's runs at a split of `right_bits` (fmt::analyze_rd's fields
/// less the dictionary's entries), and its bytes.
template <typename Float>
ZS_HD inline std::uint64_t size_rd_option(const rd_runs& runs, int right_bits, bool with_fill, std::uint32_t fills,
                                          std::uint32_t count, fmt::vector_fields& option) {
  std::uint32_t counts[fmt::max_dict];
  int kinds = 0;
ZS_UNROLL
  for (int i = 0; i < fmt::max_dict; ++i) {
    counts[i] = run_length(runs.top[i]);
    kinds += runs.top[i] != 0 ? 1 : 0;
  }
  option.mode = fmt::mode_rd;
  option.right_bits = right_bits;
  fmt::size_dict<Float>(counts, kinds, runs.kept, option);
  option.fill = with_fill;
  option.fills = with_fill ? fills : 0;
  return fmt::vector_bytes<Float>(option, count);
}

/// What the ALP step of a vector's choice (choose_alp_warp) leaves for its ALP_RD step
/// (choose_rd_warp): what ALP_RD must undercut in each view, and the vector's fill cells.
struct alp_outcome {
  std::uint64_t before_rd = 0;                   // raw and ALP with the fill cells kept: the best
  std::uint64_t alp_less_fill = ~std::uint64_t{0};  // ALP without the fill cells: the best (none: no fill cells)
  std::uint32_t fills = 0;                       // 0: one view only
};

/// Whether ALP_RD may undercut the ALP step's choice in either view: the floor of its first
/// split (the least of all) against what it must undercut there. Where not, choose_rd_warp
/// keeps the choice, and the size kernels skip it.
template <typename Float>
ZS_HD inline bool rd_may_undercut(std::uint32_t count, const alp_outcome& alp) {
  constexpr int top_shift = fmt::float_traits<Float>::width - fmt::max_left_bits;
  return rd_floor_bytes<Float>(count, false, alp.fills, top_shift) < alp.before_rd ||
         (alp.fills != 0 &&
          rd_floor_bytes<Float>(count, true, alp.fills, top_shift) < min_of(alp.before_rd, alp.alp_less_fill));
}

/// fmt::vector_candidate by a warp: lane l costs sample cells l and l + 32 (cells 16 l and
/// 16 l + 512, where they lie in the vector and hold no fill value) under each candidate; warp
/// totals give the reference's costs, which do not depend on the order of the cells.
template <class Warp, typename Float>
ZS_WARP_FN int vector_candidate_warp(Warp& w, const Float* first, std::uint32_t count, const fmt::column_params& p) {
  constexpr unsigned per_lane = fmt::vector_values / fmt::candidate_sample_stride / warp_lanes;
  if (p.candidates <= 1) return 0;
  Float value[per_lane];
  std::uint32_t sampled = 0;  // bit j: sample cell j of the lane is costed
ZS_UNROLL
  for (unsigned j = 0; j < per_lane; ++j) {
    std::uint32_t const cell = (j * warp_lanes + w.lane) * fmt::candidate_sample_stride;
    value[j] = cell < count ? first[cell] : Float(0);
    bool const take = cell < count && !(p.has_fill && static_cast<std::uint64_t>(fmt::bits_of(value[j])) == p.fill);
    sampled |= take ? 1U << j : 0U;
  }
  std::uint64_t const sampled_values = warp_sum(w, popc32(sampled));
  int best = 0;
  std::uint64_t best_cost = 0;
  for (int c = 0; c < p.candidates; ++c) {
    alp_scales<Float> const sc = scales_of<Float>(p.exponent[c], p.factor[c]);
    alp_stats stats;
    std::uint32_t exception_bits = 0;
ZS_UNROLL
    for (unsigned j = 0; j < per_lane; ++j) {
      if (((sampled >> j) & 1U) == 0) continue;
      std::int64_t d = 0;
      std::int32_t correction = 0;
      fmt::fit const how = fit_scaled(value[j], sc, d, correction);
      add_fit(stats, how, d);
      exception_bits += how == fmt::fit::exact ? 0U : static_cast<std::uint32_t>(fmt::exception_bits<Float>(how));
    }
    stats = warp_total(w, stats);
    exception_bits = warp_sum(w, exception_bits);
    bool const any = stats.lo <= stats.hi;
    std::uint64_t const range = any ? static_cast<std::uint64_t>(stats.hi) - static_cast<std::uint64_t>(stats.lo) : 0;
    std::uint64_t const cost = sampled_values * static_cast<std::uint64_t>(bit_length64(range)) + exception_bits;
    if (c == 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

/// The ALP options of fmt::choose_vector by a warp: raw, then the vector's candidate
/// (vector_candidate_warp) with the fill cells kept, then without them (where the vector has
/// fill cells), costed over the lanes' cells with warp reductions; `choice` and `size` get the
/// first of the least (what the vector becomes unless ALP_RD undercuts it), in every lane.
template <class Warp, typename Float>
ZS_WARP_FN alp_outcome choose_alp_warp(Warp& w, const Float* first, std::uint32_t count, const fmt::column_params& p,
                                       fmt::vector_fields& choice, std::uint64_t& size) {
  unsigned const lane = w.lane;
  cell_masks const cells = load_masks(w, first, count, p.has_fill, p.fill);
  std::uint32_t const valid = cells.valid;
  std::uint32_t const fill = cells.fill;
  std::uint32_t const fills = warp_sum(w, popc32(fill));
  bool const both = fills != 0;

  int const candidate = vector_candidate_warp(w, first, count, p);
  int const e = p.exponent[candidate];
  int const f = p.factor[candidate];
  alp_scales<Float> const sc = scales_of<Float>(e, f);
  alp_stats kept;
  alp_stats filled;
ZS_UNROLL_4
  for (unsigned k = 0; k < cell_rows; ++k) {
    if (((valid >> k) & 1U) == 0) continue;
    std::int64_t d = 0;
    std::int32_t correction = 0;
    fmt::fit const how = fit_scaled(first[k * warp_lanes + lane], sc, d, correction);
    if (((fill >> k) & 1U) != 0) {
      add_fit(filled, how, d);
    } else {
      add_fit(kept, how, d);
    }
  }
  kept = warp_total(w, kept);
  filled = warp_total(w, filled);
  // The reference's order: raw, then the candidate with the fill cells kept, then without.
  choice = fmt::vector_fields{};
  choice.mode = fmt::mode_raw;
  size = fmt::vector_bytes<Float>(choice, count);
  fmt::vector_fields const whole = alp_fields<Float>(merged(kept, filled), e, f, false, fills);
  std::uint64_t const whole_bytes = fmt::vector_bytes<Float>(whole, count);
  if (whole_bytes < size) {
    size = whole_bytes;
    choice = whole;
  }
  alp_outcome outcome;
  outcome.before_rd = size;
  outcome.fills = fills;
  if (both) {
    fmt::vector_fields const less_fill = alp_fields<Float>(kept, e, f, true, fills);
    outcome.alp_less_fill = fmt::vector_bytes<Float>(less_fill, count);
    if (outcome.alp_less_fill < size) {
      size = outcome.alp_less_fill;
      choice = less_fill;
    }
  }
  return outcome;
}

/// The ALP_RD options of fmt::choose_vector by a warp, for both views, after choose_alp_warp
/// gave `alp` and its choice: where one undercuts in the reference's order (raw, the view
/// with the fill cells: ALP, then ALP_RD at every split; the view without them: ALP, then
/// ALP_RD at every split; ties to the first), it replaces `choice` and `size` (in every lane)
/// and the answer is true. `fill_bits`: the column's fill value.
///
/// One sort of the vector's cells serves both views (longest_runs_warp). The splits are tried
/// together, each view's against what it must undercut, and only the best split of each is
/// kept; the winner's dictionary is read from the keys at the end. A view's splits stop where
/// their floor reaches what it must undercut: the floor grows with the split, so no later one
/// can; where the first split's floor cannot for either view (rd_may_undercut), the sort, the
/// costliest step of the choice, is skipped (most decimal vectors end there).
template <class Warp, typename Float>
ZS_WARP_FN ZS_ALP_OUTLINED bool choose_rd_warp(Warp& w, const Float* first, std::uint32_t count, std::uint64_t fill_bits,
                                               const alp_outcome& alp, fmt::vector_fields& choice, std::uint64_t& size) {
  using traits = fmt::float_traits<Float>;
  constexpr int top_shift = traits::width - fmt::max_left_bits;
  if (!rd_may_undercut<Float>(count, alp)) return false;
  unsigned const lane = w.lane;
  std::uint32_t const fills = alp.fills;
  bool const both = fills != 0;
  // The best ALP_RD split with the fill cells kept, and what an option without them must
  // undercut: everything before it in the reference's order that is known so far.
  std::uint64_t best_all = alp.before_rd;
  int split_all = -1;
  std::uint64_t must_undercut = both ? min_of(alp.before_rd, alp.alp_less_fill) : 0;
  std::uint64_t best_less = ~std::uint64_t{0};
  int split_less = -1;
  std::uint32_t const fill_key = static_cast<std::uint32_t>((fill_bits >> top_shift) & 0xffffU);
  // Read again rather than kept in registers since the ALP step: the cells are in cache, and
  // the registers are the choice's bound.
  std::uint32_t key[cell_rows];
ZS_UNROLL
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const c = k * warp_lanes + lane;
    key[k] = c < count ? static_cast<std::uint32_t>(static_cast<std::uint64_t>(fmt::bits_of(first[c])) >> top_shift)
                       : rd_absent_key;
  }
  sort_keys_warp(w, key);
  std::uint32_t before = w.shfl_up(key[cell_rows - 1], 1);
  if (lane == 0) before = ~0U;
  for (int shift = 0; shift < fmt::max_left_bits; ++shift) {
    int const right_bits = top_shift + shift;
    bool const try_all = rd_floor_bytes<Float>(count, false, fills, right_bits) < best_all;
    bool const try_less = both && rd_floor_bytes<Float>(count, true, fills, right_bits) < must_undercut;
    if (!try_all && !try_less) break;
    rd_runs all;
    rd_runs less_fill;
    longest_runs_warp(w, key, before, shift, count, fill_key, fills, all, less_fill);
    fmt::vector_fields option;
    if (try_all) {
      std::uint64_t const b = size_rd_option<Float>(all, right_bits, false, fills, count, option);
      if (b < best_all) {
        best_all = b;
        split_all = shift;
        must_undercut = min_of(must_undercut, b);
      }
    }
    if (try_less) {
      std::uint64_t const b = size_rd_option<Float>(less_fill, right_bits, true, fills, count, option);
      if (b < must_undercut) {
        best_less = b;
        split_less = shift;
        must_undercut = b;
      }
    }
  }
  // The reference's order over the best of each step; the ALP ones are the ALP step's choice.
  std::uint64_t least = alp.before_rd;
  int split = -1;
  bool less = false;
  if (best_all < least) {
    least = best_all;
    split = split_all;
  }
  if (both && alp.alp_less_fill < least) {
    least = alp.alp_less_fill;
    split = -1;
  }
  if (both && best_less < least) {
    least = best_less;
    split = split_less;
    less = true;
  }
  if (split < 0) return false;
  // The winning split's runs again, and the entries' left parts: each run's first key, from
  // the lane that holds it.
  rd_runs all;
  rd_runs less_fill;
  longest_runs_warp(w, key, before, split, count, fill_key, fills, all, less_fill);
  rd_runs const& runs = less ? less_fill : all;
  fmt::vector_fields option;
  size_rd_option<Float>(runs, top_shift + split, less, fills, count, option);
  for (int i = 0; i < fmt::max_dict; ++i) {
    std::uint32_t const at = run_first(runs.top[i]);
    std::uint32_t const entry = w.shfl(key_in_register(key, at % warp_lanes), at / warp_lanes) >> split;
    option.dict[i] = static_cast<std::uint16_t>(i < option.dict_size && runs.top[i] != 0 ? entry : 0U);
  }
  choice = option;
  size = least;
  return true;
}

/// fmt::choose_vector by a warp: its ALP options (choose_alp_warp), then its ALP_RD options
/// of both views from one sort (choose_rd_warp), so the choice is the reference's. The size
/// kernels run the two steps apart, ALP_RD only for the vectors where it may undercut.
template <class Warp, typename Float>
ZS_WARP_FN void choose_vector_warp(Warp& w, const Float* first, std::uint32_t count, const fmt::column_params& p,
                                   fmt::vector_fields& choice, std::uint64_t& size) {
  alp_outcome const alp = choose_alp_warp(w, first, count, p, choice, size);
  choose_rd_warp(w, first, count, p.fill, alp, choice, size);
}

/// The code of a left part in an ALP_RD dictionary (fmt::dict_code), over every entry at
/// once: a loop to the dictionary's size would index registers at run time.
ZS_WARP_FN inline int dict_code_of(const fmt::vector_fields& v, std::uint64_t left) {
  int code = -1;
ZS_UNROLL
  for (int i = fmt::max_dict - 1; i >= 0; --i) code = i < v.dict_size && v.dict[i] == left ? i : code;
  return code;
}

/// FastLanes lane `lane` of a lane-layout area of `rows` rows of `bits`-bit fields: the lane's
/// fields (field(r), row r's) one after another, words[i * lanes + lane], every word written.
template <typename Word, class Field>
ZS_HD inline void pack_lane(Word* words, unsigned lanes, unsigned lane, std::uint32_t rows, int bits, Field field) {
  constexpr int width = static_cast<int>(sizeof(Word) * 8);
  Word word = 0;
  int used = 0;
  std::uint32_t next = 0;  // the lane's next word
  for (std::uint32_t r = 0; r < rows; ++r) {
    Word const value = field(r);
    word |= static_cast<Word>(value << used);
    if (used + bits >= width) {
      words[next++ * lanes + lane] = word;
      word = used == 0 ? Word{0} : static_cast<Word>(value >> (width - used));
      used += bits - width;
    } else {
      used += bits;
    }
  }
  if (used > 0) words[next * lanes + lane] = word;
}

/// The sections after the fill map of an ALP_RD vector (fmt::write_vector's, byte for byte):
/// the lanes code their cells row by row (kept value j's code and right part, its exception by
/// a ballot of the row's) and stage the kept values' bits in shared memory, from which lane l
/// packs FastLanes lane l of the codes and of the right parts.
template <class Warp, typename Float>
ZS_WARP_FN void write_rd_warp(Warp& w, const Float* first, std::uint32_t count, const fmt::vector_fields& fields,
                              const kept_rows& rows_kept, std::byte* at, std::uint64_t* stage_words) {
  unsigned const lane = w.lane;
  using traits = fmt::float_traits<Float>;
  using word_t = typename traits::bits_t;
  constexpr unsigned lanes = traits::lanes;
  std::uint32_t const m = rows_kept.kept;
  std::uint32_t const rows = (m + lanes - 1) / lanes;
  if (lane == 0) {
ZS_UNROLL
    for (int i = 0; i < fmt::max_dict; ++i) detail::store_le(at + 2 * i, fields.dict[i], 2);
  }
  at += fmt::dict_bytes;
  auto* codes = reinterpret_cast<word_t*>(at);
  std::uint64_t const codes_size = fmt::packed_bytes(lanes, traits::width, rows, fields.bits);
  auto* rights = reinterpret_cast<word_t*>(at + codes_size);
  std::byte* positions = at + codes_size + fmt::packed_bytes(lanes, traits::width, rows, fields.right_bits);
  std::byte* lefts = positions + fmt::pad8(2 * std::uint64_t{fields.exceptions});
  if (lane == 0 && fields.exceptions != 0) {
    // The padding after the last position and the last left part: zero, under the writes below.
    *reinterpret_cast<std::uint64_t*>(lefts - 8) = 0;
    *reinterpret_cast<std::uint64_t*>(lefts + fmt::pad8(2 * std::uint64_t{fields.exceptions}) - 8) = 0;
  }
  w.sync();
  unsigned const below = lanes_below(lane);
  auto* stage = reinterpret_cast<word_t*>(stage_words);
  std::uint32_t exceptions_before = 0;
ZS_UNROLL_4
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const kept_mask = w.shfl(rows_kept.mask, k);
    std::uint32_t const base = w.shfl(rows_kept.base, k);
    bool const kept = ((kept_mask >> lane) & 1U) != 0;
    word_t const b = fmt::bits_of(cell_value(first, count, k, lane));
    std::uint64_t const left = static_cast<std::uint64_t>(b) >> fields.right_bits;
    bool const exception = kept && dict_code_of(fields, left) < 0;
    std::uint32_t const exceptions = w.ballot(exception);
    std::uint32_t const j = base + popc32(kept_mask & below);
    if (kept) stage[j] = b;
    if (exception) {
      std::uint32_t const x = exceptions_before + popc32(exceptions & below);
      detail::store_le(positions + 2 * x, j, 2);
      detail::store_le(lefts + 2 * x, left, 2);
    }
    exceptions_before += popc32(exceptions);
  }
  w.sync();
  if (lane < lanes) {
    // Slots past the kept values are zero in both areas; an exception's code is 0.
    word_t const right_mask = static_cast<word_t>((word_t{1} << fields.right_bits) - 1);
    if (fields.bits != 0) {
      pack_lane(codes, lanes, lane, rows, fields.bits, [&](std::uint32_t r) {
        std::uint32_t const j = r * lanes + lane;
        int const code = j < m ? dict_code_of(fields, static_cast<std::uint64_t>(stage[j]) >> fields.right_bits) : 0;
        return static_cast<word_t>(code < 0 ? 0 : code);
      });
    }
    pack_lane(rights, lanes, lane, rows, fields.right_bits, [&](std::uint32_t r) {
      std::uint32_t const j = r * lanes + lane;
      return j < m ? static_cast<word_t>(stage[j] & right_mask) : word_t{0};
    });
  }
}

/// Copies `words` 8-byte words into the stage, every lane's loads issued together (8 a lane at
/// a time in flight), between syncs: the previous vector's readers are done with the stage
/// before, and every lane sees the copy after.
template <class Warp>
ZS_WARP_FN void copy_to_stage_warp(Warp& w, const std::uint64_t* from, std::uint32_t words, std::uint64_t* stage_words) {
  unsigned const lane = w.lane;
  w.sync();
  constexpr unsigned batch = 8;
  for (std::uint32_t first_word = 0; first_word < words; first_word += batch * warp_lanes) {
    std::uint64_t held[batch];
ZS_UNROLL
    for (unsigned b = 0; b < batch; ++b) {
      std::uint32_t const i = first_word + b * warp_lanes + lane;
      held[b] = i < words ? from[i] : 0;
    }
ZS_UNROLL
    for (unsigned b = 0; b < batch; ++b) {
      std::uint32_t const i = first_word + b * warp_lanes + lane;
      if (i < words) stage_words[i] = held[b];
    }
  }
  w.sync();
}

/// Puts an ALP vector's exceptions, written by increasing position (words from `lane_counts` +
/// the counts' bytes, then patches), in fmt::write_vector's order: lane by lane (FastLanes lane
/// j mod lanes), each lane's by increasing position; and writes the lane counts. The list goes
/// through the stage once the packing has read it (it fits: an ALP vector is smaller than its
/// raw form, which is the stage's size). Two passes over it, 32 exceptions at a time: the first
/// counts each lane's exceptions and patch bytes (lane l holds FastLanes lane l's), the second
/// puts each exception after those of its lane before it.
template <typename Float, class Warp>
ZS_WARP_FN void group_exceptions_by_lane(Warp& w, const fmt::vector_fields& fields, std::byte* lane_counts,
                                         std::uint64_t* stage_words) {
  unsigned const lane = w.lane;
  constexpr unsigned lanes = fmt::float_traits<Float>::lanes;
  constexpr std::uint32_t value_bytes = sizeof(Float);
  std::uint32_t const exceptions = fields.exceptions;
  std::byte* positions = lane_counts + fmt::lane_count_bytes<Float>(fields);
  auto const words_bytes = static_cast<std::uint32_t>(fmt::pad8(2 * std::uint64_t{exceptions}));
  std::byte* patches = positions + words_bytes;
  auto const list_words = static_cast<std::uint32_t>((words_bytes + fmt::alp_patch_bytes<Float>(fields)) / 8);
  copy_to_stage_warp(w, reinterpret_cast<const std::uint64_t*>(positions), list_words, stage_words);
  const auto* staged = reinterpret_cast<const std::byte*>(stage_words);
  unsigned const below = lanes_below(lane);
  std::uint32_t run_words = 0;  // FastLanes lane `lane`'s exceptions and patch bytes: its run's
  std::uint32_t run_bytes = 0;  // size (first pass), then where its next one goes (second pass)
  for (int pass = 0; pass < 2; ++pass) {
    std::uint32_t patch_before = 0;
    for (std::uint32_t first = 0; first < exceptions; first += warp_lanes) {
      std::uint32_t const k = first + lane;
      bool const active = k < exceptions;
      auto const word = active ? static_cast<std::uint32_t>(detail::load_le(staged + 2 * k, 2)) : 0U;
      bool const corrected = (word & fmt::correction_flag) != 0;
      std::uint32_t const size = active ? fmt::alp_patch_size<Float>(corrected) : 0U;
      std::uint32_t sizes = 0;
      std::uint32_t const patch = patch_before + warp_exclusive_sum(w, size, sizes);
      patch_before += sizes;
      unsigned const owner = (word & fmt::position_mask) % lanes;
      std::uint32_t const corrections = w.ballot(active && corrected);
      std::uint32_t same = 0;  // the batch's exceptions of this one's lane
      std::uint32_t mine = 0;  // the batch's exceptions of FastLanes lane `lane`
ZS_UNROLL
      for (unsigned l = 0; l < lanes; ++l) {
        std::uint32_t const of_l = w.ballot(active && owner == l);
        same = owner == l ? of_l : same;
        mine = lane == l ? of_l : mine;
      }
      auto const bytes_of = [&](std::uint32_t m) {
        return 2 * popc32(m & corrections) + value_bytes * popc32(m & ~corrections);
      };
      if (pass == 1) {
        std::uint32_t const word_at = w.shfl(run_words, owner) + popc32(same & below);
        std::uint32_t const patch_at = w.shfl(run_bytes, owner) + bytes_of(same & below);
        if (active) {
          detail::store_le(positions + 2 * word_at, word, 2);
          detail::store_le(patches + patch_at, detail::load_le(staged + words_bytes + patch, size), size);
        }
      }
      run_words += popc32(mine);
      run_bytes += bytes_of(mine);
    }
    if (pass == 0) {
      if (lane < lanes) lane_counts[lane] = static_cast<std::byte>(run_words);
      std::uint32_t total = 0;
      run_words = warp_exclusive_sum(w, run_words, total);
      run_bytes = warp_exclusive_sum(w, run_bytes, total);
    }
  }
}

/// fmt::write_vector by a warp, for the size pass's choice. ALP and raw vectors: the lanes code
/// their cells row by row, place the kept values by a scan of the rows' kept masks, the
/// exceptions by ballots of the row's exceptions, and stage the ALP offsets (ALP_RD: the kept
/// values' bits) in shared memory, from which lane l (l < the type's lane count) packs
/// FastLanes lane l word by word.
template <class Warp, typename Float>
ZS_WARP_FN void write_vector_warp(Warp& w, const Float* first, std::uint32_t count, std::uint64_t fill_bits,
                                  const fmt::vector_fields& fields, std::byte* out, std::uint64_t* stage_words) {
  unsigned const lane = w.lane;
  using traits = fmt::float_traits<Float>;
  using word_t = typename traits::bits_t;
  constexpr unsigned lanes = traits::lanes;
  constexpr int width = traits::width;
  cell_masks const cells = load_masks(w, first, count, fields.fill, fill_bits);

  if (lane == 0) fmt::store_vector_header(fields, out);
  std::byte* at = out + fmt::vector_header_bytes;
  std::uint32_t const fill_row = fill_row_of_lane(w, cells);
  if (fields.fill) {
    reinterpret_cast<std::uint32_t*>(at)[lane] = fill_row;  // bit i % 32 of word i / 32, little-endian
    at += fmt::fill_map_bytes;
  }
  kept_rows const rows_kept = scan_kept(w, valid_cells_of_row(count, lane) & ~fill_row);
  std::uint32_t const m = rows_kept.kept;
  unsigned const below = lanes_below(lane);

  if (fields.mode == fmt::mode_rd) {
    write_rd_warp(w, first, count, fields, rows_kept, at, stage_words);
    return;
  }
  if (fields.mode == fmt::mode_raw) {
    std::uint64_t const raw = std::uint64_t{m} * sizeof(Float);
    if (lane == 0 && raw % 8 != 0) *reinterpret_cast<std::uint64_t*>(at + fmt::pad8(raw) - 8) = 0;
    w.sync();
    auto* words = reinterpret_cast<word_t*>(at);
ZS_UNROLL_4
    for (unsigned k = 0; k < cell_rows; ++k) {
      std::uint32_t const kept_mask = w.shfl(rows_kept.mask, k);
      std::uint32_t const base = w.shfl(rows_kept.base, k);
      if (((kept_mask >> lane) & 1U) != 0) words[base + popc32(kept_mask & below)] = fmt::bits_of(first[k * warp_lanes + lane]);
    }
    return;
  }

  // ALP. The exceptions are written by increasing position first, then grouped by lane.
  std::uint32_t const rows = (m + lanes - 1) / lanes;
  std::uint64_t const packed_size = fmt::packed_bytes(lanes, width, rows, fields.bits);
  std::byte* positions = at + packed_size + fmt::lane_count_bytes<Float>(fields);
  std::byte* patches = positions + fmt::pad8(2 * std::uint64_t{fields.exceptions});
  std::uint64_t const patch_bytes = fmt::alp_patch_bytes<Float>(fields);
  if (lane == 0 && fields.exceptions != 0) {
    // The padding after the last position and the last patch: zero, under the writes below.
    *reinterpret_cast<std::uint64_t*>(patches - 8) = 0;
    *reinterpret_cast<std::uint64_t*>(patches + patch_bytes - 8) = 0;
  }
  w.sync();
  alp_scales<Float> const sc = scales_of<Float>(fields.exponent, fields.factor);
  auto* stage = reinterpret_cast<word_t*>(stage_words);
  std::uint32_t exceptions_before = 0;
  std::uint32_t patch_before = 0;
ZS_UNROLL_4
  for (unsigned k = 0; k < cell_rows; ++k) {
    std::uint32_t const kept_mask = w.shfl(rows_kept.mask, k);
    std::uint32_t const base = w.shfl(rows_kept.base, k);
    bool const kept = ((kept_mask >> lane) & 1U) != 0;
    Float const value = cell_value(first, count, k, lane);
    std::int64_t d = 0;
    std::int32_t correction = 0;
    fmt::fit const how = kept ? fit_scaled(value, sc, d, correction) : fmt::fit::exact;
    std::uint32_t const corrected = w.ballot(how == fmt::fit::corrected);
    std::uint32_t const stored = w.ballot(how == fmt::fit::none);
    if (kept) {
      std::uint32_t const j = base + popc32(kept_mask & below);
      // An exception that stores its value has the base in its slot (offset 0).
      stage[j] = how == fmt::fit::none ? word_t{0} : static_cast<word_t>(static_cast<std::uint64_t>(d) - fields.base);
      if (how != fmt::fit::exact) {
        std::uint32_t const x = exceptions_before + popc32((corrected | stored) & below);
        std::uint32_t const at_patch = patch_before + 2 * popc32(corrected & below) +
                                       static_cast<std::uint32_t>(sizeof(Float)) * popc32(stored & below);
        if (how == fmt::fit::corrected) {
          detail::store_le(positions + 2 * x, j | fmt::correction_flag, 2);
          detail::store_le(patches + at_patch, static_cast<std::uint16_t>(static_cast<std::int16_t>(correction)), 2);
        } else {
          detail::store_le(positions + 2 * x, j, 2);
          detail::store_le(patches + at_patch, fmt::bits_of(value), sizeof(Float));
        }
      }
    }
    exceptions_before += popc32(corrected | stored);
    patch_before += 2 * popc32(corrected) + static_cast<std::uint32_t>(sizeof(Float)) * popc32(stored);
  }
  for (std::uint32_t j = m + lane; j < rows * lanes; j += warp_lanes) stage[j] = 0;  // the last row's empty slots
  w.sync();
  if (lane < lanes && fields.bits != 0) {
    pack_lane(reinterpret_cast<word_t*>(at), lanes, lane, rows, fields.bits,
              [&](std::uint32_t r) { return stage[r * lanes + lane]; });
  }
  if (fields.exceptions != 0) group_exceptions_by_lane<Float>(w, fields, at + packed_size, stage_words);
}

/// fmt::check_vector by a warp, the same verdict: every lane reads the header (the same bytes,
/// so every early answer is the warp's), the loops over the exceptions and the fill map are
/// split over the lanes and their verdicts joined.
template <class Warp, typename Float>
ZS_WARP_FN bool check_vector_warp(Warp& w, const std::byte* in, std::uint64_t available, std::uint32_t count,
                                  const fmt::column_params& p, fmt::vector_fields& v) {
  unsigned const lane = w.lane;
  using traits = fmt::float_traits<Float>;
  if (available < fmt::vector_header_bytes) return false;
  std::uint8_t const mode_byte = static_cast<std::uint8_t>(in[0]);
  v.mode = static_cast<std::uint8_t>(mode_byte & ~fmt::fill_flag);
  v.fill = (mode_byte & fmt::fill_flag) != 0;
  v.bits = static_cast<int>(in[1]);
  if (v.mode == fmt::mode_rd) {
    v.dict_size = static_cast<int>(in[2]);
    v.right_bits = static_cast<int>(in[3]);
  } else {
    v.exponent = static_cast<int>(in[2]);
    v.factor = static_cast<int>(in[3]);
  }
  v.exceptions = static_cast<std::uint32_t>(detail::load_le(in + 4, 2));
  v.fills = static_cast<std::uint32_t>(detail::load_le(in + 6, 2));
  v.base = detail::load_le(in + 8, 8);
  if (v.mode > fmt::mode_raw) return false;
  if (v.fill ? (!p.has_fill || v.fills == 0 || v.fills > count) : v.fills != 0) return false;
  std::uint32_t const m = count - v.fills;
  switch (v.mode) {
    case fmt::mode_alp:
      if (v.bits > traits::width || v.exponent > traits::max_exponent || v.factor > v.exponent) return false;
      if (traits::width == 32 &&
          v.base != static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(v.base)))))
        return false;
      break;
    case fmt::mode_rd:
      if (v.dict_size < 1 || v.dict_size > fmt::max_dict || !fmt::valid_right_bits(traits::width, v.right_bits) ||
          v.bits != fmt::bit_length(static_cast<std::uint64_t>(v.dict_size - 1)) || v.base != 0)
        return false;
      break;
    default:
      if (v.bits != 0 || v.exponent != 0 || v.factor != 0 || v.base != 0 || v.exceptions != 0) return false;
      break;
  }
  if (v.exceptions > m) return false;
  std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
  if (v.mode == fmt::mode_alp && v.exceptions != 0) {
    std::uint64_t const before = fmt::vector_header_bytes + (v.fill ? fmt::fill_map_bytes : 0) +
                                 fmt::packed_bytes(traits::lanes, traits::width, rows, v.bits) +
                                 fmt::lane_count_bytes<Float>(v);
    if (before > available || fmt::pad8(2 * std::uint64_t{v.exceptions}) > available - before) return false;
    bool bad = false;
    std::uint32_t corrections = 0;
    for (std::uint32_t x = lane; x < v.exceptions; x += warp_lanes) {
      std::uint64_t const word = detail::load_le(in + before + 2 * x, 2);
      bad = bad || (word & ~std::uint64_t{fmt::correction_flag | fmt::position_mask}) != 0;
      corrections += (word & fmt::correction_flag) != 0 ? 1 : 0;
    }
    if (w.any(bad)) return false;
    v.corrections = warp_sum(w, corrections);
  }
  if (fmt::vector_bytes<Float>(v, count) != available) return false;
  const std::byte* at = in + fmt::vector_header_bytes;
  if (v.fill) {
    // The map marks exactly `fills` cells, none past the vector's count: lane l reads its 4 bytes.
    bool bad = false;
    std::uint32_t marked = 0;
    for (std::uint32_t b = 4 * lane; b < 4 * lane + 4; ++b) {
      auto const byte = static_cast<unsigned>(at[b]);
      std::uint32_t const cells = count > 8 * b ? count - 8 * b : 0;
      bad = bad || (cells < 8 && (byte >> cells) != 0);
      marked += popc32((byte));
    }
    if (w.any(bad) || warp_sum(w, marked) != v.fills) return false;
    at += fmt::fill_map_bytes;
  }
  if (v.mode == fmt::mode_raw) return true;
  if (v.mode == fmt::mode_rd) {
    for (int i = 0; i < fmt::max_dict; ++i) {
      std::uint64_t const entry = detail::load_le(at + 2 * i, 2);
      if (i >= v.dict_size ? entry != 0 : (entry >> (traits::width - v.right_bits)) != 0) return false;
      v.dict[i] = static_cast<std::uint16_t>(entry);
    }
    at += fmt::dict_bytes;
  }
  std::uint64_t const packed = fmt::packed_bytes(traits::lanes, traits::width, rows, v.bits) +
                               (v.mode == fmt::mode_rd ? fmt::packed_bytes(traits::lanes, traits::width, rows, v.right_bits) : 0);
  bool bad = false;
  if (v.mode == fmt::mode_alp) {
    if (v.exceptions == 0) return true;
    // Lane l checks FastLanes lane l's run of positions, which starts after the runs before it.
    const std::byte* lane_counts = at + packed;
    const std::byte* positions = lane_counts + fmt::lane_count_bytes<Float>(v);
    std::uint32_t const run = lane < traits::lanes ? static_cast<std::uint32_t>(lane_counts[lane]) : 0U;
    std::uint32_t runs = 0;
    std::uint32_t const start = warp_exclusive_sum(w, run, runs);
    if (runs != v.exceptions) return false;
    for (std::uint32_t x = start; x < start + run; ++x) {
      std::uint64_t const pos = detail::load_le(positions + 2 * x, 2) & fmt::position_mask;
      bad = bad || pos >= m || pos % traits::lanes != lane ||
            (x > start && pos <= (detail::load_le(positions + 2 * (x - 1), 2) & fmt::position_mask));
    }
    return !w.any(bad);
  }
  const std::byte* positions = at + packed;
  const std::byte* lefts = positions + fmt::pad8(2 * std::uint64_t{v.exceptions});
  for (std::uint32_t x = lane; x < v.exceptions; x += warp_lanes) {
    std::uint64_t const pos = detail::load_le(positions + 2 * x, 2);
    bad = bad || pos >= m || (x > 0 && pos <= detail::load_le(positions + 2 * (x - 1), 2));
    bad = bad || detail::load_le(lefts + 2 * x, 2) >> (traits::width - v.right_bits) != 0;
  }
  return !w.any(bad);
}

/// Field `slot` of a FastLanes lane-layout area of `bits`-bit fields (fmt::get_field) for the
/// width a whole vector shares: the place in 32-bit arithmetic (an area holds at most 1024
/// fields), the mask made once, and the area typed by where it lives, so that a staged area in
/// shared memory is read with shared loads.
template <typename Word>
struct lane_fields {
  const Word* words;
  int bits;
  Word mask;

  ZS_HD lane_fields(const Word* area, int field_bits)
      : words(area),
        bits(field_bits),
        mask(field_bits >= static_cast<int>(sizeof(Word) * 8) ? ~Word{0} : static_cast<Word>((Word{1} << field_bits) - 1)) {}

  ZS_HD Word operator()(std::uint32_t slot) const {
    constexpr unsigned width = sizeof(Word) * 8;
    constexpr unsigned lanes = fmt::vector_values / width;  // FastLanes rows are 1024 bits
    // bits 0: the mask is 0; the read stays inside the area's first row of words.
    std::uint32_t const bit = slot / lanes * static_cast<std::uint32_t>(bits);
    std::uint32_t const at = bit / width * lanes + slot % lanes;
    unsigned const shift = bit % width;
    Word v = static_cast<Word>(words[at] >> shift);
    if (shift + static_cast<unsigned>(bits) > width) v |= static_cast<Word>(words[at + lanes] << (width - shift));
    return static_cast<Word>(v & mask);
  }
};

/// Bytes of a vector's main section (ALP offsets, ALP_RD codes and right parts, raw values):
/// what decode_vector_warp reads for every cell, and stages.
template <typename Float>
ZS_HD inline std::uint64_t main_section_bytes(const fmt::vector_fields& v, std::uint32_t count) {
  using traits = fmt::float_traits<Float>;
  std::uint32_t const m = count - v.fills;
  std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
  switch (v.mode) {
    case fmt::mode_alp:
      return fmt::packed_bytes(traits::lanes, traits::width, rows, v.bits);
    case fmt::mode_rd:
      return fmt::packed_bytes(traits::lanes, traits::width, rows, v.bits) +
             fmt::packed_bytes(traits::lanes, traits::width, rows, v.right_bits);
    default:
      return fmt::pad8(std::uint64_t{m} * sizeof(Float));
  }
}

/// Copies a whole vector of `bytes` (a multiple of 8, 8-byte aligned) into the stage where it
/// fits, which every vector the encoder writes does (none is larger than its raw form), and
/// answers whether it did: its checks and decode then read shared memory, not the device
/// memory a section at a time.
template <class Warp>
ZS_WARP_FN bool stage_vector_warp(Warp& w, const std::byte* vector, std::uint64_t bytes, std::uint64_t* stage_words) {
  if (bytes > decode_stage_bytes_per_warp) return false;
  copy_to_stage_warp(w, reinterpret_cast<const std::uint64_t*>(vector), static_cast<std::uint32_t>(bytes / 8), stage_words);
  return true;
}

/// One lane's walk over an ALP vector's exceptions where the vector has no fill cells, so that
/// cell c holds kept value c: the lane decodes cells 32k + lane, which lie in FastLanes lane
/// (lane mod lanes), and patches them from that lane's run of exceptions (the per-lane layout)
/// as it goes, one comparison a cell, so no cell is written twice. A float64 lane's run also
/// holds the cells of the lane 16 apart (FastLanes has 16 lanes there), at most one between two
/// of this lane's, stepped over.
template <typename Float>
struct lane_patches {
  using word_t = typename fmt::float_traits<Float>::bits_t;
  static constexpr unsigned lanes = fmt::float_traits<Float>::lanes;
  const std::byte* positions;  // the exception words; the patches follow them
  std::uint32_t next;          // the run's next exception, in the list
  std::uint32_t end;           // the run's end
  std::uint32_t patch;         // next's patch, in bytes from `positions`
  std::uint32_t position;      // next's position; past every cell at the run's end

  ZS_HD bool corrected() const { return (detail::load_le(positions + 2 * next, 2) & fmt::correction_flag) != 0; }
  ZS_HD void load() {
    position = next < end ? static_cast<std::uint32_t>(detail::load_le(positions + 2 * next, 2)) & fmt::position_mask : ~0U;
  }
  ZS_HD void step() {
    patch += fmt::alp_patch_size<Float>(corrected());
    ++next;
    load();
  }
  /// Cell j's value, given its unpatched `value`; cells come in increasing order.
  ZS_HD Float apply(std::uint32_t j, Float value) {
    if constexpr (lanes < warp_lanes) {
      if (position < j) step();
    }
    if (position != j) return value;
    word_t bits;
    if (corrected()) {
      auto const correction = static_cast<std::int16_t>(static_cast<std::uint16_t>(detail::load_le(positions + patch, 2)));
      bits = static_cast<word_t>(fmt::bits_of(value) + static_cast<word_t>(static_cast<std::int64_t>(correction)));
    } else {
      bits = static_cast<word_t>(detail::load_le(positions + patch, sizeof(Float)));
    }
    step();
    return fmt::from_bits<Float>(bits);
  }
};

/// Each lane's lane_patches: its FastLanes lane's run starts after the runs of the lanes before
/// (a scan of the lane counts) and its patches after theirs (a scan of each run's patch bytes,
/// which lane l < lanes adds up over run l).
template <typename Float, class Warp>
ZS_WARP_FN lane_patches<Float> lane_patches_of(Warp& w, const fmt::vector_sections& s) {
  constexpr unsigned lanes = fmt::float_traits<Float>::lanes;
  unsigned const lane = w.lane;
  unsigned const own = lane % lanes;
  std::uint32_t const run = lane < lanes ? static_cast<std::uint32_t>(s.lane_counts[lane]) : 0U;
  std::uint32_t total = 0;
  std::uint32_t const start = warp_exclusive_sum(w, run, total);
  std::uint32_t bytes = 0;
  for (std::uint32_t x = start; x < start + run; ++x) {
    bytes += fmt::alp_patch_size<Float>((detail::load_le(s.positions + 2 * x, 2) & fmt::correction_flag) != 0);
  }
  auto const patches = static_cast<std::uint32_t>(s.patches - s.positions) + warp_exclusive_sum(w, bytes, total);
  lane_patches<Float> r{s.positions, w.shfl(start, own), 0, w.shfl(patches, own), 0};
  r.end = r.next + w.shfl(run, own);
  r.load();
  return r;
}

/// Decodes a vector that check_vector_warp accepted into out[0 .. count), as fmt::read_vector
/// does: its main section from shared memory (`stage_words`, decode_stage_bytes_per_warp, which
/// holds the largest a checked vector can have: where `in_stage`, `vector` is the stage, the
/// whole vector staged by stage_vector_warp; else the main section is copied there first), the
/// cells row by row (cell 32k + lane by lane `lane`, so a row's stores are one coalesced run;
/// the kept value of each cell from a scan of the fill map's rows). An ALP vector without fill
/// cells patches its exceptions in that pass, each lane from its FastLanes lane's run
/// (lane_patches); other vectors patch theirs after it, 32 at a time (their patches placed by a
/// scan of their sizes, their cells found by a search of the rows). An ALP_RD code's left part comes from the lane that holds that dictionary entry, by a
/// shuffle: the dictionary indexed at run time would live in local memory.
template <class Warp, typename Float>
ZS_WARP_FN void decode_vector_warp(Warp& w, const std::byte* vector, bool in_stage, std::uint32_t count,
                                   const fmt::column_params& p, const fmt::vector_fields& fields, Float* out,
                                   std::uint64_t* stage_words) {
  unsigned const lane = w.lane;
  using traits = fmt::float_traits<Float>;
  using word_t = typename traits::bits_t;
  fmt::vector_sections const s = fmt::sections_of<Float>(vector, count, fields);
  // The main section's words, read by every cell, in shared memory: typed from the stage's own
  // pointer, so that they are read with shared loads. A copy made here lets the cells' reads
  // wait on shared memory, not on a global load each (the cells' stores may alias the frame,
  // so the compiler could not move a row's loads above the stores before it).
  std::uint64_t main_offset = 0;
  if (in_stage) {
    main_offset = static_cast<std::uint64_t>(s.packed - vector);
  } else {
    copy_to_stage_warp(w, reinterpret_cast<const std::uint64_t*>(s.packed),
                       static_cast<std::uint32_t>(main_section_bytes<Float>(fields, count) / 8), stage_words);
  }
  const auto* staged = reinterpret_cast<const word_t*>(stage_words + main_offset / 8);
  std::uint32_t const rows = (count - fields.fills + traits::lanes - 1) / traits::lanes;
  lane_fields<word_t> const packed(staged, fields.mode == fmt::mode_raw ? 0 : fields.bits);
  lane_fields<word_t> const right(
      staged + fmt::packed_bytes(traits::lanes, traits::width, rows, fields.bits) / sizeof(word_t),
      fields.mode == fmt::mode_rd ? fields.right_bits : 0);

  std::uint32_t const fill_row = fields.fill ? reinterpret_cast<const std::uint32_t*>(s.map)[lane] : 0U;
  kept_rows const rows_kept = scan_kept(w, valid_cells_of_row(count, lane) & ~fill_row);
  unsigned const below = lanes_below(lane);
  Float const fill = fmt::from_bits<Float>(static_cast<word_t>(p.fill));
  alp_scales<Float> const sc = fields.mode == fmt::mode_alp ? scales_of<Float>(fields.exponent, fields.factor)
                                                            : alp_scales<Float>{};
  auto const alp_value = [&](std::uint32_t j) {
    return decode_scaled<Float>(static_cast<std::int64_t>(fields.base + static_cast<std::uint64_t>(packed(j))), sc);
  };
  // The cells row by row: each lane's cell c, its place j among the kept cells, and `decode(j,
  // kept)`, called by every lane (ALP_RD's shuffle needs them all), its value stored where c
  // is kept. One loop per mode: a mode test inside the unrolled loop slowed the ALP rows
  // (float64 decode 945 -> 570 GB/s on one H200).
  Float* const lane_out = out + lane;  // cell 32k + lane at lane_out[32k]: constant offsets
  auto const rows_of_cells = [&](auto decode, auto has_fill) {
ZS_UNROLL_4
    for (unsigned k = 0; k < cell_rows; ++k) {
      if (k * warp_lanes >= count) break;
      std::uint32_t const c = k * warp_lanes + lane;
      std::uint32_t j = c;
      bool fill_cell = false;
      if constexpr (decltype(has_fill)::value) {
        std::uint32_t const kept_mask = w.shfl(rows_kept.mask, k);
        std::uint32_t const base = w.shfl(rows_kept.base, k);
        fill_cell = ((kept_mask >> lane) & 1U) == 0;
        j = base + popc32(kept_mask & below);
      }
      Float const value = decode(j, c < count && !fill_cell);
      if (c < count) lane_out[k * warp_lanes] = fill_cell ? fill : value;
    }
  };
  // Vectors without fill cells (most) take a loop without the fill map's steps.
  auto const each_cell = [&](auto decode) {
    if (fields.fill) {
      rows_of_cells(decode, std::true_type{});
    } else {
      rows_of_cells(decode, std::false_type{});
    }
  };
  if (fields.mode == fmt::mode_rd) {
    // Lane i (i < 8) holds entry i, picked without indexing the dictionary at run time.
    std::uint32_t dict_entry = 0;
ZS_UNROLL
    for (int i = 0; i < fmt::max_dict; ++i) dict_entry = static_cast<int>(lane % fmt::max_dict) == i ? fields.dict[i] : dict_entry;
    each_cell([&](std::uint32_t j, bool kept) {
      word_t const code = kept ? packed(j) : 0;
      auto const left = static_cast<word_t>(w.shfl(dict_entry, static_cast<unsigned>(code & 7U)));
      word_t const r = kept ? right(j) : 0;
      return fmt::from_bits<Float>(static_cast<word_t>((left << fields.right_bits) | r));
    });
  } else if (fields.mode == fmt::mode_alp) {
    // Cells that are not kept read nothing: past the vector's end, j lies past the section.
    if (!fields.fill && fields.exceptions != 0) {
      lane_patches<Float> patches = lane_patches_of<Float>(w, s);
      rows_of_cells([&](std::uint32_t j, bool kept) { return patches.apply(j, kept ? alp_value(j) : Float(0)); },
                    std::false_type{});
      return;
    }
    each_cell([&](std::uint32_t j, bool kept) { return kept ? alp_value(j) : Float(0); });
  } else {
    each_cell([&](std::uint32_t j, bool kept) { return fmt::from_bits<Float>(kept ? staged[j] : word_t{0}); });
  }
  if (fields.mode == fmt::mode_raw || fields.exceptions == 0) return;
  // The exceptions of ALP vectors with fill cells (lane by lane) and of ALP_RD vectors (by
  // position), in list order: with fill cells, kept value j is not cell j, so a lane's cells are
  // not one FastLanes lane's. Each lane walking its own run after the rows, for the vectors
  // without fill cells too, was measured 15-18% slower on levitus_temp: its stores land 32 to a
  // batch on as many lines (bench/RESULTS.md, 2026-11-28).
  w.sync();  // the exceptions' cells were written above, maybe by other lanes
  std::uint32_t const mask = fields.mode == fmt::mode_alp ? fmt::position_mask : 0xffffU;
  std::uint32_t patch_before = 0;
  for (std::uint32_t first = 0; first < fields.exceptions; first += warp_lanes) {
    std::uint32_t const x = first + lane;
    bool const active = x < fields.exceptions;
    auto const word = active ? static_cast<std::uint32_t>(detail::load_le(s.positions + 2 * x, 2)) : 0U;
    bool const corrected = fields.mode == fmt::mode_alp && (word & fmt::correction_flag) != 0;
    std::uint32_t const size = !active ? 0U : fields.mode == fmt::mode_alp && !corrected ? sizeof(Float) : 2U;
    std::uint32_t sizes = 0;
    std::uint32_t const patch = patch_before + warp_exclusive_sum(w, size, sizes);
    patch_before += sizes;
    std::uint32_t const j = word & mask;
    std::uint32_t cell = j;
    if (fields.fill) {
      // The row whose kept cells hold kept value j: the last whose count of kept cells before
      // it is at most j (rows without kept cells share the next row's count).
      unsigned row = 0;
      for (unsigned step = 16; step > 0; step >>= 1) {
        if (w.shfl(rows_kept.base, row + step) <= j) row += step;
      }
      std::uint32_t const kept_mask = w.shfl(rows_kept.mask, row);
      std::uint32_t const base = w.shfl(rows_kept.base, row);
      cell = row * warp_lanes + nth_set_bit(kept_mask, j - base);
    }
    if (!active) continue;
    Float value;
    if (fields.mode == fmt::mode_rd) {
      word_t const left = static_cast<word_t>(detail::load_le(s.patches + patch, 2));
      value = fmt::from_bits<Float>(static_cast<word_t>((left << fields.right_bits) | right(j)));
    } else if (corrected) {
      auto const correction = static_cast<std::int16_t>(static_cast<std::uint16_t>(detail::load_le(s.patches + patch, 2)));
      value = fmt::from_bits<Float>(static_cast<word_t>(fmt::bits_of(alp_value(j)) +
                                                        static_cast<word_t>(static_cast<std::int64_t>(correction))));
    } else {
      value = fmt::from_bits<Float>(static_cast<word_t>(detail::load_le(s.patches + patch, sizeof(Float))));
    }
    out[cell] = value;
  }
  w.sync();
}


}  // namespace zs::kernels::alp
