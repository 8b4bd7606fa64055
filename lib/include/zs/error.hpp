// Errors: one exception type, an error code, and where it happened.
//
// Every failing CUDA, NCCL or MPI call and every broken precondition becomes a zs::error that
// carries its code and the file:line of the check. what() is for users and names no source
// file ("zshuffle: out of memory: host allocation of ... bytes failed"); where() gives the place
// for a debug log. Destructors use the *_NOTHROW variants, which report to stderr instead of
// throwing.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zs {

enum class error_code : std::uint8_t {
  invalid_argument,  // a caller broke a documented precondition
  unsupported,       // a value type or codec that the operation does not handle
  out_of_memory,     // a device or pinned host allocation failed
  corrupt_frame,     // a frame failed validation (bad magic, sizes, checksum ...)
  size_mismatch,     // ranks or buffers disagree on a size
  cuda_error,        // a CUDA runtime call failed
  nccl_error,        // an NCCL call failed
  mpi_error,         // an MPI call failed
  io_error,          // reading or writing a file failed
  timed_out,         // a peer did not answer within the communicator's timeout
  internal,          // a bug in zshuffle
};

std::string_view to_string(error_code code) noexcept;

/// what() is "zshuffle: <code>: <message>", with no source place.
class error : public std::runtime_error {
 public:
  /// `file` must outlive the error (the __FILE__ literal of the check).
  error(error_code code, std::string_view message, const char* file, int line);

  error_code code() const noexcept { return code_; }
  /// The message alone, without the "zshuffle: <code>: " of what(): for callers that put it in
  /// a sentence of their own.
  const std::string& message() const noexcept { return message_; }
  /// The source file of the check, as the compiler named it (often an absolute path).
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  /// The place of the check relative to the zshuffle source tree, "lib/src/column.cpp:30";
  /// a file outside the tree (a caller's, through these macros) keeps its full name.
  std::string where() const;

 private:
  error_code code_;
  std::string message_;
  const char* file_;
  int line_;
};

namespace detail {
[[noreturn]] void throw_error(error_code code, std::string_view message, const char* file, int line);
[[noreturn]] void throw_cuda_error(int status, const char* call, const char* file, int line);
void report_cuda_error(int status, const char* call, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace zs

/// Throws zs::error(code, message) carrying this file and line.
#define ZS_FAIL(code, message) ::zs::detail::throw_error((code), (message), __FILE__, __LINE__)

/// Checks a precondition; throws zs::error_code::invalid_argument with `message` when it fails.
#define ZS_EXPECTS(condition, message)                                                          \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      ::zs::detail::throw_error(::zs::error_code::invalid_argument,                             \
                                std::string("expected ") + #condition + ": " + (message),       \
                                __FILE__, __LINE__);                                            \
    }                                                                                           \
  } while (0)

/// Runs a CUDA runtime call; throws zs::error (cuda_error, or out_of_memory) when it fails.
#define ZS_CUDA_TRY(call)                                                                       \
  do {                                                                                          \
    auto const zs_cuda_status_ = (call);                                                        \
    if (zs_cuda_status_ != 0) {                                                                 \
      ::zs::detail::throw_cuda_error(static_cast<int>(zs_cuda_status_), #call, __FILE__,        \
                                     __LINE__);                                                 \
    }                                                                                           \
  } while (0)

/// Like ZS_CUDA_TRY, for destructors and other places that must not throw: reports to stderr.
#define ZS_CUDA_TRY_NOTHROW(call)                                                               \
  do {                                                                                          \
    auto const zs_cuda_status_ = (call);                                                        \
    if (zs_cuda_status_ != 0) {                                                                 \
      ::zs::detail::report_cuda_error(static_cast<int>(zs_cuda_status_), #call, __FILE__,       \
                                      __LINE__);                                                \
    }                                                                                           \
  } while (0)

/// Checks the launch that just happened (launch configuration errors surface here).
#define ZS_CUDA_CHECK_LAUNCH() ZS_CUDA_TRY(cudaGetLastError())
