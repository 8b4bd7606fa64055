#include "codecs/registry.hpp"

#include <array>

#include "codecs/raw_codec.hpp"

namespace zs::codecs {

std::span<const codec* const> registered() {
  static const raw_codec raw;
  static const std::array<const codec*, 1> all{&raw};
  return all;
}

}  // namespace zs::codecs
