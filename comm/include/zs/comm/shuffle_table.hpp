// Shuffling a table by key: one call that partitions the rows, plans, compresses, exchanges and
// returns the rows this rank owns, the way a distributed join or group-by moves its input.
//
//   zs::nccl_communicator nccl(mpi);                      // or any device_communicator
//   zs::shuffled_table mine = zs::shuffle_table(nccl, orders, {0}, {}, stream);
//   // every row of every rank whose key (column 0) hashes to this rank is now in mine.rows
//
// Rows stay whole: all columns of a row travel to the same rank. The destination is the row's
// partition, hash_partition's MurmurHash3 of the key columns (zs/partition.hpp) modulo
// ranks x partitions_per_rank; rank r owns partitions [r x k, (r + 1) x k) for k partitions
// per rank. The received rows come grouped by partition, each partition's rows ordered by source
// rank and then as they were on that rank.
//
// Collective over the communicator: every rank calls it with the same column count, types and
// options (zs::shuffle checks this). A failure on one rank (a bad key index, columns of unequal
// length, out of memory) is every rank's zs::error, naming the rank and the reason; nothing is
// left waiting. For callers that partition rows themselves, zs::shuffle (zs/comm/shuffle.hpp)
// moves columns by given row offsets.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/shuffle.hpp"

namespace zs {

struct table_shuffle_options {
  /// How the columns move: rounds, codecs, the planner (zs/comm/shuffle.hpp).
  shuffle_options shuffle;
  /// Hash partitions each rank owns (at least 1). More than one keeps partitions apart on
  /// arrival, e.g. for a later spill or join of one partition at a time.
  std::uint32_t partitions_per_rank = 1;
};

struct shuffled_table {
  /// The rows this rank owns: the input's column names and types, grouped by partition.
  table rows;
  /// partitions_per_rank + 1 row offsets (host memory): owned partition j, the global partition
  /// first_partition + j, is rows [partition_offsets[j], partition_offsets[j + 1]).
  std::vector<std::uint64_t> partition_offsets;
  std::uint32_t first_partition = 0;
  /// Seconds on this rank (host clock) of each phase: partitioning the input, the shuffle of its
  /// columns (zs::shuffle: planning, encode, exchange, decode), and grouping the received rows
  /// by partition (0 with one partition per rank). On the GPU each phase waits for the GPU to
  /// learn sizes or statuses, so only the last copies of a phase may still run when it ends.
  double partition_seconds = 0, shuffle_seconds = 0, group_seconds = 0;
};

/// Shuffles a table of device columns on the GPU: hash partitioning on `stream`, then
/// zs::shuffle over `comm`. The result's columns are device columns, ready on `stream`.
shuffled_table shuffle_table(device_communicator& comm, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, cudaStream_t stream,
                             shuffle_stats* stats = nullptr);

/// The same with host columns and the CPU reference codecs, over `comm`.
shuffled_table shuffle_table(communicator& comm, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, shuffle_stats* stats = nullptr);

}  // namespace zs
