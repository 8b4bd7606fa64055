// streaming_shuffle on the GPU path under mpirun, with every device communicator backend: the
// same rows as the bulk GPU shuffle_table under a budget that forces spills of device pieces
// (skips without a GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm_test.hpp"
#include "gpu_fixture.hpp"
#include "streaming_shuffle_support.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/comm/streaming_shuffle.hpp"

namespace {

using namespace zs::test::streaming;

class StreamingShuffleGpu : public zs::test::gpu_comm_test {
 protected:
  zs::table on_device(zs::table t) {
    t.columns = to_device(t.columns);
    return t;
  }
  zs::table on_host(const zs::table& t) { return {t.names, to_host(t.columns)}; }
};

TEST_P(StreamingShuffleGpu, UnderBudgetPressureMatchesTheBulkShuffleTable) {
  int const me = host_->rank(), ranks = host_->size();
  for (bool compressed_spill : {false, true}) {
    std::uint32_t const per_rank = 2;
    std::uint32_t const partitions = per_rank * static_cast<std::uint32_t>(ranks);
    zs::streaming_shuffle_options options;
    options.budget_bytes = 4000;
    options.batch_bytes = 8000;
    options.shuffle.round_bytes = 8192;
    // Raw spills, or the codec chosen per column against PCIe.
    if (!compressed_spill) options.spill.codec = zs::codec_id::raw;
    zs::streaming_shuffle s(*device_, names(), types(), partitions, options, *stream_);
    auto const mine = rows_of(me);
    stream_rows(*host_, s, mine, 131, [&](zs::table t) { return on_device(std::move(t)); });
    s.insert_finished();

    zs::table_shuffle_options bulk_options;
    bulk_options.partitions_per_rank = per_rank;
    std::size_t const keys[] = {0};
    auto const bulk = zs::shuffle_table(*device_, on_device(table_of(mine)), keys, bulk_options, *stream_);
    auto const bulk_rows = rows_in(on_host(bulk.rows));
    auto const owned = s.owned_partitions();
    ASSERT_EQ(owned.size(), per_rank);
    for (std::uint32_t j = 0; j < per_rank; ++j) {
      zs::table got = s.extract(owned[j]);
      for (auto const& c : got.columns) EXPECT_EQ(c.memory(), zs::memory_kind::device);
      std::vector<row> const want(bulk_rows.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j]),
                                  bulk_rows.begin() + static_cast<std::ptrdiff_t>(bulk.partition_offsets[j + 1]));
      EXPECT_TRUE(rows_in(on_host(got)) == want) << "partition " << owned[j];
    }
    EXPECT_LE(s.stats().store.high_water_bytes, options.budget_bytes);
    EXPECT_GT(s.stats().store.spills, 0u);
  }
}

TEST_P(StreamingShuffleGpu, HostPiecesAreRefused) {
  zs::streaming_shuffle s(*device_, names(), types(), 2, {}, *stream_);
  EXPECT_ZS_ERROR(s.insert(0, table_of(rows_of(host_->rank()))), zs::error_code::invalid_argument);
  s.insert_finished();
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamingShuffleGpu, zs::test::all_backends(), zs::test::backend_name);

}  // namespace
