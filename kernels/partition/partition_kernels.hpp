// Device steps of the GPU partitioner (lib/src/partition_gpu.cpp strings them together). Every
// launcher takes device arrays and a stream and never synchronises; the CUB-backed steps take
// caller-owned scratch, sized by their *_temp_bytes query first (the CUB two-phase style).
// Per-row kernels use the launch geometry of the registered kernel "partition_rows".
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/column.hpp"

namespace zs::kernels::partition {

/// The name of the kernel spec the per-row kernels launch with.
inline constexpr const char* rows_kernel = "partition_rows";

/// hashes[i] = the hash of row i of `key` (zs::hash_key with `seed`, null_key_hash for a null
/// row; device memory), or with `combine`, hash_combine(hashes[i], that hash): one call per key
/// column, in key order.
void hash_key_column(const column_view& key, std::uint32_t seed, bool combine, std::uint32_t* hashes,
                     cudaStream_t stream);

/// ids[i] %= partitions, for i < count: row hashes into partition ids.
void hashes_to_partitions(std::uint32_t* ids, std::uint64_t count, std::uint32_t partitions, cudaStream_t stream);

/// ids[i] = the range partition of row i of `key` against `splits` (split_count split points of
/// the key's type, sorted; device memory): partition_rows::range_of, 0 for a null row.
void range_partition_ids(const column_view& key, const column_view& splits, std::uint32_t* ids,
                         cudaStream_t stream);

/// rows[i] = i for i < count.
void row_sequence(std::uint64_t* rows, std::uint64_t count, cudaStream_t stream);

/// Scratch for sort_rows_by_partition.
std::size_t sort_rows_temp_bytes(std::uint64_t count, std::uint32_t partitions);
/// Sorts rows_in by ids_in (ids below `partitions`) into rows_out and ids_out, stably: CUB's
/// radix sort over the bits that partitions - 1 needs.
void sort_rows_by_partition(const std::uint32_t* ids_in, std::uint32_t* ids_out, const std::uint64_t* rows_in,
                            std::uint64_t* rows_out, std::uint64_t count, std::uint32_t partitions, void* temp,
                            std::size_t temp_bytes, cudaStream_t stream);

/// Scratch for partition_offsets; `counts` needs partitions + 1 entries of its own.
std::size_t partition_offsets_temp_bytes(std::uint64_t count, std::uint32_t partitions);
/// offsets (partitions + 1 entries) = exclusive sum of the histogram of `ids` (count ids below
/// `partitions`, in any order): where each partition's rows begin, and the row count last.
/// `counts` is scratch of partitions + 1 entries.
void partition_offsets(const std::uint32_t* ids, std::uint64_t count, std::uint32_t partitions,
                       std::uint64_t* counts, std::uint64_t* offsets, void* temp, std::size_t temp_bytes,
                       cudaStream_t stream);

/// out[i] = values[rows[i]] for i < count, values of `width` bytes (4 or 8).
void gather_fixed_width(const void* values, std::size_t width, const std::uint64_t* rows, std::uint64_t count,
                        void* out, cudaStream_t stream);

/// Scratch for gather_string_offsets.
std::size_t gather_string_offsets_temp_bytes(std::uint64_t count);
/// The count + 1 offsets, from 0, of the strings rows[0 .. count) of a string column whose
/// offsets are `offsets`: their lengths, then an exclusive sum in place.
void gather_string_offsets(const std::int64_t* offsets, const std::uint64_t* rows, std::uint64_t count,
                           std::int64_t* out_offsets, void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// Scratch for gather_string_chars.
std::size_t gather_string_chars_temp_bytes(std::uint64_t count);
/// Copies the characters of strings rows[0 .. count) of (chars, offsets) to out_chars at
/// out_offsets (from gather_string_offsets): one batched copy of count strings (CUB).
void gather_string_chars(const char* chars, const std::int64_t* offsets, const std::uint64_t* rows,
                         std::uint64_t count, const std::int64_t* out_offsets, char* out_chars, void* temp,
                         std::size_t temp_bytes, cudaStream_t stream);

}  // namespace zs::kernels::partition
