// Compressed all-gather and broadcast of device columns, under mpirun, with every backend
// (gpu_fixture.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm_test.hpp"
#include "gpu_fixture.hpp"
#include "null_shuffle_support.hpp"
#include "shuffle_support.hpp"
#include "zs/comm/column_collectives.hpp"
#include "zs/frame.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::all_types;
using zs::test::concatenated;
using zs::test::every_rank;
using zs::test::expect_columns;
using zs::test::views;

constexpr std::uint64_t scale = 2000;

/// String i of rank r in the uneven test: every third one empty, the others i letters long.
std::string letters(int r, int i) {
  if (i % 3 == 0) return {};
  return std::string(static_cast<std::size_t>(i), static_cast<char>('a' + r));
}

// Forwards to another device communicator and, on the victim rank, flips a byte in the first
// frame header of every frame buffer it receives through allgatherv or bcast.
class corrupting_device_communicator final : public zs::device_communicator {
 public:
  corrupting_device_communicator(zs::device_communicator& inner, int victim)
      : zs::device_communicator(inner.host()), inner_(inner), victim_(victim) {}

  std::string_view transport() const noexcept override { return inner_.transport(); }
  int damaged() const noexcept { return damaged_; }
  void stop() noexcept { victim_ = -1; }

 protected:
  void do_alltoallv(const std::byte* send, std::span<const std::uint64_t> send_counts, std::byte* recv,
                    std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override {
    inner_.alltoallv(send, send_counts, recv, recv_counts, stream, sizes::agreed);
  }
  void do_allgatherv(const std::byte* send, std::uint64_t send_bytes, std::byte* recv,
                     std::span<const std::uint64_t> recv_counts, cudaStream_t stream) override {
    inner_.allgatherv(send, send_bytes, recv, recv_counts, stream, sizes::agreed);
    std::uint64_t total = 0;
    for (auto c : recv_counts) total += c;
    damage(recv, total, stream);
  }
  void do_bcast(std::byte* buffer, std::uint64_t bytes, int root, cudaStream_t stream) override {
    inner_.bcast(buffer, bytes, root, stream, sizes::agreed);
    damage(buffer, bytes, stream);
  }
  void do_send(const std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override {
    inner_.send(bytes, count, peer, stream, sizes::agreed);
  }
  void do_recv(std::byte* bytes, std::uint64_t count, int peer, cudaStream_t stream) override {
    inner_.recv(bytes, count, peer, stream, sizes::agreed);
  }

 private:
  void damage(std::byte* bytes, std::uint64_t size, cudaStream_t stream) {
    if (rank() != victim_ || size < zs::frame_header_bytes) return;
    std::byte header[16];
    zs::copy_async(header, bytes, sizeof(header), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    if (zs::detail::load_le(header, 4) != zs::frame_magic) return;
    header[9] ^= std::byte{0x40};  // the value count: the header checksum no longer matches
    zs::copy_async(bytes + 9, header + 9, 1, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    ++damaged_;
  }

  zs::device_communicator& inner_;
  int victim_;
  int damaged_ = 0;
};

class ColumnCollectivesGpu : public zs::test::gpu_comm_test {};

TEST_P(ColumnCollectivesGpu, AllgatherEveryTypeMatchesTheExpectedRowsAndTheCpuPath) {
  int const me = host_->rank(), ranks = host_->size();
  auto const host_mine = zs::test::columns_of(me, scale);
  auto const device_mine = to_device(host_mine);
  zs::shuffle_stats gpu_stats, cpu_stats;
  auto const gpu = to_host(zs::allgather(*device_, views(device_mine), {}, *stream_, &gpu_stats));
  expect_columns(gpu, concatenated(every_rank(ranks), scale), "GPU allgather");
  // The GPU codecs write the same frames as the CPU reference: the same bytes on the wire.
  auto const cpu = zs::allgather(*host_, views(host_mine), {}, &cpu_stats);
  EXPECT_EQ(gpu_stats.raw_bytes, cpu_stats.raw_bytes);
  EXPECT_EQ(gpu_stats.wire_bytes, cpu_stats.wire_bytes);
  EXPECT_EQ(gpu_stats.rounds, 1u);
}

// The choice between fsst and fsst_dict as on the CPU path: the same codecs and wire bytes.
// Rank r passes a column of repeated values and one of distinct values.
TEST_P(ColumnCollectivesGpu, StringColumnsTakeTheDictionaryAsOnTheCpuPath) {
  int const me = host_->rank();
  std::vector<zs::column> host_mine;
  for (int k = 0; k < 2; ++k) host_mine.push_back(zs::test::repeating_or_distinct_strings(2 * me + k, 3000));
  auto const device_mine = to_device(host_mine);
  zs::shuffle_stats gpu_stats, cpu_stats;
  auto const gpu = to_host(zs::allgather(*device_, views(device_mine), {}, *stream_, &gpu_stats));
  auto const cpu = zs::allgather(*host_, views(host_mine), {}, &cpu_stats);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (std::size_t c = 0; c < cpu.size(); ++c) {
    zs::test::expected_column expected{zs::value_type::string, {}, {}};
    zs::test::append_rows(expected, cpu[c], 0, cpu[c].size());
    zs::test::expect_column(gpu[c], expected, "column " + std::to_string(c));
  }
  EXPECT_EQ(gpu_stats.column_codecs, (std::vector<zs::codec_id>{zs::codec_id::fsst_dict, zs::codec_id::fsst}));
  EXPECT_EQ(gpu_stats.column_codecs, cpu_stats.column_codecs);
  EXPECT_EQ(gpu_stats.wire_bytes, cpu_stats.wire_bytes);
}

TEST_P(ColumnCollectivesGpu, AllgatherOfDeviceSlicesReassemblesTheWholeColumn) {
  int const me = host_->rank(), ranks = host_->size();
  for (const char* file : {"deb_maintainers.txt", "ncbi_tax_id.i32"}) {
    auto const whole = zs::test::data_column(file);
    auto const device_whole = whole.copy_to(zs::memory_kind::device, *stream_);
    auto const [b, e] = zs::test::share_of(whole.size(), me, ranks);
    std::vector<zs::column_view> in{zs::test::slice(device_whole.view(), b, e)};
    auto const out = to_host(zs::allgather(*device_, in, {}, *stream_));
    zs::test::expected_column expected{whole.type(), {}, {}};
    zs::test::append_rows(expected, whole, 0, whole.size());
    ASSERT_EQ(out.size(), 1u);
    zs::test::expect_column(out[0], expected, file);
  }
}

TEST_P(ColumnCollectivesGpu, BroadcastEveryTypeFromEveryRoot) {
  int const me = host_->rank(), ranks = host_->size();
  for (int root = 0; root < ranks; ++root) {
    auto const device_root = me == root ? to_device(zs::test::columns_of(root, scale)) : std::vector<zs::column>{};
    std::vector<zs::column_view> in;
    if (me == root) {
      in = views(device_root);
    } else {
      for (auto type : all_types()) in.push_back(zs::column_view{type});
    }
    auto const out = to_host(zs::broadcast(*device_, in, root, {}, *stream_));
    expect_columns(out, concatenated({root}, scale), "GPU broadcast from " + std::to_string(root));
  }
}

TEST_P(ColumnCollectivesGpu, NullMasksOfEveryKindAsOnTheCpuPath) {
  int const me = host_->rank(), ranks = host_->size();
  auto host_mine = zs::test::columns_of(me, scale);
  zs::test::add_null_masks(host_mine, me);
  auto const device_mine = to_device(host_mine);
  zs::shuffle_stats gpu_stats, cpu_stats;
  auto const gpu = to_host(zs::allgather(*device_, views(device_mine), {}, *stream_, &gpu_stats));
  auto const cpu = zs::allgather(*host_, views(host_mine), {}, &cpu_stats);
  expect_columns(gpu, concatenated(every_rank(ranks), scale), "GPU allgather");
  ASSERT_EQ(gpu.size(), cpu.size());
  for (std::size_t c = 0; c < gpu.size(); ++c) {
    EXPECT_EQ(gpu[c].nullable(), zs::test::nullable_somewhere(c, ranks)) << "column " << c;
    EXPECT_EQ(gpu[c].nullable(), cpu[c].nullable()) << "column " << c;
    EXPECT_EQ(gpu[c].validity(), cpu[c].validity()) << "column " << c;
  }
  EXPECT_EQ(gpu_stats.wire_bytes, cpu_stats.wire_bytes) << "the same frames, validity included";
  for (int root = 0; root < ranks; ++root) {
    std::vector<zs::column_view> in;
    if (me == root) {
      in = views(device_mine);
    } else {
      for (auto type : all_types()) in.push_back(zs::column_view{type});
    }
    auto const out = to_host(zs::broadcast(*device_, in, root, {}, *stream_));
    expect_columns(out, concatenated({root}, scale), "GPU broadcast from " + std::to_string(root));
    for (std::size_t c = 0; c < out.size(); ++c) {
      bool const nullable = zs::test::null_kind_of(root, c) != zs::test::null_kind::none;
      ASSERT_EQ(out[c].nullable(), nullable) << "root " << root << ", column " << c;
      auto const valid = out[c].validity();
      for (std::uint64_t i = 0; i < valid.size(); ++i) {
        ASSERT_EQ(valid[i], !nullable || zs::test::row_valid(root, c, i)) << "root " << root << ", column " << c;
      }
    }
  }
}

TEST_P(ColumnCollectivesGpu, EmptyColumnsAndRanksWithoutRows) {
  int const me = host_->rank();
  // Odd ranks contribute no rows.
  std::vector<std::string> strings;
  std::vector<std::int64_t> numbers;
  if (me % 2 == 0) {
    for (int i = 0; i < 50; ++i) {
      strings.push_back(letters(me, i));
      numbers.push_back(me * 1000 + i);
    }
  }
  std::vector<zs::column> host_cols;
  host_cols.push_back(zs::column::from_strings(strings));
  host_cols.push_back(zs::column::from_values<std::int64_t>(numbers));
  auto const device_cols = to_device(host_cols);
  auto const out = to_host(zs::allgather(*device_, views(device_cols), {}, *stream_));
  std::vector<std::string> expected_strings;
  std::vector<std::int64_t> expected_numbers;
  for (int r = 0; r < host_->size(); r += 2) {
    for (int i = 0; i < 50; ++i) {
      expected_strings.push_back(letters(r, i));
      expected_numbers.push_back(r * 1000 + i);
    }
  }
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].strings(), expected_strings);
  ASSERT_EQ(out[1].size(), expected_numbers.size());
  EXPECT_TRUE(std::equal(expected_numbers.begin(), expected_numbers.end(), out[1].view().values<std::int64_t>()));

  std::vector<zs::column> no_strings;
  no_strings.push_back(zs::column::from_strings(std::vector<std::string>{}));
  auto const none = to_device(no_strings);
  auto const empty = to_host(zs::broadcast(*device_, views(none), 0, {}, *stream_));
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].size(), 0u);
  EXPECT_EQ(empty[0].view().offsets[0], 0);
}

TEST_P(ColumnCollectivesGpu, HostColumnOnOneRankFailsEveryRank) {
  auto const host_ints = zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{1, 2, 3});
  auto const device_ints = host_ints.copy_to(zs::memory_kind::device, *stream_);
  bool const last = host_->rank() == host_->size() - 1;
  std::vector<zs::column_view> in{last ? host_ints.view() : device_ints.view()};
  EXPECT_ZS_ERROR(zs::allgather(*device_, in, {}, *stream_), zs::error_code::invalid_argument);
  in[0] = device_ints.view();
  auto const out = to_host(zs::allgather(*device_, in, {}, *stream_));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].size(), 3u * static_cast<unsigned>(host_->size()));
}

TEST_P(ColumnCollectivesGpu, FrameDamagedInTransitOnOneRankFailsEveryRank) {
  int const victim = host_->size() - 1;
  corrupting_device_communicator comm(*device_, victim);
  auto const device_mine = to_device(zs::test::columns_of(host_->rank(), scale));
  EXPECT_ZS_ERROR(zs::allgather(comm, views(device_mine), {}, *stream_), zs::error_code::corrupt_frame);
  auto const device_root = to_device(zs::test::columns_of(0, scale));
  EXPECT_ZS_ERROR(zs::broadcast(comm, views(device_root), 0, {}, *stream_), zs::error_code::corrupt_frame);
  if (host_->rank() == victim) {
    EXPECT_EQ(comm.damaged(), 2);
  }
  comm.stop();
  expect_columns(to_host(zs::broadcast(comm, views(device_root), 0, {}, *stream_)), concatenated({0}, scale),
                 "after the error");
}

INSTANTIATE_TEST_SUITE_P(Backends, ColumnCollectivesGpu, zs::test::all_backends(), zs::test::backend_name);

}  // namespace
