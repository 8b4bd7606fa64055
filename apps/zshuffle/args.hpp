// The command line's options: CLI11 for parsing, plus what every subcommand shares (sizes such
// as 512M, how a usage error is reported).
//
//   CLI::App app{"A compressed shuffle of the real columns.", "zshuffle demo"};
//   zs::cli::add_size_option(app, "--round-bytes", round_bytes, "bytes per round", 64 << 10);
//   if (!zs::cli::parse(app, argc, argv)) return 0;  // --help was shown
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace zs::cli {

/// Reads a size: plain bytes ("1048576") or a number with the suffix K, M or G (powers of 1024:
/// "64K", "512M", "2G"; lower case too). Throws zs::error (invalid_argument) saying what is wrong
/// for anything else: an empty string, a sign, spaces, another suffix, a fraction, or a value
/// that does not fit in 64 bits.
std::uint64_t parse_size(std::string_view text);

/// The shortest exact spelling of `bytes` that parse_size reads back ("64K", "3M", "1000").
std::string format_size(std::uint64_t bytes);

/// Adds an option that takes a size to `app`: its value is read as parse_size reads it and
/// refused, with the reason, when it is not one or lies outside [min, max]. --help shows it as
/// SIZE, with the default that `bytes` holds.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::uint64_t& bytes, const std::string& help,
                             std::uint64_t min = 0,
                             std::uint64_t max = std::numeric_limits<std::uint64_t>::max());

/// The folder of column files: `data` (the --data option) when not empty, else $ZS_DATA_DIR.
/// Throws zs::error (invalid_argument) with a message for the user when that is no folder, or
/// when neither names one.
std::filesystem::path data_folder(const std::string& data);

/// Parses the words of one subcommand (argv[0] is its name). Returns true when the command should
/// run, false when --help was asked for; the help goes to stdout when `show_help`, so that under
/// mpirun one rank prints it. Throws zs::error (invalid_argument) for a usage error, with CLI11's
/// message and the way to the help text.
bool parse(CLI::App& app, int argc, char** argv, bool show_help = true);

}  // namespace zs::cli
