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

#include "collective_engines.hpp"
#include "common/batch_ops.hpp"
#include "shuffle_plan.hpp"
#include "zs/error.hpp"
#include "zs/hash.hpp"
#include "zs/memory.hpp"

namespace zs {

const codec& default_codec(value_type type) {
  if (is_integer(type)) {
    for (const codec* c : all_codecs()) {
      if (c->id() == codec_id::bitpack_for && c->supports(type)) return *c;
    }
  }
  return get_codec(codec_id::raw);
}

namespace {

using clock_type = std::chrono::steady_clock;
using detail::attempt;
using detail::bytes_of;
using detail::failure;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

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
  std::vector<std::uint64_t> read_sizes(round_sync&, buffer& sizes, std::size_t n) {
    return detail::host_ops::read_array<std::uint64_t>(sizes, n);
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
                                                     : decode_.get());
  }

  std::vector<std::int64_t> read_offsets(const std::int64_t* offsets, const std::vector<std::uint64_t>& rows) {
    std::vector<std::int64_t> out(rows.size());
    if (rows.empty()) return out;
    device_buffer index(rows.size() * 8, caller_);
    device_buffer values(rows.size() * 8, caller_);
    copy_async(index.data(), rows.data(), rows.size() * 8, caller_);
    kernels::gather_i64(offsets, index.as<std::uint64_t>(), values.as<std::int64_t>(), rows.size(), caller_);
    copy_async(out.data(), values.data(), rows.size() * 8, caller_);
    ZS_CUDA_TRY(cudaStreamSynchronize(caller_));
    return out;
  }
  column allocate_output(value_type type, std::uint64_t rows, std::uint64_t chars) {
    // On the caller's stream, so the outputs outlive this shuffle's streams.
    column c = detail::device_ops(caller_).allocate_output(type, rows, chars);
    cuda_event ready;
    ready.record(caller_);
    ZS_CUDA_TRY(cudaStreamWaitEvent(decode_, ready.get(), 0));
    return c;
  }

  void encoded(round_sync& sync) { sync.encoded.record(encode_); }
  std::vector<std::uint64_t> read_sizes(round_sync& sync, buffer& sizes, std::size_t n) {
    sync.sizes = pinned_buffer(std::max<std::size_t>(n * 8, 8));
    ZS_CUDA_TRY(cudaStreamWaitEvent(exchange_, sync.encoded.get(), 0));
    copy_async(sync.sizes.data(), sizes.data(), n * 8, exchange_);
    ZS_CUDA_TRY(cudaStreamSynchronize(exchange_));
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
    check_arguments();
    make_plan();
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
    buffer scratch, frame_bytes, send, recv;
    std::vector<std::uint64_t> group_base;               // byte offset of each group in scratch
    std::vector<std::vector<std::uint64_t>> layouts;     // per group
    std::vector<std::size_t> order;                      // frame index f = d * C + c, in group order
    std::vector<std::uint64_t> recv_sizes;               // [s * C + c]
    std::optional<failure> failed;                       // this rank's error in a local stage
  };

  void check_arguments() {
    int const ranks = comm_.size();
    bool ok = true;
    std::uint64_t signature = columns_.size();
    for (auto const& col : columns_) {
      auto const& off = col.row_offsets;
      ok = ok && is_valid(col.column.type) && col.column.memory == Engine::memory &&
           off.size() == static_cast<std::size_t>(ranks) + 1 && off.front() == 0 && off.back() == col.column.count &&
           std::is_sorted(off.begin(), off.end()) &&
           (col.column.count == 0 || col.column.data != nullptr || col.column.type == value_type::string) &&
           (col.column.type != value_type::string || col.column.offsets != nullptr);
      value_type const type = is_valid(col.column.type) ? col.column.type : value_type::int32;
      codec_id const id = options_.codec ? *options_.codec : default_codec(type).id();
      signature = hash::mix64(signature * 31 + static_cast<std::uint64_t>(col.column.type) * 257 +
                              static_cast<std::uint64_t>(id));
    }
    if (!comm_.all_ok(ok)) {
      ZS_FAIL(error_code::invalid_argument,
              std::string("shuffle: a rank passed a bad column or row offsets") + (ok ? "" : " (this rank)"));
    }
    if (comm_.allreduce_min(signature) != comm_.allreduce_max(signature)) {
      ZS_FAIL(error_code::invalid_argument, "shuffle: ranks pass different column counts, types or codecs");
    }
  }

  void make_plan() {
    auto& p = plan_;
    p.ranks = comm_.size();
    p.columns = columns_.size();
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    for (auto const& col : columns_) {
      p.types.push_back(col.column.type);
      p.codec_of.push_back(options_.codec ? &get_codec(*options_.codec) : &default_codec(col.column.type));
      if (!p.codec_of.back()->supports(col.column.type)) {
        ZS_FAIL(error_code::unsupported, "shuffle: codec '" + std::string(p.codec_of.back()->name()) +
                                             "' does not encode " + std::string(to_string(col.column.type)));
      }
    }
    // Rounds: enough that no rank encodes more than round_bytes per round.
    std::uint64_t raw = 0;
    stats_.column_raw_bytes.assign(C, 0);
    stats_.column_wire_bytes.assign(C, 0);
    agree(attempt([&] {
            for (std::size_t c = 0; c < C; ++c) {
              auto const& v = columns_[c].column;
              if (v.type == value_type::string) {
                auto const ends = engine_.read_offsets(v.offsets, {0, v.count});
                stats_.column_raw_bytes[c] = static_cast<std::uint64_t>(ends[1] - ends[0]) + 8 * v.count;
              } else {
                stats_.column_raw_bytes[c] = v.count * value_width(v.type);
              }
              raw += stats_.column_raw_bytes[c];
            }
          }),
          "planning");
    stats_.raw_bytes = raw;
    ZS_EXPECTS(options_.round_bytes > 0, "round_bytes above zero");
    p.rounds = comm_.allreduce_max(std::max<std::uint64_t>(1, ceil_div(raw, options_.round_bytes)));
    std::uint64_t const R = p.rounds;

    // Round boundaries of every (column, destination) partition.
    p.row_at.assign(C * P * (R + 1), 0);
    p.char_at.assign(C * P * (R + 1), 0);
    agree(attempt([&] {
            for (std::size_t c = 0; c < C; ++c) {
              auto const& off = columns_[c].row_offsets;
              for (std::size_t d = 0; d < P; ++d) {
                std::uint64_t const rows = off[d + 1] - off[d];
                for (std::uint64_t k = 0; k <= R; ++k) {
                  p.row_at[p.boundary(c, static_cast<int>(d), k)] = off[d] + rows * k / R;
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
          }),
          "planning");

    // Tell every destination what each round brings: rows and characters per (column, round).
    std::size_t const words = C * R * 2;
    std::vector<std::uint64_t> out(P * words), in(P * words);
    for (std::size_t d = 0; d < P; ++d) {
      for (std::size_t c = 0; c < C; ++c) {
        for (std::uint64_t k = 0; k < R; ++k) {
          auto const b = p.boundary(c, static_cast<int>(d), k);
          std::uint64_t* w = &out[d * words + (c * R + k) * 2];
          w[0] = p.row_at[b + 1] - p.row_at[b];
          w[1] = static_cast<std::uint64_t>(p.char_at[b + 1] - p.char_at[b]);
        }
      }
    }
    std::vector<std::uint64_t> counts(P, words * 8);
    comm_.alltoallv(std::as_bytes(std::span(out)), counts, std::as_writable_bytes(std::span(in)), counts);

    // Where everything received lands: by source rank, then round.
    p.in_rows.assign(C * P * R, 0);
    p.in_chars.assign(C * P * R, 0);
    p.out_row.assign(C * P * R, 0);
    p.out_char.assign(C * P * R, 0);
    p.out_rows_total.assign(C, 0);
    p.out_chars_total.assign(C, 0);
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t s = 0; s < P; ++s) {
        for (std::uint64_t k = 0; k < R; ++k) {
          auto const i = p.incoming(c, static_cast<int>(s), k);
          const std::uint64_t* w = &in[s * words + (c * R + k) * 2];
          p.in_rows[i] = w[0];
          p.in_chars[i] = w[1];
          p.out_row[i] = p.out_rows_total[c];
          p.out_char[i] = p.out_chars_total[c];
          p.out_rows_total[c] += w[0];
          p.out_chars_total[c] += w[1];
        }
      }
    }

    // Codec groups, in order of first use.
    for (std::size_t c = 0; c < C; ++c) {
      auto it = std::find_if(p.groups.begin(), p.groups.end(), [&](auto const& g) { return g.c == p.codec_of[c]; });
      if (it == p.groups.end()) {
        p.groups.push_back({p.codec_of[c], {}});
        it = p.groups.end() - 1;
      }
      it->columns.push_back(c);
    }
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
      std::uint64_t scratch_bytes = 0;
      std::vector<std::vector<encode_source>> sources(p.groups.size());
      for (std::size_t g = 0; g < p.groups.size(); ++g) {
        for (int d = 0; d < p.ranks; ++d) {
          for (std::size_t c : p.groups[g].columns) {
            sources[g].push_back(source(c, d, k));
            r.order.push_back(static_cast<std::size_t>(d) * C + c);
          }
        }
        r.layouts.push_back(layout_frames(*p.groups[g].c, sources[g]));
        r.group_base.push_back(scratch_bytes);
        scratch_bytes += r.layouts.back().back();
      }
      auto const encoder = engine_.at(Engine::stage::encode);
      r.scratch = encoder.allocate(scratch_bytes);
      r.frame_bytes = encoder.allocate(r.order.size() * 8);
      std::size_t first = 0;
      for (std::size_t g = 0; g < p.groups.size(); ++g) {
        encoder.encode(*p.groups[g].c, sources[g], bytes_of(r.scratch) + r.group_base[g], r.layouts[g],
                       reinterpret_cast<std::uint64_t*>(bytes_of(r.frame_bytes)) + first);
        first += sources[g].size();
      }
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
    auto const& p = plan_;
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    std::vector<std::uint64_t> sizes;  // per frame f = d * C + c
    guarded(r, [&] {
      auto const in_group_order = engine_.read_sizes(r.sync, r.frame_bytes, r.order.size());
      sizes.assign(P * C, 0);
      for (std::size_t i = 0; i < r.order.size(); ++i) sizes[r.order[i]] = in_group_order[i];
    });
    // Agreement point: a rank that failed so far (or at an earlier decode) stops everyone.
    agree(r);
    // Frame sizes to their destinations: C words per destination.
    std::vector<std::uint64_t> words(P, C * 8);
    r.recv_sizes.assign(P * C, 0);
    comm_.alltoallv(std::as_bytes(std::span(sizes)), words, std::as_writable_bytes(std::span(r.recv_sizes)), words);

    std::vector<std::uint64_t> send_counts(P, 0), recv_counts(P, 0);
    for (std::size_t d = 0; d < P; ++d) {
      for (std::size_t c = 0; c < C; ++c) {
        send_counts[d] += align_frame(sizes[d * C + c]);
        recv_counts[d] += align_frame(r.recv_sizes[d * C + c]);
        stats_.column_wire_bytes[c] += align_frame(sizes[d * C + c]);
      }
    }
    std::uint64_t send_total = 0, recv_total = 0;
    for (std::size_t d = 0; d < P; ++d) send_total += send_counts[d], recv_total += recv_counts[d];
    stats_.wire_bytes += send_total;

    guarded(r, [&] {
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
      for (std::size_t g = 0; g < p.groups.size(); ++g) {
        for (std::size_t j = 0; j + 1 < r.layouts[g].size(); ++j, ++i) {
          std::size_t const f = r.order[i];
          copies.push_back({bytes_of(r.scratch) + r.group_base[g] + r.layouts[g][j], bytes_of(r.send) + frame_at[f],
                            sizes[f]});
        }
      }
      exchanger.pack(copies);
      retire(r.scratch);
    });
    agree(r);
    engine_.exchange(r.sync, r.send, send_counts, r.recv, recv_counts);
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
      for (auto const& g : p.groups) {
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
        throw_if_failed(decoder.template read_array<frame_status>(statuses_, plan_.rounds * frames_per_round));
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
