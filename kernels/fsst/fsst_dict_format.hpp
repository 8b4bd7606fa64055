// The fsst_dict body as the GPU decoder reads it (docs/FORMAT.md, "Codec 7: fsst_dict"): the
// checks of the body's own fields, made before any of its sections is read; the dictionary
// section recast as an fsst frame of its own, so that the fsst codec's decoder checks and decodes
// it with fsst's rules; and the rows gathered from the decoded dictionary into their target.
// Every function is ZS_HD: the kernels (fsst_dict_kernels.cu) run them, and the tests run them
// on the CPU against the CPU reference (lib/src/codecs/fsst/fsst_dict_codec.cpp), which stays
// the definition of what a decoder accepts and writes.
//
//   frame:    [64] header: codec parameters u64 S, u64 d
//             [16 + 2064] parameter section: prefix, the fsst symbol table
//             body:  [32] u64 Lc, u64 Cd, u64 Ld, u64 0
//                    [Lc] the codes frame (bitpack, n uint64 codes), zero to a multiple of 16
//                    [the rest] the dictionary: an fsst strings section of d strings, Cd characters
#pragma once

#include <cstddef>
#include <cstdint>

#include "fsst/fsst_format.hpp"
#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/overflow.hpp"

namespace zs::fsst_dict {

/// The body's first bytes: Lc, Cd, Ld and a zero word.
inline constexpr std::uint64_t dict_header_bytes = 32;
/// Where the body starts in the payload: after the parameter section of the symbol table (the
/// same place as in an fsst frame, whose column parameters these are).
inline constexpr std::uint64_t body_at = params_section_bytes(fsst::table_bytes);
/// Where the codes frame starts, from the frame's first byte.
inline constexpr std::uint64_t codes_frame_at = frame_header_bytes + body_at + dict_header_bytes;

/// What read_body found of one frame: where its dictionary section lies and what it holds.
/// All zero for a frame that is not decoded.
struct dictionary_section {
  std::uint64_t ok;             // 1: the body's fields passed; the codes and dictionary are to be decoded
  std::uint64_t entries;        // d
  std::uint64_t chars;          // Cd
  std::uint64_t split_bytes;    // S
  std::uint64_t lengths_bytes;  // Ld: the dictionary's lengths frame
  std::uint64_t section_at;     // the section's first byte, from the frame's first byte
  std::uint64_t section_bytes;
  std::uint64_t codes_bytes;    // Lc
};

/// Checks the body of a frame whose header the framework validated (its payload lies in the
/// buffer and starts with the parameter section): FORMAT.md's rules for the body's fields, the
/// codes frame's header filling Lc exactly, and of the dictionary section its layout and split
/// offsets (fsst's rules: the offsets start at 0, never decrease, give no split more bytes than
/// its characters, and end at the data section's end). False at the first rule broken; what is
/// left to check (the codes and lengths frames' contents, the splits, a code of d or more, the
/// rows' characters adding up to C) is the embedded decoders' and the row pass's.
///
/// Every byte it reads lies inside the payload; so does every byte of the sections it accepts,
/// which the fsst decoder then reads only within the offsets checked here.
/// The header and the payload apart: the CPU reference's decoder gets them so.
ZS_HD inline bool read_body(const frame_header& h, const std::byte* payload, dictionary_section& out) noexcept {
  out = dictionary_section{};
  if (h.payload_bytes < body_at) return false;  // the framework's check; kept for a reader
  std::uint64_t const body_bytes = h.payload_bytes - body_at;
  const std::byte* body = payload + body_at;
  if (body_bytes < dict_header_bytes) return false;
  std::uint64_t const codes_bytes = detail::load_le(body, 8);
  std::uint64_t const dict_chars = detail::load_le(body + 8, 8);
  std::uint64_t const lengths_bytes = detail::load_le(body + 16, 8);
  std::uint64_t const split = detail::load_le(h.params.data(), 8);
  std::uint64_t const distinct = detail::load_le(h.params.data() + 8, 8);
  std::uint64_t const n = h.value_count;
  if (detail::load_le(body + 24, 8) != 0 || distinct > n || (n != 0 && distinct == 0)) return false;
  if (codes_bytes < frame_header_bytes || codes_bytes > body_bytes - dict_header_bytes ||
      add_overflows(dict_header_bytes + codes_bytes, frame_alignment - 1)) {
    return false;
  }
  std::uint64_t const section_at = align_frame(dict_header_bytes + codes_bytes);
  if (section_at > body_bytes) return false;
  std::uint64_t const section_bytes = body_bytes - section_at;
  // A code stands for at most 8 characters: a larger dictionary cannot be in the section.
  if (dict_chars / 8 > section_bytes) return false;
  if (load_header(body + dict_header_bytes).payload_bytes != codes_bytes - frame_header_bytes) return false;
  const std::byte* section = body + section_at;
  fsst::body_layout layout{};
  if (!fsst::read_section(split, lengths_bytes, dict_chars, section_bytes, layout)) return false;
  if (!fsst::check_split_offsets(section, layout, dict_chars)) return false;
  out.ok = 1;
  out.entries = distinct;
  out.chars = dict_chars;
  out.split_bytes = split;
  out.lengths_bytes = lengths_bytes;
  out.section_at = frame_header_bytes + body_at + section_at;
  out.section_bytes = section_bytes;
  out.codes_bytes = codes_bytes;
  return true;
}

ZS_HD inline bool read_body(const std::byte* frame, dictionary_section& out) noexcept {
  return read_body(load_header(frame), frame + frame_header_bytes, out);
}

/// Bytes of the fsst frame that holds a dictionary section of `section_bytes` bytes, rounded up
/// to frame_alignment (the dictionaries' frames lie back to back in one batch). The section lies
/// in a payload of the buffer, so the sum cannot wrap.
ZS_HD constexpr std::uint64_t dictionary_frame_bytes(std::uint64_t section_bytes) noexcept {
  return align_frame(frame_header_bytes + body_at + section_bytes);
}

/// Writes, at `dict_frame`, the header and parameter prefix of the fsst frame that holds the
/// dictionary of `s`: a version 2 fsst frame of d strings and Cd characters whose codec
/// parameters are S and Ld, checksum 0 (decoded as an embedded frame: the enclosing frame's
/// checksum covered its bytes). The caller copies the symbol table (payload offset 16,
/// table_bytes) and the section (at body_at) into place from the fsst_dict frame.
ZS_HD inline void store_dictionary_frame_header(std::byte* dict_frame, const dictionary_section& s) noexcept {
  frame_header h{};
  h.magic = frame_magic;
  h.version = frame_version_params;
  h.codec = codec_id::fsst;
  h.type = value_type::string;
  h.value_count = s.entries;
  h.raw_bytes = s.chars;
  h.payload_bytes = body_at + s.section_bytes;
  h.payload_checksum = 0;
  detail::store_le(h.params.data(), s.split_bytes, 8);
  detail::store_le(h.params.data() + 8, s.lengths_bytes, 8);
  store_header(h, dict_frame);
  store_params_prefix(dict_frame + frame_header_bytes, fsst::table_bytes, s.section_bytes);
}

// ---- the rows ----
//
// Once the dictionary and the codes are decoded and checked, and the rows' offsets computed (an
// exclusive scan of their entries' lengths), the characters are gathered by windows of the
// target: unit u of a frame is the u-th gather_unit_bytes-aligned window of target memory that
// the frame's characters touch. Each window is one thread's work whatever the rows' lengths
// (short rows share a window, a long row spans many), and a window filled whole is written with
// aligned 16-byte stores.

inline constexpr std::uint64_t gather_unit_bytes = 64;

/// The units of a frame whose `chars` characters go to `out` (the target's characters + its
/// chars_begin): the aligned windows they touch; 0 for none.
ZS_HD inline std::uint64_t gather_units(const void* out, std::uint64_t chars) noexcept {
  if (chars == 0) return 0;
  std::uint64_t const skew = reinterpret_cast<std::uintptr_t>(out) % gather_unit_bytes;
  // skew + chars cannot wrap: they are bytes of one allocation.
  return (skew + chars - 1) / gather_unit_bytes + 1;
}

/// The rows of one frame as the gather reads them: row r's characters are entry codes[r] of the
/// dictionary (entry k at entry_chars + entry_offsets[k], to entry_offsets[k + 1]), and start at
/// row_prefix[r] - row_prefix[0] in the frame's characters (row_prefix: rows + 1 entries of a
/// scan of the rows' lengths, possibly offset by earlier frames' rows: only differences count).
struct gather_rows {
  const std::uint64_t* row_prefix;
  const std::uint64_t* codes;
  const std::int64_t* entry_offsets;
  const std::uint8_t* entry_chars;
  std::uint64_t rows;
  std::uint64_t chars;  // C, the last row's end

  ZS_HD std::uint64_t start(std::uint64_t r) const noexcept { return r == rows ? chars : row_prefix[r] - row_prefix[0]; }
  ZS_HD const std::uint8_t* entry(std::uint64_t r) const noexcept {
    return entry_chars + static_cast<std::uint64_t>(entry_offsets[codes[r]]);
  }
  /// The row that holds character `pos` (below chars): the last row starting at or before it,
  /// which is not empty since the next one starts after it.
  ZS_HD std::uint64_t row_of(std::uint64_t pos) const noexcept {
    std::uint64_t lo = 0, hi = rows;  // start(lo) <= pos < start(hi)
    while (hi - lo > 1) {
      std::uint64_t const mid = lo + (hi - lo) / 2;
      if (start(mid) <= pos) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
};

/// Writes unit `unit` (below gather_units(out, rows.chars)) of a frame's characters at `out`,
/// for rows whose codes were checked against the dictionary and whose lengths add up to
/// rows.chars: every byte read lies in an entry, every byte written in out[0, chars).
ZS_HD inline void gather_unit(std::uint8_t* out, const gather_rows& rows, std::uint64_t unit) noexcept {
  std::uint64_t const skew = reinterpret_cast<std::uintptr_t>(out) % gather_unit_bytes;
  std::uint64_t const lo = unit == 0 ? 0 : unit * gather_unit_bytes - skew;
  std::uint64_t const window_end = (unit + 1) * gather_unit_bytes - skew;
  std::uint64_t const hi = window_end < rows.chars ? window_end : rows.chars;
  // A whole window starts on a gather_unit_bytes boundary of memory: out - skew + unit x 64.
  bool const whole = hi - lo == gather_unit_bytes;
  std::uint64_t row = rows.row_of(lo);
  std::uint64_t row_begin = rows.start(row), row_end = rows.start(row + 1);
  const std::uint8_t* entry = rows.entry(row);
  std::uint64_t w0 = 0, w1 = 0;  // the 16 bytes being gathered, for a whole window
  for (std::uint64_t pos = lo; pos < hi; ++pos) {
    while (pos >= row_end) {  // the next row with characters; empty rows are passed over
      ++row;
      row_begin = row_end;
      row_end = rows.start(row + 1);
      entry = rows.entry(row);
    }
    std::uint64_t const byte = entry[pos - row_begin];
    if (!whole) {
      out[pos] = static_cast<std::uint8_t>(byte);
      continue;
    }
    std::uint64_t const k = (pos - lo) % 16;
    if (k < 8) {
      w0 |= byte << (8 * k);
    } else {
      w1 |= byte << (8 * (k - 8));
    }
    if (k == 15) {
      fsst::store16(out + pos - 15, w0, w1);
      w0 = w1 = 0;
    }
  }
}

}  // namespace zs::fsst_dict
