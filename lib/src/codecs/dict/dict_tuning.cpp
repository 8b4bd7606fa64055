// The dict codec's kernel spec. Not swept by `zshuffle tune`: its passes beside bitpack_ext's are
// bound by their hash probes and binary searches more than by the launch shape; a tuning table
// entry still applies.
#include "codecs/dict/dict_tuning.hpp"

#include <array>

#include "dict/dict_kernels.hpp"

namespace zs::codecs {
namespace {

constexpr std::array<unsigned, 3> chunk_threads{128, 256, 512};
constexpr std::array<unsigned, 3> chunk_items{4096, 16384, 65536};

}  // namespace

const kernel_spec& dict_chunks_spec = register_kernel({
    .name = kernels::dict::chunks_kernel_name,
    .defaults = {256, default_launch_waves, 16384},
    .threads = chunk_threads,
    .items = chunk_items,
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "dict codec: find distinct values, code rows and replace codes a chunk of rows at a time; items = rows per chunk",
});

}  // namespace zs::codecs
