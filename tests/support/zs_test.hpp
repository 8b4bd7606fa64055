// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "zs/column.hpp"
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

}  // namespace zs::test
