// Codec speeds that the spill and the shuffle's planner measure on a column's first rows and
// remember for later calls (docs/PLANNER.md, docs/SPILL.md).
//
// A figure is remembered with the bytes it was measured on, and serves a later call whose own
// sample would be at most twice that: a few hundred rows time the calls' fixed costs, not the
// codec, so they must not stand for a column of gigabytes, while a streaming shuffle's exchanges,
// each with columns of a few MiB, should not measure every codec again on every call (at 4 ranks
// that was 80 ms of each exchange). A larger sample measured later replaces a smaller one.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace zs::detail {

template <typename Key, typename Speed>
class measured_speeds {
 public:
  /// The figure remembered for `key`, if it was measured on at least half of `sample_bytes`.
  std::optional<Speed> find(const Key& key, std::uint64_t sample_bytes) const {
    std::lock_guard<std::mutex> const hold(lock_);
    auto const it = entries_.find(key);
    if (it == entries_.end() || 2 * it->second.bytes < sample_bytes) return std::nullopt;
    return it->second.speed;
  }
  /// Remembers `speed`, measured on `sample_bytes`, unless a larger sample's figure is there.
  void remember(const Key& key, std::uint64_t sample_bytes, Speed speed) {
    std::lock_guard<std::mutex> const hold(lock_);
    auto const [it, added] = entries_.try_emplace(key, entry{sample_bytes, speed});
    if (!added && it->second.bytes < sample_bytes) it->second = entry{sample_bytes, speed};
  }

 private:
  struct entry {
    std::uint64_t bytes;
    Speed speed;
  };
  mutable std::mutex lock_;
  std::map<Key, entry> entries_;
};

}  // namespace zs::detail
