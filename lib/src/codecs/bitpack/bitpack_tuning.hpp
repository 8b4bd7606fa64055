// The bitpack codec's tuned kernels (zs/tuning.hpp): their specs, registered when the library
// loads. Each is a warp kernel: its block sizes are whole warps.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "bitpack_analyze": encode pass 1 and the sample pass before it, a warp per 512-value segment.
extern const kernel_spec& bitpack_analyze_spec;
/// "bitpack_pack": encode pass 2 (and the repack of segments encoded again), a warp per segment.
extern const kernel_spec& bitpack_pack_spec;
/// "bitpack_decode": decode, a warp per tile; `items` is D, the 128-value blocks of a tile.
extern const kernel_spec& bitpack_decode_spec;

}  // namespace zs::codecs
