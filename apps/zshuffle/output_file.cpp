#include "output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "zs/error.hpp"

namespace zs::cli {

std::string json_text(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

output_file::output_file(std::string option, std::filesystem::path path)
    : option_(std::move(option)), path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  if (path_.empty()) fail("no path given");
  if (fs::is_directory(path_, ignored)) fail("is a folder, not a file");
  fs::path const folder = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ignored)) fail("its folder '" + folder.string() + "' does not exist");
  // Appending creates a missing file and leaves an existing one as it is.
  bool const existed = fs::exists(path_, ignored);
  std::FILE* file = std::fopen(path_.c_str(), "a");
  if (file == nullptr) fail(std::string("cannot be opened for writing: ") + std::strerror(errno));
  std::fclose(file);
  // A run that fails later leaves no empty file behind.
  if (!existed) fs::remove(path_, ignored);
}

void output_file::write_text(std::string_view text) const {
  std::FILE* file = std::fopen(path_.c_str(), "w");
  if (file == nullptr) fail(std::string("cannot be opened for writing: ") + std::strerror(errno));
  bool const written = std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
  int const write_errno = errno;
  bool const closed = std::fclose(file) == 0;
  if (!written || !closed) {
    fail(std::string("writing the results failed: ") + std::strerror(written ? errno : write_errno));
  }
}

void output_file::write_json(const nlohmann::json& value) const {
  write_text(json_text(value));
}

void output_file::fail(const std::string& problem) const {
  ZS_FAIL(error_code::io_error, option_ + " '" + path_.string() + "': " + problem);
}

}  // namespace zs::cli
