# Shared by the scripts in this folder (sourced, not run): paths, the CUDA toolkit, configuring
# a build, and launching MPI programs. Callers set `set -euo pipefail` before sourcing.

zs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

zs_log() { printf '%s\n' "$*" >&2; }
zs_die() { printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# Seconds since the epoch, for phase timings.
zs_now() { date +%s; }

# Puts the CUDA toolkit's nvcc on PATH when it is installed but not on PATH (the usual state
# right after NVIDIA's installer), and fails with what to do when there is no toolkit at all.
zs_use_cuda() {
  if command -v nvcc >/dev/null 2>&1; then
    return 0
  fi
  local dir
  for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [[ -n $dir && -x $dir/bin/nvcc ]]; then
      export PATH="$dir/bin:$PATH"
      return 0
    fi
  done
  zs_die "the CUDA toolkit (nvcc) is needed to build zshuffle, even on a machine without a GPU:
  the library's GPU kernels are always compiled. Install NVIDIA's CUDA toolkit (tested with 13.0,
  at /usr/local/cuda, which also holds NCCL), or put its bin/ on PATH.
  Debian's and Ubuntu's nvidia-cuda-toolkit package may work too, but it is not the tested one."
}

# Our GPU machines carry cmake 4.x and ninja in a Python environment rather than as packages,
# and have no network to install them; elsewhere this does nothing.
zs_use_tool_venv() {
  local venv=/opt/torch/.venv/bin
  if [[ -x $venv/cmake ]]; then
    export PATH="$venv:$PATH"
  fi
}

# mpirun flags for a single machine: as many ranks as asked whatever the core count, and root
# allowed (CI containers and the GPU machines run as root).
zs_mpirun_flags() {
  local flags=(--oversubscribe)
  if [[ $(id -u) == 0 ]]; then
    flags+=(--allow-run-as-root)
  fi
  printf '%s\n' "${flags[@]}"
}

# zs_clang: prints the clang++ of the sanitizer and fuzz builds: $ZS_CLANG when set, else
# clang++-16, else clang++. It must be clang 16 or newer: older ones lack C++20 features the
# sources use (lambdas that capture structured bindings). scripts/install-deps --clang installs it.
zs_clang() {
  local cxx=${ZS_CLANG:-} candidate
  if [[ -z $cxx ]]; then
    for candidate in clang++-16 clang++; do
      if command -v "$candidate" >/dev/null 2>&1; then cxx=$candidate; break; fi
    done
  fi
  [[ -n $cxx ]] || zs_die "no clang++ found: run scripts/install-deps --clang, or set ZS_CLANG"
  local major
  major=$("$cxx" -dumpversion | cut -d. -f1)
  (( major >= 16 )) ||
    zs_die "$cxx is clang $major; the sanitizer and fuzz builds need clang 16 or newer (set ZS_CLANG)"
  printf '%s\n' "$cxx"
}

# zs_use_symbolizer CXX: points the sanitizers at the llvm-symbolizer of CXX's version, so that
# their reports name functions, files and lines.
zs_use_symbolizer() {
  local symbolizer major
  major=$("$1" -dumpversion | cut -d. -f1)
  symbolizer=$(command -v "llvm-symbolizer-$major" || command -v llvm-symbolizer || true)
  if [[ -n $symbolizer ]]; then
    export ASAN_SYMBOLIZER_PATH=$symbolizer
  fi
}

# zs_configure BUILD_DIR DATA_DIR [extra cmake args...]
# Configures a Release build with Ninja. ZS_CUDA_ARCHS (e.g. "90" or "80;90") overrides the
# project's default GPU architectures.
zs_configure() {
  local build=$1 data=$2
  shift 2
  local args=(-S "$zs_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DZS_DATA_DIR=$data")
  if [[ -n ${ZS_CUDA_ARCHS:-} ]]; then
    args+=("-DCMAKE_CUDA_ARCHITECTURES=$ZS_CUDA_ARCHS")
  fi
  if [[ -f $build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/CMakeCache.txt"; then
    zs_die "$build was configured with another generator than Ninja; remove it or set ZS_BUILD_DIR"
  fi
  cmake "${args[@]}" "$@"
}

# zs_app BUILD_DIR: prints the path of the zshuffle command line in a build (target
# zshuffle_app), or nothing when it has not been built.
zs_app() {
  local candidate
  for candidate in "$1/bin/zshuffle" "$1/apps/zshuffle/zshuffle"; do
    if [[ -x $candidate ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
}

# zs_skipped_tests JUNIT_FILE: one line "ctest test: GoogleTest case -- reason" per skipped test
# case (and "ctest test: (whole test)" for a ctest test reported as skipped), from ctest's JUnit
# output written with the full test output (--test-output-size-passed). A GoogleTest case that
# skips still counts as passed for ctest, so this is the only place where such skips show.
zs_skipped_tests() {
  [[ -f $1 ]] || return 0
  # Colour codes: raw, or as ctest escapes them in XML.
  sed -e 's/\x1b\[[0-9;]*m//g' -e 's/\[NON-XML-CHAR-0x1B\]\[[0-9;]*m//g' "$1" | awk '
    /<testcase / {
      test = "?"
      if (match($0, /name="[^"]*"/)) test = substr($0, RSTART + 6, RLENGTH - 7)
    }
    /<skipped/ { print test ": (whole test)" }
    /\[  SKIPPED \] [^ ]+ \([0-9]+ ms\)/ {
      if (match($0, /\[  SKIPPED \] [^ ]+ \(/)) {
        print test ": " substr($0, RSTART + 13, RLENGTH - 15) " -- " reason
      }
    }
    # GoogleTest prints "file:line: Skipped", then the reason, then "[  SKIPPED ] name".
    { sub(/^\[[^]]*\] /, "", $0) }   # the rank prefix MPI tests put before their lines
    /: Skipped$/ { reason = ""; in_reason = 1; next }
    in_reason && /^\[  SKIPPED \]/ { in_reason = 0 }
    in_reason && NF { reason = (reason == "" ? $0 : reason " " $0) }
  ' | sort -u
}
