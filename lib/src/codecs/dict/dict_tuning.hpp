// The dict codec's kernel spec (zs/tuning.hpp), registered when the library loads.
#pragma once

#include "zs/tuning.hpp"

namespace zs::codecs {

/// "dict_chunks": the dict kernels that go through frames a chunk of `items` rows at a time (the
/// encoder's search for distinct values and its coding of rows, the decoder's replacement of
/// codes; kernels/dict).
extern const kernel_spec& dict_chunks_spec;

}  // namespace zs::codecs
