// NCCL facts that do not need a communicator.
#pragma once

#include <string>

namespace zs {

/// The version of the NCCL library loaded at run time (ncclGetVersion), as "major.minor.patch",
/// e.g. "2.28.9". It can differ from the nccl.h zshuffle was built against. Needs no GPU.
/// Throws zs::error(error_code::nccl_error) if NCCL cannot report it.
std::string nccl_version();

}  // namespace zs
