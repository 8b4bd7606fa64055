// Helpers shared by the communicator tests.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "zs/error.hpp"
#include "zs_test.hpp"  // thrown_error

/// Expects `statement` to throw zs::error with `expected_code`; prints the error's message when
/// the code differs.
#define EXPECT_ZS_ERROR(statement, expected_code)                                           \
  do {                                                                                      \
    try {                                                                                   \
      statement;                                                                            \
      ADD_FAILURE() << "expected zs::error (" << ::zs::to_string(expected_code)             \
                    << ") from: " #statement;                                               \
    } catch (const ::zs::error& zs_error_) {                                                \
      EXPECT_EQ(::zs::to_string(zs_error_.code()), ::zs::to_string(expected_code))          \
          << zs_error_.what();                                                              \
    }                                                                                       \
  } while (0)

namespace zs::test {

/// Byte i of the block that rank `from` sends to rank `to`: differs between blocks and along a
/// block without a short period, so a misplaced or shifted byte shows.
inline std::byte pattern_byte(int from, int to, std::uint64_t i) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(from) << 48) ^
                    (static_cast<std::uint64_t>(to) << 32);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<std::byte>(x & 0xff);
}

inline void fill_pattern(std::byte* data, std::uint64_t bytes, int from, int to) {
  for (std::uint64_t i = 0; i < bytes; ++i) data[i] = pattern_byte(from, to, i);
}

/// The index of the first byte that differs from the pattern, if any.
inline std::optional<std::uint64_t> first_pattern_error(const std::byte* data, std::uint64_t bytes,
                                                        int from, int to) {
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (data[i] != pattern_byte(from, to, i)) return i;
  }
  return std::nullopt;
}

/// Expects `e` to have `code` and a message that contains each of `parts`.
inline void expect_error(const std::optional<zs::error>& e, zs::error_code code,
                         std::initializer_list<std::string> parts) {
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(zs::to_string(e->code()), zs::to_string(code)) << e->what();
  std::string const what = e->what();
  for (auto const& part : parts) EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
}

/// Sets (or with nullptr, unsets) an environment variable for one scope and restores it after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace zs::test
