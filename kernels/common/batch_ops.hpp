// Small batched device operations the shuffle layers need. Launchers take device arrays and a
// stream; nothing here synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace zs::kernels {

/// Device scratch that copy_buffers needs for `count` buffers.
std::size_t copy_buffers_temp_bytes(std::size_t count);

/// Copies `count` buffers at once: sizes[i] bytes from src[i] to dst[i] (arrays in device
/// memory; CUB's batched memcpy). Zero-sized entries are allowed.
void copy_buffers(const void* const* src, void* const* dst, const std::uint64_t* sizes, std::size_t count,
                  void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// out[i] = values[index[i]] for i < count (device arrays).
void gather_i64(const std::int64_t* values, const std::uint64_t* index, std::int64_t* out, std::size_t count,
                cudaStream_t stream);

/// to[i] = from[i] for i < count, by a kernel's stores: for `to` in pinned host memory (which
/// kernels address directly), where a cudaMemcpyAsync of a few words would queue in the copy
/// engine behind a large copy of another stream.
void store_words(const std::uint64_t* from, std::uint64_t* to, std::size_t count, cudaStream_t stream);

}  // namespace zs::kernels
