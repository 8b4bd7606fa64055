// What one warp of each bitpack kernel does, written once for two executors: the CUDA kernels
// (bitpack_kernels.cu, through common/cuda_warp.cuh) and a CPU emulation of a warp
// (tests/codecs/warp_emulator.hpp), which runs these very programs with one coroutine per lane
// so that CI checks the GPU logic. The programs take a Warp, and are built from the
// codec-neutral tools of common/warp_tools.hpp (which documents the Warp): reductions and scans
// over the lanes, the checksum terms of payload ranges, and the copies of payload ranges.
//
// The unit of work is a segment of 512 values (four for-blocks, one dfor tile, one rfor block),
// and a segment belongs to one warp: lane l holds values [16 l, 16 l + 16) in registers, so
// miniblocks, blocks, differences and runs are found with shuffles, and no program waits at a
// thread-block barrier. Each warp takes a contiguous range of segments (or decode tiles), so it
// looks its frame up once per frame, and it fetches the next unit's bytes into shared memory
// with asynchronous copies while it works on the current one.
//
// Encoding, per batch (bitpack_kernels.cu has the launch sequence):
//   sample:  per frame, the exact data words of every scheme summed over every
//            sample_stride-th segment: the scheme the frame will likely choose (frame_guess);
//            a warp per range of samples, numbered per width class (sample_first);
//   analyze: per segment, the exact data words of for, dfor and rfor, and of pfor, pdfor and
//            drfor where the programs are compiled for them (summed in scan blocks), and its
//            encoding in the frame's guessed scheme kept in its warp's slot pool (slot_pool);
//   scan:    a device-wide sum over the scan blocks' sizes (CUB);
//   choose:  per frame, the smallest scheme and the header fields;
//   pack:    per segment whose slot holds its frame's scheme (or of a raw frame): its words
//            copied to their place (consecutive ones whose sources follow each other as one
//            range), its block starts, and the checksum terms of the 64-bit payload words it
//            owns;
//   repack:  the other segments, encoded again from the input in their frame's scheme;
//   seams:   per segment, the checksum terms that straddle its end and the next segment's
//            start where pack could not compute them (a segment encoded again on either side).
// The programs take `Extended` at compile time: the codec of the extended schemes (bitpack_ext)
// runs them with it, the classic codec without, so that its kernels hold none of the extended
// schemes' registers, branches or sizes (one set of kernels for all six cut the classic schemes'
// speed by half).
// Decoding: check each frame's layout; then per tile of 1, 2 or 4 segments (4, 8 or 16 blocks: the
// paper's D), one warp loads the tile into shared memory, checks its blocks there, adds its
// checksum terms and writes its values. The base class compares the checksums afterwards, so a
// frame that fails them has been written (within its target) before it is refused. The warp
// keeps its frame and tiles' bookkeeping in shared memory rather than registers (more warps per
// SM), and regroups each segment's values there before writing them, so that its stores are
// contiguous: a lane's 16 values are 64 or 128 bytes apart from the next lane's. The tile being
// decoded and the next one arriving share one region, sized for data that compresses
// (region_words), again for more warps per SM: a tile too large to share it arrives alone, and
// a tile too large for all of it is loaded and decoded in parts.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "bitpack/bitpack_format.hpp"
#include "common/warp_tools.hpp"
#include "common/work_map.hpp"
#include "zs/batch.hpp"
#include "zs/hash.hpp"

namespace zs::bitpack::gpu {

// The warp tools the programs are built from (common/warp_tools.hpp).
using kernels::warp::aligned16;
using kernels::warp::aligned8;
using kernels::warp::bit_count;
using kernels::warp::buffer_sum;
using kernels::warp::copy_range;
using kernels::warp::copy_staged;
using kernels::warp::emit_range;
using kernels::warp::for_each_picked;
using kernels::warp::inclusive_sum;
using kernels::warp::lowest_bit;
using kernels::warp::max_of;
using kernels::warp::min_of;
using kernels::warp::nonzero;
using kernels::warp::range_sum;
using kernels::warp::seam_term;
using kernels::warp::sign_bit;
using kernels::warp::staged_copy_bytes;
using kernels::warp::sum_carrier;
using kernels::warp::unpack_word4;
using kernels::warp::warp_lanes;
using kernels::warp::warp_max;
using kernels::warp::warp_min;
using kernels::warp::with_flags;
using kernels::warp::word4;

inline constexpr std::uint32_t lane_values = segment_values / warp_lanes;  // 16

// A decode path compiled as a function of its own, not inlined into the tile decoder: its
// registers are its own, so that a scheme's heavier path does not make the decoder spill on the
// other schemes' (the 32-bit decoder is held to 80 registers).
#if defined(__CUDACC__)
#define ZS_OWN_FRAME __noinline__
#else
#define ZS_OWN_FRAME
#endif

// --- sizes -----------------------------------------------------------------------------------

/// The most data words one segment can take in any scheme, on an adversarial (but valid)
/// frame: an rfor block of 512 runs with a full value width and a declared length width of 9.
ZS_HD constexpr std::uint32_t max_segment_words(std::uint32_t width_bits) noexcept {
  return 1 + reference_words(width_bits) + 16 * width_bits + 144;
}

/// Pass 1 keeps a warp's encodings in a pool of this many words per segment: half the raw
/// size. Re-reading the input costs one raw size; keeping costs twice the kept size (written,
/// then read); and a pool this size holds every encoding of data that compresses 2x.
ZS_HD constexpr std::uint32_t slot_words(std::uint32_t width_bits) noexcept {
  return segment_values * width_bits / 32 / 2;
}
/// encode_args::slot_at of a segment pass 1 did not keep.
inline constexpr std::uint64_t no_slot = ~std::uint64_t{0};

/// Data words of three coded schemes (for, dfor, rfor; or for the extended codec in arrays of
/// their own, pfor, pdfor, drfor): of a frame's sampled segments, of a scan block, and their
/// scan. Three a struct, so that the classic codec moves no bytes for the others.
inline constexpr int schemes_per_words = 3;
struct scheme_words {
  std::uint64_t w[schemes_per_words];
};

/// Pass 1 sums the segments' sizes over scan blocks, each the range of `per` consecutive
/// segments of a width class (the last one fewer) that one pass-1 warp analyses, so that the
/// device-wide scan runs over one entry per warp rather than one per segment.
ZS_HD constexpr std::uint64_t scan_blocks(std::uint64_t segments, std::uint64_t per) noexcept {
  return ceil_div(segments, per);
}

/// Per segment: its scan block (batch-wide), and the data words of each scheme of the segments
/// before it in that block.
struct alignas(16) block_words {
  std::uint32_t w[schemes_per_words];
  std::uint32_t block;
};

// --- small helpers ---------------------------------------------------------------------------

template <typename U>
ZS_HD inline U load_reference(const std::uint32_t* p) noexcept {
  if constexpr (sizeof(U) == 8) return static_cast<U>(p[0]) | (static_cast<U>(p[1]) << 32);
  return static_cast<U>(p[0]);
}

/// Word l of a reference (l < reference words).
template <typename U>
ZS_HD inline std::uint32_t reference_word(U ref, std::uint32_t l) noexcept {
  if constexpr (sizeof(U) == 8) return static_cast<std::uint32_t>(ref >> (32 * l));
  return static_cast<std::uint32_t>(ref);
}

template <typename U>
ZS_HD constexpr U flip_of(value_type type) noexcept {
  return is_signed_type(type) ? sign_bit<U>() : U{0};
}

// --- storage of a frame's values -------------------------------------------------------------
// The programs compute on words U of their width class; a frame of the 32-bit class may store
// its values narrower (int8, int16, uint8, uint16: bitpack_format.hpp), and then they are
// widened to U as they are loaded (sign-extended for the signed types) and narrowed as they are
// stored, after a check that each fits.

/// How a narrow frame stores its values: S = std::uint8_t or std::uint16_t, the unsigned type of
/// their width (signed or not, a value's bytes are the low bytes of its 32-bit widening), and
/// `sign`: the sign bit of a signed type (0x80 or 0x8000), 0 for an unsigned one. The four narrow
/// types take two code paths, not four.
///
/// The programs that load or store values take a flag `Narrow`, false unless the batch has
/// narrow frames: the narrow paths cost registers (the decoder's 80 would spill), so a batch
/// without narrow frames runs programs compiled without them.
ZS_HD constexpr std::uint32_t narrow_sign(value_type type) noexcept {
  return type == value_type::int8 ? 0x80U : (type == value_type::int16 ? 0x8000U : 0U);
}

/// The 32-bit widening of the narrow value `raw` (its bytes, zero-extended): sign-extended where
/// `sign` is the type's sign bit, as it is where sign is 0.
ZS_HD constexpr std::uint32_t widen(std::uint32_t raw, std::uint32_t sign) noexcept { return (raw ^ sign) - sign; }

/// Whether the 32-bit word v is the widening of a value of S bytes with sign bit `sign`: what
/// fits_type (bitpack_format.hpp) says of its type, in one formula for all four.
template <typename S>
ZS_HD constexpr bool fits_narrow(std::uint32_t v, std::uint32_t sign) noexcept {
  return v + sign <= static_cast<std::uint32_t>(static_cast<S>(~S{0}));
}

/// Calls f.template operator()<S>() with S the narrow storage of frames of `type` (std::uint8_t
/// or std::uint16_t), or with S = U for the frames that store their values as U (every frame of
/// the 64-bit class, and every one of a program compiled without Narrow). The choice is the same
/// for a whole frame, so the branch is the same in every lane.
template <typename U, bool Narrow, class F>
ZS_HD inline void with_storage(value_type type, F&& f) {
  if constexpr (sizeof(U) == 4 && Narrow) {
    std::size_t const width = value_width(type);
    if (width == 1) {
      f.template operator()<std::uint8_t>();
      return;
    }
    if (width == 2) {
      f.template operator()<std::uint16_t>();
      return;
    }
  }
  f.template operator()<U>();
}

/// The narrow values of a 32-bit word, widened, into x[0 .. 4 / sizeof(S)). (Device code, so
/// that its loop is unrolled: x is a lane's registers.)
template <typename S, typename U>
ZS_WARP_FN void unpack_narrow_word(std::uint32_t word, std::uint32_t sign, U* x) noexcept {
ZS_UNROLL
  for (unsigned k = 0; k < 4 / sizeof(S); ++k) x[k] = widen(static_cast<S>(word >> (8 * sizeof(S) * k)), sign);
}

/// The narrow values of a 16-byte chunk, widened, into x[0 .. 16 / sizeof(S)).
template <typename S, typename U>
ZS_WARP_FN void unpack_narrow(const word4& c, std::uint32_t sign, U* x) noexcept {
  constexpr unsigned per_word = 4 / sizeof(S);
  unpack_narrow_word<S>(c.x, sign, x);
  unpack_narrow_word<S>(c.y, sign, x + per_word);
  unpack_narrow_word<S>(c.z, sign, x + 2 * per_word);
  unpack_narrow_word<S>(c.w, sign, x + 3 * per_word);
}

/// A 32-bit word of the narrow values x[0 .. 4 / sizeof(S)): the low bytes of each.
template <typename S, typename U>
ZS_WARP_FN std::uint32_t pack_narrow_word(const U* x) noexcept {
  std::uint32_t word = 0;
ZS_UNROLL
  for (unsigned k = 0; k < 4 / sizeof(S); ++k) word |= std::uint32_t{static_cast<S>(x[k])} << (8 * sizeof(S) * k);
  return word;
}

/// A 16-byte chunk of the narrow values x[0 .. 16 / sizeof(S)).
template <typename S, typename U>
ZS_WARP_FN word4 pack_narrow(const U* x) noexcept {
  constexpr unsigned per_word = 4 / sizeof(S);
  return word4{pack_narrow_word<S>(x), pack_narrow_word<S>(x + per_word), pack_narrow_word<S>(x + 2 * per_word),
               pack_narrow_word<S>(x + 3 * per_word)};
}

/// Over the 8 lanes of this lane's 128-value block, for a value the two lanes of each miniblock
/// share: over the block's four miniblocks.
template <class Warp, typename T, class Op>
ZS_WARP_FN T block_reduce(Warp& w, T v, Op op) {
  for (unsigned m = 2; m < 8; m <<= 1) v = op(v, w.shfl_xor(v, m));
  return v;
}

// --- a lane's 16 values ----------------------------------------------------------------------

/// Values [16 lane, 16 lane + 16) of the m at `in`; zero past m.
template <class Warp, typename U>
ZS_WARP_FN void load_lane(Warp& w, const U* in, std::uint32_t m, U (&x)[lane_values]) {
  std::uint32_t const p0 = w.lane * lane_values;
  if (m == segment_values && aligned16(in)) {
    auto const* v = reinterpret_cast<const word4*>(in + p0);
    constexpr unsigned per = 16 / sizeof(U);
ZS_UNROLL
    for (unsigned q = 0; q < lane_values / per; ++q) unpack_word4(v[q], x + per * q);
    return;
  }
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) x[k] = p0 + k < m ? in[p0 + k] : U{0};
}

/// load_lane of values stored as S (narrow: widened to U by `sign`): whole 16-byte chunks where
/// the segment is full and starts on 16 bytes (a lane's 16 values are 16 or 32 bytes), else one
/// value at a time, so that a column may start anywhere.
template <class Warp, typename S, typename U>
ZS_WARP_FN void load_lane_as(Warp& w, const S* in, std::uint32_t sign, std::uint32_t m, U (&x)[lane_values]) {
  if constexpr (sizeof(S) == sizeof(U)) {
    load_lane(w, in, m, x);
  } else {
    std::uint32_t const p0 = w.lane * lane_values;
    if (m == segment_values && aligned16(in)) {
      auto const* v = reinterpret_cast<const word4*>(in + p0);
      constexpr unsigned per = 16 / sizeof(S);
ZS_UNROLL
      for (unsigned q = 0; q < lane_values / per; ++q) unpack_narrow<S>(v[q], sign, x + per * q);
      return;
    }
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) x[k] = p0 + k < m ? widen(in[p0 + k], sign) : U{0};
  }
}

/// Values [16 lane, 16 lane + 16) of the m of `type` at `in`, as words U; zero past m.
template <bool Narrow = false, class Warp, typename U>
ZS_WARP_FN void load_values(Warp& w, const std::byte* in, value_type type, std::uint32_t m, U (&x)[lane_values]) {
  with_storage<U, Narrow>(type, [&]<typename S>() {
    load_lane_as(w, reinterpret_cast<const S*>(in), narrow_sign(type), m, x);
  });
}

/// Writes a lane's values [16 lane, 16 lane + 16) of the m at `out`.
template <class Warp, typename U>
ZS_WARP_FN void store_lane(Warp& w, U* out, std::uint32_t m, const U (&x)[lane_values]) {
  std::uint32_t const p0 = w.lane * lane_values;
  if (m == segment_values && aligned16(out)) {
    auto* v = reinterpret_cast<word4*>(out + p0);
    constexpr unsigned per = 16 / sizeof(U);
ZS_UNROLL
    for (unsigned q = 0; q < lane_values / per; ++q) {
      word4 c;
      if constexpr (sizeof(U) == 4) {
        c = {x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]};
      } else {
        c = {static_cast<std::uint32_t>(x[2 * q]), static_cast<std::uint32_t>(x[2 * q] >> 32),
             static_cast<std::uint32_t>(x[2 * q + 1]), static_cast<std::uint32_t>(x[2 * q + 1] >> 32)};
      }
      v[q] = c;
    }
    return;
  }
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    if (p0 + k < m) out[p0 + k] = x[k];
  }
}

/// Writes a segment's m values (lane l holds [16 l, 16 l + 16)) at `out`. A full segment at a
/// 16-byte boundary is regrouped through `stage` (stage_words) so that each store instruction
/// of the warp writes 512 contiguous bytes, instead of 16 bytes every 64 or 128; the padding of
/// one word per lane row (17 for 32-bit values) keeps both sides free of bank conflicts.
template <class Warp, typename U>
ZS_WARP_FN void store_segment(Warp& w, U* out, std::uint32_t m, const U (&x)[lane_values], std::uint32_t* stage) {
  if (m != segment_values || !aligned16(out)) {
    store_lane(w, out, m, x);
    return;
  }
  std::uint32_t const lane = w.lane;
  if constexpr (sizeof(U) == 4) {
    // Row r (lane r's values) holds its 16-byte chunk c at c ^ (r / 2 % 4): the 8 lanes of a
    // shared-memory wavefront then hit 8 different 16-byte bank groups, storing and loading.
    auto* rows = reinterpret_cast<word4*>(stage);
    auto const at = [](std::uint32_t r, std::uint32_t c) { return 4 * r + (c ^ (r / 2 % 4)); };
ZS_UNROLL
    for (unsigned c = 0; c < 4; ++c) rows[at(lane, c)] = word4{x[4 * c], x[4 * c + 1], x[4 * c + 2], x[4 * c + 3]};
    w.sync();
ZS_UNROLL
    for (unsigned q = 0; q < segment_values / 128; ++q) {
      // values [128 q + 4 lane, + 4): chunk lane % 4 of row 8 q + lane / 4
      reinterpret_cast<word4*>(out)[32 * q + lane] = rows[at(8 * q + lane / 4, lane % 4)];
    }
    w.sync();
  } else {
    // 8 KB of values in two rounds of 16 lanes: rows of 33 words.
ZS_UNROLL
    for (unsigned round = 0; round < 2; ++round) {
      if (lane / 16 == round) {
        std::uint32_t* row = stage + (lane % 16) * (2 * lane_values + 1);
ZS_UNROLL
        for (unsigned k = 0; k < lane_values; ++k) {
          row[2 * k] = static_cast<std::uint32_t>(x[k]);
          row[2 * k + 1] = static_cast<std::uint32_t>(x[k] >> 32);
        }
      }
      w.sync();
ZS_UNROLL
      for (unsigned q = 0; q < segment_values / 2 / 64; ++q) {
        std::uint32_t const p = q * 64 + 2 * lane;  // 2 values of row p / 16, in this round's half
        const std::uint32_t* row = stage + (p / lane_values) * (2 * lane_values + 1) + 2 * (p % lane_values);
        *reinterpret_cast<word4*>(out + round * (segment_values / 2) + p) = word4{row[0], row[1], row[2], row[3]};
      }
      w.sync();
    }
  }
}

/// Writes a narrow segment's m values (lane l holds [16 l, 16 l + 16), 32-bit widenings) at `out`
/// as values of S bytes with sign bit `sign` (narrow_sign): whole 16-byte chunks where the segment
/// is full and `out` is on 16 bytes (a warp's stores then cover 512 or 1024 contiguous bytes),
/// else one value at a time. Returns false, writing nothing, where a value is not the widening
/// of a value of the narrow type (its frame is corrupt).
template <typename S, class Warp, typename U>
ZS_WARP_FN bool store_narrow(Warp& w, S* out, std::uint32_t sign, std::uint32_t m, const U (&x)[lane_values]) {
  std::uint32_t const p0 = w.lane * lane_values;
  bool fits = true;
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    if (p0 + k < m && !fits_narrow<S>(static_cast<std::uint32_t>(x[k]), sign)) fits = false;
  }
  if (w.any(!fits)) return false;
  if (m == segment_values && aligned16(out)) {
    auto* v = reinterpret_cast<word4*>(out + p0);
    constexpr unsigned per = 16 / sizeof(S);
ZS_UNROLL
    for (unsigned q = 0; q < lane_values / per; ++q) v[q] = pack_narrow<S>(x + per * q);
    return true;
  }
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    if (p0 + k < m) out[p0 + k] = static_cast<S>(x[k]);
  }
  return true;
}

/// Writes a segment's m values at `out` as values stored as S (with_storage) of `type`:
/// store_segment where S is U, else store_narrow. False where a value does not fit the narrow
/// type.
template <typename S, class Warp, typename U>
ZS_WARP_FN bool store_values(Warp& w, std::byte* out, value_type type, std::uint32_t m, const U (&x)[lane_values],
                             std::uint32_t* stage) {
  if constexpr (sizeof(S) < sizeof(U)) {
    return store_narrow(w, reinterpret_cast<S*>(out), narrow_sign(type), m, x);
  } else {
    store_segment(w, reinterpret_cast<U*>(out), m, x, stage);
    return true;
  }
}

// --- encoding: analysis ----------------------------------------------------------------------

/// What the analysis finds in a segment, shared by the warp for packing.
template <typename U>
struct segment_stats {
  std::uint32_t m;  // values in the segment
  U for_ref[4];
  std::uint32_t for_widths[4];
  U dfor_first;
  U dfor_ref[4];
  std::uint32_t dfor_widths[4];
  U rfor_ref;
  std::uint32_t runs, min_length, value_bits, length_bits;
  // drfor: the least difference of consecutive run values and the width of theirs above it
  // (its first run value is dfor_first); the shortest of the runs but the last and the width
  // of their lengths above it (drfor stores no length for the last run).
  U drfor_ref;
  std::uint32_t drfor_bits, drfor_min_length, drfor_length_bits;
  alignas(8) std::uint16_t starts[2][tile_blocks];  // block starts in for and in dfor (block_layout)
};

/// What the analysis finds for pfor ([0]) and pdfor ([1]): per block, its low widths, full
/// widths and shifts words, and its start; per miniblock (4 a block), its exception bitmap, 0
/// where it is not patched.
struct patch_stats {
  std::uint32_t low[2][tile_blocks], full[2][tile_blocks], shifts[2][tile_blocks];
  std::uint32_t bitmaps[2][tile_blocks * miniblocks];
  alignas(8) std::uint16_t starts[2][tile_blocks];
};

/// Where position p of a segment sits in a staging array: a gap after every 16 values, so that
/// lanes writing their 16 consecutive values hit different banks.
ZS_HD constexpr std::uint32_t staged(std::uint32_t p) noexcept { return p + p / lane_values; }

/// Per-warp shared memory of the encoder.
template <typename U>
struct encode_smem {
  /// 16-byte chunks of a lane's 16 values; the input buffer keeps a spare chunk after each
  /// lane's, for the same reason as staged().
  static constexpr std::uint32_t lane_chunks = lane_values * sizeof(U) / 16;
  // The next segment's values, fetched ahead; in pass 2, the words of an encoding.
  static constexpr std::uint32_t input_chunks =
      max_of<std::uint32_t>(warp_lanes * (lane_chunks + 1), (4 * max_segment_words(8 * sizeof(U)) + 15) / 16);
  word4 input[input_chunks];
  U stage[staged(segment_values)];              // values (for), differences (dfor), run values (rfor)
  // A segment is written in one scheme: the run lengths (rfor, drfor: stage() writes them) and
  // what pfor and pdfor need (analyze() writes it) share memory, so that the classic schemes'
  // kernels, which have none of the latter, take no more shared memory for it.
  union {
    std::uint32_t lengths[segment_values];
    patch_stats patch;
  };
  segment_stats<U> st;
};

/// What a lane keeps of the analysis for staging.
template <typename U>
struct lane_facts {
  U before;                  // the value before the lane's first (lane 0: none)
  std::uint32_t heads;       // bit k: position 16 lane + k starts a run
  std::uint32_t next_head;   // first run start after the lane's positions, or m
};

/// Calls f(k, length) for each run that starts in this lane (bit k of `heads`), from the last
/// down: a run reaches the head above it, or `next_head` for the lane's last run.
template <class F>
ZS_WARP_FN void for_each_run(std::uint32_t heads, std::uint32_t p0, std::uint32_t next_head, F f) {
  std::uint32_t above = next_head;
ZS_UNROLL
  for (int k = lane_values - 1; k >= 0; --k) {
    if ((heads >> k) & 1U) {
      f(static_cast<unsigned>(k), above - (p0 + k));
      above = p0 + k;
    }
  }
}

/// What a byte of run heads says about the runs that start in it: bits 0-3 its first head (8
/// when it has none), 4-7 its last, 8-11 the shortest distance between two consecutive heads (15
/// for none), 12-15 the longest (0 for none).
ZS_HD constexpr std::uint16_t head_byte_facts(std::uint32_t b) noexcept {
  std::uint32_t first = 8, last = 0, shortest = 15, longest = 0;
  for (std::uint32_t k = 0; k < 8; ++k) {
    if (((b >> k) & 1U) == 0) continue;
    if (first == 8) {
      first = k;
    } else {
      shortest = k - last < shortest ? k - last : shortest;
      longest = k - last > longest ? k - last : longest;
    }
    last = k;
  }
  return static_cast<std::uint16_t>(first | last << 4 | shortest << 8 | longest << 12);
}
struct head_byte_table {
  std::uint16_t facts[256];
};
ZS_HD constexpr head_byte_table make_head_byte_table() noexcept {
  head_byte_table t{};
  for (std::uint32_t b = 0; b < 256; ++b) t.facts[b] = head_byte_facts(b);
  return t;
}
#if defined(__CUDACC__)
static __device__ constexpr head_byte_table device_head_bytes = make_head_byte_table();
#endif
inline constexpr head_byte_table host_head_bytes = make_head_byte_table();

/// The shortest and longest of the runs that start in a lane (heads: bit k for position p0 + k;
/// the last run reaches next_head), from two table lookups instead of a walk over 16 bits;
/// 0xffffffff and 0 where none starts there.
ZS_HD inline void lane_run_lengths(std::uint32_t heads, std::uint32_t p0, std::uint32_t next_head,
                                   std::uint32_t& shortest, std::uint32_t& longest) noexcept {
  shortest = 0xffffffffU;
  longest = 0;
  if (heads == 0) return;
#if defined(__CUDA_ARCH__)
  const head_byte_table& table = device_head_bytes;
#else
  const head_byte_table& table = host_head_bytes;
#endif
  std::uint32_t const low = heads & 0xffU, high = heads >> 8;
  std::uint32_t const lo = table.facts[low], hi = table.facts[high];
  std::uint32_t inner_min = min_of((lo >> 8) & 15U, (hi >> 8) & 15U);
  std::uint32_t inner_max = max_of(lo >> 12, hi >> 12);
  if (low != 0 && high != 0) {
    std::uint32_t const across = 8 + (hi & 15U) - ((lo >> 4) & 15U);  // the low byte's last head to the high's first
    inner_min = min_of(inner_min, across);
    inner_max = max_of(inner_max, across);
  }
  std::uint32_t const top = high != 0 ? 8 + ((hi >> 4) & 15U) : (lo >> 4) & 15U;
  std::uint32_t const last = next_head - (p0 + top);
  bool const inner = bit_count(heads) >= 2;
  shortest = inner ? min_of(inner_min, last) : last;
  longest = inner ? max_of(inner_max, last) : last;
}

/// The trailing zero bits of x (x != 0).
template <typename U>
ZS_HD inline std::uint32_t trailing_zeros(U x) noexcept {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(U) == 8) return static_cast<std::uint32_t>(__ffsll(static_cast<long long>(x)) - 1);
  return static_cast<std::uint32_t>(__ffs(static_cast<int>(x)) - 1);
#else
  return static_cast<std::uint32_t>(std::countr_zero(x));
#endif
}

/// Bytes of a word of four bit widths (each at most 64) that exceed t (t < 64): bit 7 of byte k
/// set where byte k > t. Adding 127 - t to every byte carries into no other byte.
ZS_HD constexpr std::uint32_t bytes_above(std::uint32_t widths, std::uint32_t t) noexcept {
  return (widths + 0x01010101U * (127U - t)) & 0x80808080U;
}
/// Bit widths four to a word (a lane's 16: position k in byte k % 4 of word k / 4): how many
/// exceed t, and (mask_above) which (bit k).
template <std::size_t Words>
ZS_HD inline std::uint32_t count_above(const std::uint32_t (&widths)[Words], std::uint32_t t) noexcept {
  std::uint32_t n = 0;
  for (unsigned q = 0; q < Words; ++q) n += bit_count(bytes_above(widths[q], t));
  return n;
}
ZS_HD inline std::uint32_t mask_above(const std::uint32_t (&widths)[4], std::uint32_t t) noexcept {
  std::uint32_t mask = 0;
  for (unsigned q = 0; q < 4; ++q) {
    std::uint32_t const v = bytes_above(widths[q], t);
    mask |= (((v >> 7) & 1U) | ((v >> 14) & 2U) | ((v >> 21) & 4U) | ((v >> 28) & 8U)) << (4 * q);
  }
  return mask;
}

/// widths_sum of a block of U values: for 32-bit values (each width at most 32, so the sum fits a
/// byte) as one multiplication, whose top byte adds the four.
template <typename U>
ZS_HD inline std::uint32_t block_widths_sum(std::uint32_t widths) noexcept {
  if constexpr (sizeof(U) == 4) return (widths * 0x01010101U) >> 24;
  return widths_sum(widths);
}

/// Exact data words of every coded scheme for the m values the lanes hold (words[i] of
/// coded_scheme(i), the same in every lane), with the references, widths, shifts and exception
/// bitmaps packing needs in sm.st. `flip` maps the type's order to the unsigned order;
/// differences are always ordered as signed. Without `Extended`, pfor, pdfor and drfor are not
/// analysed (their words are 0): the classic schemes' kernels carry none of their work.
template <bool Extended, class Warp, typename U>
ZS_WARP_FN lane_facts<U> analyze(Warp& w, const U (&x)[lane_values], std::uint32_t m, U flip,
                                 encode_smem<U>& sm, std::uint32_t (&words)[coded_schemes]) {
  constexpr U ones = static_cast<U>(~U{0});
  using S = std::make_signed_t<U>;  // differences are ordered as signed: compared as S
  constexpr std::uint32_t rw = sizeof(U) / 4;
  std::uint32_t const lane = w.lane;
  std::uint32_t const p0 = lane * lane_values;
  lane_facts<U> lf;
  lf.before = w.shfl_up(x[lane_values - 1], 1);

  U lo = ones, hi = 0;  // in the unsigned order (x ^ flip)
  S dlo = static_cast<S>(ones >> 1), dhi = static_cast<S>(~(ones >> 1));
  std::uint32_t has_diff = 0;
  std::uint32_t heads = 0;
  // The least and largest nonzero difference: the steps between runs (drfor).
  S slo = static_cast<S>(ones >> 1), shi = static_cast<S>(~(ones >> 1));
  // The same loop four times: lanes whose 16 values are all in the segment (all but one lane of
  // the last segment of a frame) skip the per-value bounds checks, and the extremes are taken in
  // the type's own order (signed or not), which flips two values instead of sixteen.
  auto const scan = [&]<bool Whole, bool Signed>() {
    using K = std::conditional_t<Signed, S, U>;
    // Two of each accumulator, for the lane's first and second eight values: two chains of
    // dependent instructions half as long, run side by side.
    K klo[2], khi[2];
    S dmin[2] = {dlo, dlo}, dmax[2] = {dhi, dhi};
    std::uint32_t head_bits[2] = {0, 0};
    for (unsigned c = 0; c < 2; ++c) {
      klo[c] = Signed ? static_cast<K>(ones >> 1) : static_cast<K>(ones);
      khi[c] = Signed ? static_cast<K>(~(ones >> 1)) : K{0};
    }
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) {
      unsigned const c = k / (lane_values / 2);
      std::uint32_t const p = p0 + k;
      bool const valid = Whole || p < m;
      U const prev = k == 0 ? lf.before : x[k - 1];
      if (valid) {
        klo[c] = min_of(klo[c], static_cast<K>(x[k]));
        khi[c] = max_of(khi[c], static_cast<K>(x[k]));
      }
      if (valid && (k != 0 || p != 0)) {
        auto const d = static_cast<S>(static_cast<U>(x[k] - prev));
        dmin[c] = min_of(dmin[c], d);
        dmax[c] = max_of(dmax[c], d);
        has_diff = 1;
        if (Extended && d != 0) {
          slo = min_of(slo, d);
          shi = max_of(shi, d);
        }
      }
      if (Whole && sizeof(U) == 4 && k != 0) {
        // A minimum and a multiply-add rather than a compare and a logic op: one of the two on
        // the multiplier, beside the logic unit.
        head_bits[c] += nonzero(static_cast<std::uint32_t>(x[k] - prev)) * (1U << k);
      } else if (valid && ((k == 0 && p == 0) || x[k] != prev)) {
        head_bits[c] |= 1U << k;
      }
    }
    dlo = min_of(dmin[0], dmin[1]);
    dhi = max_of(dmax[0], dmax[1]);
    heads = head_bits[0] | head_bits[1];
    // (A lane without values gets ones and 0: the identities map to those of the flipped order.)
    lo = static_cast<U>(static_cast<U>(min_of(klo[0], klo[1])) ^ flip);
    hi = static_cast<U>(static_cast<U>(max_of(khi[0], khi[1])) ^ flip);
  };
  with_flags(p0 + lane_values <= m, flip != 0, scan);
  auto const umin = [](U a, U b) { return min_of(a, b); };
  // Each miniblock's width has a byte of its own, so widths combine by addition (which the
  // multiplier does, beside the logic unit) as well as by or.
  auto const add = [](std::uint32_t a, std::uint32_t b) { return a + b; };
  std::uint32_t const block = lane / 8;
  std::uint32_t const mini = (lane / 2) % miniblocks;
  std::uint32_t const width_place = 1U << (8 * mini);  // the miniblock's byte of its block's widths
  bool const block_exists = block * block_values < m;
  bool const mini_exists = (lane / 2) * miniblock_values < m;

  // for: a miniblock is two lanes, a block eight.
  U const mlo = min_of(lo, w.shfl_xor(lo, 1));
  U const mhi = max_of(hi, w.shfl_xor(hi, 1));
  U const key = block_reduce(w, mlo, umin);
  std::uint32_t const fw = mini_exists ? bit_width(static_cast<U>(mhi - key)) : 0;
  std::uint32_t const for_widths = block_reduce(w, fw * width_place, add);
  std::uint32_t const for_block = block_exists ? rw + 1 + block_widths_sum<U>(for_widths) : 0;

  // dfor: the same over differences; a block without any takes the reference 0.
  S const mdlo = min_of(dlo, w.shfl_xor(dlo, 1));
  S const mdhi = max_of(dhi, w.shfl_xor(dhi, 1));
  std::uint32_t const with_diff = w.ballot(has_diff != 0);  // lanes holding a difference
  bool const mini_has = (with_diff >> (lane / 2 * 2) & 3U) != 0;
  bool const block_has = (with_diff >> (lane / 8 * 8) & 0xffU) != 0;
  S const dkey0 = block_reduce(w, mdlo, [](S a, S b) { return min_of(a, b); });
  S const dkey = block_has ? dkey0 : S{0};
  std::uint32_t const dw = mini_has ? bit_width(static_cast<U>(static_cast<U>(mdhi) - static_cast<U>(dkey))) : 0;
  std::uint32_t const dfor_widths = block_reduce(w, dw * width_place, add);
  std::uint32_t const dfor_block = block_exists ? rw + 1 + block_widths_sum<U>(dfor_widths) : 0;

  // rfor: a run's length reaches the next head.
  std::uint32_t const runs = w.reduce_add(bit_count(heads));
  // The next head after this lane's values: the first of the next lane that holds one.
  std::uint32_t const first_head = heads != 0 ? p0 + lowest_bit(heads) : segment_values;
  std::uint32_t const holding = w.ballot(heads != 0);
  std::uint32_t const later = lane + 1 < warp_lanes ? holding >> (lane + 1) << (lane + 1) : 0;
  std::uint32_t const from_lane = w.shfl(first_head, later != 0 ? lowest_bit(later) : lane);
  std::uint32_t const next = later != 0 ? from_lane : segment_values;
  lf.heads = heads;
  lf.next_head = min_of(next, m);
  std::uint32_t llo, lhi;
  lane_run_lengths(heads, p0, lf.next_head, llo, lhi);
  // drfor's lengths leave out the segment's last run: the last lane holding a head drops its top
  // run (its runs but that one end where it starts).
  [[maybe_unused]] std::uint32_t dr_lo = llo, dr_hi = lhi;
  if constexpr (Extended) {
    if (later == 0 && heads != 0) {
      std::uint32_t const top = bit_width(heads) - 1;
      lane_run_lengths(heads & ~(1U << top), p0, p0 + top, dr_lo, dr_hi);
    }
  }
  llo = warp_min(w, llo);
  lhi = warp_max(w, lhi);
  U const glo = warp_min(w, lo);
  U const ghi = warp_max(w, hi);
  std::uint32_t const value_bits = bit_width(static_cast<U>(ghi - glo));
  std::uint32_t const length_bits = bit_width(lhi - llo);

  // The blocks' starts: a scan of their words (0 past m) over the four blocks, lanes 8 apart,
  // for's in the low half of one word and dfor's in the high half, so that one shuffle a step
  // carries both.
  static_assert(tile_blocks * (rw + 1 + miniblocks * 8 * sizeof(U)) < 0x10000U, "a segment's words fit 16 bits");
  std::uint32_t const both = for_block | dfor_block << 16;
  std::uint32_t upto = both;  // of this lane's block and the blocks before it
ZS_UNROLL
  for (unsigned d = block_values / lane_values; d < warp_lanes; d <<= 1) {
    std::uint32_t const other = w.shfl_up(upto, d);
    if (lane >= d) upto += other;
  }
  std::uint32_t const before = upto - both;  // of the blocks before this lane's
  std::uint32_t const all = w.shfl(upto, warp_lanes - 1);
  words[0] = all & 0xffffU;
  words[1] = rw + (all >> 16);
  words[2] = static_cast<std::uint32_t>(rfor_block_words({runs, llo, value_bits, length_bits}, 8 * sizeof(U)));

  segment_stats<U>& st = sm.st;
  if constexpr (!Extended) {
    words[3] = words[4] = words[5] = 0;
  } else {
    // pfor and pdfor: the for and dfor offsets of each miniblock without the trailing zeros they
    // share (shift: a warp or of the offsets), packed at the low width that makes the miniblock
    // smallest. A lane keeps the bit width of each of its offsets, a byte each, and counts the
    // exceptions at each low width from them (count_above), instead of keeping the offsets.
    U const pref = static_cast<U>(key ^ flip);
    U const dref = static_cast<U>(dkey);
    U por = 0, dor = 0;
    std::uint32_t pwidth[4] = {0, 0, 0, 0}, dwidth[4] = {0, 0, 0, 0};
    // Bit t: some offset takes exactly t bits (t = 8 sizeof(U) lands on bit 0, which no search
    // reads: a low width of 0 is always a candidate).
    U ppresent = 0, dpresent = 0;
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) {
      std::uint32_t const p = p0 + k;
      U const prev = k == 0 ? lf.before : x[k - 1];
      U const po = p < m ? static_cast<U>(x[k] - pref) : U{0};
      U const dfo = p < m && p != 0 ? static_cast<U>(static_cast<U>(x[k] - prev) - dref) : U{0};
      por |= po;
      dor |= dfo;
      std::uint32_t const pw = bit_width(po), dw_k = bit_width(dfo);
      pwidth[k / 4] |= pw << (8 * (k % 4));
      dwidth[k / 4] |= dw_k << (8 * (k % 4));
      ppresent |= static_cast<U>(U{1} << (pw % (8 * sizeof(U))));
      dpresent |= static_cast<U>(U{1} << (dw_k % (8 * sizeof(U))));
    }
    por |= w.shfl_xor(por, 1);
    dor |= w.shfl_xor(dor, 1);
    std::uint32_t const pshift = por == 0 ? 0U : trailing_zeros(por);
    std::uint32_t const dshift = dor == 0 ? 0U : trailing_zeros(dor);
    // Full widths: of the largest field, the largest offset shifted (0 for no miniblock).
    std::uint32_t const pfull = fw - pshift, dfull = dw - dshift;
    // The low widths, as best_low_width (bitpack_format.hpp) picks them. The two lanes of a
    // miniblock split the work: the even one searches pfor's low width, the odd one pdfor's,
    // each over all 32 offsets' widths (its own and its partner's) and without shuffles, so
    // that pairs whose searches take different numbers of steps need not wait for each other.
    bool const odd = lane % 2 != 0;
    std::uint32_t mine[2 * 4];  // the widths of this lane's scheme: its own, then its partner's
ZS_UNROLL
    for (unsigned q = 0; q < 4; ++q) {
      mine[q] = odd ? dwidth[q] : pwidth[q];
      mine[4 + q] = w.shfl_xor(odd ? pwidth[q] : dwidth[q], 1);
    }
    U const present = (odd ? dpresent : ppresent) | w.shfl_xor(odd ? ppresent : dpresent, 1);
    std::uint32_t const shift = odd ? dshift : pshift, full = odd ? dfull : pfull;
    std::uint32_t low = full, low_words = full;
    // Candidates below the full width: 0 and the fields' own widths (present >> shift, bit b:
    // a field of exactly b bits).
    U candidates = static_cast<U>(static_cast<U>(present >> shift) & static_cast<U>(low_mask(full)));
    candidates |= full > 0 ? U{1} : U{0};
    while (candidates != 0) {
      std::uint32_t const b = bit_width(candidates) - 1;
      candidates &= static_cast<U>(~(U{1} << b));
      std::uint32_t const exceptions = count_above(mine, shift + b);
      std::uint32_t const words_b = patched_miniblock_words(b, full, exceptions);
      if (words_b < low_words) {
        low_words = words_b;
        low = b;
      }
      if (min_patched_words_below(full, exceptions) >= low_words) break;
    }
    std::uint32_t const other_low = w.shfl_xor(low, 1), other_words = w.shfl_xor(low_words, 1);
    std::uint32_t const plow = odd ? other_low : low, pwords = odd ? other_words : low_words;
    std::uint32_t const dlow = odd ? low : other_low, dwords = odd ? low_words : other_words;
    // Exception bitmaps: this lane's 16 positions, the miniblock's first half in the low bits.
    std::uint32_t pmask = plow < pfull ? mask_above(pwidth, pshift + plow) << (16 * (lane % 2)) : 0U;
    std::uint32_t dmask = dlow < dfull ? mask_above(dwidth, dshift + dlow) << (16 * (lane % 2)) : 0U;
    pmask |= w.shfl_xor(pmask, 1);
    dmask |= w.shfl_xor(dmask, 1);
    // Each field of a block's words has a byte of its own (widths and shifts at most 64), and
    // a miniblock's words fit 16 bits (at most 65).
    std::uint32_t const p_low = block_reduce(w, plow * width_place, add);
    std::uint32_t const p_full = block_reduce(w, pfull * width_place, add);
    std::uint32_t const p_shifts = block_reduce(w, pshift * width_place, add);
    std::uint32_t const d_low = block_reduce(w, dlow * width_place, add);
    std::uint32_t const d_full = block_reduce(w, dfull * width_place, add);
    std::uint32_t const d_shifts = block_reduce(w, dshift * width_place, add);
    std::uint32_t const patched_words = block_reduce(w, pwords | dwords << 16, add);
    std::uint32_t const pfor_block = block_exists ? patched_head_words(8 * sizeof(U)) + (patched_words & 0xffffU) : 0;
    std::uint32_t const pdfor_block = block_exists ? patched_head_words(8 * sizeof(U)) + (patched_words >> 16) : 0;
    std::uint32_t const patched_both = pfor_block | pdfor_block << 16;
    std::uint32_t patched_upto = patched_both;
ZS_UNROLL
    for (unsigned d = block_values / lane_values; d < warp_lanes; d <<= 1) {
      std::uint32_t const other = w.shfl_up(patched_upto, d);
      if (lane >= d) patched_upto += other;
    }
    std::uint32_t const patched_before = patched_upto - patched_both;
    std::uint32_t const patched_all = w.shfl(patched_upto, warp_lanes - 1);
    words[3] = patched_all & 0xffffU;
    words[4] = rw + (patched_all >> 16);

    // drfor: the steps between runs are the nonzero differences.
    S const step_lo = warp_min(w, slo);
    S const step_hi = warp_max(w, shi);
    U const step_ref = runs > 1 ? static_cast<U>(step_lo) : U{0};
    std::uint32_t const step_bits = runs > 1 ? bit_width(static_cast<U>(static_cast<U>(step_hi) - step_ref)) : 0U;
    dr_lo = warp_min(w, dr_lo);
    dr_hi = warp_max(w, dr_hi);
    std::uint32_t const drfor_min = runs > 1 ? dr_lo : 1U;  // no length stored: 1, width 0
    std::uint32_t const drfor_length_bits = runs > 1 ? bit_width(dr_hi - dr_lo) : 0U;
    rfor_header const drfor_head{runs, drfor_min, step_bits, drfor_length_bits, step_fits_header(runs, step_ref)};
    words[5] = static_cast<std::uint32_t>(drfor_block_words(drfor_head, 8 * sizeof(U)));

    if (lane % 8 == 0) {
      patch_stats& ps = sm.patch;
      ps.starts[0][block] = static_cast<std::uint16_t>(patched_before & 0xffffU);
      ps.starts[1][block] = static_cast<std::uint16_t>(rw + (patched_before >> 16));
      ps.low[0][block] = p_low;
      ps.full[0][block] = p_full;
      ps.shifts[0][block] = p_shifts;
      ps.low[1][block] = d_low;
      ps.full[1][block] = d_full;
      ps.shifts[1][block] = d_shifts;
    }
    if (lane % 2 == 0) {
      sm.patch.bitmaps[0][lane / 2] = pmask;
      sm.patch.bitmaps[1][lane / 2] = dmask;
    }
    if (lane == 0) {
      st.drfor_ref = step_ref;
      st.drfor_bits = step_bits;
      st.drfor_min_length = drfor_min;
      st.drfor_length_bits = drfor_length_bits;
    }
  }

  if (lane % 8 == 0) {
    st.for_ref[block] = static_cast<U>(key ^ flip);
    st.for_widths[block] = for_widths;
    st.dfor_ref[block] = static_cast<U>(dkey);
    st.dfor_widths[block] = dfor_widths;
    st.starts[0][block] = static_cast<std::uint16_t>(before & 0xffffU);
    st.starts[1][block] = static_cast<std::uint16_t>(rw + (before >> 16));
  }
  if (lane == 0) {
    st.m = m;
    st.dfor_first = x[0];
    st.rfor_ref = static_cast<U>(glo ^ flip);
    st.runs = runs;
    st.min_length = llo;
    st.value_bits = value_bits;
    st.length_bits = length_bits;
  }
  w.sync();  // the stats are read by other lanes
  return lf;
}

/// The coded scheme with the fewest data words among the candidates: for, dfor and rfor, and
/// with `extended` pfor, pdfor and drfor too; ties to the lower id. The least is carried along
/// rather than read back at a run-time index (which would put the array in local memory).
template <typename T>
ZS_HD inline scheme fewest_words(const T (&words)[coded_schemes], bool extended) noexcept {
  int best = 0;
  T least = words[0];
  for (int i = 1; i < coded_schemes; ++i) {
    if ((extended || i < schemes_per_words) && words[i] < least) {
      least = words[i];
      best = i;
    }
  }
  return coded_scheme(best);
}

/// Blocks of a segment of m values in scheme `kind`.
ZS_HD constexpr std::uint32_t segment_blocks(scheme kind, std::uint32_t m) noexcept {
  return is_run_scheme(kind) ? 1 : (m + block_values - 1) / block_values;
}

/// The starts of a segment's blocks inside its encoding in `kind` (for, dfor, pfor or pdfor),
/// one a block (analyze found them; blocks past the segment's values have meaningless ones).
template <typename U>
ZS_HD inline const std::uint16_t* block_starts(const encode_smem<U>& sm, scheme kind) {
  if (kind == scheme::for_ || kind == scheme::dfor) return sm.st.starts[kind == scheme::dfor ? 1 : 0];
  return sm.patch.starts[kind == scheme::pdfor ? 1 : 0];
}

/// block_starts packed 16 bits each, block i in bits 16 i; 0 for rfor and drfor. The hosts and
/// the GPU are little-endian, so the four 16-bit starts read as one 64-bit word.
template <typename U>
ZS_HD inline std::uint64_t block_layout(const encode_smem<U>& sm, scheme kind) {
  static_assert(std::endian::native == std::endian::little, "the starts read as one little-endian word");
  if (is_run_scheme(kind)) return 0;
  std::uint64_t layout;
  std::memcpy(&layout, block_starts(sm, kind), sizeof layout);
  return layout;
}

ZS_HD constexpr std::uint32_t layout_offset(std::uint64_t layout, std::uint32_t i) noexcept {
  return static_cast<std::uint32_t>(layout >> (16 * i)) & 0xffffU;
}

/// Puts in shared memory what word() reads to encode in `kind`, then meets the warp.
template <class Warp, typename U>
ZS_WARP_FN void stage(Warp& w, const U (&x)[lane_values], const lane_facts<U>& lf, scheme kind,
                      encode_smem<U>& sm) {
  std::uint32_t const p0 = w.lane * lane_values;
  if (kind == scheme::for_ || kind == scheme::pfor) {
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) sm.stage[staged(p0 + k)] = x[k];
  } else if (is_delta_tiled(kind)) {
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) {
      sm.stage[staged(p0 + k)] = static_cast<U>(x[k] - (k == 0 ? lf.before : x[k - 1]));
    }
  } else {
    // Runs are numbered by a scan of head counts.
    std::uint32_t r = inclusive_sum(w, bit_count(lf.heads));  // after the lane's last run
    for_each_run(lf.heads, p0, lf.next_head, [&](unsigned k, std::uint32_t length) {
      --r;
      sm.stage[r] = x[k];
      sm.lengths[r] = length;
    });
  }
  w.sync();
}

/// Word l of a pfor or pdfor block i (l counted from the block's start), from what stage()
/// put in shared memory.
template <typename U>
ZS_HD inline std::uint32_t patched_block_word(const encode_smem<U>& sm, scheme kind, std::uint32_t i, std::uint32_t l) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  segment_stats<U> const& st = sm.st;
  bool const delta = kind == scheme::pdfor;
  int const c = delta ? 1 : 0;
  U const ref = delta ? st.dfor_ref[i] : st.for_ref[i];
  patch_stats const& ps = sm.patch;
  std::uint32_t const low = ps.low[c][i], full = ps.full[c][i], shifts = ps.shifts[c][i];
  if (l < rw) return reference_word(ref, l);
  l -= rw;
  if (l == 0) return low;
  if (l == 1) return full;
  if (l == 2) return shifts;
  l -= 3;
  // Field k of miniblock j: its offset shifted (0 at positions that hold none).
  auto const field = [&](std::uint32_t j, std::uint32_t k) -> U {
    std::uint32_t const p = i * block_values + j * miniblock_values + k;
    bool const holds = p < st.m && !(delta && p == 0);  // pdfor: position 0 holds no difference
    return holds ? static_cast<U>(static_cast<U>(sm.stage[staged(p)] - ref) >> width_of(shifts, j)) : U{0};
  };
  std::uint32_t const lows = widths_sum(low);
  if (l < lows) {
    std::uint32_t j = 0, before = 0;
    while (l >= before + width_of(low, j)) before += width_of(low, j++);
    std::uint32_t const b = width_of(low, j);
    return gather_word(l - before, b, miniblock_values,
                       [&](std::uint32_t k) { return static_cast<U>(field(j, k) & static_cast<U>(low_mask(b))); });
  }
  l -= lows;
  const std::uint32_t* bitmaps = ps.bitmaps[c] + miniblocks * i;
  for (std::uint32_t j = 0; j < miniblocks; ++j) {  // the bitmap words
    if (width_of(full, j) == width_of(low, j)) continue;
    if (l == 0) return bitmaps[j];
    --l;
  }
  for (std::uint32_t j = 0; j < miniblocks; ++j) {  // the high-bits streams
    std::uint32_t const b = width_of(low, j), high = width_of(full, j) - b;
    if (high == 0) continue;
    std::uint32_t const bitmap = bitmaps[j];
    std::uint32_t const exceptions = bit_count(bitmap);
    auto const n = static_cast<std::uint32_t>(field_words(exceptions, high));
    if (l < n) {
      // The e-th exception is the e-th set bit. gather_word asks for consecutive ones, so the
      // bitmap is walked once a word: `rest` is it without its first `at` set bits.
      std::uint32_t rest = bitmap, at = 0;
      return gather_word(l, high, exceptions, [&](std::uint32_t e) {
        for (; at < e; ++at) rest &= rest - 1;
        return static_cast<U>(field(j, lowest_bit(rest)) >> b);
      });
    }
    l -= n;
  }
  return 0;
}

/// Word q of the segment's encoding in `kind`, from what stage() put in shared memory.
template <bool Extended, typename U>
ZS_HD inline std::uint32_t encoded_word(const encode_smem<U>& sm, scheme kind, std::uint32_t q) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  segment_stats<U> const& st = sm.st;
  std::uint32_t const m = st.m;
  if (Extended && kind == scheme::drfor) {
    bool const step_in_header = step_fits_header(st.runs, st.drfor_ref);
    rfor_header const h{st.runs, st.drfor_min_length, st.drfor_bits, st.drfor_length_bits, step_in_header,
                        static_cast<std::uint32_t>(st.drfor_ref)};
    if (q == 0) return pack_rfor_header(h);
    if (q <= rw) return reference_word(st.dfor_first, q - 1);  // the first run value
    std::uint32_t const head = drfor_head_words(h, 8 * sizeof(U));  // the reference: see drfor_head_words
    if (q < head) return reference_word(st.drfor_ref, q - 1 - rw);
    std::uint32_t const k = q - head;
    auto const vw = static_cast<std::uint32_t>(field_words(st.runs - 1, st.drfor_bits));
    if (k < vw) {
      U const ref = st.drfor_ref;
      return gather_word(k, st.drfor_bits, st.runs - 1,
                         [&](std::uint32_t r) { return static_cast<U>(sm.stage[r + 1] - sm.stage[r] - ref); });
    }
    std::uint32_t const shortest = st.drfor_min_length;
    return gather_word(k - vw, st.drfor_length_bits, st.runs - 1,
                       [&](std::uint32_t r) { return sm.lengths[r] - shortest; });
  }
  if (kind == scheme::rfor) {
    if (q == 0) return pack_rfor_header({st.runs, st.min_length, st.value_bits, st.length_bits});
    if (q <= rw) return reference_word(st.rfor_ref, q - 1);
    std::uint32_t const k = q - 1 - rw;
    auto const vw = static_cast<std::uint32_t>(field_words(st.runs, st.value_bits));
    if (k < vw) {
      U const ref = st.rfor_ref;
      return gather_word(k, st.value_bits, st.runs, [&](std::uint32_t r) { return static_cast<U>(sm.stage[r] - ref); });
    }
    std::uint32_t const shortest = st.min_length;
    return gather_word(k - vw, st.length_bits, st.runs, [&](std::uint32_t r) { return sm.lengths[r] - shortest; });
  }
  bool const delta = is_delta_tiled(kind);
  if (delta && q < rw) return reference_word(st.dfor_first, q);
  std::uint32_t const blocks = segment_blocks(kind, m);
  std::uint32_t i = 0;
  std::uint64_t const layout = block_layout(sm, kind);
  while (i + 1 < blocks && layout_offset(layout, i + 1) <= q) ++i;
  std::uint32_t l = q - layout_offset(layout, i);
  if constexpr (Extended) {
    if (is_patched(kind)) return patched_block_word(sm, kind, i, l);
  }
  U const ref = delta ? st.dfor_ref[i] : st.for_ref[i];
  std::uint32_t const widths = delta ? st.dfor_widths[i] : st.for_widths[i];
  if (l < rw) return reference_word(ref, l);
  if (l == rw) return widths;
  l -= rw + 1;
  std::uint32_t j = 0, before = 0;
  while (l >= before + width_of(widths, j)) before += width_of(widths, j++);
  std::uint32_t const first = i * block_values + j * miniblock_values;
  std::uint32_t const low = delta && first == 0 ? 1 : 0;  // dfor: position 0 holds no difference
  return gather_word(l - before, width_of(widths, j), miniblock_values, [&](std::uint32_t k) {
    std::uint32_t const p = first + k;
    return p >= low && p < m ? static_cast<U>(sm.stage[staged(p)] - ref) : U{0};
  });
}

/// A lane's writer of a stream of fields into 32-bit words: it fills a word at a time from bit
/// `have` of `*word` on and stores each word it completes. The bits of an incomplete word stay
/// in `acc` (the caller joins the words two lanes share).
struct lane_stream {
  std::uint32_t* word;    // the word being filled
  std::uint32_t have;     // its bits so far
  std::uint32_t acc = 0;  // those bits
  /// Appends f (b <= 32 bits wide, f < 2^b); a word is complete at most once. f goes above the
  /// word's bits by a multiplication rather than shifts: the product's high half is what spills
  /// into the next word, and the multiplier runs beside the logic unit, which pass 1 keeps
  /// busier than any other.
  ZS_HD void append(std::uint32_t f, std::uint32_t b) {
    std::uint64_t const placed = std::uint64_t{f} * (1U << have) + acc;
    bool const full = have + b >= 32;
    if (full) *word = static_cast<std::uint32_t>(placed);
    word += full ? 1 : 0;
    acc = static_cast<std::uint32_t>(full ? placed >> 32 : placed);
    have = (have + b) % 32;
  }
};

/// Packs the for or dfor encoding of a whole segment (512 values) of 32-bit values straight
/// from the lanes' registers into out (the block layout from the analysis): lane l packs its 16
/// fields into the words of its half miniblock, and where a width is odd, the word the two
/// halves share is joined with a shuffle. Each field costs a few instructions and no branch:
/// the delta, the scheme and whether fields go in pairs are fixed for the whole warp.
template <class Warp>
ZS_WARP_FN void pack_lanes(Warp& w, const std::uint32_t (&x)[lane_values], const lane_facts<std::uint32_t>& lf,
                           scheme kind, const segment_stats<std::uint32_t>& st, std::uint32_t* out) {
  std::uint32_t const lane = w.lane;
  std::uint32_t const block = lane / 8, j = (lane / 2) % miniblocks, half = lane % 2;
  bool const delta = kind == scheme::dfor;
  std::uint32_t const ref = delta ? st.dfor_ref[block] : st.for_ref[block];
  std::uint32_t const widths = delta ? st.dfor_widths[block] : st.for_widths[block];
  std::uint32_t const bits = width_of(widths, j);
  std::uint32_t const block_start = st.starts[delta ? 1 : 0][block];
  if (lane % 8 == 0) {
    out[block_start] = ref;
    out[block_start + 1] = widths;
  }
  if (delta && lane == 0) out[0] = st.dfor_first;
  std::uint32_t* const first = out + block_start + 2 + widths_before(widths, j) + half * lane_values * bits / 32;
  // Its bits so far: 16 where an odd width splits the word the halves share.
  lane_stream s{first, half * lane_values * bits % 32};
  auto const pack = [&]<bool Delta, bool Pairs>() {
    auto const field = [&](unsigned k) -> std::uint32_t {
      if constexpr (!Delta) return x[k] - ref;
      if (k == 0) return lane == 0 ? 0U : x[0] - lf.before - ref;  // position 0 holds no difference
      return x[k] - x[k - 1] - ref;
    };
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; k += Pairs ? 2 : 1) {
      if constexpr (Pairs) {
        s.append(field(k) + (field(k + 1) << bits), 2 * bits);  // the second field above the first
      } else {
        s.append(field(k), bits);
      }
    }
  };
  // Where no lane's width exceeds 16, fields go in pairs: half the appends.
  with_flags(delta, !w.any(bits > 16), pack);
  // The shared word: the second half wrote its own bits, above the first half's 16 left in acc.
  std::uint32_t const left = w.shfl_up(s.acc, 1);
  if (half == 1 && bits % 2 == 1) *first |= left;
}

/// Packs the pfor or pdfor encoding of a whole segment of 32-bit values from the lanes'
/// registers, as pack_lanes does for and dfor. A lane writes its half miniblock's low fields,
/// then its exceptions' high bits into its miniblock's stream, after those of the exceptions
/// before it (the first half's); the word the halves share in each section is joined with a
/// shuffle, and the second half also ends the stream.
template <class Warp>
ZS_WARP_FN void pack_patched_lanes(Warp& w, const std::uint32_t (&x)[lane_values], const lane_facts<std::uint32_t>& lf,
                                   scheme kind, const segment_stats<std::uint32_t>& st, const patch_stats& ps,
                                   std::uint32_t* out) {
  std::uint32_t const lane = w.lane;
  std::uint32_t const block = lane / 8, j = (lane / 2) % miniblocks, half = lane % 2;
  bool const delta = kind == scheme::pdfor;
  int const c = delta ? 1 : 0;
  std::uint32_t const ref = delta ? st.dfor_ref[block] : st.for_ref[block];
  std::uint32_t const low = ps.low[c][block], full = ps.full[c][block], shifts = ps.shifts[c][block];
  std::uint32_t const start = ps.starts[c][block];
  std::uint32_t const bits = width_of(low, j), high = width_of(full, j) - bits, shift = width_of(shifts, j);
  if (lane % 8 == 0) {
    out[start] = ref;
    out[start + 1] = low;
    out[start + 2] = full;
    out[start + 3] = shifts;
  }
  if (delta && lane == 0) out[0] = st.dfor_first;
  std::uint32_t const head = start + patched_head_words(32);
  auto const field = [&](unsigned k) -> std::uint32_t {
    std::uint32_t offset;
    if (!delta) {
      offset = x[k] - ref;
    } else if (k == 0) {
      offset = lane == 0 ? 0U : x[0] - lf.before - ref;  // position 0 holds no difference
    } else {
      offset = x[k] - x[k - 1] - ref;
    }
    return offset >> shift;
  };
  std::uint32_t* const first = out + head + widths_before(low, j) + half * lane_values * bits / 32;
  lane_stream lows{first, half * lane_values * bits % 32};
  std::uint32_t const low_bits = static_cast<std::uint32_t>(low_mask(bits));
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) lows.append(field(k) & low_bits, bits);
  std::uint32_t const left = w.shfl_up(lows.acc, 1);
  if (half == 1 && bits % 2 == 1) *first |= left;

  // The bitmaps of the patched miniblocks follow the low fields, then their high-bits streams.
  const std::uint32_t* bitmaps = ps.bitmaps[c] + miniblocks * block;
  std::uint32_t const bitmap = bitmaps[j];
  std::uint32_t rank = 0, patched = 0, stream = 0;
  for (std::uint32_t i = 0; i < miniblocks; ++i) {
    std::uint32_t const h = width_of(full, i) - width_of(low, i);
    if (h == 0) continue;
    ++patched;
    if (i < j) {
      ++rank;
      stream += static_cast<std::uint32_t>(field_words(bit_count(bitmaps[i]), h));
    }
  }
  std::uint32_t const bitmap_at = head + widths_sum(low);
  if (high != 0 && half == 0) out[bitmap_at + rank] = bitmap;
  std::uint32_t const mine = half == 0 ? bitmap & 0xffffU : bitmap >> 16;
  std::uint32_t const before = half == 0 ? 0U : bit_count(bitmap & 0xffffU);  // the first half's exceptions
  std::uint32_t* const at = out + bitmap_at + patched + stream + before * high / 32;
  lane_stream highs{at, before * high % 32};
  // Every value is appended, those that are no exceptions as 0 bits: no branch a value.
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    bool const is = (mine >> k & 1U) != 0;
    highs.append(is ? field(k) >> bits : 0U, is ? high : 0U);
  }
  // The first half leaves its last, incomplete word to the second, which joins it to its own
  // first word (written or not) and stores the stream's last word.
  std::uint32_t const tail = w.shfl_up(highs.acc, 1);
  if (half == 1 && high != 0) {
    if (highs.word != at) {
      *at |= tail;
    } else {
      highs.acc |= tail;
    }
    if (highs.have != 0) *highs.word = highs.acc;
  }
}

// --- encoding: the passes --------------------------------------------------------------------

struct encode_args {
  const encode_source* sources;
  std::byte* frames;
  const std::uint64_t* frame_offsets;
  std::uint64_t num_frames;
  const std::uint64_t* chunks;       // chunk map of this width class: one chunk per segment
  const std::uint64_t* sample_first; // this width class: per frame, its first sample (num_frames + 1)
  const std::uint64_t* seg_first;    // per frame: batch-wide index of its first segment
  std::uint64_t segments32;          // the batch's segments: first those of 32-bit values,
  std::uint64_t segments64;          // then those of 64-bit values
  std::uint64_t blocks;              // scan blocks of both classes
  std::uint64_t block_segments;      // this width class: segments per scan block (at least 1)
  std::uint64_t block_base;          // this width class: the index of its first scan block
  block_words* within;               // per segment (batch-wide): its place in its scan block
  scheme_words* block_sums;          // per scan block (32-bit classes' first)
  const scheme_words* offsets;       // inclusive scan of block_sums after a leading zero
  scheme_words* samples;             // per frame: sizes summed over its sampled segments (zeroed)
  std::uint32_t* slots;              // this width class: slot_words per segment, pooled per warp
  std::uint64_t* slot_at;            // per segment: where in slots pass 1 kept it, or no_slot
  std::uint64_t* layouts;            // per segment: block_layout of its kept encoding
  std::uint8_t* choice;              // per frame: the chosen scheme
  std::uint64_t* sums;               // per frame: checksum terms (zeroed by the caller)
  std::uint32_t* encode_again;       // nonzero when pass 2 must encode some segment again (zeroed)
  bool extended = false;             // the candidates: for, dfor, rfor, and pfor, pdfor, drfor
  // With `extended`, the same four for pfor, pdfor and drfor (else null).
  block_words* within_ext = nullptr;
  scheme_words* block_sums_ext = nullptr;
  const scheme_words* offsets_ext = nullptr;
  scheme_words* samples_ext = nullptr;
};

/// Data words of scheme i (scheme_index) of the batch's segments before segment g
/// (batch-wide; g may be the number of segments).
/// Without `Extended`, i is one of for, dfor, rfor (the classic codec's passes, spared the test).
template <bool Extended = true>
ZS_HD inline std::uint64_t offset_of(const encode_args& a, std::uint64_t g, int i) {
  bool const ext = Extended && i >= schemes_per_words;
  const scheme_words* offsets = ext ? a.offsets_ext : a.offsets;
  int const k = ext ? i - schemes_per_words : i;
  if (g == a.segments32 + a.segments64) return offsets[a.blocks].w[k];
  block_words const b = (ext ? a.within_ext : a.within)[g];
  return offsets[b.block].w[k] + b.w[k];
}

/// Where a segment sits in its frame and its input.
template <typename U>
struct segment_place {
  std::uint32_t f;
  encode_source src;
  std::uint64_t local;  // index inside the frame
  std::uint64_t g;      // batch-wide index
  std::uint32_t m;      // values
  const std::byte* in;  // its first value, stored as src.type stores them (with_storage)
};

/// A walk over consecutive segments (a warp's, or a lane's): the frame is found, by a binary
/// search of the chunk map, when the walk enters it. `Narrow`: frames may store narrower values
/// than U (otherwise a value's bytes are known at compile time).
template <typename U, bool Narrow = false>
struct segment_cursor {
  std::uint32_t f = 0xffffffffU;
  std::uint64_t first = 0, last = 0, seg_first = 0;
  encode_source src{};

  ZS_HD segment_place<U> at(const encode_args& a, std::uint64_t chunk) {
    if (f == 0xffffffffU || chunk < first || chunk >= last) {
      f = static_cast<std::uint32_t>(kernels::frame_of_chunk(a.chunks, a.num_frames, chunk));
      src = a.sources[f];
      first = a.chunks[f];
      last = a.chunks[f + 1];
      seg_first = a.seg_first[f];
    }
    segment_place<U> s;
    s.f = f;
    s.src = src;
    s.local = chunk - first;
    s.g = seg_first + s.local;
    std::uint64_t const v0 = s.local * segment_values;
    s.m = static_cast<std::uint32_t>(min_of<std::uint64_t>(segment_values, src.count - v0));
    s.in = static_cast<const std::byte*>(src.values) + v0 * (Narrow ? value_width(src.type) : sizeof(U));
    return s;
  }
};

/// fetch_input of narrow values (S): a full segment on 16 bytes (512 or 1024 bytes) arrives by
/// asynchronous copies, chunk c at sm.input[c], so lane l's values are chunks [l s, l s + s) for
/// s = sizeof(S); any other segment is read by each lane itself, its own 16 values into its own
/// chunks, where read_input finds them (a lane reads only what it wrote, so no lane waits on
/// another's stores; a column may start at any byte).
template <class Warp, typename S, typename U>
ZS_WARP_FN void fetch_narrow(Warp& w, const S* in, std::uint32_t m, encode_smem<U>& sm) {
  constexpr std::uint32_t per = sizeof(S);  // chunks of a lane's 16 values
  if (m == segment_values && aligned16(in)) {
    auto const* src = reinterpret_cast<const word4*>(in);
ZS_UNROLL
    for (std::uint32_t i = 0; i < per; ++i) w.copy16(&sm.input[w.lane + i * warp_lanes], &src[w.lane + i * warp_lanes]);
    return;
  }
  std::uint32_t const p0 = w.lane * lane_values;
  S own[lane_values];
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) own[k] = p0 + k < m ? in[p0 + k] : S{0};
  std::memcpy(&sm.input[w.lane * per], own, sizeof own);
}

/// Starts the asynchronous copy of the m values of `type` at `in` (a segment) into sm.input;
/// the caller commits.
template <bool Narrow = false, class Warp, typename U>
ZS_WARP_FN void fetch_input(Warp& w, const std::byte* in_bytes, value_type type, std::uint32_t m, encode_smem<U>& sm) {
  if constexpr (sizeof(U) == 4 && Narrow) {
    if (is_narrow_type(type)) {
      with_storage<U, Narrow>(type, [&]<typename S>() {
        if constexpr (sizeof(S) < sizeof(U)) fetch_narrow(w, reinterpret_cast<const S*>(in_bytes), m, sm);
      });
      return;
    }
  }
  auto const* in = reinterpret_cast<const U*>(in_bytes);
  constexpr std::uint32_t per = encode_smem<U>::lane_chunks;
  if (m == segment_values && aligned16(in)) {
    // Chunk c goes to lane c / per's row: coalesced reads, rows padded in shared memory. Chunk
    // c + 32 lands warp_lanes / per rows after chunk c.
    auto const* src = reinterpret_cast<const word4*>(in) + w.lane;
    word4* dst = sm.input + w.lane / per * (per + 1) + w.lane % per;
ZS_UNROLL
    for (std::uint32_t i = 0; i < per; ++i) w.copy16(dst + i * (warp_lanes / per) * (per + 1), src + i * warp_lanes);
    return;
  }
  constexpr std::uint32_t value_words = sizeof(U) / 4;
  auto const* src = reinterpret_cast<const std::uint32_t*>(in);
  auto* dst = reinterpret_cast<std::uint32_t*>(sm.input);
  for (std::uint32_t e = w.lane; e < m * value_words; e += warp_lanes) {
    std::uint32_t const p = e / value_words;
    w.copy4(&dst[(p / lane_values) * (per + 1) * 4 + (p % lane_values) * value_words + e % value_words], &src[e]);
  }
}

/// A lane's 16 values of `type` from sm.input, as fetch_input put them (zero past m).
template <bool Narrow = false, class Warp, typename U>
ZS_WARP_FN void read_input(Warp& w, value_type type, std::uint32_t m, const encode_smem<U>& sm, U (&x)[lane_values]) {
  if constexpr (sizeof(U) == 4 && Narrow) {
    if (is_narrow_type(type)) {
      with_storage<U, Narrow>(type, [&]<typename S>() {
        if constexpr (sizeof(S) < sizeof(U)) {
          constexpr unsigned per = 16 / sizeof(S);  // values a chunk
          std::uint32_t const sign = narrow_sign(type);
ZS_UNROLL
          for (unsigned q = 0; q < sizeof(S); ++q) unpack_narrow<S>(sm.input[w.lane * sizeof(S) + q], sign, x + per * q);
        }
      });
      std::uint32_t const p0 = w.lane * lane_values;
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; ++k) {
        if (p0 + k >= m) x[k] = 0;
      }
      return;
    }
  }
  constexpr std::uint32_t per = encode_smem<U>::lane_chunks;
  constexpr std::uint32_t values_per_chunk = 16 / sizeof(U);
  const word4* row = sm.input + w.lane * (per + 1);
ZS_UNROLL
  for (unsigned q = 0; q < per; ++q) unpack_word4(row[q], x + values_per_chunk * q);
  std::uint32_t const p0 = w.lane * lane_values;
  if (p0 + lane_values <= m) return;
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    if (p0 + k >= m) x[k] = 0;
  }
}

/// words[scheme_index(kind)], without indexing the array with a run-time value (which would
/// put it in local memory).
ZS_HD inline std::uint32_t words_of(const std::uint32_t (&words)[coded_schemes], scheme kind) noexcept {
  switch (kind) {
    case scheme::for_: return words[0];
    case scheme::dfor: return words[1];
    case scheme::rfor: return words[2];
    case scheme::pfor: return words[3];
    case scheme::pdfor: return words[4];
    default: return words[5];
  }
}

/// Every how many segments of a frame of `segments` the sample pass analyses one: 64 spread
/// over a large frame, every 8th of a small one (and its first: a frame always has a sample).
ZS_HD constexpr std::uint64_t sample_stride(std::uint64_t segments) noexcept {
  return max_of<std::uint64_t>(8, (segments + 63) / 64);
}

/// The segments the sample pass analyses in a frame of `segments`: every sample_stride-th,
/// from the first.
ZS_HD constexpr std::uint64_t sample_count(std::uint64_t segments) noexcept {
  return ceil_div(segments, sample_stride(segments));
}

/// The scheme pass 1 writes a frame's payload in before the frame's sizes are all known: the
/// one with the fewest words over the sampled segments.
/// `Extended`: the codec's schemes (a.extended), known where the caller is compiled for them.
template <bool Extended>
ZS_HD inline scheme frame_guess(const encode_args& a, std::uint64_t f) {
  scheme_words const c = a.samples[f];
  scheme_words const e = Extended ? a.samples_ext[f] : scheme_words{};
  std::uint64_t const words[coded_schemes] = {c.w[0], c.w[1], c.w[2], e.w[0], e.w[1], e.w[2]};
  return fewest_words(words, Extended);
}

/// The sample pass over the samples [begin, end) of this width class (numbered through
/// a.sample_first): each sampled segment's sizes, summed per frame into samples. A warp goes
/// straight to its samples, rather than testing every segment for being one.
template <bool Narrow = false, bool Extended = false, class Warp, typename U>
ZS_WARP_FN void sample_range(Warp& w, const encode_args& a, std::uint64_t begin, std::uint64_t end,
                             encode_smem<U>& sm) {
  segment_cursor<U, Narrow> cursor;
  for (std::uint64_t i = begin; i < end; ++i) {
    std::size_t const f = kernels::frame_of_chunk(a.sample_first, a.num_frames, i);
    std::uint64_t const first = a.chunks[f];
    segment_place<U> const at =
        cursor.at(a, first + (i - a.sample_first[f]) * sample_stride(a.chunks[f + 1] - first));
    U x[lane_values];
    load_values<Narrow>(w, at.in, at.src.type, at.m, x);
    std::uint32_t words[coded_schemes];
    analyze<Extended>(w, x, at.m, flip_of<U>(at.src.type), sm, words);
    std::uint32_t const lane = w.lane;
    if (lane < schemes_per_words) {
      w.add(&a.samples[at.f].w[lane], words_of(words, coded_scheme(static_cast<int>(lane))));
    } else if (Extended && lane < coded_schemes) {
      w.add(&a.samples_ext[at.f].w[lane - schemes_per_words], words_of(words, coded_scheme(static_cast<int>(lane))));
    }
    w.sync();  // the next segment reuses the shared memory
  }
}

/// Writes the encoding in `kind` of the segment of m values (the analysis ran; n data words)
/// through `emit`, which takes word(q) for q < n, and `packed`: where the encoding was packed
/// into shared memory, `lead` words in (whole segments of 32-bit values in for or dfor), else
/// nullptr. Ends with the warp met.
template <bool Extended, class Warp, typename U, class Emit>
ZS_WARP_FN void with_encoding(Warp& w, const U (&x)[lane_values], std::uint32_t m, const lane_facts<U>& lf,
                              scheme kind, encode_smem<U>& sm, std::uint32_t lead, Emit emit) {
  if constexpr (sizeof(U) == 4) {
    bool const patched = Extended && is_patched(kind);
    if ((kind == scheme::for_ || kind == scheme::dfor || patched) && m == segment_values) {
      // (A frame's last segment, with fewer values, takes the general path below.)
      // Packed into shared memory first (sm.stage, free on this path): each lane's words are
      // scattered over the encoding, and one word a lane at a time to global memory would touch
      // several cache lines per store; emit writes consecutive words. A patched miniblock
      // takes at most its full width's words, so a pdfor segment at most 4 more than a dfor one.
      static_assert(sizeof(sm.stage) >= 4 * (3 + 1 + tile_blocks * (4 + miniblocks * 32)), "a pdfor segment's words");
      auto* packed = reinterpret_cast<std::uint32_t*>(sm.stage);
      if (patched) {
        pack_patched_lanes(w, x, lf, kind, sm.st, sm.patch, packed + lead);
      } else {
        pack_lanes(w, x, lf, kind, sm.st, packed + lead);
      }
      w.sync();
      emit([&](std::uint64_t q) { return packed[lead + q]; }, packed);
      w.sync();
      return;
    }
  }
  stage(w, x, lf, kind, sm);
  emit([&](std::uint64_t q) { return encoded_word<Extended>(sm, kind, static_cast<std::uint32_t>(q)); },
       static_cast<const std::uint32_t*>(nullptr));
  w.sync();
}

/// Where pass 1 keeps a warp's encodings: the slots of the warp's segments, [begin, end) x
/// slot_words, as one pool filled in order, so that a segment larger than its slot fits where
/// the warp's earlier segments took less than theirs.
struct slot_pool {
  std::uint64_t next, end;
};

/// Pass 1 over segment g (batch-wide) of m values (in x; `flip` maps their type's order to the
/// unsigned one): its sizes in all three schemes added to its scan block's, and its encoding in
/// the frame's guessed scheme (frame_guess) kept in the warp's pool where it fits, with
/// `running` its scan block's sizes so far (`running_ext`, those of pfor, pdfor and drfor, with
/// `Extended`). `closes`: the segment ends its scan block.
template <bool Extended, class Warp, typename U>
ZS_WARP_FN void analyze_segment(Warp& w, const encode_args& a, std::uint64_t g, std::uint32_t m, U flip,
                                const U (&x)[lane_values], scheme guess, bool closes, block_words& running,
                                block_words& running_ext, encode_smem<U>& sm, slot_pool& pool) {
  std::uint32_t words[coded_schemes];
  lane_facts<U> const lf = analyze<Extended>(w, x, m, flip, sm, words);
  std::uint32_t const n = words_of(words, guess);
  bool const kept = n <= pool.end - pool.next;
  if (w.lane == 0) {
    a.within[g] = running;
    if (closes) {
      a.block_sums[running.block] = {{running.w[0] + words[0], running.w[1] + words[1], running.w[2] + words[2]}};
    }
    if constexpr (Extended) {
      a.within_ext[g] = running_ext;
      if (closes) {
        a.block_sums_ext[running.block] = {
            {running_ext.w[0] + words[3], running_ext.w[1] + words[4], running_ext.w[2] + words[5]}};
      }
    }
    a.slot_at[g] = kept ? pool.next : no_slot;
    if (kept) {
      a.layouts[g] = block_layout(sm, guess);
    } else {
      *a.encode_again = 1;
    }
  }
  for (int i = 0; i < schemes_per_words; ++i) running.w[i] += words[i];
  if constexpr (Extended) {
    for (int i = 0; i < schemes_per_words; ++i) running_ext.w[i] += words[schemes_per_words + i];
  }
  if (kept) {
    // No gaps between a warp's encodings: pass 2 copies consecutive ones as one range. So an
    // encoding starts `lead` words into a 16-byte chunk of the pool; packed into shared memory
    // as far into one, its chunks after the first go out in one store each. The last chunk's
    // words past the encoding are left over in shared memory, and land in the warp's pool
    // (which ends on 16 bytes) where its next encoding will go.
    auto const lead = static_cast<std::uint32_t>(pool.next % 4);
    std::uint32_t* out = a.slots + pool.next;
    with_encoding<Extended>(w, x, m, lf, guess, sm, lead, [&](auto word, const std::uint32_t* packed) {
      if (packed == nullptr) {
        for (std::uint32_t q = w.lane; q < n; q += warp_lanes) out[q] = word(q);
        return;
      }
      std::uint32_t const head = lead == 0 ? 0 : 4 - lead;  // words in the first, shared chunk
      if (w.lane < head) out[w.lane] = word(w.lane);
      auto* chunks = reinterpret_cast<word4*>(out - lead);
      auto const* from = reinterpret_cast<const word4*>(packed);
      for (std::uint32_t c = (head == 0 ? 0 : 1) + w.lane; 4 * c < lead + n; c += warp_lanes) chunks[c] = from[c];
    });
    pool.next += n;
  }
  w.sync();  // the next segment reuses the shared memory
}

/// Pass 1 over the segments [begin, end) of this width class, one after the other; the next
/// segment's values are on their way while this one is analysed. [begin, end) is one scan
/// block (begin a multiple of a.block_segments, end the next or the class's end).
template <bool Narrow = false, bool Extended = false, class Warp, typename U>
ZS_WARP_FN void analyze_range(Warp& w, const encode_args& a, std::uint64_t begin, std::uint64_t end,
                              encode_smem<U>& sm) {
  if (begin >= end) return;
  constexpr std::uint64_t slot = slot_words(8 * sizeof(U));
  slot_pool pool{begin * slot, end * slot};
  segment_cursor<U, Narrow> cursor;
  segment_place<U> const first = cursor.at(a, begin);
  // The segment being analysed: its batch-wide index, values, value count and order.
  std::uint64_t g = first.g;
  const std::byte* in = first.in;
  std::uint32_t m = first.m, f = first.f;
  value_type type = first.src.type;
  U flip = flip_of<U>(type);
  scheme guess = frame_guess<Extended>(a, f);
  fetch_input<Narrow>(w, in, type, m, sm);
  w.commit();
  // The scan block's sizes so far (the same in every lane).
  block_words running{{0, 0, 0}, static_cast<std::uint32_t>(a.block_base + begin / a.block_segments)};
  block_words running_ext = running;
  // Most scan blocks lie inside one frame, in whole segments at a 16-byte boundary: then the
  // walk steps from segment to segment in place, without looking anything up.
  bool const uniform = end <= cursor.last && (end - cursor.first) * segment_values <= first.src.count &&
                       aligned16(first.in);
  std::size_t const step = segment_values * (Narrow ? value_width(type) : sizeof(U));  // a segment's bytes, while uniform
  // Counted in 32 bits (a batch has fewer than 2^32 segments): the loop's bounds stay cheap to
  // keep, or to compute again where registers run short.
  auto const count = static_cast<std::uint32_t>(end - begin);
  for (std::uint32_t i = 0; i < count; ++i) {
    bool const last = i + 1 == count;
    w.wait_copies(0);
    U x[lane_values];
    read_input<Narrow>(w, type, m, sm, x);
    w.sync();  // every lane has read: the buffer takes the next segment
    if (!last) {
      if (uniform) {
        fetch_input<Narrow>(w, in + step, type, segment_values, sm);
      } else {
        segment_place<U> const next = cursor.at(a, begin + i + 1);
        fetch_input<Narrow>(w, next.in, next.src.type, next.m, sm);
      }
    }
    w.commit();
    analyze_segment<Extended>(w, a, g, m, flip, x, guess, last, running, running_ext, sm, pool);
    if (uniform) {
      g += 1;
      in += step;
    } else if (!last) {
      // Looked up again rather than kept through the analysis, which needs the registers.
      segment_place<U> const next = cursor.at(a, begin + i + 1);
      if (next.f != f) {
        f = next.f;
        type = next.src.type;
        flip = flip_of<U>(type);
        guess = frame_guess<Extended>(a, f);
      }
      g = next.g;
      in = next.in;
      m = next.m;
    }
  }
}

/// Between the passes, one thread per frame: totals from the scan, the smallest scheme, the
/// header fields the payload encoder owns.
ZS_HD inline void choose_frame(const encode_args& a, std::uint64_t f) {
  encode_source const& src = a.sources[f];
  std::byte* frame = a.frames + a.frame_offsets[f];
  if (src.count == 0) {
    a.choice[f] = static_cast<std::uint8_t>(scheme::raw);
    store_scheme_fields(frame, scheme::raw, 0, 0);
    return;
  }
  std::uint64_t const first = a.seg_first[f];
  std::uint64_t const last = first + segment_count(src.count);
  std::uint64_t words[coded_schemes] = {};
  for (int i = 0; i < (a.extended ? coded_schemes : schemes_per_words); ++i) {
    words[i] = offset_of(a, last, i) - offset_of(a, first, i);
  }
  std::uint64_t const classic[3] = {words[0], words[1], words[2]};
  scheme const best = a.extended ? pick_scheme(src.count, src.raw_bytes(), words)
                                 : pick_scheme(src.count, src.raw_bytes(), classic);
  a.choice[f] = static_cast<std::uint8_t>(best);
  scheme const guess = a.extended ? frame_guess<true>(a, f) : frame_guess<false>(a, f);
  if (best != scheme::raw && best != guess) *a.encode_again = 1;
  if (best == scheme::raw) {
    store_scheme_fields(frame, scheme::raw, src.raw_bytes(), 0);
    return;
  }
  std::uint64_t const dw = words[scheme_index(best)];
  store_scheme_fields(frame, best, scheme_payload_bytes(best, src.count, dw), dw);
}

/// The payload word ranges a segment writes in its frame's scheme: its block starts and its
/// data words (raw: its values), and the payload's words in all.
struct segment_ranges {
  std::uint64_t starts_begin, starts_end;
  std::uint64_t data_begin, data_end;
  std::uint64_t total;
  std::uint64_t base;  // the segment's first data word inside the data section
};

template <bool Extended, typename U>
ZS_HD inline segment_ranges ranges_of(const encode_args& a, const segment_place<U>& s, scheme kind) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  segment_ranges r{};
  if (kind == scheme::raw) {
    std::uint64_t const v0 = s.local * segment_values;
    r.data_begin = v0 * rw;
    r.data_end = (v0 + s.m) * rw;
    r.total = s.src.count * rw;
    return r;
  }
  int const i = Extended ? scheme_index(kind) : static_cast<int>(kind) - 1;
  std::uint64_t const first = s.g - s.local;
  std::uint64_t const blocks = block_count(kind, s.src.count);
  std::uint64_t const last = first + segment_count(s.src.count);
  std::uint64_t const origin = offset_of<Extended>(a, first, i);
  r.base = offset_of<Extended>(a, s.g, i) - origin;
  std::uint64_t const per = (Extended ? is_run_scheme(kind) : kind == scheme::rfor) ? 1 : tile_blocks;
  r.starts_begin = s.local * per;
  r.starts_end = min_of(r.starts_begin + per, blocks);
  r.data_begin = blocks + r.base;
  r.data_end = blocks + offset_of<Extended>(a, s.g + 1, i) - origin;
  r.total = blocks + offset_of<Extended>(a, last, i) - origin;
  return r;
}

/// Writes a segment's block starts (its blocks' offsets in `layout` after its first data word
/// r.base) and returns this lane's sum of the checksum terms they own.
template <class Warp>
ZS_WARP_FN std::uint64_t emit_starts(Warp& w, std::uint32_t* payload, const segment_ranges& r, std::uint64_t layout) {
  return emit_range(w, payload, r.starts_begin, r.starts_end, r.total, [&](std::uint64_t q) {
    return static_cast<std::uint32_t>(r.base + layout_offset(layout, static_cast<std::uint32_t>(q)));
  });
}

/// Pass 2 for one segment pass 1 did not keep in its frame's scheme: analysed again from the
/// input and written in place. Returns this lane's sum of the checksum terms it owns.
template <bool Narrow = false, bool Extended = false, class Warp, typename U>
ZS_WARP_FN std::uint64_t repack_segment(Warp& w, const segment_place<U>& at, const segment_ranges& r, scheme kind,
                                        std::uint32_t* payload, encode_smem<U>& sm) {
  U x[lane_values];
  load_values<Narrow>(w, at.in, at.src.type, at.m, x);
  std::uint32_t words[coded_schemes];
  lane_facts<U> const lf = analyze<Extended>(w, x, at.m, flip_of<U>(at.src.type), sm, words);
  std::uint64_t sum = emit_starts(w, payload, r, block_layout(sm, kind));
  with_encoding<Extended>(w, x, at.m, lf, kind, sm, 0, [&](auto word, const std::uint32_t*) {
    sum += emit_range(w, payload, r.data_begin, r.data_end, r.total, word);
  });
  w.sync();  // the next segment reuses the shared memory
  return sum;
}

/// Whether pass 2 encodes some segment again: pass 1 could not keep one, or a frame chose
/// another scheme than its guess. Where none is, pass 2 copies every segment and adds every
/// checksum term between two of them, so the repack and the seam pass have nothing to do.
ZS_HD inline bool encodes_again(const encode_args& a) { return *a.encode_again != 0; }

/// Whether pass 2 copies segment g, of a frame that chose `kind` and guessed `guess`, rather
/// than encoding it again: its frame is raw, or pass 1 kept it in the frame's scheme.
ZS_HD inline bool copied(const encode_args& a, scheme kind, scheme guess, std::uint64_t g) {
  return kind == scheme::raw || (kind == guess && a.slot_at[g] != no_slot);
}

/// Whether a segment is of a narrow frame left raw: its payload is its narrow values, which
/// pass 2 leaves to narrow_raw_range (whole 64-bit payload words a segment, no seams).
template <bool Narrow, typename U>
ZS_HD inline bool narrow_raw(const segment_place<U>& at, scheme kind) {
  if constexpr (!Narrow) return false;
  return kind == scheme::raw && is_narrow_type(at.src.type);
}

/// The words pass 2 copies for a segment of a frame that chose `kind`: a raw frame's values, or
/// the encoding pass 1 kept; nullptr for a segment encoded again, and for a narrow raw frame's.
template <bool Narrow = false, bool Extended = false, typename U>
ZS_HD inline const std::uint32_t* source_of(const encode_args& a, const segment_place<U>& at, scheme kind) {
  if (narrow_raw<Narrow>(at, kind) || !copied(a, kind, frame_guess<Extended>(a, at.f), at.g)) return nullptr;
  return kind == scheme::raw ? reinterpret_cast<const std::uint32_t*>(at.in) : a.slots + a.slot_at[at.g];
}

/// source_of the first segment of the frame `cursor` is in. Its first word follows the frame's
/// block starts: pack_range adds the checksum term across them where this is not nullptr, and
/// seam_sum where it is.
template <bool Extended, typename U, bool Narrow>
ZS_HD inline const std::uint32_t* first_source_of(const encode_args& a, segment_cursor<U, Narrow>& cursor, scheme kind) {
  return source_of<false, Extended>(a, cursor.at(a, cursor.first), kind);
}

/// Pass 2's copy of one segment. One lane looks it up (its frame, scheme, source and ranges), so
/// that a warp waits on those loads once for 32 segments instead of once per segment.
struct pack_job {
  const std::uint32_t* src;   // source_of the segment
  const std::uint32_t* next;  // source_of the next segment where it is of the same frame, else nullptr
  // A frame's last segment (not raw): source_of the frame's first segment, whose first word
  // follows the block starts; nullptr where that segment is encoded again, or for the others.
  const std::uint32_t* frame_data;
  std::uint32_t* payload;     // its frame's payload
  segment_ranges r;
  std::uint64_t layout;       // block_layout of the kept encoding (not for raw frames)
  std::uint32_t f;
  scheme kind;
};
/// Bytes of a warp's pack jobs in shared memory: one per lane.
inline constexpr std::size_t pack_jobs_bytes = warp_lanes * sizeof(pack_job);
static_assert(pack_jobs_bytes % 16 == 0, "copy_staged's ring follows the jobs on 16 bytes");
/// Pass 2's shared memory a warp: its jobs, then copy_staged's ring.
inline constexpr std::size_t pack_warp_bytes = pack_jobs_bytes + staged_copy_bytes;

/// Block start q of the segments from `first` on (all of one frame), in a table of jobs.
template <bool Extended>
ZS_HD inline std::uint32_t block_start_of(const pack_job* first, std::uint64_t q) {
  std::uint32_t const per = (Extended ? is_run_scheme(first->kind) : first->kind == scheme::rfor) ? 1 : tile_blocks;
  pack_job const& j = first[q / per];
  return static_cast<std::uint32_t>(j.r.base + layout_offset(j.layout, static_cast<std::uint32_t>(q % per)));
}

/// Pass 2 over the segments [begin, end) of this width class that need no new encoding: those
/// of raw frames copy their values, those pass 1 kept in their frame's scheme their slot (through
/// `ring`, copy_staged). The others are left to repack_range, which needs more shared memory
/// than the job table `jobs` and the ring (pack_warp_bytes; this pass runs with less, for more
/// warps). Consecutive segments whose sources follow each other (a warp's encodings in pass 1's
/// pool, a raw frame's values) are copied as one range: few, long copies, which keep more loads
/// in flight than one copy per segment. A range's checksum terms include the one straddling its
/// end where the next segment is copied too (its first word is known: the start of its
/// source); seam_sum adds the others.
template <class Warp, typename U, bool Narrow = false, bool Extended = false>
ZS_WARP_FN void pack_range(Warp& w, const encode_args& a, std::uint64_t begin, std::uint64_t end, pack_job* jobs,
                           word4* ring, sum_carrier& carrier) {
  segment_cursor<U, Narrow> cursor;  // this lane's walk over its segments: base + lane
  for (std::uint64_t base = begin; base < end; base += warp_lanes) {
    std::uint64_t const s = base + w.lane;
    pack_job& j = jobs[w.lane];
    const std::uint32_t* src = nullptr;
    bool last_of_frame = true;
    if (s < end) {
      segment_place<U> const at = cursor.at(a, s);
      auto const kind = static_cast<scheme>(a.choice[at.f]);
      src = source_of<Narrow, Extended>(a, at, kind);
      last_of_frame = s + 1 >= cursor.last;
      if (src != nullptr) {
        j.frame_data = nullptr;
        if (last_of_frame && kind != scheme::raw) j.frame_data = first_source_of<Extended>(a, cursor, kind);
        j.src = src;
        j.payload = reinterpret_cast<std::uint32_t*>(a.frames + a.frame_offsets[at.f] + frame_header_bytes);
        j.r = ranges_of<Extended>(a, at, kind);
        j.layout = kind == scheme::raw ? 0 : a.layouts[at.g];
        j.f = at.f;
        j.kind = kind;
      }
    }
    // The next segment's source: the next lane's, or looked up where that lane has none.
    auto next = reinterpret_cast<const std::uint32_t*>(w.shfl_down(reinterpret_cast<std::uint64_t>(src), 1));
    bool const next_in_table = w.lane + 1 < warp_lanes && s + 1 < end;
    if (src != nullptr) {
      if (last_of_frame) {
        next = nullptr;
      } else if (!next_in_table) {
        segment_place<U> const after = segment_cursor<U, Narrow>{}.at(a, s + 1);
        next = source_of<Narrow, Extended>(a, after, static_cast<scheme>(a.choice[after.f]));
      }
      j.next = next;
    }
    bool const joins_next = src != nullptr && next_in_table && next != nullptr &&
                            next == src + (j.r.data_end - j.r.data_begin);
    std::uint32_t const joins = w.ballot(joins_next);
    std::uint32_t const firsts = w.ballot(src != nullptr) & ~(joins << 1);
    w.sync();  // the jobs are in shared memory
    for (std::uint32_t mask = firsts; mask != 0; mask &= mask - 1) {
      std::uint32_t const l0 = lowest_bit(mask);
      std::uint32_t const l1 = l0 + lowest_bit(~(joins >> l0));  // the last lane of the range
      pack_job const& first = jobs[l0];
      pack_job const& last = jobs[l1];
      std::uint64_t const A = first.r.data_begin;
      auto const n = static_cast<std::uint32_t>(last.r.data_end - A);
      std::uint64_t sum = first.kind == scheme::raw
                              ? copy_range<16>(w, first.src, n, first.payload + A, A, first.r.total, last.next)
                              : copy_staged(w, first.src, n, first.payload + A, A, first.r.total, last.next, ring);
      if (first.kind != scheme::raw) {
        std::uint64_t const S = first.r.starts_begin, E = last.r.starts_end;
        sum += emit_range(w, first.payload, S, E, first.r.total,
                          [&](std::uint64_t q) { return block_start_of<Extended>(&first, q); });
        // The word after E where E is odd: where the next segment is of this frame, its block
        // start, its data's start (only rfor, one start a segment, ends a segment's starts on an
        // odd word); after the frame's last block start, the first data word.
        if (w.lane == 0 && E % 2 == 1) {
          bool const inside = last.r.data_end < last.r.total;
          if (inside || last.frame_data != nullptr) {
            auto const after = inside ? static_cast<std::uint32_t>(last.r.data_end - (last.r.data_begin - last.r.base))
                                      : *last.frame_data;
            sum += hash::term((E - 1) / 2, block_start_of<Extended>(&first, E - 1 - S) | (std::uint64_t{after} << 32));
          }
        }
      }
      carrier.add(w, a.sums, first.f, sum);
    }
    w.sync();  // the table takes the next segments
  }
}

/// Pass 2 for the segments [begin, end) that pack_range left: of frames that chose another
/// scheme than their guess, or that their warp's pool could not hold in pass 1.
template <bool Narrow = false, bool Extended = false, class Warp, typename U>
ZS_WARP_FN void repack_range(Warp& w, const encode_args& a, std::uint64_t begin, std::uint64_t end,
                             encode_smem<U>& sm, sum_carrier& carrier) {
  if (!encodes_again(a)) return;  // the usual case: every guess right, every encoding kept
  segment_cursor<U, Narrow> cursor, probe;  // probe: this lane's walk over the segments it tests
  auto const needed = [&](std::uint64_t s) {
    segment_place<U> const at = probe.at(a, s);
    return !copied(a, static_cast<scheme>(a.choice[at.f]), frame_guess<Extended>(a, at.f), at.g);
  };
  for_each_picked(w, begin, end, needed, [&](std::uint64_t s) {
    segment_place<U> const at = cursor.at(a, s);
    auto const kind = static_cast<scheme>(a.choice[at.f]);
    auto* payload = reinterpret_cast<std::uint32_t*>(a.frames + a.frame_offsets[at.f] + frame_header_bytes);
    carrier.add(w, a.sums, at.f, repack_segment<Narrow, Extended>(w, at, ranges_of<Extended>(a, at, kind), kind, payload, sm));
  });
}

/// After pass 2, one thread per segment: the terms that straddle the ends of its ranges which
/// pass 2 left (pack_range adds those between two copied segments of a frame, after a copied
/// segment's block starts inside its frame, and after a frame's block starts where its first
/// and last segments are copied). Returns the segment's frame and the sum.
template <typename U, bool Narrow = false, bool Extended = false>
ZS_HD inline std::uint64_t seam_sum(const encode_args& a, std::uint64_t chunk, std::uint32_t& frame) {
  segment_cursor<U, Narrow> cursor;
  segment_place<U> const s = cursor.at(a, chunk);
  frame = s.f;
  auto const kind = static_cast<scheme>(a.choice[s.f]);
  if (narrow_raw<Narrow>(s, kind)) return 0;  // narrow_raw_range adds every term
  bool const last_of_frame = chunk + 1 >= cursor.last;
  bool const copy = source_of<Narrow, Extended>(a, s, kind) != nullptr;
  bool const next_copy = !last_of_frame && source_of<Narrow, Extended>(a, cursor.at(a, chunk + 1), kind) != nullptr;
  if (copy && next_copy) return 0;  // the common case, known before the ranges are looked up
  auto const* payload = reinterpret_cast<const std::uint32_t*>(a.frames + a.frame_offsets[s.f] + frame_header_bytes);
  segment_ranges const r = ranges_of<Extended>(a, s, kind);
  std::uint64_t sum = seam_term(payload, r.data_begin, r.data_end, r.total);
  if (kind == scheme::raw) return sum;
  bool const starts_added = copy && (!last_of_frame || first_source_of<Extended>(a, cursor, kind) != nullptr);
  if (!starts_added) sum += seam_term(payload, r.starts_begin, r.starts_end, r.total);
  return sum;
}

/// The 64-bit payload word `q` of a narrow raw frame whose payload is the `total` bytes at
/// `values`, read from the bytes [8 q, 8 q + 8) it holds (zero past total), and stored at `word`
/// where `store`: whole where the payload holds all 8 bytes, else byte by byte, so that nothing
/// past the payload is written. `values` may sit at any byte.
ZS_HD inline std::uint64_t narrow_raw_word(const std::byte* values, std::uint64_t total, std::uint64_t q) noexcept {
  std::uint64_t const at = 8 * q;
  if (at + 8 <= total && aligned8(values + at)) return *reinterpret_cast<const std::uint64_t*>(values + at);
  std::uint64_t word = 0;
  for (std::uint64_t k = 0; k < 8 && at + k < total; ++k) word |= std::uint64_t{static_cast<std::uint8_t>(values[at + k])} << (8 * k);
  return word;
}
ZS_HD inline void store_raw_word(std::byte* dst, std::uint64_t total, std::uint64_t q, std::uint64_t word) noexcept {
  std::uint64_t const at = 8 * q;
  if (at + 8 <= total && aligned8(dst + at)) {
    *reinterpret_cast<std::uint64_t*>(dst + at) = word;
    return;
  }
  for (std::uint64_t k = 0; k < 8 && at + k < total; ++k) dst[at + k] = static_cast<std::byte>(word >> (8 * k));
}

/// Pass 2 for the segments [begin, end) of the 32-bit class that are of narrow frames left raw
/// (the others are pack_range's and repack_range's): each segment's narrow values copied into
/// the payload, a 64-bit payload word a lane at a time, with the checksum terms of those
/// words. A segment's values are 512 or 1024 bytes, so its payload words are whole and its
/// own: no term straddles two segments.
template <class Warp>
ZS_WARP_FN void narrow_raw_range(Warp& w, const encode_args& a, std::uint64_t begin, std::uint64_t end,
                                 sum_carrier& carrier) {
  segment_cursor<std::uint32_t, true> cursor;
  for (std::uint64_t g = begin; g < end; ++g) {
    segment_place<std::uint32_t> const at = cursor.at(a, g);
    if (!narrow_raw<true>(at, static_cast<scheme>(a.choice[at.f]))) continue;
    std::uint64_t const width = value_width(at.src.type);
    std::uint64_t const total = at.src.count * width;  // the payload's bytes
    std::uint64_t const first = at.local * segment_values * width;
    const std::byte* values = at.in - first;  // the frame's first value
    std::byte* payload = a.frames + a.frame_offsets[at.f] + frame_header_bytes;
    std::uint64_t const q_end = (first + at.m * width + 7) / 8;
    std::uint64_t sum = 0;
    for (std::uint64_t q = first / 8 + w.lane; q < q_end; q += warp_lanes) {
      std::uint64_t const word = narrow_raw_word(values, total, q);
      store_raw_word(payload, total, q, word);
      sum += hash::term(q, word);
    }
    carrier.add(w, a.sums, at.f, sum);
  }
}

// --- decoding --------------------------------------------------------------------------------

struct decode_args {
  const std::byte* frames;
  const std::uint64_t* frame_offsets;
  const decode_target* targets;
  frame_status* status;         // per frame, written by check_frame
  std::uint64_t num_frames;
  frame_layout* layouts;         // per frame, written by check_frame
  const std::uint64_t* tiles;    // tile map (work_map.hpp) of this width class
  std::uint32_t tile_segments;   // segments per tile: 1, 2 or 4
  std::uint64_t* sums;           // per frame: checksum terms (zeroed by the caller)
  std::uint32_t accepted_codecs; // codec_bit of each codec id the frames may carry
};

/// Frame f's header against its target, then the format's frame-level rules (one thread per
/// frame): writes its status, and its layout for the decode warps.
ZS_HD inline void check_frame(const decode_args& a, std::uint64_t f) {
  decode_target const& t = a.targets[f];
  a.status[f] = validate_header(a.frames + a.frame_offsets[f], a.frame_offsets[f + 1] - a.frame_offsets[f],
                                {a.accepted_codecs, t.type, t.count, t.raw_bytes()});
  if (a.status[f] != frame_status::ok) return;
  frame_layout layout;
  frame_status const s = read_layout(load_header(a.frames + a.frame_offsets[f]), layout);
  a.layouts[f] = layout;
  if (s != frame_status::ok) a.status[f] = s;
}

inline constexpr std::uint32_t max_tile_segments = 4;

/// The frame of the tiles a decode warp is on. It lives in the warp's shared memory, so that
/// the walk over a frame's tiles costs the warp no registers; enter_frame writes it once per
/// frame.
struct decode_frame {
  frame_layout layout;
  const std::uint32_t* payload;
  std::uint64_t f;
  std::uint64_t first, last;  // the frame's tiles
  std::uint32_t ok;           // the frame's status was ok when the warp entered it
  value_type type;            // the frame's (and its target's) value type
  std::uint8_t pad8[3];
  std::uint32_t pad[2];
};
inline constexpr std::uint32_t decode_frame_words = sizeof(decode_frame) / 4;
static_assert(decode_frame_words % 4 == 0, "the buffers after the frame start on 16 bytes");

/// A for, dfor or rfor tile as the warp sees it. It lives in shared memory (a buffer's header),
/// so that the tile arriving while another is decoded costs the warp no registers. Block starts
/// and data words fit 32 bits (read_layout refuses larger data sections).
struct tile_job {
  std::uint64_t s0;       // first segment
  std::uint32_t g;        // segments
  std::uint32_t values;
  std::uint32_t starts;   // block starts in the tile
  std::uint32_t w0, w1;   // its data words
  std::uint32_t fits;     // w0 <= w1 <= data words, and the words fit the region alone
  std::uint32_t lead;     // region words before data word w0 (its copy starts on 16 bytes)
  std::uint32_t at, end;  // its region words [at, end): the copy, then the guard words
};

/// Words of a decode warp's tile region, where the tile being decoded and the next one arriving
/// share room, for tiles of g segments: 1.6 times the largest segment for g = 1, 2 times for
/// g = 2, 2.55 times for g = 4; a multiple of 4. Two tiles of four segments of 32-bit values
/// share it when the data compresses 2.45x or better (etopo5 3.7x, ncbi 14x, geoip 2.5x). A
/// tile too large to share waits for the region to be free, which costs the overlap of its copy
/// with the decoding before it. One region of this size instead of two buffers of whole tiles
/// (1.6 largest segments each for g = 4) leaves room in shared memory for 24 warps a SM instead
/// of 20 (32-bit values, four segments a tile), the most the decoder's 80 registers allow.
ZS_HD constexpr std::uint32_t region_words(std::uint32_t width_bits, std::uint32_t g) noexcept {
  std::uint32_t const most = max_segment_words(width_bits);
  return (g == 1 ? most * 8 / 5 : (g == 2 ? most * 2 : most * 51 / 20)) / 4 * 4;
}
/// Shared memory words a tile takes besides its data words, at most: up to 3 before them (the
/// copy goes in 16-byte chunks of the payload), the word after them (the high half of a
/// checksum term they end in) and 4 guard words for the fixed read window.
inline constexpr std::uint32_t tile_overhead_words = 8;
/// The most data words of a tile of g segments decoded whole (alone in the region); larger
/// tiles are decoded in parts (start_tile, decode_range). A valid segment always fits.
ZS_HD constexpr std::uint32_t whole_tile_words(std::uint32_t width_bits, std::uint32_t g) noexcept {
  return region_words(width_bits, g) - tile_overhead_words;
}
static_assert(whole_tile_words(32, 1) >= max_segment_words(32) && whole_tile_words(64, 1) >= max_segment_words(64));
inline constexpr std::uint32_t job_words = sizeof(tile_job) / 4;
/// A buffer's block starts: one per block of a tile, and the one after.
inline constexpr std::uint32_t starts_words = tile_blocks * max_tile_segments + 1;
/// Words of a buffer header (its job, then its block starts): an even number, so that the
/// second header's job starts on 8 bytes.
inline constexpr std::uint32_t header_words = (job_words + starts_words + 1) / 2 * 2;
/// Words of the staging area where a decode warp regroups a segment's values for its stores,
/// which also holds an rfor segment's run-start marks (512 bytes) before: 32 lanes x 17 words.
inline constexpr std::uint32_t stage_words = warp_lanes * (lane_values + 1);
/// Where a decode warp's tile region starts in its shared memory: after its frame
/// (decode_frame) and two buffer headers (the tile being decoded, and the next one arriving),
/// on 16 bytes.
inline constexpr std::uint32_t region_offset = (decode_frame_words + 2 * header_words + 3) / 4 * 4;
/// Words of a decode warp's shared memory: frame, headers, tile region, then the staging area.
ZS_HD constexpr std::uint32_t decode_warp_words(std::uint32_t width_bits, std::uint32_t g) noexcept {
  return region_offset + region_words(width_bits, g) + stage_words;
}
static_assert(decode_warp_words(32, 4) * 4 <= 9216, "32-bit tiles of four: 24 warps in 228 KiB of shared memory");

/// One decode buffer in a warp's shared memory: a header, and the region its tile lies in.
struct decode_buffer {
  tile_job* job;
  std::uint32_t* starts;
  std::uint32_t* region;
  ZS_HD decode_buffer(std::uint32_t* header, std::uint32_t* tile_region) noexcept
      : job(reinterpret_cast<tile_job*>(header)), starts(header + job_words), region(tile_region) {}
};

/// Enters the frame of tile t: one lane reads its status for all (another warp may refuse the
/// frame meanwhile), its layout and payload.
template <class Warp>
ZS_WARP_FN void enter_frame(Warp& w, const decode_args& a, decode_frame& fr, std::uint64_t t) {
  std::uint64_t const f = kernels::frame_of_chunk(a.tiles, a.num_frames, t);
  auto const status = static_cast<std::uint32_t>(w.load_status(a.status + f));
  bool const ok = w.shfl(status, 0) == static_cast<std::uint32_t>(frame_status::ok);
  w.sync();  // every lane is done with the frame before
  if (w.lane == 0) {
    fr.f = f;
    fr.first = a.tiles[f];
    fr.last = a.tiles[f + 1];
    fr.ok = ok;
    fr.type = a.targets[f].type;
    if (ok) fr.layout = a.layouts[f];
    fr.payload = reinterpret_cast<const std::uint32_t*>(a.frames + a.frame_offsets[f] + frame_header_bytes);
  }
  w.sync();
}

/// Where a segment starts, from the start of its first block; UINT32_MAX where a dfor or pdfor block
/// start leaves no room for the tile's first value.
ZS_HD constexpr std::uint32_t segment_start_from(const frame_layout& L, std::uint32_t block_start) noexcept {
  if (!is_delta_tiled(L.kind)) return block_start;
  std::uint32_t const rw = reference_words(L.width_bits);
  return block_start < rw ? ~std::uint32_t{0} : block_start - rw;
}

/// Tile t of the warp's frame (t inside it): its segments and values; false for a tile past
/// the frame's last segment.
ZS_HD inline bool job_of(const decode_args& a, const decode_frame& fr, std::uint64_t t, tile_job& j) noexcept {
  std::uint64_t const count = fr.layout.count;
  std::uint64_t const nseg = segment_count(count);
  j.s0 = (t - fr.first) * a.tile_segments;
  if (j.s0 >= nseg) return false;
  j.g = static_cast<std::uint32_t>(min_of<std::uint64_t>(a.tile_segments, nseg - j.s0));
  j.values = static_cast<std::uint32_t>(min_of<std::uint64_t>(std::uint64_t{j.g} * segment_values, count - j.s0 * segment_values));
  return true;
}

/// Reads a for, dfor or rfor tile's block starts into the buffer's header and starts copying its
/// data words into the region, followed by zero guard words: beside the tile being decoded
/// (region words [busy_begin, busy_end); an empty range when there is none) where there is
/// room, else not at all. Copies nothing when the starts do not bound a tile whose words fit
/// `capacity`. `j` has s0, g and values. A tile of several segments that does not fit is cut
/// to its first half (again, down to one segment), and the job says how many segments were
/// taken. Returns whether the tile is under way (a group of copies committed); it is not when
/// it fits but has no room beside the other, and then the caller starts it again once the
/// region is free.
template <class Warp, typename U>
ZS_WARP_FN bool start_tile(Warp& w, const decode_frame& fr, tile_job j, const decode_buffer& buf,
                           std::uint32_t capacity, std::uint32_t region_size, std::uint32_t busy_begin,
                           std::uint32_t busy_end) {
  frame_layout const& L = fr.layout;
  const std::uint32_t* payload = fr.payload;
  std::uint64_t const per = is_run_scheme(L.kind) ? 1 : tile_blocks;
  std::uint64_t const sb = j.s0 * per;
  std::uint32_t start = 0;  // lane i < starts: block i's start; lane `starts`: the next start
  for (;;) {
    j.starts = static_cast<std::uint32_t>(min_of<std::uint64_t>(j.g * per, L.blocks - sb));
    if (w.lane < j.starts) {
      start = payload[sb + w.lane];
    } else if (w.lane == j.starts) {
      start = sb + j.starts < L.blocks ? payload[sb + j.starts] : static_cast<std::uint32_t>(L.data_words);
    }
    bool const last_tile = j.s0 + j.g >= segment_count(L.count);
    j.w0 = segment_start_from(L, w.shfl(start, 0));
    j.w1 = last_tile ? static_cast<std::uint32_t>(L.data_words) : segment_start_from(L, w.shfl(start, j.starts));
    bool const in_payload = j.w0 <= j.w1 && j.w1 <= L.data_words;
    j.fits = in_payload && j.w1 - j.w0 <= capacity;
    if (j.fits || !in_payload || j.g == 1) break;
    // More words than the region holds: this round takes the first half, and decode_range
    // fetches the rest in later rounds (a valid segment always fits).
    j.g /= 2;
    j.values = min_of(j.g * segment_values, j.values);
  }
  j.lead = 0;
  j.at = j.end = 0;
  if (j.fits) {
    // Payload words [C, E) in 16-byte chunks (payloads start on 16 bytes): C rounds the tile's
    // first word down to 4, and E takes the word after the tile where the tile ends inside a
    // checksum term; whole chunks only up to the payload's end, single words past them.
    std::uint64_t const T = L.blocks + L.data_words;
    std::uint64_t const P0 = L.blocks + j.w0, P1 = L.blocks + j.w1;
    std::uint64_t const C = P0 & ~std::uint64_t{3};
    auto const n = static_cast<std::uint32_t>(min_of<std::uint64_t>(P1 + (P1 & 1), T) - C);
    std::uint32_t const need = n + 4;  // at most capacity + tile_overhead_words
    if (busy_begin < busy_end) {
      std::uint32_t const after = (busy_end + 3) / 4 * 4;
      if (after + need <= region_size) {
        j.at = after;
      } else if (need > busy_begin) {
        return false;
      }
    }
    j.end = j.at + need;
    j.lead = static_cast<std::uint32_t>(P0 - C);
    std::uint32_t* tile = buf.region + j.at;
    auto const* chunks = reinterpret_cast<const word4*>(payload + C);
    auto* dst = reinterpret_cast<word4*>(tile);
    for (std::uint32_t c = w.lane; c < n / 4; c += warp_lanes) w.copy16(&dst[c], &chunks[c]);
    std::uint32_t const q = n / 4 * 4 + w.lane;
    if (q < n) w.copy4(&tile[q], &payload[C + q]);
    if (w.lane < 4) tile[n + w.lane] = 0;
  }
  if (w.lane <= j.starts) buf.starts[w.lane] = start;
  if (w.lane == 0) *buf.job = j;
  w.commit();
  return true;
}

/// The field of `bits` bits (at most 32) at bit `pos` of `p`, through a two-word window.
ZS_HD inline std::uint32_t field32(const std::uint32_t* p, std::uint32_t pos, std::uint32_t mask) noexcept {
  const std::uint32_t* q = p + (pos >> 5);
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(q[0], q[1], pos) & mask;
#else
  return static_cast<std::uint32_t>(((std::uint64_t{q[1]} << 32) | q[0]) >> (pos & 31)) & mask;
#endif
}

/// dfor and pdfor: the lanes' 16 differences each (lane 0's first replaced by the tile's first
/// value) summed into values, a lane's run then a scan over the lanes.
template <class Warp, typename U>
ZS_WARP_FN void sum_differences(Warp& w, U first, U (&x)[lane_values]) {
  if (w.lane == 0) x[0] = first;
  U run = 0;
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) {
    run = static_cast<U>(run + x[k]);
    x[k] = run;
  }
  U const before = static_cast<U>(inclusive_sum(w, run) - run);
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) x[k] = static_cast<U>(x[k] + before);
}

/// The lane's 16 fields of `bits` bits from tile bit `bit` on into x; 0 where the lane holds no
/// values (!active). Every lane of the warp calls it: where no lane's width exceeds 16, one
/// 32-bit window holds two fields, half the reads.
template <class Warp, typename U>
ZS_WARP_FN void read_lane_fields(Warp& w, const std::uint32_t* tile, std::uint32_t bit, std::uint32_t bits, bool active,
                                 U (&x)[lane_values]) {
  bool const paired = sizeof(U) == 4 && !w.any(bits > 16);
  if (!active) {
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) x[k] = 0;
  } else if constexpr (sizeof(U) == 4) {
    std::uint32_t const mask = static_cast<std::uint32_t>(low_mask(bits));
    if (paired) {
      std::uint32_t const mask2 = static_cast<std::uint32_t>(low_mask(2 * bits));
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; k += 2) {
        std::uint32_t const two = field32(tile, bit + k * bits, mask2);
        x[k] = two & mask;
        x[k + 1] = two >> bits;
      }
    } else {
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; ++k) x[k] = field32(tile, bit + k * bits, mask);
    }
  } else {
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) x[k] = read_field_window<U>(tile, bit + k * bits, bits);
  }
}

/// Decodes the for or dfor segment whose blocks start at tile words block_off (lane 8 i + r
/// for block i) into out, as values stored as S of `type` (store_values); `first` is the dfor
/// first value. False, writing nothing, where a value does not fit a narrow type.
template <typename S, class Warp, typename U>
ZS_WARP_FN bool decode_for_segment(Warp& w, bool delta, const std::uint32_t* tile, std::uint32_t block_off,
                                   U first, std::uint32_t m, std::byte* out, value_type type, std::uint32_t* stage) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  std::uint32_t const lane = w.lane;
  std::uint32_t const p0 = lane * lane_values;
  U x[lane_values];
  U ref = 0;
  std::uint32_t bits = 0, bit = 0;
  if (p0 < m) {
    std::uint32_t const off = block_off;
    ref = load_reference<U>(tile + off);
    std::uint32_t const widths = tile[off + rw];
    std::uint32_t const j = (lane / 2) % miniblocks;
    bits = width_of(widths, j);
    // A tile has fewer than 2^16 words, so bit positions fit 32 bits.
    bit = (off + rw + 1 + widths_before(widths, j)) * 32 + (lane % 2) * lane_values * bits;
  }
  read_lane_fields(w, tile, bit, bits, p0 < m, x);
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) x[k] = static_cast<U>(x[k] + ref);
  if (delta) sum_differences(w, first, x);
  return store_values<S>(w, out, type, m, x, stage);
}

/// Decodes the pfor or pdfor (`delta`) segment whose blocks start at tile words block_off (lane
/// 8 i + r for block i) into out, as decode_for_segment does for, dfor: each lane reads its 16
/// low fields, puts back the high bits of those that are exceptions (its miniblock's bitmap
/// says which, and their rank in it where their high bits lie) and shifts them. False,
/// writing nothing, where a value does not fit a narrow type.
template <typename S, class Warp, typename U>
ZS_WARP_FN ZS_OWN_FRAME bool decode_patched_segment(Warp& w, bool delta, const std::uint32_t* tile, std::uint32_t block_off,
                                       U first, std::uint32_t m, std::byte* out, value_type type, std::uint32_t* stage) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  std::uint32_t const lane = w.lane;
  std::uint32_t const p0 = lane * lane_values;
  std::uint32_t const off = block_off;
  std::uint32_t const j = (lane / 2) % miniblocks, half = lane % 2;
  U ref = 0;
  std::uint32_t low = 0, full = 0, shifts = 0, bits = 0, bit = 0;
  if (p0 < m) {
    ref = load_reference<U>(tile + off);
    low = tile[off + rw];
    full = tile[off + rw + 1];
    shifts = tile[off + rw + 2];
    bits = width_of(low, j);
    // A tile has fewer than 2^16 words, so bit positions fit 32 bits.
    bit = (off + patched_head_words(8 * sizeof(U)) + widths_before(low, j)) * 32 + half * lane_values * bits;
  }
  U x[lane_values];
  read_lane_fields(w, tile, bit, bits, p0 < m, x);
  std::uint32_t const high = width_of(full, j) - bits;
  if (high != 0) {
    // The bitmaps follow the low fields, one per patched miniblock; then the high-bits
    // streams in the same order.
    std::uint32_t const bitmaps = off + patched_head_words(8 * sizeof(U)) + widths_sum(low);
    std::uint32_t patched = 0, rank = 0;
    for (std::uint32_t i = 0; i < miniblocks; ++i) {
      bool const is = width_of(full, i) > width_of(low, i);
      rank += is && i < j ? 1U : 0U;
      patched += is ? 1U : 0U;
    }
    std::uint32_t highs = bitmaps + patched;
    for (std::uint32_t i = 0, r = 0; i < j; ++i) {
      std::uint32_t const h = width_of(full, i) - width_of(low, i);
      if (h == 0) continue;
      highs += static_cast<std::uint32_t>(field_words(bit_count(tile[bitmaps + r++]), h));
    }
    std::uint32_t const bitmap = tile[bitmaps + rank];
    std::uint32_t const mine = half == 0 ? bitmap & 0xffffU : bitmap >> 16;
    // The lane's exceptions follow the first half's in the stream.
    std::uint32_t at = highs * 32 + (half == 0 ? 0U : bit_count(bitmap & 0xffffU)) * high;
    if constexpr (sizeof(U) == 4) {
      // Patched in the lane's row of the stage (17 words apart: no bank conflicts), one step
      // per exception, where a step per value costs the same whether it patches or not.
      if (mine != 0) {
        std::uint32_t* row = stage + lane * (lane_values + 1);
ZS_UNROLL
        for (unsigned k = 0; k < lane_values; ++k) row[k] = x[k];
        std::uint32_t const high_mask = static_cast<std::uint32_t>(low_mask(high));
        for (std::uint32_t rest = mine; rest != 0; rest &= rest - 1) {
          row[lowest_bit(rest)] |= field32(tile, at, high_mask) << bits;
          at += high;
        }
ZS_UNROLL
        for (unsigned k = 0; k < lane_values; ++k) x[k] = row[k];
      }
    } else {
      // Eight KB of values do not fit the stage: a predicated read a value, no branch.
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; ++k) {
        bool const is = (mine >> k & 1U) != 0;
        U h = 0;
        if (is) h = read_field_window<U>(tile, at, high);
        x[k] = static_cast<U>(x[k] | static_cast<U>(h << bits));
        at += is ? high : 0U;
      }
    }
  }
  if constexpr (sizeof(U) == 4) w.sync();  // the stage's rows are read before the stores reuse it
  std::uint32_t const shift = width_of(shifts, j);
ZS_UNROLL
  for (unsigned k = 0; k < lane_values; ++k) x[k] = static_cast<U>(ref + static_cast<U>(x[k] << shift));
  if (delta) sum_differences(w, first, x);
  return store_values<S>(w, out, type, m, x, stage);
}

/// Decodes the rfor segment (drfor with `Delta`) at tile word `off` (m values) into out, as values
/// of `type`; false, writing nothing, when its run lengths do not cover exactly m values (drfor:
/// leave none for its last run) or a value does not fit a narrow type.
///
/// Its cost does not grow with the runs a lane's values cross: lane l reads the lengths of runs
/// [c l, c l + c), c = ceil(runs / 32), so a segment of few long runs takes one length a lane;
/// the runs' starts are marked in a byte a position, and a position's run is the count of marks
/// up to it less one, which a multiply sums four bytes at a time; each value is then one field
/// read from the tile, or a shuffle where the segment has 32 runs or fewer.
template <class Warp, typename U, typename S, bool Delta = false>
ZS_WARP_FN bool decode_rfor_segment(Warp& w, const std::uint32_t* tile, std::uint32_t* stage, std::uint32_t off,
                                    std::uint32_t m, std::byte* out, value_type type) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  std::uint32_t const lane = w.lane;
  rfor_header const h = Delta ? unpack_drfor_header(tile[off]) : unpack_rfor_header(tile[off]);
  U const ref = load_reference<U>(tile + off + 1);  // drfor: the first run value
  // A tile has fewer than 2^16 words, so bit positions fit 32 bits.
  std::uint32_t const value_bit = (off + (Delta ? drfor_head_words(h, 8 * sizeof(U)) : 1 + rw)) * 32;
  std::uint32_t const length_bit =
      (off + static_cast<std::uint32_t>(run_lengths_at(Delta ? scheme::drfor : scheme::rfor, h, 8 * sizeof(U)))) * 32;
  std::uint32_t const length_mask = static_cast<std::uint32_t>(low_mask(h.length_bits));
  auto const length = [&](std::uint32_t r) {
    return h.min_length + field32(tile, length_bit + r * h.length_bits, length_mask);
  };
  std::uint32_t const per = (h.runs + warp_lanes - 1) / warp_lanes;
  std::uint32_t const r0 = min_of(lane * per, h.runs), r1 = min_of(r0 + per, h.runs);
  // drfor's last run has no stored length: it takes the positions the others leave.
  std::uint32_t const lane_stored = Delta ? min_of(r1, h.runs - 1) : r1;
  std::uint32_t total = 0;
  for (std::uint32_t r = r0; r < lane_stored; ++r) total += length(r);
  std::uint32_t const through = inclusive_sum(w, total);
  std::uint32_t const covered = w.shfl(through, warp_lanes - 1);
  if (Delta ? covered >= m : covered != m) return false;

  // Byte p of the marks is 1 where a run starts at position p (every run is at least 1 long, so
  // the starts differ and lie below m); lane l's 16 bytes are 16-byte chunk l.
  auto* marks = reinterpret_cast<word4*>(stage);
  marks[lane] = word4{0, 0, 0, 0};
  w.sync();
  std::uint32_t start = through - total;
  // The lengths are read again rather than kept: a lane's share of runs is known at run time
  // only, and an array indexed by it would live in local memory.
  // The last step's length goes unused: for drfor's last run it is a field past the stream, still
  // inside the tile (which ends in two zero words).
  for (std::uint32_t r = r0; r < r1; ++r) {
    reinterpret_cast<std::uint8_t*>(stage)[start] = 1;
    start += length(r);
  }
  w.sync();
  word4 const my_marks = marks[lane];
  // Times 0x01010101, a word of 0/1 bytes holds in byte b the count of its bytes 0..b.
  std::uint32_t counts[4] = {my_marks.x * 0x01010101U, my_marks.y * 0x01010101U,
                             my_marks.z * 0x01010101U, my_marks.w * 0x01010101U};
  std::uint32_t before = 0;
ZS_UNROLL
  for (unsigned q = 0; q < 4; ++q) {
    std::uint32_t const in_word = counts[q] >> 24;
    counts[q] += before * 0x01010101U;  // no byte passes 16
    before += in_word;
  }
  std::uint32_t const runs_before = inclusive_sum(w, before) - before;
  std::uint32_t const bits = h.value_bits;
  auto const field = [&](std::uint32_t i) -> U {
    std::uint32_t const bit = value_bit + i * bits;
    if constexpr (sizeof(U) == 4) {
      return field32(tile, bit, static_cast<std::uint32_t>(low_mask(bits)));
    } else {
      return read_field_window<U>(tile, bit, bits);
    }
  };
  auto const value = [&](std::uint32_t run) { return static_cast<U>(ref + field(run)); };
  auto const run_of = [&](unsigned k) { return runs_before + ((counts[k / 4] >> (8 * (k % 4))) & 0xffU) - 1; };
  U x[lane_values];
  if constexpr (Delta) {
    // drfor: run r's value is the first plus the steps of runs 1 .. r, a step being the
    // reference plus field r - 1. Lane l sums the steps of its runs [c l, c l + c) (run 0 has
    // none), and a scan gives each lane the value before its first run.
    U const step_ref = h.step_in_header ? static_cast<U>(h.step)
                       : h.runs > 1     ? load_reference<U>(tile + off + 1 + rw)
                                        : U{0};  // one run: none stored
    auto const step = [&](std::uint32_t r) -> U { return r == 0 ? U{0} : static_cast<U>(step_ref + field(r - 1)); };
    U steps = 0;
    for (std::uint32_t r = r0; r < r1; ++r) steps = static_cast<U>(steps + step(r));
    U const steps_through = inclusive_sum(w, steps);
    if (h.runs <= warp_lanes) {
      U const mine = static_cast<U>(ref + steps_through);  // lane r: run r's value
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; ++k) x[k] = w.shfl(mine, run_of(k));
    } else {
      // A lane walks from the start of the lane that holds its first position's run, then from
      // run to run over its positions: at most c - 1 + 15 steps.
      U const before_lane = static_cast<U>(ref + steps_through - steps);  // run c l - 1's value
      std::uint32_t const first_run = lane * lane_values < m ? run_of(0) : 0;
      std::uint32_t run = first_run / per * per;
      U v = static_cast<U>(w.shfl(before_lane, first_run / per) + step(run));
      for (; run < first_run; v = static_cast<U>(v + step(++run))) {
      }
ZS_UNROLL
      for (unsigned k = 0; k < lane_values; ++k) {
        std::uint32_t const q = lane * lane_values + k < m ? run_of(k) : run;
        for (; run < q; v = static_cast<U>(v + step(++run))) {
        }
        x[k] = v;
      }
    }
  } else if (h.runs <= warp_lanes) {
    // Lane r holds run r's value, and a shuffle fetches each position's: one instruction where
    // a field read takes six.
    U const mine = lane < h.runs ? value(lane) : U{0};
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) x[k] = w.shfl(mine, run_of(k));
  } else {
ZS_UNROLL
    for (unsigned k = 0; k < lane_values; ++k) x[k] = value(run_of(k));
  }
  w.sync();  // the marks' memory stages the values
  return store_values<S>(w, out, type, m, x, stage);
}

/// The rules of a pfor or pdfor block i starting at tile word `rel` (data word `start`), with
/// the next block's start `next`: it ends inside the tile (`w1`, the tile's end), and
/// patched_block_is_valid holds. In a frame of its own (ZS_OWN_FRAME).
ZS_HD ZS_OWN_FRAME inline bool patched_block_in_tile(const frame_layout& L, const std::uint32_t* tile, std::uint32_t rel,
                                                     std::uint64_t i, std::uint32_t start, std::uint32_t next,
                                                     std::uint32_t w1) {
  // Its exception bitmaps are read: only once the block is known to end inside the tile.
  return block_end_from(L, i, next) <= w1 && patched_block_is_valid(L, tile + rel, i, start, next);
}

/// decode_rfor_segment of a drfor segment, in a frame of its own (ZS_OWN_FRAME).
template <class Warp, typename U, typename S>
ZS_WARP_FN ZS_OWN_FRAME bool decode_drfor_segment(Warp& w, const std::uint32_t* tile, std::uint32_t* stage,
                                                  std::uint32_t off, std::uint32_t m, std::byte* out, value_type type) {
  return decode_rfor_segment<Warp, U, S, true>(w, tile, stage, off, m, out, type);
}

/// Checks a loaded tile against the format's rules (lane j checks block j), adds its checksum
/// terms and decodes it into values stored as S (with_storage). Returns false for a tile that
/// breaks the rules.
template <class Warp, typename U, typename S, bool Extended = false>
ZS_WARP_FN bool decode_tile(Warp& w, const decode_frame& fr, const decode_buffer& buf, std::uint32_t* stage,
                            std::byte* out, std::uint64_t& sum) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  frame_layout const& L = fr.layout;
  tile_job const j = *buf.job;
  if (!j.fits) return false;
  const std::uint32_t* base = buf.region + j.at;
  const std::uint32_t* tile = base + j.lead;
  std::uint32_t const lane = w.lane;
  std::uint32_t const words = j.w1 - j.w0;
  std::uint32_t const start = lane <= j.starts ? buf.starts[lane] : 0;
  // Block j's rules, read from the tile; lane `starts` keeps the start after the tile.
  bool ok = true;
  std::uint32_t rel = 0;  // lane j: block j's first word in the tile
  std::uint32_t const next = w.shfl_down(start, 1);
  bool const runs = Extended ? is_run_scheme(L.kind) : L.kind == scheme::rfor;
  if (lane < j.starts) {
    std::uint64_t const i = (runs ? j.s0 : j.s0 * tile_blocks) + lane;
    std::uint32_t const room = Extended ? block_head_words(L.kind, L.width_bits) : rw + 1;
    ok = start >= j.w0 && start - j.w0 + room <= words && block_has_room(L, start);
    if (ok) {
      rel = start - j.w0;
      if (Extended && is_patched(L.kind)) {
        ok = patched_block_in_tile(L, tile, rel, i, start, next, j.w1);
      } else {
        std::uint32_t const word = tile[rel + (runs ? 0 : rw)];
        ok = block_is_valid<Extended>(L, i, start, word, next);
      }
    }
  }
  if (w.any(!ok)) return false;

  // Checksum terms of the tile's data words and of its block starts.
  std::uint64_t const T = L.blocks + L.data_words;
  sum += buffer_sum(w, base, L.blocks + j.w0 - j.lead, L.blocks + j.w0, L.blocks + j.w1);
  std::uint64_t const sb = runs ? j.s0 : j.s0 * tile_blocks;
  // The word after the starts: the next start, or after a frame's last block its data word 0.
  std::uint64_t const B = sb + j.starts;
  std::uint32_t const after = B < L.blocks ? buf.starts[j.starts] : B < T ? fr.payload[B] : 0;
  sum += range_sum(w, sb, B, after, [&](std::uint32_t q) { return buf.starts[q]; });

  value_type const type = fr.type;
  for (std::uint32_t i = 0; i < j.g; ++i) {
    std::uint32_t const m = min_of(segment_values, j.values - i * segment_values);
    std::byte* seg_out = out + std::size_t{i} * segment_values * sizeof(S);
    // Each scheme has a branch of its own: the new schemes add no work to the old ones.
    if (L.kind == scheme::rfor) {
      if (!decode_rfor_segment<Warp, U, S>(w, tile, stage, w.shfl(rel, i), m, seg_out, type)) return false;
    } else if (Extended && L.kind == scheme::drfor) {
      if (!decode_drfor_segment<Warp, U, S>(w, tile, stage, w.shfl(rel, i), m, seg_out, type)) return false;
    } else {
      std::uint32_t const first_block = w.shfl(rel, tile_blocks * i);
      bool const delta = Extended ? is_delta_tiled(L.kind) : L.kind == scheme::dfor;
      U const first = delta ? load_reference<U>(tile + first_block - rw) : U{0};
      std::uint32_t const mine = w.shfl(rel, tile_blocks * i + min_of<std::uint32_t>(lane / 8, j.starts - 1 - tile_blocks * i));
      if (Extended && is_patched(L.kind)) {
        if (!decode_patched_segment<S>(w, delta, tile, mine, first, m, seg_out, type, stage)) return false;
      } else if (!decode_for_segment<S>(w, delta, tile, mine, first, m, seg_out, type, stage)) {
        return false;
      }
    }
  }
  return true;
}

/// Decodes the tiles [begin, end) of this width class, one after the other: while a tile is
/// decoded, the next one of the same frame is on its way into the other buffer.
template <class Warp, typename U, bool Narrow = false, bool Extended = false>
ZS_WARP_FN void decode_range(Warp& w, const decode_args& a, std::uint64_t begin, std::uint64_t end, std::uint32_t* smem,
                             sum_carrier& carrier) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  auto& fr = *reinterpret_cast<decode_frame*>(smem);
  std::uint32_t* headers = smem + decode_frame_words;
  std::uint32_t* region = smem + region_offset;
  std::uint32_t const region_size = region_words(8 * sizeof(U), a.tile_segments);
  std::uint32_t const capacity = whole_tile_words(8 * sizeof(U), a.tile_segments);
  std::uint32_t* stage = region + region_size;
  auto const buffer = [&](std::uint32_t i) { return decode_buffer(headers + i * header_words, region); };
  bool started = false;  // tile t is on its way into buffer b (it was the previous round's next)
  std::uint32_t b = 0;
  // A tile larger than the region arrives in parts (start_tile cuts it; a valid segment always
  // fits): `part` is the first segment of tile t a round decodes, and a round that leaves some
  // to go stays on t and fetches the next part alone. Slower (nothing overlaps those copies),
  // and only for data compressing less than whole_tile_words allows for.
  std::uint32_t part = 0;
  for (std::uint64_t t = begin; t < end; t += part == 0 ? 1 : 0) {
    if (part == 0 && (t == begin || t >= fr.last)) enter_frame(w, a, fr, t);
    tile_job j;
    if (!fr.ok || !job_of(a, fr, t, j)) continue;
    frame_layout const& L = fr.layout;
    std::size_t const width = Narrow ? value_width(fr.type) : sizeof(U);  // bytes of a stored value
    std::byte* out = static_cast<std::byte*>(a.targets[fr.f].values) + j.s0 * segment_values * width;
    std::uint64_t sum = 0;
    bool ok = true;
    if (Narrow && L.kind == scheme::raw && is_narrow_type(fr.type)) {
      // Narrow values as they are: the tile's whole 64-bit payload words (the last one ends the
      // payload), a word a lane at a time.
      std::uint64_t const total = L.count * width;
      std::uint64_t const first = j.s0 * segment_values * width;
      auto const* payload = reinterpret_cast<const std::byte*>(fr.payload);
      std::byte* values = out - first;  // the target's first value
      std::uint64_t const q_end = (first + std::uint64_t{j.values} * width + 7) / 8;
      for (std::uint64_t q = first / 8 + w.lane; q < q_end; q += warp_lanes) {
        std::uint64_t const word = narrow_raw_word(payload, total, q);
        store_raw_word(values, total, q, word);
        sum += hash::term(q, word);
      }
    } else if (L.kind == scheme::raw) {
      std::uint64_t const A = j.s0 * segment_values * rw;
      sum = copy_range<8>(w, fr.payload + A, j.values * rw, reinterpret_cast<std::uint32_t*>(out), A,
                          L.count * rw, fr.payload + A + j.values * rw);
    } else {
      decode_buffer const now = buffer(b);
      if (part != 0) {
        tile_job rest = j;
        rest.s0 += part;
        rest.g -= part;
        rest.values -= part * segment_values;
        start_tile<Warp, U>(w, fr, rest, now, capacity, region_size, 0, 0);
        w.wait_copies(0);
      } else {
        if (!started) start_tile<Warp, U>(w, fr, j, now, capacity, region_size, 0, 0);
        w.sync();  // the job of tile t is in shared memory
        // The next tile starts arriving beside this one, unless this one is cut in parts
        // (they take the region alone) or the next has no room.
        tile_job next;
        bool ahead = now.job->g == j.g && t + 1 < end && t + 1 < fr.last && job_of(a, fr, t + 1, next);
        if (ahead) ahead = start_tile<Warp, U>(w, fr, next, buffer(b ^ 1), capacity, region_size, now.job->at, now.job->end);
        w.wait_copies(ahead ? 1 : 0);  // tile t has landed
        started = ahead;
      }
      // The tile's program has its stores built in: one for each way of storing values.
      std::byte* tile_out = out + std::size_t{part} * segment_values * width;
      if constexpr (Narrow) {
        with_storage<U, true>(fr.type, [&]<typename S>() { ok = decode_tile<Warp, U, S, Extended>(w, fr, now, stage, tile_out, sum); });
      } else {
        ok = decode_tile<Warp, U, U, Extended>(w, fr, now, stage, tile_out, sum);
      }
      std::uint32_t const done = part + now.job->g;
      w.sync();  // the buffer takes the tile after next, or this tile's next part
      part = ok && done < j.g ? done : 0;
      if (part == 0 && started) b ^= 1;
    }
    if (!ok && w.lane == 0) w.store_status(a.status + fr.f, frame_status::corrupt_payload);
    carrier.add(w, a.sums, fr.f, sum);
  }
}

}  // namespace zs::bitpack::gpu
