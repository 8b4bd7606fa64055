#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <new>

#include "alp/alp_format.hpp"
#include "alp/alp_kernels.hpp"
#include "alp/alp_warp.hpp"
#include "common/cuda_warp.cuh"
#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "zs/error.hpp"

namespace zs::kernels::alp {
namespace {

using warp::cuda_warp;

std::size_t align256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t scan_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(items)));
  return bytes;
}

// A vector whose ALP_RD options may undercut its ALP choice (rd_may_undercut), as the ALP
// size pass leaves it for the ALP_RD pass: sizes in 32 bits (a vector takes under 9 KiB).
struct rd_task {
  std::uint64_t vector;  // in the batch
  std::uint32_t before_rd;
  std::uint32_t alp_less_fill;  // ~0: no fill cells
  std::uint32_t fills;
};

std::size_t select_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const rd_task*>(nullptr),
                                         static_cast<const std::uint8_t*>(nullptr), static_cast<rd_task*>(nullptr),
                                         static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(items)));
  return bytes;
}

// Scratch: vector sizes (num_vectors + 1, the last 0), their exclusive scan, each vector's
// chosen fields (the size passes' choice, so the write pass does not search again), the ALP
// pass's ALP_RD tasks and flags, the flagged tasks and their count, and the temp of the scan
// and of the selection (one after the other on the stream: one area).
struct encode_scratch {
  std::uint64_t* sizes;
  std::uint64_t* starts;
  fmt::vector_fields* choices;
  rd_task* tasks;
  std::uint8_t* rd_flags;
  rd_task* rd_tasks;
  std::uint64_t* rd_count;
  void* cub_temp;
  std::size_t scan_bytes;
  std::size_t select_bytes;
};
std::size_t list_bytes(std::uint64_t num_vectors) { return align256((num_vectors + 1) * sizeof(std::uint64_t)); }
std::size_t choice_bytes(std::uint64_t num_vectors) { return align256(num_vectors * sizeof(fmt::vector_fields)); }
std::size_t task_bytes(std::uint64_t num_vectors) { return align256(num_vectors * sizeof(rd_task)); }
std::size_t flag_bytes(std::uint64_t num_vectors) { return align256(num_vectors); }
std::size_t cub_temp_bytes(std::uint64_t num_vectors) {
  return std::max(scan_temp_bytes(num_vectors + 1), select_temp_bytes(num_vectors));
}
encode_scratch carve(void* temp, std::uint64_t num_vectors) {
  auto* at = static_cast<std::byte*>(temp);
  auto take = [&](std::size_t bytes) {
    std::byte* const here = at;
    at += bytes;
    return here;
  };
  encode_scratch s{};
  s.sizes = reinterpret_cast<std::uint64_t*>(take(list_bytes(num_vectors)));
  s.starts = reinterpret_cast<std::uint64_t*>(take(list_bytes(num_vectors)));
  s.choices = reinterpret_cast<fmt::vector_fields*>(take(choice_bytes(num_vectors)));
  s.tasks = reinterpret_cast<rd_task*>(take(task_bytes(num_vectors)));
  s.rd_tasks = reinterpret_cast<rd_task*>(take(task_bytes(num_vectors)));
  s.rd_flags = reinterpret_cast<std::uint8_t*>(take(flag_bytes(num_vectors)));
  s.rd_count = reinterpret_cast<std::uint64_t*>(take(align256(sizeof(std::uint64_t))));
  s.cub_temp = take(cub_temp_bytes(num_vectors));
  s.scan_bytes = scan_temp_bytes(num_vectors + 1);
  s.select_bytes = select_temp_bytes(num_vectors);
  return s;
}
std::size_t carved_bytes(std::uint64_t num_vectors) {
  return 2 * list_bytes(num_vectors) + choice_bytes(num_vectors) + 2 * task_bytes(num_vectors) +
         flag_bytes(num_vectors) + align256(sizeof(std::uint64_t)) + cub_temp_bytes(num_vectors);
}

// The kernels: a warp per vector over a grid-stride loop of the batch's vectors (alp_warp.hpp
// gives what the warp does with one).
//
// The encoder's passes are bound by latency (shuffles, reductions, dependent arithmetic per
// cell), so they need warps in flight. The choice is two passes: the ALP pass costs every
// vector's ALP options in few registers (its launch bound: 3 blocks of the largest launch,
// 256 threads, per SM, 24 warps, at most 80 registers a thread: at 64 it spilled three
// times as much), and flags the vectors where ALP_RD may undercut them; the
// ALP_RD pass (a warp sort of 1024 keys a vector, 32 keys a lane) runs over the flagged ones
// only, at most 128 registers a thread (two blocks per SM: 16 warps), where it took about 200
// (9 warps). Launches of more threads than the bound fail, so launch_warps refuses them.
constexpr unsigned max_vector_threads = 256;
constexpr unsigned min_encode_blocks = 2;
constexpr unsigned min_alp_size_blocks = 3;
// The decoder's stage (decode_stage_bytes_per_warp) allows 24 warps an SM: 3 blocks of 256
// threads, at most 80 registers a thread (unbounded it took 160, and half the warps).
constexpr unsigned min_decode_blocks = 3;
__device__ std::uint64_t first_warp() { return (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / warp_lanes; }
__device__ std::uint64_t warp_stride() { return std::uint64_t{gridDim.x} * blockDim.x / warp_lanes; }

__device__ std::byte* body_of(std::byte* frame) { return frame + frame_header_bytes + params_section_bytes(fmt::params_bytes); }

__device__ std::uint32_t narrow_bytes(std::uint64_t bytes) {
  return bytes > 0xffffffffULL ? 0xffffffffU : static_cast<std::uint32_t>(bytes);
}

template <typename Float>
__device__ void size_alp_vector(cuda_warp& w, const encode_source& s, std::uint64_t g, std::uint64_t v,
                                fmt::vector_fields* choice, std::uint64_t* size, rd_task* task, std::uint8_t* rd_flag) {
  fmt::column_params p;
  fmt::load_params<Float>(s.params, p);
  fmt::vector_fields fields;
  std::uint64_t bytes = 0;
  std::uint32_t const count = fmt::values_in_vector(s.count, v);
  alp_outcome const alp =
      choose_alp_warp(w, static_cast<const Float*>(s.values) + v * fmt::vector_values, count, p, fields, bytes);
  if (w.lane == 0) {  // lane 0 holds the choice
    *choice = fields;
    *size = bytes;
    *task = {g, narrow_bytes(alp.before_rd), narrow_bytes(alp.alp_less_fill), alp.fills};
    *rd_flag = rd_may_undercut<Float>(count, alp) ? 1 : 0;
  }
}

__global__ void __launch_bounds__(max_vector_threads, min_alp_size_blocks)
    alp_size_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                    std::uint64_t* sizes, fmt::vector_fields* choices, rd_task* tasks, std::uint8_t* rd_flags) {
  cuda_warp w;
  for (std::uint64_t g = first_warp(); g < num_vectors; g += warp_stride()) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    if (s.type == value_type::float64) {
      size_alp_vector<double>(w, s, g, v, choices + g, sizes + g, tasks + g, rd_flags + g);
    } else {
      size_alp_vector<float>(w, s, g, v, choices + g, sizes + g, tasks + g, rd_flags + g);
    }
  }
}

template <typename Float>
__device__ void size_rd_vector(cuda_warp& w, const encode_source& s, std::uint64_t v, const rd_task& t,
                               fmt::vector_fields* choice, std::uint64_t* size) {
  fmt::column_params p;
  fmt::load_params<Float>(s.params, p);
  alp_outcome alp;
  alp.before_rd = t.before_rd;
  alp.alp_less_fill = t.alp_less_fill == 0xffffffffU ? ~std::uint64_t{0} : t.alp_less_fill;
  alp.fills = t.fills;
  fmt::vector_fields fields;
  std::uint64_t bytes = 0;
  bool const replaced = choose_rd_warp(w, static_cast<const Float*>(s.values) + v * fmt::vector_values,
                                       fmt::values_in_vector(s.count, v), p.fill, alp, fields, bytes);
  if (replaced && w.lane == 0) {
    *choice = fields;
    *size = bytes;
  }
}

// The flagged vectors' count is on the device: the launch covers every vector, and the warps
// past the count end at once.
__global__ void __launch_bounds__(max_vector_threads, min_encode_blocks)
    rd_size_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, const rd_task* rd_tasks,
                   const std::uint64_t* rd_count, std::uint64_t* sizes, fmt::vector_fields* choices) {
  cuda_warp w;
  std::uint64_t const n = *rd_count;
  for (std::uint64_t i = first_warp(); i < n; i += warp_stride()) {
    rd_task const t = rd_tasks[i];
    std::uint64_t const g = t.vector;
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    if (s.type == value_type::float64) {
      size_rd_vector<double>(w, s, v, t, choices + g, sizes + g);
    } else {
      size_rd_vector<float>(w, s, v, t, choices + g, sizes + g);
    }
  }
}

template <typename Float>
__device__ void write_vector(cuda_warp& w, const encode_source& s, std::uint64_t v, const fmt::vector_fields& fields,
                             std::byte* body, std::uint64_t start, std::uint64_t* stage) {
  std::uint32_t const count = fmt::values_in_vector(s.count, v);
  std::uint64_t const end = start + fmt::vector_bytes<Float>(fields, count);
  if (w.lane == 0) detail::store_le(body + 8 * v, end, 8);
  std::uint64_t fill_bits = 0;
  if (fields.fill) {
    fmt::column_params p;
    fmt::load_params<Float>(s.params, p);
    fill_bits = p.fill;
  }
  write_vector_warp(w, static_cast<const Float*>(s.values) + v * fmt::vector_values, count, fill_bits, fields,
                    body + 8 * fmt::vector_count(s.count) + start, stage);
}

__global__ void __launch_bounds__(max_vector_threads, min_encode_blocks)
    write_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                             const std::uint64_t* starts, const fmt::vector_fields* choices) {
  extern __shared__ std::uint64_t stage_all[];
  cuda_warp w;
  std::uint64_t* stage = stage_all + (threadIdx.x / warp_lanes) * (stage_bytes_per_warp / sizeof(std::uint64_t));
  for (std::uint64_t g = first_warp(); g < num_vectors; g += warp_stride()) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    std::byte* body = body_of(batch.frames + batch.frame_offsets[f]);
    std::uint64_t const start = starts[g] - starts[vector_begin[f]];
    fmt::vector_fields const fields = choices[g];
    if (s.type == value_type::float64) {
      write_vector<double>(w, s, v, fields, body, start, stage);
    } else {
      write_vector<float>(w, s, v, fields, body, start, stage);
    }
    w.sync();  // the stage's readers are done before the next vector's writers
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

// --- decoding ----------------------------------------------------------------------------------

template <typename Float>
__device__ bool check_frame(const std::byte* frame, const decode_target& t) {
  frame_header const h = load_header(frame);
  if (!fmt::check_codec_params(h.params.data())) return false;
  const std::byte* payload = frame + frame_header_bytes;
  fmt::column_params p;
  if (!fmt::load_params<Float>(payload + params_prefix_bytes, p)) return false;
  // The body holds the vector ends; the decode kernel checks each vector's end (a thread
  // reading every end of a frame of thousands of vectors would hold the decode up).
  std::uint64_t const section = params_section_bytes(fmt::params_bytes);
  std::uint64_t const body_bytes = h.payload_bytes - section;
  std::uint64_t const vectors = fmt::vector_count(t.count);
  return vectors <= body_bytes / 8 && (vectors != 0 || body_bytes == 0);
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

// A warp checks and decodes vectors [first, last) of a frame that check_frame accepted; false
// at the first it refuses. The frame's parameters are read once for them all. Each vector
// that fits the stage is copied into it whole first, so that its checks and its decode read
// shared memory (one round trip to the device memory for the vector, not one per section).
template <typename Float>
__device__ bool decode_vectors(cuda_warp& w, const std::byte* frame, const decode_target& t, std::uint64_t first,
                               std::uint64_t last, std::uint64_t* stage) {
  const std::byte* payload = frame + frame_header_bytes;
  fmt::column_params p;
  fmt::load_params<Float>(payload + params_prefix_bytes, p);
  const std::byte* body = payload + params_section_bytes(fmt::params_bytes);
  std::uint64_t const vectors = fmt::vector_count(t.count);
  std::uint64_t const data = detail::load_le(frame + 24, 8) - params_section_bytes(fmt::params_bytes) - 8 * vectors;
  for (std::uint64_t v = first; v < last; ++v) {
    // fmt::check_ends, split over the vectors: the ends are 8-byte multiples that never
    // decrease, within the data section, the last at its end.
    std::uint64_t const start = fmt::vector_start(body, v);
    std::uint64_t const end = fmt::vector_end(body, v);
    if (start % 8 != 0 || end % 8 != 0 || end < start || end > data || (v + 1 == vectors && end != data)) return false;
    const std::byte* vector = body + 8 * vectors + start;
    bool const staged = stage_vector_warp(w, vector, end - start, stage);
    if (staged) vector = reinterpret_cast<const std::byte*>(stage);
    std::uint32_t const count = fmt::values_in_vector(t.count, v);
    fmt::vector_fields fields;
    if (!check_vector_warp<cuda_warp, Float>(w, vector, end - start, count, p, fields)) return false;
    decode_vector_warp(w, vector, staged, count, p, fields, static_cast<Float*>(t.values) + v * fmt::vector_values,
                       stage);
  }
  return true;
}

// A warp decodes a run of consecutive vectors of the batch (not a grid stride over them), so
// that it looks up each frame it meets once: its index, status, target and parameters.
__global__ void __launch_bounds__(max_vector_threads, min_decode_blocks)
    decode_kernel(device_decode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors) {
  extern __shared__ std::uint64_t stage_all[];
  cuda_warp w;
  std::uint64_t* stage = stage_all + (threadIdx.x / warp_lanes) * (decode_stage_bytes_per_warp / sizeof(std::uint64_t));
  std::uint64_t const per_warp = (num_vectors + warp_stride() - 1) / warp_stride();
  std::uint64_t g = first_warp() * per_warp;
  std::uint64_t const end = g + per_warp < num_vectors ? g + per_warp : num_vectors;
  if (g >= end) return;
  std::size_t f = frame_of_chunk(vector_begin, batch.num_frames, g);
  while (g < end) {
    while (g >= vector_begin[f + 1]) ++f;  // frames without vectors take none
    std::uint64_t const last = vector_begin[f + 1] < end ? vector_begin[f + 1] : end;
    // One read of the status for the warp: the lanes must agree on whether to decode. Another
    // warp may mark the frame corrupt meanwhile: this one still checks each vector it decodes.
    int const ok = w.shfl(w.lane == 0 && batch.status[f] == frame_status::ok ? 1 : 0, 0);
    if (ok != 0) {
      decode_target const& t = batch.targets[f];
      const std::byte* frame = batch.frames + batch.frame_offsets[f];
      std::uint64_t const v = g - vector_begin[f];
      bool const decoded = t.type == value_type::float64 ? decode_vectors<double>(w, frame, t, v, v + (last - g), stage)
                                                         : decode_vectors<float>(w, frame, t, v, v + (last - g), stage);
      // Every failing vector writes the same status; the race between warps is benign.
      if (!decoded && w.lane == 0) batch.status[f] = frame_status::corrupt_payload;
    }
    g = last;
  }
}

// --- column parameters -------------------------------------------------------------------------

/// fmt::take_sample by a block: sampled value t is row start(t / sample_run) + t % sample_run
/// of the column's pieces laid end to end (read_sample's walk reads exactly those rows), so
/// the threads read them at once; every stretch but the last is whole.
template <typename Float>
__device__ void take_sample_block(const encode_source* pieces, std::uint64_t n, fmt::column_sample<Float>& s) {
  std::uint64_t rows = 0;
  for (std::uint64_t k = 0; k < n; ++k) rows += pieces[k].count;
  bool const short_column = rows <= fmt::sample_values;
  std::uint32_t const want = rows == 0 ? 0
                             : short_column ? static_cast<std::uint32_t>((rows + fmt::sample_run - 1) / fmt::sample_run)
                                            : fmt::sample_vectors;
  std::uint32_t const taken = short_column ? static_cast<std::uint32_t>(rows) : fmt::sample_values;
  for (std::uint32_t t = threadIdx.x; t < taken; t += blockDim.x) {
    std::uint32_t const stretch = t / fmt::sample_run;
    std::uint64_t row = (short_column ? std::uint64_t{stretch} * fmt::sample_run : rows / want * stretch) + t % fmt::sample_run;
    std::uint64_t k = 0;
    while (row >= pieces[k].count) row -= pieces[k++].count;
    s.values[t] = static_cast<const Float*>(pieces[k].values)[row];
    s.is_null[t] = pieces[k].holds_value(row) ? 0 : 1;
  }
  if (threadIdx.x == 0) {
    s.n = taken;
    s.stretches = want;
    for (std::uint32_t k = 0; k < want; ++k) s.ends[k] = (k + 1) * fmt::sample_run < taken ? (k + 1) * fmt::sample_run : taken;
  }
}

// A block prepares a column: the threads read the sample, count each sampled value's
// occurrences, find the most frequent (the fill value) by a block reduction, cost every
// (stretch, exponent/factor) pair and find each stretch's cheapest by a warp per stretch, in
// the CPU's orders (better_fill, cheapest_combination), so the bytes are the CPU's. Thread 0
// only takes the fill cells out (where the column has a fill value) and counts the votes.
template <typename Float>
__device__ void prepare_column(const encode_source* pieces, std::uint64_t n, std::byte* out) {
  // Raw shared memory, constructed by thread 0: __shared__ variables take no initializers.
  __shared__ alignas(16) unsigned char sample_bytes[sizeof(fmt::column_sample<Float>)];
  __shared__ alignas(16) unsigned char params_bytes[sizeof(fmt::column_params)];
  __shared__ std::uint64_t costs[fmt::sample_vectors * fmt::combinations<Float>()];
  __shared__ std::uint32_t warp_best_count[32];
  __shared__ std::uint64_t warp_best_bits[32];
  __shared__ int cheapest[fmt::sample_vectors];
  auto& s = *reinterpret_cast<fmt::column_sample<Float>*>(sample_bytes);
  auto& p = *reinterpret_cast<fmt::column_params*>(params_bytes);
  unsigned const lane = threadIdx.x % warp_lanes;
  unsigned const warp = threadIdx.x / warp_lanes;
  unsigned const warps = blockDim.x / warp_lanes;
  if (threadIdx.x == 0) {
    new (sample_bytes) fmt::column_sample<Float>();
    new (params_bytes) fmt::column_params();
  }
  __syncthreads();
  take_sample_block(pieces, n, s);
  __syncthreads();
  if (threadIdx.x == 0) fmt::take_out_nulls(s);
  __syncthreads();
  // Each value's occurrences, and the best fill value among this thread's values.
  std::uint32_t best_count = 0;
  std::uint64_t best_bits = 0;
  for (std::uint32_t i = threadIdx.x; i < s.n; i += blockDim.x) {
    std::uint32_t const count = fmt::occurrences(s, i);
    std::uint64_t const bits = fmt::bits_of(s.values[i]);
    if (fmt::better_fill(count, bits, best_count, best_bits)) {
      best_count = count;
      best_bits = bits;
    }
  }
  for (unsigned d = warp_lanes / 2; d > 0; d >>= 1) {
    std::uint32_t const other_count = __shfl_xor_sync(full_mask, best_count, d);
    std::uint64_t const other_bits = __shfl_xor_sync(full_mask, best_bits, d);
    if (fmt::better_fill(other_count, other_bits, best_count, best_bits)) {
      best_count = other_count;
      best_bits = other_bits;
    }
  }
  if (lane == 0) {
    warp_best_count[warp] = best_count;
    warp_best_bits[warp] = best_bits;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned k = 1; k < warps; ++k) {
      if (fmt::better_fill(warp_best_count[k], warp_best_bits[k], best_count, best_bits)) {
        best_count = warp_best_count[k];
        best_bits = warp_best_bits[k];
      }
    }
    fmt::take_out_fill(s, best_count, best_bits, p);
  }
  __syncthreads();
  std::uint32_t const pairs = s.stretches * static_cast<std::uint32_t>(fmt::combinations<Float>());
  for (std::uint32_t k = threadIdx.x; k < pairs; k += blockDim.x) {
    costs[k] = fmt::stretch_cost(s, k / fmt::combinations<Float>(), static_cast<int>(k % fmt::combinations<Float>()));
  }
  __syncthreads();
  // A warp per stretch: the least (cost, combination), so of equal costs the first.
  for (std::uint32_t k = warp; k < s.stretches; k += warps) {
    std::uint64_t least_cost = ~std::uint64_t{0};
    int least = fmt::combinations<Float>();
    for (int c = static_cast<int>(lane); c < fmt::combinations<Float>(); c += warp_lanes) {
      std::uint64_t const cost = costs[k * fmt::combinations<Float>() + c];
      if (cost < least_cost || least == fmt::combinations<Float>()) {  // c grows: the first of equal costs stays
        least_cost = cost;
        least = c;
      }
    }
    for (unsigned d = warp_lanes / 2; d > 0; d >>= 1) {
      std::uint64_t const other_cost = __shfl_xor_sync(full_mask, least_cost, d);
      int const other = __shfl_xor_sync(full_mask, least, d);
      if (other_cost < least_cost || (other_cost == least_cost && other < least)) {
        least_cost = other_cost;
        least = other;
      }
    }
    if (lane == 0) cheapest[k] = least;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    fmt::vote_candidates(s, cheapest, p);
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

// A launch of a warp kernel: a warp per unit, whole warps per block, `shared_per_warp` bytes of
// dynamic shared memory for each.
template <class Kernel, class... Args>
void launch_warps(Kernel kernel, const launch_choice& choice, std::uint64_t units, std::size_t shared_per_warp,
                  cudaStream_t stream, Args... args) {
  if (units == 0) return;
  unsigned const threads = choice.params.threads;
  ZS_EXPECTS(threads % 32 == 0 && threads > 0, "warp kernels take whole warps");
  ZS_EXPECTS(threads <= max_vector_threads, "alp vector kernels take at most 256 threads a block (their launch bounds)");
  std::uint64_t const per_block = threads / 32;
  std::size_t const shared = shared_per_warp * per_block;
  if (shared > 48 * 1024) {
    // Beyond the default dynamic shared memory of a block: the kernel must ask for it.
    ZS_CUDA_TRY(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(shared)));
  }
  launch_record const r =
      plan_launch(reinterpret_cast<const void*>(kernel), choice, (units + per_block - 1) / per_block, shared);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, shared, stream>>>(args...); });
}

template <class Kernel, class... Args>
void launch_items(Kernel kernel, const launch_choice& choice, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), choice, items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

// A warp per vector of a frame with a copy: the vector as fmt::vector_for_encoder gives it (the
// same stand-in: the fill value, else the value of the first row that holds one, else +0.0).
template <typename Float>
__device__ void replace_nulls_in_vector(const cuda_warp& w, const encode_source& s, std::uint64_t v, Float* copy) {
  fmt::column_params p;
  fmt::load_params<Float>(s.params, p);
  std::uint64_t const first_row = v * fmt::vector_values;
  std::uint32_t const count = fmt::values_in_vector(s.count, v);
  const Float* values = static_cast<const Float*>(s.values) + first_row;
  Float stand_in = fmt::from_bits<Float>(static_cast<typename fmt::float_traits<Float>::bits_t>(p.fill));
  if (!p.has_fill) {
    std::uint32_t first = count;
    for (std::uint32_t i = w.lane; i < count && first == count; i += warp_lanes) {
      if (s.holds_value(first_row + i)) first = i;
    }
    first = w.reduce_min(first);
    stand_in = first < count ? values[first] : Float{0};
  }
  for (std::uint32_t i = w.lane; i < count; i += warp_lanes) {
    copy[first_row + i] = s.holds_value(first_row + i) ? values[i] : stand_in;
  }
}

__global__ void __launch_bounds__(max_vector_threads)
    replace_nulls_kernel(device_encode_batch batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                         void* const* copies) {
  cuda_warp w;
  for (std::uint64_t g = first_warp(); g < num_vectors; g += warp_stride()) {
    std::size_t const f = frame_of_chunk(vector_begin, batch.num_frames, g);
    if (copies[f] == nullptr) continue;
    encode_source const& s = batch.sources[f];
    std::uint64_t const v = g - vector_begin[f];
    if (s.type == value_type::float64) {
      replace_nulls_in_vector<double>(w, s, v, static_cast<double*>(copies[f]));
    } else {
      replace_nulls_in_vector<float>(w, s, v, static_cast<float*>(copies[f]));
    }
  }
}

}  // namespace

std::size_t encode_temp_bytes(std::uint64_t num_vectors) { return carved_bytes(num_vectors); }

void replace_nulls(const device_encode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
                   void* const* copies, const launch_choice& choice, cudaStream_t stream) {
  expect_launch_of("alp_encode", choice);
  launch_warps(replace_nulls_kernel, choice, num_vectors, 0, stream, batch, vector_begin, num_vectors, copies);
}

void encode(const device_encode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  expect_launch_of("alp_encode", choice);
  ZS_EXPECTS(temp_bytes >= encode_temp_bytes(num_vectors), "scratch of encode_temp_bytes for the alp encoder");
  encode_scratch const s = carve(temp, num_vectors);
  // The last size stays 0, so the scan's last entry is the batch's total.
  ZS_CUDA_TRY(cudaMemsetAsync(s.sizes + num_vectors, 0, sizeof(std::uint64_t), stream));
  launch_warps(alp_size_kernel, choice, num_vectors, 0, stream, batch, vector_begin, num_vectors, s.sizes, s.choices,
               s.tasks, s.rd_flags);
  std::size_t select_bytes = s.select_bytes;
  ZS_CUDA_TRY(cub::DeviceSelect::Flagged(s.cub_temp, select_bytes, static_cast<const rd_task*>(s.tasks),
                                         static_cast<const std::uint8_t*>(s.rd_flags), s.rd_tasks, s.rd_count,
                                         static_cast<std::int64_t>(num_vectors), stream));
  launch_warps(rd_size_kernel, choice, num_vectors, 0, stream, batch, vector_begin,
               static_cast<const rd_task*>(s.rd_tasks), static_cast<const std::uint64_t*>(s.rd_count), s.sizes,
               s.choices);
  std::size_t scan_bytes = s.scan_bytes;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(s.cub_temp, scan_bytes, s.sizes, s.starts,
                                            static_cast<std::int64_t>(num_vectors + 1), stream));
  launch_warps(write_kernel, choice, num_vectors, stage_bytes_per_warp, stream, batch, vector_begin, num_vectors,
               static_cast<const std::uint64_t*>(s.starts), static_cast<const fmt::vector_fields*>(s.choices));
  launch_items(finish_kernel, frame_ops_choice(), batch.num_frames, stream, batch, vector_begin,
               static_cast<const std::uint64_t*>(s.starts));
}

void decode(const device_decode_batch& batch, const std::uint64_t* vector_begin, std::uint64_t num_vectors,
            const launch_choice& choice, cudaStream_t stream) {
  expect_launch_of("alp_decode", choice);
  launch_items(check_kernel, frame_ops_choice(), batch.num_frames, stream, batch);
  launch_warps(decode_kernel, choice, num_vectors, decode_stage_bytes_per_warp, stream, batch, vector_begin, num_vectors);
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
