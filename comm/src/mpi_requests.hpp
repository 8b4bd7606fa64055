// Nonblocking MPI requests and the one place where the MPI backends wait for them.
//
// Every MPI transfer of zshuffle is posted as a nonblocking call (MPI_Iallreduce, MPI_Ialltoallv,
// MPI_Isend, ...) and completed by wait_for_peers, which polls instead of blocking so that no
// wait outlasts the communicator's timeout.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "zs/comm/error.hpp"

namespace zs::detail {

/// Who waits, for what, and for how long: what a timeout message needs.
struct peer_wait {
  std::chrono::milliseconds timeout;  // 0: no limit
  int rank;                           // this rank, in the communicator that waits
  std::string_view operation;         // e.g. "zs::communicator::allreduce"
};

/// Completes every request (MPI_REQUEST_NULL entries count as complete), filling `statuses`
/// when it is not empty (one per request). Polls MPI_Testall with a short backoff (polling.hpp)
/// and throws zs::error(mpi_error) when MPI reports an error.
///
/// When wait.timeout passes first, a peer has stopped answering. A started collective can be
/// neither cancelled nor completed alone, and returning would leave this rank out of step with
/// the others, so it prints one line to stderr ("zshuffle: rank R: timed out after T in
/// OPERATION (a peer stopped answering); aborting the job") and calls
/// MPI_Abort(MPI_COMM_WORLD, 3), which ends every rank of the job. It does not return then.
void wait_for_peers(std::span<MPI_Request> requests, const peer_wait& wait, std::span<MPI_Status> statuses = {});

/// Nonblocking point-to-point requests of one transfer. wait_all completes them. If an
/// exception abandons the transfer instead (an MPI call that fails part way), the destructor
/// cancels and frees what is still pending rather than leave requests that write into buffers
/// the caller is about to free; this is best effort (a matched receive cannot be cancelled),
/// which is why a communicator is not to be used again after an mpi_error. Only for
/// point-to-point requests: the MPI standard forbids cancelling a collective's.
class request_list {
 public:
  request_list() = default;
  request_list(const request_list&) = delete;
  request_list& operator=(const request_list&) = delete;
  ~request_list() {
    for (MPI_Request& request : requests_) {
      if (request == MPI_REQUEST_NULL) continue;
      ZS_MPI_TRY_NOTHROW(MPI_Cancel(&request));
      ZS_MPI_TRY_NOTHROW(MPI_Request_free(&request));
    }
  }

  /// Posts `bytes` to `peer` as pieces of at most `max_piece` bytes each.
  void send_pieces(const std::byte* data, std::uint64_t bytes, int peer, int tag, MPI_Comm comm,
                   std::uint64_t max_piece) {
    for (std::uint64_t offset = 0; offset < bytes; offset += max_piece) {
      int const piece = static_cast<int>(std::min(max_piece, bytes - offset));
      MPI_Request& request = requests_.emplace_back(MPI_REQUEST_NULL);
      ZS_MPI_TRY(MPI_Isend(data + offset, piece, MPI_BYTE, peer, tag, comm, &request));
    }
  }

  /// Posts receives for `bytes` from `peer`, cut the way send_pieces cuts them.
  void recv_pieces(std::byte* data, std::uint64_t bytes, int peer, int tag, MPI_Comm comm,
                   std::uint64_t max_piece) {
    for (std::uint64_t offset = 0; offset < bytes; offset += max_piece) {
      int const piece = static_cast<int>(std::min(max_piece, bytes - offset));
      MPI_Request& request = requests_.emplace_back(MPI_REQUEST_NULL);
      ZS_MPI_TRY(MPI_Irecv(data + offset, piece, MPI_BYTE, peer, tag, comm, &request));
    }
  }

  void send_header(const std::uint64_t* header, int peer, int tag, MPI_Comm comm) {
    MPI_Request& request = requests_.emplace_back(MPI_REQUEST_NULL);
    ZS_MPI_TRY(MPI_Isend(header, 1, MPI_UINT64_T, peer, tag, comm, &request));
  }

  void wait_all(const peer_wait& wait) {
    wait_for_peers(requests_, wait);
    requests_.clear();
  }

 private:
  // emplace_back may move earlier requests; MPI only holds on to the handle values, never to
  // their addresses, so that is safe.
  std::vector<MPI_Request> requests_;
};

}  // namespace zs::detail
