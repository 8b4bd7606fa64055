// The bitpack codec's kernels: thin CUDA wrappers around the thread-block programs of
// bitpack_programs.hpp, the device-wide scan between the encoder's passes, and the launchers.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <string>

#include "bitpack/bitpack_kernels.hpp"
#include "bitpack/bitpack_programs.hpp"
#include "zs/error.hpp"

namespace zs::kernels::bitpack {
namespace {

namespace prog = zs::bitpack::gpu;
using zs::bitpack::frame_layout;

// Encoder thread blocks are small: a segment per block, so more segments are in flight.
constexpr unsigned encode_threads = 64;
constexpr unsigned frame_threads = 128;
constexpr std::uint64_t max_grid = 0x7fffffffULL;

// The Block of bitpack_programs.hpp on the GPU.
template <int Threads>
struct cuda_block {
  static constexpr unsigned threads = Threads;
  unsigned tid;

  __device__ cuda_block() : tid(threadIdx.x) {}
  __device__ void sync() const { __syncthreads(); }

  __device__ std::uint32_t warp_min(std::uint32_t v) const { return __reduce_min_sync(0xffffffffU, v); }
  __device__ std::uint32_t warp_max(std::uint32_t v) const { return __reduce_max_sync(0xffffffffU, v); }
  __device__ std::uint64_t warp_min(std::uint64_t v) const {
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) {
      std::uint64_t const other = __shfl_xor_sync(0xffffffffU, v, lane_mask);
      v = other < v ? other : v;
    }
    return v;
  }
  __device__ std::uint64_t warp_max(std::uint64_t v) const {
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) {
      std::uint64_t const other = __shfl_xor_sync(0xffffffffU, v, lane_mask);
      v = other > v ? other : v;
    }
    return v;
  }

  __device__ std::uint32_t exclusive_sum(std::uint32_t v, std::uint32_t& total) const { return scan(v, total); }
  __device__ std::uint64_t exclusive_sum(std::uint64_t v, std::uint64_t& total) const { return scan(v, total); }

  // Other thread blocks may set a frame's status while this one reads it.
  __device__ frame_status load_status(const frame_status* p) const {
    return *static_cast<const volatile frame_status*>(p);
  }
  __device__ void store_status(frame_status* p, frame_status s) const { *p = s; }

 private:
  template <typename T>
  __device__ T scan(T v, T& total) const {
    using block_scan = cub::BlockScan<T, Threads>;
    __shared__ typename block_scan::TempStorage storage;
    T out;
    block_scan(storage).ExclusiveSum(v, out, total);
    __syncthreads();  // the storage is reused by the next call
    return out;
  }
};

struct add_words {
  __host__ __device__ prog::scheme_words operator()(const prog::scheme_words& a,
                                                    const prog::scheme_words& b) const {
    return {{a.w[0] + b.w[0], a.w[1] + b.w[1], a.w[2] + b.w[2]}};
  }
};

__global__ void index_kernel(const std::uint64_t* chunks, std::uint64_t num_frames, std::uint64_t num_chunks,
                             std::uint32_t* chunk_frame) {
  std::uint64_t const c = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (c < num_chunks) prog::index_chunk(chunks, num_frames, c, chunk_frame);
}

template <typename U>
__global__ void __launch_bounds__(encode_threads) analyze_kernel(prog::encode_args a) {
  __shared__ prog::analyze_smem<U> sm;
  cuda_block<encode_threads> blk;
  prog::analyze_program(blk, a, blockIdx.x, sm);
}

template <typename U>
__global__ void __launch_bounds__(encode_threads) pack_kernel(prog::encode_args a) {
  __shared__ prog::pack_smem<U> sm;
  cuda_block<encode_threads> blk;
  prog::pack_program(blk, a, blockIdx.x, sm);
}

__global__ void choose_kernel(prog::encode_args a) {
  std::uint64_t const f = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (f < a.num_frames) prog::choose_frame(a, f);
}

__global__ void check_frames_kernel(prog::decode_args a) {
  std::uint64_t const f = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (f < a.num_frames) prog::check_frame(a, f);
}

__global__ void __launch_bounds__(validate_segments_per_cta) validate_kernel(prog::decode_args a) {
  cuda_block<validate_segments_per_cta> blk;
  prog::validate_program(blk, a, blockIdx.x);
}

__global__ void plan_kernel(prog::decode_args a, std::uint64_t num_chunks) {
  std::uint64_t const c = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (c < num_chunks) prog::plan_chunk(a, c);
}

template <typename U, int Threads>
__global__ void __launch_bounds__(Threads) decode_kernel(prog::decode_args a) {
  extern __shared__ __align__(16) unsigned char decode_shared[];
  cuda_block<Threads> blk;
  prog::decode_program<cuda_block<Threads>, U>(blk, a, blockIdx.x, reinterpret_cast<std::byte*>(decode_shared));
}

unsigned grid_for(std::uint64_t blocks, const char* what) {
  if (blocks > max_grid) {
    ZS_FAIL(error_code::invalid_argument,
            std::string("a batch of ") + std::to_string(blocks) + " " + what + " exceeds one launch");
  }
  return static_cast<unsigned>(blocks);
}

unsigned frame_grid(std::uint64_t frames) {
  return grid_for((frames + frame_threads - 1) / frame_threads, "frame groups");
}

void launch_index(const std::uint64_t* chunks, std::uint64_t num_frames, std::uint64_t num_chunks,
                  std::uint32_t* chunk_frame, cudaStream_t stream) {
  if (num_chunks == 0) return;
  index_kernel<<<frame_grid(num_chunks), frame_threads, 0, stream>>>(chunks, num_frames, num_chunks, chunk_frame);
  ZS_CUDA_CHECK_LAUNCH();
}

template <typename U>
void launch_encode_pass(bool analyze, const prog::encode_args& a, std::uint64_t segments, cudaStream_t stream) {
  if (segments == 0) return;
  unsigned const grid = grid_for(segments, "segments");
  if (analyze) {
    analyze_kernel<U><<<grid, encode_threads, 0, stream>>>(a);
  } else {
    pack_kernel<U><<<grid, encode_threads, 0, stream>>>(a);
  }
  ZS_CUDA_CHECK_LAUNCH();
}

template <typename U, int Threads>
void launch_decode(const prog::decode_args& a, std::uint64_t chunks, cudaStream_t stream) {
  if (chunks == 0) return;
  unsigned const grid = grid_for(chunks, "decode chunks");
  plan_kernel<<<frame_grid(chunks), frame_threads, 0, stream>>>(a, chunks);
  ZS_CUDA_CHECK_LAUNCH();
  std::uint32_t const bytes = prog::decode_smem_layout<U>(a.segments_per_chunk).bytes;
  // The kernel's own static shared memory (the block scans) comes on top of `bytes`, so the
  // limit is raised for every size rather than from 48 KiB of dynamic memory on.
  ZS_CUDA_TRY(cudaFuncSetAttribute(decode_kernel<U, Threads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(bytes)));
  decode_kernel<U, Threads><<<grid, Threads, bytes, stream>>>(a);
  ZS_CUDA_CHECK_LAUNCH();
}

template <int Threads>
void launch_decodes(const decode_plan& plan, prog::decode_args a, cudaStream_t stream) {
  a.chunks = plan.chunks32;
  a.plans = plan.plans32;
  a.segments_per_chunk = segments_per_cta(plan.config, 32);
  launch_decode<std::uint32_t, Threads>(a, plan.num_chunks32, stream);
  a.chunks = plan.chunks64;
  a.plans = plan.plans64;
  a.segments_per_chunk = segments_per_cta(plan.config, 64);
  launch_decode<std::uint64_t, Threads>(a, plan.num_chunks64, stream);
}

}  // namespace

void check_config(const decode_config& config) {
  ZS_EXPECTS(config.blocks_per_cta % zs::bitpack::tile_blocks == 0 && config.blocks_per_cta >= 4 &&
                 config.blocks_per_cta <= 32,
             "blocks per thread block a multiple of 4 from 4 to 32");
  ZS_EXPECTS(config.threads == 128 || config.threads == 256, "128 or 256 threads per thread block");
}

std::uint32_t slot_words(std::uint32_t width_bits) { return prog::slot_words(width_bits); }
std::size_t scheme_words_bytes() { return sizeof(prog::scheme_words); }
std::size_t frame_layout_bytes() { return sizeof(frame_layout); }
std::size_t chunk_plan_bytes() { return sizeof(prog::chunk_plan); }

std::size_t scan_temp_bytes(std::uint64_t segments) {
  if (segments == 0) return 0;
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, bytes, static_cast<const prog::scheme_words*>(nullptr),
                                             static_cast<prog::scheme_words*>(nullptr), add_words{}, segments));
  return bytes;
}

void encode(const encode_plan& plan, cudaStream_t stream) {
  auto const& b = plan.batch;
  if (b.num_frames == 0) return;
  prog::encode_args a{b.sources,      b.frames,     b.frame_offsets,      b.num_frames,
                      nullptr,        nullptr,      plan.seg_first,       plan.sizes,
                      plan.offsets,   plan.segment_scheme, plan.choice,   nullptr};
  prog::encode_args a32 = a, a64 = a;
  a32.chunks = plan.chunks32;
  a32.chunk_frame = plan.chunk_frame32;
  a32.slots = plan.slots32;
  a64.chunks = plan.chunks64;
  a64.chunk_frame = plan.chunk_frame64;
  a64.slots = plan.slots64;

  launch_index(plan.chunks32, b.num_frames, plan.segments32, plan.chunk_frame32, stream);
  launch_index(plan.chunks64, b.num_frames, plan.segments64, plan.chunk_frame64, stream);

  launch_encode_pass<std::uint32_t>(true, a32, plan.segments32, stream);
  launch_encode_pass<std::uint64_t>(true, a64, plan.segments64, stream);

  // offsets[0] = 0, offsets[1 + s] = sizes[0] + ... + sizes[s]: per-frame totals and each
  // segment's place inside its frame's data section come out of one scan.
  std::uint64_t const segments = plan.segments32 + plan.segments64;
  ZS_CUDA_TRY(cudaMemsetAsync(plan.offsets, 0, sizeof(prog::scheme_words), stream));
  if (segments > 0) {
    std::size_t bytes = plan.scan_temp_bytes;
    ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(plan.scan_temp, bytes, plan.sizes, plan.offsets + 1, add_words{},
                                               segments, stream));
  }

  choose_kernel<<<frame_grid(b.num_frames), frame_threads, 0, stream>>>(a);
  ZS_CUDA_CHECK_LAUNCH();

  launch_encode_pass<std::uint32_t>(false, a32, plan.segments32, stream);
  launch_encode_pass<std::uint64_t>(false, a64, plan.segments64, stream);
}

void decode(const decode_plan& plan, cudaStream_t stream) {
  check_config(plan.config);
  auto const& b = plan.batch;
  if (b.num_frames == 0) return;
  prog::decode_args a{b.frames, b.frame_offsets, b.targets, b.status, b.num_frames, plan.layouts, nullptr, 0, nullptr};

  check_frames_kernel<<<frame_grid(b.num_frames), frame_threads, 0, stream>>>(a);
  ZS_CUDA_CHECK_LAUNCH();

  if (plan.num_checks > 0) {
    prog::decode_args v = a;
    v.chunks = plan.checks;
    validate_kernel<<<grid_for(plan.num_checks, "validation chunks"), validate_segments_per_cta, 0, stream>>>(v);
    ZS_CUDA_CHECK_LAUNCH();
  }

  if (plan.config.threads == 256) {
    launch_decodes<256>(plan, a, stream);
  } else {
    launch_decodes<128>(plan, a, stream);
  }
}

}  // namespace zs::kernels::bitpack
