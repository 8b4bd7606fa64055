// A small command-line reader: --name value, --name=value and --flag.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zs::cli {

class args {
 public:
  /// Reads argv[1..argc); `flags` lists the options that take no value. Throws zs::error
  /// (invalid_argument) for an unknown option or a missing value, naming it.
  args(int argc, char** argv, const std::vector<std::string>& options,
       const std::vector<std::string>& flags);

  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  /// A size such as 1048576, 64K, 512M or 2G (powers of 1024).
  std::uint64_t size_or(const std::string& name, std::uint64_t fallback) const;
  int int_or(const std::string& name, int fallback) const;

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> flags_;
};

/// The non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& list);

/// Parses 123, 64K, 512M, 2G (powers of 1024); throws zs::error on anything else.
std::uint64_t parse_size(const std::string& text);

}  // namespace zs::cli
