// zshuffle: compressed GPU shuffles. The command line's entry point: finds the subcommand,
// starts MPI for those that run under mpirun, and turns what they throw into a message and an
// exit code (2 for a usage error, 1 for any other failure).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "job.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/error.hpp"

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
};

void usage(std::FILE* out) {
  std::fputs(
      "usage: zshuffle <command> [options]\n"
      "\n"
      "commands:\n"
      "  info [--bandwidth]      GPUs, MPI (and whether it is CUDA-aware), NCCL, codecs\n"
      "  demo --data DIR [...]   a compressed shuffle of the real columns in DIR; run it\n"
      "                          under mpirun or srun\n"
      "  bench codec [...]       codec ratio and throughput on one GPU\n"
      "  bench shuffle [...]     compressed vs raw all-to-all under mpirun\n"
      "  bench soak [...]        many shuffles in one process under mpirun, every result verified,\n"
      "                          memory at the start and the end\n"
      "  tune [...]              measure kernel launch geometry on this GPU, write a tuning table\n"
      "  help                    this text\n"
      "\n"
      "`zshuffle <command> --help` lists a command's options. ZS_DEBUG=1 adds to an error\n"
      "message the source file and line that raised it.\n",
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

// This process's rank in the job while MPI runs, otherwise -1.
int job_rank() {
  int initialized = 0, finalized = 0, rank = -1;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS) return -1;
  if (initialized == 0 || finalized != 0 || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return -1;
  return rank;
}

// "zshuffle: rank R: <what>" (without the rank outside MPI), and with ZS_DEBUG=1 the place in
// the source that raised it.
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

int exit_code(const zs::error& e) { return e.code() == zs::error_code::invalid_argument ? 2 : 1; }

// After an error the other ranks did not agree on: they may wait inside a collective for this
// rank, and MPI_Finalize would wait for them, so the job ends here.
void abort_job(int code) {
  if (job_rank() >= 0) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view const first = argc >= 2 ? argv[1] : "";
  if (first == "help" || first == "--help" || first == "-h") {
    usage(stdout);
    return 0;
  }
  auto const [chosen, words] = find_command(argc, argv);
  if (chosen == nullptr) {
    if (first == "bench" && argc == 2) {
      std::fputs("zshuffle: bench needs a benchmark: codec, shuffle or soak\n\n", stderr);
    } else if (argc >= 2) {
      std::string asked(first);
      if (first == "bench") asked += std::string(" ") + argv[2];
      std::fprintf(stderr, "zshuffle: unknown command '%s'\n\n", asked.c_str());
    }
    usage(stderr);
    return 2;
  }

  // Outlives the handlers below: MPI_Finalize runs only after an error every rank agreed on.
  std::optional<zs::mpi_environment> mpi;
  try {
    if (chosen->under_mpi) mpi.emplace(nullptr, nullptr, MPI_THREAD_SINGLE);
    return chosen->run(argc - words, argv + words);
  } catch (const zs::cli::agreed_error& e) {
    print_error(e.what(), &e);
    return exit_code(e);
  } catch (const zs::error& e) {
    print_error(e.what(), &e);
    abort_job(exit_code(e));
    return exit_code(e);
  } catch (const std::bad_alloc&) {
    print_error("out of memory: a host allocation failed", nullptr);
    abort_job(1);
    return 1;
  } catch (const std::exception& e) {
    print_error(e.what(), nullptr);
    abort_job(1);
    return 1;
  }
}

#ifndef ZS_HAVE_BENCH_CODEC
int run_bench_codec(int, char**) {
  std::fputs("zshuffle: this build has no codec benchmark\n", stderr);
  return 2;
}
#endif
