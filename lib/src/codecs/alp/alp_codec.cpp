// The alp codec's CPU reference: the per-vector coders of kernels/alp/alp_format.hpp, one
// vector after another.
#include "codecs/alp/alp_codec.hpp"
#include "codecs/registry.hpp"

#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "alp/alp_format.hpp"
#include "zs/error.hpp"
#include "zs/overflow.hpp"

namespace zs::codecs {

static_assert(std::endian::native == std::endian::little,
              "the alp codec packs words in memory order: the wire format is little-endian");

namespace {

/// Room no batch can give: what max_frame_bytes answers for a source too large for any frame.
constexpr std::uint64_t unrepresentable_bytes = ~std::uint64_t{0};

template <typename Float>
void encode_body(const encode_source& source, const alp::column_params& p, std::byte* body,
                 std::uint64_t& body_bytes) {
  std::uint64_t const vectors = alp::vector_count(source.count);
  std::byte* data = body + 8 * vectors;
  std::uint64_t end = 0;
  alp::vector_scratch scratch;
  Float with_stand_ins[alp::vector_values];  // a vector whose null rows are replaced
  const auto* values = static_cast<const Float*>(source.values);
  for (std::uint64_t v = 0; v < vectors; ++v) {
    std::uint32_t const count = alp::values_in_vector(source.count, v);
    const Float* first = values + v * alp::vector_values;
    if (source.null_mask != nullptr) {
      alp::vector_for_encoder(source, v, p, with_stand_ins);
      first = with_stand_ins;
    }
    std::uint64_t bytes = 0;
    alp::vector_fields const fields = alp::choose_vector(first, count, p, scratch, bytes);
    end += alp::write_vector(first, count, fields, scratch.is_fill, data + end);
    detail::store_le(body + 8 * v, end, 8);
  }
  body_bytes = 8 * vectors + end;
}

// The checks of a frame's body before any value is read: its parameters, its vector ends and
// every vector's fields (into `fields`).
template <typename Float>
bool check_body(const std::byte* params, const std::byte* body, std::uint64_t body_bytes, std::uint64_t count,
                alp::column_params& p, std::vector<alp::vector_fields>& fields) {
  if (!alp::load_params<Float>(params, p)) return false;
  if (!alp::check_ends(body, body_bytes, count)) return false;
  std::uint64_t const vectors = alp::vector_count(count);
  const std::byte* data = body + 8 * vectors;
  fields.resize(vectors);
  for (std::uint64_t v = 0; v < vectors; ++v) {
    std::uint64_t const start = alp::vector_start(body, v);
    if (!alp::check_vector<Float>(data + start, alp::vector_end(body, v) - start, alp::values_in_vector(count, v), p,
                                  fields[v])) {
      return false;
    }
  }
  return true;
}

template <typename Float>
frame_status decode_body(const std::byte* params, const std::byte* body, std::uint64_t body_bytes,
                         const decode_target& target) {
  // Every vector is checked before any value is written, so a refused frame leaves its target
  // as it was.
  alp::column_params p;
  std::vector<alp::vector_fields> fields;
  if (!check_body<Float>(params, body, body_bytes, target.count, p, fields)) return frame_status::corrupt_payload;
  const std::byte* data = body + 8 * fields.size();
  auto* out = static_cast<Float*>(target.values);
  for (std::uint64_t v = 0; v < fields.size(); ++v) {
    alp::read_vector<Float>(data + alp::vector_start(body, v), alp::values_in_vector(target.count, v), p, fields[v],
                            out + v * alp::vector_values);
  }
  return frame_status::ok;
}

template <typename Float>
alp::column_params prepare_one(std::span<const encode_source> pieces) {
  auto sample = std::make_unique<alp::column_sample<Float>>();
  std::vector<std::uint32_t> counts(alp::sample_values);
  std::vector<std::uint64_t> costs(alp::sample_vectors * alp::combinations<Float>());
  return alp::prepare_column<Float>(pieces.data(), pieces.size(), *sample, counts.data(), costs.data());
}

}  // namespace

std::uint64_t alp_codec::params_bytes(value_type type) const noexcept {
  return supports(type) ? alp::params_bytes : 0;
}

std::uint64_t alp_codec::max_frame_bytes(const encode_source& source) const noexcept {
  std::uint64_t const vectors = alp::vector_count(source.count);
  std::uint64_t const per_vector = 8 + (source.type == value_type::float64 ? alp::max_vector_bytes<double>(alp::vector_values)
                                                                           : alp::max_vector_bytes<float>(alp::vector_values));
  if (vectors > (unrepresentable_bytes - 4096) / per_vector) return unrepresentable_bytes;
  return frame_header_bytes + params_section_bytes(alp::params_bytes) + vectors * per_vector;
}

void alp_codec::encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t /*capacity*/) const {
  std::byte* payload = frame + frame_header_bytes;
  alp::column_params p;
  std::uint64_t body_bytes = 0;
  std::byte* body = payload + params_section_bytes(alp::params_bytes);
  if (source.type == value_type::float64) {
    ZS_EXPECTS(alp::load_params<double>(source.params, p), "alp column parameters as prepare_host or prepare_async wrote them");
    encode_body<double>(source, p, body, body_bytes);
  } else {
    ZS_EXPECTS(alp::load_params<float>(source.params, p), "alp column parameters as prepare_host or prepare_async wrote them");
    encode_body<float>(source, p, body, body_bytes);
  }
  frame[6] = static_cast<std::byte>(codec_id::alp);
  detail::store_le(frame + 24, body_bytes, 8);
  alp::store_codec_params(frame);
}

frame_status alp_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                            const decode_target& target) const {
  if (!supports(target.type)) return frame_status::unsupported_type;
  if (!alp::check_codec_params(header.params.data())) return frame_status::corrupt_payload;
  std::uint64_t const section = params_section_bytes(alp::params_bytes);
  const std::byte* params = payload + params_prefix_bytes;
  const std::byte* body = payload + section;
  std::uint64_t const body_bytes = header.payload_bytes - section;  // validate_header checked the prefix
  return target.type == value_type::float64 ? decode_body<double>(params, body, body_bytes, target)
                                            : decode_body<float>(params, body, body_bytes, target);
}

void alp_codec::prepare_params_host(const sample_batch& samples, std::byte* params,
                                    std::span<const std::uint64_t> params_offsets) const {
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    auto const pieces = samples.of(c);
    if (pieces.empty()) continue;
    std::byte* out = params + params_offsets[c];
    if (pieces.front().type == value_type::float64) {
      alp::store_params<double>(prepare_one<double>(pieces), out);
    } else {
      alp::store_params<float>(prepare_one<float>(pieces), out);
    }
  }
}

alp_vector_mix vector_mix(std::span<const std::byte> frame, value_type type) {
  auto const refuse = [](const std::string& why) { ZS_FAIL(error_code::corrupt_frame, "alp vector mix: " + why); };
  if (type != value_type::float32 && type != value_type::float64) refuse("not a float column");
  if (frame.size() < frame_header_bytes) refuse("shorter than a frame header");
  frame_header const header = load_header(frame.data());
  // Checked against what the header itself says of the column: the mix reads any alp frame.
  frame_expectation const expected{codec_bit(codec_id::alp), type, header.value_count,
                                   header.value_count * value_width(type), alp::params_bytes};
  frame_status const status = validate_header(frame.data(), frame.size(), expected);
  if (status != frame_status::ok) refuse("the frame's header is refused (" + std::string(to_string(status)) + ")");
  if (!alp::check_codec_params(header.params.data())) refuse("the codec's header fields are refused");
  const std::byte* payload = frame.data() + frame_header_bytes;
  std::uint64_t const section = params_section_bytes(alp::params_bytes);
  alp::column_params p;
  std::vector<alp::vector_fields> fields;
  bool const ok = type == value_type::float64
                      ? check_body<double>(payload + params_prefix_bytes, payload + section, header.payload_bytes - section,
                                           header.value_count, p, fields)
                      : check_body<float>(payload + params_prefix_bytes, payload + section, header.payload_bytes - section,
                                          header.value_count, p, fields);
  if (!ok) refuse("a vector is refused");
  alp_vector_mix mix;
  for (auto const& f : fields) {
    mix.alp += f.mode == alp::mode_alp ? 1 : 0;
    mix.alp_rd += f.mode == alp::mode_rd ? 1 : 0;
    mix.raw += f.mode == alp::mode_raw ? 1 : 0;
    mix.with_fill += f.fill ? 1 : 0;
  }
  return mix;
}

ZS_REGISTER_CODEC(alp_codec)

}  // namespace zs::codecs
