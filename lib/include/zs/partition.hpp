// Partitioning the rows of a table before a shuffle: by a hash of key columns, or by ranges of
// one key column.
//
// Both return the table with every column gathered in partition order, and partition_offsets:
// the rows of partition p are [partition_offsets[p], partition_offsets[p + 1]) of every output
// column. Partitioning is stable: inside a partition, rows keep their input order. So the
// result is fully determined by the input, and the GPU path gives exactly the bytes of the CPU
// path (docs/PARTITION.md).
//
//   zs::partitioned_table parts = zs::hash_partition(table, {0}, 64, stream);   // key: column 0
//   // parts.rows: the table in partition order; parts.partition_offsets: 65 row offsets
//
// A shuffle across R ranks needs rank boundaries, not partition boundaries. Partitions may
// outnumber ranks: give rank r a contiguous block of them, for example partitions
// [r * P / R, (r + 1) * P / R), and pass zs::shuffle the row offsets at those partition indices
// (row_offsets[r] = partition_offsets[r * P / R]).
//
// Where the work runs follows the table: host columns are partitioned on the CPU, device
// columns on the GPU (CUB's radix sort, histogram, scan and batched copy on `stream`, memory
// from the stream-ordered pool of zs/memory.hpp). The GPU call waits once on `stream`, for the
// partition offsets and the output's string sizes, which the host needs to allocate; it returns
// with the output columns enqueued on `stream`, ready for work ordered after it.
//
// The hash (hash_partition): each key value is hashed with MurmurHash3_x86_32 (seed
// partition_hash_seed) over its bytes:
//   - int32, uint32, float32: the 4 little-endian bytes of the value; int64, uint64, float64:
//     the 8 little-endian bytes; int128 (decimal128): its 16 little-endian bytes, as cuDF
//     hashes decimal128 (so an int128 5 does not hash as an int64 5);
//   - int8, int16: as their int32 widening (sign-extended), and uint8, uint16 as their uint32
//     widening (zero-extended): so a key hashes alike in every integer type of at most 32 bits
//     that holds it (an int8 -3 as an int16 or int32 -3, a uint8 200 as a uint16, uint32 or
//     int32 200), and a narrow key column can be joined with a wider one;
//   - float32, float64: first normalised, so that keys that compare equal meet: -0.0 becomes
//     0.0, and every NaN becomes the one quiet NaN of its type (normalize_key);
//   - strings: their UTF-8 bytes as stored, without terminator (the empty string hashes 0 bytes).
// A row's hash is its first key's hash, combined with each further key's hash in key order by
// hash_combine, and its partition is row_hash % partitions. hash_key and hash_combine below are
// that definition, callable from host and device code, so a caller can tell where a key goes.
//
// Range partitioning (range_partition): S split points, sorted non-decreasing, of the key
// column's type make S + 1 partitions. A row goes to the first partition whose upper split is
// greater than its key: partition p holds the keys in [split[p - 1], split[p]), partition 0
// those below split[0], partition S those at or above split[S - 1]. So a key equal to a split
// point goes to the partition that split begins (ties go up); equal split points leave the
// partitions between them empty. Floats compare as numbers (-0.0 equals 0.0), and NaN keys go
// to the last partition (NaN sorts after every number). Strings compare byte by byte as unsigned
// bytes (for UTF-8: code point order), a prefix before the longer string. int128 keys compare as
// signed 128-bit integers (for decimal128, the unscaled values: split points of the key's scale).
//
// Nulls: every column's null mask (zs/column.hpp) is gathered with its rows, so an output column
// is nullable exactly where its input column is, with the same rows null. A null key does not
// hash its value (which is unspecified): its key hash is the constant null_key_hash, combined
// with the other keys' hashes like any key hash, so rows whose keys are null in the same
// columns and equal elsewhere land together (all rows of a single null key, in one partition).
// range_partition puts every row whose key is null in partition 0. Split points must have no
// null mask.
//
// Errors (zs::error, invalid_argument, naming the column by index and name): no key columns, a
// key index out of range, partitions of 0 or above max_partitions, columns of unequal length or
// in different memory, split points of another type than the key column, unsorted or NaN split
// points, split points with a null mask, or more than max_partitions - 1 of them. A device table
// on a machine without a usable GPU fails with unsupported.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "zs/column.hpp"
#include "zs/hd.hpp"

namespace zs {

/// A table in partition order, and where each partition's rows are.
struct partitioned_table {
  /// The input's columns (same names, types and memory), rows gathered in partition order.
  table rows;
  /// partitions + 1 row offsets (host memory), first 0 and last the row count: partition p is
  /// rows [partition_offsets[p], partition_offsets[p + 1]).
  std::vector<std::uint64_t> partition_offsets;

  std::uint32_t partitions() const noexcept {
    return partition_offsets.empty() ? 0 : static_cast<std::uint32_t>(partition_offsets.size() - 1);
  }
};

/// The most partitions one call makes (2^24). More would be more than any shuffle runs, and
/// their offsets alone would take 128 MiB.
inline constexpr std::uint32_t max_partitions = std::uint32_t{1} << 24;

/// Rows of `input` to `partitions` partitions by the hash of the key columns `key_columns`
/// (indices into input.columns, in the order the hash combines them; a column may repeat).
/// Every column is gathered, keys included. Host columns: CPU; device columns: GPU, on `stream`.
partitioned_table hash_partition(const table& input, std::span<const std::size_t> key_columns,
                                 std::uint32_t partitions, cudaStream_t stream = nullptr);
inline partitioned_table hash_partition(const table& input, std::initializer_list<std::size_t> key_columns,
                                        std::uint32_t partitions, cudaStream_t stream = nullptr) {
  return hash_partition(input, std::span<const std::size_t>(key_columns.begin(), key_columns.size()), partitions,
                        stream);
}

/// Rows of `input` to split_points.count + 1 partitions by ranges of the key column
/// `key_column`, split at `split_points` (the key's type, sorted non-decreasing, no NaN; host or
/// device memory; strings may be a slice). Ties go to the upper partition (see above).
partitioned_table range_partition(const table& input, std::size_t key_column, const column_view& split_points,
                                  cudaStream_t stream = nullptr);

// --- the hash, for host and device code ---------------------------------------------------------

/// The seed of every key hash of hash_partition.
inline constexpr std::uint32_t partition_hash_seed = 0;

/// What a null key hashes to, in place of hash_key of its value (see "Nulls" above).
inline constexpr std::uint32_t null_key_hash = 0xffffffffu;

namespace murmur3_detail {
ZS_HD constexpr std::uint32_t rotl32(std::uint32_t x, int r) noexcept { return (x << r) | (x >> (32 - r)); }
// One 4-byte block into the running state.
ZS_HD constexpr std::uint32_t mix_block(std::uint32_t h, std::uint32_t k) noexcept {
  k *= 0xcc9e2d51u;
  k = rotl32(k, 15);
  k *= 0x1b873593u;
  h ^= k;
  h = rotl32(h, 13);
  return h * 5 + 0xe6546b64u;
}
// The partial last block (1 to 3 bytes, already assembled little-endian).
ZS_HD constexpr std::uint32_t mix_tail(std::uint32_t h, std::uint32_t k) noexcept {
  k *= 0xcc9e2d51u;
  k = rotl32(k, 15);
  k *= 0x1b873593u;
  return h ^ k;
}
ZS_HD constexpr std::uint32_t finish(std::uint32_t h, std::uint64_t bytes) noexcept {
  h ^= static_cast<std::uint32_t>(bytes);  // the reference takes the length as a 32-bit int
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
}  // namespace murmur3_detail

/// MurmurHash3_x86_32 of `bytes` bytes at `data` (blocks read as little-endian 32-bit words,
/// at any alignment), as the reference implementation computes it; lengths of 2^32 bytes or
/// more enter the final mix modulo 2^32, as the reference's 32-bit length would.
ZS_HD inline std::uint32_t murmur3_x86_32(const void* data, std::uint64_t bytes, std::uint32_t seed) noexcept {
  auto const* p = static_cast<const unsigned char*>(data);
  std::uint32_t h = seed;
  std::uint64_t const blocks = bytes / 4;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    unsigned char const* q = p + 4 * b;
    std::uint32_t const k = std::uint32_t{q[0]} | std::uint32_t{q[1]} << 8 | std::uint32_t{q[2]} << 16 |
                            std::uint32_t{q[3]} << 24;
    h = murmur3_detail::mix_block(h, k);
  }
  unsigned char const* tail = p + 4 * blocks;
  std::uint32_t k = 0;
  switch (bytes & 3) {
    case 3: k ^= std::uint32_t{tail[2]} << 16; [[fallthrough]];
    case 2: k ^= std::uint32_t{tail[1]} << 8; [[fallthrough]];
    case 1: k ^= std::uint32_t{tail[0]}; h = murmur3_detail::mix_tail(h, k); break;
    default: break;
  }
  return murmur3_detail::finish(h, bytes);
}

/// MurmurHash3_x86_32 of the 4 little-endian bytes of `word` (the byte loop above, unrolled).
ZS_HD constexpr std::uint32_t murmur3_x86_32_word(std::uint32_t word, std::uint32_t seed) noexcept {
  return murmur3_detail::finish(murmur3_detail::mix_block(seed, word), 4);
}
/// MurmurHash3_x86_32 of the 8 little-endian bytes of `word`.
ZS_HD constexpr std::uint32_t murmur3_x86_32_word(std::uint64_t word, std::uint32_t seed) noexcept {
  std::uint32_t h = murmur3_detail::mix_block(seed, static_cast<std::uint32_t>(word));
  h = murmur3_detail::mix_block(h, static_cast<std::uint32_t>(word >> 32));
  return murmur3_detail::finish(h, 8);
}

/// MurmurHash3_x86_32 of the 16 little-endian bytes of an int128 value (low word first).
ZS_HD constexpr std::uint32_t murmur3_x86_32_word(int128_value word, std::uint32_t seed) noexcept {
  auto const high = static_cast<std::uint64_t>(word.high);
  std::uint32_t h = murmur3_detail::mix_block(seed, static_cast<std::uint32_t>(word.low));
  h = murmur3_detail::mix_block(h, static_cast<std::uint32_t>(word.low >> 32));
  h = murmur3_detail::mix_block(h, static_cast<std::uint32_t>(high));
  h = murmur3_detail::mix_block(h, static_cast<std::uint32_t>(high >> 32));
  return murmur3_detail::finish(h, 16);
}

/// Combines a row's hash so far with the next key's hash (the 32-bit hash_combine of Boost and
/// cuDF): order matters, so keys (a, b) and (b, a) land apart.
ZS_HD constexpr std::uint32_t hash_combine(std::uint32_t row_hash, std::uint32_t key_hash) noexcept {
  return row_hash ^ (key_hash + 0x9e3779b9u + (row_hash << 6) + (row_hash >> 2));
}

/// A float key as it is hashed: -0.0 as 0.0, every NaN as the quiet NaN 0x7fc00000.
ZS_HD inline std::uint32_t normalized_key_bits(float value) noexcept {
  if (value != value) return 0x7fc00000u;
  if (value == 0.0f) return 0;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
/// A double key as it is hashed: -0.0 as 0.0, every NaN as the quiet NaN 0x7ff8000000000000.
ZS_HD inline std::uint64_t normalized_key_bits(double value) noexcept {
  if (value != value) return 0x7ff8000000000000ull;
  if (value == 0.0) return 0;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// The hash of one key value, as hash_partition computes it (see above).
ZS_HD constexpr std::uint32_t hash_key(std::int8_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(static_cast<std::uint32_t>(std::int32_t{value}), seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::int16_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(static_cast<std::uint32_t>(std::int32_t{value}), seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::uint8_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(std::uint32_t{value}, seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::uint16_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(std::uint32_t{value}, seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::int32_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(static_cast<std::uint32_t>(value), seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::uint32_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(value, seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::int64_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(static_cast<std::uint64_t>(value), seed);
}
ZS_HD constexpr std::uint32_t hash_key(std::uint64_t value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(value, seed);
}
ZS_HD inline std::uint32_t hash_key(float value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(normalized_key_bits(value), seed);
}
ZS_HD inline std::uint32_t hash_key(double value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(normalized_key_bits(value), seed);
}
ZS_HD constexpr std::uint32_t hash_key(int128_value value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32_word(value, seed);
}
inline std::uint32_t hash_key(std::string_view value, std::uint32_t seed = partition_hash_seed) noexcept {
  return murmur3_x86_32(value.data(), value.size(), seed);
}

}  // namespace zs
