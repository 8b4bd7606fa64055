// The fsst codec on the CPU: the reference encoder and decoder, and the table preparation.
#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/registry.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "codecs/fsst/fsst_table_builder.hpp"
#include "fsst/fsst_format.hpp"
#include "zs/error.hpp"

namespace zs::codecs {

namespace fsst_detail {

const codec& lengths_codec() { return get_codec(codec_id::bitpack_for); }

encode_source lengths_source(std::uint64_t count, const std::uint64_t* lengths) {
  return encode_source{value_type::uint64, count, lengths};
}

std::uint64_t body_offset() { return params_section_bytes(fsst::table_bytes); }

}  // namespace fsst_detail

using namespace fsst_detail;

std::uint64_t fsst_codec::params_bytes(value_type type) const noexcept {
  return type == value_type::string ? fsst::table_bytes : 0;
}

std::uint64_t fsst_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // header + parameter section + lengths frame + padding + split offsets + characters (no split
  // is stored larger than its characters).
  std::uint64_t const lengths = lengths_codec().max_frame_bytes(lengths_source(source.count, nullptr));
  if (lengths == UINT64_MAX) return UINT64_MAX;
  std::uint64_t const splits = fsst::split_count(source.chars_bytes, fsst::default_split_bytes);
  std::uint64_t total = frame_header_bytes + body_offset();
  for (std::uint64_t part : {lengths, std::uint64_t{frame_alignment - 1}, 8 * (splits + 1), source.chars_bytes}) {
    if (add_overflows(total, part)) return UINT64_MAX;
    total += part;
  }
  return total;
}

void fsst_codec::prepare_params_host(const sample_batch& samples, std::byte* params,
                                     std::span<const std::uint64_t> params_offsets) const {
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    auto const pieces = samples.of(c);
    auto const chunks = fsst_tables::plan_sample(pieces);
    std::vector<std::uint8_t> sample;
    for (auto const& chunk : chunks) {
      auto const& piece = pieces[chunk.piece];
      auto const* chars = static_cast<const std::uint8_t*>(piece.values) + piece.offsets[0] + chunk.offset;
      sample.insert(sample.end(), chars, chars + chunk.length);
    }
    fsst_tables::build_table(sample, chunks, params + params_offsets[c]);
  }
}

void fsst_codec::encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t /*capacity*/) const {
  fsst::decode_table table;
  ZS_EXPECTS(fsst::load_decode_table(source.params, table), "an fsst symbol table prepared by this codec");
  auto lookup = std::make_unique<fsst::encode_table>();
  fsst::build_encode_table(table, *lookup);

  std::byte* body = frame + frame_header_bytes + body_offset();
  std::uint64_t const n = source.count;
  std::vector<std::uint64_t> lengths(std::max<std::uint64_t>(n, 1));
  for (std::uint64_t i = 0; i < n; ++i) lengths[i] = static_cast<std::uint64_t>(source.offsets[i + 1] - source.offsets[i]);
  encode_source const packed = lengths_source(n, lengths.data());
  std::uint64_t const room[2] = {0, lengths_codec().max_frame_bytes(packed)};
  std::uint64_t lengths_bytes = 0;
  lengths_codec().encode_host({std::span(&packed, 1), body, room, &lengths_bytes, true});

  std::uint64_t const chars = source.chars_bytes;
  std::uint64_t const split = fsst::default_split_bytes;
  std::uint64_t const splits = fsst::split_count(chars, split);
  std::uint64_t const offsets_at = align_frame(lengths_bytes);
  std::memset(body + lengths_bytes, 0, offsets_at - lengths_bytes);
  std::uint64_t const data_at = offsets_at + 8 * (splits + 1);
  auto const* in = static_cast<const std::uint8_t*>(source.values) + (n == 0 ? 0 : source.offsets[0]);
  auto* data = reinterpret_cast<std::uint8_t*>(body + data_at);
  std::uint64_t at = 0;
  detail::store_le(body + offsets_at, 0, 8);
  for (std::uint64_t i = 0; i < splits; ++i) {
    std::uint64_t const size = fsst::split_chars(chars, split, i);
    // Encoded splits must be smaller than their characters; the rest are stored raw.
    std::uint64_t stored = fsst::encode_split(*lookup, in + i * split, size, data + at, size - 1);
    if (stored == fsst::no_fit) {
      std::memcpy(data + at, in + i * split, size);
      stored = size;
    }
    at += stored;
    detail::store_le(body + offsets_at + 8 * (i + 1), at, 8);
  }
  store_encoder_fields(frame, codec_id::fsst, data_at + at);
  fsst::store_codec_params(frame, split, lengths_bytes);
}

frame_status fsst_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                             const decode_target& target) const {
  // Everything is checked before anything is written: the table, the layout, the split
  // offsets, the lengths, then every split.
  auto table = std::make_unique<fsst::decode_table>();
  if (!fsst::load_decode_table(payload + params_prefix_bytes, *table)) return frame_status::corrupt_payload;
  const std::byte* body = payload + body_offset();
  fsst::body_layout layout{};
  if (!fsst::read_layout(header, header.payload_bytes - body_offset(), layout)) return frame_status::corrupt_payload;
  std::uint64_t const chars = header.raw_bytes;
  if (!fsst::check_split_offsets(body, layout, chars)) return frame_status::corrupt_payload;
  // The lengths frame fills its section exactly.
  if (load_header(body).payload_bytes != layout.lengths_bytes - frame_header_bytes) return frame_status::corrupt_payload;
  std::uint64_t const n = header.value_count;
  std::vector<std::uint64_t> lengths(std::max<std::uint64_t>(n, 1));
  decode_target const unpacked{value_type::uint64, n, lengths.data()};
  std::uint64_t const room[2] = {0, layout.lengths_bytes};
  frame_status status = frame_status::not_decoded;
  lengths_codec().decode_host({body, room, std::span(&unpacked, 1), &status, true});
  if (status != frame_status::ok) return frame_status::corrupt_payload;
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (add_overflows(sum, lengths[i])) return frame_status::corrupt_payload;
    sum += lengths[i];
  }
  if (sum != chars) return frame_status::corrupt_payload;
  auto const* data = reinterpret_cast<const std::uint8_t*>(body + layout.data_at);
  auto split_at = [&](std::uint64_t i) { return detail::load_le(body + layout.offsets_at + 8 * i, 8); };
  for (std::uint64_t i = 0; i < layout.splits; ++i) {
    std::uint64_t const begin = split_at(i);
    if (!fsst::check_split(*table, data + begin, split_at(i + 1) - begin, fsst::split_chars(chars, layout.split_bytes, i))) {
      return frame_status::corrupt_payload;
    }
  }

  std::uint64_t offset = target.chars_begin;
  for (std::uint64_t i = 0; i < n; ++i) {
    target.offsets[i] = static_cast<std::int64_t>(offset);
    offset += lengths[i];
  }
  target.offsets[n] = static_cast<std::int64_t>(offset);
  auto* out = static_cast<std::uint8_t*>(target.values) + target.chars_begin;
  for (std::uint64_t i = 0; i < layout.splits; ++i) {
    std::uint64_t const begin = split_at(i);
    fsst::decode_split_wide(*table, data + begin, split_at(i + 1) - begin, out + i * layout.split_bytes,
                       fsst::split_chars(chars, layout.split_bytes, i));
  }
  return frame_status::ok;
}

ZS_REGISTER_CODEC(fsst_codec)

}  // namespace zs::codecs
