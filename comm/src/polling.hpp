// Waiting for something another party finishes (a peer's message, a stream's work) without
// waiting forever, and without keeping a core busy through a long wait.
#pragma once

#include <chrono>
#include <string>
#include <thread>

namespace zs::detail {

/// How a wait for time that ran out reads in messages: "5 s", or "1500 ms" for a part second.
inline std::string describe_duration(std::chrono::milliseconds duration) {
  auto const ms = duration.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

/// Calls `ready()` until it returns true, or until `timeout` has passed (0: no limit); returns
/// whether it became ready. The first polls come back to back: small collectives finish within
/// microseconds, and a sleep there would multiply their latency. Up to a millisecond it yields
/// the core between polls (ranks often share cores, and a peer that is behind needs one), and
/// after that it sleeps tens of microseconds between polls, so that a rank waiting for a slow
/// peer leaves the core to the ranks and threads that have work.
template <typename Ready>
bool poll_until(Ready&& ready, std::chrono::milliseconds timeout) {
  using clock = std::chrono::steady_clock;
  constexpr auto spin = std::chrono::microseconds(50);
  constexpr auto yield = std::chrono::milliseconds(1);
  constexpr auto pause = std::chrono::microseconds(50);
  auto const start = clock::now();
  for (;;) {
    if (ready()) return true;
    auto const waited = clock::now() - start;
    if (timeout.count() > 0 && waited >= timeout) return false;
    if (waited < spin) continue;
    if (waited < yield) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
    }
  }
}

}  // namespace zs::detail
