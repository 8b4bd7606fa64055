// zs::communicator: a group of ranks and the collectives zshuffle needs, on host bytes.
//
// The layers above (size exchange, compressed collectives, the table shuffle) move opaque bytes
// through this interface and never see MPI or NCCL. A backend (zs::mpi_communicator, in
// mpi_communicator.hpp) implements a few protected primitives; the public operations here check
// their arguments and make every rank agree before any data moves.
//
// Contract shared by every collective (alltoallv, allgatherv, bcast, exchange_counts, allgather,
// allreduce_*, all_ok, barrier):
//   - Every rank of the group calls it, in the same order as the other collectives.
//   - Calls on one communicator must not overlap (one thread at a time). A thread that needs its
//     own traffic uses its own communicator.
//   - Sizes are 64-bit. A backend splits transfers larger than max_message_bytes() into several
//     messages, so buffers above 2 GiB work.
//   - Argument errors never hang the group and never deliver truncated data. Before moving the
//     payload, the ranks exchange their sizes and agree on a verdict; when any rank's arguments
//     are wrong, EVERY rank throws zs::error:
//       error_code::invalid_argument  some rank broke a local precondition (a count list of the
//                                     wrong length, a buffer that is not the sum of its counts,
//                                     a root out of range); takes precedence over size_mismatch;
//       error_code::size_mismatch     the ranks' arguments are each well formed but disagree
//                                     (rank a expects n bytes from rank b, which sends m != n).
//     The message names the ranks that reported a problem and, on those ranks, what it was. No
//     data has moved when this happens and the communicator stays usable.
//   - An error_code::mpi_error (or nccl_error) means the transport itself failed. The collective
//     may then have completed on some ranks and not others; do not use the communicator again.
//   - No wait is unbounded: a rank waits for its peers at most timeout() (default 600 s, or
//     ZS_TIMEOUT seconds; 0 waits forever). Agreement needs every rank to answer, so a peer that
//     stops answering (stopped, hung, swapped out) is the one failure it cannot report. When
//     the time passes, a backend ends the wait the only safe way it has: the MPI backend prints
//     "zshuffle: rank R: timed out after T in OPERATION (a peer stopped answering); aborting
//     the job" to stderr and aborts the whole job (MPI_Abort, exit code 3), since a started
//     collective cannot be cancelled and would leave the ranks out of step.
//
// send/recv are point to point and obey the same size rules between the two ranks involved.
//
// Buffers are host memory here. Send and receive buffers of one call must not overlap.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zs {

/// How long a new communicator waits for its peers: the environment variable ZS_TIMEOUT, a
/// whole number of seconds (0: wait forever), or communicator::default_timeout when it is unset
/// or empty. Throws zs::error(error_code::invalid_argument) when ZS_TIMEOUT is anything else
/// (a sign, spaces, a fraction, a unit, a number too large to count in milliseconds).
std::chrono::milliseconds timeout_from_environment();

class communicator {
 public:
  /// Tags of send/recv must lie in [0, max_tag]. MPI guarantees 32767 tags; the backend keeps
  /// the last one for its own traffic.
  static constexpr int max_tag = 32766;
  /// The timeout when ZS_TIMEOUT is not set: generous, since a rank may legitimately wait for
  /// a slow peer (a large encode, a busy link), but finite.
  static constexpr std::chrono::milliseconds default_timeout{std::chrono::seconds(600)};

  virtual ~communicator() = default;

  /// The longest this rank waits for its peers in one blocking step of a collective or of
  /// send/recv; 0 means no limit. Starts as timeout_from_environment(). Local to this rank:
  /// ranks may differ, and changing it is not a collective. See the contract above for what
  /// happens when it passes.
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// Sets timeout(). Throws zs::error(error_code::invalid_argument) for a negative duration.
  void set_timeout(std::chrono::milliseconds timeout);

  /// This process's rank in the group, in [0, size()).
  virtual int rank() const noexcept = 0;
  /// The number of ranks in the group.
  virtual int size() const noexcept = 0;
  /// The largest number of bytes the backend moves in one underlying transfer. Larger transfers
  /// are split into pieces of at most this size. The same on every rank.
  virtual std::uint64_t max_message_bytes() const noexcept = 0;
  /// Whether a thread other than the one that made the communicator may call it (one call at a
  /// time still): what lets work that communicates run in the background (streaming_shuffle's
  /// overlapped exchanges). False unless the backend says so.
  virtual bool callable_from_any_thread() const noexcept { return false; }

  /// All-to-all of variable-sized blocks.
  ///
  /// `send` holds one block per destination, packed in rank order: the block for rank p is
  /// send_counts[p] bytes that start right after the blocks for ranks 0..p-1. `recv` receives
  /// one block per source rank, packed the same way by recv_counts. Blocks may be empty.
  ///
  /// Preconditions (invalid_argument on every rank otherwise): send_counts.size() == size(),
  /// recv_counts.size() == size(), send.size() == sum(send_counts),
  /// recv.size() == sum(recv_counts).
  /// Agreement (size_mismatch on every rank otherwise): recv_counts[p] on this rank equals
  /// send_counts[rank()] on rank p, for every pair of ranks.
  ///
  /// Costs two small collectives (one u64 per peer, then one per rank) before the payload.
  void alltoallv(std::span<const std::byte> send, std::span<const std::uint64_t> send_counts,
                 std::span<std::byte> recv, std::span<const std::uint64_t> recv_counts);

  /// All-gather of variable-sized blocks: every rank contributes `send` and receives all blocks
  /// in `recv`, packed in rank order (rank p's block is recv_counts[p] bytes). A caller that
  /// does not know the sizes gets them from allgather(send.size()) first.
  ///
  /// Preconditions (invalid_argument on every rank otherwise): recv_counts.size() == size(),
  /// recv.size() == sum(recv_counts).
  /// Agreement (size_mismatch on every rank otherwise): recv_counts[p] equals send.size() on
  /// rank p, for every rank p.
  void allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                  std::span<const std::uint64_t> recv_counts);

  /// Broadcast: after the call, `buffer` on every rank holds what it held on `root`.
  ///
  /// Preconditions (invalid_argument on every rank otherwise): 0 <= root < size(), and every
  /// rank names the same root.
  /// Agreement (size_mismatch on every rank otherwise): buffer.size() is the same on every rank.
  void bcast(std::span<std::byte> buffer, int root);

  /// Sends `bytes` to rank `peer` under `tag`; returns when `bytes` may be reused. Messages from
  /// one rank to another with the same tag arrive in the order they were sent. A send to this
  /// rank itself is buffered and never blocks. A send to another rank may block until the peer
  /// posts the matching recv, so two ranks that send to each other first deadlock: order them.
  ///
  /// Throws invalid_argument (on this rank only) unless 0 <= peer < size() and
  /// 0 <= tag <= max_tag.
  void send(std::span<const std::byte> bytes, int peer, int tag);

  /// Receives the next message that rank `peer` sent to this rank under `tag` into `bytes`.
  ///
  /// Throws invalid_argument (on this rank only) unless 0 <= peer < size() and
  /// 0 <= tag <= max_tag, and, for a receive from this rank itself, unless a matching send was
  /// made before (it would never arrive).
  /// Throws size_mismatch when the message is not exactly bytes.size() long. The message is
  /// consumed (the next recv gets the next message) and `bytes` is left unchanged. The sender
  /// is not told.
  void recv(std::span<std::byte> bytes, int peer, int tag);

  /// Returns when every rank has called it.
  virtual void barrier() = 0;

  /// True on every rank when `local_ok` is true on every rank (a logical AND over the group).
  /// The building block for "did every rank succeed?" before a step that must not start
  /// otherwise.
  bool all_ok(bool local_ok);

  /// The largest `value` over the group, on every rank.
  std::uint64_t allreduce_max(std::uint64_t value);
  /// The smallest `value` over the group, on every rank.
  std::uint64_t allreduce_min(std::uint64_t value);
  /// The sum of `value` over the group, on every rank. Wraps modulo 2^64; callers summing
  /// byte counts stay far from that.
  std::uint64_t allreduce_sum(std::uint64_t value);

  /// Every rank's `value`, indexed by rank, on every rank.
  std::vector<std::uint64_t> allgather(std::uint64_t value);

  /// All-to-all of one count per peer: send_counts[p] goes to rank p, and the result's entry p
  /// is what rank p put in its send_counts[rank()]. The usual first step of an alltoallv whose
  /// receive sizes are not known in advance.
  ///
  /// Preconditions (invalid_argument on every rank otherwise): send_counts.size() == size(),
  /// and no count equals UINT64_MAX (reserved to flag a rank with bad arguments).
  std::vector<std::uint64_t> exchange_counts(std::span<const std::uint64_t> send_counts);

  /// Bytes per second this rank moves to each rank (to itself: the local copy), as measured
  /// when every rank exchanges with one peer at a time (up to 16 MiB each way, sized to take about
  /// 2 ms, best of 3). Measured on the first call, which is collective (every rank calls it
  /// together), and remembered; set_link_bandwidth replaces the figures without a collective
  /// (one positive figure per rank: a site's known values, or a test's made-up links).
  /// The CPU shuffle's planner reads them; device_communicator has its own for device memory.
  const std::vector<double>& link_bandwidth();
  void set_link_bandwidth(std::vector<double> bytes_per_second);

 protected:
  enum class reduce_op { max, min, sum };

  /// Starts with timeout_from_environment() (and throws as it does).
  communicator();
  /// Starts with the given timeout and leaves ZS_TIMEOUT unread: for a backend that reads it
  /// itself, so that a malformed value fails every rank together rather than one.
  explicit communicator(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  communicator(const communicator&) = default;
  communicator& operator=(const communicator&) = default;
  communicator(communicator&&) = default;
  communicator& operator=(communicator&&) = default;

  // The primitives a backend implements. The public operations call them only with checked,
  // agreed arguments, in the same order on every rank.

  /// send.size() == recv.size() == size(); recv[p] = what rank p had in send[rank()].
  virtual void do_alltoall_u64(std::span<const std::uint64_t> send,
                               std::span<std::uint64_t> recv) = 0;
  /// Every rank gives mine.size() == k words (the same k everywhere); all.size() == k * size()
  /// receives rank p's words at [p * k, (p + 1) * k).
  virtual void do_allgather_u64(std::span<const std::uint64_t> mine,
                                std::span<std::uint64_t> all) = 0;
  virtual std::uint64_t do_allreduce_u64(std::uint64_t value, reduce_op op) = 0;

  /// Counts and buffers are consistent on every rank. `every_rank_fits_one_message` is the same
  /// on every rank: true when on every rank both sum(send_counts) and sum(recv_counts) are at
  /// most max_message_bytes(), so the whole exchange can go in one native call.
  virtual void do_alltoallv(std::span<const std::byte> send,
                            std::span<const std::uint64_t> send_counts,
                            std::span<std::byte> recv, std::span<const std::uint64_t> recv_counts,
                            bool every_rank_fits_one_message) = 0;
  /// recv_counts[p] is rank p's send.size(), on every rank.
  virtual void do_allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                             std::span<const std::uint64_t> recv_counts) = 0;
  /// Same size and root on every rank.
  virtual void do_bcast(std::span<std::byte> buffer, int root) = 0;
  /// peer and tag are in range. do_recv throws size_mismatch as recv documents.
  virtual void do_send(std::span<const std::byte> bytes, int peer, int tag) = 0;
  virtual void do_recv(std::span<std::byte> bytes, int peer, int tag) = 0;

 private:
  std::chrono::milliseconds timeout_;
  std::vector<double> link_bps_;
};

}  // namespace zs
