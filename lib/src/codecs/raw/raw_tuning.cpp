// The raw codec's kernel specs, registered when the library loads (zs::register_kernel).
#include "codecs/raw/raw_tuning.hpp"

#include <array>

namespace zs::codecs {
namespace {

constexpr std::array<unsigned, 4> offsets_threads{128, 256, 512, 1024};
constexpr std::array<unsigned, 5> offsets_items{512, 1024, 2048, 4096, 8192};

}  // namespace

const kernel_spec& raw_offsets_spec = register_kernel({
    .name = "raw_offsets",
    .defaults = {256, default_launch_waves, 2048},
    .threads = offsets_threads,
    .items = offsets_items,
    .max_waves = max_launch_waves,
    .swept = true,
    // Raw encode and decode of strings; tune sizes a string batch by its offsets, the work here.
    .tune = {.codec = "raw",
             .calls = tune_calls::encode_and_decode,
             .types = tuned_types::one,
             .type = value_type::string,
             .compares = {.headers = true, .decoded_offsets = true}},
    .what = "raw codec string offsets (encode, check, decode); items = offsets per chunk",
});

}  // namespace zs::codecs
