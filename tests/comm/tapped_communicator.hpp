// A communicator for tests that damages traffic in transit on one rank.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <vector>

#include "zs/comm/communicator.hpp"
#include "zs/frame.hpp"

namespace zs::test {

// Forwards to another communicator and watches the payloads it receives through alltoallv,
// allgatherv or bcast (not the sizes and agreement words that the public operations exchange
// first). On the victim rank it damages one payload once, like a link that damages data in
// transit:
//   - by default the first buffer of frames (one that starts with a frame header): a byte of
//     its first header, so the header checksum no longer matches;
//   - with `damaged_payload` = n, the n-th payload received (0 for the first, whatever it
//     holds: the shuffle's manifest, a round's frame sizes ...): bit 61 of its first word, which
//     turns a count into one no buffer can hold.
// It also counts the frame bytes it sees and records its own timeout() at every payload, so a
// test can tell what a collective set for the call.
class tapped_communicator final : public zs::communicator {
 public:
  explicit tapped_communicator(zs::communicator& inner, int victim = -1, int damaged_payload = -1)
      : inner_(inner), victim_(victim), damaged_payload_(damaged_payload) {}

  int rank() const noexcept override { return inner_.rank(); }
  int size() const noexcept override { return inner_.size(); }
  std::uint64_t max_message_bytes() const noexcept override { return inner_.max_message_bytes(); }
  void barrier() override { inner_.barrier(); }

  int damaged() const noexcept { return damaged_; }
  std::uint64_t frame_bytes_received() const noexcept { return frame_bytes_; }
  const std::vector<std::chrono::milliseconds>& timeouts_seen() const noexcept { return timeouts_seen_; }
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
    received(recv);
  }
  void do_allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::uint64_t> recv_counts) override {
    inner_.allgatherv(send, recv, recv_counts);
    received(recv);
  }
  void do_bcast(std::span<std::byte> buffer, int root) override {
    inner_.bcast(buffer, root);
    received(buffer);
  }
  void do_send(std::span<const std::byte> bytes, int peer, int tag) override { inner_.send(bytes, peer, tag); }
  void do_recv(std::span<std::byte> bytes, int peer, int tag) override { inner_.recv(bytes, peer, tag); }

 private:
  void received(std::span<std::byte> bytes) {
    timeouts_seen_.push_back(timeout());
    int const payload = payloads_++;
    bool const frames =
        bytes.size() >= zs::frame_header_bytes && zs::detail::load_le(bytes.data(), 4) == zs::frame_magic;
    if (frames) frame_bytes_ += bytes.size();
    if (rank() != victim_ || damaged_ > 0) return;  // once: one damaged payload is enough
    if (damaged_payload_ < 0 && frames) {
      bytes[9] ^= std::byte{0x40};  // the value count: the header checksum no longer matches
      ++damaged_;
    } else if (damaged_payload_ == payload && bytes.size() >= 8) {
      bytes[7] ^= std::byte{0x20};  // bit 61 of the first (little-endian) word
      ++damaged_;
    }
  }

  zs::communicator& inner_;
  int victim_;
  int damaged_payload_;
  int damaged_ = 0;
  int payloads_ = 0;
  std::uint64_t frame_bytes_ = 0;
  std::vector<std::chrono::milliseconds> timeouts_seen_;
};

}  // namespace zs::test
