// zs::mpi_device_communicator: device collectives over MPI.
//
// Two modes:
//   cuda_aware  device pointers go straight to MPI (point-to-point messages of at most
//               chunk_bytes). Only for an MPI library built with CUDA support.
//   staged      device bytes are copied to pinned host memory, moved by the host communicator,
//               and copied back, in rounds of at most chunk_bytes per peer: the device-to-host
//               copy of round r + 1 overlaps the MPI exchange of round r. Always correct.
// The default mode follows mpi_cuda_aware() (yes: cuda_aware; no or unknown: staged), so the
// ZS_MPI_CUDA_AWARE environment variable overrides it too.
//
// MPI knows nothing of CUDA streams: every call first waits for `stream` (synchronize), and
// returns when the transfer is complete. Every MPI transfer is nonblocking and waited for at
// most host.timeout(), as in zs::mpi_communicator.
#pragma once

#include <mpi.h>

#include <optional>
#include <vector>

#include "zs/comm/device_communicator.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/memory.hpp"

namespace zs {

class mpi_device_communicator final : public device_communicator {
 public:
  enum class mode { cuda_aware, staged };

  /// `host` must outlive this communicator. Collective over `host` (duplicates its MPI
  /// communicator for its own point-to-point traffic).
  explicit mpi_device_communicator(mpi_communicator& host, std::optional<mode> mode = std::nullopt,
                                   std::uint64_t chunk_bytes = std::uint64_t{32} << 20);
  ~mpi_device_communicator() override;
  mpi_device_communicator(const mpi_device_communicator&) = delete;
  mpi_device_communicator& operator=(const mpi_device_communicator&) = delete;

  std::string_view transport() const noexcept override;
  mode current_mode() const noexcept { return mode_; }

 protected:
  void do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts, std::byte* recv,
                    std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override;
  void do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                     std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override;
  void do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) override;
  void do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override;
  void do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override;

 private:
  // An all-to-all's blocks: buffers, counts, and where each peer's block starts.
  struct blocks {
    const std::byte* send;
    std::span<const std::uint64_t> send_counts;
    std::vector<std::uint64_t> send_at;
    std::byte* recv;
    std::span<const std::uint64_t> recv_counts;
    std::vector<std::uint64_t> recv_at;
  };
  // Both move the blocks to the other ranks; the caller has copied this rank's own block.
  void staged_alltoallv(const blocks& b, cudaStream_t stream);
  void aware_alltoallv(const blocks& b, cudaStream_t stream);
  pinned_buffer& staging(int which, std::size_t bytes);

  mode mode_;
  std::uint64_t chunk_bytes_;
  MPI_Comm device_comm_ = MPI_COMM_NULL;  // point-to-point traffic of this communicator
  pinned_buffer staging_[4];               // two send and two receive buffers, grown on demand
};

}  // namespace zs
