// Fuzzes one codec's CPU decoder (codec::decode_host) with whole frames.
//
// Built once per codec (fuzz/CMakeLists.txt): ZS_FUZZ_CODEC is the codec's name. The input is a
// frame; its decode target is shaped from what the frame's header claims (type, count,
// characters), so that a mutated frame passes the header checks and reaches the payload
// decoder. Headers that claim more than max_target_values values get a small target instead,
// which the frame must then be refused for. Each input is decoded as it is, then again with its
// two checksums recomputed, so that mutations inside a payload reach the codec's own checks
// instead of stopping at the checksum.
//
// What must hold, besides no crash and no sanitizer finding:
//   - a refused frame leaves its target exactly as it was;
//   - an accepted frame was written by a codec this decoder accepts, wrote nothing outside its
//     target, and gives strings whose offsets start at the target's chars_begin, never
//     decrease, and end at its last character;
//   - an accepted frame round-trips: encoding the decoded values with the same codec and
//     decoding that frame gives the same values, byte for byte;
//   - raw frames are canonical: the re-encoded frame is the accepted frame itself.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "zs/codec.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"

namespace {

using zs::fuzz::canary;

/// The most values, and string characters, a target is given from a header's claims: enough for
/// any frame a fuzz input can hold, small enough that preparing a target costs little.
constexpr std::uint64_t max_target_values = std::uint64_t{1} << 16;
constexpr std::uint64_t max_target_chars = std::uint64_t{1} << 18;
/// Where a string target's characters start in its buffer, and the spare bytes after them: a
/// decoder that ignores chars_begin, or writes past the characters, changes canary bytes.
constexpr std::uint64_t chars_begin = 5;
constexpr std::uint64_t chars_slack = 11;

const zs::codec& codec_under_test() {
  static const zs::codec& found = []() -> const zs::codec& {
    for (const zs::codec* c : zs::all_codecs()) {
      if (c->name() == std::string_view(ZS_FUZZ_CODEC)) return *c;
    }
    ZS_FUZZ_CHECK(false, "the codec named by ZS_FUZZ_CODEC is built in");
    std::abort();
  }();
  return found;
}

struct target_shape {
  zs::value_type type = zs::value_type::int32;
  std::uint64_t count = 0;
  std::uint64_t chars = 0;  // strings only
  bool from_header = false;
};

target_shape shape_for(std::span<const std::byte> frame) {
  target_shape shape;
  if (frame.size() < zs::frame_header_bytes) return shape;
  zs::frame_header const h = zs::load_header(frame.data());
  if (zs::is_valid(h.type)) shape.type = h.type;
  bool const is_string = shape.type == zs::value_type::string;
  if (h.value_count <= max_target_values && (!is_string || h.raw_bytes <= max_target_chars)) {
    shape.count = h.value_count;
    shape.chars = is_string ? h.raw_bytes : 0;
    shape.from_header = true;
  } else {
    shape.count = 16;  // differs from the header's count: the frame must be refused
    shape.chars = is_string ? 64 : 0;
  }
  return shape;
}

/// A decode target and the memory behind it, every byte set to the canary.
class target_memory {
 public:
  explicit target_memory(const target_shape& shape) : shape_(shape) {
    bool const is_string = shape.type == zs::value_type::string;
    values_.assign(is_string ? chars_begin + shape.chars + chars_slack : shape.count * zs::value_width(shape.type),
                   canary);
    if (is_string) offsets_.assign((shape.count + 1) * sizeof(std::int64_t), canary);
    target_.type = shape.type;
    target_.count = shape.count;
    target_.values = values_.data();
    if (is_string) {
      target_.offsets = reinterpret_cast<std::int64_t*>(offsets_.data());
      target_.chars_begin = chars_begin;
      target_.chars_bytes = shape.chars;
    }
  }
  target_memory(const target_memory&) = delete;
  target_memory& operator=(const target_memory&) = delete;

  const zs::decode_target& target() const noexcept { return target_; }
  bool untouched() const noexcept { return zs::fuzz::untouched(values_) && zs::fuzz::untouched(offsets_); }
  bool same_as(const target_memory& other) const noexcept {
    return values_ == other.values_ && offsets_ == other.offsets_;
  }

  /// The decoded values as an encoder's source.
  zs::encode_source as_source() const noexcept {
    zs::encode_source s{target_.type, target_.count, target_.values};
    if (target_.type == zs::value_type::string) {
      s.offsets = target_.offsets;
      s.chars_bytes = target_.chars_bytes;
    }
    return s;
  }

  /// What an accepted string frame must leave: the bytes around its characters untouched, and
  /// offsets that run from chars_begin to the last character without going back.
  void check_decoded_strings() const {
    if (shape_.type != zs::value_type::string) return;
    std::span<const std::byte> const all(values_);
    ZS_FUZZ_CHECK(zs::fuzz::untouched(all.first(chars_begin)), "nothing written before chars_begin");
    ZS_FUZZ_CHECK(zs::fuzz::untouched(all.last(chars_slack)), "nothing written after the characters");
    const std::int64_t* offsets = target_.offsets;
    ZS_FUZZ_CHECK(offsets[0] == static_cast<std::int64_t>(chars_begin), "strings start at chars_begin");
    for (std::uint64_t i = 0; i < shape_.count; ++i) {
      ZS_FUZZ_CHECK(offsets[i] <= offsets[i + 1], "string offsets never decrease");
    }
    ZS_FUZZ_CHECK(offsets[shape_.count] == static_cast<std::int64_t>(chars_begin + shape_.chars),
                  "strings end at the last character");
  }

 private:
  target_shape shape_;
  std::vector<std::byte> values_;
  std::vector<std::byte> offsets_;
  zs::decode_target target_;
};

zs::frame_status decode(std::span<const std::byte> frame, const zs::decode_target& target) {
  std::array<std::uint64_t, 2> const offsets{0, frame.size()};
  zs::frame_status status = zs::frame_status::not_decoded;
  codec_under_test().decode_host({frame.data(), offsets, std::span(&target, 1), &status});
  return status;
}

/// Encodes the values an accepted frame decoded to, decodes that frame, and checks that the
/// values come back the same; for raw frames, that the frame comes back the same.
void check_round_trip(std::span<const std::byte> accepted, const target_memory& decoded, const target_shape& shape) {
  zs::codec const& c = codec_under_test();
  zs::encode_source source = decoded.as_source();
  // A codec with column parameters (alp, fsst, fsst_dict) prepares them from the decoded values,
  // as a caller would from its column.
  std::vector<std::byte> params;
  if (c.params_bytes(source.type) > 0) {
    std::vector<std::uint64_t> const params_offsets = zs::layout_params(c, std::span(&source.type, 1));
    params.resize(params_offsets.back());
    std::vector<std::uint64_t> const piece_begin{0, 1};
    c.prepare_host({std::span(&source, 1), piece_begin}, params.data(), params_offsets);
    source.params = params.data();
  }
  std::vector<std::uint64_t> const offsets = zs::layout_frames(c, std::span(&source, 1));
  std::vector<std::byte> frame(offsets.back());
  std::uint64_t frame_bytes = 0;
  c.encode_host({std::span(&source, 1), frame.data(), offsets, &frame_bytes});
  ZS_FUZZ_CHECK(frame_bytes <= c.max_frame_bytes(source), "an encoded frame fits max_frame_bytes");

  target_memory again(shape);
  ZS_FUZZ_CHECK(decode(std::span(frame).first(frame_bytes), again.target()) == zs::frame_status::ok,
                "the frame encoded from decoded values decodes");
  ZS_FUZZ_CHECK(again.same_as(decoded), "decoded values round-trip through the codec");

  if (c.id() == zs::codec_id::raw) {
    std::uint64_t const accepted_bytes = zs::frame_header_bytes + zs::load_header(accepted.data()).payload_bytes;
    ZS_FUZZ_CHECK(frame_bytes == accepted_bytes && zs::fuzz::same_bytes(frame.data(), accepted.data(), frame_bytes),
                  "a raw frame that decodes is the one frame its values encode to");
  }
}

void check_frame(std::span<const std::byte> frame) {
  target_shape const shape = shape_for(frame);
  target_memory decoded(shape);
  zs::frame_status const status = decode(frame, decoded.target());
  if (status != zs::frame_status::ok) {
    ZS_FUZZ_CHECK(decoded.untouched(), "a refused frame leaves its target as it was");
    return;
  }
  ZS_FUZZ_CHECK(shape.from_header, "a frame whose count differs from its target's is refused");
  zs::frame_header const h = zs::load_header(frame.data());
  ZS_FUZZ_CHECK((zs::codec_bit(h.codec) & codec_under_test().decodes()) != 0,
                "an accepted frame was written by a codec this decoder accepts");
  decoded.check_decoded_strings();
  check_round_trip(frame, decoded, shape);
}

/// The frame with its payload checksum and header checksum recomputed from its bytes (where
/// the header's payload size fits in the input).
std::vector<std::byte> with_checksums_recomputed(std::vector<std::byte> frame) {
  if (frame.size() < zs::frame_header_bytes) return frame;
  zs::frame_header h = zs::load_header(frame.data());
  if (h.payload_bytes <= frame.size() - zs::frame_header_bytes) {
    h.payload_checksum = zs::hash::checksum(frame.data() + zs::frame_header_bytes, h.payload_bytes);
  }
  zs::store_header(h, frame.data());
  return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Copies of exactly `size` bytes, so that AddressSanitizer sees any read past the frame.
  std::vector<std::byte> const frame = zs::fuzz::bytes_of(data, size);
  check_frame(frame);
  std::vector<std::byte> const repaired = with_checksums_recomputed(frame);
  if (repaired != frame) check_frame(repaired);
  return 0;
}
