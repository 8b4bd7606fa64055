// Device steps of the Arrow import (lib/src/arrow.cpp): string offsets of an imported slice,
// turned into the offsets of an owning zs::column (int64, starting at 0).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zs::kernels::arrow {

/// out[i] = in[i] - base for i < count, on `stream` (device memory; no synchronisation):
/// utf8's int32 offsets widened to int64, rebased so that the slice's first offset becomes 0.
void rebase_offsets(const std::int32_t* in, std::int64_t base, std::uint64_t count, std::int64_t* out,
                    cudaStream_t stream);
/// The same for large_utf8's int64 offsets.
void rebase_offsets(const std::int64_t* in, std::int64_t base, std::uint64_t count, std::int64_t* out,
                    cudaStream_t stream);

}  // namespace zs::kernels::arrow
