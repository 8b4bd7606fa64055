// The partition store with device tables: resident pieces stay on the GPU within the budget,
// spilled ones go through the GPU codecs to pinned memory, and every piece comes back to the
// device exactly, in insertion order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zs/memory.hpp"
#include "zs/partition_store.hpp"
#include "zs_test.hpp"

namespace {

zs::table host_piece(std::uint64_t k, std::uint64_t rows) {
  std::vector<std::int32_t> values(rows);
  std::vector<double> reals(rows);
  std::vector<std::string> words(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    values[i] = static_cast<std::int32_t>(k * 7 + i % 100);
    reals[i] = static_cast<double>(i % 1000) * 0.25;
    words[i] = "p" + std::to_string(k) + "/" + std::to_string(i % 300);
  }
  zs::table t;
  t.names = {"i", "d", "s"};
  t.columns.push_back(zs::column::from_values<std::int32_t>(values));
  t.columns.push_back(zs::column::from_values<double>(reals));
  t.columns.push_back(zs::column::from_strings(words));
  return t;
}

// host_piece(k, rows) with a null mask on column `nullable`, its bytes drawn from k.
zs::table nullable_piece(std::uint64_t k, std::uint64_t rows, std::size_t nullable) {
  zs::table t = host_piece(k, rows);
  std::uint8_t* const mask = t.columns[nullable].add_null_mask();
  for (std::uint64_t b = 0; b < zs::null_mask_bytes(rows); ++b) mask[b] = static_cast<std::uint8_t>(k + b * 3);
  return t;
}

TEST(PartitionStoreGpu, DevicePiecesWithinTheBudgetAndBackExactly) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::uint64_t const rows = 200000;
  std::uint64_t const bytes = zs::partition_store::bytes_of(host_piece(0, rows));
  zs::partition_store store({.budget_bytes = 2 * bytes + bytes / 2});
  for (std::uint64_t k = 0; k < 6; ++k) {
    zs::table device = host_piece(k, rows);
    for (auto& c : device.columns) c = c.copy_to(zs::memory_kind::device, stream);
    store.insert(k % 2, std::move(device), stream);
    EXPECT_LE(store.stats().resident_bytes, 2 * bytes + bytes / 2);
  }
  EXPECT_GE(store.stats().spills, 3u);
  for (std::uint64_t id = 0; id < 2; ++id) {
    auto pieces = store.extract(id, stream);
    ASSERT_EQ(pieces.size(), 3u);
    for (std::uint64_t j = 0; j < 3; ++j) {
      auto const want = host_piece(id + 2 * j, rows);
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(pieces[j].columns[c].memory(), zs::memory_kind::device);
        zs::test::expect_same_column(want.columns[c], pieces[j].columns[c].copy_to(zs::memory_kind::host, stream));
      }
    }
  }
  EXPECT_EQ(store.stats().resident_bytes, 0u);
}

// keep_compressed: pieces held as device frames count their frame bytes, so more of them fit
// under the budget than uncompressed; under pressure those frames move to host memory as they
// are; every piece comes back exactly, nullable ones with their masks.
TEST(PartitionStoreGpu, PiecesKeptCompressedFitMoreAndComeBackExactly) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::uint64_t const rows = 200000;
  auto piece = [&](std::uint64_t k) { return nullable_piece(k, rows, 0); };
  auto on_device = [&](std::uint64_t k) {
    zs::table t = piece(k);
    for (auto& c : t.columns) c = c.copy_to(zs::memory_kind::device, stream);
    return t;
  };
  std::uint64_t const bytes = zs::partition_store::bytes_of(piece(0));
  // What the first three pieces take compressed, from a store of their own (the later ones
  // encoded with the first one's column parameters, as in the store below).
  std::uint64_t three = 0;
  {
    zs::partition_store probe({.budget_bytes = 4 * bytes, .keep_compressed = true});
    for (std::uint64_t k = 0; k < 3; ++k) probe.insert(k, on_device(k), stream);
    three = probe.stats().compressed_bytes;
  }
  ASSERT_GT(three, 0u);
  ASSERT_LT(three, bytes) << "these pieces compress more than 3x";
  // Room for three pieces compressed, not for one uncompressed.
  std::uint64_t const budget = three + three / 6;
  zs::partition_store store({.budget_bytes = budget, .keep_compressed = true});
  for (std::uint64_t k = 0; k < 8; ++k) {
    store.insert(k % 3, on_device(k), stream);
    auto const& st = store.stats();
    EXPECT_LE(st.resident_bytes, budget);
    EXPECT_LE(st.compressed_bytes, st.resident_bytes);
    EXPECT_LT(st.compressed_bytes, st.compressed_raw_bytes) << "these pieces compress";
    if (k == 2) {
      EXPECT_EQ(st.spills, 0u) << "three pieces fit compressed";
    }
  }
  EXPECT_GE(store.stats().spills, 4u) << "eight pieces do not fit: most move to host memory as frames";
  for (std::uint64_t id = 0; id < 3; ++id) {
    auto pieces = store.extract(id, stream);
    std::vector<std::uint64_t> ks;
    for (std::uint64_t k = id; k < 8; k += 3) ks.push_back(k);
    ASSERT_EQ(pieces.size(), ks.size());
    for (std::size_t j = 0; j < ks.size(); ++j) {
      auto const want = piece(ks[j]);
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(pieces[j].columns[c].memory(), zs::memory_kind::device);
        auto const got = pieces[j].columns[c].copy_to(zs::memory_kind::host, stream);
        zs::test::expect_same_column(want.columns[c], got);
        EXPECT_EQ(got.nullable(), c == 0);
        if (c == 0) {
          EXPECT_EQ(got.validity(), want.columns[c].validity());
        }
      }
    }
  }
  EXPECT_EQ(store.stats().resident_bytes, 0u);
  EXPECT_EQ(store.stats().compressed_bytes, 0u);
  EXPECT_EQ(store.stats().spilled_bytes, 0u);
}

TEST(PartitionStoreGpu, NullableDevicePiecesSpillAndComeBackWithTheirMasks) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::uint64_t const rows = 100000;
  auto piece = [&](std::uint64_t k) { return nullable_piece(k, rows, 1); };
  std::uint64_t const bytes = zs::partition_store::bytes_of(piece(0));
  EXPECT_EQ(bytes, zs::partition_store::bytes_of(host_piece(0, rows)) + zs::null_mask_bytes(rows));
  zs::partition_store store({.budget_bytes = bytes + bytes / 2});
  for (std::uint64_t k = 0; k < 3; ++k) {
    zs::table device = piece(k);
    for (auto& c : device.columns) c = c.copy_to(zs::memory_kind::device, stream);
    store.insert(k, std::move(device), stream);
    EXPECT_LE(store.stats().resident_bytes, bytes + bytes / 2);
  }
  EXPECT_EQ(store.stats().spills, 2u);
  for (std::uint64_t k = 0; k < 3; ++k) {
    auto pieces = store.extract(k, stream);
    ASSERT_EQ(pieces.size(), 1u);
    zs::column const back = pieces[0].columns[1].copy_to(zs::memory_kind::host, stream);
    ASSERT_TRUE(back.nullable());
    EXPECT_EQ(back.validity(), piece(k).columns[1].validity());
    zs::test::expect_same_column(piece(k).columns[1], back);
  }
}

}  // namespace
