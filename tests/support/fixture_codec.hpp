// A codec that exists to test the codec framework: "fixture_choose" (private-use id 24).
//
// For each column it asks the estimate hook which of bitpack and raw makes smaller frames of
// the column's sample, keeps the answer as the column's parameters (format version 2), and
// writes each frame's body as an embedded frame of that codec with that codec's own encoder
// and kernels. So it goes through every path a composite codec with column parameters takes
// (preparation from a sample, batched over columns; parameters copied into every frame;
// another codec writing a section; one checksum per frame; validation of the parameter
// prefix) without kernels of its own. Its GPU path reads the choices and the inner frames'
// sizes back to the host, which a real codec would not.
#pragma once

#include "zs/codec.hpp"

namespace zs::test {

inline constexpr codec_id fixture_codec_id = static_cast<codec_id>(first_private_codec_id);

/// Registers the fixture codec (once; later calls do nothing) and returns it.
const codec& register_fixture_codec();

}  // namespace zs::test
