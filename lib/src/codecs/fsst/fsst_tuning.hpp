// The fsst codec's tuned kernels (zs/tuning.hpp): their specs, registered when the library loads.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "fsst_encode": the split encoder (kernels/fsst/fsst_warp.hpp), a warp per split, a block per
/// group of threads / 32 splits of one frame with the frame's encoder tables in shared memory.
extern const kernel_spec& fsst_encode_spec;
/// "fsst_decode": the split checker and decoder, a warp per split (kernels/fsst/fsst_warp.hpp), a
/// block per group of threads / 32 splits of one frame with the frame's table in shared memory.
extern const kernel_spec& fsst_decode_spec;

}  // namespace zs::codecs
