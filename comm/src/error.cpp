#include "zs/comm/error.hpp"

#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <string>

#include "zs/log.hpp"

namespace zs::detail {
namespace {

// MPI's text for an error code. MPI_Error_string is only safe to call while MPI is
// initialized, and an MPI_Init_thread failure is reported before it is.
std::string describe_mpi_code(int code) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  std::string text = "MPI error code " + std::to_string(code);
  if (initialized && !finalized) {
    char buffer[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, buffer, &length) == MPI_SUCCESS && length > 0) {
      text += ": ";
      text.append(buffer, static_cast<std::size_t>(length));
    }
  }
  return text;
}

std::string describe_nccl_result(int result) {
  return "NCCL result " + std::to_string(result) + ": " +
         ncclGetErrorString(static_cast<ncclResult_t>(result));
}

}  // namespace

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  throw error(error_code::mpi_error, std::string(call) + " failed: " + describe_mpi_code(code),
              file, line);
}

void report_mpi_error(int code, const char* call, const char* file, int line) noexcept {
  try {
    log::error(std::string(call) + " failed: " + describe_mpi_code(code) + " (" + file + ":" + std::to_string(line) +
               ")");
  } catch (...) {
    char report[512];
    std::snprintf(report, sizeof report, "%s failed: MPI error code %d (%s:%d)", call, code, file, line);
    log::error(report);
  }
}

void throw_nccl_error(int result, const char* call, const char* file, int line) {
  throw error(error_code::nccl_error,
              std::string(call) + " failed: " + describe_nccl_result(result), file, line);
}

void report_nccl_error(int result, const char* call, const char* file, int line) noexcept {
  char report[512];
  std::snprintf(report, sizeof report, "%s failed: NCCL result %d: %s (%s:%d)", call, result,
                ncclGetErrorString(static_cast<ncclResult_t>(result)), file, line);
  log::error(report);
}

}  // namespace zs::detail
