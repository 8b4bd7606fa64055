#include "codecs/raw/raw_codec.hpp"
#include "codecs/registry.hpp"

#include <bit>
#include <cstring>

#include "raw/raw_format.hpp"

namespace zs::codecs {

static_assert(std::endian::native == std::endian::little,
              "the raw codec copies values as they are: the wire format is little-endian");

std::uint64_t raw_codec::max_frame_bytes(const encode_source& source) const noexcept {
  std::uint64_t const payload = raw::payload_bytes(source.type, source.count, source.raw_bytes());
  // A source too large for any frame asks for more room than a batch can give.
  return add_overflows(payload, frame_header_bytes) ? raw::unrepresentable_bytes : frame_header_bytes + payload;
}

void raw_codec::encode_payload_host(const encode_source& source, std::byte* frame,
                                    std::uint64_t /*capacity*/) const {
  std::byte* payload = frame + frame_header_bytes;
  std::uint64_t const raw = source.raw_bytes();
  if (source.type == value_type::string) {
    std::int64_t const base = source.offsets[0];
    for (std::uint64_t i = 0; i <= source.count; ++i) {
      detail::store_le(payload + i * 8, static_cast<std::uint64_t>(source.offsets[i] - base), 8);
    }
    payload += (source.count + 1) * 8;
    if (raw != 0) std::memcpy(payload, static_cast<const std::byte*>(source.values) + base, raw);
  } else if (raw != 0) {
    std::memcpy(payload, source.values, raw);
  }
  store_encoder_fields(frame, codec_id::raw, raw::payload_bytes(source.type, source.count, raw));
}

frame_status raw_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                            const decode_target& target) const {
  // Parameters and sizes first: the payload bytes then cover every offset and character read below.
  if (frame_status const status = raw::check_header(header); status != frame_status::ok) return status;
  if (target.type != value_type::string) {
    if (header.raw_bytes != 0) std::memcpy(target.values, payload, header.raw_bytes);
    return frame_status::ok;
  }
  // Check every offset before writing anything, so a corrupt frame leaves the target untouched.
  std::uint64_t const n = header.value_count;
  std::uint64_t previous = 0;
  for (std::uint64_t i = 0; i <= n; ++i) {
    std::uint64_t const offset = detail::load_le(payload + i * 8, 8);
    if ((i == 0 && offset != 0) || offset < previous || offset > header.raw_bytes) {
      return frame_status::corrupt_payload;
    }
    previous = offset;
  }
  if (previous != header.raw_bytes) return frame_status::corrupt_payload;
  for (std::uint64_t i = 0; i <= n; ++i) {
    target.offsets[i] = static_cast<std::int64_t>(target.chars_begin + detail::load_le(payload + i * 8, 8));
  }
  if (header.raw_bytes != 0) {
    std::memcpy(static_cast<std::byte*>(target.values) + target.chars_begin, payload + (n + 1) * 8,
                header.raw_bytes);
  }
  return frame_status::ok;
}

ZS_REGISTER_CODEC(raw_codec)

}  // namespace zs::codecs
