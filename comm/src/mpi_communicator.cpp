#include "zs/comm/mpi_communicator.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "mpi_requests.hpp"
#include "zs/comm/error.hpp"
#include "zs/log.hpp"

namespace zs {
namespace {

using detail::peer_wait;
using detail::request_list;
using detail::wait_for_peers;

// The tag of the point-to-point messages inside collectives; send/recv tags stop below it.
constexpr int collective_tag = communicator::max_tag + 1;

bool mpi_is_running() {
  int initialized = 0;
  int finalized = 0;
  ZS_MPI_TRY(MPI_Initialized(&initialized));
  ZS_MPI_TRY(MPI_Finalized(&finalized));
  return initialized != 0 && finalized == 0;
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "thread level " + std::to_string(level);
  }
}

// Byte offset of each block in a buffer packed in rank order.
std::vector<std::uint64_t> block_offsets(std::span<const std::uint64_t> counts) {
  std::vector<std::uint64_t> offsets(counts.size());
  std::uint64_t offset = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    offsets[p] = offset;
    offset += counts[p];
  }
  return offsets;
}

// Counts and displacements as MPI's ints; only called when the caller made sure they fit.
std::vector<int> as_ints(std::span<const std::uint64_t> values) {
  std::vector<int> result(values.size());
  std::transform(values.begin(), values.end(), result.begin(),
                 [](std::uint64_t value) { return static_cast<int>(value); });
  return result;
}

void copy_bytes(std::byte* to, const std::byte* from, std::uint64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, bytes);
}

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::string_view const value(text);
  int result = 0;
  auto const [end, status] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (status != std::errc() || end != value.data() + value.size() || result < 0) {
    ZS_FAIL(error_code::invalid_argument, std::string(name) + "=" + text +
                                              " is not a non-negative integer");
  }
  return result;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// mpi_environment

mpi_environment::mpi_environment(int* argc, char*** argv, int required_level) {
  int finalized = 0;
  int initialized = 0;
  ZS_MPI_TRY(MPI_Finalized(&finalized));
  if (finalized) ZS_FAIL(error_code::mpi_error, "MPI was finalized and cannot start again");
  ZS_MPI_TRY(MPI_Initialized(&initialized));
  if (initialized) {
    ZS_MPI_TRY(MPI_Query_thread(&provided_));
  } else {
    ZS_MPI_TRY(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_));
    owns_ = true;
  }
  if (provided_ < required_level) {
    if (owns_) {
      ZS_MPI_TRY_NOTHROW(MPI_Finalize());
      owns_ = false;
    }
    ZS_FAIL(error_code::mpi_error, "MPI provides " + thread_level_name(provided_) +
                                       ", below the required " +
                                       thread_level_name(required_level));
  }
}

mpi_environment::~mpi_environment() {
  if (!owns_) return;
  int finalized = 0;
  ZS_MPI_TRY_NOTHROW(MPI_Finalized(&finalized));
  if (!finalized) ZS_MPI_TRY_NOTHROW(MPI_Finalize());
}

// ---------------------------------------------------------------------------------------------
// Facts about the library

std::string mpi_library_version() {
  char buffer[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  ZS_MPI_TRY(MPI_Get_library_version(buffer, &length));
  std::string text(buffer, static_cast<std::size_t>(std::max(length, 0)));
  text = text.substr(0, text.find('\n'));
  // Some libraries count the terminating NUL in `length`, and most end lines with separators.
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r' || text.back() == ',')) {
    text.pop_back();
  }
  return text;
}

std::string_view to_string(cuda_awareness value) noexcept {
  switch (value) {
    case cuda_awareness::yes: return "yes";
    case cuda_awareness::no: return "no";
    case cuda_awareness::unknown: return "unknown";
  }
  return "unknown";
}

mpi_cuda_support mpi_cuda_aware() {
  if (const char* text = std::getenv("ZS_MPI_CUDA_AWARE"); text != nullptr && *text != '\0') {
    std::string_view const value(text);
    if (value == "1") return {cuda_awareness::yes, "ZS_MPI_CUDA_AWARE=1"};
    if (value == "0") return {cuda_awareness::no, "ZS_MPI_CUDA_AWARE=0"};
    ZS_FAIL(error_code::invalid_argument,
            "ZS_MPI_CUDA_AWARE=" + std::string(value) + ": expected 0 or 1");
  }
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (!mpi_is_running()) {
    return {cuda_awareness::unknown,
            "the MPI library was built with CUDA support; whether it is enabled is known only "
            "while MPI is initialized"};
  }
  if (MPIX_Query_cuda_support() == 1) {
    return {cuda_awareness::yes, "MPIX_Query_cuda_support() = 1"};
  }
  return {cuda_awareness::no,
          "MPIX_Query_cuda_support() = 0: built with CUDA support, not enabled in this run"};
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return {cuda_awareness::no, "the MPI library was built without CUDA support "
                              "(MPIX_CUDA_AWARE_SUPPORT = 0 in mpi-ext.h)"};
#else
  return {cuda_awareness::unknown,
          "the MPI library offers no CUDA-awareness query; set ZS_MPI_CUDA_AWARE=0 or 1"};
#endif
}

int local_rank(MPI_Comm comm) {
  if (auto const value = env_int("OMPI_COMM_WORLD_LOCAL_RANK")) return *value;
  if (auto const value = env_int("SLURM_LOCALID")) return *value;
  ZS_EXPECTS(mpi_is_running(), "local_rank needs MPI to be initialized");
  int rank = 0;
  ZS_MPI_TRY(MPI_Comm_rank(comm, &rank));
  MPI_Comm node = MPI_COMM_NULL;
  ZS_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int node_rank = 0;
  int const status = MPI_Comm_rank(node, &node_rank);
  ZS_MPI_TRY_NOTHROW(MPI_Comm_free(&node));
  ZS_MPI_TRY(status);
  return node_rank;
}

int device_for_rank(int device_count, MPI_Comm comm) {
  ZS_EXPECTS(device_count > 0, "at least one device");
  int const local = local_rank(comm);
  const char* list = std::getenv("ZS_DEVICES");
  if (list == nullptr || *list == '\0') return local % device_count;
  std::vector<int> ordinals;
  std::string const text(list);
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t const comma = std::min(text.find(',', start), text.size());
    std::string const item = text.substr(start, comma - start);
    std::size_t used = 0;
    int ordinal = -1;
    try {
      ordinal = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || ordinal < 0 || ordinal >= device_count) {
      ZS_FAIL(error_code::invalid_argument, "ZS_DEVICES='" + text + "': '" + item + "' is not a device ordinal below " +
                                                std::to_string(device_count));
    }
    ordinals.push_back(ordinal);
    start = comma + 1;
  }
  return ordinals[static_cast<std::size_t>(local) % ordinals.size()];
}

// ---------------------------------------------------------------------------------------------
// mpi_communicator

mpi_communicator::mpi_communicator(MPI_Comm comm, mpi_communicator_options options)
    : communicator(default_timeout) {
  ZS_EXPECTS(mpi_is_running(), "an mpi_communicator needs MPI to be initialized");
  // ZS_TIMEOUT is read here rather than by the base class, so that a malformed value on one
  // rank fails every rank in the agreement below instead of leaving the others waiting.
  std::string timeout_problem;
  try {
    set_timeout(timeout_from_environment());
  } catch (const error& e) {
    timeout_problem = e.what();
  }
  ZS_MPI_TRY(MPI_Comm_rank(comm, &rank_));
  MPI_Request duplicated = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Comm_idup(comm, &comm_, &duplicated));
  wait_for_peers(std::span(&duplicated, 1), {timeout(), rank_, "zs::mpi_communicator (duplicating the communicator)"});
  try {
    ZS_MPI_TRY(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    ZS_MPI_TRY(MPI_Comm_rank(comm_, &rank_));
    ZS_MPI_TRY(MPI_Comm_size(comm_, &size_));

    void* attribute = nullptr;
    int found = 0;
    // MPI_TAG_UB is a predefined attribute of MPI_COMM_WORLD only; it holds for every
    // communicator.
    ZS_MPI_TRY(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attribute, &found));
    if (!found || *static_cast<int*>(attribute) < collective_tag) {
      ZS_FAIL(error_code::mpi_error, "the MPI library offers fewer tags than the standard's 32767");
    }

    // Both ends of a message must cut it into the same pieces, so every rank must use the same
    // limit. One all-reduce gives the largest value and (through UINT64_MAX - value) the
    // smallest, and every rank judges them the same way; its third word is the highest rank
    // (plus one) whose ZS_TIMEOUT is malformed.
    std::uint64_t const requested = options.max_message_bytes;
    std::uint64_t const local[3] = {requested, std::numeric_limits<std::uint64_t>::max() - requested,
                                    timeout_problem.empty() ? 0 : static_cast<std::uint64_t>(rank_) + 1};
    std::uint64_t global[3] = {0, 0, 0};
    MPI_Request agreed = MPI_REQUEST_NULL;
    ZS_MPI_TRY(MPI_Iallreduce(local, global, 3, MPI_UINT64_T, MPI_MAX, comm_, &agreed));
    wait_for_peers(std::span(&agreed, 1), {timeout(), rank_, "zs::mpi_communicator (agreeing on its options)"});
    if (global[2] != 0) {
      ZS_FAIL(error_code::invalid_argument,
              "ZS_TIMEOUT is malformed on rank " + std::to_string(global[2] - 1) +
                  (timeout_problem.empty() ? std::string() : " (on this rank: " + timeout_problem + ")"));
    }
    std::uint64_t const largest = global[0];
    std::uint64_t const smallest = std::numeric_limits<std::uint64_t>::max() - global[1];
    if (smallest == 0 || largest > static_cast<std::uint64_t>(INT_MAX) || smallest != largest) {
      ZS_FAIL(error_code::invalid_argument,
              "mpi_communicator_options::max_message_bytes must be in [1, INT_MAX] and the same "
              "on every rank; the ranks give values from " +
                  std::to_string(smallest) + " to " + std::to_string(largest));
    }
    max_message_bytes_ = requested;
  } catch (...) {
    release();
    throw;
  }
}

mpi_communicator::~mpi_communicator() { release(); }

mpi_communicator::mpi_communicator(mpi_communicator&& other) noexcept
    : communicator(std::move(other)),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      size_(other.size_),
      max_message_bytes_(other.max_message_bytes_),
      to_self_(std::move(other.to_self_)) {}

mpi_communicator& mpi_communicator::operator=(mpi_communicator&& other) noexcept {
  if (this != &other) {
    release();
    communicator::operator=(std::move(other));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    max_message_bytes_ = other.max_message_bytes_;
    to_self_ = std::move(other.to_self_);
  }
  return *this;
}

void mpi_communicator::release() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  ZS_MPI_TRY_NOTHROW(MPI_Finalized(&finalized));
  if (finalized) {
    log::error("an mpi_communicator outlived MPI_Finalize; destroy communicators before the mpi_environment");
  } else {
    ZS_MPI_TRY_NOTHROW(MPI_Comm_free(&comm_));
  }
  comm_ = MPI_COMM_NULL;
}

// Every primitive below posts nonblocking calls and completes them through wait_for_peers,
// which bounds the wait by timeout().

void mpi_communicator::complete(MPI_Request request, std::string_view operation) {
  wait_for_peers(std::span(&request, 1), {timeout(), rank_, operation});
}

bool mpi_communicator::callable_from_any_thread() const noexcept {
  int provided = MPI_THREAD_SINGLE;
  return MPI_Query_thread(&provided) == MPI_SUCCESS && provided >= MPI_THREAD_SERIALIZED;
}

void mpi_communicator::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Ibarrier(comm_, &request));
  complete(request, "zs::communicator::barrier");
}

void mpi_communicator::do_alltoall_u64(std::span<const std::uint64_t> send,
                                       std::span<std::uint64_t> recv) {
  MPI_Request request = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Ialltoall(send.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, comm_, &request));
  complete(request, "zs::communicator (an all-to-all of counts)");
}

void mpi_communicator::do_allgather_u64(std::span<const std::uint64_t> mine,
                                        std::span<std::uint64_t> all) {
  int const count = static_cast<int>(mine.size());
  MPI_Request request = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Iallgather(mine.data(), count, MPI_UINT64_T, all.data(), count, MPI_UINT64_T, comm_, &request));
  complete(request, "zs::communicator::allgather");
}

std::uint64_t mpi_communicator::do_allreduce_u64(std::uint64_t value, reduce_op op) {
  MPI_Op mpi_op = MPI_SUM;
  switch (op) {
    case reduce_op::max: mpi_op = MPI_MAX; break;
    case reduce_op::min: mpi_op = MPI_MIN; break;
    case reduce_op::sum: mpi_op = MPI_SUM; break;
  }
  std::uint64_t result = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  ZS_MPI_TRY(MPI_Iallreduce(&value, &result, 1, MPI_UINT64_T, mpi_op, comm_, &request));
  complete(request, "zs::communicator::allreduce");
  return result;
}

void mpi_communicator::do_alltoallv(std::span<const std::byte> send,
                                    std::span<const std::uint64_t> send_counts,
                                    std::span<std::byte> recv,
                                    std::span<const std::uint64_t> recv_counts,
                                    bool every_rank_fits_one_message) {
  auto const send_offsets = block_offsets(send_counts);
  auto const recv_offsets = block_offsets(recv_counts);
  constexpr std::string_view operation = "zs::communicator::alltoallv";

  if (every_rank_fits_one_message) {
    // Every count and offset is at most max_message_bytes <= INT_MAX here.
    auto const sc = as_ints(send_counts);
    auto const sd = as_ints(send_offsets);
    auto const rc = as_ints(recv_counts);
    auto const rd = as_ints(recv_offsets);
    MPI_Request request = MPI_REQUEST_NULL;
    ZS_MPI_TRY(MPI_Ialltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                              MPI_BYTE, comm_, &request));
    complete(request, operation);
    return;
  }

  // Receives first, so that most pieces find a posted buffer; peers in a rotated order, so that
  // not every rank starts by sending to rank 0.
  request_list requests;
  for (int step = 1; step < size_; ++step) {
    auto const from = static_cast<std::size_t>((rank_ - step + size_) % size_);
    requests.recv_pieces(recv.data() + recv_offsets[from], recv_counts[from],
                         static_cast<int>(from), collective_tag, comm_, max_message_bytes_);
  }
  for (int step = 1; step < size_; ++step) {
    auto const to = static_cast<std::size_t>((rank_ + step) % size_);
    requests.send_pieces(send.data() + send_offsets[to], send_counts[to], static_cast<int>(to),
                         collective_tag, comm_, max_message_bytes_);
  }
  auto const self = static_cast<std::size_t>(rank_);
  copy_bytes(recv.data() + recv_offsets[self], send.data() + send_offsets[self],
             send_counts[self]);
  requests.wait_all({timeout(), rank_, operation});
}

void mpi_communicator::do_allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                                     std::span<const std::uint64_t> recv_counts) {
  auto const offsets = block_offsets(recv_counts);
  constexpr std::string_view operation = "zs::communicator::allgatherv";
  // The total is the same on every rank (the counts were agreed), so every rank takes the same
  // path without another round.
  if (recv.size() <= max_message_bytes_) {
    auto const counts = as_ints(recv_counts);
    auto const displacements = as_ints(offsets);
    MPI_Request request = MPI_REQUEST_NULL;
    ZS_MPI_TRY(MPI_Iallgatherv(send.data(), static_cast<int>(send.size()), MPI_BYTE, recv.data(), counts.data(),
                               displacements.data(), MPI_BYTE, comm_, &request));
    complete(request, operation);
    return;
  }

  request_list requests;
  for (int step = 1; step < size_; ++step) {
    auto const from = static_cast<std::size_t>((rank_ - step + size_) % size_);
    requests.recv_pieces(recv.data() + offsets[from], recv_counts[from], static_cast<int>(from),
                         collective_tag, comm_, max_message_bytes_);
  }
  for (int step = 1; step < size_; ++step) {
    requests.send_pieces(send.data(), send.size(), (rank_ + step) % size_, collective_tag, comm_,
                         max_message_bytes_);
  }
  copy_bytes(recv.data() + offsets[static_cast<std::size_t>(rank_)], send.data(), send.size());
  requests.wait_all({timeout(), rank_, operation});
}

void mpi_communicator::do_bcast(std::span<std::byte> buffer, int root) {
  // Every piece is posted at once (nonblocking collectives start in the same order on every
  // rank, which is all MPI asks), then all complete together. Collective requests cannot be
  // cancelled, so a failure to post one ends in mpi_error with the others still running, as
  // the contract of communicator.hpp says.
  std::vector<MPI_Request> requests;
  for (std::uint64_t offset = 0; offset < buffer.size(); offset += max_message_bytes_) {
    int const piece = static_cast<int>(std::min<std::uint64_t>(max_message_bytes_,
                                                               buffer.size() - offset));
    MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
    ZS_MPI_TRY(MPI_Ibcast(buffer.data() + offset, piece, MPI_BYTE, root, comm_, &request));
  }
  wait_for_peers(requests, {timeout(), rank_, "zs::communicator::bcast"});
}

void mpi_communicator::do_send(std::span<const std::byte> bytes, int peer, int tag) {
  if (peer == rank_) {
    to_self_[tag].emplace_back(bytes.begin(), bytes.end());
    return;
  }
  std::uint64_t const header = bytes.size();
  request_list requests;
  requests.send_header(&header, peer, tag, comm_);
  requests.send_pieces(bytes.data(), bytes.size(), peer, tag, comm_, max_message_bytes_);
  requests.wait_all({timeout(), rank_, "zs::communicator::send"});
}

void mpi_communicator::do_recv(std::span<std::byte> bytes, int peer, int tag) {
  constexpr std::string_view operation = "zs::communicator::recv";
  auto const mismatch = [&](std::uint64_t sent) {
    ZS_FAIL(error_code::size_mismatch,
            "recv: rank " + std::to_string(peer) + " sent " + std::to_string(sent) +
                " bytes under tag " + std::to_string(tag) + ", the receive buffer holds " +
                std::to_string(bytes.size()) + " (the message was consumed)");
  };

  if (peer == rank_) {
    auto const queue = to_self_.find(tag);
    ZS_EXPECTS(queue != to_self_.end() && !queue->second.empty(),
               "recv from this rank itself under tag " + std::to_string(tag) +
                   " needs a matching send first");
    std::vector<std::byte> message = std::move(queue->second.front());
    queue->second.pop_front();
    if (queue->second.empty()) to_self_.erase(queue);
    if (message.size() != bytes.size()) mismatch(message.size());
    copy_bytes(bytes.data(), message.data(), message.size());
    return;
  }

  std::uint64_t header = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status;
  ZS_MPI_TRY(MPI_Irecv(&header, 1, MPI_UINT64_T, peer, tag, comm_, &request));
  wait_for_peers(std::span(&request, 1), {timeout(), rank_, operation}, std::span(&status, 1));
  int words = 0;
  ZS_MPI_TRY(MPI_Get_count(&status, MPI_UINT64_T, &words));
  if (words != 1) {
    ZS_FAIL(error_code::size_mismatch, "recv: the message from rank " + std::to_string(peer) +
                                           " under tag " + std::to_string(tag) +
                                           " does not start with a size header");
  }

  if (header != bytes.size()) {
    // Drain the pieces so that the next message under this tag starts cleanly.
    std::vector<std::byte> scratch(std::min<std::uint64_t>(header, max_message_bytes_));
    for (std::uint64_t offset = 0; offset < header; offset += max_message_bytes_) {
      request_list piece;
      piece.recv_pieces(scratch.data(), std::min<std::uint64_t>(max_message_bytes_, header - offset), peer, tag,
                        comm_, max_message_bytes_);
      piece.wait_all({timeout(), rank_, operation});
    }
    mismatch(header);
  }

  request_list requests;
  requests.recv_pieces(bytes.data(), bytes.size(), peer, tag, comm_, max_message_bytes_);
  requests.wait_all({timeout(), rank_, operation});
}

}  // namespace zs
