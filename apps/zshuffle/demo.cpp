// zshuffle demo: a compressed shuffle of the real columns, across every rank of the job.
//
// Every rank reads the chosen column files, and the ranks agree that they read the same ones.
// Each rank takes a slice of every column and hash-partitions its rows by destination rank
// (shuffle_job.hpp). One call of zs::shuffle then moves all columns at once: batched encodes,
// frame exchange, batched decodes. Finally every rank checks that what each peer sent it arrived
// intact, and that the rows received over all ranks are the rows of the files. With GPUs the
// shuffle runs on them; without, the CPU reference codecs run the same protocol over host memory.
//
// Every check that can fail on one rank (the arguments, the data folder, each file, the output
// path) runs at an agreement point, so a bad input on any rank ends every rank with a message
// naming that rank and the reason (job.hpp).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "job.hpp"
#include "output_file.hpp"
#include "shuffle_job.hpp"
#include "zs/fault.hpp"
#include "zs/log.hpp"

namespace {

struct column_result {
  std::string name;
  zs::value_type type = zs::value_type::int32;
  std::string codec;
  std::uint64_t rows = 0;        // received, summed over ranks
  std::uint64_t raw_bytes = 0;   // uncompressed layout bytes sent, summed over ranks
  std::uint64_t wire_bytes = 0;  // frame bytes sent, summed over ranks
  bool verified = false;
};

nlohmann::json results_json(int ranks, const std::string& transport, double seconds, std::uint64_t rounds,
                            bool verified, const std::vector<column_result>& results) {
  nlohmann::json columns = nlohmann::json::array();
  for (auto const& r : results) {
    columns.push_back({{"name", r.name},
                       {"type", zs::to_string(r.type)},
                       {"codec", r.codec},
                       {"rows", r.rows},
                       {"raw_bytes", r.raw_bytes},
                       {"wire_bytes", r.wire_bytes},
                       {"verified", r.verified}});
  }
  return {{"ranks", ranks},   {"transport", transport}, {"seconds", seconds},
          {"rounds", rounds}, {"verified", verified},   {"columns", std::move(columns)}};
}

void print_results(const std::vector<column_result>& results, std::uint64_t rounds, double seconds, bool verified) {
  double const mib = 1024.0 * 1024.0;
  std::printf("\n%-22s %-8s %-8s %11s %10s %10s %7s  %s\n", "column", "type", "codec", "rows", "raw MiB", "wire MiB",
              "ratio", "check");
  std::uint64_t raw = 0, wire = 0;
  for (auto const& r : results) {
    raw += r.raw_bytes, wire += r.wire_bytes;
    std::printf("%-22s %-8s %-8s %11llu %10.2f %10.2f %7.2f  %s\n", r.name.c_str(),
                std::string(zs::to_string(r.type)).c_str(), r.codec.c_str(), static_cast<unsigned long long>(r.rows),
                r.raw_bytes / mib, r.wire_bytes / mib,
                r.wire_bytes ? static_cast<double>(r.raw_bytes) / static_cast<double>(r.wire_bytes) : 0.0,
                r.verified ? "ok" : "MISMATCH");
  }
  std::printf("\ntotal: %.2f MiB of columns crossed as %.2f MiB of frames (ratio %.2f) in %llu round%s, %.1f ms\n",
              raw / mib, wire / mib, wire ? static_cast<double>(raw) / static_cast<double>(wire) : 0.0,
              static_cast<unsigned long long>(rounds), rounds == 1 ? "" : "s", seconds * 1e3);
  std::printf("%s\n", verified ? "verified: every partition arrived intact on every rank (rows and checksums), and "
                                 "the rows received are the rows of the files"
                               : "FAILED: some partitions did not arrive intact");
  std::fflush(stdout);
}

}  // namespace

int run_demo(int argc, char** argv) {
  auto comm = zs::cli::together([] { return zs::mpi_communicator(); });
  int const ranks = comm.size(), me = comm.rank();
  bool const lead = me == 0;

  zs::cli::job_options options;
  CLI::App app{"A compressed shuffle of the real columns across every rank of the job, every partition verified "
               "end to end.",
               "zshuffle demo"};
  app.footer("Run it under mpirun or srun: mpirun -np N zshuffle demo --data DIR");
  zs::cli::add_job_options(app, options);
  std::optional<zs::cli::output_file> json;
  if (!zs::cli::parse_on_every_rank(comm, app, argc, argv, "demo", options.json, json)) return 0;  // --help

  zs::cli::shuffler shuffler(comm, options.cpu, "demo");
  auto const input = zs::cli::read_agreed_input(comm, "demo", options);
  if (lead) {
    std::printf("zshuffle demo: %d rank%s, %s\n", ranks, ranks == 1 ? "" : "s", shuffler.description().c_str());
    std::printf("data: %s (%zu columns, the same on every rank), rows hash-partitioned by value across ranks\n",
                zs::cli::data_folder(options.data).string().c_str(), input.size());
    std::fflush(stdout);
  }

  std::vector<zs::cli::partitioned_column> parts;
  zs::cli::agreed_step(comm, "demo", "partitioning the columns", [&] {
    for (auto const& c : input) parts.push_back(zs::cli::partition_slice(c.whole, me, ranks));
  });
  shuffler.load(parts);
  zs::cli::progress_display progress(options.progress, me);
  zs::shuffle_options shuffle_options;
  shuffle_options.round_bytes = options.round_bytes;
  shuffle_options.progress = progress.shuffle_rounds("shuffle");
  zs::shuffle_stats stats;
  auto const received = shuffler.run(shuffle_options, &stats);
  progress.clear();
  if (zs::log::enabled(zs::log::level::info)) {
    char line[256];
    std::snprintf(line, sizeof line, "demo: this rank sent %s of columns as %s of frames in %llu rounds, %.1f ms",
                  zs::cli::format_bytes(static_cast<double>(stats.raw_bytes)).c_str(),
                  zs::cli::format_bytes(static_cast<double>(stats.wire_bytes)).c_str(),
                  static_cast<unsigned long long>(stats.rounds), stats.seconds * 1e3);
    zs::log::info(line);
  }
  auto const checks = zs::cli::verify(comm, input, parts, received);

  // An error here reaches no agreement point, as a bug's would: the fault-injection tests use
  // this site to check that main() then ends the whole job rather than leave it waiting.
  zs::fault::point("demo.report");
  std::vector<column_result> results;
  bool all_verified = true;
  double seconds = 0;
  zs::cli::together([&] {
    seconds = static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(stats.seconds * 1e9))) / 1e9;
    for (std::size_t c = 0; c < input.size(); ++c) {
      column_result r;
      r.name = input[c].name;
      r.type = received[c].type();
      r.codec = std::string(zs::default_codec(r.type).name());
      r.verified = checks[c].intact;
      r.rows = checks[c].rows;
      r.raw_bytes = comm.allreduce_sum(stats.column_raw_bytes[c]);
      r.wire_bytes = comm.allreduce_sum(stats.column_wire_bytes[c]);
      all_verified = all_verified && r.verified;
      results.push_back(r);
    }
  });

  if (lead) print_results(results, stats.rounds, seconds, all_verified);
  zs::cli::agreed_step(comm, "demo", "writing the results", [&] {
    if (json) json->write_json(results_json(ranks, shuffler.transport(), seconds, stats.rounds, all_verified, results));
  });
  return all_verified ? 0 : 1;
}
