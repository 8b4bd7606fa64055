// The fsst_dict codec on the CPU: the reference encoder and decoder.
#include "codecs/fsst/fsst_dict_codec.hpp"
#include "codecs/registry.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/fsst/fsst_strings.hpp"
#include "fsst/fsst_dict_format.hpp"
#include "fsst/fsst_format.hpp"
#include "zs/error.hpp"

namespace zs::codecs {

namespace {

using fsst_detail::body_offset;
// The body's first bytes (docs/FORMAT.md, "Codec 7: fsst_dict"): codes frame bytes Lc,
// dictionary characters Cd, dictionary lengths frame bytes Ld, zero.
using fsst_dict::dict_header_bytes;

}  // namespace

std::uint64_t fsst_dict_codec::params_bytes(value_type type) const noexcept {
  return type == value_type::string ? fsst::table_bytes : 0;
}

std::uint64_t fsst_dict_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // header + parameter section + body header + codes frame + padding + a dictionary of at most
  // every string and character.
  std::uint64_t const codes =
      fsst_strings::integer_codec().max_frame_bytes(fsst_strings::integer_source(source.count, nullptr));
  std::uint64_t const dictionary = fsst_strings::max_section_bytes(source.count, source.chars_bytes);
  std::uint64_t total = frame_header_bytes + body_offset() + dict_header_bytes;
  for (std::uint64_t part : {codes, std::uint64_t{frame_alignment - 1}, dictionary}) {
    if (part == UINT64_MAX || add_overflows(total, part)) return UINT64_MAX;
    total += part;
  }
  return total;
}

void fsst_dict_codec::prepare_params_host(const sample_batch& samples, std::byte* params,
                                          std::span<const std::uint64_t> params_offsets) const {
  fsst_detail::prepare_tables_host(samples, params, params_offsets);
}

void fsst_dict_codec::encode_payload_host(const encode_source& source, std::byte* frame,
                                          std::uint64_t /*capacity*/) const {
  fsst::decode_table table;
  ZS_EXPECTS(fsst::load_decode_table(source.params, table), "an fsst symbol table prepared by this codec");
  auto lookup = std::make_unique<fsst::encode_table>();
  fsst::build_encode_table(table, *lookup);

  // The distinct values in order of first occurrence, and each row's index among them.
  std::uint64_t const n = source.count;
  auto const* base = static_cast<const char*>(source.values);
  std::unordered_map<std::string_view, std::uint64_t> index;
  std::vector<std::uint64_t> codes(n), lengths;
  std::vector<std::uint8_t> chars;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string_view const value(base + source.offsets[i], static_cast<std::size_t>(source.offsets[i + 1] - source.offsets[i]));
    auto const [it, added] = index.emplace(value, lengths.size());
    if (added) {
      lengths.push_back(value.size());
      chars.insert(chars.end(), value.begin(), value.end());
    }
    codes[i] = it->second;
  }

  std::byte* body = frame + frame_header_bytes + body_offset();
  encode_source const packed = fsst_strings::integer_source(n, codes.data());
  std::uint64_t const room[2] = {0, fsst_strings::integer_codec().max_frame_bytes(packed)};
  std::uint64_t codes_bytes = 0;
  fsst_strings::integer_codec().encode_host({std::span(&packed, 1), body + dict_header_bytes, room, &codes_bytes, true});
  std::uint64_t const section_at = align_frame(dict_header_bytes + codes_bytes);
  std::memset(body + dict_header_bytes + codes_bytes, 0, section_at - dict_header_bytes - codes_bytes);
  auto const w = fsst_strings::encode_section(*lookup, lengths, chars.data(), chars.size(), body + section_at);
  detail::store_le(body, codes_bytes, 8);
  detail::store_le(body + 8, chars.size(), 8);
  detail::store_le(body + 16, w.lengths_bytes, 8);
  detail::store_le(body + 24, 0, 8);
  store_encoder_fields(frame, codec_id::fsst_dict, section_at + w.bytes);
  fsst::store_codec_params(frame, fsst::default_split_bytes, lengths.size());
}

frame_status fsst_dict_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                                  const decode_target& target) const {
  // Everything is checked before anything is written.
  auto table = std::make_unique<fsst::decode_table>();
  if (!fsst::load_decode_table(payload + params_prefix_bytes, *table)) return frame_status::corrupt_payload;
  // The body's fields, the codes frame's size and the dictionary section's layout and split
  // offsets, by the rules the GPU decoder checks them with (fsst_dict_format.hpp).
  fsst_dict::dictionary_section d;
  if (!fsst_dict::read_body(header, payload, d)) return frame_status::corrupt_payload;
  std::uint64_t const n = header.value_count;
  std::uint64_t const distinct = d.entries;
  std::uint64_t const dict_chars = d.chars;
  const std::byte* codes_frame = payload + body_offset() + dict_header_bytes;
  const std::byte* section = payload + (d.section_at - frame_header_bytes);
  std::vector<std::uint64_t> codes(std::max<std::uint64_t>(n, 1));
  decode_target const unpacked{value_type::uint64, n, codes.data()};
  std::uint64_t const room[2] = {0, d.codes_bytes};
  frame_status status = frame_status::not_decoded;
  fsst_strings::integer_codec().decode_host({codes_frame, room, std::span(&unpacked, 1), &status, true});
  if (status != frame_status::ok) return frame_status::corrupt_payload;

  std::vector<std::uint64_t> lengths;
  fsst::body_layout layout{};
  if (!fsst_strings::check_section(*table, section, d.section_bytes, d.split_bytes, d.lengths_bytes, distinct,
                                   dict_chars, lengths, layout)) {
    return frame_status::corrupt_payload;
  }
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (codes[i] >= distinct || add_overflows(total, lengths[codes[i]])) return frame_status::corrupt_payload;
    total += lengths[codes[i]];
  }
  if (total != header.raw_bytes) return frame_status::corrupt_payload;

  std::vector<std::uint8_t> dictionary(std::max<std::uint64_t>(dict_chars, 1));
  fsst_strings::decode_chars(*table, section, layout, dict_chars, dictionary.data());
  std::vector<std::uint64_t> starts(std::max<std::uint64_t>(distinct, 1), 0);
  for (std::uint64_t k = 1; k < distinct; ++k) starts[k] = starts[k - 1] + lengths[k - 1];
  auto* out = static_cast<std::uint8_t*>(target.values) + target.chars_begin;
  std::uint64_t at = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    target.offsets[i] = static_cast<std::int64_t>(target.chars_begin + at);
    std::uint64_t const length = lengths[codes[i]];
    if (length != 0) std::memcpy(out + at, dictionary.data() + starts[codes[i]], length);
    at += length;
  }
  target.offsets[n] = static_cast<std::int64_t>(target.chars_begin + at);
  return frame_status::ok;
}

ZS_REGISTER_CODEC(fsst_dict_codec)

}  // namespace zs::codecs
