// Fuzzes the tuning loader: tuning_table::from_json on any text (zs/tuning.hpp; what
// tuning_table::load and the process-wide table read from users' files).
//
// What must hold:
//   - a text that is not a valid table throws zs::error (invalid_argument) and nothing else;
//   - an accepted table holds only params its kernels accept, one entry per key, sorted by key,
//     and find() gives each entry for its own key;
//   - its JSON form (to_json) reads back to the same table: writing and reading again is a fixed
//     point, as `zshuffle tune` relies on when it merges into a saved file;
//   - merging a table into itself changes nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "zs/error.hpp"
#include "zs/tuning.hpp"

namespace {

void check_accepted(const zs::tuning_table& table) {
  auto const entries = table.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto const& e = entries[i];
    ZS_FUZZ_CHECK(zs::valid_params(e.key.kernel, e.params), "accepted params are valid for their kernel");
    ZS_FUZZ_CHECK(i == 0 || entries[i - 1].key < e.key, "entries sorted by key, one per key");
    ZS_FUZZ_CHECK(e.tuned_gbs >= 0 && e.default_gbs >= 0, "rates are not negative");
    zs::tuning_entry const* found = table.find(e.key.device, e.key.compute_major, e.key.compute_minor,
                                               e.key.kernel, e.key.type, e.key.size);
    ZS_FUZZ_CHECK(found == &e, "find gives an entry for its own key");
  }

  std::string const text = table.to_json();
  zs::tuning_table again;
  try {
    again = zs::tuning_table::from_json(text);
  } catch (const zs::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    ZS_FUZZ_CHECK(false, "a table's own JSON form reads back");
  }
  ZS_FUZZ_CHECK(again.size() == table.size(), "reading back keeps every entry");
  ZS_FUZZ_CHECK(again.to_json() == text, "writing and reading a table is a fixed point");

  again.merge(table);
  ZS_FUZZ_CHECK(again.to_json() == text, "merging a table into itself changes nothing");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string const text(reinterpret_cast<const char*>(data), size);
  zs::tuning_table table;
  try {
    table = zs::tuning_table::from_json(text);
  } catch (const zs::error& e) {
    ZS_FUZZ_CHECK(e.code() == zs::error_code::invalid_argument, "a bad table is an invalid_argument");
    return 0;
  }
  // Any other exception escapes and stops the run: the loader promises zs::error only.
  check_accepted(table);
  return 0;
}
