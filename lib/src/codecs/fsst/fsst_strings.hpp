// A strings section on the CPU (docs/FORMAT.md, fsst): strings as a lengths frame (bitpack, uint64)
// then their characters in FSST splits. The body of an fsst frame is one; an fsst_dict frame's
// dictionary is another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fsst/fsst_format.hpp"
#include "zs/codec.hpp"

namespace zs::codecs::fsst_strings {

/// The codec that packs lengths (and fsst_dict's codes) as uint64 values into embedded frames.
const codec& integer_codec();
/// An embedded integer frame's source: `count` uint64 values at `values`.
encode_source integer_source(std::uint64_t count, const std::uint64_t* values);

/// The most bytes a section of `count` strings and `chars` characters takes; UINT64_MAX when
/// they do not fit in 64 bits.
std::uint64_t max_section_bytes(std::uint64_t count, std::uint64_t chars) noexcept;

struct written {
  std::uint64_t bytes;          // the section's
  std::uint64_t lengths_bytes;  // its lengths frame's
};

/// Writes the strings of `lengths` (their characters back to back at `chars`, `total` of them)
/// as a section at `out` (room for max_section_bytes), coded with `lookup`.
written encode_section(const fsst::encode_table& lookup, std::span<const std::uint64_t> lengths,
                       const std::uint8_t* chars, std::uint64_t total, std::byte* out);

/// Checks a section of `count` strings and `chars` characters in `bytes` bytes whose lengths
/// frame takes `lengths_bytes` (fsst_format.hpp's rules: layout, lengths frame, lengths adding
/// up to `chars`, split offsets, every split) and reads its lengths into `lengths`. False at the
/// first rule broken; nothing is written but `lengths` and `layout`.
bool check_section(const fsst::decode_table& table, const std::byte* section, std::uint64_t bytes,
                   std::uint64_t split_bytes, std::uint64_t lengths_bytes, std::uint64_t count, std::uint64_t chars,
                   std::vector<std::uint64_t>& lengths, fsst::body_layout& layout);

/// Decodes the characters of a section that check_section accepted into out[0..chars).
void decode_chars(const fsst::decode_table& table, const std::byte* section, const fsst::body_layout& layout,
                  std::uint64_t chars, std::uint8_t* out);

}  // namespace zs::codecs::fsst_strings
