// The fsst codec on the CPU: the reference encoder and decoder, and the table preparation.
#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/registry.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "codecs/fsst/fsst_strings.hpp"
#include "codecs/fsst/fsst_table_builder.hpp"
#include "fsst/fsst_format.hpp"
#include "zs/error.hpp"

namespace zs::codecs {

namespace fsst_detail {

const codec& lengths_codec() { return fsst_strings::integer_codec(); }

encode_source lengths_source(std::uint64_t count, const std::uint64_t* lengths) {
  return fsst_strings::integer_source(count, lengths);
}

std::uint64_t body_offset() { return params_section_bytes(fsst::table_bytes); }

std::vector<std::uint8_t> gather_sample(const sample_batch& samples, std::size_t column,
                                        std::vector<fsst_tables::sample_chunk>& chunks) {
  auto const pieces = samples.of(column);
  chunks = fsst_tables::plan_sample(pieces);
  std::vector<std::uint8_t> sample;
  for (auto const& chunk : chunks) {
    auto const& piece = pieces[chunk.piece];
    auto const* chars = static_cast<const std::uint8_t*>(piece.values) + piece.offsets[0] + chunk.offset;
    sample.insert(sample.end(), chars, chars + chunk.length);
  }
  return sample;
}

void prepare_tables_host(const sample_batch& samples, std::byte* params, std::span<const std::uint64_t> params_offsets) {
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    std::vector<fsst_tables::sample_chunk> chunks;
    auto const sample = gather_sample(samples, c, chunks);
    fsst_tables::build_table(sample, chunks, params + params_offsets[c]);
  }
}

}  // namespace fsst_detail

using namespace fsst_detail;

std::uint64_t fsst_codec::params_bytes(value_type type) const noexcept {
  return type == value_type::string ? fsst::table_bytes : 0;
}

std::uint64_t fsst_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // header + parameter section + the strings section (no split is stored larger than its
  // characters).
  std::uint64_t const section = fsst_strings::max_section_bytes(source.count, source.chars_bytes);
  std::uint64_t const fixed = frame_header_bytes + body_offset();
  return section == UINT64_MAX || add_overflows(section, fixed) ? UINT64_MAX : fixed + section;
}

void fsst_codec::prepare_params_host(const sample_batch& samples, std::byte* params,
                                     std::span<const std::uint64_t> params_offsets) const {
  prepare_tables_host(samples, params, params_offsets);
}

void fsst_codec::encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t /*capacity*/) const {
  fsst::decode_table table;
  ZS_EXPECTS(fsst::load_decode_table(source.params, table), "an fsst symbol table prepared by this codec");
  auto lookup = std::make_unique<fsst::encode_table>();
  fsst::build_encode_table(table, *lookup);
  std::uint64_t const n = source.count;
  std::vector<std::uint64_t> lengths(n);
  for (std::uint64_t i = 0; i < n; ++i) lengths[i] = static_cast<std::uint64_t>(source.offsets[i + 1] - source.offsets[i]);
  auto const* chars = static_cast<const std::uint8_t*>(source.values) + (n == 0 ? 0 : source.offsets[0]);
  auto const w = fsst_strings::encode_section(*lookup, lengths, chars, source.chars_bytes,
                                              frame + frame_header_bytes + body_offset());
  store_encoder_fields(frame, codec_id::fsst, w.bytes);
  fsst::store_codec_params(frame, fsst::default_split_bytes, w.lengths_bytes);
}

frame_status fsst_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                             const decode_target& target) const {
  // Everything is checked before anything is written: the table, the layout, the split
  // offsets, the lengths, then every split.
  auto table = std::make_unique<fsst::decode_table>();
  if (!fsst::load_decode_table(payload + params_prefix_bytes, *table)) return frame_status::corrupt_payload;
  const std::byte* body = payload + body_offset();
  std::vector<std::uint64_t> lengths;
  fsst::body_layout layout{};
  if (!fsst_strings::check_section(*table, body, header.payload_bytes - body_offset(),
                                   detail::load_le(header.params.data(), 8), detail::load_le(header.params.data() + 8, 8),
                                   header.value_count, header.raw_bytes, lengths, layout)) {
    return frame_status::corrupt_payload;
  }
  std::uint64_t const n = header.value_count;
  std::uint64_t offset = target.chars_begin;
  for (std::uint64_t i = 0; i < n; ++i) {
    target.offsets[i] = static_cast<std::int64_t>(offset);
    offset += lengths[i];
  }
  target.offsets[n] = static_cast<std::int64_t>(offset);
  fsst_strings::decode_chars(*table, body, layout, header.raw_bytes,
                             static_cast<std::uint8_t*>(target.values) + target.chars_begin);
  return frame_status::ok;
}

ZS_REGISTER_CODEC(fsst_codec)

}  // namespace zs::codecs
