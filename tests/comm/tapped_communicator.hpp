// A communicator for tests that damages frames in transit on one rank.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "zs/comm/communicator.hpp"
#include "zs/frame.hpp"

namespace zs::test {

// Forwards to another communicator and watches the frame buffers (those that start with a frame
// header) it receives through alltoallv, allgatherv or bcast: it counts their bytes and, on the
// victim rank, flips a byte in the first header of the first such buffer, like a link that damages data in transit. Other
// traffic (sizes, agreement words, manifests) passes untouched.
class tapped_communicator final : public zs::communicator {
 public:
  explicit tapped_communicator(zs::communicator& inner, int victim = -1) : inner_(inner), victim_(victim) {}

  int rank() const noexcept override { return inner_.rank(); }
  int size() const noexcept override { return inner_.size(); }
  std::uint64_t max_message_bytes() const noexcept override { return inner_.max_message_bytes(); }
  void barrier() override { inner_.barrier(); }

  int damaged() const noexcept { return damaged_; }
  std::uint64_t frame_bytes_received() const noexcept { return frame_bytes_; }
  void stop() noexcept { victim_ = -1; }

 protected:
  void do_alltoall_u64(std::span<const std::uint64_t> send, std::span<std::uint64_t> recv) override {
    std::vector<std::uint64_t> const counts(static_cast<std::size_t>(size()), 8);
    inner_.alltoallv(std::as_bytes(send), counts, std::as_writable_bytes(recv), counts);
  }
  void do_allgather_u64(std::span<const std::uint64_t> mine, std::span<std::uint64_t> all) override {
    std::vector<std::uint64_t> const counts(static_cast<std::size_t>(size()), mine.size() * 8);
    inner_.allgatherv(std::as_bytes(mine), std::as_writable_bytes(all), counts);
  }
  std::uint64_t do_allreduce_u64(std::uint64_t value, reduce_op op) override {
    switch (op) {
      case reduce_op::max: return inner_.allreduce_max(value);
      case reduce_op::min: return inner_.allreduce_min(value);
      case reduce_op::sum: return inner_.allreduce_sum(value);
    }
    return value;
  }
  void do_alltoallv(std::span<const std::byte> send, std::span<const std::uint64_t> send_counts,
                    std::span<std::byte> recv, std::span<const std::uint64_t> recv_counts, bool) override {
    inner_.alltoallv(send, send_counts, recv, recv_counts);
    damage(recv);
  }
  void do_allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::uint64_t> recv_counts) override {
    inner_.allgatherv(send, recv, recv_counts);
    damage(recv);
  }
  void do_bcast(std::span<std::byte> buffer, int root) override {
    inner_.bcast(buffer, root);
    damage(buffer);
  }
  void do_send(std::span<const std::byte> bytes, int peer, int tag) override { inner_.send(bytes, peer, tag); }
  void do_recv(std::span<std::byte> bytes, int peer, int tag) override { inner_.recv(bytes, peer, tag); }

 private:
  void damage(std::span<std::byte> bytes) {
    if (bytes.size() < zs::frame_header_bytes || zs::detail::load_le(bytes.data(), 4) != zs::frame_magic) return;
    frame_bytes_ += bytes.size();
    if (rank() != victim_ || damaged_ > 0) return;  // once: one damaged frame is enough
    bytes[9] ^= std::byte{0x40};  // the value count: the header checksum no longer matches
    ++damaged_;
  }

  zs::communicator& inner_;
  int victim_;
  int damaged_ = 0;
  std::uint64_t frame_bytes_ = 0;
};

}  // namespace zs::test
