// The log: one line on stderr per message, for what is worth telling but is not an error that a
// caller must handle (a tuning file that was ignored, a communicator destroyed too late, what a
// rank did, for a debug log).
//
//   zs::log::warn("tuning file " + path + " ignored (...); using the shipped tables");
//   if (zs::log::enabled(zs::log::level::debug)) zs::log::debug(describe_plan());
//
// prints, under mpirun or srun,
//
//   zshuffle: rank 3: warning: tuning file /tmp/t.json ignored (...); using the shipped tables
//
// Which messages show is set by the environment variable ZS_LOG_LEVEL: trace, debug, info, warn,
// error or off (default warn: warnings and errors). A value that is none of those is reported
// as a warning and the default holds. Every line names the job rank when one is known: the
// launcher's (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID), or the one given to
// set_rank. Lines are written whole and flushed at once, so lines of concurrent threads do not
// mix, and a line logged just before a crash or a hang is not lost.
//
// Errors that end a call are thrown (zs::error), not logged; the log is for the rest.
#pragma once

#include <optional>
#include <string_view>

namespace zs::log {

/// From the most to the least verbose; `off` shows nothing.
enum class level { trace, debug, info, warn, error, off };

/// "trace", "debug", "info", "warn", "error", "off": the names ZS_LOG_LEVEL takes.
std::string_view to_string(level l) noexcept;
/// The level a name (as to_string writes it) stands for; nullopt for any other text.
std::optional<level> parse_level(std::string_view name) noexcept;

/// Messages at `threshold` and above show, below it are dropped (set_level(level::off): none).
void set_level(level threshold) noexcept;
level current_level() noexcept;
/// Whether a message at `l` would show: to skip building a costly message that would not.
bool enabled(level l) noexcept;

/// The rank every line names from now on ("zshuffle: rank 3: ..."); a negative rank: none.
void set_rank(int rank) noexcept;

/// Reads ZS_LOG_LEVEL and the launcher's rank variables again (the first message reads them),
/// replacing the level and rank set so far. Warns about a ZS_LOG_LEVEL that names no level.
void configure_from_environment() noexcept;

/// Writes `message` as one line at `l`, when enabled(l). Never throws: a message that cannot be
/// written is lost.
void write(level l, std::string_view message) noexcept;

inline void trace(std::string_view message) noexcept { write(level::trace, message); }
inline void debug(std::string_view message) noexcept { write(level::debug, message); }
inline void info(std::string_view message) noexcept { write(level::info, message); }
inline void warn(std::string_view message) noexcept { write(level::warn, message); }
inline void error(std::string_view message) noexcept { write(level::error, message); }

}  // namespace zs::log
