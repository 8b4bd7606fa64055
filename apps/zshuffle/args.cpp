#include "args.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "zs/error.hpp"

namespace zs::cli {
namespace {

// A size read from text, or why the text is not one. CLI11 validators report a message rather
// than throw, so the reader keeps its reason as text.
struct size_reading {
  std::uint64_t bytes = 0;
  std::string problem;  // empty when `bytes` holds the size
};

size_reading read_size(std::string_view text) {
  std::string const quoted = "'" + std::string(text) + "'";
  if (text.empty()) return {0, "an empty string is not a size"};
  if (std::isspace(static_cast<unsigned char>(text.front())) != 0 ||
      std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    return {0, quoted + " has spaces around it; give the size alone, e.g. 64K"};
  }
  if (text.front() == '-') return {0, quoted + " is negative; a size counts bytes"};
  if (std::isdigit(static_cast<unsigned char>(text.front())) == 0) {
    return {0, quoted + " is not a size: it must start with a digit (e.g. 1048576, 64K, 512M, 2G)"};
  }
  std::uint64_t value = 0;
  auto const [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view const suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (status == std::errc::result_out_of_range) return {0, quoted + " is too large: a size must fit in 64 bits"};

  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (!suffix.empty() && suffix.front() == '.') {
    return {0, quoted + " is not a whole number; write 1536M rather than 1.5G"};
  } else if (!suffix.empty()) {
    return {0, quoted + " has an unknown suffix '" + std::string(suffix) + "' (use K, M or G: powers of 1024)"};
  }
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    return {0, quoted + " is too large: a size must fit in 64 bits"};
  }
  return {value << shift, {}};
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  auto const reading = read_size(text);
  if (!reading.problem.empty()) ZS_FAIL(error_code::invalid_argument, reading.problem);
  return reading.bytes;
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::string_view suffixes = "GMK";
  for (std::size_t i = 0; i < suffixes.size(); ++i) {
    unsigned const shift = 30 - 10 * static_cast<unsigned>(i);
    std::uint64_t const unit = std::uint64_t{1} << shift;
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes >> shift) + suffixes[i];
  }
  return std::to_string(bytes);
}

CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::uint64_t& bytes, const std::string& help,
                             std::uint64_t min, std::uint64_t max) {
  // A transform: CLI11 then reads the option's value from the plain number of bytes it leaves.
  CLI::Validator const size_in_range(
      [min, max](std::string& text) -> std::string {
        auto const reading = read_size(text);
        if (!reading.problem.empty()) return reading.problem;
        if (reading.bytes < min) return "'" + text + "' is below the minimum, " + format_size(min);
        if (reading.bytes > max) return "'" + text + "' is above the maximum, " + format_size(max);
        text = std::to_string(reading.bytes);
        return {};
      },
      "");
  return app.add_option(name, bytes, help)->transform(size_in_range)->type_name("SIZE")->default_str(format_size(bytes));
}

std::filesystem::path data_folder(const std::string& data) {
  std::string named = "--data";
  std::filesystem::path folder(data);
  if (data.empty()) {
    const char* env = std::getenv("ZS_DATA_DIR");
    if (env == nullptr || *env == '\0') {
      ZS_FAIL(error_code::invalid_argument,
              "no data folder: give --data DIR, or set ZS_DATA_DIR (scripts/prepare-data writes the data)");
    }
    named = "ZS_DATA_DIR";
    folder = env;
  }
  std::error_code problem;
  if (std::filesystem::is_directory(folder, problem)) return folder;
  bool const exists = std::filesystem::exists(folder, problem);
  ZS_FAIL(error_code::invalid_argument,
          named + " '" + folder.string() + "' is not a folder" + (exists ? "" : ": nothing is there"));
}

bool parse(CLI::App& app, int argc, char** argv, bool show_help) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp&) {
  } catch (const CLI::CallForAllHelp&) {
  } catch (const CLI::ParseError& e) {
    ZS_FAIL(error_code::invalid_argument,
            std::string(e.what()) + " (`" + app.get_name() + " --help` lists the options)");
  }
  if (show_help) {
    std::fputs(app.help().c_str(), stdout);
    std::fflush(stdout);
  }
  return false;
}

}  // namespace zs::cli
