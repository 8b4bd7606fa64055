// zshuffle bench soak: many shuffles of the real columns in one process, every result verified,
// and memory compared between the start and the end.
//
// A leak, or memory that grows with each call (a pool that keeps what it should reuse, host
// buffers that are never given back), does not show in one shuffle: it shows after a thousand.
// After a warm-up shuffle (which fills the device pool and the host's caches once), each rank
// records its host memory (VmRSS and VmHWM from /proc/self/status) and, on the GPU path, its
// device's (cudaMemGetInfo, and the current and high-water used and reserved bytes of the device's
// default memory pool, where the library's buffers come from); then it runs --iterations
// shuffles of the same partitions, each verified end to end as the demo verifies (rows and
// checksums per partition, the rows of the files), and records memory again. Flat figures
// (a change of about nothing) are what a healthy build shows.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "job.hpp"
#include "output_file.hpp"
#include "shuffle_job.hpp"
#include "zs/error.hpp"

namespace {

// One rank's memory at one moment. Device figures are 0 on the CPU path.
struct memory_snapshot {
  static constexpr std::size_t fields = 8;
  static constexpr const char* names[fields] = {"host_rss",  "host_hwm",  "device_used", "device_total",
                                                "pool_used", "pool_used_high", "pool_reserved",
                                                "pool_reserved_high"};
  static constexpr const char* labels[fields] = {
      "host resident (VmRSS)", "host high-water (VmHWM)", "device in use (cudaMemGetInfo)", "device total",
      "pool used",             "pool used high-water",    "pool reserved",                  "pool reserved high-water"};
  std::uint64_t bytes[fields] = {};
};

// A "VmRSS:   1234 kB" line of /proc/self/status, in bytes.
std::uint64_t proc_status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    return std::stoull(line.substr(key.size() + 1)) * 1024;  // the kernel writes kB
  }
  ZS_FAIL(zs::error_code::io_error, "/proc/self/status has no " + key + " line");
}

memory_snapshot take_snapshot(const zs::cli::shuffler& shuffler) {
  memory_snapshot s;
  s.bytes[0] = proc_status_bytes("VmRSS");
  s.bytes[1] = proc_status_bytes("VmHWM");
  if (!shuffler.on_gpu()) return s;
  std::size_t free = 0, total = 0;
  ZS_CUDA_TRY(cudaMemGetInfo(&free, &total));
  s.bytes[2] = total - free;
  s.bytes[3] = total;
  cudaMemPool_t pool = nullptr;
  ZS_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, shuffler.device()));
  cudaMemPoolAttr const attributes[] = {cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrUsedMemHigh,
                                        cudaMemPoolAttrReservedMemCurrent, cudaMemPoolAttrReservedMemHigh};
  for (std::size_t i = 0; i < 4; ++i) {
    std::uint64_t value = 0;  // cuuint64_t, for these attributes
    ZS_CUDA_TRY(cudaMemPoolGetAttribute(pool, attributes[i], &value));
    s.bytes[4 + i] = value;
  }
  return s;
}

// Every rank's snapshot, on every rank, indexed by rank.
std::vector<memory_snapshot> gather(zs::communicator& comm, const memory_snapshot& mine) {
  std::vector<memory_snapshot> all(static_cast<std::size_t>(comm.size()));
  std::vector<std::uint64_t> counts(all.size(), sizeof mine.bytes);
  zs::cli::together([&] {
    comm.allgatherv(std::as_bytes(std::span(mine.bytes)), std::as_writable_bytes(std::span(all)), counts);
  });
  return all;
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

void print_memory(const std::vector<memory_snapshot>& start, const std::vector<memory_snapshot>& end, bool gpu) {
  std::printf("\n%-32s %5s %14s %14s %14s\n", "memory", "rank", "start", "end", "change");
  for (std::size_t f = 0; f < memory_snapshot::fields; ++f) {
    if (!gpu && f >= 2) break;
    for (std::size_t r = 0; r < start.size(); ++r) {
      double const a = static_cast<double>(start[r].bytes[f]), b = static_cast<double>(end[r].bytes[f]);
      std::string change = mib(b - a);
      if (b >= a) change = "+" + change;
      std::printf("%-32s %5zu %14s %14s %14s\n", memory_snapshot::labels[f], r, mib(a).c_str(), mib(b).c_str(),
                  change.c_str());
    }
  }
}

nlohmann::json memory_json(const std::vector<memory_snapshot>& start, const std::vector<memory_snapshot>& end) {
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < start.size(); ++r) {
    nlohmann::json at_start, at_end;
    for (std::size_t f = 0; f < memory_snapshot::fields; ++f) {
      at_start[memory_snapshot::names[f]] = start[r].bytes[f];
      at_end[memory_snapshot::names[f]] = end[r].bytes[f];
    }
    ranks.push_back({{"rank", r}, {"start", at_start}, {"end", at_end}});
  }
  return ranks;
}

}  // namespace

int run_bench_soak(int argc, char** argv) {
  auto comm = zs::cli::together([] { return zs::mpi_communicator(); });
  int const ranks = comm.size(), me = comm.rank();
  bool const lead = me == 0;

  zs::cli::job_options options;
  int iterations = 1000;
  CLI::App app{"Many shuffles of the real columns in one process, every result verified, memory compared between "
               "the start (after a warm-up shuffle) and the end.",
               "zshuffle bench soak"};
  app.footer("Run it under mpirun or srun: mpirun -np N zshuffle bench soak --data DIR");
  zs::cli::add_job_options(app, options);
  app.add_option("--iterations", iterations, "shuffles after the warm-up, each verified")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  std::optional<zs::cli::output_file> json;
  if (!zs::cli::parse_on_every_rank(comm, app, argc, argv, "bench soak", options.json, json)) return 0;  // --help

  zs::cli::shuffler shuffler(comm, options.cpu, "bench soak");
  auto const input = zs::cli::read_agreed_input(comm, "bench soak", options);
  std::vector<zs::cli::partitioned_column> parts;
  zs::cli::agreed_step(comm, "bench soak", "partitioning the columns", [&] {
    for (auto const& c : input) parts.push_back(zs::cli::partition_slice(c.whole, me, ranks));
  });
  shuffler.load(parts);
  zs::shuffle_options shuffle_options;
  shuffle_options.round_bytes = options.round_bytes;
  if (lead) {
    std::printf("zshuffle bench soak: %d rank%s, %s; %d shuffles of %zu columns from %s after a warm-up\n", ranks,
                ranks == 1 ? "" : "s", shuffler.description().c_str(), iterations, input.size(),
                zs::cli::data_folder(options.data).string().c_str());
    std::fflush(stdout);
  }

  // One shuffle and its check; true when every column arrived intact.
  zs::shuffle_stats stats;
  auto shuffle_and_verify = [&] {
    auto const received = shuffler.run(shuffle_options, &stats);
    bool intact = true;
    for (auto const& check : zs::cli::verify(comm, input, parts, received)) intact = intact && check.intact;
    return intact;
  };
  bool const warm_up_intact = shuffle_and_verify();
  memory_snapshot at_start;
  zs::cli::agreed_step(comm, "bench soak", "reading memory use", [&] { at_start = take_snapshot(shuffler); });

  auto const started = std::chrono::steady_clock::now();
  int failed = warm_up_intact ? 0 : 1;
  int const report_every = std::max(1, iterations / 10);
  zs::cli::progress_display progress(options.progress, me);
  progress.begin("soak", "shuffle");
  for (int i = 1; i <= iterations; ++i) {
    if (!shuffle_and_verify()) ++failed;
    if (lead && (i % report_every == 0 || i == iterations)) {
      progress.clear();
      double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::printf("  %d of %d shuffles, %d failed verification, %.1f s\n", i, iterations, failed, s);
      std::fflush(stdout);
    } else {
      // This rank's bytes: every shuffle moves the same.
      progress.update(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(iterations),
                      static_cast<double>(stats.raw_bytes) * i);
    }
  }
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  memory_snapshot at_end;
  zs::cli::agreed_step(comm, "bench soak", "reading memory use", [&] { at_end = take_snapshot(shuffler); });
  auto const start_all = gather(comm, at_start), end_all = gather(comm, at_end);
  if (lead) {
    print_memory(start_all, end_all, shuffler.on_gpu());
    std::printf("\n%s\n", failed == 0 ? "verified: every shuffle arrived intact on every rank (rows and checksums)"
                                      : "FAILED: some shuffles did not arrive intact");
    std::fflush(stdout);
  }

  zs::cli::agreed_step(comm, "bench soak", "writing the results", [&] {
    if (!json) return;
    nlohmann::json columns = nlohmann::json::array();
    for (auto const& c : input) columns.push_back(c.name);
    json->write_json(nlohmann::json{{"benchmark", "soak"},
                               {"ranks", ranks},
                               {"transport", shuffler.transport()},
                               {"round_bytes", options.round_bytes},
                               {"columns", columns},
                               {"iterations", iterations},
                               {"failed_iterations", failed},
                               {"seconds", seconds},
                               {"verified", failed == 0},
                               {"memory", memory_json(start_all, end_all)}});
  });
  return failed == 0 ? 0 : 1;
}
