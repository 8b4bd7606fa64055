// The bitmap codec's kernel spec. Not swept by `zshuffle tune`: its kernels move a byte a row of
// columns that are small beside the data they describe (null masks), so their defaults do; a
// tuning table entry still applies.
#include "codecs/bitmap/bitmap_tuning.hpp"

#include <array>

#include "bitmap/bitmap_kernels.hpp"

namespace zs::codecs {
namespace {

// Chunks are whole multiples of every block size, so each warp of a block takes whole groups of
// 32 rows: the bits of a group are one warp vote (kernels/bitmap/bitmap_kernels.cu).
constexpr std::array<unsigned, 4> chunk_threads{128, 256, 512, 1024};
constexpr std::array<unsigned, 4> chunk_items{1024, 4096, 16384, 65536};

}  // namespace

const kernel_spec& bitmap_chunks_spec = register_kernel({
    .name = kernels::bitmap::chunks_kernel_name,
    .defaults = {256, default_launch_waves, 4096},
    .threads = chunk_threads,
    .items = chunk_items,
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "bitmap codec: scan, write and decode a chunk of rows at a time; items = rows per chunk",
});

}  // namespace zs::codecs
