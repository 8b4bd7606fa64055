// The tile-based bit-packing formats (docs/FORMAT.md, codecs 1-3 and 8-10: for, dfor, rfor,
// pfor, pdfor, drfor): constants, codec parameters, bit-field access, and the validation rules
// every decoder applies.
//
// Shared by the CPU reference (lib/src/codecs/bitpack_codec.cpp) and the GPU kernels, so both
// sides read the same rules; the encoders are written separately on each side and must agree
// byte for byte (the tests check it).
//
// Summary (w = value width in bits, 32 or 64, narrow types coded as 32; rw = w / 32 reference
// words):
//   payload = block starts (one u32 per block, word offsets into the data section), then the
//   data section, a sequence of little-endian 32-bit words.
//   for:   blocks of 128 values = reference (rw words), widths word (4 x 8 bits), 4 miniblocks
//          of 32 values, miniblock j packed at its own width b_j in exactly b_j words.
//   dfor:  tiles of 4 blocks; each tile = first value (rw words), then its blocks, which hold
//          the differences of consecutive values as for-blocks.
//   rfor:  blocks of 512 values = header word (runs, minimum run length, two widths), value
//          reference (rw words), run values bit-packed, run lengths bit-packed.
//   pfor:  for with shifts and patches: a block = reference, low widths word (b_j), full widths
//          word (B_j), shifts word (s_j: the trailing zeros all of a miniblock's offsets share,
//          dropped), the 4 miniblocks' low b_j bits as for packs them, then an exception
//          section: for each miniblock with B_j > b_j a bitmap word of its exceptions, then for
//          each such miniblock the high bits (offset >> s_j >> b_j) of its exceptions.
//   pdfor: dfor's tiles and differences in pfor's blocks.
//   drfor: rfor whose run values are coded as differences: header word, first run value and
//          difference reference (rw words each), r - 1 differences bit-packed, run lengths.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/warp_tools.hpp"

#include "raw/raw_format.hpp"
#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

namespace zs::bitpack {

/// The schemes; the values are the codec ids written in frames.
enum class scheme : std::uint8_t { raw = 0, for_ = 1, dfor = 2, rfor = 3, pfor = 8, pdfor = 9, drfor = 10 };
inline constexpr int num_schemes = 7;
/// The schemes other than raw, which the encoder sizes for every frame: coded_scheme(i) for
/// i < coded_schemes, in the order of their codec ids (the order ties are broken in).
inline constexpr int coded_schemes = 6;
ZS_HD constexpr scheme coded_scheme(int i) noexcept {
  switch (i) {
    case 0: return scheme::for_;
    case 1: return scheme::dfor;
    case 2: return scheme::rfor;
    case 3: return scheme::pfor;
    case 4: return scheme::pdfor;
    case 5: return scheme::drfor;
    default: return scheme::raw;
  }
}
/// The index i of a coded scheme s (coded_scheme(i) == s): 0 to 5 for for .. drfor.
ZS_HD constexpr int scheme_index(scheme s) noexcept {
  return static_cast<int>(s) <= 3 ? static_cast<int>(s) - 1 : static_cast<int>(s) - 5;
}
/// Whether the codec id `id` is one of the schemes (raw included).
ZS_HD constexpr bool is_scheme_id(std::uint32_t id) noexcept {
  return id <= 3 || (id >= 8 && id <= 10);
}
/// Blocks of 128 values with miniblock widths: for, dfor, pfor, pdfor.
ZS_HD constexpr bool has_miniblocks(scheme s) noexcept {
  return s == scheme::for_ || s == scheme::dfor || s == scheme::pfor || s == scheme::pdfor;
}
/// Tiles of 4 blocks of differences, each tile starting with its first value: dfor, pdfor.
ZS_HD constexpr bool is_delta_tiled(scheme s) noexcept { return s == scheme::dfor || s == scheme::pdfor; }
/// Miniblocks with exceptions: pfor, pdfor.
ZS_HD constexpr bool is_patched(scheme s) noexcept { return s == scheme::pfor || s == scheme::pdfor; }
/// Blocks of 512 values as runs: rfor, drfor.
ZS_HD constexpr bool is_run_scheme(scheme s) noexcept { return s == scheme::rfor || s == scheme::drfor; }

inline constexpr std::uint32_t block_values = 128;     // for, dfor
inline constexpr std::uint32_t miniblock_values = 32;  // 32 values at b bits = b words
inline constexpr std::uint32_t miniblocks = 4;
inline constexpr std::uint32_t tile_blocks = 4;        // dfor blocks per delta tile
/// 512 values: one dfor tile, one rfor block, four for blocks. The unit of GPU work.
inline constexpr std::uint32_t segment_values = 512;
inline constexpr std::uint32_t rfor_block_values = segment_values;
/// Run lengths are at most 512, so length - minimum length needs at most 9 bits.
inline constexpr std::uint32_t rfor_max_length_width = 9;
/// Block starts are u32 word offsets: a data section may hold at most this many words.
inline constexpr std::uint64_t max_data_words = 0xffffffffULL;

ZS_HD constexpr std::uint32_t reference_words(std::uint32_t width_bits) noexcept { return width_bits / 32; }

ZS_HD constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept { return (a + b - 1) / b; }

/// Words that `count` fields of `bits` bits take, packed back to back.
ZS_HD constexpr std::uint64_t field_words(std::uint64_t count, std::uint32_t bits) noexcept {
  return ceil_div(count * bits, 32);
}

/// Blocks (and block starts) a frame of `count` values has in scheme `s` (0 for raw).
ZS_HD constexpr std::uint64_t block_count(scheme s, std::uint64_t count) noexcept {
  if (has_miniblocks(s)) return ceil_div(count, block_values);
  if (is_run_scheme(s)) return ceil_div(count, rfor_block_values);
  return 0;
}

ZS_HD constexpr std::uint64_t segment_count(std::uint64_t count) noexcept {
  return ceil_div(count, segment_values);
}

/// Bits needed for `x`: 0 for 0, else the position of the highest set bit plus one.
ZS_HD inline std::uint32_t bit_width(std::uint32_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return 32U - static_cast<std::uint32_t>(__clz(static_cast<int>(x)));
#else
  return x == 0 ? 0U : 32U - static_cast<std::uint32_t>(__builtin_clz(x));
#endif
}
ZS_HD inline std::uint32_t bit_width(std::uint64_t x) noexcept {
#if defined(__CUDA_ARCH__)
  return 64U - static_cast<std::uint32_t>(__clzll(static_cast<long long>(x)));
#else
  return x == 0 ? 0U : 64U - static_cast<std::uint32_t>(__builtin_clzll(x));
#endif
}

/// The low `bits` bits set (bits <= 64).
ZS_HD constexpr std::uint64_t low_mask(std::uint32_t bits) noexcept {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

/// Sum of the width bytes below miniblock j of a widths word (each byte <= 64, so no carry).
ZS_HD constexpr std::uint32_t widths_before(std::uint32_t widths, std::uint32_t j) noexcept {
  std::uint32_t const below = j == 0 ? 0U : widths & (0xffffffffU >> (32 - 8 * j));
  return (below * 0x01010101U) >> 24;
}
ZS_HD constexpr std::uint32_t width_of(std::uint32_t widths, std::uint32_t j) noexcept {
  return (widths >> (8 * j)) & 0xffU;
}
ZS_HD constexpr std::uint32_t widths_sum(std::uint32_t widths) noexcept {
  return (widths & 0xffU) + ((widths >> 8) & 0xffU) + ((widths >> 16) & 0xffU) + (widths >> 24);
}

// --- rfor block header word ------------------------------------------------------------------
//   bits  0..9   runs - 1            (1..512 runs)
//   bits 10..19  min run length - 1  (1..512)
//   bits 20..26  value width         (0..w)
//   bits 27..30  length width        (0..9)
//   bit  31      zero
// except a drfor block of two runs whose step v_1 - v_0 (mod 2^w) is below 2^11, the common
// block of a sorted column with long runs: bits 20..30 hold the step and bit 31 is set, the
// widths being 0 (one difference, one stored length), and the block has no difference reference.
inline constexpr std::uint32_t header_step_bits = 11;
struct rfor_header {
  std::uint32_t runs;
  std::uint32_t min_length;
  std::uint32_t value_bits;
  std::uint32_t length_bits;
  bool step_in_header = false;
  std::uint32_t step = 0;  // where step_in_header
};
/// Whether a drfor block of `runs` runs whose least step is `step` carries it in its header.
ZS_HD constexpr bool step_fits_header(std::uint32_t runs, std::uint64_t step) noexcept {
  return runs == 2 && step < (std::uint64_t{1} << header_step_bits);
}

ZS_HD constexpr std::uint32_t pack_rfor_header(const rfor_header& h) noexcept {
  std::uint32_t const counts = (h.runs - 1) | ((h.min_length - 1) << 10);
  return h.step_in_header ? counts | (h.step << 20) | (1U << 31)
                          : counts | (h.value_bits << 20) | (h.length_bits << 27);
}
/// An rfor header (bit 31 clear: validation refuses the others before anything decodes).
ZS_HD constexpr rfor_header unpack_rfor_header(std::uint32_t word) noexcept {
  return {(word & 1023U) + 1, ((word >> 10) & 1023U) + 1, (word >> 20) & 127U, (word >> 27) & 15U};
}
/// A drfor header: as rfor's, or with bit 31 set, the step in bits 20..30 and widths 0. Apart
/// from unpack_rfor_header so that rfor's decoder keeps its plain field reads.
ZS_HD constexpr rfor_header unpack_drfor_header(std::uint32_t word) noexcept {
  if ((word >> 31) == 0) return unpack_rfor_header(word);
  return {(word & 1023U) + 1, ((word >> 10) & 1023U) + 1, 0, 0, true, (word >> 20) & ((1U << header_step_bits) - 1)};
}
ZS_HD constexpr rfor_header unpack_run_header(scheme s, std::uint32_t word) noexcept {
  return s == scheme::drfor ? unpack_drfor_header(word) : unpack_rfor_header(word);
}
/// Data words of an rfor block, header and reference included.
ZS_HD constexpr std::uint64_t rfor_block_words(const rfor_header& h, std::uint32_t width_bits) noexcept {
  return 1 + reference_words(width_bits) + field_words(h.runs, h.value_bits) + field_words(h.runs, h.length_bits);
}
/// Run lengths a block stores: rfor all r; drfor the first r - 1, the last run taking the
/// positions left (so min_length and length_bits are of those r - 1: 1 and 0 when r = 1).
ZS_HD constexpr std::uint32_t stored_lengths(scheme s, std::uint32_t runs) noexcept {
  return s == scheme::drfor ? runs - 1 : runs;
}
/// Words of a drfor block before its differences: the header word, the first run value and,
/// where there are differences (r >= 2) and the header does not hold the step, their reference
/// (rw words each).
ZS_HD constexpr std::uint32_t drfor_head_words(const rfor_header& h, std::uint32_t width_bits) noexcept {
  return 1 + (h.runs > 1 && !h.step_in_header ? 2 : 1) * reference_words(width_bits);
}
/// drfor: the head words, r - 1 differences of value_bits bits, r - 1 lengths.
ZS_HD constexpr std::uint64_t drfor_block_words(const rfor_header& h, std::uint32_t width_bits) noexcept {
  return drfor_head_words(h, width_bits) + field_words(h.runs - 1, h.value_bits) +
         field_words(h.runs - 1, h.length_bits);
}
/// Where a run block's length stream starts, in words from the block's start.
ZS_HD constexpr std::uint64_t run_lengths_at(scheme s, const rfor_header& h, std::uint32_t width_bits) noexcept {
  return s == scheme::drfor ? drfor_head_words(h, width_bits) + field_words(h.runs - 1, h.value_bits)
                            : 1 + reference_words(width_bits) + field_words(h.runs, h.value_bits);
}

// --- pfor and pdfor: shifted and patched miniblocks ---------------------------------------------
// A patched block: reference (rw words), low widths word (byte j: b_j), full widths word (byte
// j: B_j, b_j <= B_j), shifts word (byte j: s_j, s_j + B_j <= w), the low b_j bits of each
// miniblock's 32 fields exactly as a for block packs them (b_j words each), then the exception
// section. Miniblock j's fields are its offsets shifted right by s_j (s_j < w): the encoder drops
// the trailing zero bits all of them share (aligned steps, such as address ranges, have many). A
// miniblock with B_j > b_j is patched: its fields of B_j bits that do not fit b_j bits are its
// exceptions. The section holds, for the patched miniblocks in order, a bitmap word each (bit
// k: value k of the miniblock is an exception; never 0), then, for the same miniblocks in order,
// a stream each of the exceptions' high bits (field >> b_j) at B_j - b_j bits, in position
// order, starting on a word. An outlier so costs one word for its miniblock and its high bits,
// instead of widening all 32 values of its miniblock.

/// Words before a patched block's low miniblocks: reference, the two widths words and the
/// shifts word.
ZS_HD constexpr std::uint32_t patched_head_words(std::uint32_t width_bits) noexcept {
  return reference_words(width_bits) + 3;
}
/// Words of a miniblock whose 32 offsets take at most `full` bits, packed at `low` bits with
/// `exceptions` offsets above 2^low patched: b words, plus, when patched, its bitmap word and
/// its high bits.
ZS_HD constexpr std::uint32_t patched_miniblock_words(std::uint32_t low, std::uint32_t full,
                                                      std::uint32_t exceptions) noexcept {
  return low + (full > low ? 1 + static_cast<std::uint32_t>(field_words(exceptions, full - low)) : 0U);
}

/// A floor on the words of a miniblock packed at any low width below b, where `exceptions`
/// fields exceed b bits: each lower width keeps at least those exceptions, and b' + e (full -
/// b') / 32 does not fall as b' falls while e <= 32. A search going down may stop once its best
/// is at or below it.
ZS_HD constexpr std::uint32_t min_patched_words_below(std::uint32_t full, std::uint32_t exceptions) noexcept {
  return 1 + static_cast<std::uint32_t>(field_words(exceptions, full));
}

/// The low width that makes a miniblock smallest, from `at_least[b]`: the number of its offsets
/// of more than b bits (b = 0..full; at_least[full] = 0). The candidates are the full width, 0
/// and the widths some field has exactly (at_least[b - 1] > at_least[b]): between two of them
/// the exceptions stay the same and a wider low width costs at least as much, so the fewest
/// words are always among them. Ties go to the wider candidate (fewer exceptions). Shared by
/// the CPU and GPU encoders, so both pick the same widths.
ZS_HD inline std::uint32_t best_low_width(const std::uint32_t* at_least, std::uint32_t full) noexcept {
  std::uint32_t best = full, best_words = full;
  for (std::uint32_t b = full; b-- > 0;) {
    if (b != 0 && at_least[b - 1] == at_least[b]) continue;
    std::uint32_t const words = patched_miniblock_words(b, full, at_least[b]);
    if (words < best_words) {
      best = b;
      best_words = words;
    }
  }
  return best;
}

// --- codec parameters (header bytes 40..55) --------------------------------------------------
//   bytes 0..1   u16 values per block: 128 (for, dfor) or 512 (rfor)
//   byte  2      blocks per delta tile: 4 (dfor), 0 (for, rfor)
//   bytes 3..7   zero
//   bytes 8..15  u64 data words: 32-bit words of the data section
ZS_HD constexpr std::uint32_t params_block_values(scheme s) noexcept {
  return is_run_scheme(s) ? rfor_block_values : block_values;
}
ZS_HD constexpr std::uint32_t params_tile_blocks(scheme s) noexcept {
  return is_delta_tiled(s) ? tile_blocks : 0;
}

/// Writes the codec parameters of scheme `s` (all zero for raw) into p[0..16).
ZS_HD inline void store_params(std::byte* p, scheme s, std::uint64_t data_words) noexcept {
  for (std::size_t k = 0; k < codec_params_bytes; ++k) p[k] = std::byte{0};
  if (s == scheme::raw) return;
  detail::store_le(p, params_block_values(s), 2);
  p[2] = static_cast<std::byte>(params_tile_blocks(s));
  detail::store_le(p + 8, data_words, 8);
}

/// Writes the header fields a payload encoder owns: codec id, payload bytes and parameters.
ZS_HD inline void store_scheme_fields(std::byte* frame, scheme s, std::uint64_t payload_bytes,
                                      std::uint64_t data_words) noexcept {
  frame[6] = static_cast<std::byte>(s);
  detail::store_le(frame + 24, payload_bytes, 8);
  store_params(frame + 40, s, data_words);
}

// --- frame-level checks ----------------------------------------------------------------------

// Narrow integers (int8, int16, uint8, uint16, and bool8 as a uint8) are coded as their 32-bit
// widening: int8 and int16 sign-extended to int32, uint8, uint16 and bool8 zero-extended to
// uint32. A for, dfor or rfor payload of a narrow frame is exactly the payload of those 32-bit
// values, and its decoder refuses (corrupt_payload) a frame whose decoded values do not all fit
// the narrow type. A narrow frame left raw carries its narrow values as they are (the raw
// codec's payload).

/// Whether the frame type is narrow: stored in fewer bytes than the 32-bit words it is coded in.
ZS_HD constexpr bool is_narrow_type(value_type type) noexcept {
  return type == value_type::int8 || type == value_type::int16 || type == value_type::uint8 ||
         type == value_type::uint16 || type == value_type::bool8;
}
/// Bits of the values the schemes code: 32 for the narrow types and the 32-bit ones, 64 for
/// the 64-bit ones.
ZS_HD constexpr std::uint32_t width_bits_of(value_type type) noexcept {
  return is_narrow_type(type) ? 32U : static_cast<std::uint32_t>(value_width(type)) * 8;
}
ZS_HD constexpr bool is_integer_type(value_type type) noexcept { return is_integer(type); }
ZS_HD constexpr bool is_signed_type(value_type type) noexcept { return is_signed_integer(type); }

/// Whether a decoded 32-bit word `v` is the widening of a value of the narrow `type` (of any
/// value for the 32-bit types): what a narrow frame's decoder checks before it writes.
ZS_HD constexpr bool fits_type(value_type type, std::uint32_t v) noexcept {
  switch (type) {
    case value_type::int8: return static_cast<std::uint32_t>(v + 0x80U) <= 0xffU;
    case value_type::int16: return static_cast<std::uint32_t>(v + 0x8000U) <= 0xffffU;
    case value_type::uint8:
    case value_type::bool8: return v <= 0xffU;  // coded as a uint8, whatever its bytes hold
    case value_type::uint16: return v <= 0xffffU;
    default: return true;
  }
}

/// What a decoder needs of a frame that passed the frame-level checks.
struct frame_layout {
  scheme kind = scheme::raw;
  std::uint32_t width_bits = 32;
  std::uint64_t count = 0;
  std::uint64_t blocks = 0;      // block starts
  std::uint64_t data_words = 0;  // words after the block starts
};

/// The frame-level rules (docs/FORMAT.md): integer type, parameters as defined, payload size
/// consistent with the count and the data words. `h` already passed validate_header.
ZS_HD inline frame_status read_layout(const frame_header& h, frame_layout& out) noexcept {
  if (!is_integer_type(h.type)) return frame_status::unsupported_type;
  auto const s = static_cast<scheme>(h.codec);
  out.kind = s;
  out.width_bits = width_bits_of(h.type);
  out.count = h.value_count;
  if (s == scheme::raw) {
    out.blocks = 0;
    out.data_words = 0;
    // A frame the encoder left raw follows the raw codec's rules (zero parameters included).
    return raw::check_header(h);
  }
  if (!is_scheme_id(static_cast<std::uint32_t>(h.codec))) return frame_status::wrong_codec;
  const std::byte* p = h.params.data();
  if (detail::load_le(p, 2) != params_block_values(s) ||
      static_cast<std::uint32_t>(p[2]) != params_tile_blocks(s) || detail::load_le(p + 3, 5) != 0) {
    return frame_status::corrupt_payload;
  }
  std::uint64_t const data_words = detail::load_le(p + 8, 8);
  std::uint64_t const blocks = block_count(s, h.value_count);
  if (h.payload_bytes % 4 != 0) return frame_status::corrupt_payload;
  std::uint64_t const words = h.payload_bytes / 4;
  if (words < blocks || words - blocks != data_words || data_words > max_data_words) {
    return frame_status::corrupt_payload;
  }
  // Every block holds at least its reference and a widths or header word.
  if (blocks != 0 && data_words < blocks * 2) return frame_status::corrupt_payload;
  out.blocks = blocks;
  out.data_words = data_words;
  return frame_status::ok;
}

// --- bit fields ------------------------------------------------------------------------------
// A stream of fields of b bits is packed LSB first: field k occupies stream bits [k b, k b + b),
// and stream bit q is bit q % 32 of word q / 32.

/// The field of `bits` bits at stream bit `bitpos`, reading only the words that hold it.
ZS_HD inline std::uint64_t read_field(const std::uint32_t* words, std::uint64_t bitpos,
                                      std::uint32_t bits) noexcept {
  if (bits == 0) return 0;
  std::uint64_t const first = bitpos >> 5;
  std::uint64_t const last = (bitpos + bits - 1) >> 5;
  std::uint32_t const shift = static_cast<std::uint32_t>(bitpos & 31);
  std::uint64_t v = static_cast<std::uint64_t>(words[first]) >> shift;
  if (last > first) v |= static_cast<std::uint64_t>(words[first + 1]) << (32 - shift);
  if (last > first + 1) v |= static_cast<std::uint64_t>(words[first + 2]) << (64 - shift);
  return v & low_mask(bits);
}

/// The same field through a fixed window: two words for 32-bit values, three for 64-bit ones.
/// The caller guarantees those words are readable (the GPU decoder pads its shared-memory
/// copy of a tile with two zero words).
template <typename U>
ZS_HD inline U read_field_window(const std::uint32_t* words, std::uint64_t bitpos,
                                 std::uint32_t bits) noexcept {
  const std::uint32_t* p = words + (bitpos >> 5);
  std::uint32_t const shift = static_cast<std::uint32_t>(bitpos & 31);
  std::uint64_t v = ((static_cast<std::uint64_t>(p[1]) << 32) | p[0]) >> shift;
  if constexpr (sizeof(U) == 8) {
    if (shift != 0) v |= static_cast<std::uint64_t>(p[2]) << (64 - shift);
  }
  return static_cast<U>(v & low_mask(bits));
}

/// Word `k` of a stream of `count` fields of `bits` bits (bits >= 1), with field(i) giving
/// field i (already below 2^bits). Bits past the last field are zero. For the streams of one
/// segment or block (k and count below 2^26): 32-bit arithmetic and a single division, which
/// GPU encoders run for every word they write.
template <typename F>
ZS_HD inline std::uint32_t gather_word(std::uint32_t k, std::uint32_t bits, std::uint32_t count, F field) noexcept {
  std::uint32_t const first_bit = 32 * k;
  std::uint32_t word = 0;
  for (std::uint32_t i = first_bit / bits; i < count && i * bits < first_bit + 32; ++i) {
    auto const shift = static_cast<std::int32_t>(i * bits) - static_cast<std::int32_t>(first_bit);
    auto const v = static_cast<std::uint64_t>(field(i));
    word |= static_cast<std::uint32_t>(shift >= 0 ? v << shift : v >> -shift);
  }
  return word;
}

// --- block validation ------------------------------------------------------------------------
// The rules are stated per block, so that a CPU loop over a segment's blocks and GPU lanes that
// check one block each apply the same code.

/// Words at the start of a block that a decoder reads before it knows the block's size: the
/// reference and widths word (for, dfor), the header word and reference (rfor), the reference,
/// both widths words and the shifts word (pfor, pdfor), the header word and first value
/// (drfor, whose difference reference follows only where its header counts two runs or more,
/// inside the size that the header gives).
ZS_HD constexpr std::uint32_t block_head_words(scheme s, std::uint32_t width_bits) noexcept {
  return is_patched(s) ? patched_head_words(width_bits) : reference_words(width_bits) + 1;
}

/// Whether a block starting at data word `start` has room for its head words (block_head_words)
/// inside the data section: the check before they are read.
ZS_HD constexpr bool block_has_room(const frame_layout& f, std::uint64_t start) noexcept {
  return start <= f.data_words && f.data_words - start >= block_head_words(f.kind, f.width_bits);
}

/// Where the data word after block `i` must be, from the start of block i + 1 as the block
/// starts give it (`next_start`; the data words after the frame's last block): dfor keeps the
/// next tile's first value between the two. UINT64_MAX where that cannot be.
ZS_HD constexpr std::uint64_t block_end_from(const frame_layout& f, std::uint64_t i, std::uint64_t next_start) noexcept {
  std::uint32_t const rw = reference_words(f.width_bits);
  if (is_delta_tiled(f.kind) && i + 1 < f.blocks && (i + 1) % tile_blocks == 0) {
    return next_start < rw ? ~std::uint64_t{0} : next_start - rw;
  }
  return next_start;
}

/// The rules for block i of a frame whose layout passed read_layout (for, dfor: blocks of 128
/// values; rfor, drfor: of 512): its start (block_has_room held), `word` (its widths word, or its
/// run header), and where the next block starts. For rfor and drfor the run lengths are checked
/// apart (rfor_lengths_are_valid); pfor and pdfor blocks by patched_block_is_valid. Without
/// `Drfor` (the classic codec's kernels, which never see a drfor frame) a run block is rfor's.
template <bool Drfor = true>
ZS_HD inline bool block_is_valid(const frame_layout& f, std::uint64_t i, std::uint64_t start, std::uint32_t word,
                                 std::uint64_t next_start) noexcept {
  std::uint32_t const rw = reference_words(f.width_bits);
  std::uint64_t size = 0;
  if (f.kind == scheme::for_ || f.kind == scheme::dfor) {
    if (i == 0 && start != (f.kind == scheme::dfor ? rw : 0)) return false;
    for (std::uint32_t j = 0; j < miniblocks; ++j) {
      if (width_of(word, j) > f.width_bits) return false;
    }
    size = rw + 1 + widths_sum(word);
  } else if (is_run_scheme(f.kind)) {
    if (i == 0 && start != 0) return false;
    bool const delta = Drfor && f.kind == scheme::drfor;
    if (!delta && (word >> 31) != 0) return false;
    rfor_header const h = delta ? unpack_drfor_header(word) : unpack_rfor_header(word);
    if (h.step_in_header && h.runs != 2) return false;
    std::uint64_t const first = i * rfor_block_values;
    std::uint64_t const values = f.count - first < rfor_block_values ? f.count - first : rfor_block_values;
    if (h.runs > values || h.value_bits > f.width_bits || h.length_bits > rfor_max_length_width) return false;
    size = delta ? drfor_block_words(h, f.width_bits) : rfor_block_words(h, f.width_bits);
  } else {
    return false;
  }
  std::uint64_t const end = block_end_from(f, i, next_start);
  return end >= start && end - start == size;
}

/// The rules for the patched (pfor, pdfor) block i of a frame whose layout passed read_layout,
/// starting at data word `start` (block_has_room held), with the next block starting at
/// `next_start`: block 0's start, widths b_j <= B_j and shifts s_j + B_j <= w, s_j < w, every bitmap word
/// inside the block, not 0, and without exceptions past the frame's last value, and a size that
/// reaches exactly the next block. `block` points at the block's first word (data word `start`);
/// reads only words inside the block, so that a decoder holding only part of the data section
/// (a GPU tile) applies the same rule.
ZS_HD inline bool patched_block_is_valid(const frame_layout& f, const std::uint32_t* block, std::uint64_t i,
                                         std::uint64_t start, std::uint64_t next_start) noexcept {
  std::uint32_t const rw = reference_words(f.width_bits);
  if (i == 0 && start != (f.kind == scheme::pdfor ? rw : 0)) return false;
  std::uint64_t const end = block_end_from(f, i, next_start);
  if (end < start || end > f.data_words) return false;  // the bitmaps are read below the end
  std::uint64_t const size = end - start;
  std::uint32_t const low = block[rw], full = block[rw + 1], shifts = block[rw + 2];
  std::uint32_t patched = 0;
  for (std::uint32_t j = 0; j < miniblocks; ++j) {
    if (width_of(low, j) > width_of(full, j) || width_of(full, j) > f.width_bits ||
        width_of(shifts, j) > f.width_bits - width_of(full, j) || width_of(shifts, j) >= f.width_bits) {
      return false;
    }
    patched += width_of(full, j) > width_of(low, j) ? 1U : 0U;
  }
  std::uint64_t const bitmaps = patched_head_words(f.width_bits) + widths_sum(low);
  if (size < bitmaps || size - bitmaps < patched) return false;
  std::uint64_t words = bitmaps + patched;
  std::uint64_t const first = i * block_values;
  for (std::uint32_t j = 0, k = 0; j < miniblocks; ++j) {
    if (width_of(full, j) == width_of(low, j)) continue;
    std::uint32_t const bitmap = block[bitmaps + k++];
    std::uint64_t const mini_first = first + miniblock_values * j;
    // Bits of positions past the frame's last value (a miniblock past it has no exceptions).
    std::uint64_t const held = f.count > mini_first ? f.count - mini_first : 0;
    std::uint32_t const past = held >= miniblock_values ? 0U : ~static_cast<std::uint32_t>(low_mask(static_cast<std::uint32_t>(held)));
    if (bitmap == 0 || (bitmap & past) != 0) return false;
    words += field_words(kernels::warp::bit_count(bitmap), width_of(full, j) - width_of(low, j));
  }
  return words == size;
}

/// Whether the run lengths of the valid rfor or drfor block i starting at `start` cover its
/// values exactly (every stored run is at least min_length >= 1 long; drfor's stored lengths
/// leave at least one position for its last run).
ZS_HD inline bool rfor_lengths_are_valid(const frame_layout& f, const std::uint32_t* data, std::uint64_t i,
                                         std::uint64_t start) noexcept {
  rfor_header const h = unpack_run_header(f.kind, data[start]);
  std::uint64_t const first = i * rfor_block_values;
  std::uint64_t const values = f.count - first < rfor_block_values ? f.count - first : rfor_block_values;
  const std::uint32_t* lengths = data + start + run_lengths_at(f.kind, h, f.width_bits);
  std::uint64_t total = 0;
  for (std::uint32_t k = 0; k < stored_lengths(f.kind, h.runs); ++k) {
    total += h.min_length + read_field(lengths, static_cast<std::uint64_t>(k) * h.length_bits, h.length_bits);
  }
  return f.kind == scheme::drfor ? total < values : total == values;
}

/// Checks the blocks of segment `seg` (values [512 seg, 512 seg + 512)) of a frame whose layout
/// passed read_layout: block starts, widths, sizes that tile the data section exactly, for rfor
/// and drfor the run lengths, for pfor and pdfor the exception bitmaps. Reads only inside
/// starts[0..blocks) and data[0..data_words).
/// Together over all segments these guarantee that every block lies inside the data section.
ZS_HD inline bool segment_is_valid(const frame_layout& f, const std::uint32_t* starts,
                                   const std::uint32_t* data, std::uint64_t seg) noexcept {
  bool const runs = is_run_scheme(f.kind);
  std::uint64_t const per = runs ? 1 : tile_blocks;
  std::uint64_t const first = seg * per;
  std::uint64_t const last = first + per < f.blocks ? first + per : f.blocks;
  for (std::uint64_t i = first; i < last; ++i) {
    std::uint64_t const start = starts[i];
    if (!block_has_room(f, start)) return false;
    std::uint64_t const next = i + 1 < f.blocks ? starts[i + 1] : f.data_words;
    if (is_patched(f.kind)) {
      if (!patched_block_is_valid(f, data + start, i, start, next)) return false;
      continue;
    }
    std::uint32_t const word = data[start + (runs ? 0 : reference_words(f.width_bits))];
    if (!block_is_valid(f, i, start, word, next)) return false;
    if (runs && !rfor_lengths_are_valid(f, data, i, start)) return false;
  }
  return true;
}

// --- scheme choice ---------------------------------------------------------------------------

/// Payload bytes of a frame of `count` values in scheme s whose data section has `data_words`
/// words; UINT64_MAX where the scheme cannot represent it (data section over max_data_words).
ZS_HD constexpr std::uint64_t scheme_payload_bytes(scheme s, std::uint64_t count,
                                                   std::uint64_t data_words) noexcept {
  if (data_words > max_data_words) return ~std::uint64_t{0};
  return 4 * (block_count(s, count) + data_words);
}

/// The scheme with the smallest payload; ties go to the lower codec id (raw first), so a frame
/// is never larger than raw. data_words[i] is the data section of coded_scheme(i), for the first
/// N coded schemes (the others are not candidates).
template <int N>
ZS_HD inline scheme pick_scheme(std::uint64_t count, std::uint64_t raw_bytes,
                                const std::uint64_t (&data_words)[N]) noexcept {
  static_assert(N <= coded_schemes, "one entry per coded scheme at most");
  scheme best = scheme::raw;
  std::uint64_t best_bytes = raw_bytes;
  for (int i = 0; i < N; ++i) {
    auto const s = coded_scheme(i);
    std::uint64_t const bytes = scheme_payload_bytes(s, count, data_words[i]);
    if (bytes < best_bytes) {
      best = s;
      best_bytes = bytes;
    }
  }
  return best;
}

}  // namespace zs::bitpack
