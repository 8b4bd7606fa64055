// Carves one caller-provided scratch allocation into typed arrays, CUB style: run once with
// no memory to learn the size, then again with the memory to get the pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "zs/error.hpp"

namespace zs::detail {

class temp_layout {
 public:
  static constexpr std::size_t alignment = 256;

  temp_layout() = default;  // sizing only
  temp_layout(void* base, std::size_t capacity) : base_(static_cast<std::byte*>(base)), capacity_(capacity) {}

  /// Room for `count` values of T; nullptr while sizing.
  template <typename T>
  T* take(std::size_t count) {
    std::size_t const offset = used_;
    used_ += (count * sizeof(T) + alignment - 1) / alignment * alignment;
    if (base_ == nullptr) return nullptr;
    if (used_ > capacity_) {
      ZS_FAIL(error_code::invalid_argument,
              "temp storage of " + std::to_string(capacity_) + " bytes is too small; " +
                  std::to_string(used_) + " needed so far (ask *_temp_bytes)");
    }
    return reinterpret_cast<T*>(base_ + offset);
  }

  std::size_t bytes() const noexcept { return used_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

}  // namespace zs::detail
