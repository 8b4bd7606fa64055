#include "zs/comm/shuffle_table.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "zs/comm/agreement.hpp"
#include "zs/error.hpp"
#include "zs/partition.hpp"

namespace zs {

namespace {

constexpr std::string_view operation = "shuffle_table";

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The checks a rank can make alone, before the partitioning: the memory the call needs.
void check_memory(const table& input, memory_kind expected) {
  for (std::size_t c = 0; c < input.columns.size(); ++c) {
    if (input.columns[c].memory() != expected) {
      std::string const name = c < input.names.size() ? " '" + input.names[c] + "'" : "";
      ZS_FAIL(error_code::invalid_argument,
              "column " + std::to_string(c) + name + " is in " +
                  (expected == memory_kind::device ? "host memory; the GPU shuffle takes device columns"
                                                   : "device memory; the CPU shuffle takes host columns"));
    }
  }
}

// Partitions, shuffles with `move` (zs::shuffle on one side or the other), and groups what
// arrived by owned partition.
template <typename Move>
shuffled_table shuffle_by_key(communicator& comm, const table& input, std::span<const std::size_t> keys,
                              const table_shuffle_options& options, memory_kind memory, cudaStream_t stream,
                              Move move) {
  auto const ranks = static_cast<std::uint64_t>(comm.size());
  std::uint32_t const k = options.partitions_per_rank;
  auto start = clock_type::now();
  partitioned_table sent;
  std::vector<std::uint64_t> row_offsets;
  agree_on(comm, operation, "partitioning the rows", [&] {
    if (k == 0) ZS_FAIL(error_code::invalid_argument, "options.partitions_per_rank is 0; each rank owns at least one");
    if (ranks * k > max_partitions) {
      ZS_FAIL(error_code::invalid_argument, std::to_string(ranks) + " ranks x " + std::to_string(k) +
                                                " partitions per rank is more than the " +
                                                std::to_string(max_partitions) + " partitions hash_partition makes");
    }
    check_memory(input, memory);
    sent = hash_partition(input, keys, static_cast<std::uint32_t>(ranks * k), stream);
    // Rank d's rows: its k partitions, which lie one after another.
    for (std::uint64_t d = 0; d <= ranks; ++d) row_offsets.push_back(sent.partition_offsets[d * k]);
  });

  double const partition_seconds = seconds_since(start);
  start = clock_type::now();
  std::vector<shuffle_column> columns;
  for (auto const& c : sent.rows.columns) columns.push_back({c.view(), row_offsets});
  std::vector<column> received = move(std::span<const shuffle_column>(columns));

  shuffled_table out;
  out.partition_seconds = partition_seconds;
  out.shuffle_seconds = seconds_since(start);
  out.first_partition = static_cast<std::uint32_t>(static_cast<std::uint64_t>(comm.rank()) * k);
  out.rows.names = input.names;
  out.rows.columns = std::move(received);
  // Logical types are metadata over the storage the shuffle moves: the received columns take
  // the input's (grouping by partition below keeps them).
  for (std::size_t c = 0; c < out.rows.columns.size(); ++c) out.rows.columns[c].set_logical(input.columns[c].logical());
  std::uint64_t const rows = out.rows.columns.empty() ? 0 : out.rows.columns.front().size();
  if (k == 1 || out.rows.columns.empty()) {
    out.partition_offsets = {0, rows};
    return out;
  }
  // Each source sent its rows in partition order, so the rows arrive grouped by source, then
  // partition. Partitioning them again with the same hash groups them by partition, stably: a
  // partition's rows stay in source order.
  start = clock_type::now();
  agree_on(comm, operation, "grouping the received rows by partition", [&] {
    auto grouped = hash_partition(out.rows, keys, static_cast<std::uint32_t>(ranks * k), stream);
    out.rows.columns = std::move(grouped.rows.columns);
    auto const first = grouped.partition_offsets.begin() + out.first_partition;
    out.partition_offsets.assign(first, first + k + 1);
  });
  out.group_seconds = seconds_since(start);
  return out;
}

}  // namespace

shuffled_table shuffle_table(device_communicator& comm, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, cudaStream_t stream, shuffle_stats* stats) {
  return shuffle_by_key(comm.host(), input, key_columns, options, memory_kind::device, stream,
                        [&](std::span<const shuffle_column> columns) {
                          return shuffle(comm, columns, options.shuffle, stream, stats);
                        });
}

shuffled_table shuffle_table(communicator& comm, const table& input, std::span<const std::size_t> key_columns,
                             const table_shuffle_options& options, shuffle_stats* stats) {
  return shuffle_by_key(comm, input, key_columns, options, memory_kind::host, nullptr,
                        [&](std::span<const shuffle_column> columns) {
                          return shuffle(comm, columns, options.shuffle, stats);
                        });
}

}  // namespace zs
