// zs::mpi_communicator under mpirun with 1..4 ranks.
//
// Every collective test runs three times: with the default 1 GiB message limit (one native MPI
// call) and with limits of 7 and 64 bytes, which cut the same transfers into many pieces and so
// run the split path that real transfers above 1 GiB take.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm_test.hpp"
#include "zs/comm/mpi_communicator.hpp"

namespace {

using zs::error_code;
using zs::mpi_communicator;
using zs::test::fill_pattern;
using zs::test::first_pattern_error;

constexpr std::uint64_t default_limit = zs::mpi_communicator_options{}.max_message_bytes;

// Bytes rank `from` sends to rank `to` in the uneven all-to-all: some blocks are empty, and with
// more than one rank the last rank sends nothing at all.
std::uint64_t block_bytes(int from, int to, int ranks) {
  if (ranks > 1 && from == ranks - 1) return 0;
  auto const shape = static_cast<std::uint64_t>((from * 5 + to * 3 + 1) % 7);
  if (shape == 0) return 0;
  return shape * 53 + static_cast<std::uint64_t>(from * 11 + to);
}

struct packed {
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> counts;
};

// What this rank sends in an all-to-all whose block sizes `sizes(from, to)` gives.
template <typename Sizes>
packed make_send(int me, int ranks, Sizes&& sizes) {
  packed out;
  for (int to = 0; to < ranks; ++to) out.counts.push_back(sizes(me, to));
  out.bytes.resize(std::accumulate(out.counts.begin(), out.counts.end(), std::uint64_t{0}));
  std::uint64_t offset = 0;
  for (int to = 0; to < ranks; ++to) {
    fill_pattern(out.bytes.data() + offset, out.counts[static_cast<std::size_t>(to)], me, to);
    offset += out.counts[static_cast<std::size_t>(to)];
  }
  return out;
}

// Counts this rank receives, and a buffer for them filled with a byte no pattern relies on.
template <typename Sizes>
packed make_recv(int me, int ranks, Sizes&& sizes) {
  packed in;
  for (int from = 0; from < ranks; ++from) in.counts.push_back(sizes(from, me));
  in.bytes.assign(std::accumulate(in.counts.begin(), in.counts.end(), std::uint64_t{0}),
                  std::byte{0xEE});
  return in;
}

// Checks every received block byte for byte against what its sender generated.
void expect_blocks(const packed& in, int me) {
  std::uint64_t offset = 0;
  for (std::size_t from = 0; from < in.counts.size(); ++from) {
    auto const error =
        first_pattern_error(in.bytes.data() + offset, in.counts[from], static_cast<int>(from), me);
    EXPECT_FALSE(error.has_value()) << "block from rank " << from << " (" << in.counts[from]
                                    << " bytes) differs at byte " << error.value_or(0);
    offset += in.counts[from];
  }
}

class mpi_communicator_test : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  mpi_communicator make_comm() const {
    return mpi_communicator(MPI_COMM_WORLD, zs::mpi_communicator_options{GetParam()});
  }
};

std::string limit_name(const ::testing::TestParamInfo<std::uint64_t>& info) {
  return info.param == default_limit ? std::string("one_message")
                                     : "pieces_of_" + std::to_string(info.param) + "_bytes";
}

INSTANTIATE_TEST_SUITE_P(message_limits, mpi_communicator_test,
                         ::testing::Values(default_limit, std::uint64_t{7}, std::uint64_t{64}),
                         limit_name);

TEST_P(mpi_communicator_test, duplicates_the_communicator_and_reports_rank_and_size) {
  auto comm = make_comm();
  int world_rank = -1;
  int world_size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  EXPECT_EQ(comm.rank(), world_rank);
  EXPECT_EQ(comm.size(), world_size);
  EXPECT_EQ(comm.max_message_bytes(), GetParam());

  int comparison = MPI_IDENT;
  ASSERT_EQ(MPI_Comm_compare(comm.get(), MPI_COMM_WORLD, &comparison), MPI_SUCCESS);
  EXPECT_EQ(comparison, MPI_CONGRUENT) << "expected a duplicate, not MPI_COMM_WORLD itself";

  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  ASSERT_EQ(MPI_Comm_get_errhandler(comm.get(), &handler), MPI_SUCCESS);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
}

TEST_P(mpi_communicator_test, alltoallv_delivers_uneven_blocks_byte_for_byte) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  auto const sizes = [ranks](int from, int to) { return block_bytes(from, to, ranks); };
  auto const out = make_send(me, ranks, sizes);
  auto in = make_recv(me, ranks, sizes);

  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);
  expect_blocks(in, me);
}

TEST_P(mpi_communicator_test, alltoallv_of_nothing_at_all_completes) {
  auto comm = make_comm();
  std::vector<std::uint64_t> const zeros(static_cast<std::size_t>(comm.size()), 0);
  comm.alltoallv({}, zeros, {}, zeros);
  EXPECT_TRUE(comm.all_ok(true));
}

TEST_P(mpi_communicator_test, exchange_counts_then_alltoallv_finds_the_receive_sizes) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  auto const sizes = [ranks](int from, int to) { return block_bytes(to, from, ranks) + 1; };
  auto const out = make_send(me, ranks, sizes);

  auto const recv_counts = comm.exchange_counts(out.counts);
  packed in{{}, recv_counts};
  in.bytes.resize(std::accumulate(recv_counts.begin(), recv_counts.end(), std::uint64_t{0}));
  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);

  for (int from = 0; from < ranks; ++from) {
    EXPECT_EQ(recv_counts[static_cast<std::size_t>(from)], sizes(from, me)) << "from " << from;
  }
  expect_blocks(in, me);
}

TEST_P(mpi_communicator_test, allgatherv_gathers_every_rank_block_in_rank_order) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  // Rank 1 contributes nothing.
  auto const contribution = [](int rank) -> std::uint64_t {
    return rank == 1 ? 0 : 50 + 97 * static_cast<std::uint64_t>(rank);
  };
  std::vector<std::byte> mine(contribution(me));
  fill_pattern(mine.data(), mine.size(), me, -1);

  auto const recv_counts = comm.allgather(mine.size());
  packed in{std::vector<std::byte>(std::accumulate(recv_counts.begin(), recv_counts.end(),
                                                   std::uint64_t{0}),
                                   std::byte{0xEE}),
            recv_counts};
  comm.allgatherv(mine, in.bytes, in.counts);

  std::uint64_t offset = 0;
  for (int from = 0; from < ranks; ++from) {
    auto const bytes = recv_counts[static_cast<std::size_t>(from)];
    EXPECT_EQ(bytes, contribution(from));
    auto const error = first_pattern_error(in.bytes.data() + offset, bytes, from, -1);
    EXPECT_FALSE(error.has_value()) << "block of rank " << from << " differs at byte "
                                    << error.value_or(0);
    offset += bytes;
  }
}

TEST_P(mpi_communicator_test, bcast_from_every_root_delivers_the_root_bytes) {
  auto comm = make_comm();
  for (int root = 0; root < comm.size(); ++root) {
    std::vector<std::byte> buffer(300 + static_cast<std::size_t>(root), std::byte{0xEE});
    if (comm.rank() == root) fill_pattern(buffer.data(), buffer.size(), root, -2);
    comm.bcast(buffer, root);
    auto const error = first_pattern_error(buffer.data(), buffer.size(), root, -2);
    EXPECT_FALSE(error.has_value()) << "root " << root << ": differs at byte "
                                    << error.value_or(0);
  }
}

// Even ranks send before they receive and odd ranks after, so the ring completes even when a
// send waits for its receive (with an odd number of ranks the last even rank and rank 0 both
// send first, but rank 0's successor is odd and receives first, which unblocks the chain).
TEST_P(mpi_communicator_test, send_recv_around_a_ring_keeps_message_order) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  int const next = (me + 1) % ranks;
  int const previous = (me + ranks - 1) % ranks;
  constexpr int tag = 11;
  auto const bytes = [](int from, int message) {
    return static_cast<std::uint64_t>(100 + 33 * from + 7 * message);
  };

  std::vector<std::vector<std::byte>> outgoing;
  for (int message = 0; message < 2; ++message) {
    outgoing.emplace_back(bytes(me, message));
    fill_pattern(outgoing.back().data(), outgoing.back().size(), me, 100 + message);
  }
  std::vector<std::vector<std::byte>> incoming;
  for (int message = 0; message < 2; ++message) {
    incoming.emplace_back(bytes(previous, message), std::byte{0xEE});
  }

  auto const send_all = [&] {
    for (auto const& message : outgoing) comm.send(message, next, tag);
  };
  auto const recv_all = [&] {
    for (auto& message : incoming) comm.recv(message, previous, tag);
  };
  if (me % 2 == 0) {
    send_all();
    recv_all();
  } else {
    recv_all();
    send_all();
  }

  for (int message = 0; message < 2; ++message) {
    auto const& got = incoming[static_cast<std::size_t>(message)];
    auto const error = first_pattern_error(got.data(), got.size(), previous, 100 + message);
    EXPECT_FALSE(error.has_value()) << "message " << message << " differs at byte "
                                    << error.value_or(0);
  }
}

TEST_P(mpi_communicator_test, recv_of_the_wrong_size_consumes_the_message_and_reports_it) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  int const next = (me + 1) % ranks;
  int const previous = (me + ranks - 1) % ranks;
  constexpr int tag = 5;

  std::vector<std::byte> first(150);
  std::vector<std::byte> second(90);
  fill_pattern(first.data(), first.size(), me, 1);
  fill_pattern(second.data(), second.size(), me, 2);

  // The receiver expects 5 bytes more than the first message has.
  std::vector<std::byte> too_big(155, std::byte{0xEE});
  std::vector<std::byte> right(90, std::byte{0xEE});
  auto const receive = [&] {
    EXPECT_ZS_ERROR(comm.recv(too_big, previous, tag), error_code::size_mismatch);
    for (std::byte const b : too_big) ASSERT_EQ(b, std::byte{0xEE}) << "the buffer was written";
    comm.recv(right, previous, tag);
  };
  auto const send = [&] {
    comm.send(first, next, tag);
    comm.send(second, next, tag);
  };
  if (me % 2 == 0) {
    send();
    receive();
  } else {
    receive();
    send();
  }
  auto const error = first_pattern_error(right.data(), right.size(), previous, 2);
  EXPECT_FALSE(error.has_value()) << "the message after the mismatch differs at byte "
                                  << error.value_or(0);
}

TEST_P(mpi_communicator_test, alltoallv_size_mismatch_throws_on_every_rank_and_leaves_it_usable) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  auto const sizes = [ranks](int from, int to) { return block_bytes(from, to, ranks) + 3; };
  auto const out = make_send(me, ranks, sizes);

  // Rank 0 expects one byte more from the last rank than that rank sends (with one rank, from
  // itself). Its own buffer matches its counts, so only the ranks disagree.
  auto wrong = make_recv(me, ranks, sizes);
  if (me == 0) {
    wrong.counts.back() += 1;
    wrong.bytes.resize(wrong.bytes.size() + 1);
  }
  EXPECT_ZS_ERROR(comm.alltoallv(out.bytes, out.counts, wrong.bytes, wrong.counts),
                  error_code::size_mismatch);

  auto in = make_recv(me, ranks, sizes);
  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);
  expect_blocks(in, me);
}

TEST_P(mpi_communicator_test, alltoallv_wrong_count_list_throws_invalid_argument_on_every_rank) {
  auto comm = make_comm();
  int const me = comm.rank();
  int const ranks = comm.size();
  auto const sizes = [ranks](int from, int to) { return block_bytes(from, to, ranks); };
  auto const out = make_send(me, ranks, sizes);
  auto in = make_recv(me, ranks, sizes);

  // The last rank passes one count too many.
  auto counts = in.counts;
  if (me == ranks - 1) counts.push_back(0);
  EXPECT_ZS_ERROR(comm.alltoallv(out.bytes, out.counts, in.bytes, counts),
                  error_code::invalid_argument);

  // Rank 0's send buffer is one byte short of its counts.
  std::span<const std::byte> send = out.bytes;
  auto short_counts = out.counts;
  if (me == 0) short_counts.front() += 1;
  EXPECT_ZS_ERROR(comm.alltoallv(send, short_counts, in.bytes, in.counts),
                  error_code::invalid_argument);

  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);
  expect_blocks(in, me);
}

TEST_P(mpi_communicator_test, allgatherv_size_mismatch_throws_on_every_rank) {
  auto comm = make_comm();
  std::vector<std::byte> mine(40 + static_cast<std::size_t>(comm.rank()));
  auto counts = comm.allgather(mine.size());
  // The last rank believes rank 0 contributes one byte less than it does.
  if (comm.rank() == comm.size() - 1) counts.front() -= 1;
  std::vector<std::byte> recv(std::accumulate(counts.begin(), counts.end(), std::uint64_t{0}));
  EXPECT_ZS_ERROR(comm.allgatherv(mine, recv, counts), error_code::size_mismatch);

  // Rank 0 passes one count too few; the others are right.
  auto const good = comm.allgather(mine.size());
  std::vector<std::byte> all(std::accumulate(good.begin(), good.end(), std::uint64_t{0}));
  std::vector<std::uint64_t> const too_short(good.begin(), good.end() - 1);
  std::vector<std::byte> nothing;
  bool const wrong_here = comm.rank() == 0;
  EXPECT_ZS_ERROR(comm.allgatherv(mine, wrong_here ? std::span<std::byte>(nothing) : all,
                                  wrong_here ? std::span<const std::uint64_t>(too_short) : good),
                  error_code::invalid_argument);

  comm.allgatherv(mine, all, good);
  EXPECT_TRUE(comm.all_ok(true));
}

TEST_P(mpi_communicator_test, bcast_disagreement_throws_on_every_rank) {
  auto comm = make_comm();
  int const last = comm.size() - 1;
  if (comm.size() > 1) {
    // The last rank's buffer is one byte larger than the root's.
    std::vector<std::byte> buffer(64 + (comm.rank() == last ? 1 : 0));
    EXPECT_ZS_ERROR(comm.bcast(buffer, 0), error_code::size_mismatch);
  }

  // The last rank names a root that does not exist.
  std::vector<std::byte> same(64);
  EXPECT_ZS_ERROR(comm.bcast(same, comm.rank() == last ? comm.size() : 0),
                  error_code::invalid_argument);
  EXPECT_ZS_ERROR(comm.bcast(same, -1), error_code::invalid_argument);
  if (comm.size() > 1) {
    // Two ranks name different (valid) roots.
    EXPECT_ZS_ERROR(comm.bcast(same, comm.rank() == last ? 1 : 0), error_code::invalid_argument);
  }

  fill_pattern(same.data(), same.size(), 0, -3);
  comm.bcast(same, 0);
  EXPECT_FALSE(first_pattern_error(same.data(), same.size(), 0, -3).has_value());
}


// Rank 0 exchanges a few bytes (one MPI_Alltoallv would do for it) while the others exceed the
// limit; all ranks must still pick the same path, or the exchange would hang.
TEST(mpi_communicator, alltoallv_takes_one_path_when_only_some_ranks_exceed_the_limit) {
  mpi_communicator comm(MPI_COMM_WORLD, zs::mpi_communicator_options{64});
  int const me = comm.rank();
  int const ranks = comm.size();
  auto const sizes = [](int from, int to) -> std::uint64_t {
    return from == 0 || to == 0 ? 3 : 100;
  };
  auto const out = make_send(me, ranks, sizes);
  auto in = make_recv(me, ranks, sizes);
  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);
  expect_blocks(in, me);
}

TEST(mpi_communicator, all_ok_is_false_everywhere_when_one_rank_says_no) {
  mpi_communicator comm;
  EXPECT_TRUE(comm.all_ok(true));
  EXPECT_FALSE(comm.all_ok(comm.rank() != comm.size() - 1));
  EXPECT_FALSE(comm.all_ok(comm.rank() != 0));
  EXPECT_FALSE(comm.all_ok(false));
}

TEST(mpi_communicator, allreduce_and_allgather_combine_every_rank_value) {
  mpi_communicator comm;
  auto const ranks = static_cast<std::uint64_t>(comm.size());
  auto const value = [](std::uint64_t rank) { return (rank * 3 + 1) << 33; };  // above 32 bits
  auto const mine = value(static_cast<std::uint64_t>(comm.rank()));

  std::uint64_t sum = 0;
  for (std::uint64_t p = 0; p < ranks; ++p) sum += value(p);
  EXPECT_EQ(comm.allreduce_sum(mine), sum);
  EXPECT_EQ(comm.allreduce_max(mine), value(ranks - 1));
  EXPECT_EQ(comm.allreduce_min(mine), value(0));

  auto const all = comm.allgather(mine);
  ASSERT_EQ(all.size(), ranks);
  for (std::uint64_t p = 0; p < ranks; ++p) EXPECT_EQ(all[p], value(p)) << "rank " << p;
}

TEST(mpi_communicator, exchange_counts_transposes_the_count_matrix) {
  mpi_communicator comm;
  auto const me = static_cast<std::uint64_t>(comm.rank());
  auto const ranks = static_cast<std::uint64_t>(comm.size());
  // Rank r sends 1000 * r + p + 2^40 to rank p.
  std::vector<std::uint64_t> send_counts;
  for (std::uint64_t p = 0; p < ranks; ++p) send_counts.push_back(1000 * me + p + (1ULL << 40));

  auto const recv_counts = comm.exchange_counts(send_counts);
  ASSERT_EQ(recv_counts.size(), ranks);
  for (std::uint64_t p = 0; p < ranks; ++p) {
    EXPECT_EQ(recv_counts[p], 1000 * p + me + (1ULL << 40)) << "from rank " << p;
  }
}

TEST(mpi_communicator, exchange_counts_with_bad_arguments_throws_on_every_rank) {
  mpi_communicator comm;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(comm.size()), 1);
  std::vector<std::uint64_t> one_short(counts.size() - 1, 1);
  bool const last = comm.rank() == comm.size() - 1;
  EXPECT_ZS_ERROR(comm.exchange_counts(last ? std::span<const std::uint64_t>(one_short) : counts),
                  error_code::invalid_argument);

  auto reserved = counts;
  if (comm.rank() == 0) reserved.back() = UINT64_MAX;
  EXPECT_ZS_ERROR(comm.exchange_counts(reserved), error_code::invalid_argument);

  EXPECT_EQ(comm.exchange_counts(counts), counts);
}

TEST(mpi_communicator, the_error_message_names_the_ranks_that_disagree) {
  mpi_communicator comm;
  auto const ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::uint64_t> send_counts(ranks, 0);
  std::vector<std::uint64_t> recv_counts(ranks, 0);
  std::vector<std::byte> recv;
  if (comm.rank() == 0) {  // expects a byte from rank 0 that nobody sends
    recv_counts[0] = 1;
    recv.resize(1);
  }
  try {
    comm.alltoallv({}, send_counts, recv, recv_counts);
    ADD_FAILURE() << "no error";
  } catch (const zs::error& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("reported by rank(s) 0;"), std::string::npos) << what;
    if (comm.rank() == 0) {
      EXPECT_NE(what.find("recv_counts[0] expects 1 bytes from rank 0, which sends 0"),
                std::string::npos)
          << what;
    } else {
      EXPECT_NE(what.find("this rank's own arguments are consistent"), std::string::npos) << what;
    }
  }
}

TEST(mpi_communicator, point_to_point_checks_peer_tag_and_self_receives_locally) {
  mpi_communicator comm;
  std::vector<std::byte> bytes(4);
  EXPECT_ZS_ERROR(comm.send(bytes, comm.size(), 0), error_code::invalid_argument);
  EXPECT_ZS_ERROR(comm.send(bytes, -1, 0), error_code::invalid_argument);
  EXPECT_ZS_ERROR(comm.recv(bytes, comm.size(), 0), error_code::invalid_argument);
  EXPECT_ZS_ERROR(comm.send(bytes, comm.rank(), -1), error_code::invalid_argument);
  EXPECT_ZS_ERROR(comm.send(bytes, comm.rank(), zs::communicator::max_tag + 1),
                  error_code::invalid_argument);
  // Nothing was sent to this rank under tag 3: the receive could never complete.
  EXPECT_ZS_ERROR(comm.recv(bytes, comm.rank(), 3), error_code::invalid_argument);

  // Messages to self keep their order per tag and are independent between tags.
  std::vector<std::byte> const a{std::byte{1}, std::byte{2}};
  std::vector<std::byte> const b{std::byte{3}};
  std::vector<std::byte> const c{std::byte{4}, std::byte{5}, std::byte{6}};
  comm.send(a, comm.rank(), zs::communicator::max_tag);
  comm.send(b, comm.rank(), zs::communicator::max_tag);
  comm.send(c, comm.rank(), 0);
  std::vector<std::byte> got_c(3), got_a(2), wrong(5), got_b(1);
  comm.recv(got_c, comm.rank(), 0);
  comm.recv(got_a, comm.rank(), zs::communicator::max_tag);
  EXPECT_ZS_ERROR(comm.recv(wrong, comm.rank(), zs::communicator::max_tag),
                  error_code::size_mismatch);  // b was consumed by the failed receive
  EXPECT_ZS_ERROR(comm.recv(got_b, comm.rank(), zs::communicator::max_tag),
                  error_code::invalid_argument);
  EXPECT_EQ(got_a, a);
  EXPECT_EQ(got_c, c);
}

TEST(mpi_communicator, options_must_be_valid_and_equal_on_every_rank) {
  EXPECT_ZS_ERROR(mpi_communicator(MPI_COMM_WORLD, zs::mpi_communicator_options{0}),
                  error_code::invalid_argument);
  EXPECT_ZS_ERROR(mpi_communicator(MPI_COMM_WORLD,
                                   zs::mpi_communicator_options{std::uint64_t{INT_MAX} + 1}),
                  error_code::invalid_argument);
  mpi_communicator largest(MPI_COMM_WORLD, zs::mpi_communicator_options{INT_MAX});
  EXPECT_EQ(largest.max_message_bytes(), std::uint64_t{INT_MAX});

  int ranks = 1;
  int me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (ranks > 1) {
    std::uint64_t const limit = me == ranks - 1 ? 4096 : 8192;
    EXPECT_ZS_ERROR(mpi_communicator(MPI_COMM_WORLD, zs::mpi_communicator_options{limit}),
                    error_code::invalid_argument);
  }
}

TEST(mpi_communicator, works_on_a_sub_communicator) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm halves = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &halves), MPI_SUCCESS);
  {
    mpi_communicator comm(halves);
    int half_size = 0;
    MPI_Comm_size(halves, &half_size);
    EXPECT_EQ(comm.size(), half_size);
    EXPECT_EQ(comm.rank(), me / 2);
    // The sum of world ranks within each half.
    std::uint64_t expected = 0;
    for (int p = me % 2; p < me % 2 + 2 * half_size; p += 2) expected += static_cast<std::uint64_t>(p);
    EXPECT_EQ(comm.allreduce_sum(static_cast<std::uint64_t>(me)), expected);
  }
  MPI_Comm_free(&halves);
}

TEST(mpi_communicator, moves_keep_it_working_and_free_the_duplicate_once) {
  mpi_communicator first;
  mpi_communicator second(std::move(first));
  EXPECT_EQ(first.get(), MPI_COMM_NULL);
  auto const expected = static_cast<std::uint64_t>(second.size());
  EXPECT_EQ(second.allreduce_sum(1), expected);

  mpi_communicator third(MPI_COMM_WORLD, zs::mpi_communicator_options{16});
  third = std::move(second);
  EXPECT_EQ(third.max_message_bytes(), default_limit);
  EXPECT_EQ(third.allreduce_sum(1), expected);
}

// Transfers above 2^31 bytes, through the default 1 GiB limit. Needs about 4.3 GB of memory per
// rank, so it runs only when asked for.
TEST(mpi_communicator, transfers_above_two_gib) {
  if (const char* large = std::getenv("ZS_TEST_LARGE"); large == nullptr || std::string(large) != "1") {
    GTEST_SKIP() << "needs about 4.3 GB of memory per rank; set ZS_TEST_LARGE=1 to run it";
  }
  mpi_communicator comm;
  int const me = comm.rank();
  int const ranks = comm.size();
  int const next = (me + 1) % ranks;
  int const previous = (me + ranks - 1) % ranks;
  auto const sizes = [ranks](int from, int to) -> std::uint64_t {
    return to == (from + 1) % ranks ? (1ULL << 31) + 4096 + static_cast<std::uint64_t>(from) : 0;
  };
  auto const out = make_send(me, ranks, sizes);
  auto in = make_recv(me, ranks, sizes);
  comm.alltoallv(out.bytes, out.counts, in.bytes, in.counts);
  expect_blocks(in, me);

  // The same bytes around the ring with send/recv.
  std::span<const std::byte> const to_next(
      out.bytes.data() +
          std::accumulate(out.counts.begin(), out.counts.begin() + next, std::uint64_t{0}),
      sizes(me, next));
  std::fill(in.bytes.begin(), in.bytes.end(), std::byte{0xEE});
  std::span<std::byte> const from_previous(
      in.bytes.data() +
          std::accumulate(in.counts.begin(), in.counts.begin() + previous, std::uint64_t{0}),
      sizes(previous, me));
  if (me % 2 == 0) {
    comm.send(to_next, next, 1);
    comm.recv(from_previous, previous, 1);
  } else {
    comm.recv(from_previous, previous, 1);
    comm.send(to_next, next, 1);
  }
  expect_blocks(in, me);
}

}  // namespace
