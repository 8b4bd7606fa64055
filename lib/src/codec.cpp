// The codec base class on the CPU: header writing, validation, and the registry.
#include "zs/codec.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "zs/error.hpp"
#include "zs/overflow.hpp"

namespace zs {

std::string_view to_string(frame_status status) noexcept {
  switch (status) {
    case frame_status::ok: return "ok";
    case frame_status::truncated: return "truncated frame";
    case frame_status::bad_magic: return "bad magic (not a zshuffle frame)";
    case frame_status::bad_version: return "unsupported format version";
    case frame_status::bad_header_checksum: return "header checksum mismatch";
    case frame_status::unknown_codec: return "unknown codec id";
    case frame_status::wrong_codec: return "frame written by another codec";
    case frame_status::unsupported_type: return "unsupported value type";
    case frame_status::type_mismatch: return "value type differs from the destination's";
    case frame_status::count_mismatch: return "value count differs from the destination's";
    case frame_status::size_mismatch: return "raw size inconsistent with count or destination";
    case frame_status::bad_payload_checksum: return "payload checksum mismatch";
    case frame_status::corrupt_payload: return "payload does not decode";
    case frame_status::not_decoded: return "not decoded";
  }
  return "invalid status";
}

std::string_view to_string(codec_id codec) noexcept {
  switch (codec) {
    case codec_id::raw: return "raw";
    case codec_id::bitpack_for: return "for";
    case codec_id::bitpack_dfor: return "dfor";
    case codec_id::bitpack_rfor: return "rfor";
    case codec_id::alp: return "alp";
    case codec_id::fsst: return "fsst";
    case codec_id::rle: return "rle";
    case codec_id::fsst_dict: return "fsst_dict";
    case codec_id::bitpack_pfor: return "pfor";
    case codec_id::bitpack_pdfor: return "pdfor";
    case codec_id::bitpack_drfor: return "drfor";
    case codec_id::bitmap: return "bitmap";
    case codec_id::dict: return "dict";
  }
  return "unknown";
}

namespace {

frame_expectation expectation(const codec& c, const decode_target& t) noexcept {
  return {c.decodes(), t.type, t.count, t.raw_bytes(), c.params_bytes(t.type)};
}

}  // namespace

namespace detail {

void check_encode_batch(const codec& c, const encode_batch& batch) {
  ZS_EXPECTS(batch.frame_offsets.size() == batch.sources.size() + 1,
             "one frame offset per source, plus the end");
  ZS_EXPECTS(batch.frames != nullptr || batch.sources.empty(), "an output buffer");
  ZS_EXPECTS(batch.frame_bytes != nullptr || batch.sources.empty(), "a frame_bytes array");
  for (std::size_t i = 0; i < batch.sources.size(); ++i) {
    auto const& s = batch.sources[i];
    if (!c.supports(s.type)) {
      ZS_FAIL(error_code::unsupported, "codec '" + std::string(c.name()) + "' does not encode " +
                                           std::string(to_string(s.type)) + " (frame " +
                                           std::to_string(i) + ")");
    }
    ZS_EXPECTS(count_fits(s.type, s.count),
               "a source whose size fits in 64 bits (frame " + std::to_string(i) + ": " + std::to_string(s.count) +
                   " values)");
    ZS_EXPECTS(s.count == 0 || s.values != nullptr || (s.type == value_type::string && s.chars_bytes == 0),
               "values for a non-empty source");
    ZS_EXPECTS(s.type != value_type::string || s.offsets != nullptr, "offsets for a string source");
    ZS_EXPECTS(c.params_bytes(s.type) == 0 || s.params != nullptr,
               "column parameters for codec '" + std::string(c.name()) + "' (frame " + std::to_string(i) +
                   ": prepare them with prepare_host or prepare_async)");
    ZS_EXPECTS(batch.frame_offsets[i] % frame_alignment == 0, "frame offsets aligned to frame_alignment");
    ZS_EXPECTS(batch.frame_offsets[i + 1] >= batch.frame_offsets[i] &&
                   batch.frame_offsets[i + 1] - batch.frame_offsets[i] >= c.max_frame_bytes(s),
               "room for max_frame_bytes at frame " + std::to_string(i));
  }
}

void check_decode_batch(const decode_batch& batch) {
  ZS_EXPECTS(batch.frame_offsets.size() == batch.targets.size() + 1,
             "one frame offset per target, plus the end");
  ZS_EXPECTS(batch.status != nullptr || batch.targets.empty(), "a status array");
  for (std::size_t i = 0; i < batch.targets.size(); ++i) {
    auto const& t = batch.targets[i];
    ZS_EXPECTS(is_valid(t.type), "a valid target value type");
    // Decoders size their work from targets: a target's sizes are memory it has, so they fit.
    ZS_EXPECTS(count_fits(t.type, t.count) && !add_overflows(t.chars_begin, t.chars_bytes),
               "a target whose size fits in 64 bits (frame " + std::to_string(i) + ": " + std::to_string(t.count) +
                   " values, characters " + std::to_string(t.chars_begin) + " + " + std::to_string(t.chars_bytes) +
                   ")");
    ZS_EXPECTS(t.type != value_type::string || t.offsets != nullptr, "offsets for a string target");
    ZS_EXPECTS(batch.frame_offsets[i] % frame_alignment == 0, "frame offsets aligned to frame_alignment");
    ZS_EXPECTS(batch.frame_offsets[i + 1] >= batch.frame_offsets[i], "non-decreasing frame offsets");
  }
}

void check_sample_batch(const codec& c, const sample_batch& samples, std::span<const std::uint64_t> params_offsets) {
  ZS_EXPECTS(!samples.piece_begin.empty() && samples.piece_begin.front() == 0 &&
                 samples.piece_begin.back() == samples.pieces.size(),
             "piece_begin from 0 to the number of pieces");
  ZS_EXPECTS(params_offsets.size() == samples.piece_begin.size(), "one parameter offset per column, plus the end");
  for (std::size_t col = 0; col < samples.columns(); ++col) {
    ZS_EXPECTS(samples.piece_begin[col] <= samples.piece_begin[col + 1], "non-decreasing piece_begin");
    auto const pieces = samples.of(col);
    for (auto const& piece : pieces) {
      ZS_EXPECTS(piece.type == pieces.front().type, "the pieces of a column of one type (column " + std::to_string(col) + ")");
      if (!c.supports(piece.type)) {
        ZS_FAIL(error_code::unsupported, "codec '" + std::string(c.name()) + "' does not encode " +
                                             std::string(to_string(piece.type)) + " (column " + std::to_string(col) + ")");
      }
    }
    std::uint64_t const room = params_offsets[col + 1] - params_offsets[col];
    ZS_EXPECTS(params_offsets[col + 1] >= params_offsets[col] &&
                   (pieces.empty() || room >= c.params_bytes(pieces.front().type)),
               "room for params_bytes at column " + std::to_string(col) + " (layout_params gives it)");
  }
}

/// Copies of `sources` with the field the base class fills for kernels: params_bytes.
std::vector<encode_source> with_params_sizes(const codec& c, std::span<const encode_source> sources) {
  std::vector<encode_source> out(sources.begin(), sources.end());
  for (auto& s : out) s.params_bytes = c.params_bytes(s.type);
  return out;
}
std::vector<decode_target> with_params_sizes(const codec& c, std::span<const decode_target> targets) {
  std::vector<decode_target> out(targets.begin(), targets.end());
  for (auto& t : out) t.params_bytes = c.params_bytes(t.type);
  return out;
}

}  // namespace detail

std::vector<std::uint64_t> layout_params(const codec& c, std::span<const value_type> types) {
  std::vector<std::uint64_t> offsets(types.size() + 1, 0);
  for (std::size_t i = 0; i < types.size(); ++i) offsets[i + 1] = offsets[i] + align_frame(c.params_bytes(types[i]));
  return offsets;
}

void codec::prepare_params_async(const sample_batch&, std::byte*, std::span<const std::uint64_t>, cudaStream_t) const {
  ZS_FAIL(error_code::internal, "codec '" + std::string(name()) + "' has column parameters but no GPU preparation");
}
void codec::prepare_params_host(const sample_batch&, std::byte*, std::span<const std::uint64_t>) const {
  ZS_FAIL(error_code::internal, "codec '" + std::string(name()) + "' has column parameters but no CPU preparation");
}

namespace {

bool has_params(const codec& c, const sample_batch& samples) {
  for (auto const& piece : samples.pieces) {
    if (c.params_bytes(piece.type) != 0) return true;
  }
  return false;
}

}  // namespace

void codec::prepare_host(const sample_batch& samples, std::byte* params,
                         std::span<const std::uint64_t> params_offsets) const {
  detail::check_sample_batch(*this, samples, params_offsets);
  if (has_params(*this, samples)) prepare_params_host(samples, params, params_offsets);
}

std::size_t codec::encode_payloads_temp_bytes(std::span<const encode_source>) const { return 0; }
std::size_t codec::decode_payloads_temp_bytes(std::span<const decode_target>) const { return 0; }

void codec::encode_host(const encode_batch& batch) const {
  detail::check_encode_batch(*this, batch);
  auto const sources = detail::with_params_sizes(*this, batch.sources);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto const& source = sources[i];
    std::byte* frame = batch.frames + batch.frame_offsets[i];
    std::uint64_t const capacity = batch.frame_offsets[i + 1] - batch.frame_offsets[i];
    std::uint64_t const params = source.params_bytes;
    std::uint64_t const section = params_section_bytes(params);
    if (params != 0) {
      // The column's parameters go first (their padding zeroed), so the body encoder may read
      // them from the frame as the GPU encoders do.
      std::byte* payload = frame + frame_header_bytes;
      std::memset(payload, 0, section);
      std::memcpy(payload + params_prefix_bytes, source.params, params);
    }
    encode_payload_host(source, frame, capacity);
    // The payload encoder wrote the codec id, its body's bytes and the codec parameters; the
    // rest follows.
    frame_header h = load_header(frame);
    if (h.payload_bytes > capacity - frame_header_bytes - section) {
      ZS_FAIL(error_code::internal, "codec '" + std::string(name()) + "' overran its frame");
    }
    if (params != 0) {
      store_params_prefix(frame + frame_header_bytes, params, h.payload_bytes);
      h.payload_bytes += section;
    }
    std::uint64_t const checksum = batch.embedded ? 0 : hash::checksum(frame + frame_header_bytes, h.payload_bytes);
    complete_header(h, frame, source.type, source.count, source.raw_bytes(), checksum,
                    params != 0 ? frame_version_params : frame_version);
    batch.frame_bytes[i] = frame_header_bytes + h.payload_bytes;
  }
}

void codec::decode_host(const decode_batch& batch) const {
  detail::check_decode_batch(batch);
  for (std::size_t i = 0; i < batch.targets.size(); ++i) {
    auto const& target = batch.targets[i];
    const std::byte* frame = batch.frames + batch.frame_offsets[i];
    std::uint64_t const available = batch.frame_offsets[i + 1] - batch.frame_offsets[i];
    frame_expectation const expected = expectation(*this, target);
    frame_status status = batch.embedded ? validate_header(frame, available, expected)
                                         : validate_frame_host(frame, available, expected);
    if (status == frame_status::ok) {
      status = decode_payload_host(load_header(frame), frame + frame_header_bytes, target);
    }
    batch.status[i] = status;
  }
}

frame_status validate_frame_host(const std::byte* frame, std::uint64_t available,
                                 const frame_expectation& expected) noexcept {
  frame_status const status = validate_header(frame, available, expected);
  if (status != frame_status::ok) return status;
  frame_header const h = load_header(frame);
  if (hash::checksum(frame + frame_header_bytes, h.payload_bytes) != h.payload_checksum) {
    return frame_status::bad_payload_checksum;
  }
  return frame_status::ok;
}

std::vector<std::uint64_t> layout_frames(const codec& c, std::span<const encode_source> sources) {
  std::vector<std::uint64_t> offsets(sources.size() + 1, 0);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::uint64_t const room = c.max_frame_bytes(sources[i]);
    if (add_overflows(room, frame_alignment - 1) || add_overflows(offsets[i], align_frame(room))) {
      ZS_FAIL(error_code::out_of_memory, "the frames of a batch need more than 2^64 bytes (frame " +
                                             std::to_string(i) + " alone asks for " + std::to_string(room) + ")");
    }
    offsets[i + 1] = offsets[i] + align_frame(room);
  }
  return offsets;
}

void throw_if_failed(std::span<const frame_status> statuses) {
  std::size_t bad = 0;
  std::size_t first = statuses.size();
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i] != frame_status::ok) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return;
  ZS_FAIL(error_code::corrupt_frame, std::to_string(bad) + " of " + std::to_string(statuses.size()) +
                                         " frames failed to decode; first: frame " +
                                         std::to_string(first) + ": " +
                                         std::string(to_string(statuses[first])));
}

namespace {

// The registered codecs, sorted by id. Registration happens while the library (or a program)
// loads, lookups afterwards; the lock covers a program that registers from several threads.
struct registry {
  std::mutex lock;
  std::vector<const codec*> codecs;
};

registry& codec_registry() {
  static registry r;
  return r;
}

}  // namespace

void register_codec(const codec& c) {
  auto& r = codec_registry();
  std::lock_guard const hold(r.lock);
  auto const id = static_cast<unsigned>(c.id());
  if (id > max_codec_id) {
    ZS_FAIL(error_code::invalid_argument, "codec '" + std::string(c.name()) + "' has id " + std::to_string(id) +
                                              ", above the largest a frame can carry (" +
                                              std::to_string(max_codec_id) + ")");
  }
  for (std::uint8_t t = 1; t <= last_value_type_id; ++t) {
    auto const type = static_cast<value_type>(t);
    if (c.params_bytes(type) > max_params_bytes) {
      ZS_FAIL(error_code::invalid_argument, "codec '" + std::string(c.name()) + "' has " +
                                                std::to_string(c.params_bytes(type)) + " bytes of column parameters for " +
                                                std::string(to_string(type)) + ", above the " +
                                                std::to_string(max_params_bytes) + " a frame may carry");
    }
  }
  for (const codec* other : r.codecs) {
    if (other->id() == c.id() || other->name() == c.name()) {
      ZS_FAIL(error_code::invalid_argument, "codec '" + std::string(c.name()) + "' (id " + std::to_string(id) +
                                                ") clashes with the registered codec '" +
                                                std::string(other->name()) + "' (id " +
                                                std::to_string(static_cast<unsigned>(other->id())) + ")");
    }
  }
  auto const at = std::find_if(r.codecs.begin(), r.codecs.end(), [&](const codec* o) { return o->id() > c.id(); });
  r.codecs.insert(at, &c);
}

std::span<const codec* const> all_codecs() { return codec_registry().codecs; }

const codec& get_codec(codec_id id) {
  for (const codec* c : all_codecs()) {
    if (c->id() == id) return *c;
  }
  ZS_FAIL(error_code::unsupported, "codec '" + std::string(to_string(id)) + "' (id " +
                                       std::to_string(static_cast<int>(id)) + ") is not registered");
}

const codec& get_codec(std::string_view name) {
  std::string names;
  for (const codec* c : all_codecs()) {
    if (c->name() == name) return *c;
    names += (names.empty() ? "" : ", ") + std::string(c->name());
  }
  ZS_FAIL(error_code::unsupported, "no codec is named '" + std::string(name) + "' (registered: " + names + ")");
}

const codec& default_codec(value_type type) {
  const codec* best = nullptr;
  for (const codec* c : all_codecs()) {
    if (c->supports(type) && (best == nullptr || c->preference() > best->preference())) best = c;
  }
  if (best == nullptr) return get_codec(codec_id::raw);
  return *best;
}

}  // namespace zs
