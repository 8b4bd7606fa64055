// FUZZ ENTRY POINT. The counts a rank learns from its peers before it allocates anything: the
// shuffle's manifest (rows and characters per column and round) and each round's frame sizes,
// and the per-contributor counts of the column all-gather and broadcast. The sender seals each
// block with a checksum word; the receiver checks the seal and every count in these functions,
// and nothing else reads those bytes. Each function takes the bytes as they arrived from a peer
// and returns counts that are safe to size allocations from, or throws zs::error
// (corrupt_frame) naming the peer and what was wrong. fuzz/ feeds them arbitrary bytes: keep
// them free of communicators and their signatures plain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "zs/types.hpp"

namespace zs::detail {

/// What a block is and where it travels. The seal covers all three, so a block that reaches
/// the wrong rank, or stands in for another (a stale round), fails like a damaged one.
struct block_route {
  std::string_view what;  // e.g. "manifest", "frame sizes of round 3": the same at both ends
  int source;             // the rank that sealed it
  int destination;        // the rank it is for; -1 when it is for every rank
};

/// The seal of `words` on `route`: a checksum (zs/hash.hpp) of the words mixed with the route.
std::uint64_t seal_of(std::span<const std::uint64_t> words, const block_route& route);

/// `words` followed by their seal: what goes on the wire.
std::vector<std::uint64_t> sealed(std::vector<std::uint64_t> words, const block_route& route);

/// The `words` words of a block sealed on `route`, once its length and seal are checked. Throws
/// corrupt_frame ("the <what> from rank <source>: ...") when `block` is not (words + 1) * 8 bytes
/// long or its seal does not match.
std::vector<std::uint64_t> unseal(std::span<const std::byte> block, std::size_t words, const block_route& route);

/// The largest uncompressed size one slice may claim (values, or characters plus 8 bytes per
/// row). Far above any memory, low enough that sums over many slices stay countable.
inline constexpr std::uint64_t max_slice_bytes = std::uint64_t{1} << 48;

/// Whether `rows` rows of `type` with `chars` characters (strings; 0 otherwise) fit in
/// max_slice_bytes without overflow on the way.
bool slice_fits(value_type type, std::uint64_t rows, std::uint64_t chars);

/// Rows and string characters that one (column, round) slice of a shuffle brings.
struct slice_counts {
  std::uint64_t rows = 0;
  std::uint64_t chars = 0;  // 0 for fixed-width columns
};

/// The manifest block that rank `source` sends rank `destination`: for each column c, then
/// each round k, the slice's rows and characters, then the seal. `slices` is column major
/// (c * rounds + k).
std::vector<std::uint64_t> seal_manifest(std::span<const slice_counts> slices, int source, int destination);

/// Checks and parses the manifest block that rank `source` sent to rank `destination`, for
/// columns of `types` over `rounds` rounds. Returns types.size() * rounds slices, column major.
/// Throws corrupt_frame when the block has the wrong length, fails its seal, gives characters
/// to a fixed-width column, or claims a slice that does not fit (slice_fits).
std::vector<slice_counts> read_manifest(std::span<const std::byte> block, int source, int destination,
                                        std::span<const value_type> types, std::uint64_t rounds);

/// How rank `source` sends each column to rank `destination` (0 raw, 1 compressed, 2 by the
/// column's alternative codec: shuffle_plan::out_carriage), one word per column, then the seal.
/// Travels with the manifest.
std::vector<std::uint64_t> seal_carriages(std::span<const std::uint8_t> carriages, int source, int destination);

/// Checks and parses such a block: one way per column, each at most most_way[c] (1, or 2 where
/// the column has an alternative codec), or throws corrupt_frame (wrong length, bad seal, another
/// value).
std::vector<std::uint8_t> read_carriages(std::span<const std::byte> block, int source, int destination,
                                         std::span<const std::uint8_t> most_way);

/// The block of round `round`'s frame sizes that rank `source` sends rank `destination`: one
/// size per column, then the seal.
std::vector<std::uint64_t> seal_frame_sizes(std::span<const std::uint64_t> sizes, int source, int destination,
                                            std::uint64_t round);

/// Checks and parses such a block: returns `columns` frame sizes, or throws corrupt_frame
/// (wrong length, bad seal). Whether each size suits its frame's rows is the caller's check,
/// which knows the codec.
std::vector<std::uint64_t> read_frame_sizes(std::span<const std::byte> block, int source, int destination,
                                            std::uint64_t round, std::size_t columns);

/// a + b, or zs::error(corrupt_frame) "<what> overflows" when the sum does not fit in 64 bits:
/// for totals of counts that peers sent.
std::uint64_t add_counts(std::uint64_t a, std::uint64_t b, std::string_view what);

}  // namespace zs::detail
