// Owning, move-only memory and stream types. Every GPU operation takes a stream.
//
// device_buffer: device memory from the current device's stream-ordered pool
//   (cudaMallocAsync), freed on the stream it was last associated with.
// pinned_buffer: page-locked host memory (cudaMallocHost), for fast and asynchronous copies.
// host_buffer:   ordinary host memory, for the CPU reference path.
// cuda_stream:   a non-blocking CUDA stream.
// cuda_event:    a CUDA event, for timing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace zs {

class cuda_stream {
 public:
  /// Creates a non-blocking stream on the current device.
  cuda_stream();
  /// The same, at the highest priority the device offers: the block scheduler starts its
  /// kernels' blocks before those of other streams' kernels (a transfer kernel is not held back
  /// behind copies that fill the GPU).
  static cuda_stream high_priority();
  ~cuda_stream();
  cuda_stream(cuda_stream&& other) noexcept;
  cuda_stream& operator=(cuda_stream&& other) noexcept;
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }
  void synchronize() const;

 private:
  explicit cuda_stream(int priority);
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event for timing stream work (created with timing enabled).
class cuda_event {
 public:
  cuda_event();
  ~cuda_event();
  cuda_event(cuda_event&& other) noexcept;
  cuda_event& operator=(cuda_event&& other) noexcept;
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream);
  void synchronize() const;
  /// Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const cuda_event& start) const;

 private:
  cudaEvent_t event_ = nullptr;
};

class device_buffer {
 public:
  device_buffer() = default;
  /// Allocates `bytes` from the current device's pool, ordered on `stream`. Throws zs::error
  /// with error_code::out_of_memory when the device has no room.
  device_buffer(std::size_t bytes, cudaStream_t stream);
  ~device_buffer();
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  void* data() noexcept { return data_; }
  const void* data() const noexcept { return data_; }
  template <typename T> T* as() noexcept { return static_cast<T*>(data_); }
  template <typename T> const T* as() const noexcept { return static_cast<const T*>(data_); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  cudaStream_t stream() const noexcept { return stream_; }
  /// The stream the memory is freed on; the caller orders it after all work that uses it.
  void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t bytes);
  ~pinned_buffer();
  pinned_buffer(pinned_buffer&& other) noexcept;
  pinned_buffer& operator=(pinned_buffer&& other) noexcept;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  void* data() noexcept { return data_; }
  const void* data() const noexcept { return data_; }
  template <typename T> T* as() noexcept { return static_cast<T*>(data_); }
  template <typename T> const T* as() const noexcept { return static_cast<const T*>(data_); }
  std::size_t size() const noexcept { return size_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

class host_buffer {
 public:
  host_buffer() = default;
  /// Allocates `bytes` of 64-byte aligned host memory (not zeroed).
  explicit host_buffer(std::size_t bytes);
  host_buffer(host_buffer&&) noexcept = default;
  host_buffer& operator=(host_buffer&&) noexcept = default;
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  void* data() noexcept { return data_.get(); }
  const void* data() const noexcept { return data_.get(); }
  template <typename T> T* as() noexcept { return static_cast<T*>(data()); }
  template <typename T> const T* as() const noexcept { return static_cast<const T*>(data()); }
  std::size_t size() const noexcept { return size_; }

 private:
  struct aligned_free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, aligned_free> data_;
  std::size_t size_ = 0;
};

/// Stream-ordered copy of `bytes` bytes between any two of host, pinned and device memory.
void copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

/// Whether this process sees at least one usable CUDA device (no exception when it does not).
bool cuda_device_available() noexcept;

}  // namespace zs
