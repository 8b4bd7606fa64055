// What one thread block of each bitpack kernel does, written once for two executors: the CUDA
// kernels (bitpack_kernels.cu) and a CPU emulation of a thread block (tests/codecs), which runs
// these very programs with one host thread per GPU thread so CI checks the GPU logic.
//
// A program takes a Block, its thread's handle on the thread block:
//   static constexpr unsigned threads;     threads per block: a multiple of 32 dividing 512
//   unsigned tid;                          this thread's index
//   void sync();                           barrier over the thread block
//   u32/u64 warp_min(v), warp_max(v)       over the 32 lanes of the warp; every lane calls
//   u32/u64 exclusive_sum(v, total&)       block-wide exclusive prefix sum (modulo 2^w);
//                                          every thread calls; ends with a barrier
//   load_status(p), store_status(p, s)     frame statuses, which other blocks may write
// Shared memory is passed in by the executor. Nothing here may use CUDA-only syntax.
//
// The unit of work is a segment of 512 values: four for-blocks, one dfor tile, one rfor block.
// Encoding is two passes over the segments of a batch, with a scan and a per-frame choice
// between them (bitpack_kernels.cu has the sequence):
//   index:   per segment, its frame (so the passes need no search);
//   analyze: load a segment, compute the exact data words of for, dfor and rfor, and keep the
//            smallest encoding in a temp slot when it is at most half the raw size (so the
//            second pass reads fewer bytes than the input);
//   choose:  per frame, totals from the scan, the smallest scheme, the header fields;
//   pack:    per segment, at the segment's offset in its frame: copy the slot when it holds the
//            frame's scheme; otherwise get the values back (from the slot, or the input again)
//            and pack the frame's scheme; then the segment's block starts.
// Decoding: check each frame's layout, validate every segment, plan each chunk (its frame and
// tile), then decode chunks of several segments per thread block (the tile of the paper)
// through shared memory. Nothing of a frame is written before all of it passed validation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bitpack/bitpack_format.hpp"
#include "common/work_map.hpp"
#include "zs/codec.hpp"

#if defined(__CUDACC__)
#define ZS_BLOCK_FN __device__
#else
#define ZS_BLOCK_FN
#endif

namespace zs::bitpack::gpu {

// --- sizes -----------------------------------------------------------------------------------

/// The most data words one segment can take in any scheme, on an adversarial (but valid)
/// frame: an rfor block of 512 runs with a full value width and a declared length width of 9.
ZS_HD constexpr std::uint32_t max_segment_words(std::uint32_t width_bits) noexcept {
  return 1 + reference_words(width_bits) + 16 * width_bits + 144;
}

/// A segment's encoding is kept between the passes when it takes at most this many words:
/// half its raw size. Re-reading the input costs one raw size; keeping costs twice the kept
/// size (written, then read), so keeping pays exactly below half.
ZS_HD constexpr std::uint32_t slot_words(std::uint32_t width_bits) noexcept {
  return segment_values * width_bits / 32 / 2;
}

/// Data words per segment of each scheme (for, dfor, rfor); the encoder scans these.
struct scheme_words {
  std::uint64_t w[3];
};

// --- small helpers ---------------------------------------------------------------------------

template <typename T>
ZS_HD constexpr T min_of(T a, T b) noexcept { return b < a ? b : a; }
template <typename T>
ZS_HD constexpr T max_of(T a, T b) noexcept { return a < b ? b : a; }

template <typename U>
ZS_HD constexpr U sign_bit() noexcept { return U{1} << (8 * sizeof(U) - 1); }

template <typename U>
ZS_HD inline U load_reference(const std::uint32_t* p) noexcept {
  if constexpr (sizeof(U) == 8) return static_cast<U>(p[0]) | (static_cast<U>(p[1]) << 32);
  return static_cast<U>(p[0]);
}

/// Word l of a reference (l < reference words).
template <typename U>
ZS_HD inline std::uint32_t reference_word(U ref, std::uint32_t l) noexcept {
  if constexpr (sizeof(U) == 8) return static_cast<std::uint32_t>(ref >> (32 * l));
  return static_cast<std::uint32_t>(ref);
}

struct alignas(16) word4 {
  std::uint32_t x, y, z, w;
};

/// Copies `count` words from global memory at `src` (4-byte aligned) to shared memory at
/// tile + shift, shift = the word position of `src` inside its 16-byte line, so that the
/// middle of the range moves in aligned 16-byte loads and nothing outside [src, src + count)
/// is read. Zeroes the two words after the copy, which the fixed read window may touch.
/// `tile` is 16-byte aligned with room for count + 5 words. The caller syncs afterwards.
template <class Block>
ZS_BLOCK_FN std::uint32_t load_tile(Block& blk, const std::uint32_t* src, std::uint64_t count,
                                    std::uint32_t* tile) {
  constexpr unsigned T = Block::threads;
  auto const shift = static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(src) >> 2) & 3);
  std::uint64_t head = (4 - shift) & 3;  // words before the first aligned line
  if (head > count) head = count;
  std::uint64_t const lines = (count - head) / 4;
  std::uint64_t const tail = head + 4 * lines;
  auto const* lsrc = reinterpret_cast<const word4*>(src + head);
  auto* ldst = reinterpret_cast<word4*>(tile + shift + head);
  for (std::uint64_t q = blk.tid; q < lines; q += T) ldst[q] = lsrc[q];
  for (std::uint64_t q = blk.tid; q < head; q += T) tile[shift + q] = src[q];
  for (std::uint64_t q = tail + blk.tid; q < count; q += T) tile[shift + q] = src[q];
  if (blk.tid == 0) {
    tile[shift + count] = 0;
    tile[shift + count + 1] = 0;
  }
  return shift;
}

// --- decoding segments from shared memory ----------------------------------------------------

template <typename U>
struct block_entry {
  U ref;
  std::uint32_t widths;
  std::uint32_t base;  // tile word of miniblock 0
};

template <typename U>
struct rfor_state {
  U ref;
  std::uint32_t runs, min_length, value_bits, length_bits;
  std::uint64_t value_bit, length_bit;  // tile bit positions of the two streams
};

/// Shared-memory working set for decoding a chunk of up to G segments.
template <typename U>
struct decode_view {
  std::uint32_t* tile;     // the chunk's words (+ guard)
  block_entry<U>* table;   // 4 per segment
  U* firsts;               // per segment: dfor first value
  std::uint32_t* seg_off;  // per segment: tile word where it starts
  U* vals;                 // 512 values: dfor differences and sums
  U* runv;                 // 512 run values
  std::uint32_t* lens;     // 512 run lengths, then run starts
  rfor_state<U>* rs;
};

/// Inclusive prefix sum (mod 2^w) of a[0..512) in place; each thread owns 512 / threads
/// consecutive values. The caller syncs before reading a.
template <class Block, typename U>
ZS_BLOCK_FN void scan_segment(Block& blk, U* a) {
  constexpr unsigned K = segment_values / Block::threads;
  U* mine = a + blk.tid * K;
  U sum = 0;
  for (unsigned i = 0; i < K; ++i) sum = static_cast<U>(sum + mine[i]);
  U total;
  U run = blk.exclusive_sum(sum, total);
  for (unsigned i = 0; i < K; ++i) {
    run = static_cast<U>(run + mine[i]);
    mine[i] = run;
  }
}

/// Decodes the rfor segment at tile word `off` (m values) into out[0..m).
template <class Block, typename U>
ZS_BLOCK_FN void decode_rfor_segment(Block& blk, const decode_view<U>& v, std::uint32_t off,
                                     std::uint32_t m, U* out) {
  constexpr unsigned T = Block::threads;
  constexpr unsigned K = segment_values / T;
  constexpr std::uint32_t rw = sizeof(U) / 4;
  if (blk.tid == 0) {
    rfor_header const h = unpack_rfor_header(v.tile[off]);
    v.rs->ref = load_reference<U>(v.tile + off + 1);
    v.rs->runs = h.runs;
    v.rs->min_length = h.min_length;
    v.rs->value_bits = h.value_bits;
    v.rs->length_bits = h.length_bits;
    v.rs->value_bit = (std::uint64_t{off} + 1 + rw) * 32;
    v.rs->length_bit = (std::uint64_t{off} + 1 + rw + field_words(h.runs, h.value_bits)) * 32;
  }
  blk.sync();
  rfor_state<U> const s = *v.rs;
  for (std::uint32_t k = blk.tid; k < s.runs; k += T) {
    v.runv[k] = static_cast<U>(s.ref + read_field_window<U>(v.tile, s.value_bit + std::uint64_t{k} * s.value_bits, s.value_bits));
    v.lens[k] = s.min_length + read_field_window<std::uint32_t>(v.tile, s.length_bit + std::uint64_t{k} * s.length_bits, s.length_bits);
  }
  blk.sync();
  // Run lengths -> run starts (exclusive sum).
  std::uint32_t* mine = v.lens + blk.tid * K;
  std::uint32_t sum = 0;
  for (unsigned i = 0; i < K; ++i) sum += blk.tid * K + i < s.runs ? mine[i] : 0;
  std::uint32_t total;
  std::uint32_t run = blk.exclusive_sum(sum, total);
  for (unsigned i = 0; i < K; ++i) {
    if (blk.tid * K + i < s.runs) {
      std::uint32_t const length = mine[i];
      mine[i] = run;
      run += length;
    }
  }
  blk.sync();
  // Each position finds its run: the last run starting at or before it.
  for (std::uint32_t p = blk.tid; p < m; p += T) {
    std::uint32_t lo = 0, hi = s.runs;
    while (hi - lo > 1) {
      std::uint32_t const mid = (lo + hi) / 2;
      if (v.lens[mid] <= p) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    out[p] = v.runv[lo];
  }
  blk.sync();
}

/// Decodes the g segments of a chunk (cv values) from the tile into out[0..cv); out may be in
/// global or shared memory. v.seg_off[0..g) must be set and visible (synced).
template <class Block, typename U>
ZS_BLOCK_FN void decode_chunk(Block& blk, scheme kind, std::uint32_t g, std::uint32_t cv,
                              const decode_view<U>& v, U* out) {
  constexpr unsigned T = Block::threads;
  constexpr std::uint32_t rw = sizeof(U) / 4;
  if (kind == scheme::rfor) {
    for (std::uint32_t i = 0; i < g; ++i) {
      decode_rfor_segment(blk, v, v.seg_off[i], min_of(segment_values, cv - i * segment_values),
                          out + i * segment_values);
    }
    return;
  }
  bool const delta = kind == scheme::dfor;
  // The block table: thread i walks the blocks of segment i once, so that every value finds
  // its miniblock without a loop.
  if (blk.tid < g) {
    std::uint32_t off = v.seg_off[blk.tid];
    if (delta) {
      v.firsts[blk.tid] = load_reference<U>(v.tile + off);
      off += rw;
    }
    std::uint32_t const values = min_of(segment_values, cv - blk.tid * segment_values);
    std::uint32_t const blocks = (values + block_values - 1) / block_values;
    for (std::uint32_t b = 0; b < blocks; ++b) {
      block_entry<U>& e = v.table[blk.tid * tile_blocks + b];
      e.ref = load_reference<U>(v.tile + off);
      e.widths = v.tile[off + rw];
      e.base = off + rw + 1;
      off += rw + 1 + widths_sum(e.widths);
    }
  }
  blk.sync();
  auto const value_at = [&](std::uint32_t p) -> U {
    block_entry<U> const e = v.table[p / block_values];
    std::uint32_t const j = (p / miniblock_values) % miniblocks;
    std::uint32_t const b = width_of(e.widths, j);
    std::uint64_t const bit = (std::uint64_t{e.base} + widths_before(e.widths, j)) * 32 + (p % miniblock_values) * b;
    return static_cast<U>(e.ref + read_field_window<U>(v.tile, bit, b));
  };
  if (!delta) {
    for (std::uint32_t p = blk.tid; p < cv; p += T) out[p] = value_at(p);
    return;
  }
  for (std::uint32_t i = 0; i < g; ++i) {
    std::uint32_t const values = min_of(segment_values, cv - i * segment_values);
    for (std::uint32_t q = blk.tid; q < segment_values; q += T) {
      U d = 0;
      if (q == 0) {
        d = v.firsts[i];
      } else if (q < values) {
        d = value_at(i * segment_values + q);
      }
      v.vals[q] = d;
    }
    blk.sync();
    scan_segment(blk, v.vals);
    blk.sync();
    if (out + i * segment_values != v.vals) {
      for (std::uint32_t q = blk.tid; q < values; q += T) out[i * segment_values + q] = v.vals[q];
      blk.sync();
    }
  }
}

// --- decoding frames -------------------------------------------------------------------------

/// What one decode thread block needs of its chunk, prepared by plan_chunk so that the decoder
/// starts loading its tile after one load instead of a chain of dependent ones.
struct alignas(16) chunk_plan {
  std::uint64_t tile;       // byte offset from `frames` of the chunk's first word (raw: value)
  void* out;                // where the chunk's first value goes
  std::uint32_t words;      // 32-bit words of the tile (raw: values to copy)
  std::uint32_t values;     // values of the chunk
  std::uint32_t kind;       // the scheme, or skip_chunk
  std::uint32_t segments;   // segments in the chunk
  std::uint32_t seg_off[8]; // per segment: its first word, from the tile's first word
};
inline constexpr std::uint32_t skip_chunk = 0xffffffffU;
inline constexpr std::uint32_t max_segments_per_chunk = 8;

struct decode_args {
  const std::byte* frames;
  const std::uint64_t* frame_offsets;
  const decode_target* targets;
  frame_status* status;
  std::uint64_t num_frames;
  frame_layout* layouts;        // per frame, written by check_frame
  const std::uint64_t* chunks;  // chunk map (work_map.hpp): validation or decode chunks
  std::uint32_t segments_per_chunk;
  chunk_plan* plans;            // per decode chunk of this width class
};

/// Frame-level rules for frame f (one thread per frame); records the layout for the others.
ZS_HD inline void check_frame(const decode_args& a, std::uint64_t f) {
  if (a.status[f] != frame_status::ok) return;
  frame_layout layout;
  frame_status const s = read_layout(load_header(a.frames + a.frame_offsets[f]), layout);
  a.layouts[f] = layout;
  if (s != frame_status::ok) a.status[f] = s;
}

/// Validation: thread t of the block checks segment (chunk's first + t) of its frame.
template <class Block>
ZS_BLOCK_FN void validate_program(Block& blk, const decode_args& a, std::uint64_t chunk) {
  std::size_t const f = kernels::frame_of_chunk(a.chunks, a.num_frames, chunk);
  if (blk.load_status(a.status + f) != frame_status::ok) return;
  frame_layout const layout = a.layouts[f];
  if (layout.kind == scheme::raw) return;
  std::uint64_t const seg = (chunk - a.chunks[f]) * Block::threads + blk.tid;
  if (seg >= segment_count(layout.count)) return;
  auto const* starts = reinterpret_cast<const std::uint32_t*>(a.frames + a.frame_offsets[f] + frame_header_bytes);
  if (!segment_is_valid(layout, starts, starts + layout.blocks, seg)) {
    blk.store_status(a.status + f, frame_status::corrupt_payload);
  }
}

/// One thread per decode chunk, after validation: the chunk's frame, tile and segments.
ZS_HD inline void plan_chunk(const decode_args& a, std::uint64_t chunk) {
  std::size_t const f = kernels::frame_of_chunk(a.chunks, a.num_frames, chunk);
  chunk_plan& p = a.plans[chunk];  // written in place: its seg_off array stays out of local memory
  if (a.status[f] != frame_status::ok) {  // refused: its layout may not even have been read
    p.kind = skip_chunk;
    return;
  }
  frame_layout const layout = a.layouts[f];
  std::uint32_t const G = a.segments_per_chunk;
  std::uint64_t const n = layout.count;
  std::uint64_t const nseg = segment_count(n);
  std::uint64_t const s0 = (chunk - a.chunks[f]) * G;
  if (s0 >= nseg) {
    p.kind = skip_chunk;
    return;
  }
  std::uint32_t const width = layout.width_bits / 8;
  auto const g = static_cast<std::uint32_t>(min_of<std::uint64_t>(G, nseg - s0));
  std::uint64_t const v0 = s0 * segment_values;
  std::uint64_t const payload = a.frame_offsets[f] + frame_header_bytes;
  p.out = static_cast<std::byte*>(a.targets[f].values) + v0 * width;
  p.values = static_cast<std::uint32_t>(min_of<std::uint64_t>(std::uint64_t{G} * segment_values, n - v0));
  p.segments = g;
  if (layout.kind == scheme::raw) {
    p.tile = payload + v0 * width;
    p.words = p.values;
    p.kind = static_cast<std::uint32_t>(scheme::raw);
    return;
  }
  std::uint32_t const rw = reference_words(layout.width_bits);
  auto const* starts = reinterpret_cast<const std::uint32_t*>(a.frames + payload);
  auto const seg_start = [&](std::uint64_t s) -> std::uint64_t {
    if (layout.kind == scheme::rfor) return starts[s];
    return starts[s * tile_blocks] - (layout.kind == scheme::dfor ? rw : 0);
  };
  std::uint64_t const w0 = seg_start(s0);
  std::uint64_t const w1 = s0 + g < nseg ? seg_start(s0 + g) : layout.data_words;
  // Validation makes this impossible; the check keeps shared memory safe regardless.
  if (w1 < w0 || w1 - w0 > std::uint64_t{g} * max_segment_words(layout.width_bits)) {
    p.kind = skip_chunk;
    return;
  }
  p.tile = payload + 4 * (layout.blocks + w0);
  p.words = static_cast<std::uint32_t>(w1 - w0);
  for (std::uint32_t i = 0; i < g; ++i) p.seg_off[i] = static_cast<std::uint32_t>(seg_start(s0 + i) - w0);
  p.kind = static_cast<std::uint32_t>(layout.kind);
}

/// Shared-memory layout of the decode program for chunks of G segments (byte offsets).
struct decode_smem {
  std::uint32_t tile, table, firsts, seg_off, vals, runv, lens, rs, bytes;
};

ZS_HD constexpr std::uint32_t align16(std::uint32_t x) noexcept { return (x + 15) / 16 * 16; }

template <typename U>
ZS_HD constexpr decode_smem decode_smem_layout(std::uint32_t g) noexcept {
  decode_smem l{};
  std::uint32_t at = 0;
  l.tile = at;
  at += align16(4 * (g * max_segment_words(8 * sizeof(U)) + 8));
  l.table = at;
  at += align16(static_cast<std::uint32_t>(sizeof(block_entry<U>)) * tile_blocks * g);
  l.firsts = at;
  at += align16(static_cast<std::uint32_t>(sizeof(U)) * g);
  l.seg_off = at;
  at += align16(4 * g);
  l.vals = at;
  at += align16(static_cast<std::uint32_t>(sizeof(U)) * segment_values);
  l.runv = at;
  at += align16(static_cast<std::uint32_t>(sizeof(U)) * segment_values);
  l.lens = at;
  at += align16(4 * segment_values);
  l.rs = at;
  at += align16(static_cast<std::uint32_t>(sizeof(rfor_state<U>)));
  l.bytes = at;
  return l;
}

template <typename U>
ZS_HD inline decode_view<U> carve_decode(std::byte* smem, std::uint32_t g) noexcept {
  decode_smem const l = decode_smem_layout<U>(g);
  return {reinterpret_cast<std::uint32_t*>(smem + l.tile), reinterpret_cast<block_entry<U>*>(smem + l.table),
          reinterpret_cast<U*>(smem + l.firsts),           reinterpret_cast<std::uint32_t*>(smem + l.seg_off),
          reinterpret_cast<U*>(smem + l.vals),             reinterpret_cast<U*>(smem + l.runv),
          reinterpret_cast<std::uint32_t*>(smem + l.lens), reinterpret_cast<rfor_state<U>*>(smem + l.rs)};
}

/// Decodes chunk `chunk` of this width class into its target, as plan_chunk prepared it.
template <class Block, typename U>
ZS_BLOCK_FN void decode_program(Block& blk, const decode_args& a, std::uint64_t chunk, std::byte* smem) {
  constexpr unsigned T = Block::threads;
  // Field by field: a copy of the whole plan would put its seg_off array in local memory.
  chunk_plan const& p = a.plans[chunk];
  std::uint32_t const kind = p.kind;
  if (kind == skip_chunk) return;
  U* out = static_cast<U*>(p.out);
  std::uint64_t const tile = p.tile;
  std::uint32_t const values = p.values;
  if (kind == static_cast<std::uint32_t>(scheme::raw)) {
    auto const* in = reinterpret_cast<const U*>(a.frames + tile);
    for (std::uint32_t q = blk.tid; q < values; q += T) out[q] = in[q];
    return;
  }
  std::uint32_t const segments = p.segments;
  decode_view<U> const v = carve_decode<U>(smem, a.segments_per_chunk);
  auto const* src = reinterpret_cast<const std::uint32_t*>(a.frames + tile);
  std::uint32_t const shift = load_tile(blk, src, p.words, v.tile);
  if (blk.tid < segments) v.seg_off[blk.tid] = shift + p.seg_off[blk.tid];
  blk.sync();
  decode_chunk(blk, static_cast<scheme>(kind), segments, values, v, out);
}

// --- encoding --------------------------------------------------------------------------------

struct encode_args {
  const encode_source* sources;
  std::byte* frames;
  const std::uint64_t* frame_offsets;
  std::uint64_t num_frames;
  const std::uint64_t* chunks;       // chunk map of this width class: one chunk per segment
  const std::uint32_t* chunk_frame;  // per chunk of this width class: its frame (index_chunk)
  const std::uint64_t* seg_first;    // per frame: batch-wide index of its first segment
  scheme_words* sizes;               // per segment (batch-wide)
  const scheme_words* offsets;       // inclusive scan of sizes after a leading zero
  std::uint8_t* segment_scheme;      // per segment: scheme kept in its slot, 0 for none
  std::uint8_t* choice;              // per frame: the chosen scheme
  std::uint32_t* slots;              // this width class: slot_words per chunk
};

/// One thread per chunk: records the chunk's frame, so the passes look it up in one load.
ZS_HD inline void index_chunk(const std::uint64_t* chunks, std::uint64_t num_frames, std::uint64_t chunk,
                              std::uint32_t* chunk_frame) {
  chunk_frame[chunk] = static_cast<std::uint32_t>(kernels::frame_of_chunk(chunks, num_frames, chunk));
}

/// What the analysis finds in a segment.
template <typename U>
struct segment_stats {
  std::uint32_t m;  // values in the segment
  U for_ref[4];
  std::uint32_t for_widths[4];
  U dfor_first;
  U dfor_ref[4];
  std::uint32_t dfor_widths[4];
  std::uint32_t runs, min_length, value_bits, length_bits;
  U rfor_ref;
  std::uint32_t words[3];          // data words of for, dfor, rfor
  std::uint32_t block_offset[5];   // packing layout of the scheme being packed
  U lo[16], hi[16];                // per miniblock: least and greatest value keys
  U dlo[16], dhi[16];              // the same for differences
  std::uint32_t llo[16], lhi[16];  // per 32 runs: shortest and longest
  std::uint32_t kept;              // analyze: scheme kept in the slot
};

/// The shared memory one segment's analysis and packing work on.
template <typename U>
struct segment_view {
  U* vals;                // the segment's values
  std::uint16_t* heads;   // run r starts at heads[r] ...
  std::uint16_t* ends;    // ... and ends at ends[r]
  segment_stats<U>* st;
};

/// Shared memory of the analyze pass: one segment per thread block.
template <typename U>
struct analyze_smem {
  U vals[segment_values];
  std::uint16_t heads[segment_values];
  std::uint16_t ends[segment_values];
  segment_stats<U> st;
  ZS_HD segment_view<U> view() { return {vals, heads, ends, &st}; }
};

/// Shared memory of the pack pass. Decoding a kept slot (runs, lengths) and analysing the
/// values again (run heads and ends) come one after the other, so they share `scratch`.
template <typename U>
struct pack_smem {
  static constexpr std::size_t scratch_bytes = segment_values * (sizeof(U) + 4);
  U vals[segment_values];
  alignas(16) std::byte scratch[scratch_bytes];
  alignas(16) std::uint32_t tile[slot_words(8 * sizeof(U)) + 8];
  block_entry<U> table[tile_blocks];
  U firsts[1];
  std::uint32_t seg_off[1];
  rfor_state<U> rs;
  segment_stats<U> st;
  ZS_HD segment_view<U> view() {
    auto* heads = reinterpret_cast<std::uint16_t*>(scratch);
    return {vals, heads, heads + segment_values, &st};
  }
  ZS_HD decode_view<U> decoding() {
    return {tile, table, firsts, seg_off, vals, reinterpret_cast<U*>(scratch),
            reinterpret_cast<std::uint32_t*>(scratch + segment_values * sizeof(U)), &rs};
  }
};

inline constexpr std::uint32_t want_for = 1U << 1;
inline constexpr std::uint32_t want_dfor = 1U << 2;
inline constexpr std::uint32_t want_rfor = 1U << 3;

/// Exact data words of the schemes in `want` for the m values in sv.vals, with the block
/// references and widths packing needs. `flip` maps the type's order to the unsigned order
/// (the sign bit for signed types, else 0); differences are always ordered as signed.
template <class Block, typename U>
ZS_BLOCK_FN void analyze(Block& blk, const segment_view<U>& sv, std::uint32_t m, U flip, std::uint32_t want) {
  constexpr unsigned T = Block::threads;
  constexpr unsigned K = segment_values / T;
  constexpr std::uint32_t rw = sizeof(U) / 4;
  constexpr U ones = static_cast<U>(~U{0});
  constexpr U sign = sign_bit<U>();
  segment_stats<U>& st = *sv.st;
  const U* vals = sv.vals;
  unsigned const lane = blk.tid % 32;
  // Striped: in round k, warp w covers positions [32 (k T / 32 + w), +32), one miniblock.
  if (want & (want_for | want_rfor)) {
    for (unsigned k = 0; k < K; ++k) {
      std::uint32_t const p = blk.tid + k * T;
      bool const valid = p < m;
      U const x = valid ? static_cast<U>(vals[p] ^ flip) : U{0};
      U const lo = blk.warp_min(valid ? x : ones);
      U const hi = blk.warp_max(x);
      if (lane == 0) {
        st.lo[p / 32] = lo;
        st.hi[p / 32] = hi;
      }
    }
  }
  if (want & want_dfor) {
    for (unsigned k = 0; k < K; ++k) {
      std::uint32_t const p = blk.tid + k * T;
      bool const valid = p >= 1 && p < m;
      U const d = valid ? static_cast<U>(static_cast<U>(vals[p] - vals[p - 1]) ^ sign) : U{0};
      U const lo = blk.warp_min(valid ? d : ones);
      U const hi = blk.warp_max(d);
      if (lane == 0) {
        st.dlo[p / 32] = lo;
        st.dhi[p / 32] = hi;
      }
    }
  }
  std::uint32_t runs = 0;
  if (want & want_rfor) {
    // Blocked: thread t owns positions [t K, t K + K), so a scan of head counts numbers runs.
    std::uint32_t heads = 0;
    for (unsigned i = 0; i < K; ++i) {
      std::uint32_t const p = blk.tid * K + i;
      if (p < m && (p == 0 || vals[p] != vals[p - 1])) ++heads;
    }
    std::uint32_t run = blk.exclusive_sum(heads, runs);
    for (unsigned i = 0; i < K; ++i) {
      std::uint32_t const p = blk.tid * K + i;
      if (p >= m) break;
      if (p == 0 || vals[p] != vals[p - 1]) sv.heads[run++] = static_cast<std::uint16_t>(p);
      if (p + 1 == m || vals[p + 1] != vals[p]) sv.ends[run - 1] = static_cast<std::uint16_t>(p);
    }
    blk.sync();
    for (unsigned k = 0; k < K; ++k) {
      std::uint32_t const q = blk.tid + k * T;
      bool const valid = q < runs;
      std::uint32_t const length = valid ? std::uint32_t{sv.ends[q]} - sv.heads[q] + 1 : 0;
      std::uint32_t const lo = blk.warp_min(valid ? length : 0xffffffffU);
      std::uint32_t const hi = blk.warp_max(length);
      if (lane == 0) {
        st.llo[q / 32] = lo;
        st.lhi[q / 32] = hi;
      }
    }
  }
  blk.sync();
  std::uint32_t const blocks = (m + block_values - 1) / block_values;
  // One thread per scheme: references, widths and the exact data words.
  if (blk.tid == 0) {
    st.m = m;
    std::uint32_t words = 0;
    if (want & want_for) {
      for (std::uint32_t i = 0; i < blocks; ++i) {
        U key = ones;
        for (std::uint32_t j = 0; j < miniblocks; ++j) {
          if (i * block_values + j * miniblock_values < m) key = min_of(key, st.lo[4 * i + j]);
        }
        std::uint32_t widths = 0;
        for (std::uint32_t j = 0; j < miniblocks; ++j) {
          if (i * block_values + j * miniblock_values < m) {
            widths |= bit_width(static_cast<U>(st.hi[4 * i + j] - key)) << (8 * j);
          }
        }
        st.for_ref[i] = static_cast<U>(key ^ flip);
        st.for_widths[i] = widths;
        words += rw + 1 + widths_sum(widths);
      }
    }
    st.words[0] = words;
  }
  if (blk.tid == 1) {
    std::uint32_t words = 0;
    if (want & want_dfor) {
      st.dfor_first = vals[0];
      words = rw;
      for (std::uint32_t i = 0; i < blocks; ++i) {
        auto const holds = [&](std::uint32_t j) {  // does miniblock j hold a difference?
          std::uint32_t const lo = max_of<std::uint32_t>(i * block_values + j * miniblock_values, 1);
          std::uint32_t const hi = min_of<std::uint32_t>(i * block_values + (j + 1) * miniblock_values, m);
          return lo < hi;
        };
        U key = sign;  // the reference 0 when the block holds no difference
        bool any = false;
        for (std::uint32_t j = 0; j < miniblocks; ++j) {
          if (holds(j)) {
            key = any ? min_of(key, st.dlo[4 * i + j]) : st.dlo[4 * i + j];
            any = true;
          }
        }
        std::uint32_t widths = 0;
        for (std::uint32_t j = 0; j < miniblocks; ++j) {
          if (holds(j)) widths |= bit_width(static_cast<U>(st.dhi[4 * i + j] - key)) << (8 * j);
        }
        st.dfor_ref[i] = static_cast<U>(key ^ sign);
        st.dfor_widths[i] = widths;
        words += rw + 1 + widths_sum(widths);
      }
    }
    st.words[1] = words;
  }
  if (blk.tid == 2) {
    std::uint32_t words = 0;
    if (want & want_rfor) {
      U lo = ones, hi = 0;
      for (std::uint32_t s = 0; s * 32 < m; ++s) {
        lo = min_of(lo, st.lo[s]);
        hi = max_of(hi, st.hi[s]);
      }
      std::uint32_t llo = 0xffffffffU, lhi = 0;
      for (std::uint32_t s = 0; s * 32 < runs; ++s) {
        llo = min_of(llo, st.llo[s]);
        lhi = max_of(lhi, st.lhi[s]);
      }
      st.runs = runs;
      st.rfor_ref = static_cast<U>(lo ^ flip);
      st.value_bits = bit_width(static_cast<U>(hi - lo));
      st.min_length = llo;
      st.length_bits = bit_width(lhi - llo);
      words = static_cast<std::uint32_t>(rfor_block_words({runs, llo, st.value_bits, st.length_bits}, 8 * sizeof(U)));
    }
    st.words[2] = words;
  }
  blk.sync();
}

/// Blocks of a segment of m values in scheme `kind`.
ZS_HD constexpr std::uint32_t segment_blocks(scheme kind, std::uint32_t m) noexcept {
  return kind == scheme::rfor ? 1 : (m + block_values - 1) / block_values;
}

/// One thread, before a barrier: where each block of the encoding in `kind` starts.
template <typename U>
ZS_HD inline void prepare_pack(segment_stats<U>& st, scheme kind) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  if (kind == scheme::rfor) {
    st.block_offset[0] = 0;
    return;
  }
  bool const delta = kind == scheme::dfor;
  std::uint32_t off = delta ? rw : 0;
  for (std::uint32_t i = 0; i < segment_blocks(kind, st.m); ++i) {
    st.block_offset[i] = off;
    off += rw + 1 + widths_sum(delta ? st.dfor_widths[i] : st.for_widths[i]);
  }
}

/// Word q of the segment's encoding in `kind` (after analyze and prepare_pack).
template <typename U>
ZS_HD inline std::uint32_t encoded_word(const segment_view<U>& sv, scheme kind, std::uint32_t q) {
  constexpr std::uint32_t rw = sizeof(U) / 4;
  segment_stats<U> const& st = *sv.st;
  const U* vals = sv.vals;
  std::uint32_t const m = st.m;
  if (kind == scheme::rfor) {
    if (q == 0) return pack_rfor_header({st.runs, st.min_length, st.value_bits, st.length_bits});
    if (q <= rw) return reference_word(st.rfor_ref, q - 1);
    std::uint64_t const k = q - 1 - rw;
    std::uint64_t const vw = field_words(st.runs, st.value_bits);
    if (k < vw) {
      U const ref = st.rfor_ref;
      return gather_word(k, st.value_bits, st.runs, [&](std::uint64_t r) {
        return static_cast<U>(vals[sv.heads[r]] - ref);
      });
    }
    std::uint32_t const shortest = st.min_length;
    return gather_word(k - vw, st.length_bits, st.runs, [&](std::uint64_t r) {
      return std::uint32_t{sv.ends[r]} - sv.heads[r] + 1 - shortest;
    });
  }
  bool const delta = kind == scheme::dfor;
  if (delta && q < rw) return reference_word(st.dfor_first, q);
  std::uint32_t const blocks = segment_blocks(kind, m);
  std::uint32_t i = 0;
  while (i + 1 < blocks && st.block_offset[i + 1] <= q) ++i;
  std::uint32_t l = q - st.block_offset[i];
  U const ref = delta ? st.dfor_ref[i] : st.for_ref[i];
  std::uint32_t const widths = delta ? st.dfor_widths[i] : st.for_widths[i];
  if (l < rw) return reference_word(ref, l);
  if (l == rw) return widths;
  l -= rw + 1;
  std::uint32_t j = 0, before = 0;
  while (l >= before + width_of(widths, j)) before += width_of(widths, j++);
  std::uint32_t const first = i * block_values + j * miniblock_values;
  if (!delta) {
    return gather_word(l - before, width_of(widths, j), miniblock_values, [&](std::uint64_t k) {
      std::uint32_t const p = first + static_cast<std::uint32_t>(k);
      return p < m ? static_cast<U>(vals[p] - ref) : U{0};
    });
  }
  return gather_word(l - before, width_of(widths, j), miniblock_values, [&](std::uint64_t k) {
    std::uint32_t const p = first + static_cast<std::uint32_t>(k);
    return p >= 1 && p < m ? static_cast<U>(static_cast<U>(vals[p] - vals[p - 1]) - ref) : U{0};
  });
}

/// Writes the segment's encoding in `kind` to out[0..words) and, when `starts` is given, its
/// block starts (base + the block's offset) to starts[0..blocks). prepare_pack ran, and synced.
template <class Block, typename U>
ZS_BLOCK_FN void pack(Block& blk, const segment_view<U>& sv, scheme kind, std::uint32_t* out,
                      std::uint32_t* starts, std::uint64_t base) {
  constexpr unsigned T = Block::threads;
  segment_stats<U> const& st = *sv.st;
  std::uint32_t const words = st.words[static_cast<int>(kind) - 1];
  for (std::uint32_t q = blk.tid; q < words; q += T) out[q] = encoded_word(sv, kind, q);
  if (starts != nullptr && blk.tid < segment_blocks(kind, st.m)) {
    starts[blk.tid] = static_cast<std::uint32_t>(base + st.block_offset[blk.tid]);
  }
}

template <typename U>
ZS_HD inline U flip_of(value_type type) noexcept {
  return is_signed_type(type) ? sign_bit<U>() : U{0};
}

/// Pass 1 over segment `chunk` of this width class.
template <class Block, typename U>
ZS_BLOCK_FN void analyze_program(Block& blk, const encode_args& a, std::uint64_t chunk, analyze_smem<U>& sm) {
  constexpr unsigned T = Block::threads;
  std::uint32_t const f = a.chunk_frame[chunk];
  encode_source const src = a.sources[f];
  std::uint64_t const local = chunk - a.chunks[f];
  std::uint64_t const v0 = local * segment_values;
  auto const m = static_cast<std::uint32_t>(min_of<std::uint64_t>(segment_values, src.count - v0));
  const U* in = static_cast<const U*>(src.values) + v0;
  for (std::uint32_t p = blk.tid; p < m; p += T) sm.vals[p] = in[p];
  blk.sync();
  segment_view<U> const sv = sm.view();
  analyze(blk, sv, m, flip_of<U>(src.type), want_for | want_dfor | want_rfor);
  if (blk.tid == 0) {
    std::uint64_t const g = a.seg_first[f] + local;
    a.sizes[g] = {{sm.st.words[0], sm.st.words[1], sm.st.words[2]}};
    std::uint32_t best = 1;
    for (std::uint32_t s = 2; s <= 3; ++s) {
      if (sm.st.words[s - 1] < sm.st.words[best - 1]) best = s;
    }
    sm.st.kept = sm.st.words[best - 1] <= slot_words(8 * sizeof(U)) ? best : 0;
    a.segment_scheme[g] = static_cast<std::uint8_t>(sm.st.kept);
    if (sm.st.kept != 0) prepare_pack(sm.st, static_cast<scheme>(sm.st.kept));
  }
  blk.sync();
  if (sm.st.kept != 0) {
    pack(blk, sv, static_cast<scheme>(sm.st.kept), a.slots + chunk * slot_words(8 * sizeof(U)), nullptr, 0);
  }
}

/// Between the passes, one thread per frame: totals from the scan, the smallest scheme, the
/// header fields the payload encoder owns.
ZS_HD inline void choose_frame(const encode_args& a, std::uint64_t f) {
  encode_source const& src = a.sources[f];
  std::byte* frame = a.frames + a.frame_offsets[f];
  if (src.count == 0) {
    a.choice[f] = static_cast<std::uint8_t>(scheme::raw);
    store_scheme_fields(frame, scheme::raw, 0, 0);
    return;
  }
  std::uint64_t const first = a.seg_first[f];
  std::uint64_t const last = first + segment_count(src.count);
  std::uint64_t words[3];
  for (int i = 0; i < 3; ++i) words[i] = a.offsets[last].w[i] - a.offsets[first].w[i];
  scheme const best = pick_scheme(src.count, src.raw_bytes(), words);
  a.choice[f] = static_cast<std::uint8_t>(best);
  if (best == scheme::raw) {
    store_scheme_fields(frame, scheme::raw, src.raw_bytes(), 0);
  } else {
    std::uint64_t const dw = words[static_cast<int>(best) - 1];
    store_scheme_fields(frame, best, scheme_payload_bytes(best, src.count, dw), dw);
  }
}

/// Pass 2 over segment `chunk` of this width class.
template <class Block, typename U>
ZS_BLOCK_FN void pack_program(Block& blk, const encode_args& a, std::uint64_t chunk, pack_smem<U>& sm) {
  constexpr unsigned T = Block::threads;
  constexpr std::uint32_t width_bits = 8 * sizeof(U);
  constexpr std::uint32_t rw = sizeof(U) / 4;
  std::uint32_t const f = a.chunk_frame[chunk];
  encode_source const src = a.sources[f];
  std::uint64_t const local = chunk - a.chunks[f];
  std::uint64_t const v0 = local * segment_values;
  auto const m = static_cast<std::uint32_t>(min_of<std::uint64_t>(segment_values, src.count - v0));
  const U* in = static_cast<const U*>(src.values) + v0;
  std::byte* payload = a.frames + a.frame_offsets[f] + frame_header_bytes;
  auto const kind = static_cast<scheme>(a.choice[f]);
  if (kind == scheme::raw) {
    U* out = reinterpret_cast<U*>(payload) + v0;
    for (std::uint32_t p = blk.tid; p < m; p += T) out[p] = in[p];
    return;
  }
  std::uint64_t const g = a.seg_first[f] + local;
  auto const kept = static_cast<scheme>(a.segment_scheme[g]);
  int const i = static_cast<int>(kind) - 1;
  std::uint64_t const base = a.offsets[g].w[i] - a.offsets[a.seg_first[f]].w[i];
  auto* starts = reinterpret_cast<std::uint32_t*>(payload) + (kind == scheme::rfor ? local : local * tile_blocks);
  std::uint32_t* data = reinterpret_cast<std::uint32_t*>(payload) + block_count(kind, src.count) + base;
  const std::uint32_t* slot = a.slots + chunk * slot_words(width_bits);
  segment_stats<U>& st = sm.st;

  if (kept == kind) {
    // The slot holds this very encoding: copy it, with its block starts.
    auto const words = static_cast<std::uint32_t>(a.sizes[g].w[i]);
    std::uint32_t const shift = load_tile(blk, slot, words, sm.tile);
    blk.sync();
    std::uint32_t const blocks = segment_blocks(kind, m);
    if (blk.tid == 0) {
      std::uint32_t off = kind == scheme::dfor ? rw : 0;
      for (std::uint32_t b = 0; b < blocks; ++b) {
        st.block_offset[b] = off;
        if (kind != scheme::rfor) off += rw + 1 + widths_sum(sm.tile[shift + off + rw]);
      }
    }
    blk.sync();
    for (std::uint32_t q = blk.tid; q < words; q += T) data[q] = sm.tile[shift + q];
    if (blk.tid < blocks) starts[blk.tid] = static_cast<std::uint32_t>(base + st.block_offset[blk.tid]);
    return;
  }
  // Otherwise get the values back, from the slot or the input, and pack them anew.
  if (kept == scheme::raw) {
    for (std::uint32_t p = blk.tid; p < m; p += T) sm.vals[p] = in[p];
  } else {
    decode_view<U> const v = sm.decoding();
    std::uint32_t const shift = load_tile(blk, slot, a.sizes[g].w[static_cast<int>(kept) - 1], sm.tile);
    if (blk.tid == 0) sm.seg_off[0] = shift;
    blk.sync();
    decode_chunk(blk, kept, 1, m, v, sm.vals);
  }
  blk.sync();
  segment_view<U> const sv = sm.view();
  analyze(blk, sv, m, flip_of<U>(src.type), 1U << static_cast<int>(kind));
  if (blk.tid == 0) prepare_pack(st, kind);
  blk.sync();
  pack(blk, sv, kind, data, starts, base);
}

}  // namespace zs::bitpack::gpu
