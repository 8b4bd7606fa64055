// Prints the GPU that zshuffle would bind this process to, and the launcher's variables that
// decided it, as one line of key=value words. slurm/check-gpu-binding runs it once per task
// (under srun, or with the environment srun would set) and checks the answers of all tasks
// together. It does not start MPI: under srun the local rank comes from SLURM_LOCALID.
//
//   gpu_binding_probe             asks CUDA how many GPUs this process sees
//   gpu_binding_probe --stand-in  counts the entries of CUDA_VISIBLE_DEVICES instead, for a
//                                 test cluster whose GPUs are stand-in device files; without
//                                 that variable it reports no device (device=- gpu=-), for
//                                 the check to name the cause
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "zs/comm/mpi_communicator.hpp"
#include "zs/error.hpp"

namespace {

std::string env_or(const char* name, std::string_view fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string(fallback);
}

// The entries of a comma-separated list such as CUDA_VISIBLE_DEVICES="2,3".
std::vector<std::string> split(std::string const& list) {
  std::vector<std::string> items;
  for (std::size_t start = 0; !list.empty() && start <= list.size();) {
    std::size_t const comma = std::min(list.find(',', start), list.size());
    items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  bool const stand_in = argc == 2 && std::string_view(argv[1]) == "--stand-in";
  if (argc > 2 || (argc == 2 && !stand_in)) {
    std::fprintf(stderr, "usage: gpu_binding_probe [--stand-in]\n");
    return 2;
  }
  try {
    // Unset means every GPU of the machine; the entries name them in CUDA's order.
    std::string const visible_list = env_or("CUDA_VISIBLE_DEVICES", "");
    auto const visible = split(visible_list);
    int count = 0;
    if (stand_in) {
      count = static_cast<int>(visible.size());
    } else if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::fprintf(stderr, "gpu_binding_probe: no CUDA device visible (CUDA_VISIBLE_DEVICES='%s'); --stand-in checks the "
                           "binding without one\n", visible_list.c_str());
      return 1;
    }
    std::string device = "-";
    std::string gpu = "-";  // the machine's name for it: its CUDA_VISIBLE_DEVICES entry, or its ordinal
    std::string bus_id = "none";
    if (count > 0) {
      int const ordinal = zs::device_for_rank(count);
      device = std::to_string(ordinal);
      gpu = visible.empty() ? device : visible.at(static_cast<std::size_t>(ordinal));
      if (!stand_in) {
        char id[32] = {};
        ZS_CUDA_TRY(cudaDeviceGetPCIBusId(id, sizeof id, ordinal));
        bus_id = id;
      }
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::printf("binding: host=%s procid=%s local_rank=%d cuda_visible_devices=%s visible=%d device=%s gpu=%s bus_id=%s\n",
                host, env_or("SLURM_PROCID", "-").c_str(), zs::local_rank(), visible_list.empty() ? "-" : visible_list.c_str(),
                count, device.c_str(), gpu.c_str(), bus_id.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_binding_probe: %s\n", e.what());
    return 1;
  }
}
