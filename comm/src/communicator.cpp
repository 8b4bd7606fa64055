#include "zs/comm/communicator.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "link_bandwidth.hpp"
#include "zs/error.hpp"

namespace zs {
namespace {

// A count no caller can mean (no buffer holds 2^64 - 1 bytes). A rank whose own arguments are
// unusable still takes part in the count exchange and sends this instead, so its peers learn
// about the problem in the same round instead of waiting for data that never comes.
constexpr std::uint64_t poison = std::numeric_limits<std::uint64_t>::max();

// Severity of what a rank found in its own arguments; the verdict of a collective is the worst
// over all ranks, so every rank throws the same code.
enum class severity : std::uint64_t { ok = 0, size_mismatch = 1, invalid_argument = 2 };

// Layout of the word each rank contributes to the agreement round.
constexpr std::uint64_t severity_mask = 0xff;
constexpr std::uint64_t fits_bit = std::uint64_t{1} << 8;

// Mismatches listed by name in a message; a badly wrong call on many ranks would otherwise make
// a message of megabytes.
constexpr int max_listed = 4;

class findings {
 public:
  void add(severity level, const std::string& text) {
    if (level > level_) level_ = level;
    if (listed_ < max_listed) {
      if (!text_.empty()) text_ += "; ";
      text_ += text;
    } else if (listed_ == max_listed) {
      text_ += "; ...";
    }
    ++listed_;
  }
  severity level() const noexcept { return level_; }
  const std::string& text() const noexcept { return text_; }

 private:
  severity level_ = severity::ok;
  std::string text_;
  int listed_ = 0;
};

std::optional<std::uint64_t> checked_sum(std::span<const std::uint64_t> counts) {
  std::uint64_t total = 0;
  for (std::uint64_t const count : counts) {
    if (count > std::numeric_limits<std::uint64_t>::max() - total) return std::nullopt;
    total += count;
  }
  return total;
}

std::string describe_sum(std::optional<std::uint64_t> total) {
  return total ? std::to_string(*total) : std::string("more than 2^64");
}

void check_packed(findings& found, const char* buffer_name, std::size_t buffer_size,
                  const char* counts_name, std::optional<std::uint64_t> total) {
  if (!total || *total != buffer_size) {
    found.add(severity::invalid_argument, std::string(buffer_name) + " holds " +
                                              std::to_string(buffer_size) + " bytes but " +
                                              counts_name + " add up to " + describe_sum(total));
  }
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == max_listed) {
      text += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

// The agreement round: every rank contributes its severity (and a flag for the backend), every
// rank computes the same verdict from the same words, and all of them throw or none does.
struct verdict {
  bool every_rank_fits = true;
};

template <typename Allgather>
verdict agree(const char* operation, const findings& local, bool fits, int size,
              Allgather&& allgather) {
  std::uint64_t const word = static_cast<std::uint64_t>(local.level()) | (fits ? fits_bit : 0);
  std::vector<std::uint64_t> words(static_cast<std::size_t>(size));
  allgather(std::span<const std::uint64_t>(&word, 1), std::span<std::uint64_t>(words));

  verdict result;
  auto worst = severity::ok;
  std::vector<int> reporting;
  for (int p = 0; p < size; ++p) {
    auto const level = static_cast<severity>(words[static_cast<std::size_t>(p)] & severity_mask);
    if (level != severity::ok) reporting.push_back(p);
    if (level > worst) worst = level;
    if ((words[static_cast<std::size_t>(p)] & fits_bit) == 0) result.every_rank_fits = false;
  }
  if (worst == severity::ok) return result;

  error_code const code =
      worst == severity::invalid_argument ? error_code::invalid_argument : error_code::size_mismatch;
  std::string message = std::string(operation) +
                        (worst == severity::invalid_argument ? ": invalid arguments"
                                                             : ": ranks disagree on sizes") +
                        ", reported by rank(s) " + rank_list(reporting) + "; ";
  message += local.level() == severity::ok ? "this rank's own arguments are consistent"
                                           : "on this rank: " + local.text();
  ZS_FAIL(code, message);
}

}  // namespace

std::chrono::milliseconds timeout_from_environment() {
  const char* text = std::getenv("ZS_TIMEOUT");
  if (text == nullptr || *text == '\0') return communicator::default_timeout;
  std::string_view const value(text);
  std::uint64_t seconds = 0;
  auto const [end, status] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  // from_chars takes no sign, space or prefix; a value must be digits only and count in
  // milliseconds without overflow.
  constexpr std::uint64_t most_seconds = std::numeric_limits<std::int64_t>::max() / 1000;
  if (status != std::errc() || end != value.data() + value.size() || seconds > most_seconds) {
    ZS_FAIL(error_code::invalid_argument, "ZS_TIMEOUT='" + std::string(value) +
                                              "': expected a whole number of seconds (0 waits forever)");
  }
  return std::chrono::seconds(seconds);
}

communicator::communicator() : timeout_(timeout_from_environment()) {}

void communicator::set_timeout(std::chrono::milliseconds timeout) {
  ZS_EXPECTS(timeout.count() >= 0, "a timeout of 0 (none) or more, not " + std::to_string(timeout.count()) + " ms");
  timeout_ = timeout;
}

void communicator::alltoallv(std::span<const std::byte> send,
                             std::span<const std::uint64_t> send_counts,
                             std::span<std::byte> recv,
                             std::span<const std::uint64_t> recv_counts) {
  int const group = size();
  auto const peers = static_cast<std::size_t>(group);
  findings found;

  bool const lengths_ok = send_counts.size() == peers && recv_counts.size() == peers;
  if (!lengths_ok) {
    found.add(severity::invalid_argument,
              "send_counts has " + std::to_string(send_counts.size()) + " entries and recv_counts " +
                  std::to_string(recv_counts.size()) + ", expected one per rank (" +
                  std::to_string(group) + ")");
  }
  std::vector<std::uint64_t> outgoing(peers, poison);
  if (lengths_ok) outgoing.assign(send_counts.begin(), send_counts.end());
  std::vector<std::uint64_t> incoming(peers);
  do_alltoall_u64(outgoing, incoming);

  bool fits = false;
  if (lengths_ok) {
    auto const send_total = checked_sum(send_counts);
    auto const recv_total = checked_sum(recv_counts);
    check_packed(found, "send", send.size(), "send_counts", send_total);
    check_packed(found, "recv", recv.size(), "recv_counts", recv_total);
    for (std::size_t p = 0; p < peers; ++p) {
      // A poisoned count comes from a rank with bad arguments; it reports that itself.
      if (incoming[p] == poison || incoming[p] == recv_counts[p]) continue;
      found.add(severity::size_mismatch,
                "recv_counts[" + std::to_string(p) + "] expects " + std::to_string(recv_counts[p]) +
                    " bytes from rank " + std::to_string(p) + ", which sends " +
                    std::to_string(incoming[p]));
    }
    fits = send_total && recv_total && *send_total <= max_message_bytes() &&
           *recv_total <= max_message_bytes();
  }

  auto const agreed =
      agree("zs::communicator::alltoallv", found, fits, group,
            [this](std::span<const std::uint64_t> mine, std::span<std::uint64_t> all) {
              do_allgather_u64(mine, all);
            });
  do_alltoallv(send, send_counts, recv, recv_counts, agreed.every_rank_fits);
}

void communicator::allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                              std::span<const std::uint64_t> recv_counts) {
  int const group = size();
  auto const peers = static_cast<std::size_t>(group);
  findings found;

  std::uint64_t const mine = send.size();
  std::vector<std::uint64_t> sizes(peers);
  do_allgather_u64(std::span<const std::uint64_t>(&mine, 1), sizes);

  if (recv_counts.size() != peers) {
    found.add(severity::invalid_argument, "recv_counts has " + std::to_string(recv_counts.size()) +
                                              " entries, expected one per rank (" +
                                              std::to_string(group) + ")");
  } else {
    check_packed(found, "recv", recv.size(), "recv_counts", checked_sum(recv_counts));
    for (std::size_t p = 0; p < peers; ++p) {
      if (sizes[p] == recv_counts[p]) continue;
      found.add(severity::size_mismatch,
                "recv_counts[" + std::to_string(p) + "] expects " + std::to_string(recv_counts[p]) +
                    " bytes from rank " + std::to_string(p) + ", which sends " +
                    std::to_string(sizes[p]));
    }
  }

  agree("zs::communicator::allgatherv", found, false, group,
        [this](std::span<const std::uint64_t> words, std::span<std::uint64_t> all) {
          do_allgather_u64(words, all);
        });
  do_allgatherv(send, recv, recv_counts);
}

void communicator::bcast(std::span<std::byte> buffer, int root) {
  int const group = size();
  auto const peers = static_cast<std::size_t>(group);

  // One round is enough here: every rank sees every rank's (size, root) and reaches the same
  // verdict on its own.
  std::uint64_t const mine[2] = {buffer.size(),
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(root))};
  std::vector<std::uint64_t> all(2 * peers);
  do_allgather_u64(mine, all);

  auto const root_of = [&](std::size_t p) {
    return static_cast<std::int64_t>(all[2 * p + 1]);
  };
  auto const size_of = [&](std::size_t p) { return all[2 * p]; };

  for (std::size_t p = 0; p < peers; ++p) {
    if (root_of(p) < 0 || root_of(p) >= group || root_of(p) != root_of(0)) {
      std::string message = "zs::communicator::bcast: invalid arguments: the ranks must name one "
                            "root in [0, " + std::to_string(group) + "); rank 0 names " +
                            std::to_string(root_of(0)) + ", rank " + std::to_string(p) +
                            " names " + std::to_string(root_of(p));
      ZS_FAIL(error_code::invalid_argument, message);
    }
  }
  auto const root_index = static_cast<std::size_t>(root);
  for (std::size_t p = 0; p < peers; ++p) {
    if (size_of(p) != size_of(root_index)) {
      std::string message = "zs::communicator::bcast: ranks disagree on sizes: root " +
                            std::to_string(root) + " broadcasts " +
                            std::to_string(size_of(root_index)) + " bytes, rank " +
                            std::to_string(p) + " expects " + std::to_string(size_of(p));
      ZS_FAIL(error_code::size_mismatch, message);
    }
  }
  do_bcast(buffer, root);
}

void communicator::send(std::span<const std::byte> bytes, int peer, int tag) {
  ZS_EXPECTS(peer >= 0 && peer < size(), "send: peer " + std::to_string(peer) + " of " +
                                             std::to_string(size()) + " ranks");
  ZS_EXPECTS(tag >= 0 && tag <= max_tag, "send: tag " + std::to_string(tag));
  do_send(bytes, peer, tag);
}

void communicator::recv(std::span<std::byte> bytes, int peer, int tag) {
  ZS_EXPECTS(peer >= 0 && peer < size(), "recv: peer " + std::to_string(peer) + " of " +
                                             std::to_string(size()) + " ranks");
  ZS_EXPECTS(tag >= 0 && tag <= max_tag, "recv: tag " + std::to_string(tag));
  do_recv(bytes, peer, tag);
}

bool communicator::all_ok(bool local_ok) {
  return do_allreduce_u64(local_ok ? 1 : 0, reduce_op::min) == 1;
}

std::uint64_t communicator::allreduce_max(std::uint64_t value) {
  return do_allreduce_u64(value, reduce_op::max);
}

std::uint64_t communicator::allreduce_min(std::uint64_t value) {
  return do_allreduce_u64(value, reduce_op::min);
}

std::uint64_t communicator::allreduce_sum(std::uint64_t value) {
  return do_allreduce_u64(value, reduce_op::sum);
}

std::vector<std::uint64_t> communicator::allgather(std::uint64_t value) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(size()));
  do_allgather_u64(std::span<const std::uint64_t>(&value, 1), all);
  return all;
}

std::vector<std::uint64_t> communicator::exchange_counts(
    std::span<const std::uint64_t> send_counts) {
  int const group = size();
  auto const peers = static_cast<std::size_t>(group);

  std::string local_problem;
  if (send_counts.size() != peers) {
    local_problem = "send_counts has " + std::to_string(send_counts.size()) +
                    " entries, expected one per rank (" + std::to_string(group) + ")";
  } else {
    for (std::size_t p = 0; p < peers; ++p) {
      if (send_counts[p] == poison) {
        local_problem = "send_counts[" + std::to_string(p) + "] is UINT64_MAX";
        break;
      }
    }
  }
  std::vector<std::uint64_t> outgoing(peers, poison);
  if (local_problem.empty()) outgoing.assign(send_counts.begin(), send_counts.end());
  std::vector<std::uint64_t> incoming(peers);
  do_alltoall_u64(outgoing, incoming);

  // A rank with bad arguments poisons every count it sends, so every rank sees the same set of
  // bad ranks and all of them throw.
  std::vector<int> bad;
  for (std::size_t p = 0; p < peers; ++p) {
    if (incoming[p] == poison) bad.push_back(static_cast<int>(p));
  }
  if (!bad.empty()) {
    std::string message = "zs::communicator::exchange_counts: invalid arguments, reported by "
                          "rank(s) " + rank_list(bad) + "; ";
    message += local_problem.empty() ? "this rank's own arguments are consistent"
                                     : "on this rank: " + local_problem;
    ZS_FAIL(error_code::invalid_argument, message);
  }
  return incoming;
}

const std::vector<double>& communicator::link_bandwidth() {
  if (!link_bps_.empty()) return link_bps_;
  constexpr std::uint64_t probe = std::uint64_t{256} << 10, largest = std::uint64_t{16} << 20;
  auto const ranks = static_cast<std::size_t>(size());
  std::vector<std::byte> out(largest), in(largest);
  link_bps_ = detail::measure_links(*this, probe, largest, 2e-3, [&](int to, int from, std::uint64_t bytes) {
    std::vector<std::uint64_t> send_counts(ranks, 0), recv_counts(ranks, 0);
    send_counts[static_cast<std::size_t>(to)] = bytes;
    recv_counts[static_cast<std::size_t>(from)] = bytes;
    alltoallv(std::span(out).first(bytes), send_counts, std::span(in).first(bytes), recv_counts);
  });
  return link_bps_;
}

void communicator::set_link_bandwidth(std::vector<double> bytes_per_second) {
  link_bps_ = detail::checked_link_bandwidth(std::move(bytes_per_second), size());
}

}  // namespace zs
