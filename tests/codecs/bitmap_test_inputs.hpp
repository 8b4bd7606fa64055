// Inputs of the bitmap codec's tests, shared by the CPU reference's (tests/codecs/
// bitmap_cpu_test.cpp) and the GPU's (tests/gpu/bitmap_gpu_test.cpp): columns of one byte a row
// whose mode the format fixes, and frames whose bodies break its rules behind valid checksums.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bitmap/bitmap_format.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"
#include "zs/types.hpp"

namespace zs::test::bitmap_inputs {

/// One column of the tests: its values, and the mode the encoder must pick for them.
struct input {
  std::string name;
  value_type type = value_type::uint8;
  std::vector<std::uint8_t> values;
  bitmap::mode expected = bitmap::mode::bytes;
};

/// The row counts every pattern comes in: none, one, around a byte of bits, and a large odd one.
inline const std::vector<std::uint64_t>& row_counts() {
  static const std::vector<std::uint64_t> counts{0, 1, 7, 8, 9, 1'000'003};
  return counts;
}

/// Every pattern at every row count, as uint8 and (where the values are 0 and 1) as bool8:
/// all 1 (all valid), all 0 (all null), another constant, 0 and 1 alternating, 0 and 1 in runs
/// with a lone 1 at the end, and alternating with a 2 (the first, a middle and the last row).
inline std::vector<input> all() {
  std::vector<input> out;
  auto add = [&](const std::string& pattern, std::uint64_t rows, std::vector<std::uint8_t> values, bool binary) {
    bool all_equal = true;
    for (auto v : values) all_equal = all_equal && v == values.front();
    bitmap::mode const expected = rows != 0 && all_equal ? bitmap::mode::constant
                                  : binary               ? bitmap::mode::bits
                                                         : bitmap::mode::bytes;
    std::string const name = pattern + " (" + std::to_string(rows) + " rows)";
    out.push_back({name + " uint8", value_type::uint8, values, expected});
    if (binary) out.push_back({name + " bool8", value_type::bool8, std::move(values), expected});
  };
  for (std::uint64_t rows : row_counts()) {
    add("all 1", rows, std::vector<std::uint8_t>(rows, 1), true);
    add("all 0", rows, std::vector<std::uint8_t>(rows, 0), true);
    add("all 200", rows, std::vector<std::uint8_t>(rows, 200), rows == 0);
    std::vector<std::uint8_t> alternating(rows), runs(rows);
    for (std::uint64_t i = 0; i < rows; ++i) {
      alternating[i] = static_cast<std::uint8_t>(i % 2);
      runs[i] = static_cast<std::uint8_t>((i / 1000) % 2);
    }
    if (rows != 0) runs.back() = 1;
    add("alternating 0 and 1", rows, alternating, true);
    add("runs of 0 and 1", rows, runs, true);
    for (std::uint64_t at : {std::uint64_t{0}, rows / 2, rows - 1}) {
      if (rows == 0) break;
      std::vector<std::uint8_t> with_two = alternating;
      with_two[at] = 2;
      add("alternating with a 2 at row " + std::to_string(at), rows, std::move(with_two), false);
    }
  }
  return out;
}

/// A copy of a frame (header and payload) whose payload is `payload`, with the payload bytes
/// field and both checksums made right: the codec's own rules then decide.
inline std::vector<std::byte> with_payload(const std::vector<std::byte>& frame, const std::vector<std::byte>& payload) {
  std::vector<std::byte> out(frame_header_bytes + payload.size());
  std::copy(frame.begin(), frame.begin() + frame_header_bytes, out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + frame_header_bytes);
  frame_header h = load_header(out.data());
  h.payload_bytes = payload.size();
  h.payload_checksum = hash::checksum(out.data() + frame_header_bytes, payload.size());
  store_header(h, out.data());
  return out;
}

/// The payload of a frame.
inline std::vector<std::byte> payload_of(const std::vector<std::byte>& frame) {
  frame_header const h = load_header(frame.data());
  auto const begin = frame.begin() + frame_header_bytes;
  return {begin, begin + static_cast<std::ptrdiff_t>(h.payload_bytes)};
}

/// One way to break a valid frame's body behind valid checksums, and the status it must get.
struct corruption {
  std::string name;
  std::vector<std::byte> frame;
  frame_status expected = frame_status::corrupt_payload;
};

/// Every rule of "Validation (bitmap)" broken once, from `constant`, `bits` and `bytes`: valid
/// frames in those modes, each of more than 8 rows, so that no mode's size for its rows equals
/// another's, and the bits frame of a row count that is not a multiple of 8, so that its last
/// byte has bits past the last row.
inline std::vector<corruption> corruptions(const std::vector<std::byte>& constant, const std::vector<std::byte>& bits,
                                           const std::vector<std::byte>& bytes) {
  std::vector<corruption> out;
  for (auto const& [mode_name, frame] :
       {std::pair<std::string, const std::vector<std::byte>*>{"constant", &constant}, {"bits", &bits}, {"bytes", &bytes}}) {
    std::vector<std::byte> const payload = payload_of(*frame);
    for (unsigned unknown : {3U, 4U, 128U, 255U}) {
      auto p = payload;
      p[0] = static_cast<std::byte>(unknown);
      out.push_back({mode_name + ": unknown mode " + std::to_string(unknown), with_payload(*frame, p)});
    }
    for (std::size_t k = 1; k < bitmap::body_header_bytes; ++k) {
      auto p = payload;
      p[k] = std::byte{1};
      out.push_back({mode_name + ": padding byte " + std::to_string(k) + " set", with_payload(*frame, p)});
    }
    {
      auto p = payload;
      p.pop_back();
      out.push_back({mode_name + ": body one byte short", with_payload(*frame, p)});
    }
    {
      auto p = payload;
      p.push_back(std::byte{0});
      out.push_back({mode_name + ": body one byte long", with_payload(*frame, p)});
    }
    {
      auto p = payload;
      p.resize(bitmap::body_header_bytes - 1);
      out.push_back({mode_name + ": body shorter than its header", with_payload(*frame, p)});
    }
    out.push_back({mode_name + ": empty body", with_payload(*frame, {})});
    {
      auto f = *frame;
      frame_header h = load_header(f.data());
      h.params[3] = std::byte{1};
      store_header(h, f.data());
      out.push_back({mode_name + ": codec parameters not zero", f});
    }
    {
      auto f = *frame;
      frame_header h = load_header(f.data());
      h.type = value_type::int8;  // a type of one byte a value that the codec does not take
      h.raw_bytes = h.value_count;
      store_header(h, f.data());
      out.push_back({mode_name + ": type int8", f, frame_status::unsupported_type});
    }
  }
  // The other modes' sizes for the same rows: a bits frame relabelled constant or bytes, and so on.
  auto relabelled = [&](const std::vector<std::byte>& frame, bitmap::mode m, const std::string& name) {
    auto p = payload_of(frame);
    p[0] = static_cast<std::byte>(m);
    out.push_back({name, with_payload(frame, p)});
  };
  relabelled(bits, bitmap::mode::constant, "bits body labelled constant");
  relabelled(bits, bitmap::mode::bytes, "bits body labelled bytes");
  relabelled(bytes, bitmap::mode::bits, "bytes body labelled bits");
  relabelled(constant, bitmap::mode::bits, "constant body labelled bits");
  {
    auto p = payload_of(bits);
    p.back() |= std::byte{0x80};
    out.push_back({"bits: a bit set past the last row", with_payload(bits, p)});
  }
  return out;
}

}  // namespace zs::test::bitmap_inputs
