// zshuffle info: what this machine offers a shuffle. Works without a GPU and without mpirun.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "zs/codec.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/nccl.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

void print_gpus(bool measure_bandwidth) {
  int runtime = 0;
  int driver = 0;
  ZS_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  cudaError_t const driver_status = cudaDriverGetVersion(&driver);
  std::printf("CUDA runtime   %d.%d", runtime / 1000, runtime % 1000 / 10);
  if (driver_status == cudaSuccess && driver > 0) {
    std::printf(", driver supports %d.%d\n", driver / 1000, driver % 1000 / 10);
  } else {
    std::printf(", no CUDA driver\n");
  }

  int count = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    std::printf("GPUs           none (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device");
    std::printf("               zshuffle runs its CPU reference codecs on this machine\n");
    return;
  }
  std::printf("GPUs           %d\n", count);
  for (auto const& d : zs::device_profiles()) {
    std::printf("  [%d] %s: %d SMs, compute capability %d.%d, %.1f GiB, L2 %.0f MiB, "
                "%.0f GB/s peak DRAM bandwidth\n",
                d.ordinal, d.name.c_str(), d.sm_count, d.compute_major, d.compute_minor,
                static_cast<double>(d.global_memory_bytes) / gib,
                static_cast<double>(d.l2_bytes) / (1024.0 * 1024.0), d.theoretical_bandwidth / 1e9);
    std::size_t tuned = 0;
    for (auto const& e : zs::tuning()->entries()) tuned += e.key.device == d.name ? 1 : 0;
    std::printf("      launch tuning: %zu table entries for this model%s\n", tuned,
                tuned == 0 ? " (occupancy-derived defaults; `zshuffle tune` measures a table)" : "");
    if (measure_bandwidth) {
      ZS_CUDA_TRY(cudaSetDevice(d.ordinal));
      zs::cuda_stream stream;
      double const bw = zs::measure_copy_bandwidth(std::size_t{1} << 30, 10, stream);
      std::printf("      measured device copy: %.0f GB/s (bytes read + written, 1 GiB, median of 10)\n",
                  bw / 1e9);
    }
  }
}

void print_mpi() {
  std::printf("MPI            %s\n", zs::mpi_library_version().c_str());
  // The run-time CUDA query needs MPI initialised; a singleton init is cheap and harmless.
  zs::mpi_environment env(nullptr, nullptr, MPI_THREAD_SINGLE);
  auto const cuda = zs::mpi_cuda_aware();
  std::printf("  CUDA-aware   %s (%s)%s\n", std::string(zs::to_string(cuda.value)).c_str(),
              cuda.source.c_str(),
              cuda.value == zs::cuda_awareness::yes ? ""
                                                    : "; device data is staged through pinned host memory");
}

void print_nccl() {
  try {
    std::printf("NCCL           %s\n", zs::nccl_version().c_str());
  } catch (const zs::error& e) {
    std::printf("NCCL           unavailable (%s)\n", e.what());
  }
}

void print_codecs() {
  std::printf("Codecs        ");
  for (const zs::codec* c : zs::all_codecs()) {
    std::printf(" %.*s", static_cast<int>(c->name().size()), c->name().data());
  }
  std::printf(" (wire format v%d)\n", zs::frame_version);
}

}  // namespace

int run_info(int argc, char** argv) {
  bool bandwidth = false;
  CLI::App app{"What this machine offers a shuffle: GPUs, MPI (and whether it is CUDA-aware), NCCL, codecs. Works "
               "without a GPU and without mpirun.",
               "zshuffle info"};
  app.add_flag("--bandwidth", bandwidth, "also measure each GPU's device-to-device copy bandwidth");
  if (!zs::cli::parse(app, argc, argv)) return 0;
  std::printf("zshuffle       %s\n", ZS_VERSION);
  print_gpus(bandwidth);
  print_mpi();
  print_nccl();
  print_codecs();
  return 0;
}
