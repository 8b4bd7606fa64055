// Fuzzes the shuffle's readers of counts from peers (comm/src/shuffle_manifest.hpp): the
// manifest (rows and characters per column and round) and a round's frame sizes, the numbers a
// rank sizes its allocations from before any frame arrives.
//
// Input: 4 bytes of setting, then one byte per column for its value type, then the block as it
// arrived. Setting: columns (1 + byte 0 % 8), rounds (byte 1 % 9), source rank, destination
// rank. Each block is read as it is, then again with its seal recomputed, so that mutated
// counts reach the checks behind the seal. What must hold:
//   - a refused block throws zs::error (corrupt_frame) and nothing else;
//   - an accepted manifest has one slice per column and round, each within max_slice_bytes
//     without overflow (rows x width, or 8 bytes a row plus the characters of strings; no
//     characters for fixed-width columns);
//   - an accepted block is the one block its counts seal to, and only on its own route: the
//     same bytes from another rank, or for another, are refused.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_check.hpp"
#include "shuffle_manifest.hpp"
#include "zs/error.hpp"

namespace {

using zs::detail::slice_counts;

struct setting {
  std::size_t columns;
  std::uint64_t rounds;
  int source;
  int destination;
  std::vector<zs::value_type> types;
};

/// Runs `read`; true when it returns, false when it throws corrupt_frame. Any other exception
/// escapes and stops the run.
template <typename Read>
bool accepted(Read read) {
  try {
    read();
    return true;
  } catch (const zs::error& e) {
    ZS_FUZZ_CHECK(e.code() == zs::error_code::corrupt_frame, "a refused block is a corrupt_frame error");
    return false;
  }
}

std::span<const std::byte> as_block(const std::vector<std::uint64_t>& words) {
  return std::as_bytes(std::span(words));
}

void check_slice(zs::value_type type, const slice_counts& s) {
  std::uint64_t bytes = 0;
  if (type == zs::value_type::string) {
    ZS_FUZZ_CHECK(!__builtin_mul_overflow(s.rows, 8, &bytes) && !__builtin_add_overflow(bytes, s.chars, &bytes) &&
                      bytes <= zs::detail::max_slice_bytes,
                  "a string slice's offsets and characters fit in max_slice_bytes");
  } else {
    ZS_FUZZ_CHECK(s.chars == 0, "a fixed-width slice brings no characters");
    ZS_FUZZ_CHECK(
        !__builtin_mul_overflow(s.rows, zs::value_width(type), &bytes) && bytes <= zs::detail::max_slice_bytes,
        "a fixed-width slice's values fit in max_slice_bytes");
  }
}

void check_manifest(std::span<const std::byte> block, const setting& s) {
  std::vector<slice_counts> slices;
  auto const read = [&] { slices = zs::detail::read_manifest(block, s.source, s.destination, s.types, s.rounds); };
  if (!accepted(read)) return;
  ZS_FUZZ_CHECK(slices.size() == s.columns * s.rounds, "one slice per column and round");
  for (std::size_t i = 0; i < slices.size(); ++i) check_slice(s.types[i / s.rounds], slices[i]);
  auto const again = zs::detail::seal_manifest(slices, s.source, s.destination);
  ZS_FUZZ_CHECK(as_block(again).size() == block.size() &&
                    zs::fuzz::same_bytes(as_block(again).data(), block.data(), block.size()),
                "an accepted manifest is the block its counts seal to");
  ZS_FUZZ_CHECK(!accepted([&] { zs::detail::read_manifest(block, s.source, s.destination + 1, s.types, s.rounds); }),
                "a manifest for another rank is refused");
  ZS_FUZZ_CHECK(!accepted([&] { zs::detail::read_manifest(block, s.source + 1, s.destination, s.types, s.rounds); }),
                "a manifest from another rank is refused");
}

void check_frame_sizes(std::span<const std::byte> block, const setting& s) {
  std::vector<std::uint64_t> sizes;
  if (!accepted([&] { sizes = zs::detail::read_frame_sizes(block, s.source, s.destination, s.rounds, s.columns); })) {
    return;
  }
  ZS_FUZZ_CHECK(sizes.size() == s.columns, "one frame size per column");
  auto const again = zs::detail::seal_frame_sizes(sizes, s.source, s.destination, s.rounds);
  ZS_FUZZ_CHECK(as_block(again).size() == block.size() &&
                    zs::fuzz::same_bytes(as_block(again).data(), block.data(), block.size()),
                "accepted frame sizes are the block they seal to");
  auto const next_round = [&] {
    zs::detail::read_frame_sizes(block, s.source, s.destination, s.rounds + 1, s.columns);
  };
  ZS_FUZZ_CHECK(!accepted(next_round), "the frame sizes of another round are refused");
}

/// The block's words without its last one, which a seal replaces.
std::vector<std::uint64_t> unsealed_words(std::span<const std::byte> block) {
  std::vector<std::uint64_t> words(block.size() / 8 - 1);
  if (!words.empty()) std::memcpy(words.data(), block.data(), words.size() * 8);
  return words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  setting s{1 + std::size_t{data[0]} % 8, std::uint64_t{data[1]} % 9, data[2] % 16, data[3] % 16, {}};
  if (size < 4 + s.columns) return 0;
  for (std::size_t c = 0; c < s.columns; ++c) s.types.push_back(static_cast<zs::value_type>(1 + data[4 + c] % zs::last_value_type_id));
  // A copy of exactly the block's bytes, so that AddressSanitizer sees any read past it.
  std::vector<std::byte> const block = zs::fuzz::bytes_of(data + 4 + s.columns, size - 4 - s.columns);

  check_manifest(block, s);
  check_frame_sizes(block, s);
  if (block.size() % 8 != 0 || block.empty()) return 0;

  // The same counts with a seal that matches them.
  std::vector<std::uint64_t> const words = unsealed_words(block);
  std::vector<std::uint64_t> const sizes = zs::detail::seal_frame_sizes(words, s.source, s.destination, s.rounds);
  check_frame_sizes(as_block(sizes), s);
  if (words.size() % 2 == 0) {
    std::vector<slice_counts> slices(words.size() / 2);
    for (std::size_t i = 0; i < slices.size(); ++i) slices[i] = {words[2 * i], words[2 * i + 1]};
    check_manifest(as_block(zs::detail::seal_manifest(slices, s.source, s.destination)), s);
  }
  return 0;
}
