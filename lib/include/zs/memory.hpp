// Owning, move-only memory and stream types. Every GPU operation takes a stream.
//
// device_buffer: device memory from the current device's memory resource (by default its
//   stream-ordered pool, cudaMallocAsync), freed on the stream it was last associated with.
// device_memory_resource: where device_buffer's memory comes from; replaceable per device, so
//   an application's allocator (an RMM resource, an arena with a budget) serves every
//   allocation zshuffle makes.
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

/// Stream-ordered device memory, the interface of RMM's device_memory_resource in small: an
/// adapter of a few lines makes any RMM resource one (docs/ARCHITECTURE.md, "Memory").
class device_memory_resource {
 public:
  virtual ~device_memory_resource() = default;
  /// `bytes` (> 0) of memory of the current device, usable by work on `stream` enqueued after
  /// this call. Throws zs::error with error_code::out_of_memory when there is no room.
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  /// Takes back `p` (from allocate(bytes, ...)) once the work enqueued on `stream` before this
  /// call is done. Must not throw.
  virtual void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept = 0;
};

/// The default resource: the device's stream-ordered pool (cudaMallocAsync / cudaFreeAsync),
/// set to keep freed memory for reuse rather than return it to the driver at each
/// synchronisation. One object serves every device.
device_memory_resource& pool_memory_resource() noexcept;

/// The resource device_buffer allocates from on `device` (the pool unless replaced).
device_memory_resource& device_resource(int device);
/// Replaces the resource of `device` (nullptr: back to the pool) and returns the previous one.
/// Buffers allocated before keep the resource they came from, so a resource must outlive its
/// buffers. Set it before zshuffle work on that device starts, not while it runs.
device_memory_resource* set_device_resource(int device, device_memory_resource* resource);

class device_buffer {
 public:
  device_buffer() = default;
  /// Allocates `bytes` from the current device's resource (device_resource), ordered on
  /// `stream`. Throws zs::error with error_code::out_of_memory when the device has no room.
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
  device_memory_resource* resource_ = nullptr;  // what data_ came from
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
