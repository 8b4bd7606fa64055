// The bitmap codec's CPU reference: the bytes the GPU kernels must write, and the checks they
// must make (kernels/bitmap/bitmap_format.hpp holds both sides' rules).
#include "codecs/bitmap/bitmap_codec.hpp"

#include <cstring>

#include "bitmap/bitmap_format.hpp"
#include "codecs/registry.hpp"

namespace zs::codecs {

bool bitmap_codec::supports(value_type type) const noexcept { return bitmap::encodes(type); }

std::uint64_t bitmap_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // The bytes mode is the largest body; a source too large for any frame asks for more room
  // than a batch can give (layout_frames refuses it).
  std::uint64_t const overhead = frame_header_bytes + bitmap::body_header_bytes;
  return add_overflows(source.count, overhead) ? UINT64_MAX : overhead + source.count;
}

void bitmap_codec::encode_payload_host(const encode_source& source, std::byte* frame,
                                       std::uint64_t /*capacity*/) const {
  std::uint64_t const rows = source.count;
  auto const* values = static_cast<const std::uint8_t*>(source.values);
  bitmap::content seen;
  for (std::uint64_t i = 0; i < rows && (seen.all_equal || seen.all_binary); ++i) {
    seen.all_equal = seen.all_equal && values[i] == values[0];
    seen.all_binary = seen.all_binary && values[i] <= 1;
  }
  bitmap::mode const m = bitmap::choose(rows, seen);
  std::byte* payload = frame + frame_header_bytes;
  bitmap::store_body_header(payload, m);
  std::byte* data = payload + bitmap::body_header_bytes;
  switch (m) {
    case bitmap::mode::constant: data[0] = static_cast<std::byte>(values[0]); break;
    case bitmap::mode::bits: {
      std::uint64_t const bytes = bitmap::data_bytes(m, rows);
      std::memset(data, 0, bytes);
      for (std::uint64_t i = 0; i < rows; ++i) data[i / 8] |= static_cast<std::byte>(values[i] << (i % 8));
      break;
    }
    case bitmap::mode::bytes:
      if (rows != 0) std::memcpy(data, values, rows);
      break;
  }
  store_encoder_fields(frame, codec_id::bitmap, bitmap::payload_bytes(m, rows));
}

frame_status bitmap_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                               const decode_target& target) const {
  // Every rule first: a refused frame leaves its target as it was.
  if (frame_status const status = bitmap::check_frame(header, payload); status != frame_status::ok) return status;
  bitmap::mode const m = bitmap::mode_of(payload);
  const std::byte* data = payload + bitmap::body_header_bytes;
  auto* out = static_cast<std::uint8_t*>(target.values);
  std::uint64_t const rows = header.value_count;
  switch (m) {
    case bitmap::mode::constant:
      if (rows != 0) std::memset(out, static_cast<int>(data[0]), rows);
      break;
    case bitmap::mode::bits:
      for (std::uint64_t i = 0; i < rows; ++i) out[i] = bitmap::value_at(m, data, i);
      break;
    case bitmap::mode::bytes:
      if (rows != 0) std::memcpy(out, data, rows);
      break;
  }
  return frame_status::ok;
}

ZS_REGISTER_CODEC(bitmap_codec)

}  // namespace zs::codecs
