// The bitpack codec's kernel specs, registered when the library loads (zs::register_kernel).
#include "codecs/bitpack/bitpack_tuning.hpp"

#include <array>

namespace zs::codecs {
namespace {

// The warp kernels are compiled for at most 256 threads a block (__launch_bounds__ in
// kernels/bitpack/bitpack_kernels.cu).
constexpr std::array<unsigned, 3> warp_kernel_threads{64, 128, 256};
// D: 4, 8 or 16 blocks of 128 values, tiles of 1, 2 or 4 segments (kernels/bitpack::decode_config).
constexpr std::array<unsigned, 3> decode_items{4, 8, 16};

}  // namespace

const kernel_spec& bitpack_analyze_spec = register_kernel({
    .name = "bitpack_analyze",
    .defaults = {128, default_launch_waves, 0},
    .threads = warp_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .what = "bitpack encode pass 1: scheme sizes of each 512-value segment, a warp per segment",
});

const kernel_spec& bitpack_pack_spec = register_kernel({
    .name = "bitpack_pack",
    .defaults = {128, default_launch_waves, 0},
    .threads = warp_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .what = "bitpack encode pass 2: each segment in its frame's scheme, a warp per segment",
});

const kernel_spec& bitpack_decode_spec = register_kernel({
    .name = "bitpack_decode",
    .defaults = {128, default_launch_waves, 4},
    .threads = warp_kernel_threads,
    .items = decode_items,
    .max_waves = max_launch_waves,
    .swept = true,
    .what = "bitpack decode, a warp per tile: items = 128-value blocks per tile (D)",
});

}  // namespace zs::codecs
