// Carves one caller-provided scratch allocation into typed arrays, CUB style: run once with
// no memory to learn the size, then again with the memory to get the pointers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/overflow.hpp"

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
    // Counts follow the batch's sizes, which come from outside: a wrapped sum would carve
    // arrays that overlap.
    if (mul_overflows(count, sizeof(T)) || add_overflows(count * sizeof(T), alignment - 1) ||
        add_overflows(used_, (count * sizeof(T) + alignment - 1) / alignment * alignment)) {
      ZS_FAIL(error_code::out_of_memory, "scratch for " + std::to_string(count) + " items of " +
                                             std::to_string(sizeof(T)) + " bytes after " + std::to_string(used_) +
                                             " bytes needs more than 2^64 bytes");
    }
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

/// What a batch uploads into its scratch, gathered on the host and sent in as few copies as its
/// kernels allow. Each call on a stream costs the host some microseconds (about 4 for a small
/// copy or a memset on an H200 host, 5 for a kernel launch), and a batch's kernels wait for the
/// host to issue them: fewer calls are a shorter batch. Pieces go at their scratch addresses
/// from `begin` on; one send covers every piece put since the last, and the scratch between
/// them gets whatever the image holds there (zeros, an earlier piece, or an earlier batch's), so
/// the pieces should lie close together, and a kernel must not count on that scratch's contents.
class upload_image {
 public:
  explicit upload_image(void* begin) : begin_(static_cast<std::byte*>(begin)) { image_.swap(kept()); }
  upload_image(upload_image&& other) noexcept
      : begin_(other.begin_), image_(std::move(other.image_)), lo_(other.lo_), hi_(other.hi_) {
    other.lo_ = other.hi_ = 0;
  }
  upload_image(const upload_image&) = delete;
  upload_image& operator=(const upload_image&) = delete;
  upload_image& operator=(upload_image&&) = delete;
  ~upload_image() {
    if (kept().capacity() < image_.capacity()) kept().swap(image_);
  }

  /// `values` go to `device_dst` (inside the scratch, at or after `begin`).
  template <typename T>
  void put(T* device_dst, std::span<const T> values) {
    if (values.empty()) return;
    std::memcpy(room(device_dst, values.size_bytes()), values.data(), values.size_bytes());
  }
  /// `bytes` zero bytes go to `device_dst`.
  void zero(void* device_dst, std::size_t bytes) {
    if (bytes > 0) std::memset(room(device_dst, bytes), 0, bytes);
  }

  /// One copy of everything put since the last send (none when nothing was), ordered on
  /// `stream`. Copies from pageable memory are staged before the call returns, so the image may
  /// change or go right after.
  void send(cudaStream_t stream) {
    if (lo_ < hi_) copy_async(begin_ + lo_, image_.data() + lo_, hi_ - lo_, stream);
    lo_ = hi_ = 0;
  }

 private:
  /// The thread's image memory, kept from one batch to the next (the largest batch's, until the
  /// thread ends): a batch of many frames stages tens of MB, and fresh memory for each (page
  /// faults, zero fill) costs the host more than the copy itself. Bytes between pieces are left
  /// as they are (the scratch there is the kernels' to fill).
  static std::vector<std::byte>& kept() {
    thread_local std::vector<std::byte> memory;
    return memory;
  }

  std::byte* room(void* device_dst, std::size_t bytes) {
    auto* const at = static_cast<std::byte*>(device_dst);
    ZS_EXPECTS(at >= begin_, "an upload inside the image's scratch");
    auto const offset = static_cast<std::size_t>(at - begin_);
    if (image_.size() < offset + bytes) image_.resize(offset + bytes, std::byte{0});
    if (lo_ == hi_) {
      lo_ = offset;
      hi_ = offset + bytes;
    } else {
      lo_ = std::min(lo_, offset);
      hi_ = std::max(hi_, offset + bytes);
    }
    return image_.data() + offset;
  }

  std::byte* begin_;
  std::vector<std::byte> image_;
  std::size_t lo_ = 0, hi_ = 0;  // what the next send copies
};

}  // namespace zs::detail
