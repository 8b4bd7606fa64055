// Argument checks and size agreement shared by every device communicator backend.
#include "zs/comm/device_communicator.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "zs/error.hpp"

namespace zs {

namespace {

// Tag of the size handshake of send/recv on the host communicator. User messages on the host
// communicator must stay off it (documented in device_communicator.hpp's send).
constexpr int handshake_tag = communicator::max_tag;

std::uint64_t sum(std::span<const std::uint64_t> counts) {
  std::uint64_t total = 0;
  for (auto c : counts) total += c;
  return total;
}

}  // namespace

void device_communicator::alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts,
                                    std::byte* recv, std::span<const std::uint64_t> recv_counts,
                                    cudaStream_t stream, sizes check) {
  auto const n = static_cast<std::size_t>(size());
  bool const shapes_ok = send_counts.size() == n && recv_counts.size() == n &&
                         (send != nullptr || sum(send_counts) == 0) && (recv != nullptr || sum(recv_counts) == 0);
  if (check == sizes::agreed) {
    ZS_EXPECTS(shapes_ok, "one count per rank, and buffers for non-zero counts");
  } else {
    if (!host().all_ok(shapes_ok)) {
      ZS_FAIL(error_code::invalid_argument,
              "device alltoallv: a rank passed counts of the wrong length or a null buffer");
    }
    auto const incoming = host().exchange_counts(send_counts);
    bool const match = std::equal(incoming.begin(), incoming.end(), recv_counts.begin());
    if (!host().all_ok(match)) {
      ZS_FAIL(error_code::size_mismatch,
              "device alltoallv: receive counts disagree with what the peers send" +
                  std::string(match ? "" : " (on this rank)"));
    }
  }
  do_alltoallv(send, send_counts, recv, recv_counts, stream);
}

void device_communicator::allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                                     std::span<const std::uint64_t> recv_counts, cudaStream_t stream,
                                     sizes check) {
  bool const shapes_ok = recv_counts.size() == static_cast<std::size_t>(size()) &&
                         (send != nullptr || send_bytes == 0) && (recv != nullptr || sum(recv_counts) == 0);
  if (check == sizes::agreed) {
    ZS_EXPECTS(shapes_ok, "one count per rank, and buffers for non-zero counts");
  } else {
    if (!host().all_ok(shapes_ok)) {
      ZS_FAIL(error_code::invalid_argument,
              "device allgatherv: a rank passed counts of the wrong length or a null buffer");
    }
    auto const all = host().allgather(send_bytes);
    bool const match = std::equal(all.begin(), all.end(), recv_counts.begin());
    if (!host().all_ok(match)) {
      ZS_FAIL(error_code::size_mismatch, "device allgatherv: receive counts disagree with the senders' sizes");
    }
  }
  do_allgatherv(send, send_bytes, recv, recv_counts, stream);
}

void device_communicator::bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream,
                                sizes check) {
  bool const shapes_ok = root >= 0 && root < size() && (buffer != nullptr || bytes == 0);
  if (check == sizes::agreed) {
    ZS_EXPECTS(shapes_ok, "a root in range and a buffer");
  } else {
    if (!host().all_ok(shapes_ok)) ZS_FAIL(error_code::invalid_argument, "device bcast: a bad root or buffer");
    auto const r = static_cast<std::uint64_t>(root);
    if (host().allreduce_min(r) != host().allreduce_max(r)) {
      ZS_FAIL(error_code::invalid_argument, "device bcast: ranks name different roots");
    }
    if (host().allreduce_min(bytes) != host().allreduce_max(bytes)) {
      ZS_FAIL(error_code::size_mismatch, "device bcast: ranks pass buffers of different sizes");
    }
  }
  do_bcast(buffer, bytes, root, stream);
}

void device_communicator::send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream,
                               sizes check) {
  ZS_EXPECTS(peer >= 0 && peer < size() && peer != rank(), "another rank, in range");
  ZS_EXPECTS(bytes != nullptr || count == 0, "a buffer for a non-empty message");
  if (check == sizes::check) {
    // Tell the receiver the size and wait for its verdict, so neither side starts a device
    // transfer the other will not match.
    host().send(std::as_bytes(std::span(&count, 1)), peer, handshake_tag);
    std::uint64_t verdict = 0;
    host().recv(std::as_writable_bytes(std::span(&verdict, 1)), peer, handshake_tag);
    if (verdict != count) {
      ZS_FAIL(error_code::size_mismatch, "device send of " + std::to_string(count) + " bytes to rank " +
                                             std::to_string(peer) + ", which expects " + std::to_string(verdict));
    }
  }
  do_send(bytes, count, peer, stream);
}

void device_communicator::recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream,
                               sizes check) {
  ZS_EXPECTS(peer >= 0 && peer < size() && peer != rank(), "another rank, in range");
  ZS_EXPECTS(bytes != nullptr || count == 0, "a buffer for a non-empty message");
  if (check == sizes::check) {
    std::uint64_t incoming = 0;
    host().recv(std::as_writable_bytes(std::span(&incoming, 1)), peer, handshake_tag);
    host().send(std::as_bytes(std::span(&count, 1)), peer, handshake_tag);
    if (incoming != count) {
      ZS_FAIL(error_code::size_mismatch, "device recv of " + std::to_string(count) + " bytes from rank " +
                                             std::to_string(peer) + ", which sends " + std::to_string(incoming));
    }
  }
  do_recv(bytes, count, peer, stream);
}

}  // namespace zs
