#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace zs::cli {

void add_progress_options(CLI::App& app, progress_flags& flags) {
  app.add_flag("--quiet", flags.quiet, "show no progress (this wins over --progress)");
  app.add_flag("--progress", flags.forced,
               "show progress on stderr even when it is not a terminal (under mpirun or srun it is a pipe)");
}

bool progress_wanted(const progress_flags& flags, bool stderr_is_terminal, int rank) {
  if (flags.quiet || rank > 0) return false;
  return flags.forced || stderr_is_terminal;
}

std::string format_bytes(double bytes) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  } else {
    std::snprintf(text, sizeof text, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, units[unit]);
  }
  return text;
}

std::string format_progress(const progress_step& step) {
  std::string line = std::string(step.phase) + ": " + std::string(step.unit) + " " + std::to_string(step.done) +
                     " of " + std::to_string(step.total);
  if (step.bytes > 0) {
    line += ", " + format_bytes(step.bytes);
    if (step.seconds > 0) line += ", " + format_bytes(step.bytes / step.seconds) + "/s";
  }
  if (!step.detail.empty()) line += " (" + std::string(step.detail) + ")";
  return line;
}

progress_display::progress_display(const progress_flags& flags, int rank)
    : shown_(progress_wanted(flags, isatty(STDERR_FILENO) == 1, rank)) {}

progress_display::~progress_display() { clear(); }

void progress_display::begin(std::string phase, std::string unit) {
  phase_ = std::move(phase);
  unit_ = std::move(unit);
  began_ = std::chrono::steady_clock::now();
  last_write_ = {};
}

void progress_display::update(std::uint64_t done, std::uint64_t total, double bytes, std::string_view detail) {
  if (!shown_) return;
  auto const now = std::chrono::steady_clock::now();
  if (done < total && now - last_write_ < std::chrono::milliseconds(100)) return;
  last_write_ = now;
  write(format_progress(
      {phase_, unit_, done, total, bytes, std::chrono::duration<double>(now - began_).count(), detail}));
}

void progress_display::clear() {
  if (!shown_ || width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  std::fflush(stderr);
  width_ = 0;
}

void progress_display::write(const std::string& text) {
  // Spaces cover what remains of a longer line before.
  int const padding = width_ > text.size() ? static_cast<int>(width_ - text.size()) : 0;
  std::fprintf(stderr, "\r%s%*s", text.c_str(), padding, "");
  std::fflush(stderr);
  width_ = text.size() + static_cast<std::size_t>(padding);
}

std::function<void(const zs::shuffle_progress&)> progress_display::shuffle_rounds(std::string phase) {
  if (!shown_) return {};
  begin(std::move(phase), "round");
  return [this](const zs::shuffle_progress& p) { update(p.rounds_done, p.rounds, static_cast<double>(p.raw_bytes)); };
}

}  // namespace zs::cli
