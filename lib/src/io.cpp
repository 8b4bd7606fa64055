#include "zs/io.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "files.hpp"

namespace zs::io {

std::optional<value_type> type_of_file(const std::filesystem::path& path) {
  auto const ext = path.extension().string();
  if (ext == ".txt") return value_type::string;
  if (ext == ".i8") return value_type::int8;
  if (ext == ".i16") return value_type::int16;
  if (ext == ".u8") return value_type::uint8;
  if (ext == ".b8") return value_type::bool8;
  if (ext == ".u16") return value_type::uint16;
  if (ext == ".i32") return value_type::int32;
  if (ext == ".u32") return value_type::uint32;
  if (ext == ".i64") return value_type::int64;
  if (ext == ".u64") return value_type::uint64;
  if (ext == ".i128") return value_type::int128;
  if (ext == ".f32") return value_type::float32;
  if (ext == ".f64") return value_type::float64;
  return std::nullopt;
}

column read_column(const std::filesystem::path& path) {
  auto const type = type_of_file(path);
  if (!type) ZS_FAIL(error_code::io_error, "'" + path.string() + "' has no column file extension");
  std::string const bytes = detail::read_regular_file(path, "column file");
  if (*type != value_type::string) {
    std::size_t const width = value_width(*type);
    if (bytes.size() % width != 0) {
      ZS_FAIL(error_code::io_error, "'" + path.string() + "' holds " + std::to_string(bytes.size()) +
                                        " bytes, not a multiple of " + std::to_string(width));
    }
    column c = column::allocate(*type, bytes.size() / width, memory_kind::host);
    if (!bytes.empty()) std::memcpy(c.mutable_view().data, bytes.data(), bytes.size());
    return c;
  }
  // One string per line; the last line may lack its newline.
  std::uint64_t rows = static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  if (!bytes.empty() && bytes.back() != '\n') ++rows;
  std::uint64_t const chars = bytes.size() - static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  column c = column::allocate(value_type::string, rows, memory_kind::host, nullptr, chars);
  auto v = c.mutable_view();
  auto* out = static_cast<char*>(v.data);
  std::int64_t pos = 0;
  std::uint64_t row = 0;
  v.offsets[0] = 0;
  std::size_t start = 0;
  while (start < bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::memcpy(out + pos, bytes.data() + start, end - start);
    pos += static_cast<std::int64_t>(end - start);
    v.offsets[++row] = pos;
    start = end + 1;
  }
  return c;
}

std::vector<std::filesystem::path> list_columns(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code unreadable;  // an entry that cannot be examined (a dangling link) is no column file
    if (it->is_regular_file(unreadable) && type_of_file(it->path())) files.push_back(it->path());
  }
  if (ec) ZS_FAIL(error_code::io_error, "cannot list the column files of '" + dir.string() + "': " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::filesystem::path data_dir() {
  const char* env = std::getenv("ZS_DATA_DIR");
  if (env == nullptr || *env == '\0') {
    ZS_FAIL(error_code::io_error,
            "ZS_DATA_DIR is not set: point it at the decompressed data (scripts/prepare-data)");
  }
  std::filesystem::path dir(env);
  if (!std::filesystem::is_directory(dir)) {
    ZS_FAIL(error_code::io_error, "ZS_DATA_DIR='" + dir.string() + "' is not a directory");
  }
  return dir;
}

}  // namespace zs::io
