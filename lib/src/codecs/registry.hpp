// How a codec built in registers itself: one line in its folder,
//
//   ZS_REGISTER_CODEC(fsst_codec);
//
// which makes one instance when the library loads and hands it to zs::register_codec. CMake
// compiles every source of the folders named in ZS_CODEC_FAMILIES (lib/CMakeLists.txt), so a
// new codec family is its two folders (lib/src/codecs/<family>, kernels/<family>), this line,
// and its name in that list. docs/ARCHITECTURE.md, "Adding a codec", walks through one.
#pragma once

#include "zs/codec.hpp"

namespace zs::codecs {

template <typename Codec>
bool register_builtin() {
  static const Codec instance;
  register_codec(instance);
  return true;
}

}  // namespace zs::codecs

#define ZS_REGISTER_CODEC(Codec)                                          \
  namespace {                                                             \
  [[maybe_unused]] const bool zs_registered_##Codec = ::zs::codecs::register_builtin<Codec>(); \
  }
