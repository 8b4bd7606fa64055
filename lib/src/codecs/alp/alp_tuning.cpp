// The alp codec's kernel specs, registered when the library loads (zs::register_kernel).
#include "codecs/alp/alp_tuning.hpp"

#include <array>

namespace zs::codecs {
namespace {

constexpr std::array<unsigned, 4> vector_kernel_threads{32, 64, 128, 256};

}  // namespace

const kernel_spec& alp_encode_spec = register_kernel({
    .name = "alp_encode",
    .defaults = {64, default_launch_waves, 0},
    .threads = vector_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = {.codec = "alp", .calls = tune_calls::encode, .types = tuned_types::each, .compares = {.frames = true}},
    .what = "alp encode passes (vector choices and sizes, then vectors), a warp per 1024-value vector",
});

const kernel_spec& alp_decode_spec = register_kernel({
    .name = "alp_decode",
    .defaults = {128, default_launch_waves, 0},
    .threads = vector_kernel_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = {.codec = "alp", .calls = tune_calls::decode, .types = tuned_types::each, .compares = {.decoded_values = true}},
    .what = "alp decode, a warp per 1024-value vector",
});

}  // namespace zs::codecs
