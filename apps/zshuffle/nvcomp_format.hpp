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
// The header, the walk over the chunk table and the planning of each chunk's nvCOMP arguments
// are ZS_HD: the GPU kernel that plans the decompression and the CPU tests run the same code.
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

// --- decompression: what nvCOMP is given for each chunk ---------------------------------------
//
// nvCOMP's batched decompressors take, per chunk, a compressed address and size and an output
// address and room, and are documented only for chunks their own compressors wrote, each into
// room of its own: a chunk of zero bytes, or of bytes it did not write, is undefined input
// (most decompressors read such a chunk's header without regard to its size). So a frame that
// fails any check before decompression is not handed over as it is: each of its chunks is
// parked, pointed at a chunk nvCOMP itself compressed (the parking chunk) with an output slot of
// its own in scratch, so that the call stays one call over the whole batch, every entry of it
// is input nvCOMP is documented to take, and nothing is written into the refused frame's target.

/// The nvCOMP arguments of a batch's chunks, one entry per chunk in each array (device arrays on
/// the GPU, host arrays in tests).
struct chunk_arguments {
  const void** in;         // the compressed chunk
  std::size_t* in_bytes;   // its bytes
  void** out;              // where it decompresses to
  std::size_t* out_bytes;  // the room there: exactly the chunk's uncompressed bytes
};

/// The chunk that the chunks of refused frames decompress instead of theirs: `raw_bytes` bytes
/// that nvCOMP compressed to the `in_bytes` bytes at `in`. Parked chunk c decompresses into
/// out + c * out_slot_bytes (out_slot_bytes >= raw_bytes, a multiple of nvCOMP's output
/// alignment), so no two chunks of a call share output bytes.
struct parking_chunk {
  const std::byte* in;
  std::uint64_t in_bytes;
  std::uint64_t raw_bytes;
  std::byte* out;
  std::uint64_t out_slot_bytes;
};

/// Points chunk `c` of the batch at the parking chunk and its own output slot.
ZS_HD inline void park_chunk(const chunk_arguments& args, std::uint64_t c, const parking_chunk& parking) noexcept {
  args.in[c] = parking.in;
  args.in_bytes[c] = parking.in_bytes;
  args.out[c] = parking.out + c * parking.out_slot_bytes;
  args.out_bytes[c] = parking.raw_bytes;
}

/// Fills the nvCOMP arguments of the chunks of one frame, batch entries first .. first +
/// chunk_count(raw_bytes) - 1, and returns whether they are the frame's own. `raw_bytes` is
/// the frame's uncompressed size as the decoder expects it (its target's, which a frame whose
/// header was accepted also carries): the entries a frame takes follow from it alone, never
/// from the count its chunk table states, so a table cannot make this write outside them.
/// Where `usable` and the table describes the body exactly (walk_chunks: its count and chunk
/// size those of raw_bytes, every chunk of 1 .. 2^32 - 1 bytes inside the body, no sum
/// wrapping), chunk k reads its bytes in the body and decompresses into
/// out_base + k * chunk_bytes with chunk_raw_bytes(raw_bytes, k) of room: the rooms are at most
/// chunk_bytes each, follow one another and together are exactly [out_base, out_base +
/// raw_bytes), the frame's target (or its staging). Otherwise every chunk is parked.
ZS_HD inline bool plan_frame_chunks(const std::byte* body, std::uint64_t body_bytes, std::uint64_t raw_bytes,
                                    bool usable, std::byte* out_base, std::uint64_t first,
                                    const chunk_arguments& args, const parking_chunk& parking) noexcept {
  std::uint64_t const chunks = chunk_count(raw_bytes);
  // The whole table is checked before any entry points into the body: a table that fails half
  // way leaves no entry of the frame aimed at its chunks.
  usable = usable && valid_chunk_table(body, body_bytes, raw_bytes);
  if (!usable) {
    for (std::uint64_t k = 0; k < chunks; ++k) park_chunk(args, first + k, parking);
    return false;
  }
  walk_chunks(body, body_bytes, raw_bytes, [&](std::uint64_t k, std::uint64_t offset, std::uint64_t compressed,
                                               std::uint64_t chunk_raw) {
    std::uint64_t const c = first + k;
    args.in[c] = body + offset;
    args.in_bytes[c] = compressed;
    args.out[c] = out_base + k * chunk_bytes;
    args.out_bytes[c] = chunk_raw;
  });
  return true;
}

}  // namespace zs::nvcomp
