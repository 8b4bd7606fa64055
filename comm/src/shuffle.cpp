// The compressed column shuffle (shuffle.hpp): one protocol, two engines.
//
// shuffle_driver runs the protocol; an engine, built on the primitives of collective_engines.hpp,
// says where bytes live and how they move:
//   host_engine    host memory, CPU reference codecs, the host communicator, all synchronous;
//   device_engine  device memory, GPU codecs, a device communicator, three streams (encode,
//                  exchange, decode) chained by events so consecutive rounds overlap.
#include "zs/comm/shuffle.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "codec_groups.hpp"
#include "collective_engines.hpp"
#include "common/batch_ops.hpp"
#include "shuffle_manifest.hpp"
#include "shuffle_plan.hpp"
#include "zs/error.hpp"
#include "zs/fault.hpp"
#include "zs/memory.hpp"

namespace zs {

namespace {

using clock_type = std::chrono::steady_clock;
using detail::add_counts;
using detail::attempt;
using detail::bytes_of;
using detail::describe_column;
using detail::failure;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// a * b for the sizes of the plan's own arrays; out_of_memory when no memory could hold them.
std::size_t plan_product(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > SIZE_MAX / 16) {
    ZS_FAIL(error_code::out_of_memory, std::string("shuffle: the plan's ") + what + " would need " + std::to_string(a) +
                                           " x " + std::to_string(b) + " entries");
  }
  return static_cast<std::size_t>(product);
}

// rows * k / rounds, exactly: the product may not fit in 64 bits.
std::uint64_t share_of(std::uint64_t rows, std::uint64_t k, std::uint64_t rounds) {
  __extension__ typedef unsigned __int128 wide;
  return static_cast<std::uint64_t>(static_cast<wide>(rows) * k / rounds);
}

// ---------------------------------------------------------------------------------------------
// Engines: the shared primitives (collective_engines.hpp), run where each stage runs, and what
// the shuffle adds: reading string offsets at round boundaries, frame sizes, the exchange.

class host_engine {
 public:
  using buffer = detail::host_ops::buffer;
  static constexpr memory_kind memory = detail::host_ops::memory;
  struct round_sync {};
  enum class stage { encode, exchange, decode };

  explicit host_engine(communicator& comm) : comm_(comm) {}

  communicator& host() { return comm_; }
  // Every stage completes before its call returns.
  static detail::host_ops at(stage) { return {}; }

  std::vector<std::int64_t> read_offsets(const std::int64_t* offsets, const std::vector<std::uint64_t>& rows) {
    std::vector<std::int64_t> out(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = offsets[rows[i]];
    return out;
  }
  static column allocate_output(value_type type, std::uint64_t rows, std::uint64_t chars) {
    return detail::host_ops::allocate_output(type, rows, chars);
  }

  void encoded(round_sync&) {}
  std::vector<std::uint64_t> read_sizes(round_sync&, buffer& sizes, std::size_t n, std::string_view what) {
    return detail::host_ops::read_array<std::uint64_t>(sizes, n, what);
  }
  void exchange(round_sync&, buffer& send, std::span<const std::uint64_t> send_counts, buffer& recv,
                std::span<const std::uint64_t> recv_counts) {
    std::uint64_t out = 0, in = 0;
    for (auto c : send_counts) out += c;
    for (auto c : recv_counts) in += c;
    comm_.alltoallv(std::span(send.as<const std::byte>(), out), send_counts, std::span(recv.as<std::byte>(), in),
                    recv_counts);
  }
  void finish() {}

 private:
  communicator& comm_;
};

class device_engine {
 public:
  using buffer = detail::device_ops::buffer;
  static constexpr memory_kind memory = detail::device_ops::memory;
  struct round_sync {
    cuda_event encoded, exchanged;
    pinned_buffer sizes;
  };
  enum class stage { encode, exchange, decode };

  device_engine(device_communicator& comm, cudaStream_t caller) : comm_(comm), caller_(caller) {
    // The three stages start after whatever the caller enqueued before the call.
    cuda_event start;
    start.record(caller_);
    for (cudaStream_t s : {encode_.get(), exchange_.get(), decode_.get()}) {
      ZS_CUDA_TRY(cudaStreamWaitEvent(s, start.get(), 0));
    }
  }

  communicator& host() { return comm_.host(); }

  // Each stage's work runs on that stage's stream. Round buffers come from the pool on the
  // stream of the stage that first uses them; each is re-homed to the stream of its last use
  // before it is dropped, so the pool hands it out again only after that use.
  detail::device_ops at(stage s) const {
    return detail::device_ops(s == stage::encode     ? encode_.get()
                              : s == stage::exchange ? exchange_.get()
                                                     : decode_.get(),
                              comm_);
  }

  std::vector<std::int64_t> read_offsets(const std::int64_t* offsets, const std::vector<std::uint64_t>& rows) {
    std::vector<std::int64_t> out(rows.size());
    if (rows.empty()) return out;
    device_buffer index(rows.size() * 8, caller_);
    device_buffer values(rows.size() * 8, caller_);
    copy_async(index.data(), rows.data(), rows.size() * 8, caller_);
    kernels::gather_i64(offsets, index.as<std::uint64_t>(), values.as<std::int64_t>(), rows.size(), caller_);
    copy_async(out.data(), values.data(), rows.size() * 8, caller_);
    comm_.synchronize(caller_, "the string offsets at round boundaries");
    return out;
  }
  column allocate_output(value_type type, std::uint64_t rows, std::uint64_t chars) {
    // On the caller's stream, so the outputs outlive this shuffle's streams.
    column c = detail::device_ops(caller_, comm_).allocate_output(type, rows, chars);
    cuda_event ready;
    ready.record(caller_);
    ZS_CUDA_TRY(cudaStreamWaitEvent(decode_, ready.get(), 0));
    return c;
  }

  void encoded(round_sync& sync) { sync.encoded.record(encode_); }
  // The exchange stream carries the previous round's frames: a peer that stops answering shows
  // here first, and the wait is bounded by the communicator's timeout.
  std::vector<std::uint64_t> read_sizes(round_sync& sync, buffer& sizes, std::size_t n, std::string_view what) {
    sync.sizes = pinned_buffer(std::max<std::size_t>(n * 8, 8));
    ZS_CUDA_TRY(cudaStreamWaitEvent(exchange_, sync.encoded.get(), 0));
    copy_async(sync.sizes.data(), sizes.data(), n * 8, exchange_);
    comm_.synchronize(exchange_, what);
    return {sync.sizes.as<std::uint64_t>(), sync.sizes.as<std::uint64_t>() + n};
  }
  void exchange(round_sync& sync, buffer& send, std::span<const std::uint64_t> send_counts, buffer& recv,
                std::span<const std::uint64_t> recv_counts) {
    comm_.alltoallv(send.as<std::byte>(), send_counts, recv.as<std::byte>(), recv_counts, exchange_,
                    device_communicator::sizes::agreed);
    send.set_stream(exchange_);
    sync.exchanged.record(exchange_);
    ZS_CUDA_TRY(cudaStreamWaitEvent(decode_, sync.exchanged.get(), 0));
    recv.set_stream(decode_);
  }
  void finish() {
    cuda_event done;
    done.record(decode_);
    ZS_CUDA_TRY(cudaStreamWaitEvent(caller_, done.get(), 0));
  }
  // The scratch of round k is read by the exchange stream's packing.
  void retire_scratch(buffer& scratch) { scratch.set_stream(exchange_); }

 private:
  device_communicator& comm_;
  cudaStream_t caller_;
  cuda_stream encode_, exchange_, decode_;
};

// ---------------------------------------------------------------------------------------------
// The protocol

template <typename Engine>
class shuffle_driver {
 public:
  shuffle_driver(Engine& engine, std::span<const shuffle_column> columns, const shuffle_options& options)
      : engine_(engine), comm_(engine.host()), columns_(columns), options_(options) {}

  std::vector<column> run(shuffle_stats* stats) {
    auto const start = clock_type::now();
    detail::call_timeout const timeout(comm_, options_.timeout);
    check_arguments();
    make_plan();
    progress_.rounds = plan_.rounds;
    progress_.raw_bytes_total = stats_.raw_bytes;
    std::size_t const frames_per_round = static_cast<std::size_t>(plan_.ranks) * plan_.columns;
    agree(attempt([&] {
            for (std::size_t c = 0; c < plan_.columns; ++c) {
              outputs_.push_back(
                  engine_.allocate_output(plan_.types[c], plan_.out_rows_total[c], plan_.out_chars_total[c]));
            }
            std::uint64_t const statuses = plan_.rounds * frames_per_round;
            statuses_ = engine_.at(Engine::stage::decode).allocate(statuses * sizeof(frame_status));
          }),
          "allocating the outputs");

    // Pipeline: encode round k while round k - 1 is exchanged and round k - 2 decoded. Each
    // stage of the host engine completes at once; the device engine's stages run on their own
    // streams, and only reading frame sizes waits for the GPU.
    std::deque<round> in_flight;  // rounds k - 2, k - 1 and k, oldest first
    auto round_number = [&](std::uint64_t k) -> round& {
      return in_flight[static_cast<std::size_t>(k - in_flight.front().k)];
    };
    for (std::uint64_t k = 0; k < plan_.rounds + 2; ++k) {
      if (k < plan_.rounds) {
        in_flight.emplace_back();
        encode_round(in_flight.back(), k);
      }
      if (k >= 1 && k - 1 < plan_.rounds) exchange_round(round_number(k - 1));
      if (k >= 2) {
        decode_round(in_flight.front());
        in_flight.pop_front();
      }
    }
    check_statuses(frames_per_round);
    engine_.finish();
    if (stats != nullptr) {
      *stats = stats_;
      stats->rounds = plan_.rounds;
      stats->seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    }
    return std::move(outputs_);
  }

 private:
  using buffer = typename Engine::buffer;

  struct round {
    std::uint64_t k = 0;
    typename Engine::round_sync sync;
    detail::encoded_groups<buffer> encoded;              // frames by codec group, before packing
    buffer send, recv;
    std::vector<std::size_t> order;                      // frame index f = d * C + c, in group order
    std::vector<std::uint64_t> recv_sizes;               // [s * C + c]
    std::uint64_t raw_bytes = 0;                         // uncompressed bytes of its frames
    std::optional<failure> failed;                       // this rank's error in a local stage
  };

  // Every rank checks its own columns and options and all agree (one allreduce), so that every
  // rank's message names the rank, the column and the check; then the ranks compare what must
  // be the same everywhere (one allgather).
  void check_arguments() {
    agree(attempt([&] { check_my_arguments(); }), "checking the arguments");
    detail::agree_on_shape(comm_, "shuffle", describe_call());
  }

  void check_my_arguments() const {
    std::size_t const ranks = static_cast<std::size_t>(comm_.size());
    if (options_.round_bytes == 0) {
      ZS_FAIL(error_code::invalid_argument, "options.round_bytes is 0; a round must hold at least one byte");
    }
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      auto const& v = columns_[c].column;
      auto const& off = columns_[c].row_offsets;
      detail::check_column(c, v, Engine::memory);
      auto const fail = [&](const std::string& problem) {
        ZS_FAIL(error_code::invalid_argument, describe_column(c, v.type) + ": " + problem);
      };
      if (off.size() != ranks + 1) {
        fail("row_offsets has " + std::to_string(off.size()) + " entries, expected ranks + 1 = " +
             std::to_string(ranks + 1));
      }
      if (off.front() != 0) fail("row_offsets starts at " + std::to_string(off.front()) + ", expected 0");
      if (off.back() != v.count) {
        fail("row_offsets ends at " + std::to_string(off.back()) + ", expected the column's " +
             std::to_string(v.count) + " rows");
      }
      for (std::size_t d = 0; d + 1 < off.size(); ++d) {
        if (off[d + 1] < off[d]) {
          fail("row_offsets decreases from " + std::to_string(off[d]) + " to " + std::to_string(off[d + 1]) +
               " at rank " + std::to_string(d + 1));
        }
      }
    }
  }

  // What every rank must pass alike: the column count, each column's type and codec, the round
  // size. Types are valid here (checked and agreed before).
  std::string describe_call() const {
    std::vector<value_type> types;
    for (auto const& col : columns_) types.push_back(col.column.type);
    return detail::codec_groups::describe(types, options_.codec) + ", round_bytes " +
           std::to_string(options_.round_bytes);
  }

  void make_plan() {
    auto& p = plan_;
    p.ranks = comm_.size();
    p.columns = columns_.size();
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    // The ranks agreed on types and codecs, so this fails on every rank alike.
    for (auto const& col : columns_) p.types.push_back(col.column.type);
    p.codecs = detail::codec_groups(p.types, options_.codec, "shuffle");
    // Rounds: enough that no rank encodes more than round_bytes per round.
    std::uint64_t raw = 0;
    agree(attempt([&] {
            stats_.column_raw_bytes.assign(C, 0);
            stats_.column_wire_bytes.assign(C, 0);
            for (std::size_t c = 0; c < C; ++c) {
              auto const& v = columns_[c].column;
              if (v.type == value_type::string) {
                auto const ends = engine_.read_offsets(v.offsets, {0, v.count});
                if (ends[1] < ends[0] || ends[0] < 0) {
                  ZS_FAIL(error_code::invalid_argument, describe_column(c, v.type) + ": string offsets run from " +
                                                            std::to_string(ends[0]) + " to " + std::to_string(ends[1]));
                }
                stats_.column_raw_bytes[c] = static_cast<std::uint64_t>(ends[1] - ends[0]) + 8 * v.count;
              } else {
                stats_.column_raw_bytes[c] = v.count * value_width(v.type);
              }
              raw += stats_.column_raw_bytes[c];
            }
          }),
          "measuring the columns");
    stats_.raw_bytes = raw;
    p.rounds = comm_.allreduce_max(std::max<std::uint64_t>(1, ceil_div(raw, options_.round_bytes)));
    std::uint64_t const R = p.rounds;

    // Round boundaries of every (column, destination) partition, and what each destination
    // learns of them: rows and characters per (column, round), sealed per destination.
    std::size_t const block_words = 2 * plan_product(C, R, "manifest") + 1;
    std::vector<std::uint64_t> out, in;
    agree(attempt([&] {
            fault::point("shuffle.plan");
            std::size_t const boundaries = plan_product(C * P, R + 1, "round boundaries");
            p.row_at.assign(boundaries, 0);
            p.char_at.assign(boundaries, 0);
            for (std::size_t c = 0; c < C; ++c) {
              auto const& off = columns_[c].row_offsets;
              for (std::size_t d = 0; d < P; ++d) {
                std::uint64_t const rows = off[d + 1] - off[d];
                for (std::uint64_t k = 0; k <= R; ++k) {
                  p.row_at[p.boundary(c, static_cast<int>(d), k)] = off[d] + share_of(rows, k, R);
                }
              }
              if (p.types[c] == value_type::string) {
                auto const first = static_cast<std::ptrdiff_t>(p.boundary(c, 0, 0));
                auto const last = static_cast<std::ptrdiff_t>(p.boundary(c, p.ranks - 1, R) + 1);
                std::vector<std::uint64_t> rows(p.row_at.begin() + first, p.row_at.begin() + last);
                auto const chars = engine_.read_offsets(columns_[c].column.offsets, rows);
                std::copy(chars.begin(), chars.end(), p.char_at.begin() + first);
              }
            }
            out.resize(plan_product(P, block_words, "manifest"));
            in.resize(out.size());
            std::vector<detail::slice_counts> slices(C * R);
            for (std::size_t d = 0; d < P; ++d) {
              for (std::size_t c = 0; c < C; ++c) {
                for (std::uint64_t k = 0; k < R; ++k) {
                  auto const b = p.boundary(c, static_cast<int>(d), k);
                  slices[c * R + k] = {p.row_at[b + 1] - p.row_at[b],
                                       static_cast<std::uint64_t>(p.char_at[b + 1] - p.char_at[b])};
                }
              }
              auto const block = detail::seal_manifest(slices, comm_.rank(), static_cast<int>(d));
              std::copy(block.begin(), block.end(), out.begin() + static_cast<std::ptrdiff_t>(d * block_words));
            }
          }),
          "planning");
    std::vector<std::uint64_t> const counts(P, block_words * 8);
    comm_.alltoallv(std::as_bytes(std::span(out)), counts, std::as_writable_bytes(std::span(in)), counts);

    // Where everything received lands: by source rank, then round. Every count comes from a
    // peer: the seal and the checks of read_manifest come first, and every total is checked.
    agree(attempt([&] {
            std::size_t const incoming = plan_product(C * P, R, "incoming slices");
            p.in_rows.assign(incoming, 0);
            p.in_chars.assign(incoming, 0);
            p.out_row.assign(incoming, 0);
            p.out_char.assign(incoming, 0);
            p.out_rows_total.assign(C, 0);
            p.out_chars_total.assign(C, 0);
            std::vector<std::uint64_t> out_bytes(C, 0);
            auto const all = std::as_bytes(std::span(in));
            for (std::size_t s = 0; s < P; ++s) {
              auto const slices = detail::read_manifest(all.subspan(s * block_words * 8, block_words * 8),
                                                        static_cast<int>(s), comm_.rank(), p.types, R);
              for (std::size_t c = 0; c < C; ++c) {
                std::string const what = "the rows " + describe_column(c, p.types[c]) + " receives";
                for (std::uint64_t k = 0; k < R; ++k) {
                  auto const i = p.incoming(c, static_cast<int>(s), k);
                  auto const& slice = slices[c * R + k];
                  p.in_rows[i] = slice.rows;
                  p.in_chars[i] = slice.chars;
                  p.out_row[i] = p.out_rows_total[c];
                  p.out_char[i] = p.out_chars_total[c];
                  p.out_rows_total[c] = add_counts(p.out_rows_total[c], slice.rows, what);
                  p.out_chars_total[c] = add_counts(p.out_chars_total[c], slice.chars, what);
                  // The output's bytes: each slice fits in 2^48 bytes (read_manifest), the sum
                  // must fit in 64 bits.
                  std::uint64_t const bytes = p.types[c] == value_type::string
                                                  ? slice.chars + 8 * slice.rows
                                                  : slice.rows * value_width(p.types[c]);
                  out_bytes[c] = add_counts(out_bytes[c], bytes, what);
                }
              }
            }
          }),
          "reading the manifest");

  }

  template <typename Step>
  void guarded(round& r, Step step) {
    if (!r.failed) r.failed = attempt(step);
  }

  // A rank whose earlier decode failed reports that failure at the next agreement point.
  void agree(const std::optional<failure>& here, std::string_view where) {
    detail::agree(comm_, here ? here : decode_failed_, "shuffle", where);
  }
  void agree(const round& r) { agree(r.failed, "round " + std::to_string(r.k)); }

  void encode_round(round& r, std::uint64_t k) {
    r.k = k;
    guarded(r, [&] {
      auto const& p = plan_;
      std::size_t const C = p.columns;
      auto const groups = p.codecs.groups();
      std::vector<std::vector<encode_source>> sources(groups.size());
      std::vector<std::vector<std::size_t>> column_of(groups.size());
      for (std::size_t g = 0; g < groups.size(); ++g) {
        for (int d = 0; d < p.ranks; ++d) {
          for (std::size_t c : groups[g].columns) {
            sources[g].push_back(source(c, d, k));
            column_of[g].push_back(c);
            r.order.push_back(static_cast<std::size_t>(d) * C + c);
            auto const& s = sources[g].back();
            r.raw_bytes += s.type == value_type::string ? s.chars_bytes + 8 * s.count : s.count * value_width(s.type);
          }
        }
      }
      r.encoded = detail::encode_groups(engine_.at(Engine::stage::encode), p.codecs, p.types, sources, column_of);
      engine_.encoded(r.sync);
    });
  }

  encode_source source(std::size_t c, int d, std::uint64_t k) const {
    auto const b = plan_.boundary(c, d, k);
    std::uint64_t const row = plan_.row_at[b];
    return detail::source_rows(columns_[c].column, row, plan_.row_at[b + 1] - row,
                               static_cast<std::uint64_t>(plan_.char_at[b + 1] - plan_.char_at[b]));
  }

  void exchange_round(round& r) {
    fault::point("shuffle.round");
    auto const& p = plan_;
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    std::size_t const block_words = C + 1;
    std::vector<std::uint64_t> sizes;  // per frame f = d * C + c
    std::vector<std::uint64_t> sealed_out, sealed_in;
    guarded(r, [&] {
      auto const in_group_order =
          engine_.read_sizes(r.sync, r.encoded.frame_bytes, r.order.size(), "the frame sizes of round " + std::to_string(r.k));
      sizes.assign(P * C, 0);
      for (std::size_t i = 0; i < r.order.size(); ++i) sizes[r.order[i]] = in_group_order[i];
      sealed_out.resize(P * block_words);
      sealed_in.resize(P * block_words);
      for (std::size_t d = 0; d < P; ++d) {
        auto const block = detail::seal_frame_sizes(std::span(sizes).subspan(d * C, C), comm_.rank(),
                                                    static_cast<int>(d), r.k);
        std::copy(block.begin(), block.end(), sealed_out.begin() + static_cast<std::ptrdiff_t>(d * block_words));
      }
    });
    // Agreement point: a rank that failed so far (or at an earlier decode) stops everyone.
    agree(r);
    // Frame sizes to their destinations: C words and a seal per destination.
    std::vector<std::uint64_t> const words(P, block_words * 8);
    comm_.alltoallv(std::as_bytes(std::span(sealed_out)), words, std::as_writable_bytes(std::span(sealed_in)), words);

    std::vector<std::uint64_t> send_counts(P, 0), recv_counts(P, 0);
    guarded(r, [&] {
      // Every received size is checked (seal, and the largest frame its rows can make) before
      // it sizes a buffer; every sum is checked.
      r.recv_sizes.assign(P * C, 0);
      auto const all = std::as_bytes(std::span(sealed_in));
      for (std::size_t s = 0; s < P; ++s) {
        auto const received = detail::read_frame_sizes(all.subspan(s * block_words * 8, block_words * 8),
                                                       static_cast<int>(s), comm_.rank(), r.k, C);
        for (std::size_t c = 0; c < C; ++c) {
          check_frame_size(c, static_cast<int>(s), r.k, received[c]);
          r.recv_sizes[s * C + c] = received[c];
          recv_counts[s] = add_counts(recv_counts[s], align_frame(received[c]), "the frame bytes of a round");
        }
      }
      std::uint64_t send_total = 0, recv_total = 0;
      for (std::size_t d = 0; d < P; ++d) {
        for (std::size_t c = 0; c < C; ++c) {
          send_counts[d] += align_frame(sizes[d * C + c]);
          stats_.column_wire_bytes[c] += align_frame(sizes[d * C + c]);
        }
        send_total += send_counts[d];
        recv_total = add_counts(recv_total, recv_counts[d], "the frame bytes of a round");
      }
      stats_.wire_bytes += send_total;

      auto const exchanger = engine_.at(Engine::stage::exchange);
      r.send = exchanger.allocate(send_total);
      r.recv = exchanger.allocate(recv_total);
      // Pack: destination by destination, columns in order, each frame at a 16-byte boundary.
      std::vector<std::uint64_t> frame_at(P * C);
      std::uint64_t at = 0;
      for (std::size_t f = 0; f < P * C; ++f) {
        frame_at[f] = at;
        at += align_frame(sizes[f]);
      }
      std::vector<detail::frame_copy> copies;
      std::size_t i = 0;
      auto const& e = r.encoded;
      for (std::size_t g = 0; g < e.layouts.size(); ++g) {
        for (std::size_t j = 0; j + 1 < e.layouts[g].size(); ++j, ++i) {
          std::size_t const f = r.order[i];
          copies.push_back({bytes_of(r.encoded.scratch) + e.base[g] + e.layouts[g][j], bytes_of(r.send) + frame_at[f],
                            sizes[f]});
        }
      }
      exchanger.pack(copies);
      retire(r.encoded.scratch);
    });
    agree(r);
    engine_.exchange(r.sync, r.send, send_counts, r.recv, recv_counts);
    report_progress(r);
  }

  // The caller's progress callback, after round r's exchange. What it throws is this rank's
  // failure, reported at the next agreement point as a failed decode is.
  void report_progress(const round& r) {
    if (!options_.progress) return;
    progress_.rounds_done = r.k + 1;
    progress_.raw_bytes += r.raw_bytes;
    progress_.wire_bytes = stats_.wire_bytes;
    auto const failed = attempt([&] { options_.progress(progress_); });
    if (failed && !decode_failed_) decode_failed_ = failed;
  }

  // A frame from rank s can be no larger than its codec makes for the rows and characters the
  // manifest announced for it; a larger size is damage (and would reach align_frame and the
  // buffer sizes).
  void check_frame_size(std::size_t c, int s, std::uint64_t k, std::uint64_t bytes) const {
    auto const i = plan_.incoming(c, s, k);
    encode_source slice{plan_.types[c], plan_.in_rows[i], nullptr};
    slice.chars_bytes = plan_.in_chars[i];
    std::uint64_t const largest = plan_.codecs.of(c).max_frame_bytes(slice);
    if (bytes > largest) {
      ZS_FAIL(error_code::corrupt_frame,
              "the frame sizes of round " + std::to_string(k) + " from rank " + std::to_string(s) + ": " +
                  describe_column(c, plan_.types[c]) + " claims " + std::to_string(bytes) + " bytes for " +
                  std::to_string(slice.count) + " rows, more than the " + std::to_string(largest) +
                  " such a frame can take");
    }
  }

  void retire(buffer& scratch) {
    if constexpr (requires { engine_.retire_scratch(scratch); }) engine_.retire_scratch(scratch);
  }

  void decode_round(round& r) {
    guarded(r, [&] {
      auto const& p = plan_;
      std::size_t const C = p.columns;
      auto const P = static_cast<std::size_t>(p.ranks);
      // Where each received frame starts: source by source, columns in order.
      std::vector<std::uint64_t> frame_at(P * C + 1);
      std::uint64_t at = 0;
      for (std::size_t f = 0; f < P * C; ++f) {
        frame_at[f] = at;
        at += align_frame(r.recv_sizes[f]);
      }
      std::size_t status_at = r.k * P * C;
      for (auto const& g : p.codecs.groups()) {
        std::vector<decode_target> targets;
        std::vector<std::uint64_t> offsets;
        std::uint64_t last_end = 0;
        for (std::size_t s = 0; s < P; ++s) {
          for (std::size_t c : g.columns) {
            targets.push_back(target(c, static_cast<int>(s), r.k));
            offsets.push_back(frame_at[s * C + c]);
            last_end = frame_at[s * C + c] + r.recv_sizes[s * C + c];
          }
        }
        // A frame's room runs to the next frame of the group (other groups' frames may sit in
        // between: an upper bound, still inside the buffer); the last one's ends at its size.
        offsets.push_back(last_end);
        engine_.at(Engine::stage::decode)
            .decode(*g.c, bytes_of(r.recv), offsets, targets,
                    reinterpret_cast<frame_status*>(bytes_of(statuses_)) + status_at);
        status_at += targets.size();
      }
    });
    if (r.failed && !decode_failed_) decode_failed_ = r.failed;
  }

  decode_target target(std::size_t c, int s, std::uint64_t k) {
    auto const i = plan_.incoming(c, s, k);
    return detail::target_rows(outputs_[c], plan_.out_row[i], plan_.in_rows[i], plan_.out_char[i], plan_.in_chars[i]);
  }

  void check_statuses(std::size_t frames_per_round) {
    std::optional<failure> bad = decode_failed_;
    if (!bad) {
      auto const decoder = engine_.at(Engine::stage::decode);
      bad = attempt([&] {
        throw_if_failed(decoder.template read_array<frame_status>(statuses_, plan_.rounds * frames_per_round,
                                                                  "the statuses of the decoded frames"));
      });
    }
    agree(bad, "decoding");
  }

  Engine& engine_;
  communicator& comm_;
  std::span<const shuffle_column> columns_;
  shuffle_options options_;
  detail::shuffle_plan plan_;
  std::vector<column> outputs_;
  buffer statuses_;
  std::optional<failure> decode_failed_;
  shuffle_stats stats_;
  shuffle_progress progress_;
};

}  // namespace

std::vector<column> shuffle(device_communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, cudaStream_t stream, shuffle_stats* stats) {
  device_engine engine(comm, stream);
  return shuffle_driver<device_engine>(engine, columns, options).run(stats);
}

std::vector<column> shuffle(communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, shuffle_stats* stats) {
  host_engine engine(comm);
  return shuffle_driver<host_engine>(engine, columns, options).run(stats);
}

}  // namespace zs
