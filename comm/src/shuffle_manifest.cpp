#include "shuffle_manifest.hpp"

#include <cstring>
#include <string>

#include "zs/error.hpp"
#include "zs/hash.hpp"

namespace zs::detail {
namespace {

std::string from(const block_route& route) {
  return "the " + std::string(route.what) + " from rank " + std::to_string(route.source);
}

std::string describe_slice(std::size_t c, std::uint64_t k, value_type type) {
  return "column " + std::to_string(c) + " (" + std::string(to_string(type)) + "), round " + std::to_string(k);
}

}  // namespace

std::uint64_t seal_of(std::span<const std::uint64_t> words, const block_route& route) {
  auto const* bytes = reinterpret_cast<const std::byte*>(words.data());
  std::uint64_t context = hash::checksum(reinterpret_cast<const std::byte*>(route.what.data()), route.what.size());
  context = hash::mix64(context ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(route.source)));
  context = hash::mix64(context + static_cast<std::uint64_t>(static_cast<std::int64_t>(route.destination)));
  return hash::mix64(hash::checksum(bytes, words.size_bytes()) ^ context);
}

std::vector<std::uint64_t> sealed(std::vector<std::uint64_t> words, const block_route& route) {
  std::uint64_t const seal = seal_of(words, route);
  words.push_back(seal);
  return words;
}

std::vector<std::uint64_t> unseal(std::span<const std::byte> block, std::size_t words, const block_route& route) {
  // words + 1 words of 8 bytes, without overflow (words counts a buffer's worth at most).
  if (words >= block.size() / 8 + 1 || block.size() != (words + 1) * 8) {
    ZS_FAIL(error_code::corrupt_frame, from(route) + ": " + std::to_string(block.size()) + " bytes, expected " +
                                           std::to_string(words + 1) + " words of 8");
  }
  std::vector<std::uint64_t> out(words);
  if (words > 0) std::memcpy(out.data(), block.data(), words * 8);
  std::uint64_t seal = 0;
  std::memcpy(&seal, block.data() + words * 8, 8);
  if (seal != seal_of(out, route)) {
    ZS_FAIL(error_code::corrupt_frame,
            from(route) + ": the checksum does not match (damaged in transit, or not meant for this rank)");
  }
  return out;
}

bool slice_fits(value_type type, std::uint64_t rows, std::uint64_t chars) {
  if (type == value_type::string) return rows <= max_slice_bytes / 8 && chars <= max_slice_bytes - rows * 8;
  std::uint64_t const width = value_width(type);
  return chars == 0 && width != 0 && rows <= max_slice_bytes / width;
}

std::vector<std::uint64_t> seal_manifest(std::span<const slice_counts> slices, int source, int destination) {
  std::vector<std::uint64_t> words;
  words.reserve(2 * slices.size() + 1);
  for (auto const& s : slices) {
    words.push_back(s.rows);
    words.push_back(s.chars);
  }
  return sealed(std::move(words), {"manifest", source, destination});
}

std::vector<slice_counts> read_manifest(std::span<const std::byte> block, int source, int destination,
                                        std::span<const value_type> types, std::uint64_t rounds) {
  block_route const route{"manifest", source, destination};
  std::size_t const columns = types.size();
  // The receiver's own column and round counts: a manifest that long cannot arrive otherwise.
  if (rounds != 0 && columns > block.size() / 16 / rounds) {
    ZS_FAIL(error_code::corrupt_frame, from(route) + ": " + std::to_string(block.size()) + " bytes, too few for " +
                                           std::to_string(columns) + " columns over " + std::to_string(rounds) +
                                           " rounds");
  }
  std::size_t const slices = columns * static_cast<std::size_t>(rounds);
  auto const words = unseal(block, 2 * slices, route);
  std::vector<slice_counts> out(slices);
  for (std::size_t c = 0; c < columns; ++c) {
    for (std::uint64_t k = 0; k < rounds; ++k) {
      std::size_t const i = c * static_cast<std::size_t>(rounds) + static_cast<std::size_t>(k);
      out[i] = {words[2 * i], words[2 * i + 1]};
      if (!is_valid(types[c]) || !slice_fits(types[c], out[i].rows, out[i].chars)) {
        ZS_FAIL(error_code::corrupt_frame, from(route) + ": " + describe_slice(c, k, types[c]) + " brings " +
                                               std::to_string(out[i].rows) + " rows and " +
                                               std::to_string(out[i].chars) + " characters, which no column holds");
      }
    }
  }
  return out;
}

std::vector<std::uint64_t> seal_carriages(std::span<const std::uint8_t> carriages, int source, int destination) {
  return sealed(std::vector<std::uint64_t>(carriages.begin(), carriages.end()), {"carriages", source, destination});
}

std::vector<std::uint8_t> read_carriages(std::span<const std::byte> block, int source, int destination,
                                         std::span<const std::uint8_t> most_way) {
  block_route const route{"carriages", source, destination};
  std::size_t const columns = most_way.size();
  auto const words = unseal(block, columns, route);
  std::vector<std::uint8_t> out(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    if (words[c] > most_way[c]) {
      ZS_FAIL(error_code::corrupt_frame,
              from(route) + ": column " + std::to_string(c) + " travels in way " + std::to_string(words[c]) +
                  ", which it cannot take: raw (0), compressed (1)" +
                  (most_way[c] >= 2 ? " or by its alternative codec (2)" : ""));
    }
    out[c] = static_cast<std::uint8_t>(words[c]);
  }
  return out;
}

std::vector<std::uint64_t> seal_frame_sizes(std::span<const std::uint64_t> sizes, int source, int destination,
                                            std::uint64_t round) {
  std::string const what = "frame sizes of round " + std::to_string(round);
  return sealed({sizes.begin(), sizes.end()}, {what, source, destination});
}

std::vector<std::uint64_t> read_frame_sizes(std::span<const std::byte> block, int source, int destination,
                                            std::uint64_t round, std::size_t columns) {
  std::string const what = "frame sizes of round " + std::to_string(round);
  return unseal(block, columns, {what, source, destination});
}

std::uint64_t add_counts(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) ZS_FAIL(error_code::corrupt_frame, std::string(what) + " overflows 64 bits");
  return sum;
}

}  // namespace zs::detail
