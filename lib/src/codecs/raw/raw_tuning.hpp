// The raw codec's tuned kernels (zs/tuning.hpp): their specs, registered when the library loads.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "raw_offsets": the string-offset kernels of encode, check and decode (kernels/raw), which
/// take a chunk of `items` string offsets at a time.
extern const kernel_spec& raw_offsets_spec;

}  // namespace zs::codecs
