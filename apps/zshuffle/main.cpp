// zshuffle: compressed GPU shuffles. The command line's entry point.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "commands.hpp"
#include "zs/error.hpp"

namespace {

void usage(std::FILE* out) {
  std::fputs(
      "usage: zshuffle <command> [options]\n"
      "\n"
      "commands:\n"
      "  info [--bandwidth]      GPUs, MPI (and whether it is CUDA-aware), NCCL, codecs\n"
      "  demo --data DIR [...]   a compressed shuffle of the real columns in DIR; run it\n"
      "                          under mpirun or srun (zshuffle demo --help)\n"
      "  bench codec [...]       codec ratio and throughput on one GPU (zshuffle bench codec --help)\n"
      "  bench shuffle [...]     compressed vs raw all-to-all under mpirun (zshuffle bench shuffle --help)\n"
      "  tune [...]              measure kernel launch geometry on this GPU, write a tuning table\n"
      "                          (zshuffle tune --help)\n"
      "  help                    this text\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string const command = argv[1];
  try {
    if (command == "info") return run_info(argc - 1, argv + 1);
    if (command == "demo") return run_demo(argc - 1, argv + 1);
    if (command == "tune") return run_tune(argc - 1, argv + 1);
    if (command == "bench") {
      if (argc >= 3 && std::strcmp(argv[2], "codec") == 0) return run_bench_codec(argc - 2, argv + 2);
      if (argc >= 3 && std::strcmp(argv[2], "shuffle") == 0) return run_bench_shuffle(argc - 2, argv + 2);
      std::fputs("usage: zshuffle bench codec|shuffle [options]\n", stderr);
      return 2;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      usage(stdout);
      return 0;
    }
    std::fprintf(stderr, "zshuffle: unknown command '%s'\n\n", command.c_str());
    usage(stderr);
    return 2;
  } catch (const zs::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.code() == zs::error_code::invalid_argument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zshuffle: %s\n", e.what());
    return 1;
  }
}

#ifndef ZS_HAVE_BENCH_CODEC
int run_bench_codec(int, char**) {
  std::fputs("zshuffle: this build has no codec benchmark\n", stderr);
  return 2;
}
#endif
