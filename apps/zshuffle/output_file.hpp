// A file a command writes its results to when a run ends (--json, --markdown). The path is
// checked when the run starts, so that a bad one costs nothing, and the write is checked when it
// ends, so that results are never lost without a word.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace zs::cli {

/// `value` as the JSON text every command writes: indented, a newline at the end; strings are
/// escaped by the library, and bytes that are not UTF-8 (file names may hold any) become U+FFFD.
std::string json_text(const nlohmann::json& value);

class output_file {
 public:
  /// Checks that `path` can be written: it is not a folder, its folder exists, and it opens for
  /// writing (a file that exists is left as it is until a write). Throws zs::error (io_error)
  /// naming `option` and the path, and what is wrong.
  output_file(std::string option, std::filesystem::path path);

  /// Replaces the file's content with `text`. Throws zs::error (io_error) unless every byte
  /// reached the file (a full disk, /dev/full).
  void write_text(std::string_view text) const;
  /// Writes json_text(value).
  void write_json(const nlohmann::json& value) const;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  [[noreturn]] void fail(const std::string& problem) const;

  std::string option_;
  std::filesystem::path path_;
};

}  // namespace zs::cli
