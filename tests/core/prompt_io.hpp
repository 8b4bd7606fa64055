// Checks that reading a path that is not a regular file fails at once with an I/O error, and
// that a read that blocks instead cannot hang the test.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

#include "zs/error.hpp"

namespace zs::test {

/// Runs `read` on a thread of its own and expects it to throw zs::error (io_error) whose message
/// holds `expected`, within `seconds`. A read still blocked then (opening the FIFO `fifo` waits
/// for a writer) fails the test; a writer opened and closed afterwards lets it end.
template <typename Read>
void expect_io_error_within_seconds(int seconds, const std::filesystem::path& fifo, Read read,
                                    const std::string& expected) {
  auto outcome = std::async(std::launch::async, [read]() -> std::string {
    try {
      read();
      return "no error";
    } catch (const zs::error& e) {
      return e.code() == zs::error_code::io_error ? e.message() : std::string("not an I/O error: ") + e.what();
    }
  });
  if (outcome.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    ADD_FAILURE() << "still reading after " << seconds << " s";
    if (!fifo.empty()) {
      int const fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    }
  }
  std::string const message = outcome.get();
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

}  // namespace zs::test
