#include "zs/comm/nccl.hpp"

#include <nccl.h>

#include "zs/comm/error.hpp"

namespace zs {

std::string nccl_version() {
  int code = 0;
  ZS_NCCL_TRY(ncclGetVersion(&code));
  // NCCL packs its version as major*1000 + minor*100 + patch up to 2.8, and as
  // major*10000 + minor*100 + patch from 2.9 on (see NCCL_VERSION in nccl.h).
  int const major_scale = code >= 10000 ? 10000 : 1000;
  int const major = code / major_scale;
  int const minor = (code % major_scale) / 100;
  int const patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace zs
