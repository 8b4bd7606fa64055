#include "codecs/fsst/fsst_strings.hpp"

#include <algorithm>
#include <cstring>

#include "zs/overflow.hpp"

namespace zs::codecs::fsst_strings {

const codec& integer_codec() { return get_codec(codec_id::bitpack_for); }

encode_source integer_source(std::uint64_t count, const std::uint64_t* values) {
  return encode_source{value_type::uint64, count, values};
}

std::uint64_t max_section_bytes(std::uint64_t count, std::uint64_t chars) noexcept {
  std::uint64_t const lengths = integer_codec().max_frame_bytes(integer_source(count, nullptr));
  if (lengths == UINT64_MAX) return UINT64_MAX;
  std::uint64_t const splits = fsst::split_count(chars, fsst::default_split_bytes);
  std::uint64_t total = 0;
  for (std::uint64_t part : {lengths, std::uint64_t{frame_alignment - 1}, 8 * (splits + 1), chars}) {
    if (add_overflows(total, part)) return UINT64_MAX;
    total += part;
  }
  return total;
}

written encode_section(const fsst::encode_table& lookup, std::span<const std::uint64_t> lengths,
                       const std::uint8_t* chars, std::uint64_t total, std::byte* out) {
  encode_source const packed = integer_source(lengths.size(), lengths.empty() ? nullptr : lengths.data());
  std::uint64_t const room[2] = {0, integer_codec().max_frame_bytes(packed)};
  std::uint64_t lengths_bytes = 0;
  integer_codec().encode_host({std::span(&packed, 1), out, room, &lengths_bytes, true});

  std::uint64_t const split = fsst::default_split_bytes;
  std::uint64_t const splits = fsst::split_count(total, split);
  std::uint64_t const offsets_at = align_frame(lengths_bytes);
  std::memset(out + lengths_bytes, 0, offsets_at - lengths_bytes);
  std::uint64_t const data_at = offsets_at + 8 * (splits + 1);
  auto* data = reinterpret_cast<std::uint8_t*>(out + data_at);
  std::uint64_t at = 0;
  detail::store_le(out + offsets_at, 0, 8);
  for (std::uint64_t i = 0; i < splits; ++i) {
    std::uint64_t const size = fsst::split_chars(total, split, i);
    // Encoded splits must be smaller than their characters; the rest are stored raw.
    std::uint64_t stored = fsst::encode_split(lookup, chars + i * split, size, data + at, size - 1);
    if (stored == fsst::no_fit) {
      std::memcpy(data + at, chars + i * split, size);
      stored = size;
    }
    at += stored;
    detail::store_le(out + offsets_at + 8 * (i + 1), at, 8);
  }
  return {data_at + at, lengths_bytes};
}

bool check_section(const fsst::decode_table& table, const std::byte* section, std::uint64_t bytes,
                   std::uint64_t split_bytes, std::uint64_t lengths_bytes, std::uint64_t count, std::uint64_t chars,
                   std::vector<std::uint64_t>& lengths, fsst::body_layout& layout) {
  if (!fsst::read_section(split_bytes, lengths_bytes, chars, bytes, layout)) return false;
  if (!fsst::check_split_offsets(section, layout, chars)) return false;
  // The lengths frame fills its place exactly.
  if (load_header(section).payload_bytes != layout.lengths_bytes - frame_header_bytes) return false;
  lengths.assign(std::max<std::uint64_t>(count, 1), 0);
  decode_target const unpacked{value_type::uint64, count, lengths.data()};
  std::uint64_t const room[2] = {0, layout.lengths_bytes};
  frame_status status = frame_status::not_decoded;
  integer_codec().decode_host({section, room, std::span(&unpacked, 1), &status, true});
  if (status != frame_status::ok) return false;
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (add_overflows(sum, lengths[i])) return false;
    sum += lengths[i];
  }
  if (sum != chars) return false;
  auto const* data = reinterpret_cast<const std::uint8_t*>(section + layout.data_at);
  for (std::uint64_t i = 0; i < layout.splits; ++i) {
    std::uint64_t const begin = detail::load_le(section + layout.offsets_at + 8 * i, 8);
    std::uint64_t const end = detail::load_le(section + layout.offsets_at + 8 * (i + 1), 8);
    if (!fsst::check_split(table, data + begin, end - begin, fsst::split_chars(chars, layout.split_bytes, i))) {
      return false;
    }
  }
  return true;
}

void decode_chars(const fsst::decode_table& table, const std::byte* section, const fsst::body_layout& layout,
                  std::uint64_t chars, std::uint8_t* out) {
  auto const* data = reinterpret_cast<const std::uint8_t*>(section + layout.data_at);
  for (std::uint64_t i = 0; i < layout.splits; ++i) {
    std::uint64_t const begin = detail::load_le(section + layout.offsets_at + 8 * i, 8);
    std::uint64_t const end = detail::load_le(section + layout.offsets_at + 8 * (i + 1), 8);
    fsst::decode_split_wide(table, data + begin, end - begin, out + i * layout.split_bytes,
                            fsst::split_chars(chars, layout.split_bytes, i));
  }
}

}  // namespace zs::codecs::fsst_strings
