// Fuzzes the spill file reader: zs::restore_from_file on any bytes (zs/spill.hpp; the file tier
// reads files a process wrote earlier, which a full disk, a crash or another program may have
// cut or changed), then zs::restore of what it accepts.
//
// What must hold:
//   - a file that is not a spill file as written throws zs::error (corrupt_frame) and nothing
//     else; so does a restore that finds a frame its decoder refuses;
//   - a handle that loads restores (to host memory) to a column of the handle's type, rows and
//     nullability, which spills to a file and loads again to the same column.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_check.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/spill.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_path(const char* what) {
  return fs::temp_directory_path() / ("zs_fuzz_spill_" + std::string(what) + "_" + std::to_string(::getpid()));
}

bool same_column(const zs::column& a, const zs::column& b) {
  zs::column_view const x = a.view(), y = b.view();
  if (x.type != y.type || x.count != y.count || a.nullable() != b.nullable()) return false;
  if (a.nullable() && a.validity() != b.validity()) return false;
  if (x.type == zs::value_type::string) {
    for (std::uint64_t i = 0; i <= x.count; ++i) {
      if (x.offsets[i] - x.offsets[0] != y.offsets[i] - y.offsets[0]) return false;
    }
    auto const chars = static_cast<std::size_t>(x.offsets[x.count] - x.offsets[0]);
    return zs::fuzz::same_bytes(static_cast<const char*>(x.data) + x.offsets[0],
                                static_cast<const char*>(y.data) + y.offsets[0], chars);
  }
  return zs::fuzz::same_bytes(x.data, y.data, x.count * zs::value_width(x.type));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fs::path const input = scratch_path("input"), again = scratch_path("again");
  {
    std::ofstream out(input, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    ZS_FUZZ_CHECK(static_cast<bool>(out), "the input reaches its scratch file");
  }
  zs::spilled_column handle;
  zs::column back;
  try {
    handle = zs::restore_from_file(input);
    back = zs::restore(handle, zs::memory_kind::host, nullptr);
  } catch (const zs::error& e) {
    ZS_FUZZ_CHECK(e.code() == zs::error_code::corrupt_frame, "a bad spill file is a corrupt_frame error");
    return 0;
  }
  // Any other exception escapes and stops the run: the reader promises zs::error only.
  ZS_FUZZ_CHECK(back.type() == handle.type() && back.size() == handle.size(), "the restored column is the file's");
  ZS_FUZZ_CHECK(back.nullable() == handle.nullable(), "a mask comes back where the file has one");
  zs::spilled_column const parked = zs::spill(back.view(), nullptr);
  zs::spill_to_file(parked, again);
  zs::spilled_column loaded = zs::restore_from_file(again);
  ZS_FUZZ_CHECK(same_column(back, zs::restore(loaded, zs::memory_kind::host, nullptr)),
                "a restored column spills to a file and loads again unchanged");
  return 0;
}
