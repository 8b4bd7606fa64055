// The tile-based bit-packing formats (docs/FORMAT.md, codecs 1-3: for, dfor, rfor): constants,
// codec parameters, bit-field access, and the validation rules every decoder applies.
//
// Shared by the CPU reference (lib/src/codecs/bitpack_codec.cpp) and the GPU kernels, so both
// sides read the same rules; the encoders are written separately on each side and must agree
// byte for byte (the tests check it).
//
// Summary (w = value width in bits, 32 or 64; rw = w / 32 reference words):
//   payload = block starts (one u32 per block, word offsets into the data section), then the
//   data section, a sequence of little-endian 32-bit words.
//   for:  blocks of 128 values = reference (rw words), widths word (4 x 8 bits), 4 miniblocks of
//         32 values, miniblock j packed at its own width b_j in exactly b_j words.
//   dfor: tiles of 4 blocks; each tile = first value (rw words), then its blocks, which hold
//         the differences of consecutive values as for-blocks.
//   rfor: blocks of 512 values = header word (runs, minimum run length, two widths), value
//         reference (rw words), run values bit-packed, run lengths bit-packed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

namespace zs::bitpack {

/// The schemes; the values are the codec ids written in frames.
enum class scheme : std::uint8_t { raw = 0, for_ = 1, dfor = 2, rfor = 3 };
inline constexpr int num_schemes = 4;

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
  switch (s) {
    case scheme::for_:
    case scheme::dfor: return ceil_div(count, block_values);
    case scheme::rfor: return ceil_div(count, rfor_block_values);
    case scheme::raw: return 0;
  }
  return 0;
}

ZS_HD constexpr std::uint64_t segment_count(std::uint64_t count) noexcept {
  return ceil_div(count, segment_values);
}

/// Bits needed for `x`: 0 for 0, else the position of the highest set bit plus one.
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
struct rfor_header {
  std::uint32_t runs;
  std::uint32_t min_length;
  std::uint32_t value_bits;
  std::uint32_t length_bits;
};

ZS_HD constexpr std::uint32_t pack_rfor_header(const rfor_header& h) noexcept {
  return (h.runs - 1) | ((h.min_length - 1) << 10) | (h.value_bits << 20) | (h.length_bits << 27);
}
ZS_HD constexpr rfor_header unpack_rfor_header(std::uint32_t word) noexcept {
  return {(word & 1023U) + 1, ((word >> 10) & 1023U) + 1, (word >> 20) & 127U, (word >> 27) & 15U};
}
/// Data words of an rfor block, header and reference included.
ZS_HD constexpr std::uint64_t rfor_block_words(const rfor_header& h, std::uint32_t width_bits) noexcept {
  return 1 + reference_words(width_bits) + field_words(h.runs, h.value_bits) + field_words(h.runs, h.length_bits);
}

// --- codec parameters (header bytes 40..55) --------------------------------------------------
//   bytes 0..1   u16 values per block: 128 (for, dfor) or 512 (rfor)
//   byte  2      blocks per delta tile: 4 (dfor), 0 (for, rfor)
//   bytes 3..7   zero
//   bytes 8..15  u64 data words: 32-bit words of the data section
ZS_HD constexpr std::uint32_t params_block_values(scheme s) noexcept {
  return s == scheme::rfor ? rfor_block_values : block_values;
}
ZS_HD constexpr std::uint32_t params_tile_blocks(scheme s) noexcept {
  return s == scheme::dfor ? tile_blocks : 0;
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

ZS_HD constexpr std::uint32_t width_bits_of(value_type type) noexcept {
  return static_cast<std::uint32_t>(value_width(type)) * 8;
}
ZS_HD constexpr bool is_integer_type(value_type type) noexcept {
  return type == value_type::int32 || type == value_type::uint32 || type == value_type::int64 ||
         type == value_type::uint64;
}
ZS_HD constexpr bool is_signed_type(value_type type) noexcept {
  return type == value_type::int32 || type == value_type::int64;
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
    return h.payload_bytes == h.raw_bytes ? frame_status::ok : frame_status::corrupt_payload;
  }
  if (s != scheme::for_ && s != scheme::dfor && s != scheme::rfor) return frame_status::wrong_codec;
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
/// field i (already below 2^bits). Bits past the last field are zero.
template <typename F>
ZS_HD inline std::uint32_t gather_word(std::uint64_t k, std::uint32_t bits, std::uint64_t count,
                                       F field) noexcept {
  std::uint64_t const lo = (32 * k) / bits;
  std::uint64_t hi = (32 * k + 31) / bits;
  if (hi > count - 1) hi = count - 1;
  std::uint32_t word = 0;
  for (std::uint64_t i = lo; i <= hi; ++i) {
    auto const shift = static_cast<std::int64_t>(i * bits) - static_cast<std::int64_t>(32 * k);
    auto const v = static_cast<std::uint64_t>(field(i));
    word |= static_cast<std::uint32_t>(shift >= 0 ? v << shift : v >> -shift);
  }
  return word;
}

// --- block validation ------------------------------------------------------------------------

/// Checks the blocks of segment `seg` (values [512 seg, 512 seg + 512)) of a frame whose layout
/// passed read_layout: block starts, widths, sizes that tile the data section exactly, and for
/// rfor the run lengths. Reads only inside starts[0..blocks) and data[0..data_words).
/// Together over all segments these guarantee that every block lies inside the data section.
ZS_HD inline bool segment_is_valid(const frame_layout& f, const std::uint32_t* starts,
                                   const std::uint32_t* data, std::uint64_t seg) noexcept {
  std::uint32_t const rw = reference_words(f.width_bits);
  std::uint64_t const dw = f.data_words;
  if (f.kind == scheme::for_ || f.kind == scheme::dfor) {
    bool const delta = f.kind == scheme::dfor;
    std::uint64_t const first = seg * tile_blocks;
    std::uint64_t const count = first + tile_blocks < f.blocks ? tile_blocks : f.blocks - first;
    // All loads first, none depending on another's check, so that a GPU thread issues them
    // together; a start out of range reads nothing and fails below.
    // Loops of a fixed length keep these arrays in registers on the GPU.
    std::uint64_t st[tile_blocks + 1];
    std::uint32_t widths[tile_blocks];
    for (std::uint64_t k = 0; k <= tile_blocks; ++k) {
      st[k] = k <= count && first + k < f.blocks ? starts[first + k] : dw;
    }
    bool ok = true;
    for (std::uint64_t k = 0; k < tile_blocks; ++k) {
      bool const room = st[k] <= dw && dw - st[k] >= rw + 1;
      widths[k] = k < count && room ? data[st[k] + rw] : 0;
      ok = ok && (k >= count || room);
    }
    if (first == 0 && st[0] != (delta ? rw : 0)) ok = false;
    for (std::uint64_t k = 0; k < tile_blocks; ++k) {
      if (k >= count) break;
      for (std::uint32_t j = 0; j < miniblocks; ++j) {
        if (width_of(widths[k], j) > f.width_bits) ok = false;
      }
      std::uint64_t const i = first + k;
      std::uint64_t const size = rw + 1 + widths_sum(widths[k]);
      std::uint64_t next = st[k + 1];
      if (delta && i + 1 < f.blocks && (i + 1) % tile_blocks == 0) {
        // The next tile's first value sits between the two blocks.
        next = next < rw ? 0 : next - rw;
        if (st[k + 1] < rw) ok = false;
      }
      if (next < st[k] || next - st[k] != size) ok = false;
    }
    return ok;
  }
  if (f.kind != scheme::rfor) return false;
  std::uint64_t const st = starts[seg];
  if (seg == 0 && st != 0) return false;
  if (st > dw || dw - st < 1 + rw) return false;
  std::uint32_t const word = data[st];
  if ((word >> 31) != 0) return false;
  rfor_header const h = unpack_rfor_header(word);
  std::uint64_t const values = f.count - seg * rfor_block_values < rfor_block_values
                                   ? f.count - seg * rfor_block_values
                                   : rfor_block_values;
  if (h.runs > values || h.value_bits > f.width_bits || h.length_bits > rfor_max_length_width) {
    return false;
  }
  std::uint64_t const size = rfor_block_words(h, f.width_bits);
  std::uint64_t const next = seg + 1 < f.blocks ? starts[seg + 1] : dw;
  if (next < st || next - st != size) return false;
  // Every run is at least min_length >= 1 long; together they must cover the block exactly.
  const std::uint32_t* lengths = data + st + 1 + rw + field_words(h.runs, h.value_bits);
  std::uint64_t total = 0;
  for (std::uint32_t k = 0; k < h.runs; ++k) {
    total += h.min_length + read_field(lengths, static_cast<std::uint64_t>(k) * h.length_bits, h.length_bits);
  }
  return total == values;
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
/// is never larger than raw. data_words[i] is the data section of scheme i + 1.
ZS_HD inline scheme pick_scheme(std::uint64_t count, std::uint64_t raw_bytes,
                                const std::uint64_t data_words[3]) noexcept {
  scheme best = scheme::raw;
  std::uint64_t best_bytes = raw_bytes;
  for (int i = 0; i < 3; ++i) {
    auto const s = static_cast<scheme>(i + 1);
    std::uint64_t const bytes = scheme_payload_bytes(s, count, data_words[i]);
    if (bytes < best_bytes) {
      best = s;
      best_bytes = bytes;
    }
  }
  return best;
}

}  // namespace zs::bitpack
