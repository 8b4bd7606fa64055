// The sealed count blocks that ranks exchange before they allocate (comm/src/shuffle_manifest.hpp):
// what a receiver accepts and what it refuses, without MPI.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "comm_test.hpp"
#include "shuffle_manifest.hpp"

namespace {

using zs::detail::slice_counts;
using zs::test::expect_error;
using zs::test::thrown_error;

std::span<const std::byte> bytes_of(const std::vector<std::uint64_t>& words) { return std::as_bytes(std::span(words)); }

const std::vector<zs::value_type> types{zs::value_type::int32, zs::value_type::string};

// Two columns over two rounds, column major.
std::vector<slice_counts> some_slices() { return {{10, 0}, {0, 0}, {3, 17}, {5, 0}}; }

TEST(shuffle_manifest, a_sealed_manifest_reads_back_as_sent) {
  auto const block = zs::detail::seal_manifest(some_slices(), 1, 2);
  ASSERT_EQ(block.size(), 2 * some_slices().size() + 1);
  auto const read = zs::detail::read_manifest(bytes_of(block), 1, 2, types, 2);
  ASSERT_EQ(read.size(), some_slices().size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].rows, some_slices()[i].rows) << i;
    EXPECT_EQ(read[i].chars, some_slices()[i].chars) << i;
  }
}

TEST(shuffle_manifest, carriages_read_back_as_sent_and_nothing_else_is_accepted) {
  std::vector<std::uint8_t> const ways{0, 1, 2};
  std::vector<std::uint8_t> const most{1, 1, 2};  // the last column has an alternative codec
  auto block = zs::detail::seal_carriages(ways, 0, 1);
  EXPECT_EQ(zs::detail::read_carriages(bytes_of(block), 0, 1, most), ways);
  EXPECT_ZS_ERROR(zs::detail::read_carriages(bytes_of(block), 0, 2, most), zs::error_code::corrupt_frame);
  EXPECT_ZS_ERROR(zs::detail::read_carriages(bytes_of(block), 0, 1, std::vector<std::uint8_t>{1, 2}),
                  zs::error_code::corrupt_frame);
  block[1] ^= 1;
  EXPECT_ZS_ERROR(zs::detail::read_carriages(bytes_of(block), 0, 1, most), zs::error_code::corrupt_frame);
  // Sealed, but a way the column cannot take: the alternative codec where it has none, or a
  // value beyond every way.
  auto const no_dictionary = zs::detail::seal_carriages(std::vector<std::uint8_t>{0, 2}, 0, 1);
  expect_error(thrown_error([&] { zs::detail::read_carriages(bytes_of(no_dictionary), 0, 1, std::vector<std::uint8_t>{1, 1}); }),
               zs::error_code::corrupt_frame, {"column 1 travels in way 2", "raw (0), compressed (1)"});
  auto const beyond = zs::detail::seal_carriages(std::vector<std::uint8_t>{3, 0}, 0, 1);
  expect_error(
      thrown_error([&] { zs::detail::read_carriages(bytes_of(beyond), 0, 1, std::vector<std::uint8_t>{2, 2}); }),
      zs::error_code::corrupt_frame, {"column 0 travels in way 3", "by its alternative codec (2)"});
}

TEST(shuffle_manifest, any_flipped_bit_fails_the_seal) {
  auto const good = zs::detail::seal_manifest(some_slices(), 1, 2);
  for (std::size_t bit = 0; bit < good.size() * 64; bit += 7) {
    auto block = good;
    block[bit / 64] ^= std::uint64_t{1} << (bit % 64);
    expect_error(thrown_error([&] { zs::detail::read_manifest(bytes_of(block), 1, 2, types, 2); }),
                 zs::error_code::corrupt_frame, {"the manifest from rank 1: the checksum does not match"});
  }
}

TEST(shuffle_manifest, a_block_meant_for_another_rank_or_from_another_fails_the_seal) {
  auto const block = zs::detail::seal_manifest(some_slices(), 1, 2);
  EXPECT_ZS_ERROR(zs::detail::read_manifest(bytes_of(block), 1, 3, types, 2), zs::error_code::corrupt_frame);
  EXPECT_ZS_ERROR(zs::detail::read_manifest(bytes_of(block), 0, 2, types, 2), zs::error_code::corrupt_frame);
  // Frame sizes of one round do not pass for another's.
  std::vector<std::uint64_t> const sizes{64, 128};
  auto const round_3 = zs::detail::seal_frame_sizes(sizes, 0, 1, 3);
  EXPECT_EQ(zs::detail::read_frame_sizes(bytes_of(round_3), 0, 1, 3, 2), sizes);
  EXPECT_ZS_ERROR(zs::detail::read_frame_sizes(bytes_of(round_3), 0, 1, 4, 2), zs::error_code::corrupt_frame);
}

TEST(shuffle_manifest, a_block_of_the_wrong_length_is_refused_before_it_is_read) {
  auto const block = zs::detail::seal_manifest(some_slices(), 1, 2);
  auto const all = bytes_of(block);
  expect_error(thrown_error([&] { zs::detail::read_manifest(all.first(all.size() - 8), 1, 2, types, 2); }),
               zs::error_code::corrupt_frame, {"the manifest from rank 1: 64 bytes, expected 9 words of 8"});
}

TEST(shuffle_manifest, counts_that_no_column_holds_are_refused_even_when_sealed) {
  // Characters in a fixed-width column.
  std::vector<slice_counts> chars_in_ints = some_slices();
  chars_in_ints[1].chars = 1;
  auto const a = zs::detail::seal_manifest(chars_in_ints, 0, 0);
  expect_error(thrown_error([&] { zs::detail::read_manifest(bytes_of(a), 0, 0, types, 2); }),
               zs::error_code::corrupt_frame, {"column 0 (int32), round 1 brings 0 rows and 1 characters"});
  // 2^62 rows: a byte count that would wrap.
  std::vector<slice_counts> huge = some_slices();
  huge[2].rows = std::uint64_t{1} << 62;
  auto const b = zs::detail::seal_manifest(huge, 0, 0);
  expect_error(thrown_error([&] { zs::detail::read_manifest(bytes_of(b), 0, 0, types, 2); }),
               zs::error_code::corrupt_frame, {"column 1 (string), round 0 brings 4611686018427387904 rows"});
}

TEST(shuffle_manifest, a_huge_column_or_round_count_cannot_make_the_expected_length_wrap) {
  auto const block = zs::detail::seal_manifest(some_slices(), 1, 2);
  EXPECT_ZS_ERROR(zs::detail::read_manifest(bytes_of(block), 1, 2, types, std::uint64_t{1} << 62),
                  zs::error_code::corrupt_frame);
}

TEST(shuffle_manifest, sums_of_peer_counts_say_when_they_wrap) {
  EXPECT_EQ(zs::detail::add_counts(UINT64_MAX - 1, 1, "rows"), UINT64_MAX);
  expect_error(thrown_error([] { zs::detail::add_counts(UINT64_MAX, 1, "the rows column 3 receives"); }),
               zs::error_code::corrupt_frame, {"the rows column 3 receives overflows 64 bits"});
}

TEST(shuffle_manifest, slices_fit_up_to_the_limit_and_no_further) {
  using zs::detail::max_slice_bytes;
  EXPECT_TRUE(zs::detail::slice_fits(zs::value_type::int64, max_slice_bytes / 8, 0));
  EXPECT_FALSE(zs::detail::slice_fits(zs::value_type::int64, max_slice_bytes / 8 + 1, 0));
  EXPECT_FALSE(zs::detail::slice_fits(zs::value_type::int64, UINT64_MAX, 0));
  EXPECT_TRUE(zs::detail::slice_fits(zs::value_type::string, 1, max_slice_bytes - 8));
  EXPECT_FALSE(zs::detail::slice_fits(zs::value_type::string, 1, max_slice_bytes - 7));
  EXPECT_FALSE(zs::detail::slice_fits(zs::value_type::string, UINT64_MAX / 4, 0));
}

}  // namespace
