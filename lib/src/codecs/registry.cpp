#include "codecs/registry.hpp"

#include <array>

#include "codecs/bitpack_codec.hpp"
#include "codecs/raw_codec.hpp"

namespace zs::codecs {

std::span<const codec* const> registered() {
  static const raw_codec raw;
  static const bitpack_codec bitpack;
  static const std::array<const codec*, 2> all{&raw, &bitpack};
  return all;
}

}  // namespace zs::codecs
