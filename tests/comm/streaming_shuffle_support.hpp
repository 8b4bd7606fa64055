// Inputs and expectations shared by the streaming shuffle tests (CPU and GPU): every rank builds
// every rank's rows (deterministic), so it knows which rows each partition must hold and in which
// order without trusting the partitioner or the shuffle it tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/streaming_shuffle.hpp"
#include "zs/partition.hpp"

namespace zs::test::streaming {

struct row {
  std::int64_t key;
  std::int32_t origin;  // source rank and index: a row torn apart or misplaced shows
  double value;
  std::string text;
  bool operator==(const row&) const = default;
};

inline std::vector<std::string> names() { return {"key", "origin", "value", "text"}; }
inline std::vector<value_type> types() {
  return {value_type::int64, value_type::int32, value_type::float64, value_type::string};
}

inline std::vector<row> rows_of(int rank) {
  std::vector<row> rows;
  std::uint64_t const n = 900 + 173 * static_cast<std::uint64_t>(rank);  // unequal on purpose
  for (std::uint64_t i = 0; i < n; ++i) {
    auto const key = static_cast<std::int64_t>((i * 7919 + static_cast<std::uint64_t>(rank) * 104729) % 311) - 100;
    auto const origin = static_cast<std::int32_t>(rank * 100000 + static_cast<int>(i));
    std::string text = i % 13 == 0 ? "" : "s" + std::to_string(origin) + ":" + std::to_string(key * key);
    if (i % 31 == 0) text += "\xc3\xa9\xe2\x82\xac";  // non-ASCII
    rows.push_back({key, origin, static_cast<double>(key) * 0.25 + static_cast<double>(i), text});
  }
  return rows;
}

inline table table_of(const std::vector<row>& rows) {
  std::vector<std::int64_t> keys;
  std::vector<std::int32_t> origins;
  std::vector<double> values;
  std::vector<std::string> texts;
  for (auto const& r : rows) {
    keys.push_back(r.key);
    origins.push_back(r.origin);
    values.push_back(r.value);
    texts.push_back(r.text);
  }
  table t;
  t.names = names();
  t.columns.push_back(column::from_values<std::int64_t>(keys));
  t.columns.push_back(column::from_values<std::int32_t>(origins));
  t.columns.push_back(column::from_values<double>(values));
  t.columns.push_back(column::from_strings(texts));
  return t;
}

inline std::vector<row> rows_in(const table& host) {
  auto const texts = host.columns[3].strings();
  std::vector<row> rows;
  for (std::uint64_t i = 0; i < host.columns[0].size(); ++i) {
    rows.push_back({host.columns[0].view().values<std::int64_t>()[i], host.columns[1].view().values<std::int32_t>()[i],
                    host.columns[2].view().values<double>()[i], texts[i]});
  }
  return rows;
}

/// The partition of a row for `partitions` partitions (hash_partition's definition).
inline std::uint32_t partition_of(const row& r, std::uint32_t partitions) { return hash_key(r.key) % partitions; }

/// The rows partition p must hold: by source rank, then in each source's order.
inline std::vector<row> expected_partition(std::uint32_t p, std::uint32_t partitions, int ranks) {
  std::vector<row> out;
  for (int source = 0; source < ranks; ++source) {
    for (auto const& r : rows_of(source)) {
      if (partition_of(r, partitions) == p) out.push_back(r);
    }
  }
  return out;
}

/// Inserts this rank's rows in chunks of `chunk` input rows, each chunk split by partition into
/// pieces (made by `make_piece` from a host table), and calls progress() once per chunk. Every
/// rank makes as many calls as the rank with the most chunks (some with nothing new), so the
/// collectives line up.
template <typename MakePiece>
void stream_rows(communicator& comm, streaming_shuffle& s, const std::vector<row>& mine, std::uint64_t chunk,
                 MakePiece&& make_piece) {
  std::uint64_t const steps = comm.allreduce_max((mine.size() + chunk - 1) / chunk);
  for (std::uint64_t step = 0; step < steps; ++step) {
    std::uint64_t const first = std::min<std::uint64_t>(step * chunk, mine.size());
    std::uint64_t const last = std::min<std::uint64_t>(first + chunk, mine.size());
    std::vector<std::vector<row>> by_partition(s.partitions());
    for (std::uint64_t i = first; i < last; ++i) by_partition[partition_of(mine[i], s.partitions())].push_back(mine[i]);
    for (std::uint32_t p = 0; p < s.partitions(); ++p) {
      if (!by_partition[p].empty()) s.insert(p, make_piece(table_of(by_partition[p])));
    }
    s.progress();
  }
}

}  // namespace zs::test::streaming
