// Bytes that end right before a page no one may touch: a decoder that reads past them faults at
// once, with or without a sanitizer, instead of reading whatever lies beyond.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <stdexcept>

namespace zs::test {

class guarded_bytes {
 public:
  /// `size` writable bytes, the last of them just before the guard page. A size that is a
  /// multiple of 16 starts on a frame_alignment boundary.
  explicit guarded_bytes(std::size_t size) : size_(size) {
    std::size_t const page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t const pages = (size + page - 1) / page;
    mapped_bytes_ = (pages + 1) * page;
    void* p = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    mapped_ = static_cast<std::byte*>(p);
    if (::mprotect(mapped_ + pages * page, page, PROT_NONE) != 0) {
      ::munmap(mapped_, mapped_bytes_);
      throw std::runtime_error("mprotect failed");
    }
    data_ = mapped_ + pages * page - size;
  }
  ~guarded_bytes() { ::munmap(mapped_, mapped_bytes_); }
  guarded_bytes(const guarded_bytes&) = delete;
  guarded_bytes& operator=(const guarded_bytes&) = delete;

  std::byte* data() noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::byte* mapped_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace zs::test
