// How a command that runs under mpirun ends when something fails.
//
// main() initializes MPI before such a command parses its arguments, and catches what it
// throws. What happens next depends on whether the other ranks know:
//   - an agreed_error was thrown by every rank together, at an agreement point: each rank prints
//     it and the job ends normally (MPI_Finalize), every rank with the same exit code;
//   - anything else may have left the other ranks inside a collective that will never complete,
//     where MPI_Finalize would wait for ever: the rank prints its error, then aborts the job
//     (MPI_Abort), which ends every rank.
// So every step that can fail on one rank alone runs under agreed_step, and the library's
// collectives, which fail on every rank together by contract, run under together().
#pragma once

#include <string_view>
#include <utility>

#include "zs/comm/agreement.hpp"
#include "zs/error.hpp"

namespace zs::cli {

/// An error that every rank of the job throws together: the job may end normally.
class agreed_error : public zs::error {
 public:
  using zs::error::error;
  explicit agreed_error(const zs::error& e) : zs::error(e) {}
};

/// Whether the transport itself failed. A collective may then have completed on some ranks and
/// not on others (see communicator.hpp), so such an error is never taken as agreed.
inline bool transport_failed(zs::error_code code) {
  return code == zs::error_code::mpi_error || code == zs::error_code::nccl_error ||
         code == zs::error_code::timed_out;
}

/// Runs a call that, when it fails, fails on every rank together (zs::agree, the library's
/// collectives), and marks its error as agreed unless the transport failed.
template <typename Call>
decltype(auto) together(Call&& call) {
  try {
    return std::forward<Call>(call)();
  } catch (const agreed_error&) {
    throw;
  } catch (const zs::error& e) {
    if (transport_failed(e.code())) throw;
    throw agreed_error(e);
  }
}

/// zs::agree_on (comm/include/zs/comm/agreement.hpp) with its error marked as agreed: runs
/// `step` on this rank; when it failed on any rank, every rank throws an agreed_error naming
/// each rank where it failed, and why.
template <typename Step>
void agreed_step(zs::communicator& comm, std::string_view operation, std::string_view where, Step&& step) {
  together([&] { zs::agree_on(comm, operation, where, std::forward<Step>(step)); });
}

}  // namespace zs::cli
