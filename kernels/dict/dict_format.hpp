// The dict codec's format rules (docs/FORMAT.md, "Codec 12: dict"), shared by the CPU reference
// (lib/src/codecs/dict/dict_codec.cpp) and the GPU kernels, so that both write the same bytes and
// refuse the same frames.
//
// Integer columns of few distinct values, or of long runs. A frame is one of three forms, each
// of embedded frames of the extended bit-packing codec (bitpack_ext):
// - plain: its values as one embedded frame;
// - dictionary: the frame's distinct values in ascending order, then one code per row (the
//   row's entry) in the unsigned type of the values' width. The codes of a column of 64 distinct
//   values pack into 6 bits whatever the values' spread;
// - runs: the lengths of its runs of equal values (uint32), then each run's value. A run-heavy
//   column's values then cost a field per run, not a block header per 512 rows, and
//   bitpack_ext codes the run values of a sorted column by their differences.
//
// Codec parameters (16 bytes at header offset 40): u64 E, the form: 0 plain, d (1..4096) a
// dictionary of d entries, runs_flag + R runs; and u64 Ld, the bytes of the first embedded frame
// (0 when plain). The payload is
//
//   offset          size         content
//   0               Ld           the dictionary frame (d values of the frame's type), or the
//                                lengths frame (R uint32 values); none when plain
//   Ld              to 16        zero
//   A = align(Ld)   the rest     the main frame: the n values (plain), the n codes, or the R run values
//
// The encoder finds a frame's distinct values while there are at most entry_limit(n) of them, and
// its runs where it has at most max_runs(n); it writes the form of the smallest payload (ties:
// plain, then the dictionary).
#pragma once

#include <cstddef>
#include <cstdint>

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
  std::uint64_t entries = 0;           // E: 0, d, or runs_flag + R
  std::uint64_t dictionary_bytes = 0;  // Ld: bytes of the dictionary or lengths frame

  ZS_HD bool plain() const noexcept { return entries == 0; }
  ZS_HD bool runs() const noexcept { return (entries & runs_flag) != 0; }
  ZS_HD bool dictionary() const noexcept { return !plain() && !runs(); }
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
