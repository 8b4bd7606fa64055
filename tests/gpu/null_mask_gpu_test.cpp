// Null masks on the device (zs/null_mask.hpp): every function's device result is its host
// result byte for byte (the host path is checked against a bit-by-bit reference in
// tests/core/null_mask_test.cpp), for row counts around byte boundaries, no rows, all null, all
// valid, every source bit offset, and any launch geometry.
#include "zs/null_mask.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "zs/device.hpp"
#include "zs/launch.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

using zs::memory_kind;

enum class pattern { random, all_valid, all_null };

std::vector<std::uint8_t> random_mask(std::size_t count, pattern p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(count));
  for (auto& b : mask) {
    b = p == pattern::all_valid ? 0xff : p == pattern::all_null ? 0 : static_cast<std::uint8_t>(rng());
  }
  return mask;
}

class NullMaskGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (zs::cuda_device_available()) stream_.emplace();
  }

  // A device copy of `bytes` (at least one byte, so that an empty input still has an address).
  zs::device_buffer up(const std::vector<std::uint8_t>& bytes) {
    zs::device_buffer d(std::max<std::size_t>(bytes.size(), 1), *stream_);
    if (!bytes.empty()) zs::copy_async(d.data(), bytes.data(), bytes.size(), *stream_);
    return d;
  }
  std::vector<std::uint8_t> down(const zs::device_buffer& d, std::size_t bytes) {
    std::vector<std::uint8_t> out(bytes);
    if (bytes > 0) zs::copy_async(out.data(), d.data(), bytes, *stream_);
    ZS_CUDA_TRY(cudaStreamSynchronize(*stream_));
    return out;
  }

  // Every function on `count` rows of `mask`, device against host.
  void expect_same_as_host(const std::vector<std::uint8_t>& mask, std::size_t count, const std::string& what) {
    SCOPED_TRACE(what);
    auto const d_mask = up(mask);
    // expand
    std::vector<std::uint8_t> host_valid(count);
    zs::expand_null_mask(mask.data(), count, host_valid.data(), memory_kind::host);
    zs::device_buffer d_valid(std::max<std::size_t>(count, 1), *stream_);
    zs::expand_null_mask(d_mask.as<std::uint8_t>(), count, d_valid.as<std::uint8_t>(), memory_kind::device, *stream_);
    ASSERT_EQ(down(d_valid, count), host_valid) << "expand";
    // pack, from bytes that are not all 0 or 1
    std::vector<std::uint8_t> bytes(count);
    for (std::size_t i = 0; i < count; ++i) bytes[i] = host_valid[i] != 0 ? static_cast<std::uint8_t>(1 + i % 250) : 0;
    std::vector<std::uint8_t> host_mask(zs::null_mask_bytes(count));
    zs::pack_null_mask(bytes.data(), count, host_mask.data(), memory_kind::host);
    auto const d_bytes = up(bytes);
    zs::device_buffer d_packed(std::max<std::size_t>(host_mask.size(), 1), *stream_);
    zs::pack_null_mask(d_bytes.as<std::uint8_t>(), count, d_packed.as<std::uint8_t>(), memory_kind::device, *stream_);
    ASSERT_EQ(down(d_packed, host_mask.size()), host_mask) << "pack";
    // count
    EXPECT_EQ(zs::count_nulls(d_mask.as<std::uint8_t>(), count, memory_kind::device, *stream_),
              zs::count_nulls(mask.data(), count, memory_kind::host))
        << "count";
    // copy from every offset that leaves `count` bits in the mask
    for (std::uint64_t offset : {0, 1, 3, 7, 8, 13}) {
      if (offset + count > 8 * mask.size()) continue;
      std::vector<std::uint8_t> host_out(zs::null_mask_bytes(count), 0xaa);
      zs::copy_null_mask_bits(mask.data(), offset, count, host_out.data(), memory_kind::host);
      zs::device_buffer d_out(std::max<std::size_t>(host_out.size(), 1), *stream_);
      zs::copy_null_mask_bits(d_mask.as<std::uint8_t>(), offset, count, d_out.as<std::uint8_t>(), memory_kind::device,
                              *stream_);
      ASSERT_EQ(down(d_out, host_out.size()), host_out) << "copy from bit " << offset;
    }
  }

  std::optional<zs::cuda_stream> stream_;
};

TEST_F(NullMaskGpu, EveryFunctionAsOnTheHost) {
  ZS_REQUIRE_GPU();
  for (std::size_t count : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099, 1000003}) {
    for (pattern p : {pattern::random, pattern::all_valid, pattern::all_null}) {
      // 2 bytes more than the rows need: room for the copies from an offset.
      auto const mask = random_mask(count + 16, p, static_cast<std::uint32_t>(count));
      expect_same_as_host(mask, count,
                          std::to_string(count) + " rows, pattern " + std::to_string(static_cast<int>(p)));
    }
  }
}

TEST_F(NullMaskGpu, ExpandWithoutMaskIsAllValid) {
  ZS_REQUIRE_GPU();
  zs::device_buffer d_valid(1000, *stream_);
  zs::expand_null_mask(nullptr, 1000, d_valid.as<std::uint8_t>(), memory_kind::device, *stream_);
  EXPECT_EQ(down(d_valid, 1000), std::vector<std::uint8_t>(1000, 1));
  EXPECT_EQ(zs::count_nulls(nullptr, 1000, memory_kind::device, *stream_), 0u);
}

// The kernels loop with a grid stride: a single small block and the largest blocks give the
// same bytes.
TEST_F(NullMaskGpu, AnyLaunchGeometryGivesTheSameBytes) {
  ZS_REQUIRE_GPU();
  struct restore_tuning {
    zs::tuning_table saved = *zs::tuning();
    ~restore_tuning() { zs::set_tuning(saved); }
  } const restore;
  zs::device_profile const& d = zs::current_device_profile();
  auto const mask = random_mask(300000 + 16, pattern::random, 5);
  for (zs::launch_params p : {zs::launch_params{128, 1, 0}, zs::launch_params{1024, 0, 0}}) {
    zs::tuning_table forced;
    for (auto size : {zs::size_class::small, zs::size_class::medium, zs::size_class::large}) {
      forced.set({{d.name, d.compute_major, d.compute_minor, "null_mask", std::nullopt, size}, p});
    }
    zs::set_tuning(forced);
    expect_same_as_host(mask, 300000, std::to_string(p.threads) + " threads");
  }
}

TEST_F(NullMaskGpu, NullPointersForRowsAreRefused) {
  ZS_REQUIRE_GPU();
  auto const e = zs::test::thrown_error(
      [&] { zs::expand_null_mask(nullptr, 8, nullptr, memory_kind::device, *stream_); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
}

}  // namespace
