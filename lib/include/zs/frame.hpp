// The wire format: one frame per (column, partition). docs/FORMAT.md is the spec.
//
//   offset size field
//        0    4 magic "ZSF1"
//        4    2 format version (1, or 2 for a frame that carries column parameters)
//        6    1 codec id
//        7    1 value type
//        8    8 value count
//       16    8 raw bytes       (count x width; for strings, the character bytes)
//       24    8 payload bytes
//       32    8 payload checksum (zs-sum64 of the payload)
//       40   16 codec parameters
//       56    8 header checksum  (zs-sum64 of bytes 0..55)
//       64      payload
//
// Version 2 payloads start with the column's parameters (codec::params_bytes):
//
//       64    8 parameter bytes P
//       72    8 body bytes
//       80    P column parameters, then zeros up to a multiple of 16
//   80 + P'     body (P' = P rounded up to 16)
//
// All fields little-endian, no padding. Header loads and stores go byte by byte, so a header
// may sit at any address and reads the same on every host and on the GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zs/hash.hpp"
#include "zs/hd.hpp"
#include "zs/overflow.hpp"
#include "zs/types.hpp"

namespace zs {

/// Codec ids as written in frames. Values are part of the wire format: never renumber.
enum class codec_id : std::uint8_t {
  raw = 0,
  bitpack_for = 1,
  bitpack_dfor = 2,
  bitpack_rfor = 3,
  alp = 4,
  fsst = 5,
  rle = 6,
  fsst_dict = 7,
  bitpack_pfor = 8,
  bitpack_pdfor = 9,
  bitpack_drfor = 10,
  bitmap = 11,
  dict = 12,
  // 24..31: private use, for codecs a program registers itself (zs::register_codec); frames
  // with these ids are only meaningful to programs that register the same codecs.
};
/// The first of the private-use ids, and the largest id a frame may carry (codec_bit needs
/// ids below 32).
inline constexpr std::uint8_t first_private_codec_id = 24;
inline constexpr std::uint8_t max_codec_id = 31;

inline constexpr std::uint32_t frame_magic = 0x3146535aU;  // "ZSF1" read little-endian
/// Version 1: the payload is the codec's body. Version 2: column parameters, then the body.
inline constexpr std::uint16_t frame_version = 1;
inline constexpr std::uint16_t frame_version_params = 2;
inline constexpr std::size_t frame_header_bytes = 64;
inline constexpr std::size_t codec_params_bytes = 16;
/// Frames in a batch start at multiples of this, so payloads can be read with 16-byte loads.
inline constexpr std::size_t frame_alignment = 16;
/// A version 2 payload's first bytes: the parameter bytes and the body bytes.
inline constexpr std::size_t params_prefix_bytes = 16;

/// Rounds `bytes` up to a multiple of frame_alignment. There is none above UINT64_MAX - 15:
/// check sizes from outside with add_overflows(bytes, frame_alignment - 1) first.
ZS_HD constexpr std::uint64_t align_frame(std::uint64_t bytes) noexcept {
  return (bytes + frame_alignment - 1) / frame_alignment * frame_alignment;
}

/// Bytes at the start of a payload that precede the codec's body: none for a codec without
/// column parameters, else the prefix and the parameters padded to 16 bytes. A codec's body
/// starts at payload + params_section_bytes(params_bytes), 16-byte aligned in either case;
/// version 2 parameters at payload + params_prefix_bytes.
ZS_HD constexpr std::uint64_t params_section_bytes(std::uint64_t params_bytes) noexcept {
  return params_bytes == 0 ? 0 : params_prefix_bytes + align_frame(params_bytes);
}

struct frame_header {
  std::uint32_t magic = frame_magic;
  std::uint16_t version = frame_version;
  codec_id codec = codec_id::raw;
  value_type type = value_type::int32;
  std::uint64_t value_count = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t payload_checksum = 0;
  std::array<std::byte, codec_params_bytes> params{};
  std::uint64_t header_checksum = 0;
};

/// What a decoder found in a frame. Written per frame by the batched decoders.
enum class frame_status : std::uint32_t {
  ok = 0,
  truncated,             // fewer bytes than a header, or than the header says the frame has
  bad_magic,
  bad_version,
  bad_header_checksum,
  unknown_codec,
  wrong_codec,           // a known codec, but not the one asked to decode it
  unsupported_type,      // not a valid value type, or one the codec does not handle
  type_mismatch,         // the frame's type differs from the destination's
  count_mismatch,        // the frame's value count differs from the destination's
  size_mismatch,         // raw bytes disagree with count x width, or with the destination
  bad_payload_checksum,
  corrupt_payload,       // the payload passed its checksum but does not decode
  not_decoded,           // written before decoding starts; left only if decoding never ran
};

std::string_view to_string(frame_status status) noexcept;
std::string_view to_string(codec_id codec) noexcept;

namespace detail {
ZS_HD inline std::uint64_t load_le(const std::byte* p, int n) noexcept {
  std::uint64_t v = 0;
  for (int k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
  return v;
}
ZS_HD inline void store_le(std::byte* p, std::uint64_t v, int n) noexcept {
  for (int k = 0; k < n; ++k) p[k] = static_cast<std::byte>((v >> (8 * k)) & 0xff);
}
}  // namespace detail

ZS_HD inline frame_header load_header(const std::byte* p) noexcept {
  frame_header h;
  h.magic = static_cast<std::uint32_t>(detail::load_le(p + 0, 4));
  h.version = static_cast<std::uint16_t>(detail::load_le(p + 4, 2));
  h.codec = static_cast<codec_id>(p[6]);
  h.type = static_cast<value_type>(p[7]);
  h.value_count = detail::load_le(p + 8, 8);
  h.raw_bytes = detail::load_le(p + 16, 8);
  h.payload_bytes = detail::load_le(p + 24, 8);
  h.payload_checksum = detail::load_le(p + 32, 8);
  for (std::size_t k = 0; k < codec_params_bytes; ++k) h.params[k] = p[40 + k];
  h.header_checksum = detail::load_le(p + 56, 8);
  return h;
}

/// Writes `h` to p[0..64), computing the header checksum (h.header_checksum is ignored).
ZS_HD inline void store_header(const frame_header& h, std::byte* p) noexcept {
  detail::store_le(p + 0, h.magic, 4);
  detail::store_le(p + 4, h.version, 2);
  p[6] = static_cast<std::byte>(h.codec);
  p[7] = static_cast<std::byte>(h.type);
  detail::store_le(p + 8, h.value_count, 8);
  detail::store_le(p + 16, h.raw_bytes, 8);
  detail::store_le(p + 24, h.payload_bytes, 8);
  detail::store_le(p + 32, h.payload_checksum, 8);
  for (std::size_t k = 0; k < codec_params_bytes; ++k) p[40 + k] = h.params[k];
  detail::store_le(p + 56, hash::checksum(p, 56), 8);
}

/// Writes the header fields a payload encoder owns, for a codec without parameters: its id,
/// the payload bytes, and zero codec parameters.
ZS_HD inline void store_encoder_fields(std::byte* p, codec_id codec, std::uint64_t payload_bytes) noexcept {
  p[6] = static_cast<std::byte>(codec);
  detail::store_le(p + 24, payload_bytes, 8);
  for (std::size_t k = 0; k < codec_params_bytes; ++k) p[40 + k] = std::byte{0};
}

/// Completes the header at p after its payload encoder wrote the fields it owns (codec id,
/// payload bytes, codec parameters), given as h = load_header(p): the magic, version, type,
/// counts and payload checksum go in beside them, then the header checksum.
ZS_HD inline void complete_header(frame_header h, std::byte* p, value_type type, std::uint64_t value_count,
                                  std::uint64_t raw_bytes, std::uint64_t payload_checksum,
                                  std::uint16_t version = frame_version) noexcept {
  h.magic = frame_magic;
  h.version = version;
  h.type = type;
  h.value_count = value_count;
  h.raw_bytes = raw_bytes;
  h.payload_checksum = payload_checksum;
  store_header(h, p);
}

/// A set of codec ids, one bit each.
ZS_HD constexpr std::uint32_t codec_bit(codec_id codec) noexcept {
  return 1U << static_cast<std::uint8_t>(codec);
}

/// What the receiver expects of a frame: it must match type, count and raw bytes exactly.
struct frame_expectation {
  std::uint32_t accepted_codecs;  // codec_bit of each codec the decoder handles
  value_type type;
  std::uint64_t value_count;
  std::uint64_t raw_bytes;  // for strings, the character bytes the destination has room for
  /// The column parameters the codec's frames carry (codec::params_bytes of the type): 0 for
  /// version 1 frames, the exact P of version 2 frames.
  std::uint64_t params_bytes = 0;
};

/// The one header check every decoder runs before it touches a payload. `available` is how many
/// bytes the buffer holds from `frame` on. Does not verify the payload checksum (that is a pass
/// over the payload: verify_payload_checksum on the CPU, a batched kernel on the GPU).
ZS_HD inline frame_status validate_header(const std::byte* frame, std::uint64_t available,
                                          const frame_expectation& expected) noexcept {
  if (available < frame_header_bytes) return frame_status::truncated;
  frame_header const h = load_header(frame);
  if (h.magic != frame_magic) return frame_status::bad_magic;
  if (h.version != frame_version && h.version != frame_version_params) return frame_status::bad_version;
  // A codec's frames are all of one version: with column parameters or without.
  if ((h.version == frame_version_params) != (expected.params_bytes != 0)) return frame_status::bad_version;
  if (h.header_checksum != hash::checksum(frame, 56)) return frame_status::bad_header_checksum;
  if (static_cast<std::uint8_t>(h.codec) > max_codec_id) return frame_status::unknown_codec;
  if ((codec_bit(h.codec) & expected.accepted_codecs) == 0) return frame_status::wrong_codec;
  if (!is_valid(h.type)) return frame_status::unsupported_type;
  if (h.type != expected.type) return frame_status::type_mismatch;
  if (h.value_count != expected.value_count) return frame_status::count_mismatch;
  // Sizes a decoder computes from the count must fit in 64 bits (count x width, or the count + 1
  // offsets of strings) before any is computed: a wrapped size looks small and valid.
  if (!count_fits(h.type, h.value_count)) return frame_status::size_mismatch;
  std::uint64_t const width = value_width(h.type);
  if (width != 0 && h.raw_bytes != h.value_count * width) return frame_status::size_mismatch;
  if (h.raw_bytes != expected.raw_bytes) return frame_status::size_mismatch;
  if (h.payload_bytes > available - frame_header_bytes) return frame_status::truncated;
  if (expected.params_bytes != 0) {
    // The prefix lies inside the payload, whose bytes the checks above bound; it must give the
    // codec's parameter size and account for the whole payload.
    std::uint64_t const section = params_section_bytes(expected.params_bytes);
    if (h.payload_bytes < section) return frame_status::corrupt_payload;
    const std::byte* prefix = frame + frame_header_bytes;
    if (detail::load_le(prefix, 8) != expected.params_bytes ||
        detail::load_le(prefix + 8, 8) != h.payload_bytes - section) {
      return frame_status::corrupt_payload;
    }
  }
  return frame_status::ok;
}

/// Writes a version 2 payload's prefix: the parameter bytes and the body bytes.
ZS_HD inline void store_params_prefix(std::byte* payload, std::uint64_t params_bytes, std::uint64_t body_bytes) noexcept {
  detail::store_le(payload, params_bytes, 8);
  detail::store_le(payload + 8, body_bytes, 8);
}

}  // namespace zs
