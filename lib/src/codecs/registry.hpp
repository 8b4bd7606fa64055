// The built-in codecs. Each codec family adds its instance in registry.cpp.
#pragma once

#include <span>

#include "zs/codec.hpp"

namespace zs::codecs {
std::span<const codec* const> registered();
}
