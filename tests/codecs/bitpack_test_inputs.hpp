// Adversarial integer inputs for the bitpack codec's tests, CPU and GPU alike: lengths around
// the block (128), segment (512) and miniblock (32) sizes, and values at the edges of each type.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace zs::test {

template <typename T>
std::vector<std::vector<T>> adversarial_inputs() {
  using L = std::numeric_limits<T>;
  using U = std::make_unsigned_t<T>;
  std::mt19937_64 rng(12345);
  std::vector<std::vector<T>> inputs;
  inputs.push_back({});
  inputs.push_back({T{42}});
  inputs.push_back({L::min()});
  inputs.push_back({L::max()});
  for (std::size_t n : {2, 31, 32, 33, 127, 128, 129, 511, 512, 513, 1000, 4097}) {
    inputs.push_back(std::vector<T>(n, T{7}));
    std::vector<T> sorted(n), reverse(n), extremes(n), random(n), runs(n), small(n), offsets32(n);
    for (std::size_t i = 0; i < n; ++i) {
      sorted[i] = static_cast<T>(L::min() + static_cast<T>(i * 3));
      reverse[i] = static_cast<T>(L::max() - static_cast<T>(i * 5));
      extremes[i] = i % 2 == 0 ? L::min() : L::max();  // offsets of exactly the type's width
      random[i] = static_cast<T>(rng());
      runs[i] = static_cast<T>((i / 97) % 5 == 0 ? L::max() : static_cast<T>(i / 97));
      small[i] = static_cast<T>(rng() % 1000);
      // Offsets of exactly 32 bits from the minimum, whatever the type's width.
      // (Narrow types: offsets of their full width.)
      offsets32[i] = static_cast<T>(static_cast<U>(L::min()) + (i % 3 == 1 ? static_cast<U>(0xffffffffU) : U{0}));
    }
    for (auto* x : {&sorted, &reverse, &extremes, &random, &runs, &small, &offsets32}) inputs.push_back(*x);
  }
  // The minimum everywhere but two values: the maximum and one below it.
  std::vector<T> full(300, L::min());
  full[17] = L::max();
  full[200] = static_cast<T>(L::max() - 1);
  inputs.push_back(full);
  // Values that wrap around the type's range (max, min, min + 1, ...): every step is +1
  // modulo 2^w, the one over the wrap included.
  std::vector<T> wrap(700);
  for (std::size_t i = 0; i < wrap.size(); ++i) wrap[i] = static_cast<T>(static_cast<U>(L::max()) + static_cast<U>(i));
  inputs.push_back(wrap);
  // Barely compressible (about 1.15x, as for): w - 5 random bits over a base that steps every
  // 128 values. A decode tile of four such segments outruns the decoder's tile region
  // (whole_tile_words), so the decoder takes it in parts.
  constexpr unsigned w = 8 * sizeof(T);
  std::vector<T> dense(2600);
  for (std::size_t i = 0; i < dense.size(); ++i) {
    dense[i] = static_cast<T>((static_cast<U>((i / 128) % 4) << (w - 4)) | (static_cast<U>(rng()) >> 5));
  }
  inputs.push_back(dense);
  return inputs;
}

}  // namespace zs::test
