// The subcommands of the zshuffle command line. Each takes the words after its name
// (argv[0] is the subcommand's own name) and returns the process exit code. Those that run under
// mpirun (demo, bench shuffle, bench soak) find MPI initialized by main().
#pragma once

#include <string_view>

int run_info(int argc, char** argv);
int run_demo(int argc, char** argv);
int run_bench_codec(int argc, char** argv);
int run_bench_shuffle(int argc, char** argv);
int run_bench_soak(int argc, char** argv);
int run_bench_spill(int argc, char** argv);
int run_bench_stream(int argc, char** argv);
int run_tune(int argc, char** argv);

namespace zs::cli {

/// The exit codes of every command; `zshuffle --help` lists them.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int failed = 1;     // the run failed, or what it checked did not hold
inline constexpr int usage = 2;      // the command line is wrong (an unknown option, a bad value)
inline constexpr int timed_out = 3;  // a peer stopped answering; the job was aborted (ZS_TIMEOUT)
inline constexpr int no_gpu = 4;     // the command needs a CUDA GPU (one per rank) and has none
}  // namespace exit_code

/// Says on stderr that `command` cannot run here for want of a GPU ("zshuffle bench codec: no
/// CUDA device on this machine; the benchmark needs one"), and returns exit_code::no_gpu.
int no_gpu(std::string_view command, std::string_view problem);

}  // namespace zs::cli
