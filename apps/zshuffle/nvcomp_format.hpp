// The body of an nvcomp:NAME frame (private-use codec ids 24..28, nvcomp_codecs.hpp): the
// frame's values cut into 64 KiB chunks, each compressed by nvCOMP on its own.
//
//   offset          size      field
//        0             8      chunk count C (the raw bytes / 64 KiB, rounded up)
//        8             8      chunk bytes (65536: the uncompressed bytes of every chunk but the last)
//       16         4 x C      compressed bytes of each chunk (1 .. 2^32 - 1)
//   16 + 4C'                  the chunks, each starting at a multiple of 16 and padded with zeros
//                             to one (4C' = 4C rounded up to 16)
//
// The body ends with the last chunk's padding: its size is exact, so that a decoder finds
// every chunk inside it and nothing else. Chunks start 16-byte aligned (frames do) because
// nvCOMP's decompressors require their inputs aligned (ANS to 16 bytes).
//
// The header and the walk over the chunk table are ZS_HD: the GPU kernel that plans the
// decompression and the CPU tests check tables with the same code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/frame.hpp"
#include "zs/hd.hpp"

namespace zs::nvcomp {

inline constexpr std::uint64_t chunk_bytes = std::uint64_t{64} << 10;
inline constexpr std::uint64_t body_prefix_bytes = 16;
inline constexpr std::uint64_t chunk_alignment = 16;

ZS_HD constexpr std::uint64_t align16(std::uint64_t bytes) noexcept { return (bytes + 15) / 16 * 16; }

/// Chunks of a frame of `raw_bytes` uncompressed bytes.
ZS_HD constexpr std::uint64_t chunk_count(std::uint64_t raw_bytes) noexcept {
  return raw_bytes / chunk_bytes + (raw_bytes % chunk_bytes != 0 ? 1 : 0);
}
/// Uncompressed bytes of chunk `k` of a frame of `raw_bytes`.
ZS_HD constexpr std::uint64_t chunk_raw_bytes(std::uint64_t raw_bytes, std::uint64_t k) noexcept {
  std::uint64_t const begin = k * chunk_bytes;
  return raw_bytes - begin < chunk_bytes ? raw_bytes - begin : chunk_bytes;
}
/// Where the first chunk starts in a body of `chunks` chunks: after the prefix and the table.
ZS_HD constexpr std::uint64_t chunks_begin(std::uint64_t chunks) noexcept {
  return body_prefix_bytes + align16(4 * chunks);
}
/// The largest body of a frame of `raw_bytes`, each chunk at most `max_chunk` compressed bytes.
/// Callers keep raw_bytes within what a column can hold, so this does not overflow.
ZS_HD constexpr std::uint64_t max_body_bytes(std::uint64_t raw_bytes, std::uint64_t max_chunk) noexcept {
  std::uint64_t const chunks = chunk_count(raw_bytes);
  return chunks_begin(chunks) + chunks * align16(max_chunk);
}

/// Walks the chunk table of the body at `body` (`body_bytes` bytes, the frame's payload) of a
/// frame that must hold `raw_bytes` uncompressed bytes, and calls
/// visit(k, offset in the body, compressed bytes, uncompressed bytes) for each chunk. Returns
/// false, having visited only chunks that lie inside the body, where the table does not describe
/// the body exactly: a wrong chunk count or chunk size, a chunk of zero bytes, a chunk past the
/// end, or bytes after the last chunk. Call it once with a visitor that does nothing to check a
/// table before acting on any chunk.
template <typename Visit>
ZS_HD bool walk_chunks(const std::byte* body, std::uint64_t body_bytes, std::uint64_t raw_bytes, Visit&& visit) noexcept {
  if (body_bytes < body_prefix_bytes) return false;
  std::uint64_t const chunks = detail::load_le(body, 8);
  if (chunks != chunk_count(raw_bytes) || detail::load_le(body + 8, 8) != chunk_bytes) return false;
  // The table must fit in the body before its size is computed (the count came from outside).
  if (chunks > (body_bytes - body_prefix_bytes) / 4) return false;
  std::uint64_t offset = chunks_begin(chunks);
  if (offset > body_bytes) return false;
  for (std::uint64_t k = 0; k < chunks; ++k) {
    std::uint64_t const compressed = detail::load_le(body + body_prefix_bytes + 4 * k, 4);
    // offset <= body_bytes here, and compressed < 2^32: neither sum below wraps.
    if (compressed == 0 || align16(compressed) > body_bytes - offset) return false;
    visit(k, offset, compressed, chunk_raw_bytes(raw_bytes, k));
    offset += align16(compressed);
  }
  return offset == body_bytes;
}

/// walk_chunks with nothing to do per chunk: whether the table describes the body exactly.
ZS_HD inline bool valid_chunk_table(const std::byte* body, std::uint64_t body_bytes, std::uint64_t raw_bytes) noexcept {
  return walk_chunks(body, body_bytes, raw_bytes, [](std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t) {});
}

}  // namespace zs::nvcomp
