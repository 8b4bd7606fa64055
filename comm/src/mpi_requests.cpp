#include "mpi_requests.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "polling.hpp"

namespace zs::detail {

void wait_for_peers(std::span<MPI_Request> requests, const peer_wait& wait, std::span<MPI_Status> statuses) {
  if (requests.empty()) return;
  int const count = static_cast<int>(requests.size());
  MPI_Status* const status_out = statuses.empty() ? MPI_STATUSES_IGNORE : statuses.data();
  bool const done = poll_until(
      [&] {
        int flag = 0;
        ZS_MPI_TRY(MPI_Testall(count, requests.data(), &flag, status_out));
        return flag != 0;
      },
      wait.timeout, between_polls::yield);
  if (done) return;
  std::fprintf(stderr, "zshuffle: rank %d: timed out after %s in %.*s (a peer stopped answering); aborting the job\n",
               wait.rank, describe_duration(wait.timeout).c_str(), static_cast<int>(wait.operation.size()),
               wait.operation.data());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  // MPI_Abort does not return on any implementation at hand; should one return, end this
  // process rather than go on out of step with the others.
  std::_Exit(3);
}

}  // namespace zs::detail
