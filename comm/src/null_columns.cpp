#include "null_columns.hpp"

#include <algorithm>
#include <cstring>

#include "collective_engines.hpp"
#include "zs/comm/agreement.hpp"
#include "zs/error.hpp"
#include "zs/null_mask.hpp"

namespace zs::detail {

std::vector<nulls_kind> column_nulls(communicator& comm, std::string_view operation,
                                     std::span<const column_view> columns, std::optional<int> root,
                                     memory_kind memory, cudaStream_t stream) {
  std::uint64_t const call = (std::uint64_t{columns.size()} << 32) | static_cast<std::uint32_t>(root.value_or(-1));
  auto const calls = comm.allgather(call);
  if (std::any_of(calls.begin(), calls.end(), [&](std::uint64_t word) { return word != call; })) return {};
  if (root && (*root < 0 || *root >= comm.size())) return {};
  bool const contributes = !root || *root == comm.rank();

  // Masks anywhere (or at the root): a word per 64 columns.
  std::vector<nulls_kind> out(columns.size(), nulls_kind::none);
  for (std::size_t first = 0; first < columns.size(); first += 64) {
    std::size_t const last = std::min(columns.size(), first + 64);
    std::uint64_t mine = 0;
    for (std::size_t c = first; c < last; ++c) {
      if (columns[c].null_mask != nullptr) mine |= std::uint64_t{1} << (c - first);
    }
    auto const all = comm.allgather(mine);
    std::uint64_t any = 0;
    if (root) {
      any = all[static_cast<std::size_t>(*root)];
    } else {
      for (std::uint64_t word : all) any |= word;
    }
    for (std::size_t c = first; c < last; ++c) {
      if (((any >> (c - first)) & 1) != 0) out[c] = nulls_kind::mixed;
    }
  }
  if (std::find(out.begin(), out.end(), nulls_kind::mixed) == out.end()) return out;

  // This rank's null rows per nullable column, after checking the views.
  agree_on(comm, operation, "checking the arguments", [&] {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (out[c] == nulls_kind::mixed) check_column(c, columns[c], memory, contributes);
    }
  });
  std::vector<std::uint64_t> nulls(columns.size(), 0);
  agree_on(comm, operation, "counting the null rows", [&] {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (out[c] == nulls_kind::mixed && contributes) {
        nulls[c] = count_nulls(columns[c].null_mask, columns[c].count, memory, stream);
      }
    }
  });
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (out[c] != nulls_kind::mixed) continue;
    auto const& v = columns[c];
    bool const none_null = comm.allreduce_sum(nulls[c]) == 0;
    // A rank that contributes no rows, or only null ones, does not stand against all null.
    bool const only_null = !contributes || nulls[c] == v.count;
    bool const all_null = comm.allreduce_min(only_null ? 1 : 0) == 1;
    if (none_null) {
      out[c] = nulls_kind::all_valid;  // also where there are no rows at all
    } else if (all_null) {
      out[c] = nulls_kind::all_null;
    }
  }
  return out;
}

void add_uniform_null_mask(column& out, nulls_kind kind, cudaStream_t stream) {
  std::uint64_t const bytes = null_mask_bytes(out.size());
  std::uint8_t* const mask = out.add_null_mask(stream);
  if (bytes == 0) return;
  // All valid: every row's bit set, the padding bits after the last row clear as everywhere.
  bool const valid = kind == nulls_kind::all_valid;
  unsigned const tail_rows = static_cast<unsigned>(out.size() % 8);
  int const fill = valid ? 0xff : 0x00;
  int const last = valid && tail_rows != 0 ? (1 << tail_rows) - 1 : fill;
  if (out.memory() == memory_kind::host) {
    std::memset(mask, fill, bytes - 1);
    mask[bytes - 1] = static_cast<std::uint8_t>(last);
  } else {
    ZS_CUDA_TRY(cudaMemsetAsync(mask, fill, bytes - 1, stream));
    ZS_CUDA_TRY(cudaMemsetAsync(mask + bytes - 1, last, 1, stream));
  }
}

}  // namespace zs::detail
