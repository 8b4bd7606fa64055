// Error checks for MPI and NCCL calls.
//
// ZS_MPI_TRY and ZS_NCCL_TRY turn a failing call into a zs::error (error_code::mpi_error or
// error_code::nccl_error) whose message names the call, the library's own description of the
// code and the file:line of the check. The *_NOTHROW variants are for destructors and other
// places that must not throw: they report to stderr and carry on.
//
// The header does not include <mpi.h> or <nccl.h>: both libraries define success as 0
// (MPI_SUCCESS and ncclSuccess), so the macros compare against 0 and leave the translation of
// the code to comm/src/error.cpp.
#pragma once

#include "zs/error.hpp"

namespace zs::detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
void report_mpi_error(int code, const char* call, const char* file, int line) noexcept;
[[noreturn]] void throw_nccl_error(int result, const char* call, const char* file, int line);
void report_nccl_error(int result, const char* call, const char* file, int line) noexcept;
}  // namespace zs::detail

/// Runs an MPI call; throws zs::error(error_code::mpi_error) with MPI's description of the
/// returned code when it is not MPI_SUCCESS. Only calls that return their error (a communicator
/// with MPI_ERRORS_RETURN) get here: with the default MPI_ERRORS_ARE_FATAL, MPI aborts first.
#define ZS_MPI_TRY(call)                                                                        \
  do {                                                                                          \
    int const zs_mpi_code_ = (call);                                                            \
    if (zs_mpi_code_ != 0) {                                                                    \
      ::zs::detail::throw_mpi_error(zs_mpi_code_, #call, __FILE__, __LINE__);                   \
    }                                                                                           \
  } while (0)

/// Like ZS_MPI_TRY, for destructors and other places that must not throw: reports to stderr.
#define ZS_MPI_TRY_NOTHROW(call)                                                                \
  do {                                                                                          \
    int const zs_mpi_code_ = (call);                                                            \
    if (zs_mpi_code_ != 0) {                                                                    \
      ::zs::detail::report_mpi_error(zs_mpi_code_, #call, __FILE__, __LINE__);                  \
    }                                                                                           \
  } while (0)

/// Runs an NCCL call; throws zs::error(error_code::nccl_error) with ncclGetErrorString's text for
/// any result other than ncclSuccess. ncclInProgress counts as a failure: zshuffle never creates
/// non-blocking NCCL communicators, so an operation still in progress means something is wrong.
#define ZS_NCCL_TRY(call)                                                                       \
  do {                                                                                          \
    int const zs_nccl_result_ = static_cast<int>(call);                                         \
    if (zs_nccl_result_ != 0) {                                                                 \
      ::zs::detail::throw_nccl_error(zs_nccl_result_, #call, __FILE__, __LINE__);               \
    }                                                                                           \
  } while (0)

/// Like ZS_NCCL_TRY, for destructors and other places that must not throw: reports to stderr.
#define ZS_NCCL_TRY_NOTHROW(call)                                                               \
  do {                                                                                          \
    int const zs_nccl_result_ = static_cast<int>(call);                                         \
    if (zs_nccl_result_ != 0) {                                                                 \
      ::zs::detail::report_nccl_error(zs_nccl_result_, #call, __FILE__, __LINE__);              \
    }                                                                                           \
  } while (0)
