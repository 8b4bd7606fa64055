// The alp codec's tuned kernels (zs/tuning.hpp): their specs, registered when the library loads.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "alp_encode": the sizing and writing passes of the encoder, a warp per 1024-value vector.
extern const kernel_spec& alp_encode_spec;
/// "alp_decode": the decoder, a warp per 1024-value vector.
extern const kernel_spec& alp_decode_spec;

}  // namespace zs::codecs
