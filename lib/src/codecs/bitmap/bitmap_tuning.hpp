// The bitmap codec's kernel spec (zs/tuning.hpp), registered when the library loads.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "bitmap_chunks": the bitmap kernels that go through frames a chunk of `items` rows at a time
/// (the encoder's scan and write, the decoder's write; kernels/bitmap).
extern const kernel_spec& bitmap_chunks_spec;

}  // namespace zs::codecs
