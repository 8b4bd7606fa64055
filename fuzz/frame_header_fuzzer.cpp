// Fuzzes the frame parser: load_header, validate_header and validate_frame_host (zs/frame.hpp,
// zs/codec.hpp), the checks every decoder runs before it reads a payload.
//
// The input is a frame; it is validated against what its own header claims (every codec id
// accepted), so that a mutated header can pass every check. What must hold:
//   - fewer than 64 bytes are truncated;
//   - an accepted header has the magic, version and header checksum of docs/FORMAT.md (and for
//     version 2 a parameter prefix that accounts for the payload), a known
//     codec and value type, sizes that fit in 64 bits (count x width equal to the raw bytes, or
//     for strings room for count + 1 offsets), and a payload inside the input;
//   - an accepted header is stored back to the same 64 bytes;
//   - changing any one byte of an accepted header, or any one thing the receiver expects (type,
//     count, raw bytes, the accepted codecs, the bytes available), gets it refused with the
//     status of that check;
//   - validate_frame_host agrees with the header check, and then accepts exactly the frames
//     whose payload checksum matches.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_check.hpp"
#include "zs/codec.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"

namespace {

using zs::frame_status;

constexpr std::uint32_t every_codec =
    zs::max_codec_id >= 31 ? ~std::uint32_t{0} : (std::uint32_t{1} << (zs::max_codec_id + 1)) - 1;

/// A valid value type other than `type`.
zs::value_type another_type(zs::value_type type) {
  return type == zs::value_type::int32 ? zs::value_type::int64 : zs::value_type::int32;
}

void check_accepted(const std::vector<std::byte>& frame, const zs::frame_expectation& expected) {
  zs::frame_header const h = zs::load_header(frame.data());
  ZS_FUZZ_CHECK(h.magic == zs::frame_magic, "the magic");
  ZS_FUZZ_CHECK(h.version == (expected.params_bytes == 0 ? zs::frame_version : zs::frame_version_params),
                "the version that goes with the codec's column parameters");
  ZS_FUZZ_CHECK(h.header_checksum == zs::hash::checksum(frame.data(), 56), "the header checksum matches");
  ZS_FUZZ_CHECK(static_cast<std::uint8_t>(h.codec) <= zs::max_codec_id, "a known codec id");
  ZS_FUZZ_CHECK(zs::is_valid(h.type), "a known value type");
  std::uint64_t const width = zs::value_width(h.type);
  std::uint64_t bytes = 0;
  if (width != 0) {
    ZS_FUZZ_CHECK(!__builtin_mul_overflow(h.value_count, width, &bytes) && bytes == h.raw_bytes,
                  "raw bytes are count x width, without wrapping");
  } else {
    ZS_FUZZ_CHECK(h.value_count < UINT64_MAX && !__builtin_mul_overflow(h.value_count + 1, 8, &bytes),
                  "a string frame's count + 1 offsets fit in 64 bits");
  }
  ZS_FUZZ_CHECK(h.payload_bytes <= frame.size() - zs::frame_header_bytes, "the payload lies inside the input");
  if (expected.params_bytes != 0) {
    std::uint64_t const section = zs::params_section_bytes(expected.params_bytes);
    const std::byte* prefix = frame.data() + zs::frame_header_bytes;
    ZS_FUZZ_CHECK(h.payload_bytes >= section && zs::detail::load_le(prefix, 8) == expected.params_bytes &&
                      zs::detail::load_le(prefix + 8, 8) == h.payload_bytes - section,
                  "a version 2 prefix gives the codec's parameter bytes and the rest of the payload");
    zs::frame_expectation other = expected;
    other.params_bytes = expected.params_bytes + 1;
    ZS_FUZZ_CHECK(zs::validate_header(frame.data(), frame.size(), other) == frame_status::corrupt_payload,
                  "other parameter bytes expected");
    other.params_bytes = 0;
    ZS_FUZZ_CHECK(zs::validate_header(frame.data(), frame.size(), other) == frame_status::bad_version,
                  "a codec without column parameters refuses version 2");
  }

  std::array<std::byte, zs::frame_header_bytes> stored{};
  zs::store_header(h, stored.data());
  ZS_FUZZ_CHECK(zs::fuzz::same_bytes(stored.data(), frame.data(), stored.size()),
                "an accepted header is stored back to the same bytes");

  // One byte changed anywhere in the header: its checksum no longer matches.
  std::vector<std::byte> changed = frame;
  for (std::size_t k = 0; k < zs::frame_header_bytes; ++k) {
    auto const original = changed[k];
    changed[k] = original ^ std::byte{0x5a};
    ZS_FUZZ_CHECK(zs::validate_header(changed.data(), changed.size(), expected) != frame_status::ok,
                  "a header with one byte changed is refused");
    changed[k] = original;
  }

  // Each expectation changed: refused by the check that compares it.
  auto status_with = [&](zs::frame_expectation e, std::uint64_t available) {
    return zs::validate_header(frame.data(), available, e);
  };
  zs::frame_expectation e = expected;
  e.accepted_codecs = every_codec & ~zs::codec_bit(h.codec);
  ZS_FUZZ_CHECK(status_with(e, frame.size()) == frame_status::wrong_codec, "another codec expected");
  e = expected;
  e.type = another_type(h.type);
  ZS_FUZZ_CHECK(status_with(e, frame.size()) == frame_status::type_mismatch, "another type expected");
  e = expected;
  e.value_count = h.value_count + 1;
  ZS_FUZZ_CHECK(status_with(e, frame.size()) == frame_status::count_mismatch, "another count expected");
  e = expected;
  e.raw_bytes = h.raw_bytes + 1;
  ZS_FUZZ_CHECK(status_with(e, frame.size()) == frame_status::size_mismatch, "other raw bytes expected");
  std::uint64_t const needed = zs::frame_header_bytes + h.payload_bytes;
  ZS_FUZZ_CHECK(status_with(expected, needed) == frame_status::ok, "the frame's own bytes are enough");
  ZS_FUZZ_CHECK(status_with(expected, needed - 1) == frame_status::truncated, "one byte fewer is truncated");

  frame_status const full = zs::validate_frame_host(frame.data(), frame.size(), expected);
  bool const payload_matches =
      zs::hash::checksum(frame.data() + zs::frame_header_bytes, h.payload_bytes) == h.payload_checksum;
  ZS_FUZZ_CHECK(full == (payload_matches ? frame_status::ok : frame_status::bad_payload_checksum),
                "the payload checksum decides a frame whose header is valid");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy of exactly `size` bytes, so that AddressSanitizer sees any read past the frame.
  std::vector<std::byte> const frame = zs::fuzz::bytes_of(data, size);
  zs::frame_expectation expected{every_codec, zs::value_type::int32, 0, 0};
  if (size >= zs::frame_header_bytes) {
    zs::frame_header const h = zs::load_header(frame.data());
    expected = {every_codec, h.type, h.value_count, h.raw_bytes};
    // A version 2 frame is checked as its codec would: with the parameter size its prefix claims
    // where that is one a codec may have, else with another.
    if (h.version == zs::frame_version_params) {
      std::uint64_t const claimed =
          size >= zs::frame_header_bytes + 8 ? zs::detail::load_le(frame.data() + zs::frame_header_bytes, 8) : 0;
      expected.params_bytes = claimed >= 1 && claimed <= zs::max_params_bytes ? claimed : 16;
    }
  }
  frame_status const status = zs::validate_header(frame.data(), size, expected);
  if (size < zs::frame_header_bytes) {
    ZS_FUZZ_CHECK(status == frame_status::truncated, "fewer than 64 bytes are truncated");
    return 0;
  }
  if (status == frame_status::ok) {
    check_accepted(frame, expected);
  } else {
    ZS_FUZZ_CHECK(zs::validate_frame_host(frame.data(), size, expected) == status,
                  "the full check refuses a bad header for the same reason");
  }
  return 0;
}
