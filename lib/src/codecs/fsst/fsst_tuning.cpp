// The fsst codec's kernel specs, registered when the library loads (zs::register_kernel).
#include "codecs/fsst/fsst_tuning.hpp"

#include <array>

namespace zs::codecs {
namespace {

// A block is a group of splits of one frame, a warp each; the last group of a frame leaves warps
// idle, so blocks stay small.
constexpr std::array<unsigned, 4> split_threads{32, 64, 128, 256};

}  // namespace

const kernel_spec& fsst_encode_spec = register_kernel({
    .name = "fsst_encode",
    // Four warps (four splits) a block, each with 4 KiB of shared memory (its output ring and
    // the lanes' staging), beside the block's 15 KB of encoder tables: seven blocks fit on an SM.
    .defaults = {128, default_launch_waves, 0},
    .threads = split_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = {.codec = "fsst",
             .calls = tune_calls::encode,
             .types = tuned_types::one,
             .type = value_type::string,
             .compares = {.frames = true}},
    .what = "fsst encode: a warp per 16 KiB split (lanes parse 16-byte pieces and hand over where parses meet), "
            "the frame's encoder tables and a 4 KiB ring and staging per warp in shared memory, 16-byte stores",
});

const kernel_spec& fsst_decode_spec = register_kernel({
    .name = "fsst_decode",
    // Four warps (four splits) a block, each with a 4 KiB output ring in shared memory: a dozen
    // blocks fit on an SM.
    .defaults = {128, default_launch_waves, 0},
    .threads = split_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = true,
    .tune = {.codec = "fsst",
             .calls = tune_calls::decode,
             .types = tuned_types::one,
             .type = value_type::string,
             .compares = {.decoded_offsets = true}},
    .what = "fsst check and decode: a warp per split, the table and a 4 KiB output ring per warp in shared memory, 16-byte stores",
});

}  // namespace zs::codecs
