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

// zshuffle tune measures each integer type on its own: the encode passes inside bitpack encode,
// which must write the same frames under every geometry; the decoder inside bitpack decode of
// frames encoded once, which must give the same values.
constexpr tune_workload encode_workload{.codec = "bitpack",
                                        .calls = tune_calls::encode,
                                        .types = tuned_types::each,
                                        .compares = {.frames = true}};
constexpr tune_workload decode_workload{.codec = "bitpack",
                                        .calls = tune_calls::decode,
                                        .types = tuned_types::each,
                                        .compares = {.decoded_values = true}};

}  // namespace

const kernel_spec& bitpack_analyze_spec = register_kernel({
    .name = "bitpack_analyze",
    .defaults = {128, default_launch_waves, 0},
    .threads = warp_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = encode_workload,
    .what = "bitpack encode pass 1: scheme sizes of each 512-value segment, a warp per segment",
});

const kernel_spec& bitpack_pack_spec = register_kernel({
    .name = "bitpack_pack",
    .defaults = {128, default_launch_waves, 0},
    .threads = warp_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = encode_workload,
    .what = "bitpack encode pass 2: each segment in its frame's scheme, a warp per segment",
});

const kernel_spec& bitpack_decode_spec = register_kernel({
    .name = "bitpack_decode",
    .defaults = {128, default_launch_waves, 4},
    .threads = warp_kernel_threads,
    .items = decode_items,
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = decode_workload,
    .what = "bitpack decode, a warp per tile: items = 128-value blocks per tile (D)",
});

}  // namespace zs::codecs
