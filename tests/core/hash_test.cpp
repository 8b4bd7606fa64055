// zs-sum64: known values, and the properties the format relies on.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "zs/hash.hpp"

namespace {

std::uint64_t checksum_of(const std::string& s) {
  return zs::hash::checksum(reinterpret_cast<const std::byte*>(s.data()), s.size());
}

// Values computed from the definition in docs/FORMAT.md by a separate implementation.
TEST(Sum64, MatchesIndependentlyComputedVectors) {
  EXPECT_EQ(checksum_of(""), 0x0ULL);
  EXPECT_EQ(checksum_of(std::string(1, '\0')), 0x447d27f4d6d42b58ULL);
  EXPECT_EQ(checksum_of("a"), 0xea45d6e23e947370ULL);
  EXPECT_EQ(checksum_of("zshuffle"), 0x52a56452f16678dcULL);
  EXPECT_EQ(checksum_of("zshuffle frame v1"), 0x93edf5b94cf27d09ULL);
  std::string all(256, '\0');
  for (int i = 0; i < 256; ++i) all[i] = static_cast<char>(i);
  EXPECT_EQ(checksum_of(all), 0x4b6c025bc8c9e7afULL);
}

TEST(Sum64, AnySplitOfTheWordsGivesTheSameSum) {
  std::mt19937_64 rng(7);
  std::vector<std::byte> data(10003);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  std::uint64_t const words = (data.size() + 7) / 8;
  // Sum the terms back to front and in two interleaved halves, as GPU blocks would.
  std::uint64_t even = 0, odd = 0;
  for (std::uint64_t i = words; i-- > 0;) {
    std::uint64_t const t = zs::hash::term(i, zs::hash::load_word(data.data(), data.size(), i));
    (i % 2 ? odd : even) += t;
  }
  EXPECT_EQ(zs::hash::finish(even + odd, data.size()), zs::hash::checksum(data.data(), data.size()));
}

TEST(Sum64, DetectsEverySingleBitFlip) {
  std::vector<std::byte> data(257);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 31 + 7);
  std::uint64_t const good = zs::hash::checksum(data.data(), data.size());
  for (std::size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<std::byte>(1U << (bit % 8));
    ASSERT_NE(zs::hash::checksum(data.data(), data.size()), good) << "bit " << bit;
    data[bit / 8] ^= static_cast<std::byte>(1U << (bit % 8));
  }
}

TEST(Sum64, DetectsSwappedWordsAndTrailingZeros) {
  std::string a = "0123456789abcdefXXXXXXXXYYYYYYYY";
  std::string b = "0123456789abcdefYYYYYYYYXXXXXXXX";
  EXPECT_NE(checksum_of(a), checksum_of(b));
  EXPECT_NE(checksum_of("abc"), checksum_of(std::string("abc\0", 4)));
  EXPECT_NE(checksum_of(std::string(8, '\0')), checksum_of(std::string(16, '\0')));
}

}  // namespace
