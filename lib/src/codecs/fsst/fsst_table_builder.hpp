// The fsst symbol table builder (host): which bytes of a column it samples, and the table it
// builds from them. The GPU path gathers the same sample on the device and builds with the same
// code, so the CPU and the GPU prepare the same column parameters byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zs/batch.hpp"

namespace zs::codecs::fsst_tables {

/// The sample of one column: up to sample_bytes characters, in chunks of at most chunk_bytes
/// spread evenly over the column's pieces (the whole column when it is smaller).
inline constexpr std::uint64_t chunk_bytes = 512;
inline constexpr std::uint64_t sample_bytes = std::uint64_t{64} << 10;

/// One chunk of a sample: `length` characters from `offset` on in the characters of piece `piece`
/// (an index into the column's pieces).
struct sample_chunk {
  std::uint64_t piece;
  std::uint64_t offset;
  std::uint64_t length;
};

/// The chunks of a column's sample, from the pieces' character counts alone (no data is read).
std::vector<sample_chunk> plan_sample(std::span<const encode_source> pieces);

/// Builds a table from the sampled characters (the chunks back to back in `sample`, with the
/// lengths of `chunks`) and writes it in the serialized layout (fsst_format.hpp), table_bytes
/// bytes at `block`. The reference algorithm: five rounds over growing fractions of the sample;
/// each compresses the sample greedily with the current table, counts symbols and adjacent
/// pairs, and keeps the 255 candidates (symbols and concatenations of pairs) of highest gain
/// (count x length, single bytes x 8); the table that compresses the whole sample best wins.
void build_table(std::span<const std::uint8_t> sample, std::span<const sample_chunk> chunks, std::byte* block);

}  // namespace zs::codecs::fsst_tables
