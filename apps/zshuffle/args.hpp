// The command line's options: CLI11 for parsing, plus what every subcommand shares (sizes such
// as 512M, how a usage error is reported).
//
//   CLI::App app{"A compressed shuffle of the real columns.", "zshuffle demo"};
//   app.add_option("--round-bytes", round_bytes, "...")->transform(zs::cli::size_in(64 << 10));
//   if (!zs::cli::parse(app, argc, argv)) return 0;  // --help was shown
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
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

/// A CLI11 transform for size options: checks the value with parse_size and the range
/// [min, max], and hands the option the number of bytes. Its name in --help is SIZE.
CLI::Validator size_in(std::uint64_t min = 0, std::uint64_t max = std::numeric_limits<std::uint64_t>::max());

/// Parses the words of one subcommand (argv[0] is its name). Returns true when the command should
/// run, false when --help was asked for; the help goes to stdout when `show_help`, so that under
/// mpirun one rank prints it. Throws zs::error (invalid_argument) for a usage error, with CLI11's
/// message and the way to the help text.
bool parse(CLI::App& app, int argc, char** argv, bool show_help = true);

}  // namespace zs::cli
