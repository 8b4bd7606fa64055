// Runs GPU warp programs (the Warp of kernels/common/warp_tools.hpp) on the CPU: the 32 lanes are
// coroutines (ucontext) on the calling thread, switched at every __syncwarp and shuffle, so a
// lane sees the others' writes exactly where a GPU lane would. Shared memory is refilled with
// garbage between work units so that a program reading what it never wrote is caught by the
// result checks, and lanes that reach different numbers of barriers fail the run. Asynchronous
// copies land only when the lane waits for them, so a program that reads prefetched data too
// early, or refills a buffer still being read, gets wrong results here too.
#pragma once

#include <ucontext.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "zs/frame.hpp"

namespace zs::test {

class warp_emulator {
  static constexpr std::size_t stack_bytes = 256 * 1024;

  struct shared_state {
    ucontext_t scheduler{};
    std::array<ucontext_t, 32> contexts{};
    std::array<std::array<std::uint64_t, 32>, 2> slots{};  // by exchange parity
    std::array<std::uint64_t, 32> barriers{};
    std::array<bool, 32> done{};
    std::function<void(unsigned)> body;
  };

 public:
  // The Warp of warp_tools.hpp.
  struct warp {
    unsigned lane;
    shared_state* state;
    std::uint64_t exchanges = 0;
    // This lane's asynchronous copies: issued but not committed, and committed groups, oldest
    // first (the source is read at issue, the target written when waited for).
    struct pending_copy {
      void* dst;
      unsigned char bytes[16];
      std::size_t size;
    };
    std::vector<pending_copy> open{};
    std::deque<std::vector<pending_copy>> groups{};

    void sync() {
      ++state->barriers[lane];
      swapcontext(&state->contexts[lane], &state->scheduler);
    }

    template <typename T>
    T shfl(T v, unsigned src) { return exchange(v, src % 32); }
    template <typename T>
    T shfl_up(T v, unsigned d) { return exchange(v, lane >= d ? lane - d : lane); }
    template <typename T>
    T shfl_down(T v, unsigned d) { return exchange(v, lane + d < 32 ? lane + d : lane); }
    template <typename T>
    T shfl_xor(T v, unsigned m) { return exchange(v, (lane ^ m) % 32); }

    bool any(bool p) { return reduce(p ? 1U : 0U, [](std::uint32_t a, std::uint32_t b) { return a | b; }) != 0; }
    std::uint32_t ballot(bool p) {
      return reduce(p ? 1U << lane : 0U, [](std::uint32_t a, std::uint32_t b) { return a | b; });
    }
    std::uint32_t reduce_min(std::uint32_t v) {
      return reduce(v, [](std::uint32_t a, std::uint32_t b) { return b < a ? b : a; });
    }
    std::uint32_t reduce_max(std::uint32_t v) {
      return reduce(v, [](std::uint32_t a, std::uint32_t b) { return a < b ? b : a; });
    }
    std::uint32_t reduce_add(std::uint32_t v) {
      return reduce(v, [](std::uint32_t a, std::uint32_t b) { return a + b; });
    }

    // Deferred: a target keeps its old contents until wait_copies lands its group.
    void copy4(std::uint32_t* dst, const std::uint32_t* src) { defer(dst, src, 4); }
    template <typename Chunk>
    void copy16(Chunk* dst, const Chunk* src) {
      static_assert(sizeof(Chunk) == 16);
      // cp.async of 16 bytes faults on addresses off 16 bytes: so does the emulation.
      if ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 != 0) {
        std::fprintf(stderr, "copy16 off a 16-byte boundary\n");
        std::abort();
      }
      defer(dst, src, 16);
    }
    void commit() {
      groups.push_back(std::move(open));
      open.clear();
    }
    // Lands this lane's groups but the latest `pending`, then meets the other lanes.
    void wait_copies(unsigned pending) {
      while (groups.size() > pending) {
        for (auto const& c : groups.front()) std::memcpy(c.dst, c.bytes, c.size);
        groups.pop_front();
      }
      sync();
    }

    frame_status load_status(const frame_status* p) const { return *p; }
    void store_status(frame_status* p, frame_status s) const { *p = s; }
    void add(std::uint64_t* p, std::uint64_t v) const { *p += v; }

   private:
    void defer(void* dst, const void* src, std::size_t size) {
      pending_copy c{dst, {}, size};
      std::memcpy(c.bytes, src, size);
      open.push_back(c);
    }

    // Every lane writes its slot, all meet, every lane folds all 32 with op.
    template <class Op>
    std::uint32_t reduce(std::uint32_t v, Op op) {
      auto& slots = state->slots[exchanges++ % 2];
      slots[lane] = v;
      sync();
      auto r = static_cast<std::uint32_t>(slots[0]);
      for (unsigned l = 1; l < 32; ++l) r = op(r, static_cast<std::uint32_t>(slots[l]));
      return r;
    }

    // Every lane writes its slot, all meet, every lane reads. The next exchange writes the
    // other buffer, so no lane overwrites a slot another has yet to read.
    template <typename T>
    T exchange(T v, unsigned src) {
      static_assert(sizeof(T) <= 8);
      auto& slots = state->slots[exchanges++ % 2];
      slots[lane] = static_cast<std::uint64_t>(v);
      sync();
      return static_cast<T>(slots[src]);
    }
  };

  /// Runs program(warp&, unit, shared memory) for units 0..units-1 in order on one warp, each
  /// with `smem_bytes` of 16-byte aligned shared memory, then finish(warp&).
  template <typename Program, typename Finish>
  static void run(std::uint64_t units, std::size_t smem_bytes, Program program, Finish finish) {
    if (units == 0) return;
    auto state = std::make_unique<shared_state>();
    std::vector<std::array<std::uint64_t, 2>> smem((smem_bytes + 15) / 16);
    auto* base = reinterpret_cast<std::byte*>(smem.data());
    state->body = [&, s = state.get()](unsigned l) {
      warp w{l, s};
      for (std::uint64_t u = 0; u < units; ++u) {
        if (l == 0 && !smem.empty()) std::memset(base, 0xA5, smem.size() * 16);
        w.sync();
        program(w, u, base);
        w.sync();
      }
      finish(w);
    };
    std::vector<std::unique_ptr<char[]>> stacks;
    for (unsigned l = 0; l < 32; ++l) {
      stacks.push_back(std::make_unique<char[]>(stack_bytes));
      ucontext_t& c = state->contexts[l];
      getcontext(&c);
      c.uc_stack.ss_sp = stacks.back().get();
      c.uc_stack.ss_size = stack_bytes;
      c.uc_link = &state->scheduler;
      auto const p = reinterpret_cast<std::uintptr_t>(state.get());
      makecontext(&c, reinterpret_cast<void (*)()>(&lane_entry), 3, static_cast<unsigned>(p >> 32),
                  static_cast<unsigned>(p & 0xffffffffU), l);
    }
    // Rounds: each lane runs to its next barrier (or its end); all must agree.
    for (;;) {
      unsigned finished = 0;
      for (unsigned l = 0; l < 32; ++l) {
        if (!state->done[l]) swapcontext(&state->scheduler, &state->contexts[l]);
        finished += state->done[l] ? 1 : 0;
      }
      for (unsigned l = 1; l < 32; ++l) {
        if (state->barriers[l] != state->barriers[0] || state->done[l] != state->done[0]) {
          throw std::logic_error("warp emulator: lanes diverged at a barrier");
        }
      }
      if (finished == 32) break;
    }
  }

 private:
  static void lane_entry(unsigned hi, unsigned lo, unsigned lane) {
    auto* s = reinterpret_cast<shared_state*>((static_cast<std::uintptr_t>(hi) << 32) | lo);
    s->body(lane);
    s->done[lane] = true;
  }
};

}  // namespace zs::test
