// Null masks on the host (zs/null_mask.hpp): expanding to bytes, packing back, counting nulls and
// copying bits from any offset, each checked against a bit-by-bit reference written here, for row
// counts around byte boundaries, no rows, all null and all valid.
#include "zs/null_mask.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "zs/error.hpp"
#include "zs_test.hpp"

namespace {

using zs::memory_kind;

// A mask of `count` rows, row i valid where valid[i], built bit by bit (padding bits 0).
std::vector<std::uint8_t> mask_of(const std::vector<bool>& valid) {
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(valid.size()), 0);
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid[i]) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
  }
  return mask;
}

enum class pattern { random, all_valid, all_null, alternating };

std::vector<bool> validity(std::size_t count, pattern p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<bool> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    switch (p) {
      case pattern::random: out[i] = rng() % 3 != 0; break;
      case pattern::all_valid: out[i] = true; break;
      case pattern::all_null: out[i] = false; break;
      case pattern::alternating: out[i] = i % 2 == 0; break;
    }
  }
  return out;
}

const std::vector<std::size_t> counts{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099};
const std::vector<pattern> patterns{pattern::random, pattern::all_valid, pattern::all_null, pattern::alternating};

void expect_invalid(const std::optional<zs::error>& e, const std::string& part) {
  ASSERT_TRUE(e.has_value()) << "no error, expected one saying '" << part << "'";
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument) << e->what();
  EXPECT_NE(std::string(e->what()).find(part), std::string::npos) << "'" << part << "' not in: " << e->what();
}

std::string what(std::size_t count, pattern p) {
  return std::to_string(count) + " rows, pattern " + std::to_string(static_cast<int>(p));
}

TEST(NullMask, ExpandGivesOneByteOfZeroOrOnePerRow) {
  for (std::size_t count : counts) {
    for (pattern p : patterns) {
      auto const valid = validity(count, p, static_cast<std::uint32_t>(count));
      auto mask = mask_of(valid);
      // Padding bits set on purpose: they must be ignored.
      if (count % 8 != 0) mask.back() = static_cast<std::uint8_t>(mask.back() | (0xffu << (count % 8)));
      std::vector<std::uint8_t> bytes(count, 0x55);
      zs::expand_null_mask(mask.data(), count, bytes.data(), memory_kind::host);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(bytes[i], valid[i] ? 1 : 0) << what(count, p) << ", row " << i;
    }
  }
}

TEST(NullMask, ExpandWithoutMaskIsAllValid) {
  std::vector<std::uint8_t> bytes(37, 0);
  zs::expand_null_mask(nullptr, bytes.size(), bytes.data(), memory_kind::host);
  for (auto b : bytes) EXPECT_EQ(b, 1);
}

TEST(NullMask, PackIsTheInverseAndClearsPadding) {
  for (std::size_t count : counts) {
    for (pattern p : patterns) {
      auto const valid = validity(count, p, 7 + static_cast<std::uint32_t>(count));
      std::vector<std::uint8_t> bytes(count);
      // Any nonzero byte is valid, not only 1.
      for (std::size_t i = 0; i < count; ++i) bytes[i] = valid[i] ? static_cast<std::uint8_t>(1 + i % 200) : 0;
      std::vector<std::uint8_t> mask(zs::null_mask_bytes(count), 0xff);
      zs::pack_null_mask(bytes.data(), count, mask.data(), memory_kind::host);
      EXPECT_EQ(mask, mask_of(valid)) << what(count, p);
      // And back: expand(pack(x)) == x as 0/1.
      std::vector<std::uint8_t> again(count, 9);
      zs::expand_null_mask(mask.data(), count, again.data(), memory_kind::host);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(again[i], valid[i] ? 1 : 0) << what(count, p);
    }
  }
}

TEST(NullMask, CountNullsCountsRowsNotPaddingBits) {
  for (std::size_t count : counts) {
    for (pattern p : patterns) {
      auto const valid = validity(count, p, 3 * static_cast<std::uint32_t>(count));
      std::size_t expected = 0;
      for (bool v : valid) expected += v ? 0 : 1;
      auto mask = mask_of(valid);
      // Padding bits cleared (they would read as nulls) and set (as valid rows): neither counts.
      EXPECT_EQ(zs::count_nulls(mask.data(), count, memory_kind::host), expected) << what(count, p);
      if (count % 8 != 0) mask.back() = static_cast<std::uint8_t>(mask.back() | (0xffu << (count % 8)));
      EXPECT_EQ(zs::count_nulls(mask.data(), count, memory_kind::host), expected) << what(count, p);
    }
  }
  EXPECT_EQ(zs::count_nulls(nullptr, 100, memory_kind::host), 0u) << "no mask: no nulls";
}

TEST(NullMask, CopyBitsFromEveryOffset) {
  for (std::size_t count : {0, 1, 5, 8, 13, 64, 100, 1001}) {
    for (std::uint64_t offset : {0, 1, 3, 7, 8, 9, 15, 16, 63, 77}) {
      auto const source_valid = validity(offset + count + 11, pattern::random, static_cast<std::uint32_t>(count + offset));
      // The source ends at the byte of its last bit copied: a read past it would leave this
      // vector (address sanitizer builds catch it).
      std::vector<bool> const used(source_valid.begin(), source_valid.begin() + static_cast<std::ptrdiff_t>(offset + count));
      auto const source = mask_of(used);
      std::vector<std::uint8_t> out(zs::null_mask_bytes(count), 0xaa);
      zs::copy_null_mask_bits(source.data(), offset, count, out.data(), memory_kind::host);
      std::vector<bool> const expected(used.begin() + static_cast<std::ptrdiff_t>(offset), used.end());
      EXPECT_EQ(out, mask_of(expected)) << count << " rows from bit " << offset;
    }
  }
}

TEST(NullMask, NullPointersForRowsAreRefused) {
  std::uint8_t byte = 0;
  expect_invalid(zs::test::thrown_error([&] { zs::expand_null_mask(&byte, 8, nullptr, memory_kind::host); }),
                 "expand_null_mask: the output is null for 8 rows");
  expect_invalid(zs::test::thrown_error([&] { zs::pack_null_mask(nullptr, 8, &byte, memory_kind::host); }),
                 "pack_null_mask: the bytes to pack is null");
  expect_invalid(zs::test::thrown_error([&] { zs::copy_null_mask_bits(nullptr, 3, 8, &byte, memory_kind::host); }),
                 "copy_null_mask_bits: the source mask is null");
  // No rows: nothing is read or written, so null pointers are fine.
  zs::expand_null_mask(nullptr, 0, nullptr, memory_kind::host);
  zs::pack_null_mask(nullptr, 0, nullptr, memory_kind::host);
  zs::copy_null_mask_bits(nullptr, 5, 0, nullptr, memory_kind::host);
}

}  // namespace
