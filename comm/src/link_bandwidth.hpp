// What the host and device communicators share to measure and check their links' bandwidth
// (communicator::link_bandwidth, device_communicator::link_bandwidth).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "zs/comm/communicator.hpp"
#include "zs/error.hpp"

namespace zs::detail {

/// Throws invalid_argument unless there is one positive, finite figure per rank.
inline std::vector<double> checked_link_bandwidth(std::vector<double> figures, int ranks) {
  if (figures.size() != static_cast<std::size_t>(ranks)) {
    ZS_FAIL(error_code::invalid_argument, "link bandwidth: " + std::to_string(figures.size()) +
                                              " figures, expected one per rank (" + std::to_string(ranks) + ")");
  }
  for (std::size_t p = 0; p < figures.size(); ++p) {
    if (!(figures[p] > 0) || !std::isfinite(figures[p])) {
      ZS_FAIL(error_code::invalid_argument, "link bandwidth: the figure for rank " + std::to_string(p) + " is " +
                                                std::to_string(figures[p]) + "; it must be positive and finite");
    }
  }
  return figures;
}

/// Bytes per second to each rank. In shift s every rank sends to rank + s and receives from
/// rank - s, so each link is measured while every rank drives one link of its own.
/// `exchange(to, from, bytes)` moves `bytes` (at most `largest`) each way and returns when they
/// have arrived. A first exchange of `probe` bytes warms the link up and sizes the measurement:
/// enough bytes for about `target` seconds on the slowest rank's link, from `probe` to
/// `largest`, since small transfers show latency rather than bandwidth. Then the best of three.
template <typename Exchange>
std::vector<double> measure_links(communicator& host, std::uint64_t probe, std::uint64_t largest, double target,
                                  Exchange exchange) {
  int const ranks = host.size(), me = host.rank();
  std::vector<double> measured(static_cast<std::size_t>(ranks), 0.0);
  auto const timed = [&](int to, int from, std::uint64_t bytes) {
    host.barrier();
    auto const start = std::chrono::steady_clock::now();
    exchange(to, from, bytes);
    return std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1e-9);
  };
  for (int shift = 0; shift < ranks; ++shift) {
    int const to = (me + shift) % ranks, from = (me - shift + ranks) % ranks;
    double const first = timed(to, from, probe);
    auto const wanted = static_cast<std::uint64_t>(static_cast<double>(probe) * target / first);
    // Both ends of every link must move the same bytes: the largest any rank wants.
    std::uint64_t const bytes = host.allreduce_max(std::clamp(wanted, probe, largest));
    double best = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      best = std::max(best, static_cast<double>(bytes) / timed(to, from, bytes));
    }
    measured[static_cast<std::size_t>(to)] = best;
  }
  return measured;
}

}  // namespace zs::detail
