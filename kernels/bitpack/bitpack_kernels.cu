// The bitpack codec's kernels: thin CUDA wrappers around the thread-block programs of
// bitpack_programs.hpp, the device-wide scan between the encoder's passes, and the launchers.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <string>
#include <type_traits>

#include "bitpack/bitpack_kernels.hpp"
#include "bitpack/bitpack_programs.hpp"
#include "common/launch.hpp"
#include "zs/error.hpp"

namespace zs::kernels::bitpack {
namespace {

namespace prog = zs::bitpack::gpu;
using zs::bitpack::frame_layout;

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

// Kernels loop over their work units with a grid stride: the grid comes from the device
// (common/launch.hpp). Programs that use shared memory finish each unit with a barrier, since
// the next unit of the same block reuses it.

__global__ void index_kernel(const std::uint64_t* chunks, std::uint64_t num_frames, std::uint64_t num_chunks,
                             std::uint32_t* chunk_frame) {
  for (std::uint64_t c = first_item(); c < num_chunks; c += item_stride()) {
    prog::index_chunk(chunks, num_frames, c, chunk_frame);
  }
}

template <typename U, int Threads>
__global__ void __launch_bounds__(Threads) analyze_kernel(prog::encode_args a, std::uint64_t segments) {
  __shared__ prog::analyze_smem<U> sm;
  cuda_block<Threads> blk;
  for (std::uint64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    prog::analyze_program(blk, a, s, sm);
    __syncthreads();
  }
}

template <typename U, int Threads>
__global__ void __launch_bounds__(Threads) pack_kernel(prog::encode_args a, std::uint64_t segments) {
  __shared__ prog::pack_smem<U> sm;
  cuda_block<Threads> blk;
  for (std::uint64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    prog::pack_program(blk, a, s, sm);
    __syncthreads();
  }
}

__global__ void choose_kernel(prog::encode_args a) {
  for (std::uint64_t f = first_item(); f < a.num_frames; f += item_stride()) prog::choose_frame(a, f);
}

__global__ void check_frames_kernel(prog::decode_args a) {
  for (std::uint64_t f = first_item(); f < a.num_frames; f += item_stride()) prog::check_frame(a, f);
}

template <int Threads>
__global__ void __launch_bounds__(Threads) validate_kernel(prog::decode_args a, std::uint64_t num_checks) {
  cuda_block<Threads> blk;
  for (std::uint64_t c = blockIdx.x; c < num_checks; c += gridDim.x) prog::validate_program(blk, a, c);
}

__global__ void plan_kernel(prog::decode_args a, std::uint64_t num_chunks) {
  for (std::uint64_t c = first_item(); c < num_chunks; c += item_stride()) prog::plan_chunk(a, c);
}

template <typename U, int Threads>
__global__ void __launch_bounds__(Threads) decode_kernel(prog::decode_args a, std::uint64_t num_chunks) {
  extern __shared__ __align__(16) unsigned char decode_shared[];
  cuda_block<Threads> blk;
  for (std::uint64_t c = blockIdx.x; c < num_chunks; c += gridDim.x) {
    prog::decode_program<cuda_block<Threads>, U>(blk, a, c, reinterpret_cast<std::byte*>(decode_shared));
    __syncthreads();
  }
}

template <class Kernel, class... Args>
void launch_per_item(Kernel kernel, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

void expect_params(const launch_choice& choice, kernel_id kernel) {
  ZS_EXPECTS(choice.kernel == kernel && valid_params(kernel, choice.params),
             std::string(to_string(kernel)) + " launch params (" + check_params(kernel, choice.params) + ")");
}

// Calls f(std::integral_constant<int, T>{}) for the block size T = threads, one of the sizes the
// kernels are built for.
template <class F>
void with_threads(unsigned threads, F&& f) {
  switch (threads) {
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    default: ZS_FAIL(error_code::internal, "bitpack kernels not built for " + std::to_string(threads) + " threads");
  }
}

template <typename U>
void launch_encode_pass(bool analyze, const launch_choice& choice, const prog::encode_args& a,
                        std::uint64_t segments, cudaStream_t stream) {
  if (segments == 0) return;
  expect_params(choice, analyze ? kernel_id::bitpack_analyze : kernel_id::bitpack_pack);
  with_threads(choice.params.threads, [&](auto threads) {
    constexpr int T = decltype(threads)::value;
    auto const kernel = analyze ? analyze_kernel<U, T> : pack_kernel<U, T>;
    launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, segments);
    observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, T, 0, stream>>>(a, segments); });
  });
}

template <typename U>
void launch_decode(const launch_choice& choice, prog::decode_args a, std::uint64_t chunks, cudaStream_t stream) {
  if (chunks == 0) return;
  launch_per_item(plan_kernel, chunks, stream, a, chunks);
  std::uint32_t const bytes = prog::decode_smem_layout<U>(a.segments_per_chunk).bytes;
  auto const launch = [&](auto threads) {
    constexpr int T = decltype(threads)::value;
    auto const kernel = decode_kernel<U, T>;
    // The kernel's own static shared memory (the block scans) comes on top of `bytes`, so the
    // limit is raised for every size rather than from 48 KiB of dynamic memory on; before the
    // occupancy query, which counts against it.
    ZS_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, chunks, bytes);
    observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, T, bytes, stream>>>(a, chunks); });
  };
  if (choice.params.threads == 256) {
    launch(std::integral_constant<int, 256>{});
  } else {
    launch(std::integral_constant<int, 128>{});
  }
}

}  // namespace

void check_config(const decode_config& config) {
  ZS_EXPECTS(config.blocks_per_cta % zs::bitpack::tile_blocks == 0 && config.blocks_per_cta >= 4 &&
                 config.blocks_per_cta <= 32,
             "blocks per thread block a multiple of 4 from 4 to 32");
  ZS_EXPECTS(config.threads == 128 || config.threads == 256, "128 or 256 threads per thread block");
}

launch_choice fixed_decode_choice(const decode_config& config, std::optional<value_type> type,
                                  std::uint64_t batch_bytes) {
  check_config(config);
  launch_choice c;
  c.kernel = kernel_id::bitpack_decode;
  c.type = type;
  c.size = size_class_of(batch_bytes);
  c.batch_bytes = batch_bytes;
  c.params = spec_of(kernel_id::bitpack_decode).defaults;
  c.params.threads = config.threads;
  c.params.items = config.blocks_per_cta;
  return c;
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

  launch_per_item(index_kernel, plan.segments32, stream, plan.chunks32, std::uint64_t{b.num_frames},
                  plan.segments32, plan.chunk_frame32);
  launch_per_item(index_kernel, plan.segments64, stream, plan.chunks64, std::uint64_t{b.num_frames},
                  plan.segments64, plan.chunk_frame64);

  launch_encode_pass<std::uint32_t>(true, plan.analyze32, a32, plan.segments32, stream);
  launch_encode_pass<std::uint64_t>(true, plan.analyze64, a64, plan.segments64, stream);

  // offsets[0] = 0, offsets[1 + s] = sizes[0] + ... + sizes[s]: per-frame totals and each
  // segment's place inside its frame's data section come out of one scan.
  std::uint64_t const segments = plan.segments32 + plan.segments64;
  ZS_CUDA_TRY(cudaMemsetAsync(plan.offsets, 0, sizeof(prog::scheme_words), stream));
  if (segments > 0) {
    std::size_t bytes = plan.scan_temp_bytes;
    ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(plan.scan_temp, bytes, plan.sizes, plan.offsets + 1, add_words{},
                                               segments, stream));
  }

  launch_per_item(choose_kernel, b.num_frames, stream, a);

  launch_encode_pass<std::uint32_t>(false, plan.pack32, a32, plan.segments32, stream);
  launch_encode_pass<std::uint64_t>(false, plan.pack64, a64, plan.segments64, stream);
}

void decode(const decode_plan& plan, cudaStream_t stream) {
  auto const& b = plan.batch;
  if (b.num_frames == 0) return;
  expect_params(plan.validate, kernel_id::bitpack_validate);
  expect_params(plan.decode32, kernel_id::bitpack_decode);
  expect_params(plan.decode64, kernel_id::bitpack_decode);
  prog::decode_args a{b.frames, b.frame_offsets, b.targets, b.status, b.num_frames, plan.layouts, nullptr, 0, nullptr};

  launch_per_item(check_frames_kernel, b.num_frames, stream, a);

  if (plan.num_checks > 0) {
    prog::decode_args v = a;
    v.chunks = plan.checks;
    with_threads(plan.validate.params.threads, [&](auto threads) {
      constexpr int T = decltype(threads)::value;
      auto const kernel = validate_kernel<T>;
      launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), plan.validate, plan.num_checks);
      observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, T, 0, stream>>>(v, plan.num_checks); });
    });
  }

  a.chunks = plan.chunks32;
  a.plans = plan.plans32;
  a.segments_per_chunk = segments_per_cta(config_of(plan.decode32.params), 32);
  launch_decode<std::uint32_t>(plan.decode32, a, plan.num_chunks32, stream);
  a.chunks = plan.chunks64;
  a.plans = plan.plans64;
  a.segments_per_chunk = segments_per_cta(config_of(plan.decode64.params), 64);
  launch_decode<std::uint64_t>(plan.decode64, a, plan.num_chunks64, stream);
}

}  // namespace zs::kernels::bitpack
