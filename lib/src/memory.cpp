#include "zs/memory.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "zs/error.hpp"
#include "zs/overflow.hpp"

namespace zs {

// --- cuda_stream ---

cuda_stream::cuda_stream() { ZS_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

cuda_stream::cuda_stream(int priority) {
  ZS_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
}

cuda_stream cuda_stream::high_priority() {
  int least = 0, greatest = 0;
  ZS_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return cuda_stream(greatest);
}

cuda_stream::~cuda_stream() {
  if (stream_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaStreamDestroy(stream_));
}

cuda_stream::cuda_stream(cuda_stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

cuda_stream& cuda_stream::operator=(cuda_stream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaStreamDestroy(stream_));
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void cuda_stream::synchronize() const { ZS_CUDA_TRY(cudaStreamSynchronize(stream_)); }

// --- cuda_event ---

cuda_event::cuda_event() { ZS_CUDA_TRY(cudaEventCreate(&event_)); }

cuda_event::~cuda_event() {
  if (event_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(event_));
}

cuda_event::cuda_event(cuda_event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

cuda_event& cuda_event::operator=(cuda_event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(event_));
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void cuda_event::record(cudaStream_t stream) { ZS_CUDA_TRY(cudaEventRecord(event_, stream)); }

void cuda_event::synchronize() const { ZS_CUDA_TRY(cudaEventSynchronize(event_)); }

float cuda_event::elapsed_ms_since(const cuda_event& start) const {
  float ms = 0;
  ZS_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

// --- device memory resources ---

namespace {

constexpr int max_devices = 64;

// Keep freed memory in the device's pool instead of returning it to the driver at every
// synchronisation: shuffles allocate and free the same sizes round after round.
void keep_pool_memory(int device) {
  static std::once_flag flags[max_devices];
  if (device < 0 || device >= max_devices) return;
  std::call_once(flags[device], [device] {
    cudaMemPool_t pool = nullptr;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) return;
    std::uint64_t threshold = UINT64_MAX;
    ZS_CUDA_TRY_NOTHROW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  });
}

class pool_resource final : public device_memory_resource {
 public:
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    int device = 0;
    ZS_CUDA_TRY(cudaGetDevice(&device));
    keep_pool_memory(device);
    void* p = nullptr;
    cudaError_t const status = cudaMallocAsync(&p, bytes, stream);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      if (status == cudaErrorMemoryAllocation) {
        ZS_FAIL(error_code::out_of_memory, "device allocation of " + std::to_string(bytes) + " bytes failed");
      }
      ZS_CUDA_TRY(status);
    }
    return p;
  }
  void deallocate(void* p, std::size_t, cudaStream_t stream) noexcept override {
    ZS_CUDA_TRY_NOTHROW(cudaFreeAsync(p, stream));
  }
};

std::atomic<device_memory_resource*>& resource_slot(int device) {
  static std::atomic<device_memory_resource*> slots[max_devices] = {};
  if (device < 0 || device >= max_devices) {
    ZS_FAIL(error_code::invalid_argument, "device " + std::to_string(device) + " is not a device ordinal below " +
                                              std::to_string(max_devices));
  }
  return slots[device];
}

}  // namespace

device_memory_resource& pool_memory_resource() noexcept {
  static pool_resource pool;
  return pool;
}

device_memory_resource& device_resource(int device) {
  device_memory_resource* r = resource_slot(device).load(std::memory_order_acquire);
  return r != nullptr ? *r : pool_memory_resource();
}

device_memory_resource* set_device_resource(int device, device_memory_resource* resource) {
  device_memory_resource* previous = resource_slot(device).exchange(resource, std::memory_order_acq_rel);
  return previous != nullptr ? previous : &pool_memory_resource();
}

// --- device_buffer ---

device_buffer::device_buffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
  if (bytes == 0) return;
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  device_memory_resource& resource = device_resource(device);
  data_ = resource.allocate(bytes, stream);
  size_ = bytes;
  resource_ = &resource;
}

device_buffer::~device_buffer() { release(); }

device_buffer::device_buffer(device_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      stream_(other.stream_),
      resource_(std::exchange(other.resource_, nullptr)) {}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    stream_ = other.stream_;
    resource_ = std::exchange(other.resource_, nullptr);
  }
  return *this;
}

void device_buffer::release() noexcept {
  if (data_ != nullptr) resource_->deallocate(data_, size_, stream_);
  data_ = nullptr;
  size_ = 0;
  resource_ = nullptr;
}

// --- pinned_buffer ---

pinned_buffer::pinned_buffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  cudaError_t const status = cudaMallocHost(&data_, bytes);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    data_ = nullptr;
    size_ = 0;
    if (status == cudaErrorMemoryAllocation) {
      ZS_FAIL(error_code::out_of_memory,
              "pinned host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    ZS_CUDA_TRY(status);
  }
}

pinned_buffer::~pinned_buffer() { release(); }

pinned_buffer::pinned_buffer(pinned_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

pinned_buffer& pinned_buffer::operator=(pinned_buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void pinned_buffer::release() noexcept {
  if (data_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaFreeHost(data_));
  data_ = nullptr;
  size_ = 0;
}

// --- host_buffer ---

void host_buffer::aligned_free::operator()(void* p) const noexcept { std::free(p); }

host_buffer::host_buffer(std::size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  // aligned_alloc takes a multiple of the alignment; rounding up a size within 63 bytes of
  // 2^64 would wrap to a small one that "succeeds".
  void* p = add_overflows(bytes, 63) ? nullptr : std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) {
    size_ = 0;
    ZS_FAIL(error_code::out_of_memory, "host allocation of " + std::to_string(bytes) + " bytes failed");
  }
  data_.reset(p);
}

// --- helpers ---

void copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  ZS_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

bool cuda_device_available() noexcept {
  int count = 0;
  bool const ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}

}  // namespace zs
