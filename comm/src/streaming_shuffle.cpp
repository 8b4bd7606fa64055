#include "zs/comm/streaming_shuffle.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "arrow/offset_kernels.hpp"
#include "zs/comm/agreement.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/null_mask.hpp"

namespace zs {

namespace {

constexpr std::string_view operation = "streaming_shuffle";

using clock_type = std::chrono::steady_clock;

double seconds_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

struct row_range {
  column_view source;
  std::uint64_t first = 0, rows = 0;
};

// The first and one-past-last character offsets of each range's rows (string views): on the
// device, every copy is enqueued before one wait.
std::vector<std::pair<std::int64_t, std::int64_t>> char_ranges(std::span<const row_range> ranges, memory_kind memory,
                                                               cudaStream_t stream) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    auto const& r = ranges[i];
    if (memory == memory_kind::host) {
      out[i] = {r.source.offsets[r.first], r.source.offsets[r.first + r.rows]};
    } else {
      ZS_CUDA_TRY(cudaMemcpyAsync(&out[i].first, r.source.offsets + r.first, 8, cudaMemcpyDeviceToHost, stream));
      ZS_CUDA_TRY(cudaMemcpyAsync(&out[i].second, r.source.offsets + r.first + r.rows, 8, cudaMemcpyDeviceToHost,
                                  stream));
    }
  }
  if (memory == memory_kind::device && !ranges.empty()) ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

void copy_bytes(void* to, const void* from, std::uint64_t bytes, memory_kind memory, cudaStream_t stream) {
  if (bytes == 0) return;
  if (memory == memory_kind::host) {
    std::memcpy(to, from, bytes);
  } else {
    ZS_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
  }
}

// Writes offsets[first, first + rows] of `from`, each minus `base`, to `to` (rows + 1 entries).
void rebase(std::int64_t* to, const std::int64_t* from, std::int64_t base, std::uint64_t entries,
            memory_kind memory, cudaStream_t stream) {
  if (memory == memory_kind::host) {
    for (std::uint64_t i = 0; i < entries; ++i) to[i] = from[i] - base;
  } else {
    kernels::arrow::rebase_offsets(from, base, entries, to, stream);
    ZS_CUDA_CHECK_LAUNCH();
  }
}

// Gives `out` the null masks of `ranges` (rows without a mask are valid), when any range has
// one: each range's bits realigned, widened to a byte per row, and packed once for the whole.
void attach_null_masks(column& out, std::span<const row_range> ranges, memory_kind memory, cudaStream_t stream) {
  bool const nullable = std::any_of(ranges.begin(), ranges.end(), [](const row_range& r) {
    return r.source.null_mask != nullptr && r.rows > 0;
  });
  if (!nullable || out.size() == 0) return;
  std::uint64_t const rows = out.size();
  std::uint64_t widest = 0;
  for (auto const& r : ranges) widest = std::max(widest, r.rows);
  std::uint8_t* const mask = out.add_null_mask(stream);
  auto fill = [&](std::uint8_t* valid, std::uint8_t* aligned) {
    std::uint64_t row = 0;
    for (auto const& r : ranges) {
      if (r.rows == 0) continue;
      if (r.source.null_mask == nullptr) {
        if (memory == memory_kind::host) {
          std::memset(valid + row, 1, r.rows);
        } else {
          ZS_CUDA_TRY(cudaMemsetAsync(valid + row, 1, r.rows, stream));
        }
      } else {
        copy_null_mask_bits(r.source.null_mask, r.first, r.rows, aligned, memory, stream);
        expand_null_mask(aligned, r.rows, valid + row, memory, stream);
      }
      row += r.rows;
    }
    pack_null_mask(valid, rows, mask, memory, stream);
  };
  if (memory == memory_kind::host) {
    std::vector<std::uint8_t> valid(rows), aligned(null_mask_bytes(widest));
    fill(valid.data(), aligned.data());
  } else {
    device_buffer valid(rows, stream), aligned(null_mask_bytes(widest), stream);
    fill(valid.as<std::uint8_t>(), aligned.as<std::uint8_t>());
  }
}

using char_range = std::pair<std::int64_t, std::int64_t>;

// One owning column of the rows of `ranges`, one after another (every range of `type`, in
// `memory`; ordered on `stream`); `chars`: each range's char_ranges entry (strings only).
column concatenate(value_type type, std::span<const row_range> ranges, std::span<const char_range> chars,
                   memory_kind memory, cudaStream_t stream) {
  std::uint64_t rows = 0;
  for (auto const& r : ranges) rows += r.rows;
  std::uint64_t chars_total = 0;
  for (auto const& [first, last] : chars) chars_total += static_cast<std::uint64_t>(last - first);
  column out = column::allocate(type, rows, memory, stream, chars_total);
  mutable_column_view const to = out.mutable_view();
  auto* const bytes_to = static_cast<std::byte*>(to.data);
  if (type == value_type::string) {
    if (rows == 0) {
      if (memory == memory_kind::host) {
        to.offsets[0] = 0;
      } else {
        ZS_CUDA_TRY(cudaMemsetAsync(to.offsets, 0, 8, stream));
      }
      return out;
    }
    std::uint64_t row = 0;
    std::int64_t char_base = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      auto const& r = ranges[i];
      if (r.rows == 0) continue;
      auto const* const from = static_cast<const std::byte*>(r.source.data) + chars[i].first;
      copy_bytes(bytes_to + char_base, from, static_cast<std::uint64_t>(chars[i].second - chars[i].first), memory,
                 stream);
      // rows + 1 entries: the last one is the next range's first, written again by it alike.
      rebase(to.offsets + row, r.source.offsets + r.first, chars[i].first - char_base, r.rows + 1, memory, stream);
      row += r.rows;
      char_base += chars[i].second - chars[i].first;
    }
  } else {
    std::uint64_t const width = value_width(type);
    std::uint64_t row = 0;
    for (auto const& r : ranges) {
      copy_bytes(bytes_to + row * width, static_cast<const std::byte*>(r.source.data) + r.first * width,
                 r.rows * width, memory, stream);
      row += r.rows;
    }
  }
  attach_null_masks(out, ranges, memory, stream);
  return out;
}

column concatenate(value_type type, std::span<const row_range> ranges, memory_kind memory, cudaStream_t stream) {
  std::vector<char_range> chars;
  if (type == value_type::string) chars = char_ranges(ranges, memory, stream);
  return concatenate(type, ranges, chars, memory, stream);
}

std::string describe_types(std::span<const value_type> types) {
  std::string out;
  for (std::size_t c = 0; c < types.size(); ++c) out += (c ? ", " : "") + std::string(to_string(types[c]));
  return out;
}

// A 64-bit fingerprint of what every rank must declare alike.
std::uint64_t declaration_fingerprint(std::uint32_t partitions, std::span<const value_type> types) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(partitions);
  mix(types.size());
  for (auto t : types) mix(static_cast<std::uint64_t>(t) + 1);
  return h;
}

}  // namespace

struct streaming_shuffle::impl {
  communicator* host = nullptr;
  device_communicator* device = nullptr;  // null on the CPU path
  cudaStream_t stream = nullptr;  // the caller's
  // The device path's exchanges and store work on a stream of their own, so that an exchange on
  // its own thread runs beside what the caller enqueues meanwhile (the next chunk's copy and
  // partitioning); events order the two streams where data passes between them. Declared
  // before every member whose device memory may be freed on it.
  std::optional<cuda_stream> exchange_stream;
  memory_kind memory = memory_kind::host;
  std::vector<std::string> names;
  std::vector<value_type> types;
  std::uint32_t partitions = 0;
  streaming_shuffle_options options;
  int ranks = 1, rank = 0;

  // Pieces inserted and not yet exchanged (the send side), by partition.
  struct batch {
    std::map<std::uint32_t, std::vector<table>> pieces;
    std::uint64_t bytes = 0, rows = 0;
  };
  batch buffer;  // what insert fills
  // The exchange running on a thread of its own (options.overlap), and the batch it sends: kept
  // until its data has moved, so that a failure before then gives it back to the buffer.
  std::future<void> running;
  std::unique_ptr<batch> sending;

  partition_store store;
  // Each stored piece holds one exchange's rows of its partition, source by source: the rows
  // from each source rank, in store order (a piece per partition per exchange, so that the store
  // moves few large pieces rather than one per source).
  struct source_rows {
    int source = 0;
    std::uint64_t rows = 0;
  };
  std::map<std::uint32_t, std::vector<std::vector<source_rows>>> piece_sources;
  std::vector<bool> extracted;                               // by owned partition index
  bool is_finished = false;
  std::atomic<bool> broken{false};  // set by an exchange, which may run on its own thread
  streaming_shuffle_stats stats;

  impl(communicator& comm, device_communicator* dev, std::vector<std::string> n, std::vector<value_type> t,
       std::uint32_t p, streaming_shuffle_options o, cudaStream_t s)
      : host(&comm),
        device(dev),
        stream(s),
        exchange_stream(dev != nullptr ? std::optional<cuda_stream>(std::in_place) : std::nullopt),
        memory(dev != nullptr ? memory_kind::device : memory_kind::host),
        names(std::move(n)),
        types(std::move(t)),
        partitions(p),
        options(std::move(o)),
        ranks(comm.size()),
        rank(comm.rank()),
        store(partition_store_options{options.budget_bytes, options.policy, options.spill, options.keep_compressed}) {
    std::optional<rank_failure> failure = attempt([&] {
      ZS_EXPECTS(partitions >= 1, "streaming_shuffle: partitions must be at least 1");
      if (names.size() != types.size()) {
        ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: " + std::to_string(names.size()) + " names for " +
                                                  std::to_string(types.size()) + " types");
      }
      ZS_EXPECTS(!types.empty(), "streaming_shuffle: no columns declared");
      ZS_EXPECTS(options.batch_bytes > 0, "streaming_shuffle: batch_bytes must be positive");
    });
    agree(*host, failure, operation, "checking the declaration");
    // Every rank compares its declaration with rank 0's: a rank that differs names itself.
    std::vector<std::uint64_t> const all = host->allgather(declaration_fingerprint(partitions, types));
    failure.reset();
    if (all[static_cast<std::size_t>(rank)] != all[0]) {
      failure = rank_failure{error_code::invalid_argument,
                             "its declaration (" + std::to_string(partitions) + " partitions; columns " +
                                 describe_types(types) + ") differs from rank 0's"};
    }
    agree(*host, failure, operation, "comparing the ranks' partitions and column types");
    extracted.assign(last_partition(rank) - first_partition(rank), false);
  }

  // An exchange still running reads and writes the members: it finishes before they go.
  ~impl() {
    if (running.valid()) running.wait();
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  // The stream exchanges and the store use: the caller's on the CPU path.
  cudaStream_t work_stream() const { return exchange_stream ? exchange_stream->get() : stream; }
  // `waiter` goes on once `signaller` has done what is enqueued on it so far.
  static void order_after(cudaStream_t waiter, cudaStream_t signaller) {
    if (waiter == signaller) return;
    cuda_event done;
    done.record(signaller);
    ZS_CUDA_TRY(cudaStreamWaitEvent(waiter, done.get(), 0));
  }

  std::uint32_t first_partition(int r) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(r) * partitions + ranks - 1) / ranks);
  }
  std::uint32_t last_partition(int r) const { return first_partition(r + 1); }  // one past
  int owner_of(std::uint32_t p) const {
    return static_cast<int>(static_cast<std::uint64_t>(p) * ranks / partitions);
  }

  void check_usable(std::string_view what) const {
    if (broken) {
      ZS_FAIL(error_code::invalid_argument,
              std::string(operation) + ": " + std::string(what) +
                  " after an exchange failed (received rows may be lost; start a new streaming shuffle)");
    }
  }

  void check_piece(std::uint32_t p, const table& piece) const {
    std::string const where = "streaming_shuffle: a piece of partition " + std::to_string(p);
    if (p >= partitions) {
      ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: partition " + std::to_string(p) +
                                                " is out of range (" + std::to_string(partitions) + " partitions)");
    }
    if (piece.columns.size() != types.size()) {
      ZS_FAIL(error_code::invalid_argument, where + " has " + std::to_string(piece.columns.size()) +
                                                " columns; the shuffle declares " + std::to_string(types.size()));
    }
    for (std::size_t c = 0; c < types.size(); ++c) {
      auto const& col = piece.columns[c];
      std::string const name = "column " + std::to_string(c) + " '" + names[c] + "'";
      if (col.type() != types[c]) {
        ZS_FAIL(error_code::invalid_argument, where + ": " + name + " is " + std::string(to_string(col.type())) +
                                                  ", declared " + std::string(to_string(types[c])));
      }
      if (col.size() != piece.columns[0].size()) {
        ZS_FAIL(error_code::invalid_argument, where + ": " + name + " has " + std::to_string(col.size()) +
                                                  " rows, column 0 has " + std::to_string(piece.columns[0].size()));
      }
      if (col.memory() != memory) {
        ZS_FAIL(error_code::invalid_argument,
                where + ": " + name + " is in " + (memory == memory_kind::device ? "host" : "device") +
                    " memory; this path takes " + (memory == memory_kind::device ? "device" : "host") + " columns");
      }
    }
  }

  void insert(std::uint32_t p, table&& piece) {
    check_usable("insert");
    if (is_finished) {
      ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: insert into partition " + std::to_string(p) +
                                                " after insert_finished");
    }
    check_piece(p, piece);
    if (piece.columns[0].size() == 0) return;
    std::uint64_t const bytes = partition_store::bytes_of(piece);
    buffer.rows += piece.columns[0].size();
    buffer.bytes += bytes;
    stats.inserted_bytes += bytes;
    stats.buffered_bytes = buffer.bytes;
    buffer.pieces[p].push_back(std::move(piece));
  }

  // Exchanges the buffer (collective): on this thread, or where `background` (and
  // options.overlap, and a communicator that other threads may call) on a thread of its own,
  // which the next collective call waits for.
  void exchange_buffer(bool background) {
    join();
    bool const overlap = background && options.overlap && host->callable_from_any_thread();
    int device_id = -1;
    if (overlap && device != nullptr) ZS_CUDA_TRY(cudaGetDevice(&device_id));
    // The exchange reads the pieces the caller's stream made, and frees them after its reads.
    // (What can fail comes before the pieces leave the buffer.)
    order_after(work_stream(), stream);
    for (auto& [p, pieces] : buffer.pieces) {
      for (auto& piece : pieces) {
        for (auto& c : piece.columns) c.set_stream(work_stream());
      }
    }
    auto b = std::make_unique<batch>();
    std::swap(*b, buffer);
    stats.buffered_bytes = 0;
    if (!overlap) {
      run_exchange(*b);
      return;
    }
    sending = std::move(b);
    try {
      running = std::async(std::launch::async, [this, device_id, job = sending.get()] {
        if (device_id >= 0) ZS_CUDA_TRY(cudaSetDevice(device_id));  // the current device is per thread
        exchange(*job);
      });
    } catch (const std::system_error&) {
      // No thread to be had: the exchange runs here, as without overlap.
      b = std::move(sending);
      run_exchange(*b);
      return;
    }
    ++stats.background_exchanges;
  }

  // Runs the exchange of `b` here; on a failure before its data moved, `b` goes back in front of
  // the buffer (its pieces first in each partition, as they were inserted first).
  void run_exchange(batch& b) {
    try {
      exchange(b);
    } catch (...) {
      give_back(b);
      throw;
    }
  }
  void give_back(batch& b) {
    if (b.rows == 0) return;
    for (auto& [p, pieces] : buffer.pieces) {
      auto& first = b.pieces[p];
      first.insert(first.end(), std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
    }
    b.bytes += buffer.bytes;
    b.rows += buffer.rows;
    buffer = std::move(b);
    b = batch{};
    stats.buffered_bytes = buffer.bytes;
  }

  // Waits for the exchange running on its own thread, if any; rethrows its failure here, where
  // every rank meets it (it failed collectively).
  void join() {
    if (!running.valid()) return;
    auto const start = clock_type::now();
    std::future<void> done = std::move(running);
    std::unique_ptr<batch> b = std::move(sending);
    try {
      done.get();
    } catch (...) {
      stats.overlap_wait_seconds += seconds_between(start, clock_type::now());
      give_back(*b);
      throw;
    }
    stats.overlap_wait_seconds += seconds_between(start, clock_type::now());
  }

  // One collective exchange of every rank's batch.
  void exchange(batch& b) {
    auto const start = clock_type::now();
    std::size_t const C = types.size();
    auto const R = static_cast<std::size_t>(ranks);
    // 1. Local: the buffered rows in partition order, the row offsets per destination, and the
    //    runs (partition, rows) each destination will receive from here.
    std::vector<column> send_columns(C);
    std::vector<std::uint64_t> row_offsets(R + 1, 0);
    std::vector<std::vector<std::uint64_t>> runs(R);  // pairs: partition, rows
    agree_on(*host, operation, "preparing an exchange", [&] {
      std::vector<std::vector<row_range>> ranges(C);
      std::uint64_t row = 0;
      for (auto const& [p, pieces] : b.pieces) {
        std::uint64_t rows = 0;
        for (auto const& piece : pieces) {
          for (std::size_t c = 0; c < C; ++c) ranges[c].push_back({piece.columns[c].view(), 0, piece.columns[c].size()});
          rows += piece.columns[0].size();
        }
        auto const d = static_cast<std::size_t>(owner_of(p));
        runs[d].push_back(p);
        runs[d].push_back(rows);
        row += rows;
        // Destinations are contiguous blocks of partitions, visited in order.
        for (std::size_t e = d + 1; e <= R; ++e) row_offsets[e] = row;
      }
      for (std::size_t c = 0; c < C; ++c) send_columns[c] = concatenate(types[c], ranges[c], memory, work_stream());
    });
    // 2. Tell each destination which partitions follow and how many rows of each.
    std::vector<std::uint64_t> send_counts(R), send_words;
    for (std::size_t d = 0; d < R; ++d) {
      send_counts[d] = runs[d].size() * 8;
      send_words.insert(send_words.end(), runs[d].begin(), runs[d].end());
    }
    std::vector<std::uint64_t> const recv_counts = host->exchange_counts(send_counts);
    std::vector<std::uint64_t> recv_words(std::accumulate(recv_counts.begin(), recv_counts.end(), std::uint64_t{0}) / 8);
    host->alltoallv(std::as_bytes(std::span<const std::uint64_t>(send_words)), send_counts,
                    std::as_writable_bytes(std::span<std::uint64_t>(recv_words)), recv_counts);
    // 3. The columns (zs::shuffle checks and agrees on everything else: types, options, memory).
    std::vector<shuffle_column> in(C);
    for (std::size_t c = 0; c < C; ++c) in[c] = {send_columns[c].view(), row_offsets};
    shuffle_stats moved;
    auto const shuffle_start = clock_type::now();
    std::vector<column> received = device != nullptr ? shuffle(*device, in, options.shuffle, work_stream(), &moved)
                                                     : shuffle(*host, in, options.shuffle, &moved);
    // The batch has left; from here a failure may lose received rows.
    b = batch{};
    send_columns.clear();
    ++stats.exchanges;
    stats.sent_wire_bytes += moved.wire_bytes;
    auto const store_start = clock_type::now();
    stats.shuffle_seconds += seconds_between(shuffle_start, store_start);
    // 4. Local: one piece per partition into the store, the sources' rows one after another.
    std::optional<rank_failure> failure = attempt([&] {
      std::map<std::uint32_t, std::vector<std::pair<row_range, int>>> arrived;  // by partition: rows, source
      std::uint64_t row = 0;
      std::size_t word = 0;
      for (std::size_t s = 0; s < R; ++s) {
        std::size_t const end = word + recv_counts[s] / 8;
        for (; word + 1 < end; word += 2) {
          auto const p = recv_words[word];
          std::uint64_t const rows = recv_words[word + 1];
          if (p < first_partition(rank) || p >= last_partition(rank) || row + rows > received[0].size()) {
            ZS_FAIL(error_code::internal, "streaming_shuffle: rank " + std::to_string(s) +
                                              " announced rows of partition " + std::to_string(p) +
                                              " that do not fit what arrived");
          }
          arrived[static_cast<std::uint32_t>(p)].push_back({row_range{{}, row, rows}, static_cast<int>(s)});
          row += rows;
        }
      }
      for (auto const& [p, runs] : arrived) {
        table piece;
        piece.names = names;
        for (std::size_t c = 0; c < C; ++c) {
          std::vector<row_range> ranges;
          for (auto const& [r, source] : runs) ranges.push_back({received[c].view(), r.first, r.rows});
          piece.columns.push_back(concatenate(types[c], ranges, memory, work_stream()));
        }
        std::vector<source_rows> from;
        for (auto const& [r, source] : runs) from.push_back({source, r.rows});
        std::uint64_t const bytes = partition_store::bytes_of(piece);
        store.insert(p, std::move(piece), work_stream());
        piece_sources[p].push_back(std::move(from));
        stats.received_bytes += bytes;
      }
    });
    if (failure) broken = true;
    try {
      agree(*host, failure, operation, "keeping the received rows");
    } catch (...) {
      broken = true;
      throw;
    }
    stats.store_seconds += seconds_between(store_start, clock_type::now());
    stats.exchange_seconds += seconds_between(start, clock_type::now());
  }

  table extract(std::uint32_t p) {
    check_usable("extract");
    if (p >= partitions) {
      ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: extract of partition " + std::to_string(p) +
                                                ", out of range (" + std::to_string(partitions) + " partitions)");
    }
    if (owner_of(p) != rank) {
      ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: extract of partition " + std::to_string(p) +
                                                " on rank " + std::to_string(rank) + "; rank " +
                                                std::to_string(owner_of(p)) + " owns it");
    }
    if (!is_finished) {
      ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: extract of partition " + std::to_string(p) +
                                                " before insert_finished (the partition is not complete)");
    }
    std::size_t const index = p - first_partition(rank);
    if (extracted[index]) {
      ZS_FAIL(error_code::invalid_argument,
              "streaming_shuffle: partition " + std::to_string(p) + " was extracted already");
    }
    auto const start = clock_type::now();
    std::vector<table> pieces;
    std::vector<std::vector<source_rows>> sources;
    if (store.contains(p)) {
      pieces = store.extract(p, work_stream());  // throws before anything leaves the store
      order_after(stream, work_stream());
      sources = std::move(piece_sources[p]);
      piece_sources.erase(p);
    }
    // By source rank, each source's rows in the order they came (the order it inserted them).
    struct span_of_rows {
      int source;
      std::size_t piece;
      std::uint64_t first, rows;
    };
    std::vector<span_of_rows> spans;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      std::uint64_t first = 0;
      for (auto const& [source, rows] : sources[i]) {
        spans.push_back({source, i, first, rows});
        first += rows;
      }
    }
    std::stable_sort(spans.begin(), spans.end(),
                     [](const span_of_rows& a, const span_of_rows& b) { return a.source < b.source; });
    table out;
    out.names = names;
    for (std::size_t c = 0; c < types.size(); ++c) {
      std::vector<row_range> ranges;
      for (auto const& sp : spans) ranges.push_back({pieces[sp.piece].columns[c].view(), sp.first, sp.rows});
      out.columns.push_back(concatenate(types[c], ranges, memory, stream));
    }
    order_after(work_stream(), stream);  // the pieces are freed on theirs after these reads
    extracted[index] = true;
    stats.extract_seconds += seconds_between(start, clock_type::now());
    return out;
  }
};

streaming_shuffle::streaming_shuffle(device_communicator& comm, std::vector<std::string> names,
                                     std::vector<value_type> types, std::uint32_t partitions,
                                     streaming_shuffle_options options, cudaStream_t stream)
    : impl_(std::make_unique<impl>(comm.host(), &comm, std::move(names), std::move(types), partitions,
                                   std::move(options), stream)) {}

streaming_shuffle::streaming_shuffle(communicator& comm, std::vector<std::string> names,
                                     std::vector<value_type> types, std::uint32_t partitions,
                                     streaming_shuffle_options options)
    : impl_(std::make_unique<impl>(comm, nullptr, std::move(names), std::move(types), partitions, std::move(options),
                                   nullptr)) {}

streaming_shuffle::~streaming_shuffle() = default;
streaming_shuffle::streaming_shuffle(streaming_shuffle&&) noexcept = default;
streaming_shuffle& streaming_shuffle::operator=(streaming_shuffle&&) noexcept = default;

std::uint32_t streaming_shuffle::partitions() const noexcept { return impl_->partitions; }
int streaming_shuffle::owner(std::uint32_t partition) const {
  if (partition >= impl_->partitions) {
    ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: partition " + std::to_string(partition) +
                                              " is out of range (" + std::to_string(impl_->partitions) +
                                              " partitions)");
  }
  return impl_->owner_of(partition);
}
std::vector<std::uint32_t> streaming_shuffle::owned_partitions() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t p = impl_->first_partition(impl_->rank); p < impl_->last_partition(impl_->rank); ++p) out.push_back(p);
  return out;
}

void streaming_shuffle::insert(std::uint32_t partition, table&& piece) { impl_->insert(partition, std::move(piece)); }

void streaming_shuffle::insert(const partitioned_table& parts) {
  auto& m = *impl_;
  m.check_usable("insert");
  if (parts.partitions() != m.partitions) {
    ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: a partitioned table of " +
                                              std::to_string(parts.partitions()) + " partitions; the shuffle has " +
                                              std::to_string(m.partitions));
  }
  // Every piece is checked and cut before any is buffered: a failure buffers nothing. A string
  // column's character ranges are read for every partition at once.
  std::vector<std::uint32_t> nonempty;
  for (std::uint32_t p = 0; p < m.partitions; ++p) {
    if (parts.partition_offsets[p + 1] > parts.partition_offsets[p]) nonempty.push_back(p);
  }
  auto const& columns = parts.rows.columns;
  std::vector<std::vector<row_range>> ranges(columns.size());
  std::vector<std::vector<char_range>> chars(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    for (std::uint32_t p : nonempty) {
      std::uint64_t const first = parts.partition_offsets[p];
      ranges[c].push_back({columns[c].view(), first, parts.partition_offsets[p + 1] - first});
    }
    if (columns[c].type() == value_type::string) chars[c] = char_ranges(ranges[c], columns[c].memory(), m.stream);
  }
  std::vector<std::pair<std::uint32_t, table>> pieces;
  for (std::size_t i = 0; i < nonempty.size(); ++i) {
    table piece;
    piece.names = m.names;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      auto const one_chars = chars[c].empty() ? std::span<const char_range>() : std::span<const char_range>(&chars[c][i], 1);
      piece.columns.push_back(concatenate(columns[c].type(), std::span<const row_range>(&ranges[c][i], 1), one_chars,
                                          columns[c].memory(), m.stream));
    }
    m.check_piece(nonempty[i], piece);
    pieces.emplace_back(nonempty[i], std::move(piece));
  }
  for (auto& [p, piece] : pieces) m.insert(p, std::move(piece));
}
bool streaming_shuffle::wants_exchange() const noexcept { return impl_->buffer.bytes >= impl_->options.batch_bytes; }

bool streaming_shuffle::progress() {
  impl_->check_usable("progress");
  impl_->join();  // the communicator serves one call at a time
  if (impl_->host->allreduce_max(wants_exchange() ? 1 : 0) == 0) return false;
  impl_->exchange_buffer(true);
  return true;
}

void streaming_shuffle::flush() {
  impl_->check_usable("flush");
  impl_->join();
  if (impl_->host->allreduce_max(impl_->buffer.rows) == 0) return;  // nothing buffered anywhere
  impl_->exchange_buffer(false);
}

void streaming_shuffle::insert_finished() {
  impl_->check_usable("insert_finished");
  impl_->join();
  // Every rank must be finishing: a rank that is not would meet this collective elsewhere.
  agree(*impl_->host,
        impl_->is_finished ? std::optional<rank_failure>(rank_failure{error_code::invalid_argument,
                                                                      "insert_finished was called twice"})
                           : std::nullopt,
        operation, "finishing");
  flush();
  impl_->is_finished = true;
}

bool streaming_shuffle::finished() const noexcept { return impl_->is_finished; }

table streaming_shuffle::extract(std::uint32_t partition) { return impl_->extract(partition); }

const streaming_shuffle_stats& streaming_shuffle::stats() const {
  // An exchange in flight writes the figures: wait for it (its failure surfaces at the next
  // collective call, not here).
  if (impl_->running.valid()) impl_->running.wait();
  impl_->stats.store = impl_->store.stats();
  return impl_->stats;
}

std::optional<codec_id> streaming_shuffle::spill_codec(std::size_t column) const {
  if (column >= impl_->types.size()) {
    ZS_FAIL(error_code::invalid_argument, "streaming_shuffle: column " + std::to_string(column) + " of " +
                                              std::to_string(impl_->types.size()));
  }
  if (impl_->running.valid()) impl_->running.wait();  // an exchange in flight may be choosing
  return impl_->store.chosen_codec(column, impl_->types[column]);
}

}  // namespace zs
