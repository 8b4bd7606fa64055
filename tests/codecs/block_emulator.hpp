// Runs GPU thread-block programs (kernels/bitpack/bitpack_programs.hpp) on the CPU: one host
// thread per GPU thread, real barriers, shared memory refilled with garbage between blocks so
// that a program reading what it never wrote is caught by the result checks. Made for tests
// of small inputs; it is slow (every barrier is a real synchronisation of host threads).
#pragma once

#include <array>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "zs/frame.hpp"

namespace zs::test {

template <unsigned Threads>
class block_emulator {
  static_assert(Threads % 32 == 0 && 512 % Threads == 0, "threads: a multiple of 32 dividing 512");
  static constexpr unsigned warps = Threads / 32;

  struct shared_state {
    std::barrier<> block{Threads};
    std::array<std::barrier<>*, warps> warp{};
    std::array<std::array<std::uint64_t, 32>, warps> lanes{};
    std::array<std::uint64_t, Threads> scan{};
  };

 public:
  // The Block of bitpack_programs.hpp.
  struct block {
    static constexpr unsigned threads = Threads;
    unsigned tid;
    shared_state* state;

    void sync() const { state->block.arrive_and_wait(); }

    std::uint32_t warp_min(std::uint32_t v) const { return reduce(v, [](auto a, auto b) { return a < b ? a : b; }); }
    std::uint32_t warp_max(std::uint32_t v) const { return reduce(v, [](auto a, auto b) { return a > b ? a : b; }); }
    std::uint64_t warp_min(std::uint64_t v) const { return reduce(v, [](auto a, auto b) { return a < b ? a : b; }); }
    std::uint64_t warp_max(std::uint64_t v) const { return reduce(v, [](auto a, auto b) { return a > b ? a : b; }); }

    std::uint32_t exclusive_sum(std::uint32_t v, std::uint32_t& total) const { return prefix(v, total); }
    std::uint64_t exclusive_sum(std::uint64_t v, std::uint64_t& total) const { return prefix(v, total); }

    frame_status load_status(const frame_status* p) const {
      return std::atomic_ref<frame_status>(*const_cast<frame_status*>(p)).load();
    }
    void store_status(frame_status* p, frame_status s) const { std::atomic_ref<frame_status>(*p).store(s); }

   private:
    template <typename T, typename Op>
    T reduce(T v, Op op) const {
      unsigned const w = tid / 32;
      state->lanes[w][tid % 32] = v;
      state->warp[w]->arrive_and_wait();
      T r = static_cast<T>(state->lanes[w][0]);
      for (unsigned l = 1; l < 32; ++l) r = op(r, static_cast<T>(state->lanes[w][l]));
      state->warp[w]->arrive_and_wait();
      return r;
    }
    template <typename T>
    T prefix(T v, T& total) const {
      state->scan[tid] = v;
      sync();
      T before = 0, all = 0;
      for (unsigned t = 0; t < Threads; ++t) {
        if (t < tid) before = static_cast<T>(before + static_cast<T>(state->scan[t]));
        all = static_cast<T>(all + static_cast<T>(state->scan[t]));
      }
      total = all;
      sync();
      return before;
    }
  };

  /// Runs program(block&, block index, shared memory) for blocks 0..blocks-1, in order, each
  /// with `smem_bytes` of 16-byte aligned shared memory.
  template <typename Program>
  static void run(std::uint64_t blocks, std::size_t smem_bytes, Program program) {
    if (blocks == 0) return;
    shared_state state;
    std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
    for (unsigned w = 0; w < warps; ++w) {
      warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
      state.warp[w] = warp_barriers.back().get();
    }
    std::vector<std::array<std::uint64_t, 2>> smem((smem_bytes + 15) / 16);
    auto* base = reinterpret_cast<std::byte*>(smem.data());
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < Threads; ++t) {
      threads.emplace_back([&, t] {
        block blk{t, &state};
        for (std::uint64_t b = 0; b < blocks; ++b) {
          if (t == 0 && !smem.empty()) std::memset(base, 0xA5, smem.size() * 16);
          blk.sync();
          program(blk, b, base);
          blk.sync();
        }
      });
    }
    for (auto& th : threads) th.join();
  }
};

}  // namespace zs::test
