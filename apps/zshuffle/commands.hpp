// The subcommands of the zshuffle command line. Each takes the words after its name
// (argv[0] is the subcommand's own name) and returns the process exit code. Those that run under
// mpirun (demo, bench shuffle, bench soak) find MPI initialized by main().
#pragma once

int run_info(int argc, char** argv);
int run_demo(int argc, char** argv);
int run_bench_codec(int argc, char** argv);
int run_bench_shuffle(int argc, char** argv);
int run_bench_soak(int argc, char** argv);
int run_tune(int argc, char** argv);
