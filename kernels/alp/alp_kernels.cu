#include <cub/device/device_scan.cuh>

#include <new>

#include "alp/alp_format.hpp"
#include "alp/alp_kernels.hpp"
#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "zs/error.hpp"

namespace zs::kernels::alp {
namespace {

namespace fmt = ::zs::alp;

std::size_t align256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t scan_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(items)));
  return bytes;
}

// Scratch: vector sizes (num_vectors + 1, the last 0), their exclusive scan, the scan's temp.
struct encode_scratch {
  std::uint64_t* sizes;
  std::uint64_t* starts;
  void* scan_temp;
  std::size_t scan_bytes;
};
encode_scratch carve(void* temp, std::uint64_t num_vectors) {
  auto* base = static_cast<std::byte*>(temp);
  std::size_t const list = align256((num_vectors + 1) * sizeof(std::uint64_t));
  return {reinterpret_cast<std::uint64_t*>(base), reinterpret_cast<std::uint64_t*>(base + list), base + 2 * list,
          scan_temp_bytes(num_vectors + 1)};
}

template <typename Float>
__device__ void size_vector(const encode_source& s, std::uint64_t v, std::uint64_t* size) {
  fmt::column_params p;
  fmt::load_params<Float>(s.params, p);
  fmt::vector_scratch scratch;
  std::uint32_t const count = fmt::values_in_vector(s.count, v);
  std::uint64_t bytes = 0;
  fmt::choose_vector(static_cast<const Float*>(s.values) + v * fmt::vector_values, count, p, scratch, bytes);
  *size = bytes;
}

template <typename Float>
__device__ void write_vector(const encode_source& s, std::uint64_t v, std::byte* body, std::uint64_t start) {
  fmt::column_params p;
  fmt::load_params<Float>(s.params, p);
  fmt::vector_scratch scratch;
  std::uint32_t const count = fmt::values_in_vector(s.count, v);
  const Float* first = static_cast<const Float*>(s.values) + v * fmt::vector_values;
  std::uint64_t bytes = 0;
  fmt::vector_fields const fields = fmt::choose_vector(first, count, p, scratch, bytes);
  std::uint64_t const vectors = fmt::vector_count(s.count);
  std::uint64_t const end = start + fmt::write_vector(first, count, fields, scratch.is_fill, body + 8 * vectors + start);
  detail::store_le(body + 8 * v, end, 8);
}

__device__ std::byte* body_of(std::byte* frame) { return frame + frame_header_bytes + params_section_bytes(fmt::params_bytes); }

__global__ void size_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                            std::uint64_t* sizes) {
  for (std::uint64_t g = first_item(); g < num_vectors; g += item_stride()) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    if (s.type == value_type::float64) {
      size_vector<double>(s, v, sizes + g);
    } else {
      size_vector<float>(s, v, sizes + g);
    }
  }
}

__global__ void write_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                             const std::uint64_t* starts) {
  for (std::uint64_t g = first_item(); g < num_vectors; g += item_stride()) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    std::byte* body = body_of(batch.frames + batch.frame_offsets[f]);
    std::uint64_t const start = starts[g] - starts[vector_begin[f]];
    if (s.type == value_type::float64) {
      write_vector<double>(s, v, body, start);
    } else {
      write_vector<float>(s, v, body, start);
    }
  }
}

__global__ void finish_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, const std::uint64_t* starts) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::uint64_t const vectors = vector_begin[f + 1] - vector_begin[f];
    std::uint64_t const data = starts[vector_begin[f + 1]] - starts[vector_begin[f]];
    frame[6] = static_cast<std::byte>(codec_id::alp);
    detail::store_le(frame + 24, 8 * vectors + data, 8);
    fmt::store_codec_params(frame);
  }
}

template <typename Float>
__device__ bool check_frame(const std::byte* frame, const decode_target& t) {
  frame_header const h = load_header(frame);
  if (!fmt::check_codec_params(h.params.data())) return false;
  const std::byte* payload = frame + frame_header_bytes;
  fmt::column_params p;
  if (!fmt::load_params<Float>(payload + params_prefix_bytes, p)) return false;
  std::uint64_t const section = params_section_bytes(fmt::params_bytes);
  return fmt::check_ends(payload + section, h.payload_bytes - section, t.count);
}

__global__ void check_kernel(device_decode_batch batch) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    if (batch.status[f] != frame_status::ok) continue;
    const std::byte* frame = batch.frames + batch.frame_offsets[f];
    decode_target const& t = batch.targets[f];
    bool ok = false;
    if (t.type == value_type::float64) {
      ok = check_frame<double>(frame, t);
    } else if (t.type == value_type::float32) {
      ok = check_frame<float>(frame, t);
    }
    if (!ok) batch.status[f] = t.type == value_type::float64 || t.type == value_type::float32
                                   ? frame_status::corrupt_payload
                                   : frame_status::unsupported_type;
  }
}

// A warp decodes a vector: every lane checks it (the same reads, the same answer, so the warp
// stays converged), then the two decode phases are split over the lanes, cell i by lane i mod
// 32, so a warp's stores of a row of cells are one coalesced line.
template <typename Float>
__device__ bool decode_vector(const std::byte* frame, const decode_target& t, std::uint64_t v, unsigned lane) {
  const std::byte* payload = frame + frame_header_bytes;
  fmt::column_params p;
  fmt::load_params<Float>(payload + params_prefix_bytes, p);
  const std::byte* body = payload + params_section_bytes(fmt::params_bytes);
  std::uint64_t const start = fmt::vector_start(body, v);
  const std::byte* vector = body + 8 * fmt::vector_count(t.count) + start;
  std::uint32_t const count = fmt::values_in_vector(t.count, v);
  fmt::vector_fields fields;
  if (!fmt::check_vector<Float>(vector, fmt::vector_end(body, v) - start, count, p, fields)) return false;
  Float* out = static_cast<Float*>(t.values) + v * fmt::vector_values;
  fmt::decode_cells<Float>(vector, count, p, fields, out, lane, 32);
  __syncwarp();
  fmt::patch_cells<Float>(vector, count, fields, out, lane, 32);
  __syncwarp();
  return true;
}

__global__ void decode_kernel(device_decode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors) {
  unsigned const lane = threadIdx.x % 32;
  std::uint64_t const first_warp = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / 32;
  std::uint64_t const warps = std::uint64_t{gridDim.x} * blockDim.x / 32;
  for (std::uint64_t g = first_warp; g < num_vectors; g += warps) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    // One read of the status for the warp: another warp may mark the frame corrupt meanwhile,
    // and the lanes must agree on whether to decode.
    int const ok = __shfl_sync(0xffffffffU, lane == 0 && batch.status[f] == frame_status::ok ? 1 : 0, 0);
    if (ok == 0) continue;
    decode_target const& t = batch.targets[f];
    const std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::uint64_t const v = g - vector_begin[f];
    bool const decoded = t.type == value_type::float64 ? decode_vector<double>(frame, t, v, lane)
                                                       : decode_vector<float>(frame, t, v, lane);
    // Every failing vector writes the same status; the race between warps is benign.
    if (!decoded && lane == 0) batch.status[f] = frame_status::corrupt_payload;
  }
}

// A block prepares a column: thread 0 reads the sample, the block counts each sampled value's
// occurrences and costs every (stretch, exponent/factor) pair, thread 0 chooses from them in
// the CPU's order, so the bytes are the CPU's.
template <typename Float>
__device__ void prepare_column(const encode_source* pieces, std::uint64_t n, std::byte* out) {
  // Raw shared memory, constructed by thread 0: __shared__ variables take no initializers.
  __shared__ alignas(16) unsigned char sample_bytes[sizeof(fmt::column_sample<Float>)];
  __shared__ alignas(16) unsigned char params_bytes[sizeof(fmt::column_params)];
  __shared__ std::uint32_t counts[fmt::sample_values];
  __shared__ std::uint64_t costs[fmt::sample_vectors * fmt::combinations<Float>()];
  auto& s = *reinterpret_cast<fmt::column_sample<Float>*>(sample_bytes);
  auto& p = *reinterpret_cast<fmt::column_params*>(params_bytes);
  if (threadIdx.x == 0) {
    new (sample_bytes) fmt::column_sample<Float>();
    new (params_bytes) fmt::column_params();
    fmt::take_sample(pieces, n, s);
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < s.n; i += blockDim.x) counts[i] = fmt::occurrences(s, i);
  __syncthreads();
  if (threadIdx.x == 0) fmt::choose_fill(s, counts, p);
  __syncthreads();
  std::uint32_t const pairs = s.stretches * static_cast<std::uint32_t>(fmt::combinations<Float>());
  for (std::uint32_t k = threadIdx.x; k < pairs; k += blockDim.x) {
    costs[k] = fmt::stretch_cost(s, k / fmt::combinations<Float>(), static_cast<int>(k % fmt::combinations<Float>()));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    fmt::choose_candidates(s, costs, p);
    fmt::store_params<Float>(p, out);
  }
  __syncthreads();
}

__global__ void prepare_kernel(const encode_source* pieces, const std::uint64_t* piece_begin, std::size_t num_columns,
                               std::byte* params, const std::uint64_t* params_offsets) {
  for (std::uint64_t c = blockIdx.x; c < num_columns; c += gridDim.x) {
    std::uint64_t const first = piece_begin[c];
    std::uint64_t const n = piece_begin[c + 1] - first;
    if (n == 0) continue;
    std::byte* out = params + params_offsets[c];
    if (pieces[first].type == value_type::float64) {
      prepare_column<double>(pieces + first, n, out);
    } else {
      prepare_column<float>(pieces + first, n, out);
    }
  }
}

// A launch of a warp kernel: a warp per unit, whole warps per block.
template <class Kernel, class... Args>
void launch_warps(Kernel kernel, const launch_choice& choice, std::uint64_t units, cudaStream_t stream, Args... args) {
  if (units == 0) return;
  unsigned const threads = choice.params.threads;
  ZS_EXPECTS(threads % 32 == 0 && threads > 0, "warp kernels take whole warps");
  std::uint64_t const per_block = threads / 32;
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, (units + per_block - 1) / per_block);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

template <class Kernel, class... Args>
void launch_items(Kernel kernel, const launch_choice& choice, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), choice, items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

}  // namespace

std::size_t encode_temp_bytes(std::uint64_t num_vectors) {
  std::size_t const list = align256((num_vectors + 1) * sizeof(std::uint64_t));
  return 2 * list + scan_temp_bytes(num_vectors + 1);
}

void encode(const device_encode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  expect_launch_of("alp_encode", choice);
  ZS_EXPECTS(temp_bytes >= encode_temp_bytes(num_vectors), "scratch of encode_temp_bytes for the alp encoder");
  encode_scratch const s = carve(temp, num_vectors);
  // The last size stays 0, so the scan's last entry is the batch's total.
  ZS_CUDA_TRY(cudaMemsetAsync(s.sizes + num_vectors, 0, sizeof(std::uint64_t), stream));
  launch_items(size_kernel, choice, num_vectors, stream, batch, vector_begin, num_vectors, s.sizes);
  std::size_t scan_bytes = s.scan_bytes;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(s.scan_temp, scan_bytes, s.sizes, s.starts,
                                            static_cast<std::int64_t>(num_vectors + 1), stream));
  launch_items(write_kernel, choice, num_vectors, stream, batch, vector_begin, num_vectors,
               static_cast<const std::uint64_t*>(s.starts));
  launch_items(finish_kernel, frame_ops_choice(), batch.num_frames, stream, batch, vector_begin,
               static_cast<const std::uint64_t*>(s.starts));
}

void decode(const device_decode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, cudaStream_t stream) {
  expect_launch_of("alp_decode", choice);
  launch_items(check_kernel, frame_ops_choice(), batch.num_frames, stream, batch);
  launch_warps(decode_kernel, choice, num_vectors, stream, batch, vector_begin, num_vectors);
}

void prepare(const encode_source* pieces, const std::uint64_t* piece_begin, std::size_t num_columns,
             std::byte* params, const std::uint64_t* params_offsets, cudaStream_t stream) {
  // A block per column (frame_ops' block size), its threads over the sample's values and costs.
  if (num_columns == 0) return;
  launch_record const r = plan_launch(reinterpret_cast<const void*>(prepare_kernel), frame_ops_choice(), num_columns);
  observed_launch(r, stream, [&] {
    prepare_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(pieces, piece_begin, num_columns, params,
                                                                       params_offsets);
  });
}

}  // namespace zs::kernels::alp
