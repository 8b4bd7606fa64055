// zshuffle info: what this machine offers a shuffle. Works without a GPU and without mpirun.
//
// The facts are gathered once, as JSON: `--json` prints them so, for scripts; otherwise they
// are printed as text.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <optional>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "output_file.hpp"
#include "zs/codec.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/nccl.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace {

using json = nlohmann::json;

constexpr double gib = 1024.0 * 1024.0 * 1024.0;
constexpr double mib = 1024.0 * 1024.0;

std::string cuda_version(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

json gpu_facts(bool measure_bandwidth) {
  int runtime = 0;
  int driver = 0;
  ZS_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  cudaError_t const driver_status = cudaDriverGetVersion(&driver);
  json facts{{"runtime", cuda_version(runtime)},
             {"driver", driver_status == cudaSuccess && driver > 0 ? json(cuda_version(driver)) : json()},
             {"gpus", json::array()}};

  int count = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    facts["no_gpu_reason"] = status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device";
    return facts;
  }
  for (auto const& d : zs::device_profiles()) {
    std::size_t tuned = 0;
    for (auto const& e : zs::tuning()->entries()) tuned += e.key.device == d.name ? 1 : 0;
    json gpu{{"ordinal", d.ordinal},
             {"name", d.name},
             {"sm_count", d.sm_count},
             {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
             {"memory_bytes", d.global_memory_bytes},
             {"l2_bytes", d.l2_bytes},
             {"peak_bandwidth_gbs", d.theoretical_bandwidth / 1e9},
             {"tuning_entries", tuned}};
    if (measure_bandwidth) {
      ZS_CUDA_TRY(cudaSetDevice(d.ordinal));
      zs::cuda_stream stream;
      gpu["copy_bandwidth_gbs"] = zs::measure_copy_bandwidth(std::size_t{1} << 30, 10, stream) / 1e9;
    }
    facts["gpus"].push_back(std::move(gpu));
  }
  return facts;
}

json mpi_facts() {
  // The run-time CUDA query needs MPI initialised; a singleton init is cheap and harmless.
  zs::mpi_environment env(nullptr, nullptr, MPI_THREAD_SINGLE);
  auto const cuda = zs::mpi_cuda_aware();
  return {{"library", zs::mpi_library_version()},
          {"cuda_aware", std::string(zs::to_string(cuda.value))},
          {"cuda_aware_source", cuda.source}};
}

json nccl_facts() {
  try {
    return {{"version", zs::nccl_version()}};
  } catch (const zs::error& e) {
    return {{"version", nullptr}, {"unavailable_reason", e.what()}};
  }
}

json machine_facts(bool measure_bandwidth) {
  json codecs = json::array();
  for (const zs::codec* c : zs::all_codecs()) codecs.push_back(std::string(c->name()));
  return {{"zshuffle", ZS_VERSION},
          {"cuda", gpu_facts(measure_bandwidth)},
          {"mpi", mpi_facts()},
          {"nccl", nccl_facts()},
          {"codecs", std::move(codecs)},
          {"wire_format_version", zs::frame_version}};
}

std::string text(const json& value) { return value.get<std::string>(); }

void print_text(const json& facts) {
  auto const& cuda = facts["cuda"];
  std::printf("zshuffle       %s\n", text(facts["zshuffle"]).c_str());
  std::printf("CUDA runtime   %s", text(cuda["runtime"]).c_str());
  if (cuda["driver"].is_null()) {
    std::printf(", no CUDA driver\n");
  } else {
    std::printf(", driver supports %s\n", text(cuda["driver"]).c_str());
  }
  if (cuda.contains("no_gpu_reason")) {
    std::printf("GPUs           none (%s)\n", text(cuda["no_gpu_reason"]).c_str());
    std::printf("               zshuffle runs its CPU reference codecs on this machine\n");
  } else {
    std::printf("GPUs           %zu\n", cuda["gpus"].size());
  }
  for (auto const& d : cuda["gpus"]) {
    std::printf("  [%d] %s: %d SMs, compute capability %s, %.1f GiB, L2 %.0f MiB, %.0f GB/s peak DRAM bandwidth\n",
                d["ordinal"].get<int>(), text(d["name"]).c_str(), d["sm_count"].get<int>(),
                text(d["compute_capability"]).c_str(), d["memory_bytes"].get<double>() / gib,
                d["l2_bytes"].get<double>() / mib, d["peak_bandwidth_gbs"].get<double>());
    auto const tuned = d["tuning_entries"].get<std::size_t>();
    std::printf("      launch tuning: %zu table entries for this model%s\n", tuned,
                tuned == 0 ? " (occupancy-derived defaults; `zshuffle tune` measures a table)" : "");
    if (d.contains("copy_bandwidth_gbs")) {
      std::printf("      measured device copy: %.0f GB/s (bytes read + written, 1 GiB, median of 10)\n",
                  d["copy_bandwidth_gbs"].get<double>());
    }
  }

  auto const& mpi = facts["mpi"];
  std::printf("MPI            %s\n", text(mpi["library"]).c_str());
  bool const cuda_aware = mpi["cuda_aware"] == "yes";
  std::printf("  CUDA-aware   %s (%s)%s\n", text(mpi["cuda_aware"]).c_str(), text(mpi["cuda_aware_source"]).c_str(),
              cuda_aware ? "" : "; device data is staged through pinned host memory");

  auto const& nccl = facts["nccl"];
  if (nccl["version"].is_null()) {
    std::printf("NCCL           unavailable (%s)\n", text(nccl["unavailable_reason"]).c_str());
  } else {
    std::printf("NCCL           %s\n", text(nccl["version"]).c_str());
  }

  std::printf("Codecs        ");
  for (auto const& name : facts["codecs"]) std::printf(" %s", text(name).c_str());
  std::printf(" (wire format v%d)\n", facts["wire_format_version"].get<int>());
}

}  // namespace

int run_info(int argc, char** argv) {
  bool bandwidth = false;
  std::string json_path;
  CLI::App app{"What this machine offers a shuffle: GPUs, MPI (and whether it is CUDA-aware), NCCL, codecs. Works "
               "without a GPU and without mpirun.",
               "zshuffle info"};
  app.add_flag("--bandwidth", bandwidth, "also measure each GPU's device-to-device copy bandwidth");
  auto* json_option = app.add_option("--json", json_path,
                                     "print the same as JSON instead of text; with a PATH, write the JSON to that "
                                     "file as well as the text")
                          ->expected(0, 1)
                          ->type_name("[PATH]");
  if (!zs::cli::parse(app, argc, argv)) return zs::cli::exit_code::ok;
  std::optional<zs::cli::output_file> json_file;
  if (!json_path.empty()) json_file.emplace("--json", json_path);

  json const facts = machine_facts(bandwidth);
  if (json_option->count() > 0 && !json_file) {
    std::fputs(zs::cli::json_text(facts).c_str(), stdout);
  } else {
    print_text(facts);
  }
  if (json_file) json_file->write_json(facts);
  return zs::cli::exit_code::ok;
}
