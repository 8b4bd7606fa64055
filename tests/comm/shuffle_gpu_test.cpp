// The GPU shuffle and the device communicators, under mpirun, with every backend (gpu_fixture.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "comm_test.hpp"
#include "fixture_codec.hpp"
#include "gpu_fixture.hpp"
#include "null_shuffle_support.hpp"
#include "shuffle_support.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/null_mask.hpp"
#include "zs/partition.hpp"
#include "zs_test.hpp"

namespace {

class ShuffleGpu : public zs::test::gpu_comm_test {
 protected:
  // Shuffles `mine` (this rank's rows of one column, cut evenly over the ranks) on the CPU path and
  // on the GPU path with the same options: each sender must choose the same codec and send the
  // same frame bytes (the GPU and CPU codecs write the same frames), and the GPU path's rows here
  // must be `expected`. Returns the codec this rank chose.
  zs::codec_id expect_codec_choice_as_on_the_cpu(const zs::column& mine, const zs::shuffle_options& options,
                                                 const zs::test::expected_column& expected) {
    auto const device_col = mine.copy_to(zs::memory_kind::device, *stream_);
    auto const cut = zs::test::even_cut(mine.size(), host_->size());
    std::vector<zs::shuffle_column> const host_in{{mine.view(), cut}}, device_in{{device_col.view(), cut}};
    zs::shuffle_stats cpu, gpu;
    zs::shuffle(*host_, host_in, options, &cpu);
    auto const out = to_host(zs::shuffle(*device_, device_in, options, *stream_, &gpu));
    zs::test::expect_column(out[0], expected, "gpu");
    EXPECT_EQ(gpu.column_codecs, cpu.column_codecs);
    EXPECT_EQ(gpu.column_wire_bytes, cpu.column_wire_bytes);
    EXPECT_EQ(gpu.column_codecs.size(), 1u);
    return gpu.column_codecs.empty() ? zs::codec_id::raw : gpu.column_codecs[0];
  }
};

// Every plan: the planner's on the measured links, every partition compressed, and made-up
// links that send each column raw to this rank and compressed to the others (raw fixed-width
// partitions, raw string frames and compressed frames in the same rounds).
TEST_P(ShuffleGpu, EveryTypeMatchesTheExpectedRows) {
  int const me = host_->rank(), ranks = host_->size();
  zs::shuffle_options planned, compressed, mixed;
  compressed.plan = zs::shuffle_options::planning::compress;
  mixed.link_bandwidth.assign(static_cast<std::size_t>(ranks), 1e3);
  mixed.link_bandwidth[static_cast<std::size_t>(me)] = 1e15;
  for (auto const& [name, options_for] : {std::pair{"planned", planned}, {"compressed", compressed}, {"mixed", mixed}}) {
    for (std::uint64_t round_bytes : {std::uint64_t{256} << 20, std::uint64_t{16} << 10}) {
      auto const device_columns = to_device(zs::test::columns_of(me, 2000));
      std::vector<std::vector<std::uint64_t>> offsets;
      for (std::size_t c = 0; c < device_columns.size(); ++c) {
        offsets.push_back(zs::test::partition_of(me, c, device_columns[c].size(), ranks));
      }
      std::vector<zs::shuffle_column> in;
      for (std::size_t c = 0; c < device_columns.size(); ++c) in.push_back({device_columns[c].view(), offsets[c]});
      zs::shuffle_options options = options_for;
      options.round_bytes = round_bytes;
      zs::shuffle_stats stats;
      auto const out = to_host(zs::shuffle(*device_, in, options, *stream_, &stats));
      auto const expected = zs::test::expected_for(me, ranks, 2000);
      zs::test::expect_columns(out, expected, std::string(name) + ", rounds " + std::to_string(stats.rounds));
      EXPECT_EQ(stats.plan.has_value(), options.plan == zs::shuffle_options::planning::automatic) << name;
      if (round_bytes < (1 << 20)) {
        EXPECT_GE(stats.rounds, 4u);
      }
    }
  }
}

// Scattered pieces: three per peer (one empty), sent from one buffer's scattered places and
// landing in another order, piece for piece.
TEST_P(ShuffleGpu, AlltoallvPiecesLandPieceForPiece) {
  int const me = host_->rank(), ranks = host_->size();
  auto const piece_bytes = [](int from, int to, int i) -> std::uint64_t {
    return i == 1 ? 0 : 1000 + 77 * static_cast<std::uint64_t>(from) + 13 * static_cast<std::uint64_t>(to) + 5 * i;
  };
  std::vector<std::byte> send;
  std::vector<std::uint64_t> send_at;
  for (int p = ranks - 1; p >= 0; --p) {  // stored in reverse peer order
    for (int i = 0; i < 3; ++i) {
      send_at.push_back(send.size());
      for (std::uint64_t b = 0; b < piece_bytes(me, p, i); ++b) send.push_back(zs::test::pattern_byte(me, p, b + 1000 * i));
    }
  }
  std::uint64_t recv_total = 0;
  for (int p = 0; p < ranks; ++p) {
    for (int i = 0; i < 3; ++i) recv_total += piece_bytes(p, me, i);
  }
  zs::device_buffer d_send(send.size(), *stream_), d_recv(recv_total, *stream_);
  zs::copy_async(d_send.data(), send.data(), send.size(), *stream_);
  std::vector<zs::device_communicator::send_piece> sends;
  std::vector<zs::device_communicator::recv_piece> recvs;
  std::size_t j = 0;
  for (int p = ranks - 1; p >= 0; --p) {
    for (int i = 0; i < 3; ++i, ++j) sends.push_back({p, d_send.as<std::byte>() + send_at[j], piece_bytes(me, p, i)});
  }
  std::uint64_t at = 0;
  for (int p = 0; p < ranks; ++p) {
    for (int i = 0; i < 3; ++i) {
      recvs.push_back({p, d_recv.as<std::byte>() + at, piece_bytes(p, me, i)});
      at += piece_bytes(p, me, i);
    }
  }
  device_->alltoallv_pieces(sends, recvs, *stream_);
  std::vector<std::byte> recv(recv_total);
  zs::copy_async(recv.data(), d_recv.data(), recv_total, *stream_);
  stream_->synchronize();
  at = 0;
  for (int p = 0; p < ranks; ++p) {
    for (int i = 0; i < 3; ++i) {
      for (std::uint64_t b = 0; b < piece_bytes(p, me, i); ++b, ++at) {
        ASSERT_EQ(recv[at], zs::test::pattern_byte(p, me, b + 1000 * i)) << "from rank " << p << ", piece " << i;
      }
    }
  }
  auto const& links = device_->link_bandwidth(*stream_);
  ASSERT_EQ(links.size(), static_cast<std::size_t>(ranks));
  for (double b : links) EXPECT_GT(b, 1e6) << "a link measured below 1 MB/s";
}

// A codec with column parameters and embedded frames of other codecs: the GPU shuffle's frames
// decode to the same rows as the CPU shuffle's.
TEST_P(ShuffleGpu, CodecWithColumnParametersMatchesTheExpectedRows) {
  zs::test::register_fixture_codec();
  int const me = host_->rank(), ranks = host_->size();
  auto const device_columns = to_device(zs::test::columns_of(me, 2000));
  std::vector<std::vector<std::uint64_t>> offsets;
  std::vector<zs::shuffle_column> in;
  for (std::size_t c = 0; c < device_columns.size(); ++c) {
    offsets.push_back(zs::test::partition_of(me, c, device_columns[c].size(), ranks));
  }
  for (std::size_t c = 0; c < device_columns.size(); ++c) in.push_back({device_columns[c].view(), offsets[c]});
  zs::shuffle_options options;
  options.codec = zs::test::fixture_codec_id;
  options.round_bytes = 16 << 10;
  zs::shuffle_stats stats;
  auto const out = to_host(zs::shuffle(*device_, in, options, *stream_, &stats));
  zs::test::expect_columns(out, zs::test::expected_for(me, ranks, 2000), "rounds " + std::to_string(stats.rounds));
}

TEST_P(ShuffleGpu, RealColumnHashPartitionedMatchesTheCpuShuffle) {
  int const me = host_->rank(), ranks = host_->size();
  auto const whole = zs::test::data_column("ncbi_tax_id.i32");
  std::uint64_t const b = whole.size() * me / ranks, e = whole.size() * (me + 1) / ranks;
  std::vector<std::int32_t> mine(whole.view().values<std::int32_t>() + b, whole.view().values<std::int32_t>() + e);
  // Group rows by destination (value mod ranks), as a hash partition would.
  std::stable_sort(mine.begin(), mine.end(), [&](std::int32_t x, std::int32_t y) { return x % ranks < y % ranks; });
  std::vector<std::uint64_t> off(ranks + 1, 0);
  for (auto v : mine) ++off[v % ranks + 1];
  for (int d = 0; d < ranks; ++d) off[d + 1] += off[d];
  auto const host_col = zs::column::from_values<std::int32_t>(mine);
  auto const device_col = host_col.copy_to(zs::memory_kind::device, *stream_);
  std::vector<zs::shuffle_column> host_in{{host_col.view(), off}}, device_in{{device_col.view(), off}};
  zs::shuffle_options options;
  options.round_bytes = 1 << 20;
  auto const cpu = zs::shuffle(*host_, host_in, options);
  auto const gpu = to_host(zs::shuffle(*device_, device_in, options, *stream_));
  ASSERT_EQ(gpu[0].size(), cpu[0].size());
  EXPECT_EQ(std::memcmp(gpu[0].view().data, cpu[0].view().data, cpu[0].data_bytes()), 0);
  for (std::uint64_t i = 0; i < gpu[0].size(); ++i) {
    ASSERT_EQ(gpu[0].view().values<std::int32_t>()[i] % ranks, me) << "row " << i << " reached the wrong rank";
  }
}

// Each sender's choice between fsst and fsst_dict, as on the CPU, and the expected rows.
TEST_P(ShuffleGpu, EachSenderTakesTheDictionaryWhereItsStringsRepeatAsOnTheCpu) {
  int const me = host_->rank(), ranks = host_->size();
  constexpr std::uint64_t rows = 6000;
  zs::shuffle_options options;
  options.plan = zs::shuffle_options::planning::compress;
  options.round_bytes = 64 << 10;
  auto const chosen = expect_codec_choice_as_on_the_cpu(zs::test::repeating_or_distinct_strings(me, rows), options,
                                                        zs::test::expected_repeating_or_distinct(me, ranks, rows));
  EXPECT_EQ(chosen, me % 2 == 0 ? zs::codec_id::fsst_dict : zs::codec_id::fsst) << "rank " << me;
}

// Each sender's choice between bitpack and dict over slow links, as on the CPU, and the
// expected rows.
TEST_P(ShuffleGpu, EachSenderTakesTheExtendedSchemesAsOnTheCpu) {
  int const me = host_->rank(), ranks = host_->size();
  constexpr std::uint64_t rows = 40000;
  zs::shuffle_options options;
  options.round_bytes = 64 << 10;
  options.link_bandwidth.assign(static_cast<std::size_t>(ranks), 1e3);
  auto const chosen = expect_codec_choice_as_on_the_cpu(zs::test::outlier_or_plain_ints(me, rows), options,
                                                        zs::test::expected_outlier_or_plain(me, ranks, rows));
  EXPECT_EQ(chosen, me % 2 == 0 ? zs::codec_id::dict : zs::codec_id::bitpack_for) << "rank " << me;
}

// Null masks of every kind on every type, as the CPU path sends them: the same rows, the same
// nulls, and the validity's cost in the stats alike (the GPU and CPU codecs write the same frames).
TEST_P(ShuffleGpu, NullMasksOfEveryKindMatchTheCpuShuffle) {
  int const me = host_->rank(), ranks = host_->size();
  std::uint64_t const scale = 1500;
  auto host_columns = zs::test::columns_of(me, scale);
  zs::test::add_null_masks(host_columns, me);
  auto const device_columns = to_device(host_columns);
  std::vector<std::vector<std::uint64_t>> offsets;
  for (std::size_t c = 0; c < host_columns.size(); ++c) {
    offsets.push_back(zs::test::partition_of(me, c, host_columns[c].size(), ranks));
  }
  std::vector<zs::shuffle_column> host_in, device_in;
  for (std::size_t c = 0; c < host_columns.size(); ++c) {
    host_in.push_back({host_columns[c].view(), offsets[c]});
    device_in.push_back({device_columns[c].view(), offsets[c]});
  }
  zs::shuffle_options compressed, raw;
  compressed.plan = zs::shuffle_options::planning::compress;
  compressed.round_bytes = 16384;
  raw.codec = zs::codec_id::raw;
  for (auto const& [name, options] : {std::pair{"compressed", compressed}, {"raw", raw}}) {
    zs::shuffle_stats cpu_stats, gpu_stats;
    auto const cpu = zs::shuffle(*host_, host_in, options, &cpu_stats);
    auto const gpu = to_host(zs::shuffle(*device_, device_in, options, *stream_, &gpu_stats));
    zs::test::expect_columns(gpu, zs::test::expected_for(me, ranks, scale), name);
    zs::test::expect_received_nulls(gpu, me, ranks, scale, name);
    for (std::size_t c = 0; c < cpu.size(); ++c) {
      EXPECT_EQ(gpu[c].validity(), cpu[c].validity()) << name << ", column " << c;
    }
    EXPECT_EQ(gpu_stats.column_null_raw_bytes, cpu_stats.column_null_raw_bytes) << name;
    EXPECT_EQ(gpu_stats.column_null_wire_bytes, cpu_stats.column_null_wire_bytes) << name;
    zs::test::expect_null_stats(gpu_stats, host_columns, ranks,
                                std::vector<bool>(host_columns.size(), options.codec == zs::codec_id::raw), name);
  }
}

// A real column with its fill values as nulls, hash partitioned on the GPU, then shuffled: every
// row reaches its partition's rank with its null bit, as on the CPU.
TEST_P(ShuffleGpu, RealColumnWithFillValuesAsNullsMatchesTheCpuShuffle) {
  int const me = host_->rank(), ranks = host_->size();
  auto const whole = zs::test::data_column("levitus_temp.f32");
  std::uint64_t const b = whole.size() * me / ranks, e = whole.size() * (me + 1) / ranks;
  std::vector<float> mine(whole.view().values<float>() + b, whole.view().values<float>() + e);
  // Null where it holds the column's most frequent value (its fill value for "no measurement"),
  // found alike on every rank from the whole column.
  std::vector<std::uint32_t> bits(whole.size());
  std::memcpy(bits.data(), whole.view().data, bits.size() * 4);
  std::sort(bits.begin(), bits.end());
  std::uint32_t fill_bits = 0;
  std::uint64_t most = 0;
  for (std::uint64_t i = 0; i < bits.size();) {
    std::uint64_t j = i;
    while (j < bits.size() && bits[j] == bits[i]) ++j;
    if (j - i > most) most = j - i, fill_bits = bits[i];
    i = j;
  }
  ASSERT_GT(most, bits.size() / 100) << "the column has a fill value";
  float fill = 0;
  std::memcpy(&fill, &fill_bits, 4);
  zs::table t;
  t.names = {"temp"};
  t.columns.push_back(zs::column::from_values<float>(mine));
  std::uint8_t* const mask = t.columns[0].add_null_mask();
  std::fill(mask, mask + zs::null_mask_bytes(mine.size()), std::uint8_t{0});
  std::uint64_t nulls = 0;
  for (std::uint64_t i = 0; i < mine.size(); ++i) {
    if (std::memcmp(&mine[i], &fill, 4) != 0) {
      mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
    } else {
      ++nulls;
    }
  }
  zs::table_shuffle_options options;
  options.shuffle.round_bytes = 1 << 20;
  std::size_t const keys[] = {0};
  auto const cpu = zs::shuffle_table(*host_, t, keys, options);
  zs::table device_table{t.names, to_device(t.columns)};
  auto gpu = zs::shuffle_table(*device_, device_table, keys, options, *stream_);
  auto const back = to_host(gpu.rows.columns);
  ASSERT_EQ(back[0].size(), cpu.rows.columns[0].size());
  // The rows that hold a value (what the null rows hold is unspecified: the CPU and GPU paths
  // may cut frames apart, and their stand-ins with them).
  EXPECT_TRUE(zs::test::same_valid_rows(back[0].view().data, cpu.rows.columns[0].view().data, back[0].size(), 4,
                                        cpu.rows.columns[0].view().null_mask));
  EXPECT_EQ(back[0].validity(), cpu.rows.columns[0].validity());
  // Every null row of every rank is on the rank that owns null_key_hash's partition.
  std::uint64_t const all_nulls = host_->allreduce_sum(nulls);
  std::uint64_t const here = zs::count_nulls(back[0].view().null_mask, back[0].size(), zs::memory_kind::host);
  int const owner = static_cast<int>(zs::null_key_hash % static_cast<std::uint32_t>(ranks));
  EXPECT_EQ(here, me == owner ? all_nulls : 0u);
}

TEST_P(ShuffleGpu, RawAlltoallvMovesUnevenBlocks) {
  int const me = host_->rank(), ranks = host_->size();
  std::vector<std::uint64_t> send_counts(ranks), recv_counts(ranks);
  for (int p = 0; p < ranks; ++p) {
    send_counts[p] = (static_cast<std::uint64_t>(me) * 3 + p) % 4 * 100003;  // some blocks empty
    recv_counts[p] = (static_cast<std::uint64_t>(p) * 3 + me) % 4 * 100003;
  }
  std::vector<std::byte> send;
  for (int p = 0; p < ranks; ++p) {
    for (std::uint64_t i = 0; i < send_counts[p]; ++i) send.push_back(zs::test::pattern_byte(me, p, i));
  }
  std::uint64_t recv_total = 0;
  for (auto c : recv_counts) recv_total += c;
  zs::device_buffer d_send(send.size(), *stream_), d_recv(recv_total, *stream_);
  zs::copy_async(d_send.data(), send.data(), send.size(), *stream_);
  device_->alltoallv(d_send.as<std::byte>(), send_counts, d_recv.as<std::byte>(), recv_counts, *stream_);
  std::vector<std::byte> recv(recv_total);
  zs::copy_async(recv.data(), d_recv.data(), recv_total, *stream_);
  stream_->synchronize();
  std::uint64_t at = 0;
  for (int p = 0; p < ranks; ++p) {
    for (std::uint64_t i = 0; i < recv_counts[p]; ++i, ++at) {
      ASSERT_EQ(recv[at], zs::test::pattern_byte(p, me, i)) << "from rank " << p << ", byte " << i;
    }
  }
}

TEST_P(ShuffleGpu, MismatchedCountsFailEveryRank) {
  int const ranks = host_->size();
  std::vector<std::uint64_t> send_counts(ranks, 16), recv_counts(ranks, 16);
  if (host_->rank() == 0) recv_counts[ranks - 1] = 17;  // rank 0 expects a byte too many
  zs::device_buffer d_send(16 * ranks, *stream_), d_recv(16 * ranks + 1, *stream_);
  EXPECT_ZS_ERROR(device_->alltoallv(d_send.as<std::byte>(), send_counts, d_recv.as<std::byte>(), recv_counts, *stream_),
                  zs::error_code::size_mismatch);
}

TEST_P(ShuffleGpu, RawAllgathervBcastAndSendRecv) {
  int const me = host_->rank(), ranks = host_->size();
  auto block = [](int from, std::uint64_t n) {
    std::vector<std::byte> b(n);
    for (std::uint64_t i = 0; i < n; ++i) b[i] = zs::test::pattern_byte(from, 99, i);
    return b;
  };
  auto to_device = [&](const std::vector<std::byte>& h) {
    zs::device_buffer d(std::max<std::size_t>(h.size(), 1), *stream_);
    zs::copy_async(d.data(), h.data(), h.size(), *stream_);
    return d;
  };
  auto to_host = [&](const zs::device_buffer& d, std::size_t n) {
    std::vector<std::byte> h(n);
    zs::copy_async(h.data(), d.data(), n, *stream_);
    stream_->synchronize();
    return h;
  };

  // allgatherv: rank p contributes 1000 * p + 7 bytes (rank 0's block is small, none is empty).
  std::vector<std::uint64_t> counts(ranks);
  std::uint64_t total = 0;
  for (int p = 0; p < ranks; ++p) total += counts[p] = 1000ULL * p + 7;
  auto const mine = block(me, counts[me]);
  auto const d_mine = to_device(mine);
  zs::device_buffer d_all(total, *stream_);
  device_->allgatherv(d_mine.as<std::byte>(), counts[me], d_all.as<std::byte>(), counts, *stream_);
  auto const all = to_host(d_all, total);
  std::uint64_t at = 0;
  for (int p = 0; p < ranks; ++p) {
    auto const expected = block(p, counts[p]);
    ASSERT_EQ(std::memcmp(all.data() + at, expected.data(), counts[p]), 0) << "block of rank " << p;
    at += counts[p];
  }

  // bcast from the last rank.
  std::uint64_t const n = 300001;
  auto const root_bytes = block(ranks - 1, n);
  auto d_buf = to_device(me == ranks - 1 ? root_bytes : std::vector<std::byte>(n, std::byte{0}));
  device_->bcast(d_buf.as<std::byte>(), n, ranks - 1, *stream_);
  EXPECT_EQ(to_host(d_buf, n), root_bytes);

  // send/recv around a ring (even ranks send first, so no pair waits on each other).
  if (ranks > 1) {
    int const next = (me + 1) % ranks, prev = (me + ranks - 1) % ranks;
    auto const out = block(me, 70001);
    auto const d_out = to_device(out);
    zs::device_buffer d_in(70001, *stream_);
    if (me % 2 == 0) {
      device_->send(d_out.as<std::byte>(), 70001, next, *stream_);
      device_->recv(d_in.as<std::byte>(), 70001, prev, *stream_);
    } else {
      device_->recv(d_in.as<std::byte>(), 70001, prev, *stream_);
      device_->send(d_out.as<std::byte>(), 70001, next, *stream_);
    }
    EXPECT_EQ(to_host(d_in, 70001), block(prev, 70001));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShuffleGpu, zs::test::all_backends(), zs::test::backend_name);

}  // namespace
