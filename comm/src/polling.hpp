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

/// What a wait does between polls once the first ones came back empty.
enum class between_polls {
  /// Yield the core and poll again at once: for waits where polling itself moves the work on.
  /// MPI progresses a transfer only inside MPI calls (a large message crosses shared memory
  /// fragment by fragment, one step per MPI_Test), so a sleep between polls stalls it: staged
  /// all-to-alls of 32 MiB chunks ran 3.7x slower with 50 us sleeps.
  yield,
  /// Yield for up to a millisecond, then sleep tens of microseconds between polls: for waits on
  /// work that runs by itself (a GPU stream, NCCL's own threads), so that a rank waiting for a
  /// slow peer leaves the core to the ranks and threads that have work.
  sleep_when_long,
};

/// Calls `ready()` until it returns true, or until `timeout` has passed (0: no limit); returns
/// whether it became ready. The first polls come back to back: small collectives finish within
/// microseconds, and anything slower would multiply their latency.
template <typename Ready>
bool poll_until(Ready&& ready, std::chrono::milliseconds timeout, between_polls idle) {
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
    if (idle == between_polls::yield || waited < yield) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
    }
  }
}

}  // namespace zs::detail
