#include "zs/comm/agreement.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <span>
#include <vector>

namespace zs {
namespace {

// Reasons longer than this are cut, so a failing rank cannot make every rank's message huge.
constexpr std::size_t max_reason_bytes = 1000;
// Ranks named with their reasons; more are counted.
constexpr std::size_t max_named = 4;

// "zshuffle: " starts every zs::error message; inside a longer message it is noise.
std::string_view without_prefix(std::string_view text) {
  constexpr std::string_view prefix = "zshuffle: ";
  if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  return text;
}

}  // namespace

void agree(communicator& comm, const std::optional<rank_failure>& mine, std::string_view operation,
           std::string_view where) {
  if (mine) {
    // On record before anything that can block: should a peer never reach this agreement,
    // the reason is still printed.
    std::fprintf(stderr, "zshuffle: rank %d: %.*s: %.*s failed: %s\n", comm.rank(), static_cast<int>(operation.size()),
                 operation.data(), static_cast<int>(where.size()), where.data(),
                 std::string(without_prefix(mine->message)).c_str());
    std::fflush(stderr);
  }
  std::uint64_t const code = mine ? static_cast<std::uint64_t>(mine->code) + 1 : 0;
  std::uint64_t const worst = comm.allreduce_max(code);
  if (worst == 0) return;

  // Some rank failed: every rank learns every reason (rare, so two more small collectives).
  std::string reason;
  if (mine) {
    reason = std::string(without_prefix(mine->message)).substr(0, max_reason_bytes);
    if (reason.empty()) reason = std::string(to_string(mine->code));
  }
  auto const lengths = comm.allgather(reason.size());
  std::uint64_t total = 0;
  for (auto const n : lengths) total += n;
  std::vector<char> all(static_cast<std::size_t>(total));
  comm.allgatherv(std::as_bytes(std::span(reason.data(), reason.size())), std::as_writable_bytes(std::span(all)),
                  lengths);

  std::string message = std::string(operation) + ": " + std::string(where) + " failed on ";
  std::size_t named = 0, failed = 0;
  std::uint64_t at = 0;
  for (std::size_t p = 0; p < lengths.size(); at += lengths[p], ++p) {
    if (lengths[p] == 0) continue;
    ++failed;
    if (named == max_named) continue;
    message += (named == 0 ? "rank " : "; on rank ") + std::to_string(p) + ": " +
               std::string(all.data() + at, static_cast<std::size_t>(lengths[p]));
    ++named;
  }
  if (failed == 0) message += "a rank (no reason given)";
  if (failed > named) message += "; and " + std::to_string(failed - named) + " more rank(s)";
  ZS_FAIL(static_cast<error_code>(worst - 1), message);
}

}  // namespace zs
