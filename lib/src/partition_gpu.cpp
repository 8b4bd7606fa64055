// The GPU partitioner: partition ids per row (a hash or a range lookup per row), then one stable
// radix sort of row indices by id, a histogram and scan of the ids for the partition offsets, and
// a gather of every column by the sorted indices. Everything is ordered on the caller's stream;
// the one wait reads the partition offsets and the string sizes that the outputs are allocated by.
#include "partition_gpu.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "common/null_mask_kernels.hpp"
#include "partition/partition_kernels.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace zs::detail {
namespace {

namespace pk = kernels::partition;

constexpr std::array<unsigned, 4> partition_rows_threads{128, 256, 512, 1024};

}  // namespace

const kernel_spec& partition_rows_spec = register_kernel({
    .name = pk::rows_kernel,
    .defaults = {256, default_launch_waves, 0},
    .threads = partition_rows_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "the partitioner's per-row kernels: key hashes, range lookups, gathers by row index",
});

namespace {

// A device column like `like` of `rows` rows holding like's rows `order[0 .. rows)`, and its
// null mask where it has one.
column gather_column(const column& like, std::uint64_t rows, std::uint64_t chars_bytes, const std::uint64_t* order,
                     void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  column out = column::allocate(like.type(), rows, memory_kind::device, stream,
                                like.type() == value_type::string ? chars_bytes : 0);
  out.set_logical(like.logical());
  column_view const in = like.view();
  mutable_column_view const o = out.mutable_view();
  if (like.type() == value_type::string) {
    pk::gather_string_offsets(in.offsets, order, rows, o.offsets, temp, temp_bytes, stream);
    pk::gather_string_chars(static_cast<const char*>(in.data), in.offsets, order, rows, o.offsets,
                            static_cast<char*>(o.data), temp, temp_bytes, stream);
  } else {
    pk::gather_fixed_width(in.data, value_width(like.type()), order, rows, o.data, stream);
  }
  if (like.nullable()) kernels::null_mask::gather(in.null_mask, order, rows, out.add_null_mask(stream), stream);
  return out;
}

// The table in the order of `ids` (one partition id below `partitions` per row, device memory),
// stable within each partition.
partitioned_table gather_by_ids(const table& input, std::uint64_t rows, device_buffer& ids, std::uint32_t partitions,
                                cudaStream_t stream) {
  device_buffer sequence(rows * sizeof(std::uint64_t), stream);
  device_buffer order(rows * sizeof(std::uint64_t), stream);
  device_buffer sorted_ids(rows * sizeof(std::uint32_t), stream);
  device_buffer counts((std::size_t{partitions} + 1) * sizeof(std::uint64_t), stream);
  device_buffer offsets((std::size_t{partitions} + 1) * sizeof(std::uint64_t), stream);
  std::size_t temp_bytes = std::max(pk::sort_rows_temp_bytes(rows, partitions),
                                    pk::partition_offsets_temp_bytes(rows, partitions));
  bool const any_strings = std::any_of(input.columns.begin(), input.columns.end(),
                                       [](const column& c) { return c.type() == value_type::string; });
  if (any_strings) {
    temp_bytes = std::max({temp_bytes, pk::gather_string_offsets_temp_bytes(rows),
                           pk::gather_string_chars_temp_bytes(rows)});
  }
  device_buffer temp(temp_bytes, stream);

  pk::partition_offsets(ids.as<std::uint32_t>(), rows, partitions, counts.as<std::uint64_t>(),
                        offsets.as<std::uint64_t>(), temp.data(), temp.size(), stream);
  pk::row_sequence(sequence.as<std::uint64_t>(), rows, stream);
  const std::uint64_t* row_order = sequence.as<std::uint64_t>();
  if (partitions > 1) {  // one partition keeps the input order: nothing to sort
    pk::sort_rows_by_partition(ids.as<std::uint32_t>(), sorted_ids.as<std::uint32_t>(), sequence.as<std::uint64_t>(),
                               order.as<std::uint64_t>(), rows, partitions, temp.data(), temp.size(), stream);
    row_order = order.as<std::uint64_t>();
  }

  // The host allocates the outputs, so it needs the offsets and each string column's character
  // count (its first and last offset: a column's offsets need not start at 0).
  partitioned_table out;
  out.partition_offsets.resize(std::size_t{partitions} + 1);
  copy_async(out.partition_offsets.data(), offsets.data(), out.partition_offsets.size() * sizeof(std::uint64_t),
             stream);
  std::vector<std::int64_t> string_ends(2 * input.columns.size(), 0);
  for (std::size_t c = 0; c < input.columns.size(); ++c) {
    column_view const v = input.columns[c].view();
    if (v.type != value_type::string) continue;
    copy_async(&string_ends[2 * c], v.offsets, sizeof(std::int64_t), stream);
    copy_async(&string_ends[2 * c + 1], v.offsets + rows, sizeof(std::int64_t), stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  out.rows.names = input.names;
  out.rows.columns.reserve(input.columns.size());
  for (std::size_t c = 0; c < input.columns.size(); ++c) {
    auto const chars = static_cast<std::uint64_t>(string_ends[2 * c + 1] - string_ends[2 * c]);
    out.rows.columns.push_back(
        gather_column(input.columns[c], rows, chars, row_order, temp.data(), temp.size(), stream));
  }
  return out;
}

}  // namespace

partitioned_table hash_partition_gpu(const table& input, std::uint64_t rows, std::span<const std::size_t> key_columns,
                                     std::uint32_t partitions, cudaStream_t stream) {
  device_buffer ids(rows * sizeof(std::uint32_t), stream);
  for (std::size_t k = 0; k < key_columns.size(); ++k) {
    pk::hash_key_column(input.columns[key_columns[k]].view(), partition_hash_seed, k > 0, ids.as<std::uint32_t>(),
                        stream);
  }
  pk::hashes_to_partitions(ids.as<std::uint32_t>(), rows, partitions, stream);
  return gather_by_ids(input, rows, ids, partitions, stream);
}

partitioned_table range_partition_gpu(const table& input, std::uint64_t rows, std::size_t key_column,
                                      const column& host_split_points, cudaStream_t stream) {
  column const splits = host_split_points.copy_to(memory_kind::device, stream);
  device_buffer ids(rows * sizeof(std::uint32_t), stream);
  pk::range_partition_ids(input.columns[key_column].view(), splits.view(), ids.as<std::uint32_t>(), stream);
  return gather_by_ids(input, rows, ids, static_cast<std::uint32_t>(splits.size()) + 1, stream);
}

}  // namespace zs::detail
