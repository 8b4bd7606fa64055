// Argument checks, size agreement and bounded stream waits shared by every device communicator
// backend.
#include "zs/comm/device_communicator.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "collective_engines.hpp"
#include "link_bandwidth.hpp"
#include "polling.hpp"
#include "zs/comm/agreement.hpp"
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

// The checks of one rank's own arguments; throws invalid_argument naming the first problem.
void check_counts(const char* name, std::span<const std::uint64_t> counts, int ranks) {
  if (counts.size() != static_cast<std::size_t>(ranks)) {
    ZS_FAIL(error_code::invalid_argument, std::string(name) + " has " + std::to_string(counts.size()) +
                                              " entries, expected one per rank (" + std::to_string(ranks) + ")");
  }
}

void check_buffer(const char* name, const void* buffer, std::uint64_t bytes) {
  if (buffer == nullptr && bytes > 0) {
    ZS_FAIL(error_code::invalid_argument, std::string(name) + " is null for " + std::to_string(bytes) + " bytes");
  }
}

// The first peer whose count differs from what it says it sends, as a size_mismatch.
void check_agreement(std::span<const std::uint64_t> expected, std::span<const std::uint64_t> sent) {
  for (std::size_t p = 0; p < expected.size(); ++p) {
    if (expected[p] == sent[p]) continue;
    ZS_FAIL(error_code::size_mismatch, "recv_counts[" + std::to_string(p) + "] expects " +
                                           std::to_string(expected[p]) + " bytes from rank " + std::to_string(p) +
                                           ", which sends " + std::to_string(sent[p]));
  }
}

}  // namespace

void device_communicator::alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts,
                                    std::byte* recv, std::span<const std::uint64_t> recv_counts,
                                    cudaStream_t stream, sizes check) {
  auto const check_mine = [&] {
    check_counts("send_counts", send_counts, size());
    check_counts("recv_counts", recv_counts, size());
    check_buffer("send", send, sum(send_counts));
    check_buffer("recv", recv, sum(recv_counts));
  };
  if (check == sizes::agreed) {
    check_mine();
  } else {
    agree_on(host(), "device alltoallv", "checking the arguments", check_mine);
    auto const incoming = host().exchange_counts(send_counts);
    agree_on(host(), "device alltoallv", "matching the sizes", [&] { check_agreement(recv_counts, incoming); });
  }
  do_alltoallv(send, send_counts, recv, recv_counts, stream);
}

void device_communicator::allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                                     std::span<const std::uint64_t> recv_counts, cudaStream_t stream,
                                     sizes check) {
  auto const check_mine = [&] {
    check_counts("recv_counts", recv_counts, size());
    check_buffer("send", send, send_bytes);
    check_buffer("recv", recv, sum(recv_counts));
  };
  if (check == sizes::agreed) {
    check_mine();
  } else {
    agree_on(host(), "device allgatherv", "checking the arguments", check_mine);
    auto const all = host().allgather(send_bytes);
    agree_on(host(), "device allgatherv", "matching the sizes", [&] { check_agreement(recv_counts, all); });
  }
  do_allgatherv(send, send_bytes, recv, recv_counts, stream);
}

void device_communicator::bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream,
                                sizes check) {
  auto const check_mine = [&] {
    if (root < 0 || root >= size()) {
      ZS_FAIL(error_code::invalid_argument,
              "root " + std::to_string(root) + " is not a rank of " + std::to_string(size()));
    }
    check_buffer("buffer", buffer, bytes);
  };
  if (check == sizes::agreed) {
    check_mine();
  } else {
    agree_on(host(), "device bcast", "checking the arguments", check_mine);
    // Two steps: a rank that names another root would compare sizes against the wrong rank.
    auto const roots = host().allgather(static_cast<std::uint64_t>(root));
    agree_on(host(), "device bcast", "matching the root", [&] {
      if (roots[0] != static_cast<std::uint64_t>(root)) {
        ZS_FAIL(error_code::invalid_argument,
                "names root " + std::to_string(root) + ", rank 0 names " + std::to_string(roots[0]));
      }
    });
    auto const sizes = host().allgather(bytes);
    agree_on(host(), "device bcast", "matching the size", [&] {
      auto const root_bytes = sizes[static_cast<std::size_t>(root)];
      if (root_bytes != bytes) {
        ZS_FAIL(error_code::size_mismatch, "passes " + std::to_string(bytes) + " bytes, root " +
                                               std::to_string(root) + " broadcasts " + std::to_string(root_bytes));
      }
    });
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

void device_communicator::synchronize(cudaStream_t stream, std::string_view waiting_for) {
  cudaError_t status = cudaSuccess;
  std::optional<std::string> transport_failure;
  bool const finished = detail::poll_until(
      [&] {
        status = cudaStreamQuery(stream);
        if (status != cudaErrorNotReady) return true;
        transport_failure = transport_error();
        return transport_failure.has_value();
      },
      host().timeout(), detail::between_polls::sleep_when_long);
  std::string const who = "rank " + std::to_string(rank()) + ", waiting for " + std::string(waiting_for) +
                          " (" + std::string(transport()) + ")";
  if (transport_failure) {
    abort_transport();
    ZS_FAIL(error_code::nccl_error, who + ": the transport failed: " + *transport_failure);
  }
  if (!finished) {
    abort_transport();
    ZS_FAIL(error_code::timed_out, who + ": no progress within " + detail::describe_duration(host().timeout()) +
                                       " (a peer stopped answering, or the GPU hangs)");
  }
  if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaStreamQuery (synchronize)", __FILE__, __LINE__);
}

void device_communicator::alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs,
                                           cudaStream_t stream) {
  auto const check = [&](const char* list, int peer, const void* data, std::uint64_t bytes) {
    if (peer < 0 || peer >= size()) {
      ZS_FAIL(error_code::invalid_argument, std::string(list) + ": peer " + std::to_string(peer) + " is not a rank of " +
                                                std::to_string(size()));
    }
    check_buffer(list, data, bytes);
  };
  for (auto const& p : sends) check("a send piece", p.peer, p.data, p.bytes);
  for (auto const& p : recvs) check("a receive piece", p.peer, p.data, p.bytes);
  // Pieces to this rank itself are device copies, whatever the transport (NCCL without P2P
  // would move them through host memory).
  std::vector<send_piece> to_peers;
  std::vector<recv_piece> from_peers;
  std::vector<detail::frame_copy> local;  // this rank's pieces to itself
  std::size_t next_self = 0;
  auto const self_piece = [&](const recv_piece& p) { return p.peer == rank() && p.bytes > 0; };
  for (auto const& p : recvs) {
    if (p.peer != rank()) from_peers.push_back(p);
  }
  for (auto const& p : sends) {
    if (p.peer != rank()) {
      to_peers.push_back(p);
      continue;
    }
    if (p.bytes == 0) continue;
    while (next_self < recvs.size() && !self_piece(recvs[next_self])) ++next_self;
    if (next_self == recvs.size() || recvs[next_self].bytes != p.bytes) {
      ZS_FAIL(error_code::invalid_argument, "alltoallv_pieces: the pieces this rank sends itself do not match, piece "
                                            "for piece, those it receives from itself");
    }
    local.push_back({p.data, recvs[next_self++].data, p.bytes});
  }
  while (next_self < recvs.size() && !self_piece(recvs[next_self])) ++next_self;
  if (next_self != recvs.size()) {
    ZS_FAIL(error_code::invalid_argument, "alltoallv_pieces: this rank receives more pieces from itself than it sends");
  }
  // Few and large (a column's rows per round): one copy each runs at the memory's speed.
  for (auto const& c : local) copy_async(c.dst, c.src, c.bytes, stream);
  do_alltoallv_pieces(to_peers, from_peers, stream);
}

void device_communicator::do_alltoallv_pieces(std::span<const send_piece> sends, std::span<const recv_piece> recvs,
                                              cudaStream_t stream) {
  auto const ranks = static_cast<std::size_t>(size());
  auto const out = detail::pack_by_peer(sends, ranks), in = detail::pack_by_peer(recvs, ranks);
  device_buffer packed(std::max<std::uint64_t>(out.total, 1), stream);
  device_buffer landed(std::max<std::uint64_t>(in.total, 1), stream);
  std::vector<detail::frame_copy> copies;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    copies.push_back({sends[i].data, packed.as<std::byte>() + out.at[i], sends[i].bytes});
  }
  detail::copy_batch(copies, stream);
  do_alltoallv(packed.as<std::byte>(), out.counts, landed.as<std::byte>(), in.counts, stream);
  copies.clear();
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    copies.push_back({landed.as<std::byte>() + in.at[i], recvs[i].data, recvs[i].bytes});
  }
  detail::copy_batch(copies, stream);
}

const std::vector<double>& device_communicator::link_bandwidth(cudaStream_t stream) {
  if (!link_bps_.empty()) return link_bps_;
  // NVLink reaches its bandwidth only with tens of MiB per transfer.
  constexpr std::uint64_t probe = std::uint64_t{4} << 20, largest = std::uint64_t{256} << 20;
  device_buffer out(largest, stream), in(largest, stream);
  link_bps_ = detail::measure_links(host(), probe, largest, 2e-3, [&](int to, int from, std::uint64_t bytes) {
    send_piece const s{to, out.as<std::byte>(), bytes};
    recv_piece const r{from, in.as<std::byte>(), bytes};
    alltoallv_pieces(std::span(&s, 1), std::span(&r, 1), stream);
    synchronize(stream, "measuring the link to rank " + std::to_string(to));
  });
  return link_bps_;
}

void device_communicator::set_link_bandwidth(std::vector<double> bytes_per_second) {
  link_bps_ = detail::checked_link_bandwidth(std::move(bytes_per_second), size());
}

}  // namespace zs
