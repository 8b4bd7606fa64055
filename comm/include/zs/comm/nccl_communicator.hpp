// zs::nccl_communicator: device collectives over NCCL, one rank per GPU.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

#include "zs/comm/device_communicator.hpp"

namespace zs {

/// Whether every rank of `host` has selected a different GPU (compared by UUID, so it holds also
/// when each rank sees only its own GPU as device 0). NCCL needs that. Collective over `host`.
bool ranks_have_distinct_gpus(communicator& host);

class nccl_communicator final : public device_communicator {
 public:
  /// Creates an NCCL communicator over the ranks of `host`: rank 0 makes the unique id and
  /// broadcasts it over `host`, then every rank joins (ncclCommInitRank). Collective over `host`.
  /// Each rank must have selected its own GPU (cudaSetDevice) before. `host` must outlive this.
  ///
  /// NVLink multicast (NVLS) is switched off (NCCL_NVLS_ENABLE=0) unless the environment
  /// already sets NCCL_NVLS_ENABLE: on shared multi-GPU hosts it can take the GPUs out of
  /// service, and all-to-all traffic gains nothing from it.
  explicit nccl_communicator(communicator& host);
  /// Adopts an NCCL communicator the application made, over the same ranks as `host` in the same
  /// order (checked: ncclCommCount and ncclCommUserRank on every rank, one agreed verdict).
  /// It stays the application's: not destroyed here. On a timeout or an NCCL error it is
  /// aborted like an owned one (NCCL offers no other way to end a transfer that waits for a
  /// peer), and the application must make a new one. Collective over `host`.
  nccl_communicator(communicator& host, ncclComm_t adopted);
  ~nccl_communicator() override;
  nccl_communicator(nccl_communicator&& other) noexcept;
  nccl_communicator& operator=(nccl_communicator&&) = delete;
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  std::string_view transport() const noexcept override { return "nccl"; }
  /// The NCCL communicator; null after synchronize() aborted it (a timeout or an NCCL error),
  /// when every transfer throws nccl_error.
  ncclComm_t get() const noexcept { return comm_; }

 protected:
  void do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts, std::byte* recv,
                    std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override;
  void do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                     std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override;
  void do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) override;
  void do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override;
  void do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override;
  void do_alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs,
                           cudaStream_t stream) override;
  std::optional<std::string> transport_error() override;
  void abort_transport() noexcept override;

 private:
  // comm_, or nccl_error when it was aborted.
  ncclComm_t live() const;

  ncclComm_t comm_ = nullptr;
  bool owned_ = true;  // made here (destroyed here), or adopted from the application
};

}  // namespace zs
