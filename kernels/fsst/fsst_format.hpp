// The fsst codec's format (docs/FORMAT.md, "Codec 5: fsst"): the symbol table, its lookup
// structures, one split's encoder and decoder, and the body's layout rules. Every function here
// is ZS_HD: the CPU reference (lib/src/codecs/fsst) and the GPU kernels (kernels/fsst) call the
// same code, so that both write the same bytes and refuse the same frames.
//
//   column parameters: the symbol table in the FSST reference layout (table_bytes, zero padded)
//   codec parameters:  u64 split bytes S, u64 lengths bytes L
//   body:              [L] an embedded bitpack frame of the count string lengths (uint64)
//                      [to 16] zero
//                      [8 (k + 1)] u64 split offsets into the data section, k = ceil(chars / S)
//                      [D] the splits, back to back: split i encodes characters [i S, i S + S)
//                          on its own; stored raw when it is exactly its characters' size
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/overflow.hpp"

namespace zs::fsst {

/// Codes 0..254 name symbols; 255 escapes the next byte, which stands for itself.
inline constexpr std::uint32_t max_symbols = 255;
inline constexpr std::uint8_t escape_code = 255;
inline constexpr std::uint32_t max_symbol_bytes = 8;

// The table's serialized form, the FSST reference library's export layout:
//   bytes 0..7   version word: (20190218 << 32) | suffix_limit << 24 | terminator << 16 |
//                symbol count << 8 | 1 (the endianness marker)
//   byte  8      zero-terminated mode: always 0 here
//   bytes 9..16  symbols of each length 1..8
//   bytes 17..   the symbols' bytes in code order: the 2-byte symbols, then 3..8 bytes, then
//                the 1-byte symbols; zero after the last up to table_bytes
inline constexpr std::uint64_t reference_version = 20190218;
inline constexpr std::uint64_t table_header_bytes = 17;
/// The column parameter block: the largest export (17 + 255 x 8 = 2057 bytes) rounded to 8.
inline constexpr std::uint64_t table_bytes = 2064;

/// Splits: a frame's characters are cut into splits of this many bytes (the last may be
/// shorter). The header carries the size, 64 bits wide, but this version of the format fixes it,
/// so that the GPU decoder plans its splits on the host from the frame's character count alone.
inline constexpr std::uint64_t default_split_bytes = 16384;

/// Reads up to 8 bytes little-endian (the first `n` of `p`) into a word; the rest are zero.
ZS_HD inline std::uint64_t load_symbol(const std::uint8_t* p, std::uint32_t n) noexcept {
#if !defined(__CUDA_ARCH__)
  // On the host a whole word is one unaligned load (the table builder and the CPU reference
  // match at every symbol); the GPU reads words through load_bytes.
  if (n == 8 && std::endian::native == std::endian::little) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
#endif
  std::uint64_t v = 0;
  for (std::uint32_t k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
  return v;
}
ZS_HD constexpr std::uint64_t symbol_mask(std::uint32_t length) noexcept {
  return length >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * length)) - 1;
}

/// What a decoder needs: each code's bytes and length (0 for codes the table does not define).
struct decode_table {
  std::uint64_t symbol[256];
  std::uint8_t length[256];
  std::uint32_t count;  // symbols defined: codes 0..count-1
};

/// Checks a serialized table's header (its first table_header_bytes): false for another version
/// or endianness marker, zero-terminated mode, a symbol count other than the sum of the length
/// counts or above 255, a suffix limit above the 2-byte symbols, a terminator other than 0. Sets
/// `symbol_bytes` to the bytes of the symbols that follow it (the rest of the block must be zero).
ZS_HD inline bool check_table_header(const std::uint8_t* b, std::uint32_t& symbol_bytes) noexcept {
  std::uint64_t const version = load_symbol(b, 8);
  if ((version >> 32) != reference_version || (version & 0xff) != 1) return false;
  std::uint32_t const count = (version >> 8) & 0xff;
  std::uint32_t const terminator = (version >> 16) & 0xff;
  std::uint32_t const suffix_limit = (version >> 24) & 0xff;
  if (b[8] != 0 || terminator != 0) return false;
  std::uint32_t sum = 0, bytes = 0;
  for (std::uint32_t l = 0; l < 8; ++l) {
    sum += b[9 + l];
    bytes += b[9 + l] * (l + 1);
  }
  symbol_bytes = bytes;
  return sum == count && count <= max_symbols && suffix_limit <= b[10];
}

/// Parses and checks a serialized table (table_bytes bytes). False when it breaks the layout:
/// check_table_header's rules, or a nonzero byte after the last symbol.
ZS_HD inline bool load_decode_table(const std::byte* block, decode_table& t) noexcept {
  auto const* b = reinterpret_cast<const std::uint8_t*>(block);
  std::uint32_t bytes = 0;
  if (!check_table_header(b, bytes)) return false;
  for (std::uint64_t k = table_header_bytes + bytes; k < table_bytes; ++k) {
    if (b[k] != 0) return false;
  }
  std::uint32_t const count = (load_symbol(b, 8) >> 8) & 0xff;
  std::uint32_t per_length[8];
  for (std::uint32_t l = 0; l < 8; ++l) per_length[l] = b[9 + l];
  for (std::uint32_t c = 0; c < 256; ++c) {
    t.symbol[c] = 0;
    t.length[c] = 0;
  }
  // Code order: lengths 2, 3, ..., 8, then 1.
  std::uint32_t code = 0, at = table_header_bytes;
  for (std::uint32_t step = 0; step < 8; ++step) {
    std::uint32_t const length = step == 7 ? 1 : step + 2;
    for (std::uint32_t i = 0; i < per_length[length - 1]; ++i, ++code) {
      t.symbol[code] = load_symbol(b + at, length);
      t.length[code] = static_cast<std::uint8_t>(length);
      at += length;
    }
  }
  t.count = count;
  return true;
}

// ---- the encoder's lookup structures (after the GPU FSST encoder's compact tables) ----

inline constexpr std::uint32_t pair_slots = 512;   // 2-byte symbols, open addressing
inline constexpr std::uint32_t long_slots = 1024;  // 3..8-byte symbols, one per slot
inline constexpr std::uint16_t no_code = 0x100;

/// Slot of a symbol of 3 or more bytes: a hash of its first three. The table builder keeps a
/// symbol out of the table when its slot is taken, so each slot holds at most one symbol and
/// the greedy match is one probe.
ZS_HD constexpr std::uint32_t long_slot(std::uint64_t first3) noexcept {
  return static_cast<std::uint32_t>(((first3 & 0xffffff) * 2654435761ULL) >> 15) & (long_slots - 1);
}
ZS_HD constexpr std::uint32_t pair_slot(std::uint32_t key) noexcept {
  return static_cast<std::uint32_t>((key * 2654435761ULL) >> 17) & (pair_slots - 1);
}

struct encode_table {
  std::uint16_t single[256];             // the code of each 1-byte symbol, or no_code
  std::uint32_t pair[pair_slots];        // key << 16 | code << 8 | 1, or 0 for an empty slot
  std::uint64_t long_bytes[long_slots];  // the symbol's bytes
  std::uint16_t long_info[long_slots];   // length << 8 | code, or 0 for an empty slot
};

/// Whether a symbol of `length` bytes (3..8) would find its slot free in `t`.
ZS_HD inline bool long_slot_free(const encode_table& t, std::uint64_t symbol) noexcept {
  return t.long_info[long_slot(symbol)] == 0;
}

ZS_HD inline void clear(encode_table& t) noexcept {
  for (std::uint32_t i = 0; i < 256; ++i) t.single[i] = no_code;
  for (std::uint32_t i = 0; i < pair_slots; ++i) t.pair[i] = 0;
  for (std::uint32_t i = 0; i < long_slots; ++i) {
    t.long_bytes[i] = 0;
    t.long_info[i] = 0;
  }
}

/// Adds symbol `code`. False (and nothing added) when its place is taken: a 1-byte or 2-byte
/// symbol already there, or a long symbol's slot in use.
ZS_HD inline bool insert(encode_table& t, std::uint64_t symbol, std::uint32_t length, std::uint32_t code) noexcept {
  if (length == 1) {
    if (t.single[symbol & 0xff] != no_code) return false;
    t.single[symbol & 0xff] = static_cast<std::uint16_t>(code);
    return true;
  }
  if (length == 2) {
    auto const key = static_cast<std::uint32_t>(symbol & 0xffff);
    for (std::uint32_t s = pair_slot(key), probes = 0; probes < pair_slots; s = (s + 1) & (pair_slots - 1), ++probes) {
      if (t.pair[s] == 0) {
        t.pair[s] = key << 16 | code << 8 | 1;
        return true;
      }
      if ((t.pair[s] >> 16) == key) return false;
    }
    return false;
  }
  std::uint32_t const slot = long_slot(symbol);
  if (t.long_info[slot] != 0) return false;
  t.long_bytes[slot] = symbol & symbol_mask(length);
  t.long_info[slot] = static_cast<std::uint16_t>(length << 8 | code);
  return true;
}

/// The encoder's structures for a parsed table. A symbol whose place is taken (never in tables
/// this codec builds) is left out: the encoder does without it.
ZS_HD inline void build_encode_table(const decode_table& d, encode_table& t) noexcept {
  clear(t);
  for (std::uint32_t c = 0; c < d.count; ++c) insert(t, d.symbol[c], d.length[c], c);
}

/// What match returns where no symbol starts the input: the byte must be escaped.
inline constexpr std::uint32_t escape_match = 1U << 16;

/// The greedy longest match at `p` with `remaining` (at least 1) bytes left: the long symbol in
/// the slot of the next three bytes if it matches, else a 2-byte symbol, else a 1-byte one.
/// Returns length << 8 | code, or escape_match.
ZS_HD inline std::uint32_t match_word(const encode_table& t, std::uint64_t next, std::uint64_t remaining) noexcept {
  if (remaining >= 3) {
    std::uint32_t const slot = long_slot(next);
    std::uint32_t const info = t.long_info[slot];
    std::uint32_t const length = info >> 8;
    if (info != 0 && length <= remaining && (next & symbol_mask(length)) == t.long_bytes[slot]) return info;
  }
  if (remaining >= 2) {
    auto const key = static_cast<std::uint32_t>(next & 0xffff);
    for (std::uint32_t s = pair_slot(key);; s = (s + 1) & (pair_slots - 1)) {
      std::uint32_t const e = t.pair[s];
      if (e == 0) break;
      if ((e >> 16) == key) return 2U << 8 | ((e >> 8) & 0xff);
    }
  }
  std::uint32_t const single = t.single[next & 0xff];
  return single == no_code ? escape_match : (1U << 8 | single);
}

/// match_word on the bytes at p.
ZS_HD inline std::uint32_t match(const encode_table& t, const std::uint8_t* p, std::uint64_t remaining) noexcept {
  return match_word(t, load_symbol(p, remaining < 8 ? static_cast<std::uint32_t>(remaining) : 8), remaining);
}

/// The `k` (at most 8) bytes at p, little-endian, of which `readable` (at least k) bytes from p
/// on may be read. On the GPU from the aligned 8-byte words that hold them (one or two loads
/// instead of k) when those words lie inside the readable bytes (the word before p's start is
/// inside the same allocation, which starts 8-byte aligned); on the CPU, and at the end of the
/// readable bytes, byte by byte, since an aligned word there may reach past the allocation.
ZS_HD inline std::uint64_t load_bytes(const std::uint8_t* p, std::uint32_t k, std::uint64_t readable) noexcept {
#if defined(__CUDA_ARCH__)
  if (k == 0) return 0;
  auto const address = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t const skew = static_cast<std::uint32_t>(address & 7);
  std::uint64_t const words_end = (skew + k + 7) / 8 * 8 - skew;  // bytes from p the words cover
  if (words_end > readable) return load_symbol(p, k);
  const auto* words = reinterpret_cast<const std::uint64_t*>(address - skew);
  std::uint64_t v = words[0] >> (8 * skew);
  if (skew + k > 8) v |= words[1] << (64 - 8 * skew);
  return v & symbol_mask(k);
#else
  (void)readable;
  return load_symbol(p, k);
#endif
}

/// Stores the 8 bytes of `w` at p: one store where p is 8-byte aligned on the GPU.
ZS_HD inline void store_bytes8(std::uint8_t* p, std::uint64_t w) noexcept {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<std::uintptr_t>(p) & 7) == 0) {
    *reinterpret_cast<std::uint64_t*>(p) = w;
    return;
  }
#endif
  for (int k = 0; k < 8; ++k) p[k] = static_cast<std::uint8_t>(w >> (8 * k));
}

inline constexpr std::uint64_t no_fit = UINT64_MAX;

/// The greedy encoder's view of a split's characters in[0, n) from position p on: a 16-byte
/// window of two words (lo holds the bytes at p) refilled 8 bytes at a time from a word loaded
/// one refill ahead, so that on the GPU a thread loads words, not single bytes, and the load's
/// latency passes while the window's bytes are matched. What the greedy match reads ahead, up
/// to 8 bytes, comes from registers. The serial encoder (encode_split) and each lane of the
/// warp encoder (fsst_warp.hpp, starting mid-split) read through it. Positions are of type
/// Position: 32 bits hold a split's, and spare the warp encoder registers.
template <class Position>
struct basic_greedy_cursor {
  const std::uint8_t* in;
  Position n;
  Position p;        // the position whose bytes lo starts with
  Position fetched;  // bytes of the input read into the window so far
  std::uint64_t lo, hi;
  std::uint64_t next;  // the word after the window

  ZS_HD static std::uint32_t take(Position left) noexcept { return left < 8 ? static_cast<std::uint32_t>(left) : 8U; }

  /// The window at position `at` (at most n) of in[0, n).
  ZS_HD void start(const std::uint8_t* chars, Position count, Position at) noexcept {
    in = chars;
    n = count;
    p = at;
    Position const left = n - at;
    lo = left == 0 ? 0 : load_bytes(in + at, take(left), left);
    hi = left > 8 ? load_bytes(in + at + 8, take(left - 8), left - 8) : 0;
    fetched = at + (left < 16 ? left : Position{16});
    next = fetched < n ? load_bytes(in + fetched, take(n - fetched), n - fetched) : 0;
  }
  /// The greedy match at p (p < n): length << 8 | code, or escape_match.
  ZS_HD std::uint32_t match(const encode_table& t) const noexcept { return match_word(t, lo, n - p); }
  /// Slides the window past a match of `length` (1..8) bytes, and refills it to at least 8 bytes
  /// ahead.
  ZS_HD void advance(std::uint32_t length) noexcept {
    if (length == 8) {
      lo = hi;
      hi = 0;
    } else {
      lo = lo >> (8 * length) | hi << (64 - 8 * length);
      hi >>= 8 * length;
    }
    p += length;
    Position const ahead = fetched - p;
    if (ahead < 8 && fetched < n) {
      std::uint32_t const k = take(n - fetched);
      if (ahead == 0) {
        lo = next;
      } else {
        lo |= next << (8 * ahead);
        hi |= next >> (64 - 8 * ahead);
      }
      fetched += k;
      next = fetched < n ? load_bytes(in + fetched, take(n - fetched), n - fetched) : 0;
    }
  }
};
using greedy_cursor = basic_greedy_cursor<std::uint64_t>;

/// Encodes `n` characters into at most `capacity` bytes of `out`: greedy longest matches, an
/// escape and the byte where no symbol matches. Returns the bytes written, or no_fit when they
/// would exceed `capacity` (the caller then stores the split raw).
///
/// The input is read through a greedy_cursor and the output gathered 8 bytes at a time. The
/// same codes as matching at every position of the input (match).
ZS_HD inline std::uint64_t encode_split(const encode_table& t, const std::uint8_t* in, std::uint64_t n,
                                        std::uint8_t* out, std::uint64_t capacity) noexcept {
  greedy_cursor c;
  c.start(in, n, 0);
  std::uint64_t o = 0, pending = 0;  // output bytes, and the unstored ones gathered
  std::uint32_t gathered = 0;
  auto put = [&](std::uint64_t byte) {
    pending |= byte << (8 * gathered);
    ++o;
    if (++gathered == 8) {
      store_bytes8(out + o - 8, pending);
      pending = 0;
      gathered = 0;
    }
  };
  while (c.p < n) {
    std::uint32_t const m = c.match(t);
    std::uint32_t length;
    if (m == escape_match) {
      if (capacity - o < 2) return no_fit;
      put(escape_code);
      put(c.lo & 0xff);
      length = 1;
    } else {
      if (capacity - o < 1) return no_fit;
      put(m & 0xff);
      length = m >> 8;
    }
    c.advance(length);
  }
  for (std::uint32_t k = 0; k < gathered; ++k) out[o - gathered + k] = static_cast<std::uint8_t>(pending >> (8 * k));
  return o;
}

/// Whether the stored split `in` (`stored` bytes) decodes to exactly `n` characters: raw when
/// stored == n; otherwise every code defined, no escape without its byte, and the decoded
/// lengths adding up to n. What decoders check before they write.
ZS_HD inline bool check_split(const decode_table& t, const std::uint8_t* in, std::uint64_t stored,
                              std::uint64_t n) noexcept {
  if (stored > n) return false;
  if (stored == n) return true;
  std::uint64_t produced = 0;
  for (std::uint64_t i = 0; i < stored; ++i) {
    std::uint8_t const code = in[i];
    if (code == escape_code) {
      if (++i == stored) return false;
      produced += 1;
    } else {
      if (t.length[code] == 0) return false;
      produced += t.length[code];
    }
    if (produced > n) return false;
  }
  return produced == n;
}

/// Decodes a split that check_split accepted into out[0..n).
ZS_HD inline void decode_split(const decode_table& t, const std::uint8_t* in, std::uint64_t stored,
                               std::uint8_t* out, std::uint64_t n) noexcept {
  if (stored == n) {
    for (std::uint64_t i = 0; i < n; ++i) out[i] = in[i];
    return;
  }
  std::uint64_t o = 0;
  for (std::uint64_t i = 0; i < stored; ++i) {
    std::uint8_t const code = in[i];
    if (code == escape_code) {
      out[o++] = in[++i];
      continue;
    }
    std::uint64_t const symbol = t.symbol[code];
    std::uint32_t const length = t.length[code];
    for (std::uint32_t k = 0; k < length; ++k) out[o + k] = static_cast<std::uint8_t>(symbol >> (8 * k));
    o += length;
  }
}

/// 16 output bytes gathered in two words, stored at once where the output is 16-byte aligned:
/// the GPU decoder's stores (single-byte or 8-byte unaligned stores cost several times the
/// traffic to L2).
ZS_HD inline void store16(std::uint8_t* dst, std::uint64_t lo, std::uint64_t hi) noexcept {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<ulonglong2*>(dst) = make_ulonglong2(lo, hi);
#else
  for (int k = 0; k < 8; ++k) {
    dst[k] = static_cast<std::uint8_t>(lo >> (8 * k));
    dst[8 + k] = static_cast<std::uint8_t>(hi >> (8 * k));
  }
#endif
}

/// Reads a split's codes a word at a time (load_bytes: on the GPU one load per 8 code bytes).
struct code_reader {
  const std::uint8_t* in;
  std::uint64_t stored;
  std::uint64_t fetched = 0;  // bytes read into the window so far
  std::uint64_t window = 0;
  std::uint32_t have = 0;     // unread bytes in the window

  ZS_HD bool more() const noexcept { return have != 0 || fetched < stored; }
  ZS_HD std::uint32_t next() noexcept {
    if (have == 0) {
      std::uint64_t const left = stored - fetched;
      have = left < 8 ? static_cast<std::uint32_t>(left) : 8U;
      window = load_bytes(in + fetched, have, stored - fetched);
      fetched += have;
    }
    auto const byte = static_cast<std::uint32_t>(window & 0xff);
    window >>= 8;
    --have;
    return byte;
  }
};

/// decode_split with 16-byte aligned stores: the bytes before out's first 16-byte boundary one
/// at a time, then whole aligned 16-byte groups gathered in registers, then the tail one byte at
/// a time; the codes read a word at a time. The same bytes as decode_split; what both the CPU
/// reference and the GPU run.
ZS_HD inline void decode_split_wide(const decode_table& t, const std::uint8_t* in, std::uint64_t stored,
                                    std::uint8_t* out, std::uint64_t n) noexcept {
  std::uint64_t const head_room = (16 - (reinterpret_cast<std::uintptr_t>(out) & 15)) & 15;
  std::uint64_t const head = head_room < n ? head_room : n;
  if (stored == n) {
    std::uint64_t k = 0;
    for (; k < head; ++k) out[k] = in[k];
    for (; k + 16 <= n; k += 16) {
      store16(out + k, load_bytes(in + k, 8, n - k), load_bytes(in + k + 8, 8, n - k - 8));
    }
    for (; k < n; ++k) out[k] = in[k];
    return;
  }
  code_reader codes{in, stored};
  auto symbol_of = [&](std::uint32_t code, std::uint32_t& length) -> std::uint64_t {
    if (code == escape_code) {
      length = 1;
      return codes.next();
    }
    length = t.length[code];
    return t.symbol[code];
  };
  // Codes until the head is written, byte by byte; the symbol that crosses it is written whole.
  std::uint64_t o = 0;
  std::uint64_t last = 0;  // the last symbol written, and its length
  std::uint32_t last_length = 0;
  while (o < head) {
    last = symbol_of(codes.next(), last_length);
    for (std::uint32_t k = 0; k < last_length; ++k) out[o + k] = static_cast<std::uint8_t>(last >> (8 * k));
    o += last_length;
  }
  // Aligned from out + head on; the bytes already written past it start the first group.
  std::uint8_t* dst = out + head;
  std::uint32_t fill = static_cast<std::uint32_t>(o - head);
  std::uint64_t lo = fill == 0 ? 0 : last >> (8 * (last_length - fill)), hi = 0;
  while (codes.more()) {
    std::uint32_t length;
    std::uint64_t const symbol = symbol_of(codes.next(), length);
    std::uint64_t carry = 0;
    if (fill < 8) {
      lo |= symbol << (8 * fill);
      if (fill != 0) hi |= symbol >> (8 * (8 - fill));
    } else {
      hi |= fill == 8 ? symbol : symbol << (8 * (fill - 8));
      if (fill > 8 && fill + length > 16) carry = symbol >> (8 * (16 - fill));
    }
    fill += length;
    if (fill >= 16) {
      store16(dst, lo, hi);
      dst += 16;
      fill -= 16;
      lo = carry;
      hi = 0;
    }
  }
  for (std::uint32_t k = 0; k < fill; ++k) {
    dst[k] = static_cast<std::uint8_t>(k < 8 ? lo >> (8 * k) : hi >> (8 * (k - 8)));
  }
}

// ---- the body ----

/// Splits of `chars` characters cut every `split_bytes`.
ZS_HD constexpr std::uint64_t split_count(std::uint64_t chars, std::uint64_t split_bytes) noexcept {
  return chars == 0 ? 0 : (chars - 1) / split_bytes + 1;
}
/// Characters of split `i`.
ZS_HD constexpr std::uint64_t split_chars(std::uint64_t chars, std::uint64_t split_bytes, std::uint64_t i) noexcept {
  std::uint64_t const begin = i * split_bytes;
  return chars - begin < split_bytes ? chars - begin : split_bytes;
}

/// Where a body's sections lie, from the header's codec parameters and sizes.
struct body_layout {
  std::uint64_t split_bytes;    // S
  std::uint64_t lengths_bytes;  // L: the embedded frame of string lengths, at body offset 0
  std::uint64_t splits;         // k
  std::uint64_t offsets_at;     // L rounded up to 16: the k + 1 split offsets
  std::uint64_t data_at;        // the data section
  std::uint64_t data_bytes;     // D
};

ZS_HD inline void store_codec_params(std::byte* header, std::uint64_t split_bytes, std::uint64_t lengths_bytes) noexcept {
  detail::store_le(header + 40, split_bytes, 8);
  detail::store_le(header + 48, lengths_bytes, 8);
}

/// The layout of a strings section (an fsst body, or an fsst_dict frame's dictionary) of `chars`
/// characters in `body_bytes` bytes, with split size `split` and a lengths frame of `lengths`
/// bytes. False, with corrupt_payload the frame's fate, when the split size is not
/// default_split_bytes, the lengths frame is shorter than a header or leaves no room for the
/// split offsets, or the parts do not fill the section. Every size is compared without wrapping.
ZS_HD inline bool read_section(std::uint64_t split, std::uint64_t lengths, std::uint64_t chars, std::uint64_t body_bytes,
                               body_layout& out) noexcept {
  if (split != default_split_bytes) return false;
  if (lengths < frame_header_bytes || lengths > body_bytes || add_overflows(lengths, frame_alignment - 1)) return false;
  std::uint64_t const offsets_at = align_frame(lengths);
  if (offsets_at > body_bytes) return false;
  std::uint64_t const splits = split_count(chars, split);
  std::uint64_t const rest = body_bytes - offsets_at;
  if (rest / 8 < splits + 1) return false;
  out.split_bytes = split;
  out.lengths_bytes = lengths;
  out.splits = splits;
  out.offsets_at = offsets_at;
  out.data_at = offsets_at + 8 * (splits + 1);
  out.data_bytes = body_bytes - out.data_at;
  return true;
}

/// The layout of an fsst frame's body: a strings section of the frame's strings, its split size
/// and lengths bytes in the codec parameters.
ZS_HD inline bool read_layout(const frame_header& h, std::uint64_t body_bytes, body_layout& out) noexcept {
  return read_section(detail::load_le(h.params.data(), 8), detail::load_le(h.params.data() + 8, 8), h.raw_bytes,
                      body_bytes, out);
}

/// Whether split `i`, stored at [begin, end) of a data section of `data_bytes` bytes (D), lies
/// inside the section and takes no more bytes than its `chars` characters (so an encoded split
/// strictly fewer, a raw one exactly as many). Checked on its own, without the other splits'
/// offsets: the GPU checks a frame's splits in parallel, each warp its own split before it reads
/// it, so no split may count on its neighbours' offsets having been checked first.
ZS_HD constexpr bool split_in_section(std::uint64_t begin, std::uint64_t end, std::uint64_t data_bytes,
                                      std::uint64_t chars) noexcept {
  return begin <= end && end <= data_bytes && end - begin <= chars;
}

/// Whether the split offsets start at 0 and end at D: with split_in_section for every split,
/// what check_split_offsets checks (the GPU checks the ends once per frame, the splits apart).
ZS_HD inline bool check_split_offset_ends(const std::byte* body, const body_layout& l) noexcept {
  const std::byte* offsets = body + l.offsets_at;
  return detail::load_le(offsets, 8) == 0 && detail::load_le(offsets + 8 * l.splits, 8) == l.data_bytes;
}

/// Whether the split offsets tile the data section: the first 0, each split inside the section
/// and no larger than its characters (split_in_section; offsets that decrease fail it), the last D.
ZS_HD inline bool check_split_offsets(const std::byte* body, const body_layout& l, std::uint64_t chars) noexcept {
  if (!check_split_offset_ends(body, l)) return false;
  const std::byte* offsets = body + l.offsets_at;
  for (std::uint64_t i = 0; i < l.splits; ++i) {
    std::uint64_t const begin = detail::load_le(offsets + 8 * i, 8);
    std::uint64_t const end = detail::load_le(offsets + 8 * (i + 1), 8);
    if (!split_in_section(begin, end, l.data_bytes, split_chars(chars, l.split_bytes, i))) return false;
  }
  return true;
}

}  // namespace zs::fsst
