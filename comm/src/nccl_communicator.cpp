#include "zs/comm/nccl_communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "collective_engines.hpp"  // frame_copy
#include "zs/comm/error.hpp"
#include "zs/hash.hpp"
#include "zs/memory.hpp"

namespace zs {

bool ranks_have_distinct_gpus(communicator& host) {
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  cudaDeviceProp props{};
  ZS_CUDA_TRY(cudaGetDeviceProperties(&props, device));
  auto const key = hash::checksum(reinterpret_cast<const std::byte*>(&props.uuid), sizeof props.uuid);
  auto keys = host.allgather(key);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}

nccl_communicator::nccl_communicator(communicator& host) : device_communicator(host) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  ncclUniqueId id{};
  // Every rank learns whether rank 0 made an id, so a failure there cannot leave the others
  // waiting in the broadcast.
  bool made = true;
  if (host.rank() == 0) made = ncclGetUniqueId(&id) == ncclSuccess;
  if (!host.all_ok(made)) ZS_FAIL(error_code::nccl_error, "ncclGetUniqueId failed on rank 0");
  host.bcast(std::as_writable_bytes(std::span(&id, 1)), 0);
  ZS_NCCL_TRY(ncclCommInitRank(&comm_, host.size(), id, host.rank()));
}

nccl_communicator::nccl_communicator(communicator& host, ncclComm_t adopted)
    : device_communicator(host), owned_(false) {
  int count = -1, rank = -1;
  bool const readable = adopted != nullptr && ncclCommCount(adopted, &count) == ncclSuccess &&
                        ncclCommUserRank(adopted, &rank) == ncclSuccess;
  bool const matches = readable && count == host.size() && rank == host.rank();
  if (!host.all_ok(matches)) {
    ZS_FAIL(error_code::invalid_argument,
            "the adopted NCCL communicator does not match the host communicator on some rank (this rank: " +
                (readable ? "NCCL rank " + std::to_string(rank) + " of " + std::to_string(count)
                          : std::string(adopted == nullptr ? "null" : "unreadable")) +
                ", host rank " + std::to_string(host.rank()) + " of " + std::to_string(host.size()) + ")");
  }
  comm_ = adopted;
}

nccl_communicator::~nccl_communicator() {
  if (comm_ == nullptr || !owned_) return;
  // ncclCommDestroy waits for the communicator's pending work, which may wait for a peer that
  // failed: while an exception unwinds, abort instead, so the error reaches the caller.
  if (std::uncaught_exceptions() > 0) {
    abort_transport();
  } else {
    ZS_NCCL_TRY_NOTHROW(ncclCommDestroy(comm_));
  }
}

nccl_communicator::nccl_communicator(nccl_communicator&& other) noexcept
    : device_communicator(other), comm_(std::exchange(other.comm_, nullptr)), owned_(other.owned_) {}

ncclComm_t nccl_communicator::live() const {
  if (comm_ == nullptr) {
    ZS_FAIL(error_code::nccl_error, "rank " + std::to_string(rank()) +
                                        ": the NCCL communicator was aborted after a timeout or an NCCL error; "
                                        "make a new one");
  }
  return comm_;
}

std::optional<std::string> nccl_communicator::transport_error() {
  if (comm_ == nullptr) return "the NCCL communicator was aborted earlier";
  ncclResult_t state = ncclSuccess;
  ncclResult_t const asked = ncclCommGetAsyncError(comm_, &state);
  if (asked != ncclSuccess) return std::string("ncclCommGetAsyncError failed: ") + ncclGetErrorString(asked);
  // ncclInProgress belongs to non-blocking communicators, which this one is not; it is no error.
  if (state == ncclSuccess || state == ncclInProgress) return std::nullopt;
  return "NCCL result " + std::to_string(static_cast<int>(state)) + ": " + ncclGetErrorString(state);
}

void nccl_communicator::abort_transport() noexcept {
  // Ends the kernels that wait for a peer, so the streams drain; the communicator is gone.
  if (comm_ == nullptr) return;
  ZS_NCCL_TRY_NOTHROW(ncclCommAbort(comm_));
  comm_ = nullptr;
}

namespace {
// Offsets of blocks packed in rank order.
std::uint64_t block_start(std::span<const std::uint64_t> counts, std::size_t p, std::uint64_t& running) {
  std::uint64_t const start = running;
  running += counts[p];
  return start;
}
}  // namespace

void nccl_communicator::do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts,
                                     std::byte* recv, std::span<const std::uint64_t> recv_counts,
                                     cudaStream_t stream) {
  ncclComm_t const comm = live();
  std::uint64_t send_at = 0, recv_at = 0;
  ZS_NCCL_TRY(ncclGroupStart());
  for (std::size_t p = 0; p < send_counts.size(); ++p) {
    std::uint64_t const s = block_start(send_counts, p, send_at);
    std::uint64_t const r = block_start(recv_counts, p, recv_at);
    int const peer = static_cast<int>(p);
    if (send_counts[p] > 0) ZS_NCCL_TRY(ncclSend(send + s, send_counts[p], ncclChar, peer, comm, stream));
    if (recv_counts[p] > 0) ZS_NCCL_TRY(ncclRecv(recv + r, recv_counts[p], ncclChar, peer, comm, stream));
  }
  ZS_NCCL_TRY(ncclGroupEnd());
}

void nccl_communicator::do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                                      std::span<const std::uint64_t> recv_counts, cudaStream_t stream) {
  ncclComm_t const comm = live();
  std::uint64_t recv_at = 0;
  ZS_NCCL_TRY(ncclGroupStart());
  for (std::size_t p = 0; p < recv_counts.size(); ++p) {
    std::uint64_t const r = block_start(recv_counts, p, recv_at);
    int const peer = static_cast<int>(p);
    if (send_bytes > 0) ZS_NCCL_TRY(ncclSend(send, send_bytes, ncclChar, peer, comm, stream));
    if (recv_counts[p] > 0) ZS_NCCL_TRY(ncclRecv(recv + r, recv_counts[p], ncclChar, peer, comm, stream));
  }
  ZS_NCCL_TRY(ncclGroupEnd());
}

void nccl_communicator::do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) {
  ncclComm_t const comm = live();
  if (bytes == 0) return;
  ZS_NCCL_TRY(ncclBroadcast(buffer, buffer, bytes, ncclChar, root, comm, stream));
}

void nccl_communicator::do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) {
  ncclComm_t const comm = live();
  if (count == 0) return;
  ZS_NCCL_TRY(ncclSend(bytes, count, ncclChar, peer, comm, stream));
}

void nccl_communicator::do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) {
  ncclComm_t const comm = live();
  if (count == 0) return;
  ZS_NCCL_TRY(ncclRecv(bytes, count, ncclChar, peer, comm, stream));
}

void nccl_communicator::do_alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs,
                                            cudaStream_t stream) {
  // NCCL matches the sends and receives between two ranks in the order they are posted, so
  // each piece lands in its place without packing. It moves pieces that do not start at a
  // 16-byte boundary at about half speed (bench/RESULTS.md), so such a piece goes through an
  // aligned staging copy on its own side (each side decides alone: only its own address
  // matters to it, and the sizes do not change).
  ncclComm_t const comm = live();
  constexpr std::uint64_t aligned = 16, slot = 256;
  auto const misaligned = [&](const void* p, std::uint64_t bytes) {
    return bytes > 0 && reinterpret_cast<std::uintptr_t>(p) % aligned != 0;
  };
  auto const staging_bytes = [&](auto pieces) {
    std::uint64_t total = 0;
    for (auto const& p : pieces) {
      if (misaligned(p.data, p.bytes)) total += (p.bytes + slot - 1) / slot * slot;
    }
    return total;
  };
  device_buffer out_stage(std::max<std::uint64_t>(staging_bytes(sends), 1), stream);
  device_buffer in_stage(std::max<std::uint64_t>(staging_bytes(recvs), 1), stream);
  std::vector<const std::byte*> send_from;
  std::vector<detail::frame_copy> before, after;
  std::uint64_t at = 0;
  for (auto const& p : sends) {
    send_from.push_back(p.data);
    if (!misaligned(p.data, p.bytes)) continue;
    send_from.back() = out_stage.as<std::byte>() + at;
    before.push_back({p.data, out_stage.as<std::byte>() + at, p.bytes});
    at += (p.bytes + slot - 1) / slot * slot;
  }
  std::vector<std::byte*> recv_into;
  at = 0;
  for (auto const& p : recvs) {
    recv_into.push_back(p.data);
    if (!misaligned(p.data, p.bytes)) continue;
    recv_into.back() = in_stage.as<std::byte>() + at;
    after.push_back({in_stage.as<std::byte>() + at, p.data, p.bytes});
    at += (p.bytes + slot - 1) / slot * slot;
  }
  // A column's rows per round and peer: few and large pieces, each copied at the memory's speed.
  for (auto const& c : before) copy_async(c.dst, c.src, c.bytes, stream);
  ZS_NCCL_TRY(ncclGroupStart());
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (sends[i].bytes > 0) ZS_NCCL_TRY(ncclSend(send_from[i], sends[i].bytes, ncclChar, sends[i].peer, comm, stream));
  }
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    if (recvs[i].bytes > 0) ZS_NCCL_TRY(ncclRecv(recv_into[i], recvs[i].bytes, ncclChar, recvs[i].peer, comm, stream));
  }
  ZS_NCCL_TRY(ncclGroupEnd());
  for (auto const& c : after) copy_async(c.dst, c.src, c.bytes, stream);
}

}  // namespace zs
