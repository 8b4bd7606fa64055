// MPI: the process environment, facts about the MPI library, and zs::mpi_communicator.
//
//   zs::mpi_environment env(&argc, &argv);     // MPI_Init_thread ... MPI_Finalize
//   zs::mpi_communicator comm;                 // a private duplicate of MPI_COMM_WORLD
//   auto const recv_counts = comm.exchange_counts(send_counts);
//   comm.alltoallv(send, send_counts, recv, recv_counts);
//
// Open MPI, MPICH and their derivatives all work; nothing here needs a CUDA-aware MPI (the
// collectives of zs::communicator move host bytes).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "zs/comm/communicator.hpp"

namespace zs {

/// Owns MPI's initialization for the lifetime of the process (or of main).
///
/// The constructor calls MPI_Init_thread, asking for MPI_THREAD_MULTIPLE, and checks that the
/// library provides at least `required_level`; the destructor calls MPI_Finalize. When MPI is
/// already initialized (by the application or another library), the object does nothing: it
/// neither initializes nor finalizes, and provided_level() reports MPI_Query_thread.
///
/// Throws zs::error(error_code::mpi_error) when MPI was already finalized, when initialization
/// fails, or when the provided thread level is below `required_level`, also when someone else
/// initialized MPI at a lower level. When this object initialized MPI, it finalizes it again
/// before that last throw, so the process can exit cleanly.
class mpi_environment {
 public:
  explicit mpi_environment(int* argc, char*** argv, int required_level = MPI_THREAD_MULTIPLE);
  ~mpi_environment();
  mpi_environment(const mpi_environment&) = delete;
  mpi_environment& operator=(const mpi_environment&) = delete;
  mpi_environment(mpi_environment&&) = delete;
  mpi_environment& operator=(mpi_environment&&) = delete;

  /// Whether this object initialized MPI (and will finalize it).
  bool owns_mpi() const noexcept { return owns_; }
  /// The thread level MPI provides (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  int provided_level() const noexcept { return provided_; }

 private:
  bool owns_ = false;
  int provided_ = MPI_THREAD_SINGLE;
};

/// The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.4, package: ...". Works
/// before MPI_Init and after MPI_Finalize.
std::string mpi_library_version();

/// Whether MPI can take CUDA device pointers directly.
enum class cuda_awareness { yes, no, unknown };

std::string_view to_string(cuda_awareness value) noexcept;

struct mpi_cuda_support {
  cuda_awareness value = cuda_awareness::unknown;
  /// How the value was found, for `zshuffle info` and logs.
  std::string source;
};

/// Whether the MPI library is CUDA-aware, decided in this order:
///   1. the environment variable ZS_MPI_CUDA_AWARE: "1" means yes, "0" means no (for libraries
///      that cannot tell, or to force host staging); any other non-empty value throws
///      zs::error(error_code::invalid_argument);
///   2. Open MPI's extension (mpi-ext.h): MPIX_CUDA_AWARE_SUPPORT, fixed when zshuffle was
///      compiled, says whether the library was built with CUDA at all; if it was, the run-time
///      MPIX_Query_cuda_support() says whether CUDA support is enabled in this run (asked only
///      while MPI is initialized, otherwise the answer is unknown);
///   3. otherwise unknown (MPICH and others have no query zshuffle uses). Callers treat unknown
///      like no: staging through host memory is always correct.
mpi_cuda_support mpi_cuda_aware();

/// This process's rank among the ranks on its node, for mapping ranks to GPUs. Taken from the
/// launcher when it says so (OMPI_COMM_WORLD_LOCAL_RANK from Open MPI's mpirun, then
/// SLURM_LOCALID from srun); otherwise from MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED),
/// which is collective over `comm`. Throws zs::error(error_code::invalid_argument) when one of
/// those variables is set but is not a non-negative integer.
int local_rank(MPI_Comm comm = MPI_COMM_WORLD);

/// The GPU this rank should use, out of `device_count` visible ones: by default its local rank
/// modulo the count (one GPU per rank when there are enough). The environment variable
/// ZS_DEVICES overrides it with a comma-separated list of device ordinals indexed by local rank
/// (modulo the list's length), e.g. "1,0" to swap two GPUs or "0" to put every rank on GPU 0.
/// Throws zs::error(error_code::invalid_argument) for an ordinal that is not a visible device or
/// a list that does not parse.
int device_for_rank(int device_count, MPI_Comm comm = MPI_COMM_WORLD);

struct mpi_communicator_options {
  /// The largest number of bytes one MPI call moves. Transfers above it are split into pieces
  /// of at most this size; MPI's int counts cap it at INT_MAX. Must be the same on every rank.
  /// Small values are for tests that exercise the splitting.
  std::uint64_t max_message_bytes = std::uint64_t{1} << 30;
};

/// zs::communicator over MPI.
///
/// Works on a private duplicate of the given communicator (MPI_Comm_idup), so its messages
/// never match the application's, and sets MPI_ERRORS_RETURN on it, so every failing MPI call
/// comes back as zs::error(error_code::mpi_error) instead of aborting.
///
/// Every transfer is a nonblocking MPI call, completed by polling MPI_Testall with a short
/// backoff (back-to-back polls for the first tens of microseconds, then short sleeps) until
/// timeout() passes; then the job is aborted as communicator.hpp says. How transfers map onto
/// MPI:
///   - alltoallv: MPI_Ialltoallv when, on every rank, the bytes sent and the bytes received
///     each fit in max_message_bytes (all ranks agree on this before choosing); otherwise
///     point-to-point messages (MPI_Isend, MPI_Irecv) of at most max_message_bytes each, with
///     the block for this rank itself copied locally.
///   - allgatherv: MPI_Iallgatherv when the gathered total fits in max_message_bytes, otherwise
///     point-to-point messages as above.
///   - bcast: MPI_Ibcast, once per piece of at most max_message_bytes.
///   - the word-sized collectives: MPI_Ialltoall, MPI_Iallgather, MPI_Iallreduce; barrier:
///     MPI_Ibarrier.
///   - send/recv: a small header with the byte count, then the pieces, all under the caller's
///     tag; the header lets recv detect a size mismatch and consume the whole message.
///     A send to this rank itself is kept in a queue inside the communicator.
///   - The point-to-point path of the collectives uses tag max_tag + 1, which send/recv never
///     use, so the two kinds of traffic cannot match each other's messages.
class mpi_communicator final : public communicator {
 public:
  /// Duplicates `comm`. Collective over `comm`: every rank constructs its communicator in the
  /// same order. MPI must be initialized. Throws zs::error(error_code::invalid_argument) on every
  /// rank when options.max_message_bytes is 0, above INT_MAX, or not the same on all ranks, and
  /// when ZS_TIMEOUT is malformed on any rank (see timeout_from_environment).
  explicit mpi_communicator(MPI_Comm comm = MPI_COMM_WORLD, mpi_communicator_options options = {});
  /// Frees the duplicate (MPI_Comm_free). If MPI is already finalized, the duplicate is gone
  /// with it and a note goes to stderr: destroy communicators before mpi_environment.
  ~mpi_communicator() override;
  /// A moved-from communicator may only be destroyed or assigned to.
  mpi_communicator(mpi_communicator&& other) noexcept;
  mpi_communicator& operator=(mpi_communicator&& other) noexcept;
  mpi_communicator(const mpi_communicator&) = delete;
  mpi_communicator& operator=(const mpi_communicator&) = delete;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::uint64_t max_message_bytes() const noexcept override { return max_message_bytes_; }
  /// Where MPI runs at MPI_THREAD_SERIALIZED or above (MPI_Query_thread).
  bool callable_from_any_thread() const noexcept override;
  void barrier() override;

  /// The private MPI communicator, e.g. to bootstrap NCCL. Traffic that the application sends
  /// on it must not use tag max_tag + 1.
  MPI_Comm get() const noexcept { return comm_; }

 protected:
  void do_alltoall_u64(std::span<const std::uint64_t> send,
                       std::span<std::uint64_t> recv) override;
  void do_allgather_u64(std::span<const std::uint64_t> mine,
                        std::span<std::uint64_t> all) override;
  std::uint64_t do_allreduce_u64(std::uint64_t value, reduce_op op) override;
  void do_alltoallv(std::span<const std::byte> send, std::span<const std::uint64_t> send_counts,
                    std::span<std::byte> recv, std::span<const std::uint64_t> recv_counts,
                    bool every_rank_fits_one_message) override;
  void do_allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::uint64_t> recv_counts) override;
  void do_bcast(std::span<std::byte> buffer, int root) override;
  void do_send(std::span<const std::byte> bytes, int peer, int tag) override;
  void do_recv(std::span<std::byte> bytes, int peer, int tag) override;

 private:
  void release() noexcept;
  // Completes one nonblocking collective within timeout().
  void complete(MPI_Request request, std::string_view operation);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::uint64_t max_message_bytes_ = 0;
  // Messages this rank sent to itself and has not received yet, by tag, oldest first.
  std::map<int, std::deque<std::vector<std::byte>>> to_self_;
};

}  // namespace zs
