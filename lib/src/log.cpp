// The log (zs/log.hpp), written by spdlog. spdlog stays inside the library: no header of ours
// names it, so programs that use zshuffle need neither its headers nor its CMake package.
#include "zs/log.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace zs::log {
namespace {

constexpr std::string_view level_names[] = {"trace", "debug", "info", "warn", "error", "off"};

spdlog::level::level_enum spdlog_level(level l) {
  switch (l) {
    case level::trace: return spdlog::level::trace;
    case level::debug: return spdlog::level::debug;
    case level::info: return spdlog::level::info;
    case level::warn: return spdlog::level::warn;
    case level::error: return spdlog::level::err;
    case level::off: break;
  }
  return spdlog::level::off;
}

// This process's rank in the job as its launcher announces it, or -1: Open MPI's mpirun, PMIx
// (Open MPI 5 and others), MPICH's and Intel MPI's Hydra, Slurm's srun.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text == nullptr) continue;
    const char* const end = text + std::strlen(text);
    int rank = -1;
    auto const [stop, status] = std::from_chars(text, end, rank);
    if (status == std::errc() && stop == end && stop != text && rank >= 0) return rank;
  }
  return -1;
}

class logger_state {
 public:
  logger_state() : logger_("zshuffle", std::make_shared<spdlog::sinks::stderr_sink_mt>()) {
    logger_.set_level(spdlog::level::trace);  // threshold_ decides; spdlog writes what it is given
    configure();
  }

  void configure() {
    set_rank(launcher_rank());
    const char* text = std::getenv("ZS_LOG_LEVEL");
    std::string_view const asked = text != nullptr ? text : "";
    auto const named = parse_level(asked);
    threshold_.store(named.value_or(level::warn));
    if (!asked.empty() && !named) {
      write(level::warn, "ZS_LOG_LEVEL='" + std::string(asked) +
                             "' is not a level (trace, debug, info, warn, error, off); using warn");
    }
  }

  void set_rank(int rank) {
    // The rank is part of the pattern: spdlog then writes each line in one piece.
    logger_.set_pattern(rank < 0 ? "zshuffle: %l: %v" : "zshuffle: rank " + std::to_string(rank) + ": %l: %v");
  }

  void set_threshold(level l) { threshold_.store(l); }
  level threshold() const { return threshold_.load(); }

  void write(level l, std::string_view message) {
    if (l == level::off || l < threshold_.load()) return;
    logger_.log(spdlog_level(l), spdlog::string_view_t(message.data(), message.size()));
  }

 private:
  std::atomic<level> threshold_{level::warn};
  spdlog::logger logger_;
};

// The process's one logger: made at first use and never destroyed, so that code running at exit
// (static destructors) may still log. `made`, on the call that makes it, is set to true.
logger_state& state(bool* made = nullptr) {
  static logger_state* const the_state = [made] {
    if (made != nullptr) *made = true;
    return new logger_state();
  }();
  return *the_state;
}

}  // namespace

std::string_view to_string(level l) noexcept { return level_names[static_cast<int>(l)]; }

std::optional<level> parse_level(std::string_view name) noexcept {
  for (std::size_t i = 0; i < std::size(level_names); ++i) {
    if (level_names[i] == name) return static_cast<level>(i);
  }
  return std::nullopt;
}

void set_level(level threshold) noexcept {
  try {
    state().set_threshold(threshold);
  } catch (...) {
  }
}

level current_level() noexcept {
  try {
    return state().threshold();
  } catch (...) {
    return level::warn;
  }
}

bool enabled(level l) noexcept { return l != level::off && l >= current_level(); }

void set_rank(int rank) noexcept {
  try {
    state().set_rank(rank);
  } catch (...) {
  }
}

void configure_from_environment() noexcept {
  try {
    bool made = false;
    logger_state& s = state(&made);
    if (!made) s.configure();  // a state made just now read the environment already
  } catch (...) {
  }
}

void write(level l, std::string_view message) noexcept {
  try {
    state().write(l, message);
  } catch (...) {
  }
}

}  // namespace zs::log
