// Null masks in the compressed collectives (shuffle.cpp, column_collectives.cpp): which columns
// need their validity sent at all. A column whose rows are all valid (or all null) on every rank
// that contributes rows sends no validity; each receiver writes the uniform mask itself. Only
// columns with both kinds of rows send a validity column.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"

namespace zs::detail {

/// A column's rows as to nulls, over every rank that contributes rows.
enum class nulls_kind : std::uint8_t {
  none,       // no rank has a mask: the output has none
  all_valid,  // masks somewhere, but not one null row: the output gets an all-valid mask
  all_null,   // every row is null (and there are rows): the output gets an all-null mask
  mixed,      // both: the validity travels
};

/// Each column's nulls_kind, the same on every rank. Collective. `root`: only that rank's columns
/// count (a broadcast, whose other ranks pass types only); otherwise every rank's. Empty when the
/// ranks pass different column counts or roots, or a root that is no rank: the collective's own
/// checks report those. The views of columns with masks are checked first (check_column), a
/// failure every rank's (agree_on under `operation`). Counting nulls waits for `stream`.
std::vector<nulls_kind> column_nulls(communicator& comm, std::string_view operation,
                                     std::span<const column_view> columns, std::optional<int> root,
                                     memory_kind memory, cudaStream_t stream);

/// Gives `out` a mask of all valid or all null rows, ordered on `stream`.
void add_uniform_null_mask(column& out, nulls_kind kind, cudaStream_t stream);

}  // namespace zs::detail
