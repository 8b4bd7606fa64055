// zs::device_communicator: collectives on DEVICE memory, ordered on CUDA streams.
//
// The counterpart of zs::communicator (host bytes) for data that lives on the GPU. Backends:
//   - zs::nccl_communicator (nccl_communicator.hpp): NCCL, bootstrapped over a host communicator;
//   - zs::mpi_device_communicator (mpi_device_communicator.hpp): MPI with device pointers when
//     the library is CUDA-aware, otherwise staged through pinned host memory in pipelined chunks.
//
// Every device communicator is paired with the host communicator of the same ranks, which it
// uses to agree on sizes before any device bytes move: the rules of communicator.hpp hold here
// too (argument errors and size mismatches throw on EVERY rank, nothing moves, no hang). A caller
// that has already agreed on the counts (the compressed shuffle exchanges them anyway) passes
// sizes::agreed to skip that round trip.
//
// Stream semantics: a call returns once the transfer is enqueued on `stream` (NCCL) or done
// (MPI backends, which synchronise `stream` first because MPI knows nothing of streams). Either
// way, work enqueued on `stream` after the call sees the received bytes, and the send buffer may
// be reused by work enqueued on `stream` after the call.
//
// Bounded waits: a transfer enqueued on a stream completes only when every peer takes part, so
// a host wait for such a stream must not be a plain cudaStreamSynchronize, which would wait
// forever for a peer that stopped. synchronize() waits at most host().timeout() and watches the
// transport's own error state meanwhile; use it for every host wait on a stream that carries
// this communicator's traffic (the compressed collectives do).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zs/comm/communicator.hpp"

namespace zs {

class device_communicator {
 public:
  /// Whether the counts of a call still need checking across ranks.
  enum class sizes { check, agreed };

  virtual ~device_communicator() = default;

  int rank() const noexcept { return host_->rank(); }
  int size() const noexcept { return host_->size(); }
  /// The host communicator of the same ranks (size agreement, small control messages).
  communicator& host() const noexcept { return *host_; }
  /// "nccl", "mpi (CUDA-aware)" or "mpi (staged through pinned host memory)".
  virtual std::string_view transport() const noexcept = 0;

  /// All-to-all of variable-sized blocks of device memory, packed in rank order as in
  /// communicator::alltoallv.
  void alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts, std::byte* recv,
                 std::span<const std::uint64_t> recv_counts, cudaStream_t stream, sizes check = sizes::check);
  /// Every rank's `send_bytes` bytes at `send` land on every rank, packed in rank order in
  /// `recv` (rank p's block is recv_counts[p] bytes).
  void allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                  std::span<const std::uint64_t> recv_counts, cudaStream_t stream, sizes check = sizes::check);
  /// After the call, `buffer` on every rank holds what it held on `root`.
  void bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream, sizes check = sizes::check);
  /// Point to point. With sizes::check the two ranks agree on the size first with a handshake
  /// on the host communicator under tag communicator::max_tag (keep host send/recv of your own
  /// off that tag); a mismatch throws size_mismatch on both ranks and moves nothing. The peer is
  /// another rank: a device message to oneself is a cudaMemcpyAsync.
  void send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream, sizes check = sizes::check);
  void recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream, sizes check = sizes::check);

  /// One piece of a scattered all-to-all.
  struct send_piece {
    int peer;
    const std::byte* data;
    std::uint64_t bytes;
  };
  struct recv_piece {
    int peer;
    std::byte* data;
    std::uint64_t bytes;
  };
  /// An all-to-all of pieces scattered over device memory, without packing them: the pieces
  /// this rank sends peer p, in the order listed, land in the pieces p lists to receive from
  /// this rank, in its order. The two lists must match piece for piece (count and sizes): the
  /// callers agree on them beforehand, as with sizes::agreed; pieces of 0 bytes are skipped on
  /// both sides. NCCL moves each piece where it belongs; the MPI backends pack, exchange and
  /// unpack.
  void alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs, cudaStream_t stream);

  /// Bytes per second this rank moves to each rank (to itself: the local copy), as measured
  /// when every rank exchanges with one peer at a time (4 to 256 MiB each way, sized to take about
  /// 2 ms, best of 3). Measured on the first call, which is collective (every rank calls it
  /// together), and remembered; set_link_bandwidth replaces the figures without a collective
  /// (one positive figure per rank: a site's known values, or a test's made-up links).
  /// The shuffle's planner reads them (shuffle_planner.hpp).
  const std::vector<double>& link_bandwidth(cudaStream_t stream);
  void set_link_bandwidth(std::vector<double> bytes_per_second);

  /// Waits on the host until the work enqueued on `stream` so far is done: polls
  /// cudaStreamQuery and the transport's asynchronous error (NCCL: ncclCommGetAsyncError) with
  /// a short backoff, for at most host().timeout() (0: no limit). Not a collective.
  /// Throws zs::error, naming this rank and `waiting_for` (what the caller waits for, e.g. "the
  /// frame sizes of round 3"):
  ///   timed_out   the time passed (a peer stopped answering, or the GPU hangs);
  ///   nccl_error  the transport reported an asynchronous error;
  ///   cuda_error  the stream's work failed.
  /// After timed_out or nccl_error the transport's pending work is aborted (NCCL:
  /// ncclCommAbort) and this communicator can no longer move data: make a new one.
  void synchronize(cudaStream_t stream, std::string_view waiting_for);

 protected:
  explicit device_communicator(communicator& host) : host_(&host) {}
  device_communicator(const device_communicator&) = default;
  device_communicator& operator=(const device_communicator&) = default;

  // Backends implement these; arguments are checked and agreed on every rank.
  virtual void do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts, std::byte* recv,
                            std::span<const std::uint64_t> recv_counts, cudaStream_t stream) = 0;
  virtual void do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                             std::span<const std::uint64_t> recv_counts, cudaStream_t stream) = 0;
  virtual void do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) = 0;
  virtual void do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) = 0;
  virtual void do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) = 0;
  /// By default the pieces are packed by peer into pool buffers, moved with do_alltoallv and
  /// unpacked, each with one batched copy.
  virtual void do_alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs,
                                   cudaStream_t stream);

  /// What synchronize watches besides the stream: the transport's asynchronous error, if any,
  /// as text for the message. None by default (a transport that only copies on streams).
  virtual std::optional<std::string> transport_error() { return std::nullopt; }
  /// Ends the transport's pending work after a timeout or a transport error, so that no kernel
  /// keeps waiting for a peer (NCCL: ncclCommAbort). Nothing by default.
  virtual void abort_transport() noexcept {}

 private:
  communicator* host_;
  std::vector<double> link_bps_;
};

}  // namespace zs
