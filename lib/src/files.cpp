#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "zs/error.hpp"

namespace zs::detail {
namespace {

std::string_view kind_of(mode_t mode) noexcept {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
class file_descriptor {
 public:
  explicit file_descriptor(int fd) noexcept : fd_(fd) {}
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, std::string_view what, std::uint64_t max_bytes) {
  std::string const name = std::string(what) + " '" + path.string() + "'";
  // Without O_NONBLOCK, opening a FIFO waits for a writer; the descriptor's own type is then
  // checked, so a path swapped after a check elsewhere cannot slip through.
  file_descriptor const fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) ZS_FAIL(error_code::io_error, "cannot open " + name + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) ZS_FAIL(error_code::io_error, "cannot stat " + name + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    ZS_FAIL(error_code::io_error, name + " is " + std::string(kind_of(info.st_mode)) + ", not a regular file");
  }
  auto const size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes) {
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    std::string const limit =
        max_bytes % mib == 0 ? std::to_string(max_bytes / mib) + " MiB" : std::to_string(max_bytes) + " bytes";
    ZS_FAIL(error_code::io_error, name + " holds " + std::to_string(size) + " bytes, more than the " + limit +
                                      " a " + std::string(what) + " may hold");
  }
  std::string bytes;
  try {
    bytes.resize(size);
  } catch (const std::exception&) {  // bad_alloc, or length_error beyond what a string can hold
    ZS_FAIL(error_code::out_of_memory,
            name + " holds " + std::to_string(size) + " bytes, more than this host can allocate");
  }
  std::uint64_t done = 0;
  while (done < size) {
    ssize_t const got = ::read(fd.get(), bytes.data() + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ZS_FAIL(error_code::io_error, "cannot read " + name + ": " + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  char extra = 0;
  if (done != size || ::read(fd.get(), &extra, 1) > 0) {
    ZS_FAIL(error_code::io_error, name + " changed size while it was read (" + std::to_string(size) + " bytes when opened)");
  }
  return bytes;
}

}  // namespace zs::detail
