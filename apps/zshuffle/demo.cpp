// zshuffle demo: a table of the real columns shuffled by key across every rank of the job, the
// way a distributed join or group-by moves its input.
//
// Every rank reads the chosen column files, and the ranks agree that they read the same ones.
// The files make one table (row i holds value i of each file, shorter files repeating), and
// each rank takes a slice of its rows. One call of zs::shuffle_table then sends every row to
// the rank its key hashes to, all columns together: GPU hash partitioning, the planner's choice
// per column and link, batched encodes, frame exchange, batched decodes. Finally every rank
// checks that each row it holds belongs to it, and the ranks together that the rows received are
// the rows sent, whole. With GPUs the shuffle runs on them; without, the CPU reference codecs
// run the same protocol over host memory.
//
// Every check that can fail on one rank (the arguments, the data folder, each file, the output
// path) runs at an agreement point, so a bad input on any rank ends every rank with a message
// naming that rank and the reason (job.hpp).
#include <algorithm>
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
  std::string codec;             // the column's codec, or "raw" where the planner sent it raw
  std::uint64_t compressed_links = 0, links = 0;  // (rank, destination) pairs, over all ranks
  std::uint64_t rows = 0;        // received, summed over ranks
  std::uint64_t raw_bytes = 0;   // uncompressed layout bytes sent, summed over ranks
  std::uint64_t wire_bytes = 0;  // frame bytes sent, summed over ranks
  bool verified = false;
};

struct phase_seconds {
  double partition = 0, shuffle = 0, total = 0;  // the slowest rank's
};

nlohmann::json results_json(int ranks, const std::string& transport, const std::string& key, const phase_seconds& t,
                            std::uint64_t rounds, bool verified, const std::vector<column_result>& results) {
  nlohmann::json columns = nlohmann::json::array();
  for (auto const& r : results) {
    columns.push_back({{"name", r.name},
                       {"type", zs::to_string(r.type)},
                       {"codec", r.codec},
                       {"compressed_links", r.compressed_links},
                       {"links", r.links},
                       {"rows", r.rows},
                       {"raw_bytes", r.raw_bytes},
                       {"wire_bytes", r.wire_bytes},
                       {"verified", r.verified}});
  }
  return {{"ranks", ranks},
          {"transport", transport},
          {"key", key},
          {"seconds", t.total},
          {"partition_seconds", t.partition},
          {"shuffle_seconds", t.shuffle},
          {"rounds", rounds},
          {"verified", verified},
          {"columns", std::move(columns)}};
}

// The codecs of a column's compressed frames over every rank: "raw" where no rank compressed it,
// "fsst/fsst_dict" where the ranks chose differently (each chooses from its own rows). Collective.
std::string codecs_of_ranks(zs::communicator& comm, zs::codec_id mine) {
  std::vector<std::string> names;
  for (std::uint64_t const id : comm.allgather(static_cast<std::uint64_t>(mine))) {
    auto const codec = static_cast<zs::codec_id>(id);
    if (codec == zs::codec_id::raw) continue;
    std::string const name(zs::get_codec(codec).name());
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  std::string out;
  for (auto const& name : names) out += (out.empty() ? "" : "/") + name;
  return out.empty() ? "raw" : out;
}

void print_results(const std::vector<column_result>& results, std::uint64_t rounds, const phase_seconds& t,
                   bool verified) {
  double const mib = 1024.0 * 1024.0;
  std::printf("\n%-22s %-8s %-16s %11s %10s %10s %7s  %s\n", "column", "type", "codec (links)", "rows", "raw MiB",
              "wire MiB", "ratio", "check");
  std::uint64_t raw = 0, wire = 0;
  for (auto const& r : results) {
    raw += r.raw_bytes, wire += r.wire_bytes;
    std::string const codec = r.codec + " (" + std::to_string(r.compressed_links) + "/" + std::to_string(r.links) + ")";
    std::printf("%-22s %-8s %-16s %11llu %10.2f %10.2f %7.2f  %s\n", r.name.c_str(),
                std::string(zs::to_string(r.type)).c_str(), codec.c_str(), static_cast<unsigned long long>(r.rows),
                r.raw_bytes / mib, r.wire_bytes / mib,
                r.wire_bytes ? static_cast<double>(r.raw_bytes) / static_cast<double>(r.wire_bytes) : 0.0,
                r.verified ? "ok" : "MISMATCH");
  }
  std::printf("\ncodec (links): the codec of the column's frames (a string column takes fsst_dict on the ranks\n"
              "where its values repeat) and on how many (rank, destination) links it was compressed;\n"
              "the planner sends a column raw where compressing would not pay on that link.\n");
  std::printf("\ntotal: %.2f MiB of columns crossed as %.2f MiB (ratio %.2f) in %llu round%s, %.1f ms: partitioning "
              "%.1f ms, shuffle %.1f ms (slowest rank)\n",
              raw / mib, wire / mib, wire ? static_cast<double>(raw) / static_cast<double>(wire) : 0.0,
              static_cast<unsigned long long>(rounds), rounds == 1 ? "" : "s", t.total * 1e3, t.partition * 1e3,
              t.shuffle * 1e3);
  std::printf("%s\n", verified ? "verified: every row arrived whole on the rank its key hashes to, and the rows "
                                 "received are the rows sent"
                               : "FAILED: some rows did not arrive whole or on their key's rank");
  std::fflush(stdout);
}

}  // namespace

int run_demo(int argc, char** argv) {
  auto comm = zs::cli::together([] { return zs::mpi_communicator(); });
  int const ranks = comm.size(), me = comm.rank();
  bool const lead = me == 0;

  zs::cli::job_options options;
  CLI::App app{"A table of the real columns shuffled by key across every rank of the job, compressed where it pays, "
               "every row verified end to end.",
               "zshuffle demo"};
  app.footer("Run it under mpirun or srun: mpirun -np N zshuffle demo --data DIR");
  zs::cli::add_job_options(app, options);
  std::string key_name, plan_name = "auto";
  std::uint64_t table_rows = 1'000'000;
  app.add_option("--rows", table_rows, "rows of the table the files make (row i holds value i of each file, shorter "
                                       "files repeating); 0: the longest file's rows")
      ->capture_default_str();
  app.add_option("--key", key_name, "the column file whose values are the shuffle's key (default: the first integer "
                                    "column, else the first)");
  app.add_option("--plan", plan_name, "auto: the planner sends each column raw or compressed per link, as it pays; "
                                      "compress: every column compressed on every link")
      ->check(CLI::IsMember({"auto", "compress"}))
      ->capture_default_str();
  std::optional<zs::cli::output_file> json;
  if (!zs::cli::parse_on_every_rank(comm, app, argc, argv, "demo", options.json, json)) return 0;  // --help

  zs::cli::shuffler shuffler(comm, options.cpu, "demo");
  auto const input = zs::cli::read_agreed_input(comm, "demo", options);
  std::size_t key = 0;
  zs::table sent;
  zs::cli::agreed_step(comm, "demo", "building the table", [&] {
    auto const integer = std::find_if(input.begin(), input.end(), [](auto const& c) { return zs::is_integer(c.whole.type()); });
    if (integer != input.end()) key = static_cast<std::size_t>(integer - input.begin());
    if (!key_name.empty()) {
      auto const at = std::find_if(input.begin(), input.end(), [&](auto const& c) { return c.name == key_name; });
      if (at == input.end()) {
        ZS_FAIL(zs::error_code::invalid_argument, "--key '" + key_name + "' is not one of the chosen column files");
      }
      key = static_cast<std::size_t>(at - input.begin());
    }
    if (table_rows == 0) {
      for (auto const& c : input) table_rows = std::max(table_rows, c.whole.size());
    }
    sent = zs::cli::table_slice(input, table_rows, me, ranks);
  });
  if (lead) {
    std::printf("zshuffle demo: %d rank%s, %s\n", ranks, ranks == 1 ? "" : "s", shuffler.description().c_str());
    std::printf("data: %s (%zu columns, the same on every rank) as one table of %llu rows, shuffled by key '%s': "
                "each row goes whole to the rank its key hashes to; %s\n",
                zs::cli::data_folder(options.data).string().c_str(), input.size(), static_cast<unsigned long long>(table_rows),
                input[key].name.c_str(),
                plan_name == "compress" ? "every column compressed on every link (--plan compress)"
                                        : "the planner compresses a column on a link where that pays (--plan)");
    std::fflush(stdout);
  }

  zs::cli::progress_display progress(options.progress, me);
  zs::table_shuffle_options shuffle_options;
  shuffle_options.shuffle.round_bytes = options.round_bytes;
  if (plan_name == "compress") shuffle_options.shuffle.plan = zs::shuffle_options::planning::compress;
  shuffle_options.shuffle.progress = progress.shuffle_rounds("shuffle");
  zs::shuffle_stats stats;
  std::size_t const keys[] = {key};
  auto const received = shuffler.shuffle_table(sent, keys, shuffle_options, &stats);
  progress.clear();
  if (zs::log::enabled(zs::log::level::info)) {
    char line[256];
    std::snprintf(line, sizeof line, "demo: this rank sent %s of columns as %s in %llu rounds, %.1f ms",
                  zs::cli::format_bytes(static_cast<double>(stats.raw_bytes)).c_str(),
                  zs::cli::format_bytes(static_cast<double>(stats.wire_bytes)).c_str(),
                  static_cast<unsigned long long>(stats.rounds), stats.seconds * 1e3);
    zs::log::info(line);
  }
  auto const checks = zs::cli::verify_table(comm, sent, received.rows, key);

  // An error here reaches no agreement point, as a bug's would: the fault-injection tests use
  // this site to check that main() then ends the whole job rather than leave it waiting.
  zs::fault::point("demo.report");
  std::vector<column_result> results;
  bool all_verified = true;
  phase_seconds t;
  zs::cli::together([&] {
    auto const slowest = [&](double s) { return static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(s * 1e9))) / 1e9; };
    t.partition = slowest(received.partition_seconds);
    t.shuffle = slowest(received.shuffle_seconds);
    t.total = slowest(received.partition_seconds + received.shuffle_seconds + received.group_seconds);
    for (std::size_t c = 0; c < input.size(); ++c) {
      column_result r;
      r.name = input[c].name;
      r.type = received.rows.columns[c].type();
      std::uint64_t compressed = 0;
      if (stats.plan) {
        for (int d = 0; d < ranks; ++d) compressed += stats.plan->at(c, d) == zs::carriage::compressed;
      } else if (shuffle_options.shuffle.plan == zs::shuffle_options::planning::compress) {
        compressed = static_cast<std::uint64_t>(ranks);
      }
      r.compressed_links = comm.allreduce_sum(compressed);
      r.links = static_cast<std::uint64_t>(ranks) * static_cast<std::uint64_t>(ranks);
      r.codec = codecs_of_ranks(comm, stats.column_codecs.at(c));
      r.verified = checks[c].intact;
      r.rows = checks[c].rows;
      r.raw_bytes = comm.allreduce_sum(stats.column_raw_bytes[c]);
      r.wire_bytes = comm.allreduce_sum(stats.column_wire_bytes[c]);
      all_verified = all_verified && r.verified;
      results.push_back(r);
    }
  });

  if (lead) print_results(results, stats.rounds, t, all_verified);
  zs::cli::agreed_step(comm, "demo", "writing the results", [&] {
    if (json) {
      json->write_json(results_json(ranks, shuffler.transport(), input[key].name, t, stats.rounds, all_verified, results));
    }
  });
  return all_verified ? 0 : 1;
}
