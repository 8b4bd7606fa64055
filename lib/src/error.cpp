#include "zs/error.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "zs/log.hpp"

#ifndef ZS_SOURCE_DIR
#error "ZS_SOURCE_DIR (the source tree's absolute path) is defined by lib/CMakeLists.txt"
#endif

namespace zs {

std::string_view to_string(error_code code) noexcept {
  switch (code) {
    case error_code::invalid_argument: return "invalid argument";
    case error_code::unsupported: return "unsupported";
    case error_code::out_of_memory: return "out of memory";
    case error_code::corrupt_frame: return "corrupt frame";
    case error_code::size_mismatch: return "size mismatch";
    case error_code::cuda_error: return "CUDA error";
    case error_code::nccl_error: return "NCCL error";
    case error_code::mpi_error: return "MPI error";
    case error_code::io_error: return "I/O error";
    case error_code::timed_out: return "timed out";
    case error_code::internal: return "internal error";
  }
  return "unknown error";
}

namespace {
std::string describe(error_code code, std::string_view message) {
  std::string text = "zshuffle: ";
  text += to_string(code);
  text += ": ";
  text += message;
  return text;
}
}  // namespace

error::error(error_code code, std::string_view message, const char* file, int line)
    : std::runtime_error(describe(code, message)), code_(code), message_(message), file_(file), line_(line) {}

std::string error::where() const {
  // The build gives the source tree's absolute path; the compiler names files under it.
  constexpr std::string_view tree = ZS_SOURCE_DIR "/";
  std::string_view place = file_ != nullptr ? file_ : "unknown file";
  if (place.starts_with(tree)) place.remove_prefix(tree.size());
  return std::string(place) + ":" + std::to_string(line_);
}

namespace detail {

void throw_error(error_code code, std::string_view message, const char* file, int line) {
  throw error(code, message, file, line);
}

void throw_cuda_error(int status, const char* call, const char* file, int line) {
  auto const err = static_cast<cudaError_t>(status);
  // Clear a sticky-free error so later, unrelated calls do not report it again.
  if (err != cudaSuccess) (void)cudaGetLastError();
  error_code const code =
      err == cudaErrorMemoryAllocation ? error_code::out_of_memory : error_code::cuda_error;
  std::string message = std::string(call) + " failed: " + cudaGetErrorName(err) + ": " +
                        cudaGetErrorString(err);
  throw error(code, message, file, line);
}

void report_cuda_error(int status, const char* call, const char* file, int line) noexcept {
  auto const err = static_cast<cudaError_t>(status);
  char report[512];
  std::snprintf(report, sizeof report, "%s failed: %s (%s:%d)", call, cudaGetErrorString(err), file, line);
  log::error(report);
}

}  // namespace detail
}  // namespace zs
