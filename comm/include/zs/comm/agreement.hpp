// Agreement points: turning one rank's failure into every rank's error.
//
// A step that can fail on one rank alone (reading a file, an allocation, a check of local input)
// must not leave the other ranks waiting for bytes that never come. Run it under attempt(),
// which keeps its error instead of throwing, then call agree() on every rank: when no rank
// failed it returns; otherwise EVERY rank throws zs::error, with the worst error code among the
// failures and a message that names each failing rank and its reason:
//
//   auto const failed = zs::attempt([&] { input = read_my_slice(path); });
//   zs::agree(comm, failed, "demo", "reading the input");
//   // -> on every rank: "demo: reading the input failed on rank 1: I/O error: cannot open ..."
//
// or both at once:  zs::agree_on(comm, "demo", "reading the input", [&] { ... });
//
// A rank that failed prints its own error to stderr before it enters the agreement, so the
// reason is on record even if the agreement itself never completes (a peer that stopped
// answering; the communicator's timeout then ends the wait, see communicator.hpp).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "zs/comm/communicator.hpp"
#include "zs/error.hpp"

namespace zs {

/// A failure of this rank alone, held until the next agreement point.
struct rank_failure {
  error_code code;
  std::string message;  // zs::error::what(), or a description of a host allocation failure
};

/// Runs a step of this rank alone and returns its failure instead of throwing: a zs::error
/// keeps its code, std::bad_alloc becomes out_of_memory, any other std::exception internal.
/// A zs::error with error_code::timed_out is rethrown: it means a peer stopped answering, and
/// that peer would not answer the agreement either.
template <typename Step>
std::optional<rank_failure> attempt(Step&& step) {
  try {
    step();
  } catch (const error& e) {
    if (e.code() == error_code::timed_out) throw;
    return rank_failure{e.code(), e.what()};
  } catch (const std::bad_alloc&) {
    return rank_failure{error_code::out_of_memory, "a host memory allocation failed"};
  } catch (const std::exception& e) {
    return rank_failure{error_code::internal, e.what()};
  }
  return std::nullopt;
}

/// Collective over `comm`. Returns when no rank failed (one small allreduce). Otherwise every
/// rank throws zs::error with the worst code among the failures and the message
/// "<operation>: <where> failed on rank R: <its reason>[; on rank S: ...]" (at most four ranks
/// named with their reasons, each reason cut at 1000 bytes). `mine` is this rank's failure.
void agree(communicator& comm, const std::optional<rank_failure>& mine, std::string_view operation,
           std::string_view where);

/// attempt(step), then agree().
template <typename Step>
void agree_on(communicator& comm, std::string_view operation, std::string_view where, Step&& step) {
  agree(comm, attempt(static_cast<Step&&>(step)), operation, where);
}

}  // namespace zs
