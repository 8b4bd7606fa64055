// The dict codec's format rules (docs/FORMAT.md, "Codec 12: dict"), shared by the CPU reference
// (lib/src/codecs/dict/dict_codec.cpp) and the GPU kernels, so that both write the same bytes and
// refuse the same frames.
//
// Integer columns of few distinct values, of long runs, or of values that change smoothly. A
// frame is one of four forms, each of embedded frames of the extended bit-packing codec
// (bitpack_ext):
// - plain: its values as one embedded frame;
// - dictionary: the frame's distinct values in ascending order, then one code per row (the
//   row's entry) in the unsigned type of the values' width. The codes of a column of 64 distinct
//   values pack into 6 bits whatever the values' spread;
// - runs: the lengths of its runs of equal values (uint32), then each run's value. A run-heavy
//   column's values then cost a field per run, not a block header per 512 rows, and
//   bitpack_ext codes the run values of a sorted column by their differences.
// - differences: each row's difference from the row before, less a base per group of 32 rows
//   (one of the group's differences), as residuals in the unsigned type of the values' width;
//   the bases and each tile's first value in a frame of their own (the signed type of that
//   width). A group's base follows the local slope, which bitpack_ext's one reference per 128
//   differences does not; choosing it among the group's three least differences lets a wrap or
//   an outlier become an exception of the residuals' patched blocks instead of their reference.
//
// Codec parameters (16 bytes at header offset 40): u64 E, the form: 0 plain, d (1..4096) a
// dictionary of d entries, runs_flag + R runs, deltas_flag the differences; and u64 Ld, the bytes
// of the first embedded frame (0 when plain). The payload is
//
//   offset          size         content
//   0               Ld           the dictionary frame (d values of the frame's type), the
//                                lengths frame (R uint32 values), or the bases frame
//                                (side_count(n) values of base_type); none when plain
//   Ld              to 16        zero
//   A = align(Ld)   the rest     the main frame: the n values (plain), the n codes, the R run
//                                values, or the n residuals
//
// The encoder finds a frame's distinct values while there are at most entry_limit(n) of them, and
// its runs where it has at most max_runs(n), and the differences of every frame of 16 rows or
// more; it writes the form of the smallest payload (ties: plain, dictionary, runs, differences).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bitpack/bitpack_format.hpp"
#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

namespace zs::dict {

/// The most entries a dictionary may have: its codes need at most 12 bits, and the GPU keeps a
/// dictionary's keys in 32 KiB of shared memory.
inline constexpr std::uint64_t max_entries = 4096;
/// The encoder looks for a dictionary of at most one entry per this many rows: fewer rows per
/// entry rarely pay for the dictionary, and the GPU's hash tables stay within 2 bytes a row.
inline constexpr std::uint64_t rows_per_entry = 16;

/// The runs form's flag in the form field: E = runs_flag + R.
inline constexpr std::uint64_t runs_flag = std::uint64_t{1} << 63;
/// The encoder tries the runs form where a frame has at most a run per this many rows; its
/// lengths are uint32, so a frame of runs has fewer than 2^32 rows.
inline constexpr std::uint64_t rows_per_run = 4;
inline constexpr std::uint64_t max_run_rows = 0xffffffffULL;

/// The differences form's flag in the form field: E = deltas_flag (no count: the bases frame's
/// count follows from n).
inline constexpr std::uint64_t deltas_flag = std::uint64_t{1} << 62;
/// Rows of a group, whose differences share a base: a miniblock of bitpack_ext's blocks, so a
/// group's residuals are one miniblock of the residuals frame.
inline constexpr std::uint64_t group_rows = 32;
/// Rows of a tile, which a decoder adds up on its own from the tile's first value.
inline constexpr std::uint64_t tile_rows = 4096;
/// The least differences of a group the encoder weighs as its base.
inline constexpr unsigned base_candidates = 3;

/// The value types the codec encodes: the integers (bool8 as a uint8).
ZS_HD constexpr bool encodes(value_type type) noexcept { return is_integer(type); }

/// The most entries the encoder looks for in a frame of `rows` rows (0: no dictionary).
ZS_HD constexpr std::uint64_t entry_limit(std::uint64_t rows) noexcept {
  return rows / rows_per_entry < max_entries ? rows / rows_per_entry : max_entries;
}

/// The most runs the encoder takes a frame of `rows` rows in the runs form (0: none, below 16
/// rows or at 2^32 rows and more).
ZS_HD constexpr std::uint64_t max_runs(std::uint64_t rows) noexcept {
  return rows < rows_per_entry || rows > max_run_rows ? 0 : rows / rows_per_run;
}

/// Whether the encoder tries the differences form on a frame of `rows` rows: 16 rows or more.
ZS_HD constexpr bool tries_deltas(std::uint64_t rows) noexcept { return rows >= rows_per_entry; }

/// Groups and tiles of a frame of `rows` rows, and the bases frame's values: a base per group,
/// then each tile's first value.
ZS_HD constexpr std::uint64_t groups_of(std::uint64_t rows) noexcept { return (rows + group_rows - 1) / group_rows; }
ZS_HD constexpr std::uint64_t tiles_of(std::uint64_t rows) noexcept { return (rows + tile_rows - 1) / tile_rows; }
ZS_HD constexpr std::uint64_t side_count(std::uint64_t rows) noexcept { return groups_of(rows) + tiles_of(rows); }

/// Slots of the GPU encoder's hash table for a frame of `rows` rows: a power of two at least
/// twice its entry limit (0 where it looks for no dictionary). At most rows / 4.
ZS_HD constexpr std::uint64_t table_slots(std::uint64_t rows) noexcept {
  std::uint64_t const limit = entry_limit(rows);
  if (limit == 0) return 0;
  std::uint64_t slots = 2;
  while (slots < 2 * limit) slots *= 2;
  return slots;
}

/// The type of a dictionary frame's codes: the unsigned integer of the values' width, so that a
/// decoder can unpack the codes into the target and replace each by its value in place.
ZS_HD constexpr value_type code_type(value_type type) noexcept {
  switch (value_width(type)) {
    case 1: return value_type::uint8;
    case 2: return value_type::uint16;
    case 4: return value_type::uint32;
    default: return value_type::uint64;
  }
}

/// The type of the bases frame: the signed integer of the values' width, so that bitpack_ext
/// takes a block's reference as the least base in signed order (the bases of a falling stretch
/// are small negative numbers). Its tiles' first values are the values' bits.
ZS_HD constexpr value_type base_type(value_type type) noexcept {
  switch (value_width(type)) {
    case 1: return value_type::int8;
    case 2: return value_type::int16;
    case 4: return value_type::int32;
    default: return value_type::int64;
  }
}

/// The words bitpack_ext's pfor gives a miniblock of the fields (d[k] - base) mod 2^bits, k <
/// count (the rest of its 32 fields 0): the shift its fields share, and the low width of the
/// fewest words (bitpack::best_low_width). `mask`: the low `bits` bits.
ZS_HD inline std::uint32_t group_words(const std::uint64_t* d, unsigned count, std::uint64_t base,
                                       std::uint64_t mask) noexcept {
  std::uint64_t any = 0;
  for (unsigned k = 0; k < count; ++k) any |= (d[k] - base) & mask;
  if (any == 0) return 0;
  std::uint32_t const shift = bitpack::bit_width(any & (~any + 1)) - 1;
  std::uint32_t at_width[65] = {};
  for (unsigned k = 0; k < count; ++k) ++at_width[bitpack::bit_width(((d[k] - base) & mask) >> shift)];
  std::uint32_t full = 64;
  while (at_width[full] == 0) --full;
  // at_least[b]: the fields of more than b bits.
  std::uint32_t at_least[65];
  at_least[full] = 0;
  for (std::uint32_t b = full; b-- > 0;) at_least[b] = at_least[b + 1] + at_width[b + 1];
  std::uint32_t const low = bitpack::best_low_width(at_least, full);
  return bitpack::patched_miniblock_words(low, full, at_least[low]);
}

/// The base rule, for either side's way of finding a group's keys and sizing its residuals: of
/// its base_candidates least distinct differences (keys: the differences ^ `sign`, in the signed
/// order of their width), the one whose residuals take the fewest words, the least of equal
/// ones. least_key(first, above, found): the group's least key (above `above` unless `first`),
/// `found` false where there is none; words_of(base): the words of its residuals.
template <typename LeastKey, typename WordsOf>
ZS_HD inline std::uint64_t pick_base(std::uint64_t sign, LeastKey least_key, WordsOf words_of) noexcept {
  std::uint64_t best = 0, above = 0;
  std::uint32_t best_words = ~std::uint32_t{0};
  for (unsigned c = 0; c < base_candidates; ++c) {
    bool found = false;
    above = least_key(c == 0, above, found);
    if (!found) break;
    std::uint32_t const words = words_of(above ^ sign);
    if (words < best_words) {
      best = above ^ sign;
      best_words = words;
    }
  }
  return best;
}

/// A group's base (pick_base, sized by group_words). d: the group's count differences (1 to 32),
/// each below 2^bits; `sign` their sign bit, `mask` the low `bits` bits.
ZS_HD inline std::uint64_t choose_base(const std::uint64_t* d, unsigned count, std::uint64_t sign,
                                       std::uint64_t mask) noexcept {
  auto const least_key = [&](bool first, std::uint64_t above, bool& found) {
    std::uint64_t least = ~std::uint64_t{0};
    for (unsigned k = 0; k < count; ++k) {
      std::uint64_t const key = d[k] ^ sign;
      if ((first || key > above) && key <= least) {
        least = key;
        found = true;
      }
    }
    return least;
  };
  return pick_base(sign, least_key, [&](std::uint64_t base) { return group_words(d, count, base, mask); });
}

/// What a value's bits are XORed with to give its key: keys compare as unsigned 64-bit integers
/// in the order of the values (the sign bit flipped for signed types).
ZS_HD constexpr std::uint64_t key_flip(value_type type) noexcept {
  return is_signed_integer(type) ? std::uint64_t{1} << (8 * value_width(type) - 1) : 0;
}

/// The key no table slot holds (an empty slot): all ones, which is only the key of the largest
/// value of a 64-bit type.
inline constexpr std::uint64_t empty_key = ~std::uint64_t{0};

/// Where the main frame starts in the payload.
ZS_HD constexpr std::uint64_t main_frame_at(std::uint64_t dictionary_bytes) noexcept {
  return align_frame(dictionary_bytes);
}

/// The codec parameters.
struct fields {
  std::uint64_t entries = 0;           // E: 0, d, runs_flag + R, or deltas_flag
  std::uint64_t dictionary_bytes = 0;  // Ld: bytes of the dictionary, lengths or bases frame

  ZS_HD bool plain() const noexcept { return entries == 0; }
  ZS_HD bool runs() const noexcept { return (entries & runs_flag) != 0; }
  ZS_HD bool deltas() const noexcept { return entries == deltas_flag; }
  ZS_HD bool dictionary() const noexcept { return !plain() && !runs() && !deltas(); }
  /// R, for the runs form.
  ZS_HD std::uint64_t run_count() const noexcept { return entries & ~runs_flag; }
};

ZS_HD inline fields load_fields(const frame_header& h) noexcept {
  return {detail::load_le(h.params.data() + 0, 8), detail::load_le(h.params.data() + 8, 8)};
}

/// Writes the header fields the encoder owns: codec id, payload bytes and the parameters.
ZS_HD inline void store_fields(std::byte* frame, fields f, std::uint64_t payload_bytes) noexcept {
  store_encoder_fields(frame, codec_id::dict, payload_bytes);
  detail::store_le(frame + 40, f.entries, 8);
  detail::store_le(frame + 48, f.dictionary_bytes, 8);
}

/// The payload bytes field of the embedded frame at `at` (its header lies inside the payload).
ZS_HD inline std::uint64_t embedded_payload_bytes(const std::byte* at) noexcept { return detail::load_le(at + 24, 8); }

/// The format's rules on a frame whose header and checksum were checked, before anything past
/// the embedded frames' headers is read: the parameters, and each embedded frame filling its
/// place exactly. What the embedded frames hold is checked by their decoder, every code against
/// d as it is replaced, and a runs frame's lengths (each at least 1, adding up to n) before any
/// row is written.
ZS_HD inline frame_status check_frame(const frame_header& h, const std::byte* payload) noexcept {
  fields const f = load_fields(h);
  std::uint64_t const p = h.payload_bytes;
  std::uint64_t const n = h.value_count;
  if (!encodes(h.type)) return frame_status::unsupported_type;
  std::uint64_t main_at = 0;
  if (f.plain()) {
    if (f.dictionary_bytes != 0) return frame_status::corrupt_payload;
  } else {
    if (f.runs()) {
      // At least one run; no more runs than rows; lengths that fit their uint32.
      if (f.run_count() == 0 || f.run_count() > n || n > max_run_rows) return frame_status::corrupt_payload;
    } else if (f.deltas()) {
      if (n == 0) return frame_status::corrupt_payload;
    } else {
      bool const codes_fit = value_width(h.type) >= 2 || f.entries <= 256;
      if (f.entries > n || f.entries > max_entries || !codes_fit) return frame_status::corrupt_payload;
    }
    if (f.dictionary_bytes < frame_header_bytes || f.dictionary_bytes > p) return frame_status::corrupt_payload;
    main_at = main_frame_at(f.dictionary_bytes);
    if (main_at > p) return frame_status::corrupt_payload;
    if (embedded_payload_bytes(payload) != f.dictionary_bytes - frame_header_bytes) return frame_status::corrupt_payload;
  }
  if (p - main_at < frame_header_bytes) return frame_status::corrupt_payload;
  if (embedded_payload_bytes(payload + main_at) != p - main_at - frame_header_bytes) return frame_status::corrupt_payload;
  return frame_status::ok;
}

}  // namespace zs::dict
