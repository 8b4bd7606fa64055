// Reading whole files that a user names, without hanging or running out of memory on a path
// that is not an ordinary file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace zs::detail {

/// The bytes of the regular file at `path`, which holds at most `max_bytes`. `what` names the
/// file in messages ("column file", "tuning file"). Throws zs::error: io_error when the file
/// cannot be opened or read, is not a regular file (a FIFO would block until a writer came, a
/// device such as /dev/zero never ends, a directory holds no bytes), holds more than
/// max_bytes, or changes size while it is read; out_of_memory when its size cannot be allocated.
std::string read_regular_file(const std::filesystem::path& path, std::string_view what,
                              std::uint64_t max_bytes = UINT64_MAX);

}  // namespace zs::detail
