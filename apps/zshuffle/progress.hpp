// Progress of a long run, on a terminal: one line on stderr, rewritten in place (a carriage
// return, no newline), erased before results are printed.
//
//   shuffle: round 3 of 24, 48.0 MiB, 412.3 MiB/s
//
// Rank 0 alone shows it, and only where stderr is a terminal: a log file or a pipe would fill
// with lines that a terminal overwrites. Under mpirun or srun every rank's stderr is a pipe, even
// when the launcher writes to a terminal, so there --progress asks for it; --quiet turns it off.
//
//   zs::cli::progress_display progress(options.progress, comm.rank());
//   progress.begin("soak", "shuffle");
//   for (int i = 1; i <= n; ++i) { ...; progress.update(i, n, bytes_so_far); }
//   progress.clear();  // before printing the results
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "zs/comm/shuffle.hpp"

namespace zs::cli {

/// --quiet and --progress.
struct progress_flags {
  bool quiet = false;   // never show progress
  bool forced = false;  // show it even when stderr is not a terminal
};

/// Adds --quiet and --progress to `app`.
void add_progress_options(CLI::App& app, progress_flags& flags);

/// Whether a run shows progress: never with --quiet, never on a rank other than 0 (a rank below
/// 0, outside MPI, counts as 0), with --progress always, otherwise when stderr is a terminal.
bool progress_wanted(const progress_flags& flags, bool stderr_is_terminal, int rank);

/// "512 B", "64.0 KiB", "48.0 MiB", "1.50 GiB": powers of 1024, three significant digits.
std::string format_bytes(double bytes);

/// What one progress line says.
struct progress_step {
  std::string_view phase;   // what runs: "shuffle", "soak", "nccl raw"
  std::string_view unit;    // what is counted: "round", "shuffle", "run"
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  double bytes = 0;         // moved so far; shown when above 0
  double seconds = 0;       // since the phase began; with bytes, gives the rate
  std::string_view detail;  // shown in parentheses when not empty
};

/// "shuffle: round 3 of 24, 48.0 MiB, 412 MiB/s (detail)".
std::string format_progress(const progress_step& step);

/// The progress line of one run, on stderr, when progress_wanted; otherwise every call does
/// nothing. Erases its line when destroyed.
class progress_display {
 public:
  progress_display(const progress_flags& flags, int rank);
  ~progress_display();
  progress_display(const progress_display&) = delete;
  progress_display& operator=(const progress_display&) = delete;

  bool shown() const noexcept { return shown_; }

  /// Starts a phase: later steps count `unit`s of `phase`, and their rate counts from now.
  void begin(std::string phase, std::string unit);
  /// Shows `done` of `total` in the current phase, `bytes` moved so far. Writes at most ten
  /// times a second, and always the last step (done == total), so that a fast loop does not
  /// spend its time on the terminal.
  void update(std::uint64_t done, std::uint64_t total, double bytes = 0, std::string_view detail = {});
  /// Erases the line, so that what is printed next starts at the left margin.
  void clear();

  /// A zs::shuffle_options::progress callback that shows the shuffle's rounds as a phase of
  /// their own, `phase`; an empty one (which the shuffle skips) when nothing is shown.
  std::function<void(const zs::shuffle_progress&)> shuffle_rounds(std::string phase);

 private:
  void write(const std::string& text);

  bool shown_ = false;
  std::string phase_, unit_;
  std::chrono::steady_clock::time_point began_, last_write_;
  std::size_t width_ = 0;  // characters of the line on screen
};

}  // namespace zs::cli
