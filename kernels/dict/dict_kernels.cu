#include <cub/device/device_scan.cuh>

#include <cuda/std/functional>
#include <string>

#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "dict/dict_format.hpp"
#include "dict/dict_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::dict {
namespace {

namespace fmt = ::zs::dict;

// A value's bits, zero-extended, from an array of values of `width` bytes.
__device__ inline std::uint64_t load_bits(const void* values, std::size_t width, std::uint64_t i) {
  switch (width) {
    case 1: return static_cast<const std::uint8_t*>(values)[i];
    case 2: return static_cast<const std::uint16_t*>(values)[i];
    case 4: return static_cast<const std::uint32_t*>(values)[i];
    default: return static_cast<const std::uint64_t*>(values)[i];
  }
}

__device__ inline void store_bits(void* values, std::size_t width, std::uint64_t i, std::uint64_t bits) {
  switch (width) {
    case 1: static_cast<std::uint8_t*>(values)[i] = static_cast<std::uint8_t>(bits); break;
    case 2: static_cast<std::uint16_t*>(values)[i] = static_cast<std::uint16_t>(bits); break;
    case 4: static_cast<std::uint32_t*>(values)[i] = static_cast<std::uint32_t>(bits); break;
    default: static_cast<std::uint64_t*>(values)[i] = bits; break;
  }
}

// A key's slot to start probing at: the high bits of a multiplicative hash (tables have at most
// 2^13 slots).
__device__ inline std::uint64_t home_slot(std::uint64_t key, std::uint64_t mask) {
  return ((key * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
}

// Whether the frame has been found to have too many distinct values (read past the L1 cache).
__device__ inline bool found_too_many(const std::uint32_t* flags) {
  return (*static_cast<const volatile std::uint32_t*>(flags) & too_many) != 0;
}

// Inserts `key` (not the empty key) into a table of mask + 1 slots by linear probing. A slot goes
// from empty to a key once and never changes again, so a probe may read a slot through the L1
// cache: a stale empty slot only sends it to the compare-and-swap, which returns what is there.
// A table holds at most twice the limit, so a long probe means a frame past its limit: the probe
// looks at the frame's flag every few slots and gives up once it is set.
__device__ void insert_key(std::uint64_t key, std::uint64_t* slots, std::uint64_t mask, std::uint64_t limit,
                           std::uint32_t* inserted, std::uint32_t* flags) {
  std::uint64_t h = home_slot(key, mask);
  for (std::uint64_t probe = 0; probe <= mask; ++probe, h = (h + 1) & mask) {
    if (probe % 8 == 7 && found_too_many(flags)) return;
    std::uint64_t seen = slots[h];
    if (seen == fmt::empty_key) {
      seen = atomicCAS(reinterpret_cast<unsigned long long*>(slots + h), static_cast<unsigned long long>(fmt::empty_key),
                       static_cast<unsigned long long>(key));
      if (seen == fmt::empty_key) {
        if (atomicAdd(inserted, 1U) + 1U > limit) atomicOr(flags, too_many);
        return;
      }
    }
    if (seen == key) return;
  }
  atomicOr(flags, too_many);  // a full table: more keys than the limit are in flight
}

// A block's own set of the keys it has sent to the frame's table: most rows repeat a key the
// block has met, and find it in shared memory instead of the table in global memory. Once half
// full, the set takes no more keys (the rest go to the table directly).
constexpr unsigned block_set_slots = 2048;

// Whether `key` is new to the block's set (and now in it); false where the set is full.
__device__ bool first_in_block(std::uint64_t key, std::uint64_t* set, std::uint32_t* count, bool& full) {
  if (*static_cast<volatile std::uint32_t*>(count) >= block_set_slots / 2) {
    full = true;
    return true;
  }
  unsigned h = static_cast<unsigned>(home_slot(key, block_set_slots - 1));
  for (unsigned probe = 0; probe < block_set_slots; ++probe, h = (h + 1) % block_set_slots) {
    std::uint64_t seen = set[h];
    if (seen == fmt::empty_key) {
      seen = atomicCAS(reinterpret_cast<unsigned long long*>(set + h), static_cast<unsigned long long>(fmt::empty_key),
                       static_cast<unsigned long long>(key));
      if (seen == fmt::empty_key) {
        atomicAdd(count, 1U);
        return true;
      }
    }
    if (seen == key) return false;
  }
  return true;
}

__global__ void distinct_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                                std::uint64_t chunk_rows, distinct_tables t) {
  __shared__ std::uint32_t done;
  __shared__ std::uint64_t set[block_set_slots];
  __shared__ std::uint32_t set_count;
  unsigned const lane = threadIdx.x % 32;
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    // One thread reads the flag for the block, so that every thread takes the same branch.
    __syncthreads();
    if (threadIdx.x == 0) {
      done = *static_cast<volatile std::uint32_t*>(t.flags + f) & too_many;
      set_count = 0;
    }
    for (unsigned k = threadIdx.x; k < block_set_slots; k += blockDim.x) set[k] = fmt::empty_key;
    __syncthreads();
    if (done != 0) continue;
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::uint64_t const flip = fmt::key_flip(s.type);
    std::uint64_t const limit = fmt::entry_limit(s.count);
    std::uint64_t* slots = t.slots + t.slots_at[f];
    std::uint64_t const mask = t.slots_at[f + 1] - t.slots_at[f] - 1;
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    bool full = false;
    // Whole warps take every round, so that the lanes of equal keys find each other (runs of
    // equal values cost one probe a warp) and one of them inserts.
    for (std::uint64_t round = first; round < end; round += blockDim.x) {
      // A frame past its limit stops soon: each warp looks at its flag every eighth round.
      bool const look = ((round - first) / blockDim.x) % 8 == 7;
      if (look && __shfl_sync(0xffffffffU, lane == 0 && found_too_many(t.flags + f), 0)) break;
      std::uint64_t const i = round + threadIdx.x;
      bool const active = i < end;
      std::uint64_t const key = active ? load_bits(s.values, width, i) ^ flip : 0;
      unsigned const peers = __match_any_sync(0xffffffffU, key) & __ballot_sync(0xffffffffU, active);
      if (!active || (__ffs(peers) - 1) != static_cast<int>(lane)) continue;
      if (key == fmt::empty_key) {
        atomicOr(t.flags + f, has_empty_key);
      } else if (full || first_in_block(key, set, &set_count, full)) {
        insert_key(key, slots, mask, limit, t.inserted + f, t.flags + f);
      }
    }
  }
}

// A block a frame: the table's keys gathered into shared memory, each placed by its rank (the
// count of smaller keys: at most 4096 keys, every one distinct), its value beside it.
__global__ void sort_kernel(device_encode_batch batch, distinct_tables t, dictionaries d) {
  __shared__ std::uint64_t keys[fmt::max_entries];
  __shared__ std::uint32_t count;
  for (std::uint64_t f = blockIdx.x; f < batch.num_frames; f += gridDim.x) {
    std::uint64_t const entries = d.entries[f];
    if (entries == 0) continue;
    __syncthreads();  // the previous frame's readers of keys and count are done
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    for (std::uint64_t k = t.slots_at[f] + threadIdx.x; k < t.slots_at[f + 1]; k += blockDim.x) {
      std::uint64_t const key = t.slots[k];
      if (key != fmt::empty_key) keys[atomicAdd(&count, 1U)] = key;
    }
    __syncthreads();
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::uint64_t const flip = fmt::key_flip(s.type);
    std::uint64_t* out = d.keys + d.key_at[f];
    std::byte* values = d.area + d.values_at[f];
    std::uint32_t const n = count;
    for (std::uint32_t j = threadIdx.x; j < n; j += blockDim.x) {
      std::uint64_t const key = keys[j];
      std::uint32_t rank = 0;
      for (std::uint32_t m = 0; m < n; ++m) rank += keys[m] < key ? 1U : 0U;
      out[rank] = key;
      store_bits(values, width, rank, key ^ flip);
    }
    // The empty key, the largest, is the last entry where a value has it.
    if (threadIdx.x == 0 && entries > n) {
      out[n] = fmt::empty_key;
      store_bits(values, width, n, fmt::empty_key ^ flip);
    }
  }
}

__global__ void code_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                            std::uint64_t chunk_rows, dictionaries d) {
  __shared__ std::uint64_t keys[fmt::max_entries];
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    std::uint32_t const entries = static_cast<std::uint32_t>(d.entries[f]);
    __syncthreads();  // the previous chunk's readers of keys are done
    for (std::uint32_t k = threadIdx.x; k < entries; k += blockDim.x) keys[k] = d.keys[d.key_at[f] + k];
    __syncthreads();
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::uint64_t const flip = fmt::key_flip(s.type);
    std::byte* codes = d.area + d.codes_at[f];
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    for (std::uint64_t i = first + threadIdx.x; i < end; i += blockDim.x) {
      std::uint64_t const key = load_bits(s.values, width, i) ^ flip;
      // The last entry at most the key: the key itself, which the dictionary holds.
      std::uint32_t lo = 0;
      for (std::uint32_t len = entries; len > 1;) {
        std::uint32_t const half = len / 2;
        lo = keys[lo + half] <= key ? lo + half : lo;
        len -= half;
      }
      store_bits(codes, width, i, lo);
    }
  }
}

// The exclusive prefix of `x` over the block's threads in thread order, and the block's total.
// Every thread of the block calls it (whole warps); sums: 32 entries of shared memory.
template <typename T>
__device__ T block_exclusive_sum(T x, T* sums, T& total) {
  unsigned const lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  T inclusive = x;
  for (unsigned d = 1; d < 32; d *= 2) {
    T const up = __shfl_up_sync(0xffffffffU, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  __syncthreads();  // the previous call's readers of sums are done
  if (lane == 31) sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    T w = lane < warps ? sums[lane] : T{0};
    for (unsigned d = 1; d < 32; d *= 2) {
      T const up = __shfl_up_sync(0xffffffffU, w, d);
      if (lane >= d) w += up;
    }
    sums[lane] = w;
  }
  __syncthreads();
  total = sums[warps - 1];
  return (warp == 0 ? T{0} : sums[warp - 1]) + inclusive - x;
}

// Whether row i of a frame starts a run: its first row, or a value other than the row before's.
__device__ inline bool starts_run(const void* values, std::size_t width, std::uint64_t i) {
  return i == 0 || load_bits(values, width, i) != load_bits(values, width, i - 1);
}

__global__ void count_runs_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                                  std::uint64_t chunk_rows, std::uint32_t* chunk_runs) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    std::uint32_t count = 0;
    for (std::uint64_t round = first; round < end; round += blockDim.x) {
      std::uint64_t const i = round + threadIdx.x;
      count += static_cast<std::uint32_t>(__syncthreads_count(i < end && starts_run(s.values, width, i)));
    }
    if (threadIdx.x == 0) chunk_runs[chunk] = count;
  }
}

__global__ void write_runs_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                                  std::uint64_t chunk_rows, const std::uint64_t* chunk_run_first, run_arrays r) {
  __shared__ std::uint32_t sums[32];
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    std::uint64_t const base = r.run_begin[f];
    if (r.run_begin[f + 1] == base) continue;
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::byte* values = r.area + r.values_at[f];
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    std::uint64_t next = chunk_run_first[chunk];
    for (std::uint64_t round = first; round < end; round += blockDim.x) {
      std::uint64_t const i = round + threadIdx.x;
      bool const start = i < end && starts_run(s.values, width, i);
      std::uint32_t total = 0;
      std::uint32_t const before = block_exclusive_sum<std::uint32_t>(start ? 1U : 0U, sums, total);
      if (start) {
        std::uint64_t const g = next + before;
        store_bits(values, width, g - base, load_bits(s.values, width, i));
        r.starts[g] = static_cast<std::uint32_t>(i);
      }
      next += total;
    }
  }
}

__global__ void run_lengths_kernel(device_encode_batch batch, run_arrays r, std::uint64_t total_runs) {
  for (std::uint64_t g = first_item(); g < total_runs; g += item_stride()) {
    std::size_t const f = frame_of_chunk(r.run_begin, batch.num_frames, g);
    std::uint64_t const end = g + 1 < r.run_begin[f + 1] ? r.starts[g + 1] : batch.sources[f].count;
    r.lengths[g] = static_cast<std::uint32_t>(end - r.starts[g]);
  }
}

constexpr unsigned full_mask = 0xffffffffU;

// The warp's OR and least (unsigned) of a 64-bit value of each lane.
__device__ inline std::uint64_t warp_or(std::uint64_t x) {
  return (std::uint64_t{__reduce_or_sync(full_mask, static_cast<unsigned>(x >> 32))} << 32) |
         __reduce_or_sync(full_mask, static_cast<unsigned>(x));
}
__device__ inline std::uint64_t warp_min(std::uint64_t x) {
  unsigned const high = __reduce_min_sync(full_mask, static_cast<unsigned>(x >> 32));
  unsigned const low =
      __reduce_min_sync(full_mask, static_cast<unsigned>(x >> 32) == high ? static_cast<unsigned>(x) : 0xffffffffU);
  return (std::uint64_t{high} << 32) | low;
}

// dict::group_words with a lane a row (valid: the lane holds one of the group's rows): the same
// shift, widths and low width, from reductions and ballots instead of a histogram.
__device__ std::uint32_t warp_group_words(std::uint64_t d, bool valid, std::uint64_t base, std::uint64_t mask) {
  std::uint64_t const field = valid ? (d - base) & mask : 0;
  std::uint64_t const any = warp_or(field);
  if (any == 0) return 0;
  std::uint32_t const shift = ::zs::bitpack::bit_width(any & (~any + 1)) - 1;
  std::uint32_t const width = ::zs::bitpack::bit_width(field >> shift);
  std::uint32_t const full = __reduce_max_sync(full_mask, width);
  // Bit w - 1: some field is exactly w bits wide (w >= 1).
  std::uint64_t const present = warp_or(width == 0 ? 0 : std::uint64_t{1} << (width - 1));
  // bitpack::best_low_width's candidates in its order: the widths below the full one that some
  // field has, going down, then 0; ties to the wider.
  std::uint32_t best_words = full;
  auto const consider = [&](std::uint32_t b) {
    auto const exceptions = static_cast<std::uint32_t>(__popc(__ballot_sync(full_mask, width > b)));
    std::uint32_t const words = ::zs::bitpack::patched_miniblock_words(b, full, exceptions);
    if (words < best_words) best_words = words;
  };
  for (std::uint64_t below = present & ::zs::bitpack::low_mask(full - 1); below != 0;) {
    auto const top = static_cast<std::uint32_t>(63 - __clzll(static_cast<long long>(below)));
    below &= ~(std::uint64_t{1} << top);
    consider(top + 1);
  }
  consider(0);
  return best_words;
}

// dict::choose_base with a lane a row: the same rule (dict::pick_base), keys found by reductions.
__device__ std::uint64_t warp_choose_base(std::uint64_t d, bool valid, std::uint64_t sign, std::uint64_t mask) {
  std::uint64_t const key = d ^ sign;
  auto const least_key = [&](bool first, std::uint64_t above, bool& found) {
    bool const eligible = valid && (first || key > above);
    found = __ballot_sync(full_mask, eligible) != 0;
    return warp_min(eligible ? key : ~std::uint64_t{0});
  };
  return fmt::pick_base(sign, least_key, [&](std::uint64_t base) { return warp_group_words(d, valid, base, mask); });
}

// A warp a group (chunks are whole groups): each lane a row's difference, the group's base, the
// residuals, and at a tile's start its first value.
__global__ void write_deltas_kernel(device_encode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                                    std::uint64_t chunk_rows, delta_arrays d) {
  unsigned const lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    encode_source const& s = batch.sources[f];
    std::size_t const width = value_width(s.type);
    std::uint64_t const mask = ::zs::bitpack::low_mask(static_cast<std::uint32_t>(8 * width));
    std::uint64_t const sign = std::uint64_t{1} << (8 * width - 1);
    std::byte* side = d.area + d.side_at[f];
    std::byte* residuals = d.area + d.residuals_at[f];
    std::uint64_t const groups = fmt::groups_of(s.count);
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = s.count - first < chunk_rows ? s.count : first + chunk_rows;
    for (std::uint64_t row = first + warp * fmt::group_rows; row < end; row += warps * fmt::group_rows) {
      std::uint64_t const i = row + lane;
      bool const valid = i < end;
      std::uint64_t const value = valid ? load_bits(s.values, width, i) : 0;
      std::uint64_t before = __shfl_up_sync(full_mask, value, 1);
      if (lane == 0) before = row == 0 ? 0 : load_bits(s.values, width, row - 1);
      std::uint64_t const diff = (value - before) & mask;
      std::uint64_t const base = warp_choose_base(diff, valid, sign, mask);
      if (valid) store_bits(residuals, width, i, diff - base);
      if (lane == 0) {
        store_bits(side, width, row / fmt::group_rows, base);
        if (row % fmt::tile_rows == 0) store_bits(side, width, groups + row / fmt::tile_rows, value);
      }
    }
  }
}

// Copies `bytes` from src to dst (both 16-byte aligned) with the block's threads.
__device__ void copy_block(std::byte* dst, const std::byte* src, std::uint64_t bytes) {
  std::uint64_t const wide = bytes / 16;
  for (std::uint64_t k = threadIdx.x; k < wide; k += blockDim.x) {
    reinterpret_cast<uint4*>(dst)[k] = reinterpret_cast<const uint4*>(src)[k];
  }
  for (std::uint64_t b = wide * 16 + threadIdx.x; b < bytes; b += blockDim.x) dst[b] = src[b];
}

__global__ void assemble_kernel(device_encode_batch batch, packed_frames p) {
  constexpr std::uint32_t no_piece = ~std::uint32_t{0};
  for (std::uint64_t f = blockIdx.x; f < batch.num_frames; f += gridDim.x) {
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* payload = frame + frame_header_bytes;
    // The form of the smallest payload, the earlier of equal ones: plain, dictionary, runs,
    // differences.
    fmt::fields chosen;
    std::uint64_t payload_bytes = p.plain_bytes[f];
    std::uint32_t piece = no_piece;
    auto const consider = [&](std::uint32_t first, std::uint64_t entries) {
      if (first == no_piece) return;
      std::uint64_t const bytes = fmt::main_frame_at(p.piece_bytes[first]) + p.piece_bytes[first + 1];
      if (bytes >= payload_bytes) return;
      piece = first;
      chosen = {entries, p.piece_bytes[first]};
      payload_bytes = bytes;
    };
    consider(p.first_piece[f], p.entries[f]);
    consider(p.run_piece[f], fmt::runs_flag | p.run_count[f]);
    consider(p.delta_piece[f], fmt::deltas_flag);
    if (piece != no_piece) {
      std::uint64_t const first_bytes = p.piece_bytes[piece];
      std::uint64_t const main_at = fmt::main_frame_at(first_bytes);
      copy_block(payload, p.pieces + p.piece_at[piece], first_bytes);
      for (std::uint64_t b = first_bytes + threadIdx.x; b < main_at; b += blockDim.x) payload[b] = std::byte{0};
      copy_block(payload + main_at, p.pieces + p.piece_at[piece + 1], payload_bytes - main_at);
    }
    if (threadIdx.x == 0) fmt::store_fields(frame, chosen, payload_bytes);
  }
}

__global__ void check_kernel(device_decode_batch batch, std::uint64_t* fields) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    fmt::fields found;
    if (batch.status[f] == frame_status::ok) {
      const std::byte* frame = batch.frames + batch.frame_offsets[f];
      frame_header const h = load_header(frame);
      frame_status const status = fmt::check_frame(h, frame + frame_header_bytes);
      if (status == frame_status::ok) {
        found = fmt::load_fields(h);
      } else {
        batch.status[f] = status;
      }
    }
    fields[2 * f] = found.entries;
    fields[2 * f + 1] = found.dictionary_bytes;
  }
}

__global__ void fold_kernel(device_decode_batch batch, const frame_status* piece_status, const std::uint32_t* owner,
                            std::size_t pieces) {
  for (std::uint64_t i = first_item(); i < pieces; i += item_stride()) {
    if (piece_status[i] != frame_status::ok) batch.status[owner[i]] = frame_status::corrupt_payload;
  }
}

// A length of 0 makes its frame corrupt_payload.
__global__ void zero_lengths_kernel(device_decode_batch batch, const std::uint64_t* run_begin, const std::uint32_t* lengths,
                                    std::uint64_t total_runs) {
  for (std::uint64_t g = first_item(); g < total_runs; g += item_stride()) {
    if (lengths[g] != 0) continue;
    std::size_t const f = frame_of_chunk(run_begin, batch.num_frames, g);
    batch.status[f] = frame_status::corrupt_payload;  // every writer writes the same
  }
}

// Each run's first row in its frame from the batch-wide prefix of the lengths, and at a frame's
// last run, its rows against the frame's.
__global__ void run_starts_kernel(device_decode_batch batch, const std::uint64_t* run_begin, const std::uint32_t* lengths,
                                  const std::uint64_t* prefix, std::uint32_t* starts, std::uint64_t total_runs) {
  for (std::uint64_t g = first_item(); g < total_runs; g += item_stride()) {
    std::size_t const f = frame_of_chunk(run_begin, batch.num_frames, g);
    std::uint64_t const base = prefix[run_begin[f]];
    // Wraps only where the lengths add up to more than a frame of runs may hold: refused below.
    starts[g] = static_cast<std::uint32_t>(prefix[g] - base);
    if (g + 1 == run_begin[f + 1] && prefix[g] + lengths[g] - base != batch.targets[f].count) {
      batch.status[f] = frame_status::corrupt_payload;
    }
  }
}

__global__ void expand_kernel(device_decode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                              std::uint64_t chunk_rows, const std::uint64_t* run_begin, const std::uint32_t* starts,
                              const std::byte* values, const std::uint64_t* values_at) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::size_t const width = value_width(t.type);
    const std::uint32_t* first_rows = starts + run_begin[f];
    std::uint64_t const runs = run_begin[f + 1] - run_begin[f];
    const std::byte* run_values = values + values_at[f];
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = t.count - first < chunk_rows ? t.count : first + chunk_rows;
    // Run k is the last starting at or before row i (check_runs found the first rows rising from
    // 0): a binary search for the thread's first row, then a walk as its rows go up by the
    // block's width (a few runs a step where runs are short, none where they are long).
    std::uint64_t k = 0;
    std::uint64_t const i0 = first + threadIdx.x;
    for (std::uint64_t len = runs; len > 1 && i0 < end;) {
      std::uint64_t const half = len / 2;
      k = first_rows[k + half] <= i0 ? k + half : k;
      len -= half;
    }
    for (std::uint64_t i = i0; i < end; i += blockDim.x) {
      while (k + 1 < runs && first_rows[k + 1] <= i) ++k;
      store_bits(t.values, width, i, load_bits(run_values, width, k));
    }
  }
}

// Rows a lane loads before it adds any up: eight steps of 32 rows of a warp in flight at once.
constexpr unsigned add_up_steps = 8;

// One tile of a frame of differences whose residuals are unpacked into `values` (type U): each
// row adds its group's base and its residual (the tile's first row its first value instead), by a
// warp scan of 32 rows a step and the carry from the step before.
template <typename U>
__device__ void add_up_tile(U* values, const U* side, std::uint64_t groups, std::uint64_t tile, std::uint64_t rows,
                            unsigned lane) {
  std::uint64_t const tile_end = rows - tile < fmt::tile_rows ? rows : tile + fmt::tile_rows;
  std::uint64_t carry = side[groups + tile / fmt::tile_rows];
  for (std::uint64_t row = tile; row < tile_end; row += add_up_steps * 32) {
    std::uint64_t x[add_up_steps];
#pragma unroll
    for (unsigned k = 0; k < add_up_steps; ++k) {
      std::uint64_t const i = row + 32 * k + lane;
      x[k] = i < tile_end && i != tile ? std::uint64_t{side[(row + 32 * k) / fmt::group_rows]} + values[i] : 0;
    }
#pragma unroll
    for (unsigned k = 0; k < add_up_steps; ++k) {
      for (unsigned step = 1; step < 32; step *= 2) {
        std::uint64_t const up = __shfl_up_sync(full_mask, x[k], step);
        if (lane >= step) x[k] += up;
      }
      x[k] += carry;
      carry = __shfl_sync(full_mask, x[k], 31);
      std::uint64_t const i = row + 32 * k + lane;
      if (i < tile_end) values[i] = static_cast<U>(x[k]);
    }
  }
}

// A warp a tile (tile_begin: the frames of differences still ok, in tiles).
__global__ void add_up_kernel(device_decode_batch batch, const std::uint64_t* tile_begin, std::uint64_t num_tiles,
                              const std::byte* side_area, const std::uint64_t* side_at) {
  unsigned const lane = threadIdx.x % 32;
  std::uint64_t const warps = item_stride() / 32;
  for (std::uint64_t tile = first_item() / 32; tile < num_tiles; tile += warps) {
    std::size_t const f = frame_of_chunk(tile_begin, batch.num_frames, tile);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::uint64_t const row = (tile - tile_begin[f]) * fmt::tile_rows;
    std::uint64_t const groups = fmt::groups_of(t.count);
    const void* side = side_area + side_at[f];
    auto const add_up = [&](auto zero) {
      using U = decltype(zero);
      add_up_tile(static_cast<U*>(t.values), static_cast<const U*>(side), groups, row, t.count, lane);
    };
    switch (value_width(t.type)) {
      case 1: add_up(std::uint8_t{}); break;
      case 2: add_up(std::uint16_t{}); break;
      case 4: add_up(std::uint32_t{}); break;
      default: add_up(std::uint64_t{}); break;
    }
  }
}

__global__ void replace_kernel(device_decode_batch batch, const std::uint64_t* chunk_begin, std::uint64_t num_chunks,
                               std::uint64_t chunk_rows, const std::uint64_t* fields, const std::byte* dictionaries,
                               const std::uint64_t* dictionary_at) {
  for (std::uint64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    std::size_t const f = frame_of_chunk(chunk_begin, batch.num_frames, chunk);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::size_t const width = value_width(t.type);
    std::uint64_t const entries = fields[2 * f];
    const std::byte* values = dictionaries + dictionary_at[f];
    std::uint64_t const first = (chunk - chunk_begin[f]) * chunk_rows;
    std::uint64_t const end = t.count - first < chunk_rows ? t.count : first + chunk_rows;
    for (std::uint64_t i = first + threadIdx.x; i < end; i += blockDim.x) {
      std::uint64_t const code = load_bits(t.values, width, i);
      if (code >= entries) {
        batch.status[f] = frame_status::corrupt_payload;
      } else {
        store_bits(t.values, width, i, load_bits(values, width, code));
      }
    }
  }
}

void expect_chunk_launch(const launch_choice& choice) {
  expect_launch_of(chunks_kernel_name, choice);
  ZS_EXPECTS(choice.params.threads % 32 == 0, "dict chunks of whole warps (" + std::to_string(choice.params.threads) +
                                                  " threads)");
}

template <class Kernel, class Batch, class... Args>
void launch_chunks(Kernel kernel, const launch_choice& choice, const Batch& batch, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, cudaStream_t stream, Args... args) {
  if (num_chunks == 0) return;
  expect_chunk_launch(choice);
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, num_chunks);
  observed_launch(r, stream, [&] {
    kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(batch, chunk_begin, num_chunks, choice.params.items,
                                                               args...);
  });
}

// A block a frame, for the frame kernels that copy or sort a frame's pieces.
template <class Kernel, class... Args>
void launch_frames(Kernel kernel, std::size_t frames, cudaStream_t stream, Args... args) {
  launch_choice const choice = frame_ops_choice();
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, frames);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

template <class Kernel, class... Args>
void launch_items(Kernel kernel, std::size_t items, cudaStream_t stream, Args... args) {
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

}  // namespace

void find_distinct(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, const distinct_tables& tables, cudaStream_t stream) {
  launch_chunks(distinct_kernel, chunks, batch, chunk_begin, num_chunks, stream, tables);
}

void sort_dictionaries(const device_encode_batch& batch, const distinct_tables& tables, const dictionaries& d,
                       cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_frames(sort_kernel, batch.num_frames, stream, batch, tables, d);
}

void code_rows(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
               std::uint64_t num_chunks, const dictionaries& d, cudaStream_t stream) {
  launch_chunks(code_kernel, chunks, batch, chunk_begin, num_chunks, stream, d);
}

void count_runs(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                std::uint64_t num_chunks, std::uint32_t* chunk_runs, cudaStream_t stream) {
  launch_chunks(count_runs_kernel, chunks, batch, chunk_begin, num_chunks, stream, chunk_runs);
}

void write_runs(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                std::uint64_t num_chunks, const std::uint64_t* chunk_run_first, std::uint64_t total_runs,
                const run_arrays& runs, cudaStream_t stream) {
  if (total_runs == 0) return;
  launch_chunks(write_runs_kernel, chunks, batch, chunk_begin, num_chunks, stream, chunk_run_first, runs);
  launch_items(run_lengths_kernel, total_runs, stream, batch, runs, total_runs);
}

void write_deltas(const device_encode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                  std::uint64_t num_chunks, const delta_arrays& deltas, cudaStream_t stream) {
  ZS_EXPECTS(chunks.params.items % fmt::group_rows == 0, "dict chunks of whole groups (" +
                                                             std::to_string(chunks.params.items) + " rows)");
  launch_chunks(write_deltas_kernel, chunks, batch, chunk_begin, num_chunks, stream, deltas);
}

void assemble(const device_encode_batch& batch, const packed_frames& packed, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_frames(assemble_kernel, batch.num_frames, stream, batch, packed);
}

void check_frames(const device_decode_batch& batch, std::uint64_t* fields, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(check_kernel, batch.num_frames, stream, batch, fields);
}

void fold_statuses(const device_decode_batch& batch, const frame_status* piece_status, const std::uint32_t* owner,
                   std::size_t pieces, cudaStream_t stream) {
  if (pieces == 0) return;
  launch_items(fold_kernel, pieces, stream, batch, piece_status, owner, pieces);
}

std::size_t check_runs_temp_bytes(std::uint64_t total_runs) {
  std::size_t scan_bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveScan(nullptr, scan_bytes, static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint64_t*>(nullptr), cuda::std::plus<>{},
                                             std::uint64_t{0}, static_cast<std::int64_t>(total_runs)));
  return align_frame(total_runs * sizeof(std::uint64_t)) + scan_bytes;
}

void check_runs(const device_decode_batch& batch, const std::uint64_t* run_begin, std::uint64_t total_runs,
                const std::uint32_t* lengths, std::uint32_t* starts, void* temp, std::size_t temp_bytes,
                cudaStream_t stream) {
  if (total_runs == 0) return;
  ZS_EXPECTS(temp_bytes >= check_runs_temp_bytes(total_runs), "scratch of check_runs_temp_bytes");
  auto* prefix = static_cast<std::uint64_t*>(temp);
  void* scan_temp = static_cast<std::byte*>(temp) + align_frame(total_runs * sizeof(std::uint64_t));
  std::size_t scan_bytes = temp_bytes - align_frame(total_runs * sizeof(std::uint64_t));
  launch_items(zero_lengths_kernel, total_runs, stream, batch, run_begin, lengths, total_runs);
  // The lengths' prefix in 64 bits (the init value's type): a frame's lengths may add up past 2^32.
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveScan(scan_temp, scan_bytes, lengths, prefix, cuda::std::plus<>{}, std::uint64_t{0},
                                             static_cast<std::int64_t>(total_runs), stream));
  launch_items(run_starts_kernel, total_runs, stream, batch, run_begin, lengths, static_cast<const std::uint64_t*>(prefix),
               starts, total_runs);
}

void expand_runs(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                 std::uint64_t num_chunks, const std::uint64_t* run_begin, const std::uint32_t* starts,
                 const std::byte* values, const std::uint64_t* values_at, cudaStream_t stream) {
  launch_chunks(expand_kernel, chunks, batch, chunk_begin, num_chunks, stream, run_begin, starts, values, values_at);
}

void add_up_deltas(const device_decode_batch& batch, const std::uint64_t* tile_begin, std::uint64_t num_tiles,
                   const std::byte* side, const std::uint64_t* side_at, cudaStream_t stream) {
  if (num_tiles == 0) return;
  // A warp a tile: 32 items each (frame_ops blocks are whole warps).
  launch_items(add_up_kernel, 32 * num_tiles, stream, batch, tile_begin, num_tiles, side, side_at);
}

void replace_codes(const device_decode_batch& batch, const launch_choice& chunks, const std::uint64_t* chunk_begin,
                   std::uint64_t num_chunks, const std::uint64_t* fields, const std::byte* dictionaries,
                   const std::uint64_t* dictionary_at, cudaStream_t stream) {
  launch_chunks(replace_kernel, chunks, batch, chunk_begin, num_chunks, stream, fields, dictionaries, dictionary_at);
}

}  // namespace zs::kernels::dict
