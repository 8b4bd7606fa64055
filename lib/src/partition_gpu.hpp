// The GPU half of the partitioner (zs/partition.hpp). partition.cpp checks the arguments and
// dispatches here for device tables; these assume checked arguments.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "zs/column.hpp"
#include "zs/partition.hpp"
#include "zs/tuning.hpp"

namespace zs::detail {

/// "partition_rows": the partitioner's per-row kernels (key hashes, range lookups, gathers by
/// row index). Each does little work per row, so `zshuffle tune` does not sweep them; a tuning
/// table may still set them.
extern const kernel_spec& partition_rows_spec;

/// hash_partition of a device table with `rows` rows each.
partitioned_table hash_partition_gpu(const table& input, std::uint64_t rows, std::span<const std::size_t> key_columns,
                                     std::uint32_t partitions, cudaStream_t stream);

/// range_partition of a device table, with checked split points in host memory.
partitioned_table range_partition_gpu(const table& input, std::uint64_t rows, std::size_t key_column,
                                      const column& host_split_points, cudaStream_t stream);

}  // namespace zs::detail
