// Reading the column files of a data directory (the layout of shared/data, decompressed):
//   NAME.txt   one UTF-8 string per line, newline-terminated       -> string column
//   NAME.i8 / .u8 / .i16 / .u16 / .i32 / .u32 / .i64 / .u64 / .i128 / .f32 / .f64 / .b8 (bool8)
//              raw little-endian values                          -> fixed-width column
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "zs/column.hpp"

namespace zs::io {

/// The value type a file's extension names; nullopt for an extension that names none.
std::optional<value_type> type_of_file(const std::filesystem::path& path);

/// Reads a column file into host memory. Throws zs::error: io_error when the file cannot be
/// read, is not a regular file (a FIFO, a device, a directory), or its size is not a multiple
/// of the value width; out_of_memory when its size cannot be allocated.
column read_column(const std::filesystem::path& path);

/// The column files of `dir` (regular files, by extension), sorted by name. Throws zs::error
/// (io_error) when the directory cannot be listed.
std::vector<std::filesystem::path> list_columns(const std::filesystem::path& dir);

/// The data directory: $ZS_DATA_DIR when set. Throws zs::error (io_error) naming the variable
/// when it is not set or is not a directory.
std::filesystem::path data_dir();

}  // namespace zs::io
