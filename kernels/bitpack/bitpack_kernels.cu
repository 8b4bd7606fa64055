// The bitpack codec's kernels: thin CUDA wrappers around the warp programs of
// warp_programs.hpp, the device-wide scan between the encoder's passes, and the launchers.
#include <cub/device/device_scan.cuh>

#include <string>

#include "bitpack/bitpack_kernels.hpp"
#include "bitpack/warp_programs.hpp"
#include "common/cuda_warp.cuh"
#include "common/launch.hpp"
#include "zs/error.hpp"

namespace zs::kernels::bitpack {
namespace {

namespace prog = zs::bitpack::gpu;
using zs::bitpack::frame_layout;

// The Warp the programs run on, and the split of work units over warps (common/cuda_warp.cuh).
using warp::cuda_warp;
using warp::full_mask;
using warp::range_of_warp;
using warp::warp_index;
using warp::warp_range;

// The warp kernels are latency-bound: capping their registers (at 128 a thread with 2 blocks of
// 256 threads per SM) keeps enough warps in flight to hide memory latency without spilling
// much; measured against 85 and 64 registers, which spill and run slower.
#ifndef ZS_WARP_KERNEL_MIN_BLOCKS
#define ZS_WARP_KERNEL_MIN_BLOCKS 2
#endif
#define ZS_WARP_KERNEL_BOUNDS __launch_bounds__(256, ZS_WARP_KERNEL_MIN_BLOCKS)
// The decoder keeps its frame and tile bookkeeping in shared memory, so that for 32-bit values
// it fits 80 registers without spilling: more warps per SM than at 128, which measured faster on
// the H200 (64 spills, and loses). 64-bit values need more registers, and 128 measured faster.
// The program for batches with narrow frames (Narrow: a tile's program for each way of storing
// values) spills at 80 registers and fits 128 without: it takes the 64-bit values' bounds.
// Batches without narrow frames run the program compiled without those paths. The program of
// the extended schemes spills at 80 registers too, and takes 128.
template <typename U, bool Narrow, bool Extended>
inline constexpr int decode_min_blocks = sizeof(U) == 4 && !Narrow && !Extended ? 3 : 2;

struct add_words {
  __host__ __device__ prog::scheme_words operator()(const prog::scheme_words& a,
                                                    const prog::scheme_words& b) const {
    return {{a.w[0] + b.w[0], a.w[1] + b.w[1], a.w[2] + b.w[2]}};
  }
};

// This warp's shared memory in the encoder kernels that take it.
template <typename U>
__device__ prog::encode_smem<U>& warp_encode_smem() {
  extern __shared__ __align__(16) unsigned char encode_shared[];
  return reinterpret_cast<prog::encode_smem<U>*>(encode_shared)[threadIdx.x / 32];
}

// Extended: the kernels of a codec whose frames may also take pfor, pdfor and drfor. They are
// compiled apart, so that the classic schemes' kernels hold none of those schemes' registers.
template <typename U, bool Narrow, bool Extended>
__global__ void ZS_WARP_KERNEL_BOUNDS sample_kernel(prog::encode_args a, std::uint64_t samples) {
  auto& sm = warp_encode_smem<U>();
  cuda_warp w;
  warp_range const r = range_of_warp(samples);
  prog::sample_range<Narrow, Extended>(w, a, r.begin, r.end, sm);
}

// Pass 1 for 32-bit values fits 80 registers without spilling: 24 warps a SM instead of 16
// (narrow frames' loads included); that of the extended schemes does not, and takes 128.
template <typename U, bool Extended>
inline constexpr int analyze_min_blocks = sizeof(U) == 4 && !Extended ? 3 : ZS_WARP_KERNEL_MIN_BLOCKS;

template <typename U, bool Narrow, bool Extended>
__global__ void __launch_bounds__(256, analyze_min_blocks<U, Extended>) analyze_kernel(prog::encode_args a, std::uint64_t segments) {
  auto& sm = warp_encode_smem<U>();
  cuda_warp w;
  // One scan block a warp.
  std::uint64_t const begin = warp_index() * a.block_segments;
  if (begin >= segments) return;
  prog::analyze_range<Narrow, Extended>(w, a, begin, begin + a.block_segments < segments ? begin + a.block_segments : segments, sm);
}

// Pass 2's copy waits on its loads: it keeps them in flight in a shared-memory ring
// (copy_staged), and raw frames' copies 16 words a lane in registers, which at 80 registers (3
// blocks of 256 threads a SM) measured 1 to 3% faster on the H200 than 8 words at 64 registers
// (4 blocks; more warps, but spills).
template <typename U, bool Narrow, bool Extended>
__global__ void __launch_bounds__(256, 3) pack_kernel(prog::encode_args a, std::uint64_t segments) {
  extern __shared__ __align__(16) unsigned char pack_shared[];
  auto* jobs = reinterpret_cast<prog::pack_job*>(pack_shared + (threadIdx.x / 32) * prog::pack_warp_bytes);
  auto* ring = reinterpret_cast<prog::word4*>(pack_shared + (threadIdx.x / 32) * prog::pack_warp_bytes + prog::pack_jobs_bytes);
  cuda_warp w;
  prog::sum_carrier carrier;
  // Whole tables of jobs: a warp looks up 32 segments at once.
  warp_range const r = range_of_warp(segments, prog::warp_lanes);
  prog::pack_range<cuda_warp, U, Narrow, Extended>(w, a, r.begin, r.end, jobs, ring, carrier);
  carrier.flush(w, a.sums);
}

template <typename U, bool Narrow, bool Extended>
__global__ void ZS_WARP_KERNEL_BOUNDS repack_kernel(prog::encode_args a, std::uint64_t segments) {
  auto& sm = warp_encode_smem<U>();
  cuda_warp w;
  prog::sum_carrier carrier;
  warp_range const r = range_of_warp(segments);
  prog::repack_range<Narrow, Extended>(w, a, r.begin, r.end, sm, carrier);
  carrier.flush(w, a.sums);
}

// Pass 2 of narrow frames left raw: their values copied a 64-bit payload word a lane.
__global__ void ZS_WARP_KERNEL_BOUNDS narrow_raw_kernel(prog::encode_args a, std::uint64_t segments) {
  cuda_warp w;
  prog::sum_carrier carrier;
  warp_range const r = range_of_warp(segments);
  prog::narrow_raw_range(w, a, r.begin, r.end, carrier);
  carrier.flush(w, a.sums);
}

// One thread per segment; a warp whose segments share a frame adds its terms in one atomic.
template <typename U, bool Narrow, bool Extended>
__global__ void seams_kernel(prog::encode_args a, std::uint64_t segments) {
  if (!prog::encodes_again(a)) return;  // pass 2 added every term
  for (std::uint64_t first = blockIdx.x * std::uint64_t{blockDim.x}; first < segments; first += item_stride()) {
    std::uint64_t const c = first + threadIdx.x;
    std::uint32_t f = 0xffffffffU;
    std::uint64_t sum = 0;
    if (c < segments) sum = prog::seam_sum<U, Narrow, Extended>(a, c, f);
    std::uint32_t const f0 = __shfl_sync(full_mask, f, 0);
    if (__all_sync(full_mask, f == f0 || c >= segments)) {
      for (unsigned m = 16; m > 0; m >>= 1) sum += __shfl_xor_sync(full_mask, sum, m);
      if (threadIdx.x % 32 == 0 && sum != 0) atomicAdd(reinterpret_cast<unsigned long long*>(a.sums + f0), sum);
    } else if (sum != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(a.sums + f), sum);
    }
  }
}

__global__ void choose_kernel(prog::encode_args a) {
  for (std::uint64_t f = first_item(); f < a.num_frames; f += item_stride()) prog::choose_frame(a, f);
}

__global__ void check_frames_kernel(prog::decode_args a) {
  for (std::uint64_t f = first_item(); f < a.num_frames; f += item_stride()) prog::check_frame(a, f);
}

template <typename U, bool Narrow, bool Extended>
__global__ void __launch_bounds__(256, decode_min_blocks<U, Narrow, Extended>) decode_kernel(prog::decode_args a, std::uint64_t tiles, std::uint32_t warp_words) {
  extern __shared__ __align__(16) unsigned char decode_shared[];
  auto* smem = reinterpret_cast<std::uint32_t*>(decode_shared) + (threadIdx.x / 32) * warp_words;
  cuda_warp w;
  prog::sum_carrier carrier;
  warp_range const r = range_of_warp(tiles);
  prog::decode_range<cuda_warp, U, Narrow, Extended>(w, a, r.begin, r.end, smem, carrier);
  carrier.flush(w, a.sums);
}

template <class Kernel, class... Args>
void launch_per_item(Kernel kernel, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

// A launch of a warp kernel: `units` warps' worth of work, `warp_bytes` of dynamic shared
// memory per warp. The limit is raised before the occupancy query, which counts against it.
template <class Kernel>
launch_record plan_warps(Kernel kernel, const launch_choice& choice, std::uint64_t units, std::size_t warp_bytes) {
  unsigned const threads = choice.params.threads;
  ZS_EXPECTS(threads % 32 == 0 && threads > 0, "warp kernels take whole warps");
  std::size_t const bytes = warp_bytes * (threads / 32);
  ZS_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  std::uint64_t const per_block = threads / 32;
  return plan_launch(reinterpret_cast<const void*>(kernel), choice, (units + per_block - 1) / per_block, bytes);
}
template <class Kernel, class... Args>
void launch_planned(Kernel kernel, const launch_record& r, cudaStream_t stream, Args... args) {
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, r.shared_bytes, stream>>>(args...); });
}
template <class Kernel, class... Args>
void launch_warps(Kernel kernel, const launch_choice& choice, std::uint64_t units, std::size_t warp_bytes,
                  cudaStream_t stream, Args... args) {
  if (units == 0) return;
  launch_planned(kernel, plan_warps(kernel, choice, units, warp_bytes), stream, args...);
}

// Pass 1's launch for a width class, and the segments each of its warps takes: a scan block.
template <typename U, bool Narrow, bool Extended>
launch_record plan_analyze(const launch_choice& analyze, std::uint64_t segments, std::uint32_t& per) {
  per = 1;
  if (segments == 0) return {};
  expect_launch_of("bitpack_analyze", analyze);
  launch_record const r = plan_warps(analyze_kernel<U, Narrow, Extended>, analyze, segments, sizeof(prog::encode_smem<U>));
  std::uint64_t const warps = std::uint64_t{r.geometry.grid} * r.geometry.threads / prog::warp_lanes;
  per = static_cast<std::uint32_t>(zs::bitpack::ceil_div(segments, warps));
  return r;
}

// The sample pass, then pass 1: they share the analyze choice. A width class's frames are its
// own, so its pass 1 needs only its own samples.
template <typename U, bool Narrow, bool Extended>
void analyze_class(const launch_choice& analyze, const launch_record& pass1, const prog::encode_args& a,
                   std::uint64_t segments, std::uint64_t samples, cudaStream_t stream) {
  if (segments == 0) return;
  launch_warps(sample_kernel<U, Narrow, Extended>, analyze, samples, sizeof(prog::encode_smem<U>), stream, a, samples);
  launch_planned(analyze_kernel<U, Narrow, Extended>, pass1, stream, a, segments);
}

template <typename U, bool Narrow, bool Extended>
void pack_class(const launch_choice& pack, const prog::encode_args& a, std::uint64_t segments, cudaStream_t stream) {
  if (segments == 0) return;
  expect_launch_of("bitpack_pack", pack);
  launch_warps(pack_kernel<U, Narrow, Extended>, pack, segments, prog::pack_warp_bytes, stream, a, segments);
  // Narrow frames left raw (of the 32-bit class): their own pass, with pass 2's geometry.
  if (Narrow) launch_warps(narrow_raw_kernel, pack, segments, 0, stream, a, segments);
  // The repack launch is part of pass 2 and shares its geometry.
  launch_warps(repack_kernel<U, Narrow, Extended>, pack, segments, sizeof(prog::encode_smem<U>), stream, a, segments);
  launch_per_item(seams_kernel<U, Narrow, Extended>, segments, stream, a, segments);
}

template <typename U, bool Narrow, bool Extended>
void decode_class(const launch_choice& choice, prog::decode_args a, std::uint64_t tiles, cudaStream_t stream) {
  if (tiles == 0) return;
  expect_launch_of("bitpack_decode", choice);
  a.tile_segments = tile_segments(config_of(choice.params));
  std::uint32_t const warp_words = prog::decode_warp_words(8 * sizeof(U), a.tile_segments);
  launch_warps(decode_kernel<U, Narrow, Extended>, choice, tiles, 4 * std::size_t{warp_words}, stream, a, tiles, warp_words);
}

}  // namespace

void check_config(const decode_config& config) {
  ZS_EXPECTS(config.blocks_per_tile == 4 || config.blocks_per_tile == 8 || config.blocks_per_tile == 16,
             "blocks per tile 4, 8 or 16");
  ZS_EXPECTS(config.threads == 64 || config.threads == 128 || config.threads == 256,
             "64, 128 or 256 threads per thread block");
}

launch_choice fixed_decode_choice(const decode_config& config, std::optional<value_type> type,
                                  std::uint64_t batch_bytes) {
  check_config(config);
  launch_choice c;
  c.kernel = "bitpack_decode";
  c.type = type;
  c.size = size_class_of(batch_bytes);
  c.batch_bytes = batch_bytes;
  c.params = registered_defaults(c.kernel);
  c.params.threads = config.threads;
  c.params.items = config.blocks_per_tile;
  return c;
}

std::uint32_t slot_words(std::uint32_t width_bits) { return prog::slot_words(width_bits); }
std::size_t scheme_words_bytes() { return sizeof(prog::scheme_words); }
std::size_t block_words_bytes() { return sizeof(prog::block_words); }
std::size_t frame_layout_bytes() { return sizeof(frame_layout); }

std::size_t scan_temp_bytes(std::uint64_t blocks) {
  if (blocks == 0) return 0;
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, bytes, static_cast<const prog::scheme_words*>(nullptr),
                                             static_cast<prog::scheme_words*>(nullptr), add_words{}, blocks));
  return bytes;
}

namespace {

// The encoder's launch sequence, for the classic schemes or the extended ones.
template <bool Extended>
void encode_schemes(const encode_plan& plan, cudaStream_t stream) {
  auto const& b = plan.batch;
  // Scan blocks are numbered in 32 bits (prog::block_words).
  ZS_EXPECTS(plan.segments32 + plan.segments64 < (std::uint64_t{1} << 32), "at most 2^32 - 1 segments of 512 values a batch");
  std::uint32_t per32 = 1, per64 = 1;
  bool const narrow = plan.narrow_frames;
  launch_record const pass1_32 = narrow ? plan_analyze<std::uint32_t, true, Extended>(plan.analyze32, plan.segments32, per32)
                                        : plan_analyze<std::uint32_t, false, Extended>(plan.analyze32, plan.segments32, per32);
  launch_record const pass1_64 = plan_analyze<std::uint64_t, false, Extended>(plan.analyze64, plan.segments64, per64);
  std::uint64_t const blocks32 = prog::scan_blocks(plan.segments32, per32);
  std::uint64_t const blocks = blocks32 + prog::scan_blocks(plan.segments64, per64);
  prog::encode_args a{b.sources,       b.frames,        b.frame_offsets, b.num_frames,  nullptr,
                      nullptr,         plan.seg_first,  plan.segments32, plan.segments64, blocks,
                      per32,           0,               plan.within,     plan.block_sums, plan.offsets,
                      plan.samples,    nullptr,         plan.slot_at,    plan.layouts,  plan.choice,
                      b.sums,          plan.encode_again, Extended,        plan.within_ext,
                      plan.block_sums_ext, plan.offsets_ext, plan.samples_ext};
  prog::encode_args a32 = a, a64 = a;
  a64.block_segments = per64;
  a64.block_base = blocks32;
  a32.chunks = plan.chunks32;
  a32.sample_first = plan.sample_first32;
  a32.slots = plan.slots32;
  a64.chunks = plan.chunks64;
  a64.sample_first = plan.sample_first64;
  a64.slots = plan.slots64;

  if (narrow) {
    analyze_class<std::uint32_t, true, Extended>(plan.analyze32, pass1_32, a32, plan.segments32, plan.samples32, stream);
  } else {
    analyze_class<std::uint32_t, false, Extended>(plan.analyze32, pass1_32, a32, plan.segments32, plan.samples32, stream);
  }
  analyze_class<std::uint64_t, false, Extended>(plan.analyze64, pass1_64, a64, plan.segments64, plan.samples64, stream);

  // offsets[0] = 0 (from the caller), offsets[1 + b] = block_sums[0] + ... + block_sums[b]:
  // with the segments' places inside their blocks, per-frame totals and each segment's place
  // inside its frame's data section (prog::offset_of).
  if (blocks > 0) {
    std::size_t bytes = plan.scan_temp_bytes;
    ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(plan.scan_temp, bytes, plan.block_sums, plan.offsets + 1, add_words{},
                                               blocks, stream));
    if constexpr (Extended) {
      // (Its first entry lies away from the scratch the host uploads: zeroed here.)
      ZS_CUDA_TRY(cudaMemsetAsync(plan.offsets_ext, 0, sizeof(prog::scheme_words), stream));
      ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(plan.scan_temp, bytes, plan.block_sums_ext, plan.offsets_ext + 1,
                                                 add_words{}, blocks, stream));
    }
  }

  launch_per_item(choose_kernel, b.num_frames, stream, a);

  if (narrow) {
    pack_class<std::uint32_t, true, Extended>(plan.pack32, a32, plan.segments32, stream);
  } else {
    pack_class<std::uint32_t, false, Extended>(plan.pack32, a32, plan.segments32, stream);
  }
  pack_class<std::uint64_t, false, Extended>(plan.pack64, a64, plan.segments64, stream);
}

// The decoder's launch sequence, for the classic schemes or the extended ones.
template <bool Extended>
void decode_schemes(const decode_plan& plan, cudaStream_t stream) {
  auto const& b = plan.batch;
  prog::decode_args a{b.frames, b.frame_offsets, b.targets, b.status, b.num_frames, plan.layouts,
                      nullptr,  1,               b.sums,    plan.accepted_codecs};
  launch_per_item(check_frames_kernel, b.num_frames, stream, a);
  a.tiles = plan.tiles32;
  if (plan.narrow_frames) {
    decode_class<std::uint32_t, true, Extended>(plan.decode32, a, plan.num_tiles32, stream);
  } else {
    decode_class<std::uint32_t, false, Extended>(plan.decode32, a, plan.num_tiles32, stream);
  }
  a.tiles = plan.tiles64;
  decode_class<std::uint64_t, false, Extended>(plan.decode64, a, plan.num_tiles64, stream);
}

}  // namespace

void encode(const encode_plan& plan, cudaStream_t stream) {
  if (plan.batch.num_frames == 0) return;
  if (plan.extended_schemes) {
    encode_schemes<true>(plan, stream);
  } else {
    encode_schemes<false>(plan, stream);
  }
}

void decode(const decode_plan& plan, cudaStream_t stream) {
  if (plan.batch.num_frames == 0) return;
  if (plan.extended_schemes) {
    decode_schemes<true>(plan, stream);
  } else {
    decode_schemes<false>(plan, stream);
  }
}

}  // namespace zs::kernels::bitpack
