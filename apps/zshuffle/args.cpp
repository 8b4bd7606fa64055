#include "args.hpp"

#include <algorithm>

#include "zs/error.hpp"

namespace zs::cli {

args::args(int argc, char** argv, const std::vector<std::string>& options,
           const std::vector<std::string>& flags) {
  auto known = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0) ZS_FAIL(error_code::invalid_argument, "unexpected argument '" + word + "'");
    std::string name = word.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (known(flags, name)) {
      if (value) ZS_FAIL(error_code::invalid_argument, "--" + name + " takes no value");
      flags_[name] = true;
    } else if (known(options, name)) {
      if (!value) {
        if (i + 1 >= argc) ZS_FAIL(error_code::invalid_argument, "--" + name + " needs a value");
        value = argv[++i];
      }
      values_[name] = *value;
    } else {
      ZS_FAIL(error_code::invalid_argument, "unknown option --" + name);
    }
  }
}

std::optional<std::string> args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t const comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::uint64_t parse_size(const std::string& text) {
  std::size_t used = 0;
  std::uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    ZS_FAIL(error_code::invalid_argument, "'" + text + "' is not a size");
  }
  std::string const suffix = text.substr(used);
  std::uint64_t scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1ULL << 10;
  else if (suffix == "M" || suffix == "m") scale = 1ULL << 20;
  else if (suffix == "G" || suffix == "g") scale = 1ULL << 30;
  else if (!suffix.empty()) ZS_FAIL(error_code::invalid_argument, "'" + text + "' is not a size (use K, M or G)");
  return value * scale;
}

std::uint64_t args::size_or(const std::string& name, std::uint64_t fallback) const {
  auto v = get(name);
  return v ? parse_size(*v) : fallback;
}

int args::int_or(const std::string& name, int fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  try {
    std::size_t used = 0;
    int const n = std::stoi(*v, &used);
    if (used == v->size()) return n;
  } catch (const std::exception&) {
  }
  ZS_FAIL(error_code::invalid_argument, "--" + name + " needs an integer, not '" + *v + "'");
}

}  // namespace zs::cli
