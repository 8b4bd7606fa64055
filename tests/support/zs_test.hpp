// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"

/// Skips the current test, with the reason, when this machine has no usable CUDA device.
/// GPU tests start with it, so they report SKIPPED instead of passing without running.
#define ZS_REQUIRE_GPU()                                                        \
  do {                                                                          \
    if (!::zs::cuda_device_available()) {                                       \
      GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";       \
    }                                                                           \
  } while (0)

namespace zs::test {

/// A real column from the data directory ($ZS_DATA_DIR). A missing file fails the test: real-data
/// tests never pass without their data.
inline column data_column(const std::string& file_name) {
  std::filesystem::path const path = io::data_dir() / file_name;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "missing data file " << path << " (run scripts/prepare-data)";
    throw std::runtime_error("missing data file " + path.string());
  }
  return io::read_column(path);
}

/// `parts` even partitions of a column, described for encoding from memory `v` (host or device;
/// same shape as `h`). Row ranges and character counts come from the host view `h`.
inline std::vector<encode_source> partition_sources(const column_view& h, const column_view& v, std::size_t parts) {
  std::vector<encode_source> sources;
  for (std::size_t p = 0; p < parts; ++p) {
    std::uint64_t const begin = h.count * p / parts, end = h.count * (p + 1) / parts;
    encode_source s{h.type, end - begin, nullptr};
    if (h.type == value_type::string) {
      s.values = v.data;
      s.offsets = v.offsets + begin;
      s.chars_bytes = static_cast<std::uint64_t>(h.offsets[end] - h.offsets[begin]);
    } else {
      s.values = static_cast<const std::byte*>(v.data) + begin * value_width(h.type);
    }
    sources.push_back(s);
  }
  return sources;
}

/// Decode targets that put each partition of `sources` back in place in column `out`.
inline std::vector<decode_target> partition_targets(const std::vector<encode_source>& sources,
                                                    const mutable_column_view& out) {
  std::vector<decode_target> targets;
  std::uint64_t row = 0, chars = 0;
  for (auto const& s : sources) {
    decode_target t{s.type, s.count, nullptr};
    if (s.type == value_type::string) {
      t.values = out.data;
      t.offsets = out.offsets + row;
      t.chars_begin = chars;
      t.chars_bytes = s.chars_bytes;
      chars += s.chars_bytes;
    } else {
      t.values = static_cast<std::byte*>(out.data) + row * value_width(s.type);
    }
    row += s.count;
    targets.push_back(t);
  }
  return targets;
}

/// The zs::error that `call` throws; adds a test failure and returns nothing when it throws none.
template <typename Call>
std::optional<zs::error> thrown_error(Call&& call) {
  try {
    call();
  } catch (const zs::error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a zs::error";
  return std::nullopt;
}

/// An uninitialised column of the same type and size as `c`, in `memory`.
inline column empty_like(const column& c, memory_kind memory, cudaStream_t stream = nullptr) {
  return column::allocate(c.type(), c.size(), memory, stream, c.type() == value_type::string ? c.data_bytes() : 0);
}

/// `count` values of T from device memory, copied on `stream` (which it waits for).
template <typename T>
std::vector<T> to_host(const void* device, std::size_t count, cudaStream_t stream) {
  std::vector<T> out(count);
  if (count != 0) copy_async(out.data(), device, count * sizeof(T), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

/// Whether `bytes` bytes at `a` and at `b` are equal. Either may be null when `bytes` is 0 (an
/// empty column has no data), which memcmp does not allow even for 0 bytes.
inline bool same_bytes(const void* a, const void* b, std::size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

/// Whether `rows` fixed-width values at `a` and at `b` are equal in every row that holds a value
/// by `mask` (all rows where it is null): the values under null rows are unspecified, and a codec
/// may give back others there (encode_source::null_mask).
inline bool same_valid_rows(const void* a, const void* b, std::uint64_t rows, std::size_t width,
                            const std::uint8_t* mask) {
  if (mask == nullptr) return same_bytes(a, b, rows * width);
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (row_is_valid(mask, i) &&
        std::memcmp(static_cast<const std::byte*>(a) + i * width, static_cast<const std::byte*>(b) + i * width, width) != 0) {
      return false;
    }
  }
  return true;
}

/// Two host columns hold the same bytes (values, and offsets of strings); for fixed-width
/// values, in the rows that hold one by a's mask (same_valid_rows). Masks are the caller's to
/// compare.
inline void expect_same_column(const column& a, const column& b) {
  ASSERT_EQ(a.type(), b.type());
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.data_bytes(), b.data_bytes());
  if (a.type() == value_type::string) {
    EXPECT_TRUE(same_bytes(a.view().data, b.view().data, a.data_bytes())) << "characters differ";
  } else {
    EXPECT_TRUE(same_valid_rows(a.view().data, b.view().data, a.size(), value_width(a.type()), a.view().null_mask))
        << "values differ";
  }
  if (a.type() == value_type::string) {
    EXPECT_TRUE(same_bytes(a.view().offsets, b.view().offsets, (a.size() + 1) * 8)) << "string offsets differ";
  }
}

}  // namespace zs::test
