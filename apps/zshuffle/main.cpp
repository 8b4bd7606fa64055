// zshuffle: compressed GPU shuffles. The command line's entry point: finds the subcommand,
// starts MPI for those that run under mpirun, and turns what they throw into a message and an
// exit code (commands.hpp lists them).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "job.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/error.hpp"
#include "zs/log.hpp"

#ifdef ZS_HAVE_NVCOMP
#include "nvcomp_codecs.hpp"
#endif

namespace {

struct command {
  std::string_view name;  // the words that select it
  int (*run)(int argc, char** argv);
  // Initializes MPI before the command reads its arguments, so that every rank checks them and
  // agrees on the outcome.
  bool under_mpi;
};

constexpr command commands[] = {
    {"info", run_info, false},
    {"demo", run_demo, true},
    {"tune", run_tune, false},
    {"bench codec", run_bench_codec, false},
    {"bench shuffle", run_bench_shuffle, true},
    {"bench soak", run_bench_soak, true},
    {"bench spill", run_bench_spill, true},
    {"bench stream", run_bench_stream, true},
};

void usage(std::FILE* out) {
  std::fputs(
      "usage: zshuffle <command> [options]\n"
      "       zshuffle --version\n"
      "\n"
      "commands:\n"
      "  info [--bandwidth]      GPUs, MPI (and whether it is CUDA-aware), NCCL, codecs;\n"
      "                          --json for the same as JSON\n"
      "  demo --data DIR [...]   a compressed shuffle of the real columns in DIR; run it\n"
      "                          under mpirun or srun\n"
      "  bench codec [...]       a codec's ratio and throughput on one GPU, on the real columns\n"
      "                          and inputs of other shapes (--cpu: ratios alone, no GPU)\n"
      "  bench shuffle [...]     compressed vs raw all-to-all under mpirun\n"
      "  bench soak [...]        many shuffles in one process under mpirun, every result verified,\n"
      "                          memory at the start and the end\n"
      "  bench spill [...]       compressed spill + restore of each real column vs raw copies over PCIe,\n"
      "                          on one GPU, or under mpirun on every rank's GPU at once\n"
      "  bench stream [...]      a streaming shuffle of 4x the device budget per rank vs the bulk\n"
      "                          shuffle_table, under mpirun\n"
      "  tune [...]              measure kernel launch geometry on this GPU, write a tuning table\n"
      "  help                    this text\n"
      "\n"
      "`zshuffle <command> --help` lists a command's options. Long runs (demo, tune, bench shuffle,\n"
      "bench soak) show their progress on stderr when it is a terminal, from rank 0; --quiet hides\n"
      "it, --progress shows it where stderr is a pipe (under mpirun or srun).\n"
      "\n"
      "environment:\n"
      "  ZS_DATA_DIR     the data folder when --data is not given\n"
      "  ZS_LOG_LEVEL    what the log on stderr shows: trace, debug, info, warn (the default),\n"
      "                  error or off; each line names the rank\n"
      "  ZS_DEBUG=1      an error message also names the source file and line that raised it\n"
      "  ZS_TIMEOUT      seconds a rank waits for its peers (default 600; 0 waits for ever)\n"
      "\n"
      "exit status:\n"
      "  0  success\n"
      "  1  the run failed, or what it verified did not hold\n"
      "  2  a usage error: an unknown command or option, a bad value, no data folder\n"
      "  3  a peer stopped answering within ZS_TIMEOUT; the job was aborted\n"
      "  4  no CUDA GPU where the command needs one (one per rank under mpirun)\n",
      out);
}

// The command that argv names, and how many words name it.
std::pair<const command*, int> find_command(int argc, char** argv) {
  for (auto const& c : commands) {
    std::string_view const name = c.name;
    auto const space = name.find(' ');
    if (space == std::string_view::npos) {
      if (argc >= 2 && name == argv[1]) return {&c, 1};
    } else if (argc >= 3 && name.substr(0, space) == argv[1] && name.substr(space + 1) == argv[2]) {
      return {&c, 2};
    }
  }
  return {nullptr, 0};
}

// The Levenshtein distance: the fewest letters to insert, delete or replace to turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);  // distances from a's first i letters
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t const above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The command that `asked` most likely meant: one within two typos of it, or one whose last word
// it is ("soak" for "bench soak"). Empty when none is that close.
std::string_view closest_command(std::string_view asked) {
  std::string_view closest;
  std::size_t closest_distance = 3;
  for (auto const& c : commands) {
    auto const space = c.name.rfind(' ');
    std::size_t const distance =
        space != std::string_view::npos && c.name.substr(space + 1) == asked ? 0 : edit_distance(asked, c.name);
    if (distance < closest_distance) closest = c.name, closest_distance = distance;
  }
  return closest;
}

// Why argv names no command, in one line.
std::string unknown_command(int argc, char** argv) {
  std::string_view const first = argv[1];
  if (first == "bench" && argc == 2) return "bench needs a benchmark: codec, shuffle, soak or spill (`zshuffle --help`)";
  std::string asked(first);
  if (first == "bench") asked += std::string(" ") + argv[2];
  std::string const what = first.substr(0, 1) == "-" ? "option" : "command";
  std::string line = "unknown " + what + " '" + asked + "'";
  if (auto const meant = closest_command(asked); !meant.empty()) return line + "; did you mean '" + std::string(meant) + "'?";
  return line + " (`zshuffle --help` lists the commands)";
}

// This process's rank in the job while MPI runs, otherwise -1.
int job_rank() {
  int initialized = 0, finalized = 0, rank = -1;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS) return -1;
  if (initialized == 0 || finalized != 0 || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return -1;
  return rank;
}

// "zshuffle: rank R: <what>" (without the rank outside MPI), and with ZS_DEBUG=1 the place in
// the source that raised it. Written straight to stderr and flushed, not logged: it is the
// command's last word, which ZS_LOG_LEVEL must not hide, and MPI_Abort may follow.
void print_error(std::string_view what, const zs::error* raised) {
  constexpr std::string_view prefix = "zshuffle: ";
  if (what.substr(0, prefix.size()) == prefix) what.remove_prefix(prefix.size());
  std::string line(prefix);
  if (int const rank = job_rank(); rank >= 0) line += "rank " + std::to_string(rank) + ": ";
  line += what;
  const char* debug = std::getenv("ZS_DEBUG");
  if (raised != nullptr && debug != nullptr && std::string_view(debug) == "1") {
    line += " (at " + raised->where() + ")";
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

int exit_code_of(const zs::error& e) {
  return e.code() == zs::error_code::invalid_argument ? zs::cli::exit_code::usage : zs::cli::exit_code::failed;
}

// After an error the other ranks did not agree on: they may wait inside a collective for this
// rank, and MPI_Finalize would wait for them, so the job ends here.
void abort_job(int code) {
  if (job_rank() >= 0) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace

int zs::cli::no_gpu(std::string_view command, std::string_view problem) {
  std::fprintf(stderr, "zshuffle %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(problem.size()), problem.data());
  std::fflush(stderr);
  return exit_code::no_gpu;
}

int main(int argc, char** argv) {
  // A ZS_LOG_LEVEL that names no level is reported now, whether or not anything is logged.
  zs::log::configure_from_environment();
  std::string_view const first = argc >= 2 ? argv[1] : "";
  if (first == "help" || first == "--help" || first == "-h") {
    usage(stdout);
    return zs::cli::exit_code::ok;
  }
  if (first == "--version" || first == "-V") {
    std::printf("zshuffle %s\n", ZS_VERSION);
    return zs::cli::exit_code::ok;
  }
  auto const [chosen, words] = find_command(argc, argv);
  if (chosen == nullptr) {
    if (argc >= 2) {
      std::fprintf(stderr, "zshuffle: %s\n", unknown_command(argc, argv).c_str());
    } else {
      usage(stderr);
    }
    return zs::cli::exit_code::usage;
  }

  // Outlives the handlers below: MPI_Finalize runs only after an error every rank agreed on.
  std::optional<zs::mpi_environment> mpi;
  try {
#ifdef ZS_HAVE_NVCOMP
    zs::nvcomp::register_nvcomp_codecs();  // the nvcomp:NAME codecs, for --codec and bench codec --vs nvcomp
#endif
    if (chosen->under_mpi) {
      mpi.emplace(nullptr, nullptr, MPI_THREAD_SINGLE);
      zs::log::set_rank(job_rank());
    }
    return chosen->run(argc - words, argv + words);
  } catch (const zs::cli::agreed_error& e) {
    print_error(e.what(), &e);
    return exit_code_of(e);
  } catch (const zs::error& e) {
    print_error(e.what(), &e);
    abort_job(exit_code_of(e));
    return exit_code_of(e);
  } catch (const std::bad_alloc&) {
    print_error("out of memory: a host allocation failed", nullptr);
    abort_job(zs::cli::exit_code::failed);
    return zs::cli::exit_code::failed;
  } catch (const std::exception& e) {
    print_error(e.what(), nullptr);
    abort_job(zs::cli::exit_code::failed);
    return zs::cli::exit_code::failed;
  }
}

#ifndef ZS_HAVE_BENCH_CODEC
int run_bench_codec(int, char**) {
  std::fputs("zshuffle: this build has no codec benchmark\n", stderr);
  return zs::cli::exit_code::usage;
}
#endif
