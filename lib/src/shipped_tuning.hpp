// The tuning tables shipped in tuning/*.json, compiled into the library (lib/CMakeLists.txt
// generates the definition), so that no installed path has to be found at run time.
#pragma once

#include <span>
#include <string_view>

namespace zs::detail {

struct shipped_table_text {
  std::string_view file;  // its name in tuning/
  std::string_view json;  // its text
};

std::span<const shipped_table_text> shipped_table_texts() noexcept;

}  // namespace zs::detail
