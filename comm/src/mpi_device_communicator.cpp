#include "zs/comm/mpi_device_communicator.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include "mpi_requests.hpp"
#include "zs/comm/error.hpp"

namespace zs {

namespace {

using detail::request_list;

constexpr int device_tag = 7;

std::vector<std::uint64_t> starts_of(std::span<const std::uint64_t> counts) {
  std::vector<std::uint64_t> starts(counts.size() + 1, 0);
  for (std::size_t p = 0; p < counts.size(); ++p) starts[p + 1] = starts[p] + counts[p];
  return starts;
}

std::uint64_t pieces(std::uint64_t bytes, std::uint64_t chunk) { return (bytes + chunk - 1) / chunk; }

// How this communicator's waits for peers are bounded (its host communicator's timeout) and
// reported.
detail::peer_wait waiting(const device_communicator& comm, std::string_view operation) {
  return {comm.host().timeout(), comm.rank(), operation};
}

}  // namespace

mpi_device_communicator::mpi_device_communicator(mpi_communicator& host, std::optional<mode> chosen,
                                                 std::uint64_t chunk_bytes)
    : device_communicator(host), chunk_bytes_(chunk_bytes) {
  ZS_EXPECTS(chunk_bytes > 0 && chunk_bytes <= INT_MAX, "a chunk of 1 to INT_MAX bytes");
  if (chosen) {
    mode_ = *chosen;
  } else {
    mode_ = mpi_cuda_aware().value == cuda_awareness::yes ? mode::cuda_aware : mode::staged;
  }
  // All ranks must use the same mode: a staged rank and a CUDA-aware rank would not match.
  auto const m = static_cast<std::uint64_t>(mode_);
  if (host.allreduce_min(m) != host.allreduce_max(m)) {
    ZS_FAIL(error_code::invalid_argument, "ranks disagree on CUDA-aware vs staged MPI");
  }
  MPI_Request duplicated = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Comm_idup(host.get(), &device_comm_, &duplicated));
  detail::wait_for_peers(std::span(&duplicated, 1),
                         {host.timeout(), rank(), "zs::mpi_device_communicator (duplicating the communicator)"});
  ZS_MPI_TRY(MPI_Comm_set_errhandler(device_comm_, MPI_ERRORS_RETURN));
}

mpi_device_communicator::~mpi_device_communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (device_comm_ != MPI_COMM_NULL && !finalized) ZS_MPI_TRY_NOTHROW(MPI_Comm_free(&device_comm_));
}

std::string_view mpi_device_communicator::transport() const noexcept {
  return mode_ == mode::cuda_aware ? "mpi (CUDA-aware)" : "mpi (staged through pinned host memory)";
}

pinned_buffer& mpi_device_communicator::staging(int which, std::size_t bytes) {
  if (staging_[which].size() < bytes) staging_[which] = pinned_buffer(bytes);
  return staging_[which];
}

void mpi_device_communicator::do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts,
                                           std::byte* recv, std::span<const std::uint64_t> recv_counts,
                                           cudaStream_t stream) {
  blocks const b{send, send_counts, starts_of(send_counts), recv, recv_counts, starts_of(recv_counts)};
  // The block to this rank itself never leaves the device.
  int const me = rank();
  if (send_counts[me] > 0) {
    ZS_CUDA_TRY(cudaMemcpyAsync(recv + b.recv_at[me], send + b.send_at[me], send_counts[me],
                                cudaMemcpyDeviceToDevice, stream));
  }
  if (mode_ == mode::staged) {
    staged_alltoallv(b, stream);
  } else {
    aware_alltoallv(b, stream);
  }
}

// Round r moves bytes [r * chunk, (r + 1) * chunk) of every block. Both ends of a pair know the
// block's size, so they agree on each round's counts without talking.
void mpi_device_communicator::staged_alltoallv(const blocks& b, cudaStream_t stream) {
  int const ranks = size();
  int const me = rank();
  auto const& [send, send_counts, send_at, recv, recv_counts, recv_at] = b;
  std::uint64_t local_rounds = 0;
  for (int p = 0; p < ranks; ++p) {
    if (p == me) continue;
    local_rounds = std::max({local_rounds, pieces(send_counts[p], chunk_bytes_), pieces(recv_counts[p], chunk_bytes_)});
  }
  std::uint64_t const rounds = host().allreduce_max(local_rounds);
  if (rounds == 0) {
    synchronize(stream, "the copy of this rank's own block");
    return;
  }
  auto slice = [&](std::uint64_t count, std::uint64_t r) {
    std::uint64_t const begin = std::min(count, r * chunk_bytes_);
    return std::min(count, begin + chunk_bytes_) - begin;
  };
  std::size_t const room = static_cast<std::size_t>(chunk_bytes_) * static_cast<std::size_t>(ranks);
  pinned_buffer* out[2] = {&staging(0, room), &staging(1, room)};
  pinned_buffer* in[2] = {&staging(2, room), &staging(3, room)};
  cuda_event copied_out[2], copied_in[2];
  std::vector<std::uint64_t> out_counts(ranks), in_counts(ranks);

  // Enqueue the device-to-host copies of round r into out[r % 2], packed by peer.
  auto stage_out = [&](std::uint64_t r) {
    std::byte* at = out[r % 2]->as<std::byte>();
    for (int p = 0; p < ranks; ++p) {
      if (p == me) continue;
      std::uint64_t const bytes = slice(send_counts[p], r);
      if (bytes > 0) {
        ZS_CUDA_TRY(cudaMemcpyAsync(at, send + send_at[p] + r * chunk_bytes_, bytes, cudaMemcpyDeviceToHost, stream));
      }
      at += bytes;
    }
    copied_out[r % 2].record(stream);
  };

  stage_out(0);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    if (r + 1 < rounds) stage_out(r + 1);  // overlaps the exchange of round r below
    copied_out[r % 2].synchronize();
    if (r >= 2) copied_in[r % 2].synchronize();  // in[r % 2] was last read by round r - 2's copy back
    for (int p = 0; p < ranks; ++p) {
      out_counts[p] = p == me ? 0 : slice(send_counts[p], r);
      in_counts[p] = p == me ? 0 : slice(recv_counts[p], r);
    }
    std::uint64_t total_out = 0, total_in = 0;
    for (int p = 0; p < ranks; ++p) total_out += out_counts[p], total_in += in_counts[p];
    host().alltoallv(std::span(out[r % 2]->as<const std::byte>(), total_out), out_counts,
                     std::span(in[r % 2]->as<std::byte>(), total_in), in_counts);
    const std::byte* from = in[r % 2]->as<const std::byte>();
    for (int p = 0; p < ranks; ++p) {
      if (in_counts[p] > 0) {
        ZS_CUDA_TRY(cudaMemcpyAsync(recv + recv_at[p] + r * chunk_bytes_, from, in_counts[p], cudaMemcpyHostToDevice,
                                    stream));
      }
      from += in_counts[p];
    }
    copied_in[r % 2].record(stream);
  }
  // The pinned buffers are reused by the next call: finish the copies out of them first.
  synchronize(stream, "the copies out of the staging buffers");
}

void mpi_device_communicator::aware_alltoallv(const blocks& b, cudaStream_t stream) {
  int const ranks = size();
  int const me = rank();
  auto const& [send, send_counts, send_at, recv, recv_counts, recv_at] = b;
  synchronize(stream, "the send buffer before a CUDA-aware all-to-all");
  // A post that fails part way leaves the others to request_list, which cancels and frees them.
  request_list requests;
  for (int p = 0; p < ranks; ++p) {
    if (p == me) continue;
    requests.recv_pieces(recv + recv_at[p], recv_counts[p], p, device_tag, device_comm_, chunk_bytes_);
    requests.send_pieces(send + send_at[p], send_counts[p], p, device_tag, device_comm_, chunk_bytes_);
  }
  requests.wait_all(waiting(*this, "zs::mpi_device_communicator::alltoallv (CUDA-aware)"));
}

// The collectives below are not on a shuffle's hot path: whole-buffer staging (or direct device
// pointers) with no pipelining.

void mpi_device_communicator::do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                                            std::span<const std::uint64_t> recv_counts, cudaStream_t stream) {
  // An allgatherv is an alltoallv in which every rank sends the same block to everyone.
  int const ranks = size();
  std::vector<std::uint64_t> send_counts(ranks, send_bytes);
  device_buffer repeated(send_bytes * static_cast<std::uint64_t>(ranks), stream);
  for (int p = 0; p < ranks; ++p) {
    if (send_bytes > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(repeated.as<std::byte>() + p * send_bytes, send, send_bytes,
                                  cudaMemcpyDeviceToDevice, stream));
    }
  }
  do_alltoallv(repeated.as<std::byte>(), send_counts, recv, recv_counts, stream);
  synchronize(stream, "the received blocks of an all-gather");
}

void mpi_device_communicator::do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) {
  if (bytes == 0) return;
  synchronize(stream, "the buffer before a broadcast");
  if (mode_ == mode::cuda_aware) {
    std::vector<MPI_Request> requests;
    for (std::uint64_t at = 0; at < bytes; at += chunk_bytes_) {
      int const n = static_cast<int>(std::min(chunk_bytes_, bytes - at));
      MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
      ZS_MPI_TRY(MPI_Ibcast(buffer + at, n, MPI_BYTE, root, device_comm_, &request));
    }
    detail::wait_for_peers(requests, waiting(*this, "zs::mpi_device_communicator::bcast (CUDA-aware)"));
    return;
  }
  pinned_buffer& host_copy = staging(0, bytes);
  if (rank() == root) {
    ZS_CUDA_TRY(cudaMemcpyAsync(host_copy.data(), buffer, bytes, cudaMemcpyDeviceToHost, stream));
    synchronize(stream, "the root's copy to the staging buffer");
  }
  host().bcast(std::span(host_copy.as<std::byte>(), bytes), root);
  if (rank() != root) {
    ZS_CUDA_TRY(cudaMemcpyAsync(buffer, host_copy.data(), bytes, cudaMemcpyHostToDevice, stream));
    synchronize(stream, "the copy from the staging buffer");
  }
}

// Point to point: the device pointers themselves (CUDA-aware) or a pinned copy, in messages of
// at most chunk_bytes on this communicator's own MPI communicator.
void mpi_device_communicator::do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) {
  if (count == 0) return;
  const std::byte* from = bytes;
  if (mode_ == mode::staged) {
    pinned_buffer& host_copy = staging(0, count);
    ZS_CUDA_TRY(cudaMemcpyAsync(host_copy.data(), bytes, count, cudaMemcpyDeviceToHost, stream));
    from = host_copy.as<const std::byte>();
  }
  synchronize(stream, "the bytes to send");
  request_list requests;
  requests.send_pieces(from, count, peer, device_tag, device_comm_, chunk_bytes_);
  requests.wait_all(waiting(*this, "zs::mpi_device_communicator::send"));
}

void mpi_device_communicator::do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) {
  if (count == 0) return;
  synchronize(stream, "the receive buffer to be free");
  std::byte* into = mode_ == mode::staged ? staging(2, count).as<std::byte>() : bytes;
  request_list requests;
  requests.recv_pieces(into, count, peer, device_tag, device_comm_, chunk_bytes_);
  requests.wait_all(waiting(*this, "zs::mpi_device_communicator::recv"));
  if (mode_ == mode::staged) {
    ZS_CUDA_TRY(cudaMemcpyAsync(bytes, into, count, cudaMemcpyHostToDevice, stream));
    synchronize(stream, "the copy from the staging buffer");
  }
}

}  // namespace zs
