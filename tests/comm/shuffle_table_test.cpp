// shuffle_table: a table shuffled by key under mpirun, on the CPU path and on the GPU with every
// backend. Every rank builds every rank's input (deterministic), so it knows exactly which rows
// it must receive, and in which order, without trusting the partitioner it tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <span>
#include <string>
#include <vector>

#include "comm_test.hpp"
#include "gpu_fixture.hpp"
#include "zs/comm/context.hpp"
#include "zs/comm/error.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/partition.hpp"
#include "zs_test.hpp"

namespace {

// One row: an int64 key with repeats, an int32 that names the row's source and index, a float64
// and a string derived from both (so a row torn apart shows).
struct row {
  std::int64_t key;
  std::int32_t origin;
  double value;
  std::string text;
  bool operator==(const row&) const = default;
};

std::vector<row> rows_of(int rank) {
  std::vector<row> rows;
  std::uint64_t const n = 700 + 131 * static_cast<std::uint64_t>(rank);  // unequal on purpose
  for (std::uint64_t i = 0; i < n; ++i) {
    auto const key = static_cast<std::int64_t>((i * 7919 + static_cast<std::uint64_t>(rank) * 104729) % 257) - 100;
    auto const origin = static_cast<std::int32_t>(rank * 100000 + static_cast<int>(i));
    std::string text = i % 17 == 0 ? "" : "r" + std::to_string(origin) + "/k" + std::to_string(key);
    if (i % 29 == 0) text += "\xc3\xa9\xe2\x82\xac";  // non-ASCII
    rows.push_back({key, origin, static_cast<double>(key) * 0.5 - static_cast<double>(i), text});
  }
  return rows;
}

zs::table table_of(const std::vector<row>& rows) {
  std::vector<std::int64_t> keys;
  std::vector<std::int32_t> origins;
  std::vector<double> values;
  std::vector<std::string> texts;
  for (auto const& r : rows) {
    keys.push_back(r.key);
    origins.push_back(r.origin);
    values.push_back(r.value);
    texts.push_back(r.text);
  }
  zs::table t;
  t.names = {"key", "origin", "value", "text"};
  t.columns.push_back(zs::column::from_values<std::int64_t>(keys));
  t.columns.push_back(zs::column::from_values<std::int32_t>(origins));
  t.columns.push_back(zs::column::from_values<double>(values));
  t.columns.push_back(zs::column::from_strings(texts));
  return t;
}

std::vector<row> rows_in(const zs::table& host) {
  auto const texts = host.columns[3].strings();
  std::vector<row> rows;
  for (std::uint64_t i = 0; i < host.columns[0].size(); ++i) {
    rows.push_back({host.columns[0].view().values<std::int64_t>()[i], host.columns[1].view().values<std::int32_t>()[i],
                    host.columns[2].view().values<double>()[i], texts[i]});
  }
  return rows;
}

// The rows rank `me` must own, by owned partition, each partition's rows by source rank and then
// in input order.
std::vector<std::vector<row>> expected_partitions(int me, int ranks, std::uint32_t per_rank) {
  std::uint32_t const partitions = static_cast<std::uint32_t>(ranks) * per_rank;
  std::vector<std::vector<row>> out(per_rank);
  for (int source = 0; source < ranks; ++source) {
    for (auto const& r : rows_of(source)) {
      std::uint32_t const p = zs::hash_key(r.key) % partitions;
      if (p / per_rank == static_cast<std::uint32_t>(me)) out[p % per_rank].push_back(r);
    }
  }
  return out;
}

void expect_owned_rows(const zs::shuffled_table& got_device_or_host, const zs::table& host_rows, int me, int ranks,
                       std::uint32_t per_rank, const std::string& what) {
  EXPECT_EQ(host_rows.names, (std::vector<std::string>{"key", "origin", "value", "text"})) << what;
  ASSERT_EQ(host_rows.columns.size(), 4u) << what;
  EXPECT_EQ(host_rows.columns[3].type(), zs::value_type::string) << what;
  EXPECT_EQ(got_device_or_host.first_partition, static_cast<std::uint32_t>(me) * per_rank) << what;
  auto const expected = expected_partitions(me, ranks, per_rank);
  auto const got = rows_in(host_rows);
  auto const& at = got_device_or_host.partition_offsets;
  ASSERT_EQ(at.size(), per_rank + 1u) << what;
  EXPECT_EQ(at.front(), 0u) << what;
  EXPECT_EQ(at.back(), got.size()) << what;
  for (std::uint32_t j = 0; j < per_rank; ++j) {
    ASSERT_LE(at[j], at[j + 1]) << what;
    std::vector<row> const part(got.begin() + static_cast<std::ptrdiff_t>(at[j]),
                                got.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(at[j + 1], got.size())));
    EXPECT_EQ(part.size(), expected[j].size()) << what << ", partition " << j;
    EXPECT_TRUE(part == expected[j]) << what << ", partition " << j << ": rows differ";
  }
}

TEST(ShuffleTable, RowsStayWholeAndReachTheirPartitionsOwner) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  for (std::uint32_t per_rank : {1u, 3u}) {
    for (bool compress : {false, true}) {
      zs::table_shuffle_options options;
      options.partitions_per_rank = per_rank;
      options.shuffle.round_bytes = 4096;  // several rounds
      if (compress) options.shuffle.plan = zs::shuffle_options::planning::compress;
      std::size_t const keys[] = {0};
      auto const out = zs::shuffle_table(comm, table_of(rows_of(me)), keys, options);
      expect_owned_rows(out, out.rows, me, ranks, per_rank,
                        "per rank " + std::to_string(per_rank) + (compress ? ", compressed" : ", planned"));
    }
  }
}

TEST(ShuffleTable, LogicalTypesComeBackOnTheirColumns) {
  zs::mpi_communicator comm;
  for (std::uint32_t per_rank : {1u, 2u}) {  // 2: the received rows are grouped again
    zs::table input = table_of(rows_of(comm.rank()));
    input.columns[0].set_logical(zs::logical_type::timestamp(zs::time_unit::nanosecond));
    input.columns[1].set_logical(zs::logical_type::decimal32(9, 2));
    zs::table_shuffle_options options;
    options.partitions_per_rank = per_rank;
    std::size_t const keys[] = {0};
    auto const out = zs::shuffle_table(comm, input, keys, options);
    EXPECT_EQ(out.rows.columns[0].logical(), zs::logical_type::timestamp(zs::time_unit::nanosecond)) << per_rank;
    EXPECT_EQ(out.rows.columns[1].logical(), zs::logical_type::decimal32(9, 2)) << per_rank;
    EXPECT_TRUE(out.rows.columns[2].logical().is_none()) << per_rank;
  }
}

// A decimal128 key and column: int128 storage, which no compressing codec takes, travels raw
// whether the planner decides or compression is asked for; rows stay whole (each key is a
// function of its row's origin), reach the owner of their key's hash, and keep the logical type.
TEST(ShuffleTable, Decimal128KeysTravelRawWithTheirRows) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  auto const key_of = [](std::int32_t origin) {  // repeats, and high words of both signs
    auto const k = static_cast<std::int64_t>(origin % 97) - 48;
    return zs::int128_value{static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ULL, k};
  };
  auto const input_of = [&](int rank) {
    std::vector<zs::int128_value> keys;
    std::vector<std::int32_t> origins;
    for (auto const& r : rows_of(rank)) {
      origins.push_back(r.origin);
      keys.push_back(key_of(r.origin));
    }
    zs::table t;
    t.names = {"amount", "origin"};
    t.columns.push_back(zs::column::from_values<zs::int128_value>(keys));
    t.columns[0].set_logical(zs::logical_type::decimal128(38, 4));
    t.columns.push_back(zs::column::from_values<std::int32_t>(origins));
    return t;
  };
  std::vector<std::int32_t> expected;  // by source rank, then in input order
  for (int source = 0; source < ranks; ++source) {
    for (auto const& r : rows_of(source)) {
      if (zs::hash_key(key_of(r.origin)) % static_cast<std::uint32_t>(ranks) == static_cast<std::uint32_t>(me)) {
        expected.push_back(r.origin);
      }
    }
  }
  for (bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "compressed" : "planned");
    zs::table_shuffle_options options;
    options.shuffle.round_bytes = 4096;  // several rounds
    if (compress) options.shuffle.plan = zs::shuffle_options::planning::compress;
    std::size_t const keys[] = {0};
    auto const out = zs::shuffle_table(comm, input_of(me), keys, options);
    ASSERT_EQ(out.rows.columns.size(), 2u);
    ASSERT_EQ(out.rows.columns[0].type(), zs::value_type::int128);
    EXPECT_EQ(out.rows.columns[0].logical(), zs::logical_type::decimal128(38, 4));
    zs::column const amounts = out.rows.columns[0].copy_to(zs::memory_kind::host, nullptr);
    zs::column const origins = out.rows.columns[1].copy_to(zs::memory_kind::host, nullptr);
    auto const* got = origins.view().values<std::int32_t>();
    EXPECT_EQ(std::vector<std::int32_t>(got, got + origins.size()), expected);
    for (std::uint64_t i = 0; i < amounts.size(); ++i) {
      ASSERT_EQ(amounts.view().values<zs::int128_value>()[i], key_of(got[i])) << "row " << i << " was torn apart";
    }
  }
}

TEST(ShuffleTable, ABadKeyOnOneRankIsEveryRanksError) {
  zs::mpi_communicator comm;
  std::size_t const good[] = {0}, bad[] = {7};
  auto const keys = comm.rank() == comm.size() - 1 ? std::span<const std::size_t>(bad) : std::span<const std::size_t>(good);
  auto const e = zs::test::thrown_error([&] { zs::shuffle_table(comm, table_of(rows_of(comm.rank())), keys, {}); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
  EXPECT_NE(std::string(e->what()).find("partitioning the rows failed on rank " + std::to_string(comm.size() - 1)),
            std::string::npos)
      << e->what();
}

TEST(ShuffleTable, ZeroPartitionsPerRankIsRefused) {
  zs::mpi_communicator comm;
  zs::table_shuffle_options options;
  options.partitions_per_rank = 0;
  std::size_t const keys[] = {0};
  EXPECT_ZS_ERROR(zs::shuffle_table(comm, table_of(rows_of(comm.rank())), keys, options), zs::error_code::invalid_argument);
}

// --- null masks ----------------------------------------------------------------------------------

// Which cells of rank `rank`'s row i are null: the key on every rank (i % 7 == 3); the value on
// odd ranks only (i % 3 == 0; even ranks' value columns have no mask); the text on even ranks
// only (i % 5 == 0).
bool key_valid(int, std::uint64_t i) { return i % 7 != 3; }
bool value_valid(int rank, std::uint64_t i) { return rank % 2 == 0 || i % 3 != 0; }
bool text_valid(int rank, std::uint64_t i) { return rank % 2 == 1 || i % 5 != 0; }

void set_validity(zs::column& c, const std::vector<bool>& valid) {
  std::uint8_t* const mask = c.add_null_mask();
  std::fill(mask, mask + zs::null_mask_bytes(c.size()), std::uint8_t{0});
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid[i]) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
  }
}

zs::table nullable_table_of(int rank) {
  auto const rows = rows_of(rank);
  zs::table t = table_of(rows);
  std::vector<bool> key(rows.size()), value(rows.size()), text(rows.size());
  for (std::uint64_t i = 0; i < rows.size(); ++i) {
    key[i] = key_valid(rank, i);
    value[i] = value_valid(rank, i);
    text[i] = text_valid(rank, i);
  }
  set_validity(t.columns[0], key);
  if (rank % 2 == 1) set_validity(t.columns[2], value);
  if (rank % 2 == 0) set_validity(t.columns[3], text);
  return t;
}

// A row with its cells' validity. Rows are equal where their validity is and every cell that
// holds a value is: a null cell's value is unspecified (a codec may give back another).
struct nullable_row {
  row cells;
  bool key, value, text;
  bool operator==(const nullable_row& o) const {
    return key == o.key && value == o.value && text == o.text && cells.origin == o.cells.origin &&
           (!key || cells.key == o.cells.key) && (!value || std::bit_cast<std::uint64_t>(cells.value) ==
                                                                std::bit_cast<std::uint64_t>(o.cells.value)) &&
           (!text || cells.text == o.cells.text);
  }
};

std::vector<nullable_row> nullable_rows_in(const zs::table& host) {
  auto const rows = rows_in(host);
  auto const key = host.columns[0].validity(), value = host.columns[2].validity(), text = host.columns[3].validity();
  std::vector<nullable_row> out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.push_back({rows[i], key[i], value[i], text[i]});
  return out;
}

// The rows rank `me` must own, by owned partition: a null key lands where null_key_hash sends it.
std::vector<std::vector<nullable_row>> expected_nullable_partitions(int me, int ranks, std::uint32_t per_rank) {
  std::uint32_t const partitions = static_cast<std::uint32_t>(ranks) * per_rank;
  std::vector<std::vector<nullable_row>> out(per_rank);
  for (int source = 0; source < ranks; ++source) {
    auto const rows = rows_of(source);
    for (std::uint64_t i = 0; i < rows.size(); ++i) {
      std::uint32_t const hash = key_valid(source, i) ? zs::hash_key(rows[i].key) : 0xffffffffu;
      std::uint32_t const p = hash % partitions;
      if (p / per_rank != static_cast<std::uint32_t>(me)) continue;
      out[p % per_rank].push_back({rows[i], key_valid(source, i), value_valid(source, i), text_valid(source, i)});
    }
  }
  return out;
}

void expect_owned_nullable_rows(const zs::shuffled_table& got, const zs::table& host_rows, int me, int ranks,
                                std::uint32_t per_rank, const std::string& what) {
  ASSERT_EQ(host_rows.columns.size(), 4u) << what;
  EXPECT_TRUE(host_rows.columns[0].nullable()) << what << ": keys are nullable on every rank";
  EXPECT_FALSE(host_rows.columns[1].nullable()) << what << ": no rank gave the origin a mask";
  EXPECT_EQ(host_rows.columns[2].nullable(), ranks > 1) << what << ": values are nullable on odd ranks";
  EXPECT_TRUE(host_rows.columns[3].nullable()) << what << ": texts are nullable on even ranks";
  auto const expected = expected_nullable_partitions(me, ranks, per_rank);
  auto const rows = nullable_rows_in(host_rows);
  auto const& at = got.partition_offsets;
  ASSERT_EQ(at.size(), per_rank + 1u) << what;
  ASSERT_EQ(at.back(), rows.size()) << what;
  for (std::uint32_t j = 0; j < per_rank; ++j) {
    ASSERT_LE(at[j], at[j + 1]) << what;
    std::vector<nullable_row> const part(rows.begin() + static_cast<std::ptrdiff_t>(at[j]),
                                         rows.begin() + static_cast<std::ptrdiff_t>(at[j + 1]));
    EXPECT_EQ(part.size(), expected[j].size()) << what << ", partition " << j;
    EXPECT_TRUE(part == expected[j]) << what << ", partition " << j << ": rows or their nulls differ";
  }
}

TEST(ShuffleTable, NullKeysAndMasksTravelWithTheirRows) {
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  for (std::uint32_t per_rank : {1u, 3u}) {
    for (bool compress : {false, true}) {
      zs::table_shuffle_options options;
      options.partitions_per_rank = per_rank;
      options.shuffle.round_bytes = 4096;
      if (compress) options.shuffle.plan = zs::shuffle_options::planning::compress;
      std::size_t const keys[] = {0};
      zs::shuffle_stats stats;
      auto const out = zs::shuffle_table(comm, nullable_table_of(me), keys, options, &stats);
      std::string const what = "per rank " + std::to_string(per_rank) + (compress ? ", compressed" : ", planned");
      expect_owned_nullable_rows(out, out.rows, me, ranks, per_rank, what);
      EXPECT_GT(stats.column_null_raw_bytes[0], 0u) << what;
      EXPECT_EQ(stats.column_null_raw_bytes[1], 0u) << what;
    }
  }
}

class ShuffleTableGpu : public zs::test::gpu_comm_test {};

TEST_P(ShuffleTableGpu, MatchesTheRowsEachRankOwns) {
  int const me = host_->rank(), ranks = host_->size();
  for (std::uint32_t per_rank : {1u, 2u}) {
    zs::table_shuffle_options options;
    options.partitions_per_rank = per_rank;
    options.shuffle.round_bytes = 8192;
    zs::table input = table_of(rows_of(me));
    input.columns = to_device(input.columns);
    std::size_t const keys[] = {0};
    auto out = zs::shuffle_table(*device_, input, keys, options, *stream_);
    for (auto const& c : out.rows.columns) EXPECT_EQ(c.memory(), zs::memory_kind::device);
    zs::table host_rows{out.rows.names, to_host(out.rows.columns)};
    expect_owned_rows(out, host_rows, me, ranks, per_rank, "GPU, per rank " + std::to_string(per_rank));
  }
}

TEST_P(ShuffleTableGpu, NullKeysAndMasksAsOnTheCpu) {
  int const me = host_->rank(), ranks = host_->size();
  for (std::uint32_t per_rank : {1u, 2u}) {
    zs::table_shuffle_options options;
    options.partitions_per_rank = per_rank;
    options.shuffle.round_bytes = 8192;
    zs::table input = nullable_table_of(me);
    input.columns = to_device(input.columns);
    std::size_t const keys[] = {0};
    auto out = zs::shuffle_table(*device_, input, keys, options, *stream_);
    zs::table host_rows{out.rows.names, to_host(out.rows.columns)};
    expect_owned_nullable_rows(out, host_rows, me, ranks, per_rank, "GPU, per rank " + std::to_string(per_rank));
  }
}

TEST_P(ShuffleTableGpu, HostColumnsAreRefused) {
  std::size_t const keys[] = {0};
  EXPECT_ZS_ERROR(zs::shuffle_table(*device_, table_of(rows_of(host_->rank())), keys, {}, *stream_),
                  zs::error_code::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Backends, ShuffleTableGpu, zs::test::all_backends(), zs::test::backend_name);

// A context on the CPU path (forced, or for want of GPUs) takes host tables.
TEST(ShuffleTableContext, CpuPathShufflesHostTables) {
  zs::context_options cpu;
  cpu.cpu = true;
  zs::context ctx(MPI_COMM_WORLD, cpu);
  EXPECT_EQ(ctx.which(), zs::context::path::cpu) << ctx.description();
  EXPECT_EQ(ctx.device(), nullptr);
  int const me = ctx.host().rank(), ranks = ctx.host().size();
  std::size_t const keys[] = {0};
  auto const out = zs::shuffle_table(ctx, table_of(rows_of(me)), keys, {});
  expect_owned_rows(out, out.rows, me, ranks, 1, "CPU context");
}

TEST(ShuffleTableContext, ThePathFollowsTheGpus) {
  zs::context ctx;
  if (!zs::cuda_device_available()) {
    EXPECT_EQ(ctx.which(), zs::context::path::cpu) << ctx.description();
    EXPECT_EQ(ctx.memory(), zs::memory_kind::host);
    return;
  }
  EXPECT_NE(ctx.which(), zs::context::path::cpu) << ctx.description();
  EXPECT_EQ(ctx.which() == zs::context::path::nccl, zs::ranks_have_distinct_gpus(ctx.host())) << ctx.description();
  ASSERT_NE(ctx.device(), nullptr);
  EXPECT_GE(ctx.gpu(), 0);
}

// Counts the device allocations a context's collectives make through the application's resource.
class counting_resource final : public zs::device_memory_resource {
 public:
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    ++allocations;
    return zs::pool_memory_resource().allocate(bytes, stream);
  }
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override {
    ++frees;
    zs::pool_memory_resource().deallocate(p, bytes, stream);
  }
  std::atomic<int> allocations{0}, frees{0};
};

// On the GPU path: a host table goes to the device and its result comes back to the host, every
// device allocation comes from the application's resource, and an adopted NCCL communicator
// works the same as an owned one.
TEST(ShuffleTableContext, GpuPathWithTheApplicationsMemoryAndNccl) {
  ZS_REQUIRE_GPU();
  counting_resource counting;
  int me = 0, ranks = 0;
  {
    zs::context_options options;
    options.memory = &counting;
    zs::context ctx(MPI_COMM_WORLD, options);
    if (ctx.which() == zs::context::path::cpu) GTEST_SKIP() << "not every rank has a GPU: " << ctx.description();
    me = ctx.host().rank(), ranks = ctx.host().size();
    std::size_t const keys[] = {0};
    auto const out = zs::shuffle_table(ctx, table_of(rows_of(me)), keys, {});
    for (auto const& c : out.rows.columns) EXPECT_EQ(c.memory(), zs::memory_kind::host);
    expect_owned_rows(out, out.rows, me, ranks, 1, "GPU context, " + ctx.description());
    EXPECT_GT(counting.allocations.load(), 0);
  }
  EXPECT_EQ(counting.allocations.load(), counting.frees.load()) << "every allocation given back";
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  EXPECT_EQ(&zs::device_resource(device), &zs::pool_memory_resource()) << "the pool is back after the context";

  zs::mpi_communicator world;
  if (!zs::ranks_have_distinct_gpus(world)) GTEST_SKIP() << "ranks share a GPU: no NCCL communicator to adopt";
  ncclUniqueId id{};
  if (world.rank() == 0) ZS_NCCL_TRY(ncclGetUniqueId(&id));
  world.bcast(std::as_writable_bytes(std::span(&id, 1)), 0);
  ncclComm_t nccl = nullptr;
  ZS_NCCL_TRY(ncclCommInitRank(&nccl, world.size(), id, world.rank()));
  {
    zs::context adopted(MPI_COMM_WORLD, nccl);
    EXPECT_EQ(adopted.which(), zs::context::path::nccl);
    zs::table input = table_of(rows_of(me));
    for (auto& c : input.columns) c = c.copy_to(zs::memory_kind::device, adopted.stream());
    std::size_t const keys[] = {0};
    auto out = zs::shuffle_table(adopted, input, keys, {});
    for (auto const& c : out.rows.columns) EXPECT_EQ(c.memory(), zs::memory_kind::device);
    zs::table host_rows{out.rows.names, {}};
    for (auto const& c : out.rows.columns) host_rows.columns.push_back(c.copy_to(zs::memory_kind::host, adopted.stream()));
    expect_owned_rows(out, host_rows, me, ranks, 1, "adopted NCCL");
  }
  EXPECT_EQ(ncclCommDestroy(nccl), ncclSuccess) << "the adopted communicator is still the application's";
}

}  // namespace
