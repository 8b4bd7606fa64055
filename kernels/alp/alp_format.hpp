// The alp codec's format (docs/FORMAT.md, codec 4): column parameters, the vector layout, and the
// per-vector encoder and decoder. Everything here is ZS_HD: the CPU reference runs these very
// functions, and the GPU kernels (alp_kernels.cu) run them or warp-parallel versions of them
// that keep their order of choices and arithmetic step for step (the same exceptions, integers
// and bytes), so the CPU tests exercise the rules the kernels follow and both sides agree.
//
// A frame's body is ceil(n / 1024) vectors. Each vector is coded on its own, in one of these
// modes: ALP (decimal values as integers: exponent, factor, frame of reference, bit-packed in
// the FastLanes lane layout, exceptions patched), ALP_RD (the bits split into a left part coded
// by the vector's dictionary of at most 8 entries and a right part bit-packed) or raw. Any mode may first take out the
// column's fill value (the cells equal to it bit for bit, marked in a 1024-bit map), so that
// columns of many fill cells do not pay an exception for each.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

#if defined(__CUDA_ARCH__)
#include <cuda_runtime.h>
#endif

namespace zs::alp {

inline constexpr std::uint32_t vector_values = 1024;
/// Column parameters: a fixed block per column (docs/FORMAT.md, "Column parameters (alp)").
inline constexpr std::uint64_t params_bytes = 32;
inline constexpr int max_candidates = 5;
inline constexpr int max_dict = 8;
inline constexpr int max_left_bits = 16;
/// Vector header bytes, the fill map's bytes, and an ALP_RD dictionary's.
inline constexpr std::uint64_t vector_header_bytes = 16;
inline constexpr std::uint64_t dict_bytes = 2 * max_dict;
inline constexpr std::uint64_t fill_map_bytes = vector_values / 8;
/// Values the column sampling reads: up to sample_vectors stretches of sample_run values.
inline constexpr std::uint32_t sample_vectors = 8;
inline constexpr std::uint32_t sample_run = 128;
inline constexpr std::uint32_t sample_values = sample_vectors * sample_run;

enum vector_mode : std::uint8_t { mode_alp = 0, mode_rd = 1, mode_raw = 2 };
inline constexpr std::uint8_t fill_flag = 0x80;
/// An ALP exception position with this bit stores a 16-bit correction, not the value.
inline constexpr std::uint32_t correction_flag = 0x8000;
inline constexpr std::uint32_t position_mask = 0x3ff;

// --- per-type traits -------------------------------------------------------------------------

template <typename Float>
struct float_traits;
template <>
struct float_traits<float> {
  using bits_t = std::uint32_t;
  static constexpr int width = 32;
  static constexpr int lanes = 32;
  static constexpr int max_exponent = 10;
  /// ALP integers stay within +-2^30, so a vector's range fits 32 bits.
  static constexpr double int_limit = 1073741824.0;
};
template <>
struct float_traits<double> {
  using bits_t = std::uint64_t;
  static constexpr int width = 64;
  static constexpr int lanes = 16;
  static constexpr int max_exponent = 18;
  static constexpr double int_limit = 4611686018427387904.0;  // 2^62
};

ZS_HD inline std::uint32_t bits_of(float v) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__float_as_uint(v));
#else
  return __builtin_bit_cast(std::uint32_t, v);
#endif
}
ZS_HD inline std::uint64_t bits_of(double v) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
  return __builtin_bit_cast(std::uint64_t, v);
#endif
}
template <typename Float>
ZS_HD inline Float from_bits(typename float_traits<Float>::bits_t b) noexcept {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Float) == 4) {
    return __uint_as_float(b);
  } else {
    return __longlong_as_double(static_cast<long long>(b));
  }
#else
  return __builtin_bit_cast(Float, b);
#endif
}

// Products in the value's precision, rounded once each: the device must not fuse them with
// the rounding that follows (an FMA would give other integers than the CPU).
ZS_HD inline float mul(float a, float b) noexcept {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
ZS_HD inline double mul(double a, double b) noexcept {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
/// Round to nearest, ties to even, of a finite |x| <= 2^62.
ZS_HD inline std::int64_t round_to_int(double x) noexcept {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(x);
#else
  return __builtin_llrint(x);
#endif
}
ZS_HD inline std::int64_t round_to_int(float x) noexcept { return round_to_int(static_cast<double>(x)); }

/// 10^k (exact in a double for k <= 22) and 10^-k (the nearest double), for k up to the
/// largest exponent, 18. On the device they sit in constant memory, one broadcast load where
/// the warp agrees on k: a table local to the function went to every thread's stack, filled
/// at each call.
inline constexpr int max_power10 = 18;
#define ZS_ALP_POWERS_OF_TEN {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}
#define ZS_ALP_INVERSE_POWERS_OF_TEN \
  {1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18}
#if defined(__CUDACC__)
static __constant__ double device_power10[max_power10 + 1] = ZS_ALP_POWERS_OF_TEN;
static __constant__ double device_inverse_power10[max_power10 + 1] = ZS_ALP_INVERSE_POWERS_OF_TEN;
#endif
inline constexpr double host_power10[max_power10 + 1] = ZS_ALP_POWERS_OF_TEN;
inline constexpr double host_inverse_power10[max_power10 + 1] = ZS_ALP_INVERSE_POWERS_OF_TEN;
#undef ZS_ALP_POWERS_OF_TEN
#undef ZS_ALP_INVERSE_POWERS_OF_TEN

ZS_HD inline double power10(int k) noexcept {
#if defined(__CUDA_ARCH__)
  return device_power10[k];
#else
  return host_power10[k];
#endif
}
ZS_HD inline double inverse_power10(int k) noexcept {
#if defined(__CUDA_ARCH__)
  return device_inverse_power10[k];
#else
  return host_inverse_power10[k];
#endif
}
template <typename Float>
ZS_HD inline Float pow10_as(int k) noexcept { return static_cast<Float>(power10(k)); }
template <typename Float>
ZS_HD inline Float inv_pow10_as(int k) noexcept { return static_cast<Float>(inverse_power10(k)); }

/// The value of ALP integer d for exponent e and factor f: d x 10^f x 10^-e, rounded at each
/// product, in the value's precision.
template <typename Float>
ZS_HD inline Float decode_int(std::int64_t d, int e, int f) noexcept {
  return mul(mul(static_cast<Float>(d), pow10_as<Float>(f)), inv_pow10_as<Float>(e));
}
/// How a value fits ALP with exponent e and factor f: exactly (d decodes to it); corrected (d
/// decodes to a value whose bit pattern is within +-32767 of it: an exception that stores the
/// 16-bit difference of the patterns, not the value); or not at all (an exception that stores
/// the value). Decimal values that miss by an ulp or two, about 1% of them, are corrected.
enum class fit : std::uint8_t { exact, corrected, none };

template <typename Float>
ZS_HD inline fit fit_int(Float v, int e, int f, std::int64_t& d, std::int32_t& correction) noexcept {
  using word_t = typename float_traits<Float>::bits_t;
  Float const x = mul(mul(v, pow10_as<Float>(e)), inv_pow10_as<Float>(f));
  double const xd = static_cast<double>(x);
  if (!(xd >= -float_traits<Float>::int_limit && xd <= float_traits<Float>::int_limit)) return fit::none;  // NaN too
  d = round_to_int(x);
  word_t const diff = static_cast<word_t>(bits_of(v) - bits_of(decode_int<Float>(d, e, f)));
  if (diff == 0) return fit::exact;
  // The difference as a signed integer of the value's width.
  auto const signed_diff = static_cast<std::int64_t>(
      sizeof(Float) == 4 ? static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(diff)))
                         : static_cast<std::int64_t>(static_cast<std::uint64_t>(diff)));
  if (signed_diff < -32767 || signed_diff > 32767) return fit::none;
  correction = static_cast<std::int32_t>(signed_diff);
  return fit::corrected;
}

/// Bits an exception takes beside its slot: its 16-bit position, and a 16-bit correction or
/// the value.
template <typename Float>
ZS_HD inline std::uint64_t exception_bits(fit how) noexcept {
  return how == fit::corrected ? 32 : 16 + float_traits<Float>::width;
}

ZS_HD inline std::uint32_t popcount8(unsigned byte) noexcept {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__popc(byte));
#else
  return static_cast<std::uint32_t>(__builtin_popcount(byte));
#endif
}

ZS_HD inline int bit_length(std::uint64_t x) noexcept {
  int n = 0;
  while (x != 0) {
    ++n;
    x >>= 1;
  }
  return n;
}

// --- column parameters -------------------------------------------------------------------------

/// The column parameter block, decoded (docs/FORMAT.md, "Column parameters (alp)"):
///   0      u8  candidate count k, 1..5
///   1..10  k (exponent, factor) byte pairs, the rest zero
///   11     zero
///   12     u8  1 when the column has a fill value, else 0
///   13..15 zero
///   16..23 u64 fill value bits (the low width bits; zero when there is none)
///   24..31 zero
struct column_params {
  int candidates = 1;
  std::uint8_t exponent[max_candidates] = {};
  std::uint8_t factor[max_candidates] = {};
  bool has_fill = false;
  std::uint64_t fill = 0;
};

template <typename Float>
ZS_HD inline void store_params(const column_params& p, std::byte* out) noexcept {
  for (std::uint64_t i = 0; i < params_bytes; ++i) out[i] = std::byte{0};
  out[0] = static_cast<std::byte>(p.candidates);
  for (int c = 0; c < p.candidates; ++c) {
    out[1 + 2 * c] = static_cast<std::byte>(p.exponent[c]);
    out[2 + 2 * c] = static_cast<std::byte>(p.factor[c]);
  }
  out[12] = static_cast<std::byte>(p.has_fill ? 1 : 0);
  detail::store_le(out + 16, p.fill, 8);
}

ZS_HD inline bool valid_right_bits(int width, int right_bits) noexcept {
  return right_bits >= width - max_left_bits && right_bits <= width - 1;
}

/// Reads and checks a parameter block; false when it breaks any rule above.
template <typename Float>
ZS_HD inline bool load_params(const std::byte* in, column_params& p) noexcept {
  using traits = float_traits<Float>;
  p.candidates = static_cast<int>(in[0]);
  if (p.candidates < 1 || p.candidates > max_candidates) return false;
  for (int c = 0; c < max_candidates; ++c) {
    int const e = static_cast<int>(in[1 + 2 * c]);
    int const f = static_cast<int>(in[2 + 2 * c]);
    if (c >= p.candidates) {
      if (e != 0 || f != 0) return false;
      continue;
    }
    if (e > traits::max_exponent || f > e) return false;
    p.exponent[c] = static_cast<std::uint8_t>(e);
    p.factor[c] = static_cast<std::uint8_t>(f);
  }
  std::uint8_t const fill = static_cast<std::uint8_t>(in[12]);
  if (fill > 1) return false;
  p.has_fill = fill == 1;
  p.fill = detail::load_le(in + 16, 8);
  if (traits::width == 32 && (p.fill >> 32) != 0) return false;
  if (!p.has_fill && p.fill != 0) return false;
  for (int i : {11, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}) {
    if (in[i] != std::byte{0}) return false;
  }
  return true;
}

// --- sizes -------------------------------------------------------------------------------------

/// Words of `width` bits that `rows` rows of `bits`-bit fields take in the lane layout.
ZS_HD constexpr std::uint64_t packed_bytes(int lanes, int width, std::uint32_t rows, int bits) noexcept {
  std::uint64_t const words_per_lane = (std::uint64_t{rows} * static_cast<std::uint64_t>(bits) + width - 1) / width;
  return words_per_lane * static_cast<std::uint64_t>(lanes) * static_cast<std::uint64_t>(width / 8);
}
ZS_HD inline std::uint64_t pad8(std::uint64_t bytes) noexcept { return (bytes + 7) / 8 * 8; }

/// A vector's fields, as its header gives them.
struct vector_fields {
  std::uint8_t mode = mode_raw;
  bool fill = false;
  int bits = 0;      // ALP: offset width; ALP_RD: left code width
  int exponent = 0;  // ALP
  int factor = 0;    // ALP
  std::uint32_t exceptions = 0;
  std::uint32_t corrections = 0;  // ALP: the exceptions that store a correction, not a value
  std::uint32_t fills = 0;
  std::uint64_t base = 0;  // ALP: the least integer, two's complement
  int right_bits = 0;      // ALP_RD
  int dict_size = 0;       // ALP_RD, 1..8
  std::uint16_t dict[max_dict] = {};  // ALP_RD: left parts, the most frequent first
};

ZS_HD inline void store_vector_header(const vector_fields& v, std::byte* out) noexcept {
  out[0] = static_cast<std::byte>(v.mode | (v.fill ? fill_flag : 0));
  out[1] = static_cast<std::byte>(v.bits);
  out[2] = static_cast<std::byte>(v.mode == mode_rd ? v.dict_size : v.exponent);
  out[3] = static_cast<std::byte>(v.mode == mode_rd ? v.right_bits : v.factor);
  detail::store_le(out + 4, v.exceptions, 2);
  detail::store_le(out + 6, v.fills, 2);
  detail::store_le(out + 8, v.base, 8);
}

/// Bytes of an ALP vector's patches: 2 per correction, the value's width per other exception.
template <typename Float>
ZS_HD inline std::uint64_t alp_patch_bytes(const vector_fields& v) noexcept {
  return pad8(2 * std::uint64_t{v.corrections} + std::uint64_t{v.exceptions - v.corrections} * sizeof(Float));
}

/// Bytes of an ALP exception's patch.
template <typename Float>
ZS_HD inline std::uint32_t alp_patch_size(bool corrected) noexcept {
  return corrected ? 2U : static_cast<std::uint32_t>(sizeof(Float));
}

/// Bytes of an ALP vector's lane counts: a byte for each FastLanes lane, the exceptions of that
/// lane (at most 64, a float64 lane's rows), present where the vector has exceptions.
template <typename Float>
ZS_HD inline std::uint64_t lane_count_bytes(const vector_fields& v) noexcept {
  return v.exceptions == 0 ? 0 : pad8(float_traits<Float>::lanes);
}

/// Bytes of a vector of `count` values with these fields.
template <typename Float>
ZS_HD inline std::uint64_t vector_bytes(const vector_fields& v, std::uint32_t count) noexcept {
  using traits = float_traits<Float>;
  std::uint64_t bytes = vector_header_bytes + (v.fill ? fill_map_bytes : 0);
  std::uint32_t const m = count - v.fills;
  std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
  std::uint64_t const exceptions = v.exceptions;
  switch (v.mode) {
    case mode_alp:
      bytes += packed_bytes(traits::lanes, traits::width, rows, v.bits);
      bytes += lane_count_bytes<Float>(v) + pad8(2 * exceptions) + alp_patch_bytes<Float>(v);
      break;
    case mode_rd:
      bytes += dict_bytes + packed_bytes(traits::lanes, traits::width, rows, v.bits);
      bytes += packed_bytes(traits::lanes, traits::width, rows, v.right_bits);
      bytes += pad8(2 * exceptions) + pad8(2 * exceptions);
      break;
    default:
      bytes += pad8(std::uint64_t{m} * (traits::width / 8));
      break;
  }
  return bytes;
}

/// The largest vector of `count` values: raw, which the encoder falls back to.
template <typename Float>
ZS_HD inline std::uint64_t max_vector_bytes(std::uint32_t count) noexcept {
  return vector_header_bytes + pad8(std::uint64_t{count} * sizeof(Float));
}

ZS_HD inline std::uint64_t vector_count(std::uint64_t values) noexcept {
  return values / vector_values + (values % vector_values != 0 ? 1 : 0);
}
ZS_HD inline std::uint32_t values_in_vector(std::uint64_t values, std::uint64_t v) noexcept {
  std::uint64_t const rest = values - v * vector_values;
  return static_cast<std::uint32_t>(rest < vector_values ? rest : vector_values);
}

// --- the lane layout ---------------------------------------------------------------------------

/// Writes field `slot` (row slot / lanes of lane slot % lanes) of `bits` bits into a zeroed
/// lane-layout area of `width`-bit words.
template <typename Word>
ZS_HD inline void put_field(Word* words, int lanes, std::uint32_t slot, int bits, Word value) noexcept {
  constexpr int width = static_cast<int>(sizeof(Word) * 8);
  if (bits == 0) return;
  std::uint32_t const lane = slot % static_cast<std::uint32_t>(lanes);
  std::uint64_t const bit = std::uint64_t{slot / static_cast<std::uint32_t>(lanes)} * static_cast<std::uint64_t>(bits);
  std::uint64_t const word = bit / width;
  int const shift = static_cast<int>(bit % width);
  words[word * lanes + lane] |= static_cast<Word>(value << shift);
  if (shift + bits > width) words[(word + 1) * lanes + lane] |= static_cast<Word>(value >> (width - shift));
}
template <typename Word>
ZS_HD inline Word get_field(const Word* words, int lanes, std::uint32_t slot, int bits) noexcept {
  constexpr int width = static_cast<int>(sizeof(Word) * 8);
  if (bits == 0) return 0;
  std::uint32_t const lane = slot % static_cast<std::uint32_t>(lanes);
  std::uint64_t const bit = std::uint64_t{slot / static_cast<std::uint32_t>(lanes)} * static_cast<std::uint64_t>(bits);
  std::uint64_t const word = bit / width;
  int const shift = static_cast<int>(bit % width);
  Word v = words[word * lanes + lane] >> shift;
  if (shift + bits > width) v |= static_cast<Word>(words[(word + 1) * lanes + lane] << (width - shift));
  Word const mask = bits == width ? ~Word{0} : static_cast<Word>((Word{1} << bits) - 1);
  return v & mask;
}

// --- choosing a vector's encoding --------------------------------------------------------------

/// The values of a vector, after the fill cells are taken out: value j is values[index(j)].
template <typename Float>
struct vector_view {
  const Float* values;
  std::uint32_t count;  // values in the vector
  const std::uint8_t* is_fill;  // 1 for a fill cell (taken out), per position; nullptr: none taken out
  std::uint32_t kept;        // count minus the fill cells
};

/// The ALP fields (bits, exceptions, base) for exponent e and factor f over the kept values.
template <typename Float>
ZS_HD inline vector_fields analyze_alp(const vector_view<Float>& view, int e, int f) noexcept {
  vector_fields v;
  v.mode = mode_alp;
  v.exponent = e;
  v.factor = f;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool any = false;
  std::uint32_t exceptions = 0;
  std::uint32_t corrections = 0;
  for (std::uint32_t i = 0; i < view.count; ++i) {
    if (view.is_fill != nullptr && view.is_fill[i] != 0) continue;
    std::int64_t d = 0;
    std::int32_t correction = 0;
    fit const how = fit_int(view.values[i], e, f, d, correction);
    if (how != fit::exact) ++exceptions;
    if (how == fit::none) continue;  // its slot holds the base
    if (how == fit::corrected) ++corrections;
    if (!any || d < lo) lo = d;
    if (!any || d > hi) hi = d;
    any = true;
  }
  v.exceptions = exceptions;
  v.corrections = corrections;
  v.base = static_cast<std::uint64_t>(lo);
  v.bits = bit_length(static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo));
  return v;
}

/// The dictionary code of a left part, or -1 when it is not in the dictionary.
ZS_HD inline int dict_code(const vector_fields& v, std::uint64_t left) noexcept {
  for (int i = 0; i < v.dict_size; ++i) {
    if (v.dict[i] == left) return i;
  }
  return -1;
}

/// The top 16 bits of each kept value, sorted: the left parts at every split, at once.
/// Shell sort in place (gaps 1, 4, 13, ...): no recursion and no scratch for a GPU thread.
template <typename Float>
ZS_HD inline void sort_lefts(const vector_view<Float>& view, std::uint16_t* lefts) noexcept {
  constexpr int shift = float_traits<Float>::width - max_left_bits;
  std::uint32_t m = 0;
  for (std::uint32_t i = 0; i < view.count; ++i) {
    if (view.is_fill != nullptr && view.is_fill[i] != 0) continue;
    lefts[m++] = static_cast<std::uint16_t>(static_cast<std::uint64_t>(bits_of(view.values[i])) >> shift);
  }
  std::uint32_t gap = 1;
  while (gap < m / 3) gap = 3 * gap + 1;
  for (; gap > 0; gap /= 3) {
    for (std::uint32_t i = gap; i < m; ++i) {
      std::uint16_t const x = lefts[i];
      std::uint32_t j = i;
      for (; j >= gap && lefts[j - gap] > x; j -= gap) lefts[j] = lefts[j - gap];
      lefts[j] = x;
    }
  }
}

/// The dictionary size of an ALP_RD split that gives the fewest bytes (ties: the smaller), its
/// code bits and exceptions, into v: `counts` are the `kinds` (at most max_dict) largest counts
/// of equal left parts among `kept` values, the largest first. The reference and the warp
/// coder count the left parts differently; both size the dictionary here.
template <typename Float>
ZS_HD inline void size_dict(const std::uint32_t* counts, int kinds, std::uint32_t kept, vector_fields& v) noexcept {
  using traits = float_traits<Float>;
  std::uint32_t const rows = (kept + traits::lanes - 1) / traits::lanes;
  std::uint64_t best = ~std::uint64_t{0};
  std::uint32_t covered = 0;
  v.dict_size = 1;
  for (int size = 1; size <= max_dict; ++size) {
    if (size > 1 && size > kinds) break;
    if (size <= kinds) covered += counts[size - 1];
    int const code_bits = bit_length(static_cast<std::uint64_t>(size - 1));
    std::uint64_t const bytes =
        packed_bytes(traits::lanes, traits::width, rows, code_bits) + 2 * pad8(2 * std::uint64_t{kept - covered});
    if (bytes < best) {
      best = bytes;
      v.dict_size = size;
      v.bits = code_bits;
      v.exceptions = kept - covered;
    }
  }
}

/// The ALP_RD fields for a split at `right_bits` over `kept` values whose sorted top 16 bits
/// are `lefts`: the dictionary of the most frequent left parts (ties: the smaller first), of
/// the size that gives the fewest bytes.
template <typename Float>
ZS_HD inline vector_fields analyze_rd(const std::uint16_t* lefts, std::uint32_t kept, int right_bits) noexcept {
  using traits = float_traits<Float>;
  vector_fields v;
  v.mode = mode_rd;
  v.right_bits = right_bits;
  int const shift = max_left_bits - (traits::width - right_bits);
  // The runs of equal left parts come in increasing order, so a run that ties an entry's count
  // goes after it.
  std::uint16_t top[max_dict] = {};
  std::uint32_t counts[max_dict] = {};
  int kinds = 0;
  for (std::uint32_t i = 0; i < kept;) {
    auto const left = static_cast<std::uint16_t>(lefts[i] >> shift);
    std::uint32_t run = 0;
    while (i < kept && (lefts[i] >> shift) == left) {
      ++run;
      ++i;
    }
    if (kinds == max_dict && run <= counts[max_dict - 1]) continue;
    int at = kinds < max_dict ? kinds++ : max_dict - 1;
    for (; at > 0 && counts[at - 1] < run; --at) {
      counts[at] = counts[at - 1];
      top[at] = top[at - 1];
    }
    counts[at] = run;
    top[at] = left;
  }
  size_dict<Float>(counts, kinds, kept, v);
  for (int i = 0; i < max_dict; ++i) v.dict[i] = i < v.dict_size ? top[i] : 0;
  return v;
}

/// Bits an ALP candidate costs on values[0 .. n): the range's width per value, and the value
/// and its position per exception.
template <typename Float>
ZS_HD inline std::uint64_t alp_cost(const Float* values, std::uint32_t n, int e, int f) noexcept {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool any = false;
  std::uint64_t exceptions = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::int64_t d = 0;
    std::int32_t correction = 0;
    fit const how = fit_int(values[i], e, f, d, correction);
    if (how != fit::exact) exceptions += exception_bits<Float>(how);
    if (how == fit::none) continue;
    if (!any || d < lo) lo = d;
    if (!any || d > hi) hi = d;
    any = true;
  }
  return std::uint64_t{n} * static_cast<std::uint64_t>(bit_length(static_cast<std::uint64_t>(hi) -
                                                                  static_cast<std::uint64_t>(lo))) +
         exceptions;
}

/// A vector's sample for its choice of ALP candidate: every 16th cell (0, 16, ...), less those
/// that hold the column's fill value. (Every 32nd, as ALP samples, chose worse on columns
/// where a few percent of the values are exceptions.)
inline constexpr std::uint32_t candidate_sample_stride = 16;

/// The one ALP candidate a vector tries (the second of ALP's two sampling levels): the only one,
/// or the one whose alp_cost over the vector's sample is least (the first of equal cost). One
/// candidate costed over all the values, rather than each, keeps the encoder's work per value
/// from growing with the candidates; on the real float columns it changes under 1% of the
/// vectors and under 0.1% of the bytes.
template <typename Float>
ZS_HD inline int vector_candidate(const Float* values, std::uint32_t count, const column_params& p) noexcept {
  if (p.candidates <= 1) return 0;
  Float sample[vector_values / candidate_sample_stride];
  std::uint32_t m = 0;
  for (std::uint32_t i = 0; i < count; i += candidate_sample_stride) {
    if (p.has_fill && bits_of(values[i]) == p.fill) continue;
    sample[m++] = values[i];
  }
  int best = 0;
  std::uint64_t best_cost = 0;
  for (int c = 0; c < p.candidates; ++c) {
    std::uint64_t const cost = alp_cost(sample, m, p.exponent[c], p.factor[c]);
    if (c == 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

// --- null rows ---------------------------------------------------------------------------------

/// What the encoder codes in place of a null row's value (encode_source::null_mask), the same in
/// every null row of a vector: the column's fill value, which makes the row a fill cell (free
/// beside the vector's fill map); without one, the first value of the vector in a row that holds
/// one (a repeat: no exception, no wider offsets), +0.0 where none does. `values` and `first_row`:
/// the vector's values and its first row in `s`.
template <typename Float>
ZS_HD inline Float null_stand_in(const encode_source& s, const Float* values, std::uint64_t first_row,
                                 std::uint32_t count, const column_params& p) noexcept {
  if (p.has_fill) return from_bits<Float>(static_cast<typename float_traits<Float>::bits_t>(p.fill));
  for (std::uint32_t i = 0; i < count; ++i) {
    if (s.holds_value(first_row + i)) return values[i];
  }
  return Float{0};
}

/// Vector v of `s` as the encoder codes it, into `out`: its values, each null row's replaced by
/// null_stand_in. A decoder gives the stand-in back in those rows.
template <typename Float>
ZS_HD inline void vector_for_encoder(const encode_source& s, std::uint64_t v, const column_params& p,
                                     Float* out) noexcept {
  std::uint64_t const first_row = v * vector_values;
  std::uint32_t const count = values_in_vector(s.count, v);
  const Float* values = static_cast<const Float*>(s.values) + first_row;
  Float const stand_in = null_stand_in(s, values, first_row, count, p);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = s.holds_value(first_row + i) ? values[i] : stand_in;
}

/// What a thread needs beside its registers to choose and write a vector.
struct vector_scratch {
  std::uint8_t is_fill[vector_values];  // 1 for a cell that holds the column's fill value
  std::uint16_t lefts[vector_values];   // the kept values' top 16 bits, sorted
};

/// The encoding of one vector, by exact size: the smallest of ALP with the vector's candidate
/// (vector_candidate), ALP_RD at every split and raw, each with and without the fill cells taken
/// out (when the column has a fill value and the vector holds it); ties go to the first tried.
/// Sets `bytes` to its size; leaves the fill cells in scratch.is_fill for write_vector.
template <typename Float>
ZS_HD inline vector_fields choose_vector(const Float* values, std::uint32_t count, const column_params& p,
                                         vector_scratch& scratch, std::uint64_t& bytes) noexcept {
  std::uint8_t* is_fill = scratch.is_fill;
  std::uint32_t fills = 0;
  if (p.has_fill) {
    for (std::uint32_t i = 0; i < count; ++i) {
      is_fill[i] = bits_of(values[i]) == p.fill ? 1 : 0;
      fills += is_fill[i];
    }
  }
  vector_fields best;
  best.mode = mode_raw;
  bytes = vector_bytes<Float>(best, count);
  int const candidate = vector_candidate(values, count, p);
  for (int with_fill = 0; with_fill < (fills != 0 ? 2 : 1); ++with_fill) {
    vector_view<Float> const view{values, count, with_fill != 0 ? is_fill : nullptr, count - (with_fill != 0 ? fills : 0)};
    sort_lefts(view, scratch.lefts);
    // ALP with the vector's candidate, then ALP_RD at every split, by exact size.
    for (int c = 0; c <= max_left_bits; ++c) {
      int const right_bits = float_traits<Float>::width - max_left_bits + c - 1;
      vector_fields option = c == 0 ? analyze_alp(view, p.exponent[candidate], p.factor[candidate])
                                    : analyze_rd<Float>(scratch.lefts, view.kept, right_bits);
      option.fill = with_fill != 0;
      option.fills = with_fill != 0 ? fills : 0;
      std::uint64_t const b = vector_bytes<Float>(option, count);
      if (b < bytes) {
        bytes = b;
        best = option;
      }
    }
  }
  return best;
}

// --- encoding and decoding one vector ---------------------------------------------------------

/// Writes the vector `fields` describes (choose_vector's choice) at `out`, which is 8-byte
/// aligned and has vector_bytes of room; `is_fill` as choose_vector left it. Returns its bytes.
template <typename Float>
ZS_HD inline std::uint64_t write_vector(const Float* values, std::uint32_t count, const vector_fields& fields,
                                        const std::uint8_t* is_fill, std::byte* out) noexcept {
  using traits = float_traits<Float>;
  using word_t = typename traits::bits_t;
  std::uint64_t const total = vector_bytes<Float>(fields, count);
  for (std::uint64_t i = 0; i < total; ++i) out[i] = std::byte{0};
  store_vector_header(fields, out);
  std::byte* at = out + vector_header_bytes;
  if (fields.fill) {
    for (std::uint32_t i = 0; i < count; ++i) {
      if (is_fill[i] != 0) at[i / 8] |= static_cast<std::byte>(1U << (i % 8));
    }
    at += fill_map_bytes;
  }
  if (fields.mode == mode_rd) {
    for (int i = 0; i < max_dict; ++i) detail::store_le(at + 2 * i, fields.dict[i], 2);
    at += dict_bytes;
  }
  std::uint32_t const m = count - fields.fills;
  std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
  // Kept value j of the vector, in order: visit(j, value).
  auto const each_kept = [&](auto visit) {
    std::uint32_t j = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (!(fields.fill && is_fill[i] != 0)) visit(j++, values[i]);
    }
  };
  if (fields.mode == mode_raw) {
    each_kept([&](std::uint32_t j, Float value) { detail::store_le(at + std::uint64_t{j} * sizeof(Float), bits_of(value), sizeof(Float)); });
    return total;
  }
  word_t* packed = reinterpret_cast<word_t*>(at);
  std::uint64_t const packed_size = packed_bytes(traits::lanes, traits::width, rows, fields.bits);
  if (fields.mode == mode_alp) {
    // Exceptions go lane by lane (FastLanes lane j mod lanes), each lane's by increasing j: a
    // first pass counts every lane's exceptions and patch bytes, the second writes each at its
    // lane's next place.
    std::byte* lane_counts = at + packed_size;
    std::byte* positions = lane_counts + lane_count_bytes<Float>(fields);
    std::byte* patches = positions + pad8(2 * std::uint64_t{fields.exceptions});
    std::uint32_t next_word[traits::lanes] = {};
    std::uint32_t next_patch[traits::lanes] = {};
    each_kept([&](std::uint32_t j, Float value) {
      std::int64_t d = 0;
      std::int32_t correction = 0;
      fit const how = fit_int(value, fields.exponent, fields.factor, d, correction);
      if (how == fit::exact) return;
      next_word[j % traits::lanes] += 1;
      next_patch[j % traits::lanes] += alp_patch_size<Float>(how == fit::corrected);
    });
    std::uint32_t words_before = 0;
    std::uint32_t patches_before = 0;
    for (int l = 0; l < traits::lanes && fields.exceptions != 0; ++l) {
      lane_counts[l] = static_cast<std::byte>(next_word[l]);
      std::uint32_t const words = next_word[l];
      std::uint32_t const bytes = next_patch[l];
      next_word[l] = words_before;
      next_patch[l] = patches_before;
      words_before += words;
      patches_before += bytes;
    }
    each_kept([&](std::uint32_t j, Float value) {
      std::int64_t d = 0;
      std::int32_t correction = 0;
      fit const how = fit_int(value, fields.exponent, fields.factor, d, correction);
      // An exception that stores its value has the base in its slot: offset 0 keeps the range
      // tight. A corrected one keeps its integer there.
      word_t const offset = how == fit::none ? word_t{0} : static_cast<word_t>(static_cast<std::uint64_t>(d) - fields.base);
      put_field<word_t>(packed, traits::lanes, j, fields.bits, offset);
      if (how == fit::exact) return;
      std::uint32_t const l = j % traits::lanes;
      bool const corrected = how == fit::corrected;
      detail::store_le(positions + 2 * std::uint64_t{next_word[l]++}, j | (corrected ? correction_flag : 0U), 2);
      if (corrected) {
        detail::store_le(patches + next_patch[l], static_cast<std::uint16_t>(static_cast<std::int16_t>(correction)), 2);
      } else {
        detail::store_le(patches + next_patch[l], bits_of(value), sizeof(Float));
      }
      next_patch[l] += alp_patch_size<Float>(corrected);
    });
    return total;
  }
  // ALP_RD.
  word_t* right = reinterpret_cast<word_t*>(at + packed_size);
  std::byte* positions = at + packed_size + packed_bytes(traits::lanes, traits::width, rows, fields.right_bits);
  std::byte* lefts = positions + pad8(2 * std::uint64_t{fields.exceptions});
  std::uint32_t x = 0;
  word_t const right_mask = static_cast<word_t>((word_t{1} << fields.right_bits) - 1);
  each_kept([&](std::uint32_t j, Float value) {
    word_t const b = bits_of(value);
    std::uint64_t const left = static_cast<std::uint64_t>(b) >> fields.right_bits;
    int code = dict_code(fields, left);
    if (code < 0) {
      detail::store_le(positions + 2 * x, j, 2);
      detail::store_le(lefts + 2 * x, left, 2);
      ++x;
      code = 0;
    }
    put_field<word_t>(packed, traits::lanes, j, fields.bits, static_cast<word_t>(code));
    put_field<word_t>(right, traits::lanes, j, fields.right_bits, static_cast<word_t>(b & right_mask));
  });
  return total;
}

/// Checks a vector of `count` values at `in` that must take exactly `available` bytes, and
/// fills `fields`; false when it breaks any rule of docs/FORMAT.md, "Codec 4: alp". Reads only
/// inside [in, in + available).
template <typename Float>
ZS_HD inline bool check_vector(const std::byte* in, std::uint64_t available, std::uint32_t count,
                               const column_params& p, vector_fields& v) noexcept {
  using traits = float_traits<Float>;
  if (available < vector_header_bytes) return false;
  std::uint8_t const mode_byte = static_cast<std::uint8_t>(in[0]);
  v.mode = static_cast<std::uint8_t>(mode_byte & ~fill_flag);
  v.fill = (mode_byte & fill_flag) != 0;
  v.bits = static_cast<int>(in[1]);
  if (v.mode == mode_rd) {
    v.dict_size = static_cast<int>(in[2]);
    v.right_bits = static_cast<int>(in[3]);
  } else {
    v.exponent = static_cast<int>(in[2]);
    v.factor = static_cast<int>(in[3]);
  }
  v.exceptions = static_cast<std::uint32_t>(detail::load_le(in + 4, 2));
  v.fills = static_cast<std::uint32_t>(detail::load_le(in + 6, 2));
  v.base = detail::load_le(in + 8, 8);
  if (v.mode > mode_raw) return false;
  if (v.fill ? (!p.has_fill || v.fills == 0 || v.fills > count) : v.fills != 0) return false;
  std::uint32_t const m = count - v.fills;
  switch (v.mode) {
    case mode_alp:
      if (v.bits > traits::width || v.exponent > traits::max_exponent || v.factor > v.exponent) return false;
      // A float32 vector's integers are 32-bit: its base is one, sign-extended.
      if (traits::width == 32 &&
          v.base != static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(v.base)))))
        return false;
      break;
    case mode_rd:
      if (v.dict_size < 1 || v.dict_size > max_dict || !valid_right_bits(traits::width, v.right_bits) ||
          v.bits != bit_length(static_cast<std::uint64_t>(v.dict_size - 1)) || v.base != 0)
        return false;
      break;
    default:
      if (v.bits != 0 || v.exponent != 0 || v.factor != 0 || v.base != 0 || v.exceptions != 0) return false;
      break;
  }
  if (v.exceptions > m) return false;
  if (v.mode == mode_alp && v.exceptions != 0) {
    // The sizes of ALP patches depend on their kinds, in the positions before them: those must
    // lie inside the vector before they are read.
    std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
    std::uint64_t const before = vector_header_bytes + (v.fill ? fill_map_bytes : 0) +
                                 packed_bytes(traits::lanes, traits::width, rows, v.bits) + lane_count_bytes<Float>(v);
    if (before > available || pad8(2 * std::uint64_t{v.exceptions}) > available - before) return false;
    for (std::uint32_t x = 0; x < v.exceptions; ++x) {
      std::uint64_t const word = detail::load_le(in + before + 2 * x, 2);
      if ((word & ~std::uint64_t{correction_flag | position_mask}) != 0) return false;
      v.corrections += (word & correction_flag) != 0 ? 1 : 0;
    }
  }
  if (vector_bytes<Float>(v, count) != available) return false;
  const std::byte* at = in + vector_header_bytes;
  if (v.fill) {
    // The map marks exactly `fills` cells, none past the vector's count.
    std::uint32_t marked = 0;
    for (std::uint32_t b = 0; b < fill_map_bytes; ++b) {
      auto const byte = static_cast<unsigned>(at[b]);
      std::uint32_t const cells = count > 8 * b ? count - 8 * b : 0;  // cells of the vector in this byte
      if (cells < 8 && (byte >> cells) != 0) return false;
      marked += popcount8(byte);
    }
    if (marked != v.fills) return false;
    at += fill_map_bytes;
  }
  if (v.mode == mode_raw) return true;
  if (v.mode == mode_rd) {
    // Entries are left parts (below 2^(width - r)); unused ones are zero.
    for (int i = 0; i < max_dict; ++i) {
      std::uint64_t const entry = detail::load_le(at + 2 * i, 2);
      if (i >= v.dict_size ? entry != 0 : (entry >> (traits::width - v.right_bits)) != 0) return false;
      v.dict[i] = static_cast<std::uint16_t>(entry);
    }
    at += dict_bytes;
  }
  std::uint32_t const rows = (m + traits::lanes - 1) / traits::lanes;
  std::uint64_t const packed = packed_bytes(traits::lanes, traits::width, rows, v.bits) +
                               (v.mode == mode_rd ? packed_bytes(traits::lanes, traits::width, rows, v.right_bits) : 0);
  if (v.mode == mode_alp) {
    // The lane counts split the exceptions into runs, lane by lane: each position is a kept
    // value of its run's lane, after the one before it in the run.
    const std::byte* lane_counts = at + packed;
    const std::byte* positions = lane_counts + lane_count_bytes<Float>(v);
    std::uint32_t x = 0;
    for (std::uint32_t l = 0; l < traits::lanes && v.exceptions != 0; ++l) {
      std::uint32_t const run = static_cast<std::uint32_t>(lane_counts[l]);
      if (run > v.exceptions - x) return false;
      for (std::uint32_t k = 0; k < run; ++k, ++x) {
        std::uint64_t const pos = detail::load_le(positions + 2 * x, 2) & position_mask;
        if (pos >= m || pos % traits::lanes != l || (k > 0 && pos <= (detail::load_le(positions + 2 * (x - 1), 2) & position_mask)))
          return false;
      }
    }
    return x == v.exceptions;
  }
  // ALP_RD: exception positions strictly increase and lie among the kept values.
  const std::byte* positions = at + packed;
  const std::byte* lefts = positions + pad8(2 * std::uint64_t{v.exceptions});
  for (std::uint32_t x = 0; x < v.exceptions; ++x) {
    std::uint64_t const pos = detail::load_le(positions + 2 * x, 2);
    if (pos >= m || (x > 0 && pos <= detail::load_le(positions + 2 * (x - 1), 2))) return false;
    if (detail::load_le(lefts + 2 * x, 2) >> (traits::width - v.right_bits) != 0) return false;
  }
  return true;
}

/// Where the sections of a vector that check_vector accepted lie.
struct vector_sections {
  const std::byte* map;          // the fill map (with the fill flag)
  const std::byte* packed;       // ALP offsets, ALP_RD codes, raw values
  const std::byte* right;        // ALP_RD right parts
  const std::byte* lane_counts;  // ALP: the exceptions of each FastLanes lane
  const std::byte* positions;    // exception words
  const std::byte* patches;      // exception patches
};

template <typename Float>
ZS_HD inline vector_sections sections_of(const std::byte* in, std::uint32_t count, const vector_fields& v) noexcept {
  using traits = float_traits<Float>;
  vector_sections s{};
  const std::byte* at = in + vector_header_bytes;
  s.map = at;
  if (v.fill) at += fill_map_bytes;
  if (v.mode == mode_rd) at += dict_bytes;  // check_vector read the dictionary into v
  std::uint32_t const rows = (count - v.fills + traits::lanes - 1) / traits::lanes;
  s.packed = at;
  if (v.mode == mode_raw) return s;
  s.right = at + packed_bytes(traits::lanes, traits::width, rows, v.bits);
  s.lane_counts = s.right;
  s.positions = s.right + (v.mode == mode_rd ? packed_bytes(traits::lanes, traits::width, rows, v.right_bits)
                                             : lane_count_bytes<Float>(v));
  s.patches = s.positions + pad8(2 * std::uint64_t{v.exceptions});
  return s;
}

ZS_HD inline bool fill_cell(const vector_sections& s, const vector_fields& v, std::uint32_t i) noexcept {
  return v.fill && (static_cast<unsigned>(s.map[i / 8]) >> (i % 8) & 1U) != 0;
}

/// Kept value j as the vector's main section gives it, before any exception is patched.
template <typename Float>
ZS_HD inline Float unpatched(const vector_sections& s, const vector_fields& v, std::uint32_t j) noexcept {
  using traits = float_traits<Float>;
  using word_t = typename traits::bits_t;
  const auto* packed = reinterpret_cast<const word_t*>(s.packed);
  if (v.mode == mode_raw) return from_bits<Float>(packed[j]);
  if (v.mode == mode_alp) {
    word_t const offset = get_field<word_t>(packed, traits::lanes, j, v.bits);
    return decode_int<Float>(static_cast<std::int64_t>(v.base + static_cast<std::uint64_t>(offset)), v.exponent, v.factor);
  }
  word_t const left = v.dict[get_field<word_t>(packed, traits::lanes, j, v.bits) & 7U];
  word_t const r = get_field<word_t>(reinterpret_cast<const word_t*>(s.right), traits::lanes, j, v.right_bits);
  return from_bits<Float>(static_cast<word_t>((left << v.right_bits) | r));
}

/// Decoding a vector that check_vector accepted is two phases, each split over `stride`
/// workers (the lanes of a warp on the GPU; one worker on the CPU), worker w taking items
/// w, w + stride, ...: decode_cells writes every cell (the fill value, or the kept value as
/// the main section gives it); then, after every worker's decode_cells, patch_cells writes the
/// exceptions' cells. Each item is written by one worker, so any split gives the same bytes.
template <typename Float>
ZS_HD inline void decode_cells(const std::byte* in, std::uint32_t count, const column_params& p, const vector_fields& v,
                               Float* out, std::uint32_t first, std::uint32_t stride) noexcept {
  using word_t = typename float_traits<Float>::bits_t;
  vector_sections const s = sections_of<Float>(in, count, v);
  Float const fill = from_bits<Float>(static_cast<word_t>(p.fill));
  // j: the kept values before cell i (the cells before it that are not fill cells).
  std::uint32_t i = 0;
  std::uint32_t j = 0;
  for (std::uint32_t cell = first; cell < count; cell += stride) {
    if (!v.fill) {
      out[cell] = unpatched<Float>(s, v, cell);
      continue;
    }
    for (; i < cell; ++i) j += fill_cell(s, v, i) ? 0 : 1;
    out[cell] = fill_cell(s, v, cell) ? fill : unpatched<Float>(s, v, j);
  }
}

template <typename Float>
ZS_HD inline void patch_cells(const std::byte* in, std::uint32_t count, const vector_fields& v, Float* out,
                              std::uint32_t first, std::uint32_t stride) noexcept {
  using traits = float_traits<Float>;
  using word_t = typename traits::bits_t;
  if (v.mode == mode_raw) return;
  vector_sections const s = sections_of<Float>(in, count, v);
  std::uint32_t const mask = v.mode == mode_alp ? position_mask : 0xffffU;
  // ALP patches have two sizes: the bytes of exceptions [0, k) give patch k's place.
  std::uint64_t patch = 0;
  std::uint32_t sized = 0;
  // The cell of kept value j: i, with `kept` kept cells before it.
  std::uint32_t i = 0;
  std::uint32_t kept = 0;
  for (std::uint32_t k = first; k < v.exceptions; k += stride) {
    for (; sized < k; ++sized) {
      bool const corrected = (detail::load_le(s.positions + 2 * sized, 2) & correction_flag) != 0;
      patch += v.mode == mode_alp && !corrected ? sizeof(Float) : 2;
    }
    auto const word = static_cast<std::uint32_t>(detail::load_le(s.positions + 2 * k, 2));
    std::uint32_t const j = word & mask;
    if (!v.fill) i = j;
    if (j < kept) {
      // ALP lists its exceptions lane by lane: a lane's first may lie before the last one's.
      i = 0;
      kept = 0;
    }
    while (v.fill) {
      if (!fill_cell(s, v, i)) {
        if (kept == j) break;
        ++kept;
      }
      ++i;
    }
    Float value;
    if (v.mode == mode_rd) {
      word_t const left = static_cast<word_t>(detail::load_le(s.patches + patch, 2));
      word_t const r = get_field<word_t>(reinterpret_cast<const word_t*>(s.right), traits::lanes, j, v.right_bits);
      value = from_bits<Float>(static_cast<word_t>((left << v.right_bits) | r));
    } else if ((word & correction_flag) != 0) {
      auto const correction = static_cast<std::int16_t>(static_cast<std::uint16_t>(detail::load_le(s.patches + patch, 2)));
      value = from_bits<Float>(static_cast<word_t>(bits_of(unpatched<Float>(s, v, j)) +
                                                   static_cast<word_t>(static_cast<std::int64_t>(correction))));
    } else {
      value = from_bits<Float>(static_cast<word_t>(detail::load_le(s.patches + patch, sizeof(Float))));
    }
    out[i] = value;
  }
}

/// Decodes a vector that check_vector accepted into out[0 .. count), as one worker.
template <typename Float>
ZS_HD inline void read_vector(const std::byte* in, std::uint32_t count, const column_params& p, const vector_fields& v,
                              Float* out) noexcept {
  decode_cells<Float>(in, count, p, v, out, 0, 1);
  patch_cells<Float>(in, count, v, out, 0, 1);
}

// --- frames ------------------------------------------------------------------------------------

/// The codec parameters of the header (offset 40): u16 values per vector (1024), then zeros.
ZS_HD inline void store_codec_params(std::byte* header) noexcept {
  detail::store_le(header + 40, vector_values, 2);
  for (int i = 42; i < 56; ++i) header[i] = std::byte{0};
}
ZS_HD inline bool check_codec_params(const std::byte* params16) noexcept {
  if (detail::load_le(params16, 2) != vector_values) return false;
  for (int i = 2; i < 16; ++i) {
    if (params16[i] != std::byte{0}) return false;
  }
  return true;
}

/// A body of `count` values: ceil(count / 1024) u64 vector ends (relative to the data section,
/// which follows them), then the vectors. Checks the ends; vector v lies at
/// [start(v), end(v)) of the data section.
ZS_HD inline bool check_ends(const std::byte* body, std::uint64_t body_bytes, std::uint64_t count) noexcept {
  std::uint64_t const vectors = vector_count(count);
  if (vectors > body_bytes / 8) return false;
  std::uint64_t const data = body_bytes - 8 * vectors;
  std::uint64_t previous = 0;
  for (std::uint64_t v = 0; v < vectors; ++v) {
    std::uint64_t const end = detail::load_le(body + 8 * v, 8);
    if (end < previous || end > data || end % 8 != 0) return false;
    previous = end;
  }
  return previous == data;
}
ZS_HD inline std::uint64_t vector_start(const std::byte* body, std::uint64_t v) noexcept {
  return v == 0 ? 0 : detail::load_le(body + 8 * (v - 1), 8);
}
ZS_HD inline std::uint64_t vector_end(const std::byte* body, std::uint64_t v) noexcept {
  return detail::load_le(body + 8 * v, 8);
}

// --- column parameters from a sample -----------------------------------------------------------

/// Reads up to sample_vectors stretches of sample_run consecutive rows, spread evenly over
/// the rows of `pieces` (all of one column), into `sample`, and flags the null ones in
/// `is_null`; returns how many were read and sets `stretches` (the rows of stretch s are
/// sample[s * sample_run ..], the last one possibly shorter when the column has fewer rows).
template <typename Float>
ZS_HD inline std::uint32_t read_sample(const encode_source* pieces, std::uint64_t num_pieces, Float* sample,
                                       std::uint8_t* is_null, std::uint32_t& stretches) noexcept {
  std::uint64_t rows = 0;
  for (std::uint64_t k = 0; k < num_pieces; ++k) rows += pieces[k].count;
  std::uint32_t taken = 0;
  stretches = 0;
  if (rows == 0) return 0;
  std::uint32_t const want = rows <= sample_values ? static_cast<std::uint32_t>((rows + sample_run - 1) / sample_run)
                                                    : sample_vectors;
  for (std::uint32_t s = 0; s < want; ++s) {
    std::uint64_t row = rows <= sample_values ? std::uint64_t{s} * sample_run : rows / want * s;
    std::uint64_t k = 0;
    while (k < num_pieces && row >= pieces[k].count) row -= pieces[k++].count;
    for (std::uint32_t i = 0; i < sample_run && k < num_pieces; ++i) {
      is_null[taken] = pieces[k].holds_value(row) ? 0 : 1;
      sample[taken++] = static_cast<const Float*>(pieces[k].values)[row];
      if (++row == pieces[k].count) {
        row = 0;
        ++k;
        while (k < num_pieces && pieces[k].count == 0) ++k;
      }
    }
    ++stretches;
  }
  return taken;
}

// Preparing a column's parameters is three steps over a sample of it, each a ZS_HD function:
// take_sample reads the sample (and take_out_nulls drops its null rows, whose values do not
// count); then for each sampled value its count (fill detection), and
// for each (stretch, exponent/factor combination) its cost, each independent of the others
// (the GPU spreads them over a block's threads); then choose_params picks, scanning them in
// order, so any split of the middle step gives the same bytes. prepare_column runs all three
// as one worker (the CPU).

template <typename Float>
struct column_sample {
  Float values[sample_values];
  std::uint8_t is_null[sample_values];  // as read, before take_out_nulls
  std::uint32_t n = 0;
  std::uint32_t nulls = 0;  // null rows read (take_out_nulls)
  std::uint32_t stretches = 0;
  std::uint32_t ends[sample_vectors] = {};  // stretch s: values [ends[s - 1] (0 for s = 0), ends[s])
};

/// The (exponent, factor) pairs ALP tries, numbered exponent-major: (0,0), (1,0), (1,1), ...
template <typename Float>
ZS_HD constexpr int combinations() noexcept {
  return (float_traits<Float>::max_exponent + 1) * (float_traits<Float>::max_exponent + 2) / 2;
}
ZS_HD inline void combination(int c, int& e, int& f) noexcept {
  e = 0;
  while (c > e) {
    c -= e + 1;
    ++e;
  }
  f = c;
}

template <typename Float>
ZS_HD inline void take_sample(const encode_source* pieces, std::uint64_t num_pieces, column_sample<Float>& s) noexcept {
  s.n = read_sample(pieces, num_pieces, s.values, s.is_null, s.stretches);
  for (std::uint32_t k = 0; k < s.stretches; ++k) s.ends[k] = (k + 1) * sample_run < s.n ? (k + 1) * sample_run : s.n;
}

/// Keeps the sampled values for which keep(i) holds (i: their index before), stretch by
/// stretch; returns how many it dropped.
template <typename Float, typename Keep>
ZS_HD inline std::uint32_t keep_in_sample(column_sample<Float>& s, Keep keep) noexcept {
  std::uint32_t kept = 0;
  std::uint32_t begin = 0;
  for (std::uint32_t k = 0; k < s.stretches; ++k) {
    for (std::uint32_t i = begin; i < s.ends[k]; ++i) {
      if (keep(i)) s.values[kept++] = s.values[i];
    }
    begin = s.ends[k];
    s.ends[k] = kept;
  }
  std::uint32_t const dropped = s.n - kept;
  s.n = kept;
  return dropped;
}

/// Drops the sample's null rows and counts them: their values say nothing of the column's.
template <typename Float>
ZS_HD inline void take_out_nulls(column_sample<Float>& s) noexcept {
  s.nulls = keep_in_sample(s, [&](std::uint32_t i) { return s.is_null[i] == 0; });
}

/// How many sampled values have the bits of value i.
template <typename Float>
ZS_HD inline std::uint32_t occurrences(const column_sample<Float>& s, std::uint32_t i) noexcept {
  std::uint32_t c = 0;
  for (std::uint32_t k = 0; k < s.n; ++k) c += bits_of(s.values[k]) == bits_of(s.values[i]) ? 1 : 0;
  return c;
}

/// Whether a sampled bit pattern seen `count` times makes a better fill value than the best so
/// far: the more frequent, of equal counts the smaller (an order, so the best of any split of
/// the sample, joined in any order, is the same).
ZS_HD inline bool better_fill(std::uint32_t count, std::uint64_t bits, std::uint32_t best_count,
                              std::uint64_t best_bits) noexcept {
  return count > best_count || (count == best_count && bits < best_bits);
}

/// The fill value, from the most frequent bit pattern of the sample (`best_count` times
/// `best_bits`; none, 0 times +0.0, where every sampled row is null): when it and the null rows
/// (which the encoder codes as fill cells) make at least a 32nd of the rows sampled, it is the
/// column's, and its cells leave the sample, stretch by stretch.
template <typename Float>
ZS_HD inline void take_out_fill(column_sample<Float>& s, std::uint32_t best_count, std::uint64_t best_bits,
                                column_params& p) noexcept {
  std::uint32_t const covers = best_count + s.nulls;
  if (covers < 2 || covers * 32 < s.n + s.nulls) return;
  p.has_fill = true;
  p.fill = best_bits;
  keep_in_sample(s, [&](std::uint32_t i) { return static_cast<std::uint64_t>(bits_of(s.values[i])) != p.fill; });
}

/// The fill value: the most frequent bit pattern (ties: the smaller), when it makes at least a
/// 32nd of the sample; then the fill cells leave the sample, stretch by stretch.
template <typename Float>
ZS_HD inline void choose_fill(column_sample<Float>& s, const std::uint32_t* counts, column_params& p) noexcept {
  std::uint32_t best_count = 0;
  std::uint64_t best_bits = 0;
  for (std::uint32_t i = 0; i < s.n; ++i) {
    std::uint64_t const b = bits_of(s.values[i]);
    if (better_fill(counts[i], b, best_count, best_bits)) {
      best_count = counts[i];
      best_bits = b;
    }
  }
  take_out_fill(s, best_count, best_bits, p);
}

/// The cost of combination c on stretch k (bits, alp_cost); 0 for an empty stretch.
template <typename Float>
ZS_HD inline std::uint64_t stretch_cost(const column_sample<Float>& s, std::uint32_t k, int c) noexcept {
  std::uint32_t const begin = k == 0 ? 0 : s.ends[k - 1];
  int e = 0;
  int f = 0;
  combination(c, e, f);
  return alp_cost(s.values + begin, s.ends[k] - begin, e, f);
}

/// The cheapest combination of stretch k (the first of equal cost). costs[k * combinations +
/// c] is stretch_cost(s, k, c).
template <typename Float>
ZS_HD inline int cheapest_combination(const std::uint64_t* costs, std::uint32_t k) noexcept {
  int best = 0;
  for (int c = 1; c < combinations<Float>(); ++c) {
    if (costs[k * combinations<Float>() + c] < costs[k * combinations<Float>() + best]) best = c;
  }
  return best;
}

/// The ALP candidates from each stretch's cheapest combination (`cheapest`, per stretch):
/// each non-empty stretch votes for its own; the most voted first (ties: the first voted), at
/// most max_candidates.
template <typename Float>
ZS_HD inline void vote_candidates(const column_sample<Float>& s, const int* cheapest, column_params& p) noexcept {
  int voted[sample_vectors] = {};
  std::uint32_t votes[sample_vectors] = {};
  int distinct = 0;
  for (std::uint32_t k = 0; k < s.stretches; ++k) {
    if (s.ends[k] == (k == 0 ? 0 : s.ends[k - 1])) continue;
    int const best = cheapest[k];
    int v = 0;
    while (v < distinct && voted[v] != best) ++v;
    if (v == distinct) voted[distinct++] = best;
    ++votes[v];
  }
  p.candidates = 0;
  bool used[sample_vectors] = {};
  while (p.candidates < max_candidates && p.candidates < distinct) {
    int top = -1;
    for (int v = 0; v < distinct; ++v) {
      if (!used[v] && (top < 0 || votes[v] > votes[top])) top = v;
    }
    used[top] = true;
    int e = 0;
    int f = 0;
    combination(voted[top], e, f);
    p.exponent[p.candidates] = static_cast<std::uint8_t>(e);
    p.factor[p.candidates] = static_cast<std::uint8_t>(f);
    ++p.candidates;
  }
  if (p.candidates == 0) {  // no value left beside the fill cells: any candidate will do
    p.candidates = 1;
    p.exponent[0] = 0;
    p.factor[0] = 0;
  }
}

/// The ALP candidates: each non-empty stretch votes for its cheapest combination (the first of
/// equal cost); the most voted first (ties: the first voted), at most max_candidates.
/// costs[k * combinations + c] is stretch_cost(s, k, c).
template <typename Float>
ZS_HD inline void choose_candidates(const column_sample<Float>& s, const std::uint64_t* costs, column_params& p) noexcept {
  int cheapest[sample_vectors] = {};
  for (std::uint32_t k = 0; k < s.stretches; ++k) cheapest[k] = cheapest_combination<Float>(costs, k);
  vote_candidates(s, cheapest, p);
}

/// The column parameters of a column whose pieces are `pieces`, from a sample of it (the three
/// steps above as one worker). `s`, `counts` (sample_values) and `costs` (sample_vectors x
/// combinations) are scratch.
template <typename Float>
ZS_HD inline column_params prepare_column(const encode_source* pieces, std::uint64_t num_pieces, column_sample<Float>& s,
                                          std::uint32_t* counts, std::uint64_t* costs) noexcept {
  column_params p;
  take_sample(pieces, num_pieces, s);
  take_out_nulls(s);
  for (std::uint32_t i = 0; i < s.n; ++i) counts[i] = occurrences(s, i);
  choose_fill(s, counts, p);
  for (std::uint32_t k = 0; k < s.stretches; ++k) {
    for (int c = 0; c < combinations<Float>(); ++c) costs[k * combinations<Float>() + c] = stretch_cost(s, k, c);
  }
  choose_candidates(s, costs, p);
  return p;
}

}  // namespace zs::alp
