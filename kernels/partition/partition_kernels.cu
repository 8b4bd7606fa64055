#include <cub/device/device_histogram.cuh>
#include <cub/device/device_memcpy.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <bit>
#include <optional>

#include "common/launch.hpp"
#include "partition/partition_kernels.hpp"
#include "partition/partition_rows.hpp"
#include "zs/error.hpp"

namespace zs::kernels::partition {
namespace {

// One launch of a per-row kernel over `rows` rows (`bytes`: what the launch reads, for the
// choice of its size class), with the geometry of the "partition_rows" spec.
template <class... Params, class... Args>
void launch_rows(void (*kernel)(Params...), std::optional<value_type> type, std::uint64_t rows, std::uint64_t bytes,
                 cudaStream_t stream, Args... args) {
  if (rows == 0) return;
  launch_choice const choice = choose_registered_launch(rows_kernel, type, bytes);
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), choice, rows);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

template <value_type Type>
__global__ void hash_key_kernel(const void* data, const std::int64_t* offsets, const std::uint8_t* null_mask,
                                std::uint64_t count, std::uint32_t seed, bool combine, std::uint32_t* hashes) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) {
    std::uint32_t const h = partition_rows::key_hash_or_null<Type>(data, offsets, null_mask, i, seed);
    hashes[i] = combine ? hash_combine(hashes[i], h) : h;
  }
}

__global__ void modulo_kernel(std::uint32_t* ids, std::uint64_t count, std::uint32_t partitions) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) ids[i] %= partitions;
}

// Null keys go to partition 0.
template <typename T>
__global__ void range_kernel(const T* keys, const std::uint8_t* null_mask, std::uint64_t count, const T* splits,
                             std::uint32_t split_count, std::uint32_t* ids) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) {
    ids[i] = partition_rows::row_is_null(null_mask, i) ? 0 : partition_rows::range_of(keys[i], splits, split_count);
  }
}

__global__ void string_range_kernel(const char* chars, const std::int64_t* offsets, const std::uint8_t* null_mask,
                                    std::uint64_t count, const char* split_chars, const std::int64_t* split_offsets,
                                    std::uint32_t split_count, std::uint32_t* ids) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) {
    ids[i] = partition_rows::row_is_null(null_mask, i)
                 ? 0
                 : partition_rows::string_range_of(partition_rows::string_at(chars, offsets, i), split_chars,
                                                   split_offsets, split_count);
  }
}

__global__ void sequence_kernel(std::uint64_t* rows, std::uint64_t count) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) rows[i] = i;
}

template <typename Word>
__global__ void gather_kernel(const Word* values, const std::uint64_t* rows, std::uint64_t count, Word* out) {
  for (std::uint64_t i = first_item(); i < count; i += item_stride()) out[i] = values[rows[i]];
}

// Lengths of the gathered strings, and a 0 after the last so that the exclusive sum over
// count + 1 entries ends with the total.
__global__ void string_lengths_kernel(const std::int64_t* offsets, const std::uint64_t* rows, std::uint64_t count,
                                      std::int64_t* lengths) {
  for (std::uint64_t i = first_item(); i <= count; i += item_stride()) {
    lengths[i] = i == count ? 0 : offsets[rows[i] + 1] - offsets[rows[i]];
  }
}

// The three sequences of the batched character copy, computed as CUB reads them, so no
// per-string arrays are materialised. Host-callable too (thrust's iterators require it), though
// only the device ever dereferences them.
struct string_source {
  const char* chars;
  const std::int64_t* offsets;
  const std::uint64_t* rows;
  __host__ __device__ const char* operator()(std::uint64_t i) const { return chars + offsets[rows[i]]; }
};
struct string_target {
  char* chars;
  const std::int64_t* offsets;
  __host__ __device__ char* operator()(std::uint64_t i) const { return chars + offsets[i]; }
};
struct string_size {
  const std::int64_t* offsets;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const {
    return static_cast<std::uint64_t>(offsets[i + 1] - offsets[i]);
  }
};

cudaError_t batched_string_copy(void* temp, std::size_t& temp_bytes, const char* chars, const std::int64_t* offsets,
                                const std::uint64_t* rows, std::uint64_t count, const std::int64_t* out_offsets,
                                char* out_chars, cudaStream_t stream) {
  thrust::counting_iterator<std::uint64_t> const index(0);
  return cub::DeviceMemcpy::Batched(temp, temp_bytes,
                                    thrust::make_transform_iterator(index, string_source{chars, offsets, rows}),
                                    thrust::make_transform_iterator(index, string_target{out_chars, out_offsets}),
                                    thrust::make_transform_iterator(index, string_size{out_offsets}),
                                    static_cast<std::int64_t>(count), stream);
}

// The radix sort's key bits: those of the largest id, at least one.
int id_bits(std::uint32_t partitions) { return std::max(1, static_cast<int>(std::bit_width(partitions - 1))); }

using counter = unsigned long long;  // the counter type of CUB's histogram atomics
static_assert(sizeof(counter) == sizeof(std::uint64_t));

}  // namespace

void hash_key_column(const column_view& key, std::uint32_t seed, bool combine, std::uint32_t* hashes,
                     cudaStream_t stream) {
  std::uint64_t const bytes = key.count * (key.type == value_type::string ? 8 : value_width(key.type));
  auto const launch = [&](auto kernel) {
    launch_rows(kernel, key.type, key.count, bytes, stream, key.data, key.offsets, key.null_mask, key.count, seed,
                combine, hashes);
  };
  switch (key.type) {
    case value_type::int8: launch(hash_key_kernel<value_type::int8>); break;
    case value_type::int16: launch(hash_key_kernel<value_type::int16>); break;
    case value_type::uint8:
    case value_type::bool8: launch(hash_key_kernel<value_type::uint8>); break;  // hashed as uint8
    case value_type::uint16: launch(hash_key_kernel<value_type::uint16>); break;
    case value_type::int32: launch(hash_key_kernel<value_type::int32>); break;
    case value_type::uint32: launch(hash_key_kernel<value_type::uint32>); break;
    case value_type::int64: launch(hash_key_kernel<value_type::int64>); break;
    case value_type::uint64: launch(hash_key_kernel<value_type::uint64>); break;
    case value_type::float32: launch(hash_key_kernel<value_type::float32>); break;
    case value_type::float64: launch(hash_key_kernel<value_type::float64>); break;
    case value_type::int128: launch(hash_key_kernel<value_type::int128>); break;
    case value_type::string: launch(hash_key_kernel<value_type::string>); break;
    default: ZS_FAIL(error_code::unsupported, "hash_key_column: not a key type");
  }
}

void hashes_to_partitions(std::uint32_t* ids, std::uint64_t count, std::uint32_t partitions, cudaStream_t stream) {
  launch_rows(modulo_kernel, std::nullopt, count, count * 4, stream, ids, count, partitions);
}

void range_partition_ids(const column_view& key, const column_view& splits, std::uint32_t* ids,
                         cudaStream_t stream) {
  ZS_EXPECTS(splits.type == key.type, "split points of the key's type");
  auto const split_count = static_cast<std::uint32_t>(splits.count);
  std::uint64_t const bytes = key.count * (key.type == value_type::string ? 8 : value_width(key.type));
  auto const fixed = [&]<typename T>(T*) {
    launch_rows(range_kernel<T>, key.type, key.count, bytes, stream, static_cast<const T*>(key.data), key.null_mask,
                key.count, static_cast<const T*>(splits.data), split_count, ids);
  };
  switch (key.type) {
    case value_type::int8: fixed(static_cast<std::int8_t*>(nullptr)); break;
    case value_type::int16: fixed(static_cast<std::int16_t*>(nullptr)); break;
    case value_type::uint8:
    case value_type::bool8: fixed(static_cast<std::uint8_t*>(nullptr)); break;
    case value_type::uint16: fixed(static_cast<std::uint16_t*>(nullptr)); break;
    case value_type::int32: fixed(static_cast<std::int32_t*>(nullptr)); break;
    case value_type::uint32: fixed(static_cast<std::uint32_t*>(nullptr)); break;
    case value_type::int64: fixed(static_cast<std::int64_t*>(nullptr)); break;
    case value_type::uint64: fixed(static_cast<std::uint64_t*>(nullptr)); break;
    case value_type::float32: fixed(static_cast<float*>(nullptr)); break;
    case value_type::float64: fixed(static_cast<double*>(nullptr)); break;
    case value_type::int128: fixed(static_cast<int128_value*>(nullptr)); break;
    case value_type::string:
      launch_rows(string_range_kernel, key.type, key.count, bytes, stream, static_cast<const char*>(key.data),
                  key.offsets, key.null_mask, key.count, static_cast<const char*>(splits.data), splits.offsets,
                  split_count, ids);
      break;
    default: ZS_FAIL(error_code::unsupported, "range_partition_ids: not a key type");
  }
}

void row_sequence(std::uint64_t* rows, std::uint64_t count, cudaStream_t stream) {
  launch_rows(sequence_kernel, std::nullopt, count, count * 8, stream, rows, count);
}

std::size_t sort_rows_temp_bytes(std::uint64_t count, std::uint32_t partitions) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                              static_cast<std::uint32_t*>(nullptr),
                                              static_cast<const std::uint64_t*>(nullptr),
                                              static_cast<std::uint64_t*>(nullptr), count, 0, id_bits(partitions)));
  return bytes;
}

void sort_rows_by_partition(const std::uint32_t* ids_in, std::uint32_t* ids_out, const std::uint64_t* rows_in,
                            std::uint64_t* rows_out, std::uint64_t count, std::uint32_t partitions, void* temp,
                            std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, ids_in, ids_out, rows_in, rows_out, count, 0,
                                              id_bits(partitions), stream));
}

std::size_t partition_offsets_temp_bytes(std::uint64_t count, std::uint32_t partitions) {
  std::size_t histogram = 0, scan = 0;
  ZS_CUDA_TRY(cub::DeviceHistogram::HistogramEven(nullptr, histogram, static_cast<const std::uint32_t*>(nullptr),
                                                  static_cast<counter*>(nullptr), static_cast<int>(partitions) + 1,
                                                  std::uint32_t{0}, partitions, static_cast<std::int64_t>(count)));
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr),
                                            static_cast<std::int64_t>(partitions) + 1));
  return std::max(histogram, scan);
}

void partition_offsets(const std::uint32_t* ids, std::uint64_t count, std::uint32_t partitions,
                       std::uint64_t* counts, std::uint64_t* offsets, void* temp, std::size_t temp_bytes,
                       cudaStream_t stream) {
  // The histogram fills bins 0 .. partitions - 1; the extra last entry stays 0 so that the
  // exclusive sum's last entry is the row count.
  ZS_CUDA_TRY(cudaMemsetAsync(counts, 0, (std::size_t{partitions} + 1) * sizeof(std::uint64_t), stream));
  if (count > 0) {
    ZS_CUDA_TRY(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, ids, reinterpret_cast<counter*>(counts),
                                                    static_cast<int>(partitions) + 1, std::uint32_t{0}, partitions,
                                                    static_cast<std::int64_t>(count), stream));
  }
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, static_cast<const std::uint64_t*>(counts), offsets,
                                            static_cast<std::int64_t>(partitions) + 1, stream));
}

void gather_fixed_width(const void* values, std::size_t width, const std::uint64_t* rows, std::uint64_t count,
                        void* out, cudaStream_t stream) {
  if (width == 1) {
    launch_rows(gather_kernel<std::uint8_t>, std::nullopt, count, count, stream,
                static_cast<const std::uint8_t*>(values), rows, count, static_cast<std::uint8_t*>(out));
  } else if (width == 2) {
    launch_rows(gather_kernel<std::uint16_t>, std::nullopt, count, count * 2, stream,
                static_cast<const std::uint16_t*>(values), rows, count, static_cast<std::uint16_t*>(out));
  } else if (width == 4) {
    launch_rows(gather_kernel<std::uint32_t>, std::nullopt, count, count * 4, stream,
                static_cast<const std::uint32_t*>(values), rows, count, static_cast<std::uint32_t*>(out));
  } else if (width == 8) {
    launch_rows(gather_kernel<std::uint64_t>, std::nullopt, count, count * 8, stream,
                static_cast<const std::uint64_t*>(values), rows, count, static_cast<std::uint64_t*>(out));
  } else if (width == 16) {
    launch_rows(gather_kernel<int128_value>, std::nullopt, count, count * 16, stream,
                static_cast<const int128_value*>(values), rows, count, static_cast<int128_value*>(out));
  } else {
    ZS_FAIL(error_code::internal, "gather_fixed_width: values of " + std::to_string(width) + " bytes");
  }
}

std::size_t gather_string_offsets_temp_bytes(std::uint64_t count) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::int64_t*>(nullptr),
                                            static_cast<std::int64_t>(count) + 1));
  return bytes;
}

void gather_string_offsets(const std::int64_t* offsets, const std::uint64_t* rows, std::uint64_t count,
                           std::int64_t* out_offsets, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) {
    ZS_CUDA_TRY(cudaMemsetAsync(out_offsets, 0, sizeof(std::int64_t), stream));
    return;
  }
  launch_rows(string_lengths_kernel, value_type::string, count + 1, count * 8, stream, offsets, rows, count,
              out_offsets);
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, out_offsets, static_cast<std::int64_t>(count) + 1,
                                            stream));
}

std::size_t gather_string_chars_temp_bytes(std::uint64_t count) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(batched_string_copy(nullptr, bytes, nullptr, nullptr, nullptr, count, nullptr, nullptr, nullptr));
  return bytes;
}

void gather_string_chars(const char* chars, const std::int64_t* offsets, const std::uint64_t* rows,
                         std::uint64_t count, const std::int64_t* out_offsets, char* out_chars, void* temp,
                         std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) return;
  ZS_CUDA_TRY(batched_string_copy(temp, temp_bytes, chars, offsets, rows, count, out_offsets, out_chars, stream));
}

}  // namespace zs::kernels::partition
