// The compressed column shuffle (shuffle.hpp): one protocol, two engines.
//
// shuffle_driver runs the protocol; an engine, built on the primitives of collective_engines.hpp,
// says where bytes live and how they move:
//   host_engine    host memory, CPU reference codecs, the host communicator, all synchronous;
//   device_engine  device memory, GPU codecs, a device communicator, three streams (encode,
//                  exchange, decode) chained by events so consecutive rounds overlap.
#include "zs/comm/shuffle.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <chrono>
#include <cstdio>
#include <deque>
#include <optional>
#include <tuple>
#include <string>
#include <string_view>

#include "codec_groups.hpp"
#include "codecs/bitpack/bitpack_codec.hpp"
#include "codecs/fsst/fsst_mode.hpp"
#include "collective_engines.hpp"
#include "common/batch_ops.hpp"
#include "link_bandwidth.hpp"
#include "measured_speeds.hpp"
#include "null_columns.hpp"
#include "shuffle_manifest.hpp"
#include "shuffle_plan.hpp"
#include "zs/error.hpp"
#include "zs/fault.hpp"
#include "zs/log.hpp"
#include "zs/memory.hpp"
#include "zs/null_mask.hpp"

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
  // local: copies of the rows a rank keeps, which need neither the codecs nor the links.
  enum class stage { encode, exchange, decode, local };

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

  // What the planner measures.
  const std::vector<double>& link_bandwidth() { return comm_.link_bandwidth(); }
  // The primitives estimates run with.
  static detail::host_ops estimate_ops() { return {}; }
  static int speed_key() { return -1; }  // CPU codec speeds are remembered apart from any GPU's
  static constexpr std::uint64_t speed_sample_bytes = std::uint64_t{4} << 20;
  template <typename Work>
  static double seconds_of(Work work) {
    auto const start = clock_type::now();
    work();
    return std::chrono::duration<double>(clock_type::now() - start).count();
  }

  void encoded(round_sync&) {}
  static void note(stage, std::string) {}
  static std::string timeline() { return {}; }
  std::vector<std::uint64_t> read_sizes(round_sync&, buffer& sizes, std::size_t n, std::string_view what) {
    return detail::host_ops::read_array<std::uint64_t>(sizes, n, what);
  }
  // Pieces are packed by peer, exchanged with one alltoallv and unpacked.
  void exchange(round_sync&, buffer&, buffer&, std::span<const device_communicator::send_piece> sends,
                std::span<const device_communicator::recv_piece> recvs) {
    auto const ranks = static_cast<std::size_t>(comm_.size());
    auto const out = detail::pack_by_peer(sends, ranks), in = detail::pack_by_peer(recvs, ranks);
    std::vector<std::byte> packed(out.total), landed(in.total);
    for (std::size_t i = 0; i < sends.size(); ++i) {
      if (sends[i].bytes > 0) std::memcpy(packed.data() + out.at[i], sends[i].data, sends[i].bytes);
    }
    comm_.alltoallv(packed, out.counts, landed, in.counts);
    for (std::size_t i = 0; i < recvs.size(); ++i) {
      if (recvs[i].bytes > 0) std::memcpy(recvs[i].data, landed.data() + in.at[i], recvs[i].bytes);
    }
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
  };
  // local: copies of the rows a rank keeps, which need neither the codecs nor the links.
  enum class stage { encode, exchange, decode, local };

  device_engine(device_communicator& comm, cudaStream_t caller) : comm_(comm), caller_(caller) {
    // The stages start after whatever the caller enqueued before the call.
    start_.record(caller_);
    for (cudaStream_t s : streams()) ZS_CUDA_TRY(cudaStreamWaitEvent(s, start_.get(), 0));
  }

  communicator& host() { return comm_.host(); }

  // Each stage's work runs on that stage's stream. Round buffers come from the pool on the
  // stream of the stage that first uses them; each is re-homed to the stream of its last use
  // before it is dropped, so the pool hands it out again only after that use.
  detail::device_ops at(stage s) const {
    return detail::device_ops(s == stage::encode     ? encode_.get()
                              : s == stage::exchange ? exchange_.get()
                              : s == stage::decode   ? decode_.get()
                                                     : local_.get(),
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
    // Raw partitions land in the outputs from the local stream (the rows a rank keeps) and the
    // exchange stream, frames and staged partitions from the decode one.
    for (cudaStream_t s : streams()) ZS_CUDA_TRY(cudaStreamWaitEvent(s, ready.get(), 0));
    return c;
  }

  // What the planner measures, before the pipeline starts.
  const std::vector<double>& link_bandwidth() { return comm_.link_bandwidth(caller_); }
  // The primitives estimates run with: on the caller's stream, before the pipeline starts.
  detail::device_ops estimate_ops() const { return detail::device_ops(caller_, comm_); }
  int speed_key() const {
    int device = 0;
    ZS_CUDA_TRY(cudaGetDevice(&device));
    return device;
  }
  static constexpr std::uint64_t speed_sample_bytes = std::uint64_t{64} << 20;
  // Seconds of the work `work` enqueues on the encode stream.
  template <typename Work>
  double seconds_of(Work work) {
    cuda_event start, stop;
    start.record(encode_);
    work();
    stop.record(encode_);
    comm_.synchronize(encode_, "measuring a codec's speed");
    float ms = 0;
    ZS_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return static_cast<double>(ms) / 1e3;
  }

  void encoded(round_sync& sync) { sync.encoded.record(encode_); }

  // At debug level, when each stage's stream got through `what` (an event on it): the GPU's side
  // of the host phases that mark() logs.
  void note(stage s, std::string what) {
    if (!log::enabled(log::level::debug)) return;
    notes_.emplace_back(std::move(what), cuda_event{});
    notes_.back().second.record(at(s).stream());
  }
  // The notes as "what at X ms" since the call started; waits for them.
  std::string timeline() {
    std::string out;
    for (auto& [what, event] : notes_) {
      event.synchronize();
      char text[96];
      std::snprintf(text, sizeof text, " %s %.3f ms", what.c_str(), event.elapsed_ms_since(start_));
      out += text;
    }
    return out;
  }
  // On a stream of their own, so that reading round k's sizes waits for round k's encode alone,
  // not for round k - 1's transfer on the exchange stream: the host agrees on the sizes and
  // packs round k while round k - 1 is on the wire.
  std::vector<std::uint64_t> read_sizes(round_sync& sync, buffer& sizes, std::size_t n, std::string_view what) {
    // One pinned buffer for every round, grown when needed: pinning memory costs far more
    // than a round's copy, and each read is done before the next begins.
    if (sizes_host_.size() < n * 8) sizes_host_ = pinned_buffer(std::max<std::size_t>(n * 8, 4096));
    ZS_CUDA_TRY(cudaStreamWaitEvent(sizes_, sync.encoded.get(), 0));
    ZS_CUDA_TRY(cudaStreamWaitEvent(exchange_, sync.encoded.get(), 0));  // packing reads the frames
    copy_async(sizes_host_.data(), sizes.data(), n * 8, sizes_);
    comm_.synchronize(sizes_, what);
    return {sizes_host_.as<std::uint64_t>(), sizes_host_.as<std::uint64_t>() + n};
  }
  void exchange(round_sync& sync, buffer& send, buffer& recv, std::span<const device_communicator::send_piece> sends,
                std::span<const device_communicator::recv_piece> recvs) {
    comm_.alltoallv_pieces(sends, recvs, exchange_);
    send.set_stream(exchange_);
    sync.exchanged.record(exchange_);
    ZS_CUDA_TRY(cudaStreamWaitEvent(decode_, sync.exchanged.get(), 0));
    recv.set_stream(decode_);
  }
  void finish() {
    for (cudaStream_t s : {decode_.get(), local_.get()}) {
      cuda_event done;
      done.record(s);
      ZS_CUDA_TRY(cudaStreamWaitEvent(caller_, done.get(), 0));
    }
  }
  // The scratch of round k is read by the exchange stream's packing.
  void retire_scratch(buffer& scratch) { scratch.set_stream(exchange_); }

 private:
  std::array<cudaStream_t, 4> streams() const { return {encode_.get(), exchange_.get(), decode_.get(), local_.get()}; }

  device_communicator& comm_;
  cudaStream_t caller_;
  cuda_event start_;
  std::vector<std::pair<std::string, cuda_event>> notes_;
  // The exchange runs at high priority: the transfer kernels' blocks are not queued behind the
  // copies and codec kernels that fill the GPU on the other streams meanwhile.
  cuda_stream encode_, exchange_ = cuda_stream::high_priority(), decode_, local_, sizes_;
  pinned_buffer sizes_host_;
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
    mark("arguments");
    make_plan();
    progress_.rounds = plan_.rounds;
    progress_.raw_bytes_total = stats_.raw_bytes;
    agree(attempt([&] {
            for (std::size_t c = 0; c < plan_.columns; ++c) {
              outputs_.push_back(
                  engine_.allocate_output(plan_.types[c], plan_.out_rows_total[c], plan_.out_chars_total[c]));
            }
            std::uint64_t const statuses = plan_.rounds * plan_.frames_in_per_round;
            statuses_ = engine_.at(Engine::stage::decode).allocate(statuses * sizeof(frame_status));
          }),
          "allocating the outputs");
    mark("outputs");

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
    mark("rounds");
    check_statuses();
    engine_.finish();
    mark("statuses");
    if (log::enabled(log::level::debug)) {
      log::debug("shuffle: host time by phase:" + phases_);
      if (auto const gpu = engine_.timeline(); !gpu.empty()) log::debug("shuffle: GPU stages done at:" + gpu);
    }
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
    std::vector<device_communicator::send_piece> sends;  // what the exchange moves (plan_pieces)
    std::vector<device_communicator::recv_piece> receives;
    buffer raw_out;                                      // staged raw partitions to peers
    std::vector<std::uint64_t> raw_out_at;               // [d * C + c]: where in raw_out, or none
    std::vector<detail::frame_copy> unstage;             // staged raw partitions received, to the outputs
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
    if (!options_.column_codecs.empty() && options_.column_codecs.size() != columns_.size()) {
      ZS_FAIL(error_code::invalid_argument, "options.column_codecs has " +
                                                std::to_string(options_.column_codecs.size()) +
                                                " entries for " + std::to_string(columns_.size()) + " columns");
    }
    if (!options_.link_bandwidth.empty()) detail::checked_link_bandwidth(options_.link_bandwidth, comm_.size());
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
    std::string text = detail::codec_groups::describe(types, column_codecs()) + ", round_bytes " +
                       std::to_string(options_.round_bytes) + ", forced [";
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      auto const how = forced_carriage(c);
      text += how ? (*how == carriage::raw ? "r" : "c") : "-";
    }
    text += options_.plan == shuffle_options::planning::automatic ? "], planned" : "], compress";
    // Measuring the links is collective: every rank measures, or every rank gives its figures.
    return text + (options_.link_bandwidth.empty() ? ", links measured" : ", links given");
  }

  // Each column's codec: options.codec, else its entry in options.column_codecs, else none
  // (default_codec). Checked to have one entry per column or none.
  std::vector<std::optional<codec_id>> column_codecs() const {
    std::vector<std::optional<codec_id>> out(columns_.size(), options_.codec);
    if (!options_.codec && options_.column_codecs.size() == columns_.size()) out = options_.column_codecs;
    return out;
  }

  // How column c travels on every link when the caller decided it; empty when the planner does.
  std::optional<carriage> forced_carriage(std::size_t c) const {
    auto const id = column_codecs()[c];
    if (id) return *id == codec_id::raw ? carriage::raw : carriage::compressed;
    if (options_.plan == shuffle_options::planning::compress) return carriage::compressed;
    return std::nullopt;
  }

  void make_plan() {
    auto& p = plan_;
    p.ranks = comm_.size();
    p.columns = columns_.size();
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    // The ranks agreed on types and codecs, so this fails on every rank alike.
    for (auto const& col : columns_) p.types.push_back(col.column.type);
    p.codecs = detail::codec_groups(p.types, column_codecs(), "shuffle");
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
    std::size_t const manifest_words = 2 * plan_product(C, R, "manifest") + 1;
    std::size_t const block_words = manifest_words + C + 1;  // the manifest, then the carriages
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
          }),
          "planning");
    mark("boundaries");
    choose_carriages();
    mark("carriages");

    std::vector<std::uint64_t> out, in;
    agree(attempt([&] {
            out.resize(plan_product(P, block_words, "manifest"));
            in.resize(out.size());
            std::vector<detail::slice_counts> slices(C * R);
            std::vector<std::uint8_t> carriages(C);
            for (std::size_t d = 0; d < P; ++d) {
              for (std::size_t c = 0; c < C; ++c) {
                for (std::uint64_t k = 0; k < R; ++k) {
                  auto const b = p.boundary(c, static_cast<int>(d), k);
                  slices[c * R + k] = {p.row_at[b + 1] - p.row_at[b],
                                       static_cast<std::uint64_t>(p.char_at[b + 1] - p.char_at[b])};
                }
                carriages[c] = p.out_carriage[p.link(c, static_cast<int>(d))];
              }
              auto const block = detail::seal_manifest(slices, comm_.rank(), static_cast<int>(d));
              auto const ways = detail::seal_carriages(carriages, comm_.rank(), static_cast<int>(d));
              auto const at = out.begin() + static_cast<std::ptrdiff_t>(d * block_words);
              std::copy(ways.begin(), ways.end(), std::copy(block.begin(), block.end(), at));
            }
          }),
          "sealing the manifest");
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
            p.in_carriage.assign(C * P, 0);
            std::vector<std::uint8_t> most_way(C, 1);
            for (std::size_t c = 0; c < C; ++c) {
              if (p.codecs.alternative(c) != nullptr) most_way[c] = detail::shuffle_plan::by_alternative;
            }
            std::vector<std::uint64_t> out_bytes(C, 0);
            auto const all = std::as_bytes(std::span(in));
            for (std::size_t s = 0; s < P; ++s) {
              auto const slices = detail::read_manifest(all.subspan(s * block_words * 8, manifest_words * 8),
                                                        static_cast<int>(s), comm_.rank(), p.types, R);
              auto const ways = detail::read_carriages(all.subspan((s * block_words + manifest_words) * 8, (C + 1) * 8),
                                                       static_cast<int>(s), comm_.rank(), most_way);
              for (std::size_t c = 0; c < C; ++c) p.in_carriage[p.link(c, static_cast<int>(s))] = ways[c];
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
    mark("manifest");
    p.in_groups = frame_groups(p.in_carriage);
    p.frames_in_per_round = 0;
    for (auto const& g : p.in_groups) {
      for (std::size_t c : g.columns) {
        for (int s = 0; s < p.ranks; ++s) p.frames_in_per_round += p.frame_codec(c, p.in_carriage[p.link(c, s)]) == g.c;
      }
    }
  }

  // The batches of frames that `carriages` (out_carriage or in_carriage) make: per codec, the
  // columns with a frame of that codec on some link.
  std::vector<detail::codec_groups::group> frame_groups(const std::vector<std::uint8_t>& carriages) const {
    std::vector<detail::codec_groups::group> groups;
    for (std::size_t c = 0; c < plan_.columns; ++c) {
      for (int r = 0; r < plan_.ranks; ++r) {
        const codec* const chosen = plan_.frame_codec(c, carriages[plan_.link(c, r)]);
        if (chosen == nullptr) continue;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.c == chosen; });
        if (g == groups.end()) g = groups.insert(groups.end(), {chosen, {}});
        if (g->columns.empty() || g->columns.back() != c) g->columns.push_back(c);
      }
    }
    return groups;
  }

  // Uncompressed bytes of (column c, destination d) over the whole call, as shuffle_stats counts.
  std::uint64_t partition_bytes(std::size_t c, int d) const {
    auto const first = plan_.boundary(c, d, 0), last = plan_.boundary(c, d, plan_.rounds);
    std::uint64_t const rows = plan_.row_at[last] - plan_.row_at[first];
    if (plan_.types[c] != value_type::string) return rows * value_width(plan_.types[c]);
    return static_cast<std::uint64_t>(plan_.char_at[last] - plan_.char_at[first]) + 8 * rows;
  }

  // out_carriage: what the caller forced, and the planner's choice for the rest (stats_.plan).
  // Measuring the links is collective; every rank gets there, since the ranks agreed on what
  // is forced.
  void choose_carriages() {
    auto& p = plan_;
    std::size_t const C = p.columns;
    auto const P = static_cast<std::size_t>(p.ranks);
    p.out_carriage.assign(C * P, 0);
    p.alternative.assign(C, false);
    bool planned = false;
    // Compressed on every link, with a choice of string codec. (An integer column forced
    // compressed keeps bitpack: whether dict pays depends on the links, which only the
    // planner weighs.)
    std::vector<bool> open(C, false);
    for (std::size_t c = 0; c < C; ++c) {
      auto const how = forced_carriage(c);
      planned = planned || !how;
      open[c] = how == carriage::compressed && p.codecs.alternative_by_size(c);
      for (std::size_t d = 0; d < P; ++d) p.out_carriage[c * P + d] = static_cast<std::uint8_t>(how.value_or(carriage::raw));
    }
    if (!planned && std::find(open.begin(), open.end(), true) != open.end()) {
      agree(attempt([&] { estimate_ratios(open); }), "choosing the string codecs");
    }
    if (planned) {
      std::vector<double> links = options_.link_bandwidth;
      if (links.empty()) links = engine_.link_bandwidth();
      agree(attempt([&] {
              auto plan = plan_transfers(planner_inputs_for(std::move(links)));
              for (std::size_t i = 0; i < plan.choice.size(); ++i) {
                p.out_carriage[i] = static_cast<std::uint8_t>(plan.choice[i]);
              }
              stats_.plan = std::move(plan);
            }),
            "planning the transfers");
    }
    stats_.column_codecs.assign(C, codec_id::raw);
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t d = 0; d < P; ++d) {
        auto& how = p.out_carriage[c * P + d];
        if (how == static_cast<std::uint8_t>(carriage::raw)) continue;
        if (p.alternative[c]) how = detail::shuffle_plan::by_alternative;
        stats_.column_codecs[c] = p.frame_codec(c, how)->id();
      }
    }
    p.out_groups = frame_groups(p.out_carriage);
  }

  planner_inputs planner_inputs_for(std::vector<double> links) {
    auto const& p = plan_;
    planner_inputs in;
    in.rank = comm_.rank();
    in.link_bps = std::move(links);
    in.rounds = p.rounds;
    // Speeds first: a column whose codec could not pay on any link even if it compressed to
    // nothing (encoding and decoding a byte take longer than sending it) is not worth an
    // estimate, which encodes a sample. Columns forced raw need neither; columns forced
    // compressed need both, for the prediction.
    constexpr double unused = std::numeric_limits<double>::max();
    std::vector<codec_speed> speeds(p.columns, codec_speed{unused, unused});
    std::vector<bool> worth(p.columns, false);
    for (std::size_t c = 0; c < p.columns; ++c) {
      auto const forced = forced_carriage(c);
      if (forced == carriage::raw) continue;
      speeds[c] = speed_of(p.codecs.of(c), c);
      double const compute = 1 / speeds[c].encode_bps + 1 / speeds[c].decode_bps;
      worth[c] = forced == carriage::compressed;
      for (double link : in.link_bps) worth[c] = worth[c] || 1 / link > compute;
    }
    auto const inputs_with = [&](const std::vector<double>& ratio) {
      planner_inputs with = in;
      for (std::size_t c = 0; c < p.columns; ++c) {
        planner_column col;
        col.name = describe_column(c, p.types[c]);
        col.codec = std::string(p.alternative[c] ? p.codecs.alternative(c)->name() : p.codecs.of(c).name());
        for (int d = 0; d < p.ranks; ++d) col.bytes.push_back(partition_bytes(c, d));
        col.forced = forced_carriage(c);
        col.ratio = ratio[c];
        col.encode_bps = speeds[c].encode_bps;
        col.decode_bps = speeds[c].decode_bps;
        if (p.types[c] == value_type::string) {
          // Raw strings travel in raw frames, whose copies cost time too.
          auto const raw = speed_of(get_codec(codec_id::raw), c);
          col.raw_encode_bps = raw.encode_bps;
          col.raw_decode_bps = raw.decode_bps;
        }
        with.columns.push_back(std::move(col));
      }
      return with;
    };
    // An estimate encodes a sample on every call. It is not needed where even a column that
    // compressed to almost nothing would leave every partition raw: the planner decides the same
    // with any real ratio.
    std::vector<double> unbounded(p.columns, 1.0);
    for (std::size_t c = 0; c < p.columns; ++c) unbounded[c] = worth[c] ? 1e12 : 1.0;
    auto const best_case = plan_transfers(inputs_with(unbounded));
    bool const estimates_matter =
        std::any_of(best_case.choice.begin(), best_case.choice.end(), [](carriage how) { return how == carriage::compressed; });
    // Ratios of the columns worth an estimate (those forced compressed always, for the
    // prediction), and the speed of the string codec each chose.
    std::vector<bool> estimated(p.columns, false);
    for (std::size_t c = 0; c < p.columns; ++c) {
      estimated[c] = worth[c] && (estimates_matter || forced_carriage(c) == carriage::compressed);
    }
    std::vector<double> alternative_ratio;
    auto ratio = estimate_ratios(estimated, &alternative_ratio);
    for (std::size_t c = 0; c < p.columns; ++c) {
      if (p.alternative[c]) speeds[c] = speed_of(*p.codecs.alternative(c), c);
    }
    // Integer columns take dict where its frames are smaller by enough and the plan with
    // it predicts a shorter shuffle, column by column; its speed is measured only for a column
    // whose frames it shrinks.
    double best = plan_transfers(inputs_with(ratio)).predicted.total;
    for (std::size_t c = 0; c < p.columns; ++c) {
      if (p.codecs.alternative_by_size(c) || !(alternative_ratio[c] > codecs::extended_min_gain * ratio[c])) continue;
      codec_speed const classic_speed = speeds[c];
      double const classic_ratio = ratio[c];
      speeds[c] = speed_of(*p.codecs.alternative(c), c);
      ratio[c] = alternative_ratio[c];
      double const with = plan_transfers(inputs_with(ratio)).predicted.total;
      if (with < best) {
        best = with;
        plan_.alternative[c] = true;
      } else {
        speeds[c] = classic_speed;
        ratio[c] = classic_ratio;
      }
    }
    return inputs_with(ratio);
  }

  // The estimated ratio of each column in `wanted` (1 for the others, and for a column with no
  // bytes here, which costs nothing either way), from its first round's partitions: one
  // estimate per codec, batched over the columns. A column with an alternative codec
  // (codec_groups::alternative) is estimated in both: a string column (one symbol table prepared
  // here for both) takes fsst_dict where codecs::choose_string_mode says so (plan_.alternative);
  // an integer column's ratio in dict goes to `alternative_ratio` (where given, 0 for
  // the others) for the caller to weigh.
  std::vector<double> estimate_ratios(const std::vector<bool>& wanted, std::vector<double>* alternative_ratio = nullptr) {
    auto& p = plan_;
    std::vector<double> ratio(p.columns, 1.0);
    if (alternative_ratio != nullptr) alternative_ratio->assign(p.columns, 0.0);
    for (auto const& g : p.codecs.groups()) {
      std::vector<encode_source> pieces;
      std::vector<std::uint64_t> piece_begin{0};
      std::vector<std::size_t> estimated;
      std::vector<value_type> types;
      const codec* alternative = nullptr;
      for (std::size_t c : g.columns) {
        if (!wanted[c]) continue;
        for (int d = 0; d < p.ranks; ++d) pieces.push_back(source(c, d, 0));
        piece_begin.push_back(pieces.size());
        estimated.push_back(c);
        types.push_back(p.types[c]);
        if (p.codecs.alternative(c) != nullptr) alternative = p.codecs.alternative(c);
      }
      if (estimated.empty()) continue;
      auto const e = detail::estimate_batch(engine_.estimate_ops(), *g.c, alternative, pieces, piece_begin, types);
      for (std::size_t i = 0; i < estimated.size(); ++i) {
        std::size_t const c = estimated[i];
        if (e.plain[i].raw_bytes == 0) continue;
        ratio[c] = e.plain[i].ratio();
        if (p.codecs.alternative(c) == nullptr) continue;
        if (!p.codecs.alternative_by_size(c)) {
          if (alternative_ratio != nullptr) (*alternative_ratio)[c] = e.alternative[i].ratio();
          continue;
        }
        p.alternative[c] =
            &codecs::choose_string_mode(e.plain[i].frame_bytes, e.alternative[i].frame_bytes) == p.codecs.alternative(c);
        if (p.alternative[c]) ratio[c] = e.alternative[i].ratio();
      }
    }
    return ratio;
  }

  struct codec_speed {
    double encode_bps = 0, decode_bps = 0;
  };

  // Codec c's speed on column `index`'s first rows (up to Engine::speed_sample_bytes), in
  // uncompressed bytes per second: measured the first time this process meets the codec and
  // the column's type on this device, then remembered for samples up to twice as large
  // (detail::measured_speeds).
  codec_speed speed_of(const codec& c, std::size_t index) {
    static detail::measured_speeds<std::tuple<int, codec_id, value_type>, codec_speed> measured;
    auto const& v = columns_[index].column;
    auto const key = std::make_tuple(engine_.speed_key(), c.id(), v.type);
    std::uint64_t const raw = stats_.column_raw_bytes[index];
    // An empty column moves nothing, whatever the codec's speed: not worth measuring.
    if (v.count == 0 || raw == 0) return {std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
    if (auto const known = measured.find(key, std::min(raw, Engine::speed_sample_bytes))) return *known;
    std::uint64_t const rows =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(v.count, Engine::speed_sample_bytes * v.count / raw));
    std::uint64_t chars = 0;
    if (v.type == value_type::string) {
      auto const ends = engine_.read_offsets(v.offsets, {0, rows});
      chars = static_cast<std::uint64_t>(ends[1] - ends[0]);
    }
    std::vector<std::vector<encode_source>> sources{{detail::source_rows(v, 0, rows, chars)}};
    std::uint64_t const bytes = v.type == value_type::string ? chars + 8 * rows : rows * value_width(v.type);
    auto const ops = engine_.at(Engine::stage::encode);
    std::vector<detail::codec_groups::group> const group{{&c, {index}}};
    std::vector<std::vector<std::size_t>> const column_of{{index}};
    auto const encode = [&] { return detail::encode_groups(ops, group, plan_.types, sources, column_of); };
    encode();  // warm-up
    detail::encoded_groups<buffer> frames;
    double const encode_s = engine_.seconds_of([&] { frames = encode(); });
    std::uint64_t const frame_bytes = ops.template read_array<std::uint64_t>(frames.frame_bytes, 1, "a frame size")[0];
    column out = ops.allocate_output(v.type, rows, chars);
    std::vector<decode_target> const targets{detail::target_rows(out, 0, rows, 0, chars)};
    std::vector<std::uint64_t> const offsets{0, frame_bytes};
    buffer status = ops.allocate(sizeof(frame_status));
    auto const decode = [&] {
      ops.decode(c, bytes_of(frames.scratch), offsets, targets, status.template as<frame_status>());
    };
    decode();  // warm-up
    double const decode_s = engine_.seconds_of(decode);
    throw_if_failed(ops.template read_array<frame_status>(status, 1, "the status of a speed sample"));
    codec_speed const speed{static_cast<double>(bytes) / std::max(encode_s, 1e-9),
                            static_cast<double>(bytes) / std::max(decode_s, 1e-9)};
    measured.remember(key, bytes, speed);
    return speed;
  }

  // At debug level (ZS_LOG_LEVEL=debug) the host time of each phase, logged at the end: where a
  // call's fixed costs go.
  void mark(const char* phase) {
    if (!log::enabled(log::level::debug)) return;
    auto const now = clock_type::now();
    char text[64];
    std::snprintf(text, sizeof text, " %s %.3f ms", phase,
                  std::chrono::duration<double, std::milli>(now - last_mark_).count());
    phases_ += text;
    last_mark_ = now;
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
      for (std::size_t c = 0; c < C; ++c) {
        for (int d = 0; d < p.ranks; ++d) {
          auto const s = source(c, d, k);
          r.raw_bytes += s.type == value_type::string ? s.chars_bytes + 8 * s.count : s.count * value_width(s.type);
        }
      }
      if (k == 0) engine_.note(Engine::stage::encode, "start");
      stage_raw_partitions(r);
      auto const& groups = p.out_groups;
      std::vector<std::vector<encode_source>> sources(groups.size());
      std::vector<std::vector<std::size_t>> column_of(groups.size());
      for (std::size_t g = 0; g < groups.size(); ++g) {
        for (int d = 0; d < p.ranks; ++d) {
          for (std::size_t c : groups[g].columns) {
            if (p.frame_codec(c, p.out_carriage[p.link(c, d)]) != groups[g].c) continue;
            sources[g].push_back(source(c, d, k));
            column_of[g].push_back(c);
            r.order.push_back(static_cast<std::size_t>(d) * C + c);
          }
        }
      }
      r.encoded = detail::encode_groups(engine_.at(Engine::stage::encode), groups, p.types, sources, column_of);
      engine_.encoded(r.sync);
      engine_.note(Engine::stage::encode, "encoded" + std::to_string(k));
    });
  }

  // Raw fixed-width partitions, at encode time so that the copies overlap the previous round's
  // transfer: the rows this rank keeps are copied into its output on a stream of their own (no
  // transfer waits for them), and the rows for a peer that do not start at a 16-byte boundary
  // are staged into an aligned slot (NCCL moves unaligned pieces at about half speed;
  // bench/RESULTS.md).
  void stage_raw_partitions(round& r) {
    auto const& p = plan_;
    std::size_t const C = p.columns;
    r.raw_out_at.assign(static_cast<std::size_t>(p.ranks) * C, not_staged);
    std::vector<detail::frame_copy> copies, kept;
    std::uint64_t staged = 0;
    for (int d = 0; d < p.ranks; ++d) {
      for (std::size_t c = 0; c < C; ++c) {
        if (p.frame_codec(c, p.out_carriage[p.link(c, d)]) != nullptr) continue;
        auto const [from, bytes] = raw_rows_out(c, d, r.k);
        if (bytes == 0) continue;
        if (d == comm_.rank()) {
          kept.push_back({from, raw_rows_in(c, d, r.k).first, bytes});
        } else if (!aligned(from)) {
          r.raw_out_at[static_cast<std::size_t>(d) * C + c] = staged;
          staged += align_slot(bytes);
        }
      }
    }
    auto const encoder = engine_.at(Engine::stage::encode);
    if (staged > 0) {
      r.raw_out = encoder.allocate(staged);
      for (int d = 0; d < p.ranks; ++d) {
        for (std::size_t c = 0; c < C; ++c) {
          auto const at = r.raw_out_at[static_cast<std::size_t>(d) * C + c];
          if (at == not_staged) continue;
          auto const [from, bytes] = raw_rows_out(c, d, r.k);
          copies.push_back({from, bytes_of(r.raw_out) + at, bytes});
        }
      }
    }
    encoder.pack(copies);
    engine_.at(Engine::stage::local).pack(kept);
    engine_.note(Engine::stage::local, "kept" + std::to_string(r.k));
  }

  static constexpr std::uint64_t not_staged = UINT64_MAX;
  static bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
  static std::uint64_t align_slot(std::uint64_t bytes) { return (bytes + 255) / 256 * 256; }

  // The raw rows of (column c, destination d, round k) in the input, and their bytes.
  std::pair<const std::byte*, std::uint64_t> raw_rows_out(std::size_t c, int d, std::uint64_t k) const {
    auto const b = plan_.boundary(c, d, k);
    std::size_t const width = value_width(plan_.types[c]);
    return {static_cast<const std::byte*>(columns_[c].column.data) + plan_.row_at[b] * width,
            (plan_.row_at[b + 1] - plan_.row_at[b]) * width};
  }
  // Where the raw rows of (column c, source s, round k) land in the output, and their bytes.
  std::pair<std::byte*, std::uint64_t> raw_rows_in(std::size_t c, int s, std::uint64_t k) {
    auto const i = plan_.incoming(c, s, k);
    std::size_t const width = value_width(plan_.types[c]);
    return {static_cast<std::byte*>(outputs_[c].mutable_view().data) + plan_.out_row[i] * width,
            plan_.in_rows[i] * width};
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
      std::uint64_t const staging_at = align_slot(recv_total);
      r.send = exchanger.allocate(send_total);
      r.recv = exchanger.allocate(staging_at + receive_staging(r.k));
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
      plan_pieces(r, send_counts, recv_counts, staging_at);
      retire(r.raw_out);
    });
    agree(r);
    engine_.exchange(r.sync, r.send, r.recv, r.sends, r.receives);
    engine_.note(Engine::stage::exchange, "exchanged" + std::to_string(r.k));
    report_progress(r);
  }

  // What round r moves: to and from each rank, its block of frames, then its raw fixed-width
  // partitions from the columns (or their staged copies) into the outputs (or aligned slots of
  // the receive buffer after `staging_at`, unstaged by the decode stage), columns in order. Both
  // ends list the pieces between two ranks alike, from the plan and the manifest; the rows a
  // rank keeps were copied at encode time.
  void plan_pieces(round& r, std::span<const std::uint64_t> send_counts, std::span<const std::uint64_t> recv_counts,
                   std::uint64_t staging_at) {
    auto const& p = plan_;
    std::size_t const C = p.columns;
    r.sends.clear();
    r.receives.clear();
    r.unstage.clear();
    std::uint64_t send_at = 0, recv_at = 0;
    for (int q = 0; q < p.ranks; ++q) {
      auto const rank = static_cast<std::size_t>(q);
      r.sends.push_back({q, bytes_of(r.send) + send_at, send_counts[rank]});
      r.receives.push_back({q, bytes_of(r.recv) + recv_at, recv_counts[rank]});
      send_at += send_counts[rank];
      recv_at += recv_counts[rank];
      for (std::size_t c = 0; c < C; ++c) {
        if (p.frame_codec(c, p.out_carriage[p.link(c, q)]) == nullptr) {
          auto const [from, bytes] = raw_rows_out(c, q, r.k);
          stats_.column_wire_bytes[c] += bytes;
          stats_.wire_bytes += bytes;
          auto const at = r.raw_out_at[rank * C + c];
          if (q != comm_.rank()) r.sends.push_back({q, at == not_staged ? from : bytes_of(r.raw_out) + at, bytes});
        }
        if (p.frame_codec(c, p.in_carriage[p.link(c, q)]) == nullptr && q != comm_.rank()) {
          auto const [to, bytes] = raw_rows_in(c, q, r.k);
          if (bytes == 0 || aligned(to)) {
            r.receives.push_back({q, to, bytes});
          } else {
            r.receives.push_back({q, bytes_of(r.recv) + staging_at, bytes});
            r.unstage.push_back({bytes_of(r.recv) + staging_at, to, bytes});
            staging_at += align_slot(bytes);
          }
        }
      }
    }
  }

  // Bytes of the aligned slots that round k's staged raw partitions need in the receive buffer.
  std::uint64_t receive_staging(std::uint64_t k) {
    std::uint64_t total = 0;
    for (std::size_t c = 0; c < plan_.columns; ++c) {
      for (int s = 0; s < plan_.ranks; ++s) {
        if (s == comm_.rank() || plan_.frame_codec(c, plan_.in_carriage[plan_.link(c, s)]) != nullptr) continue;
        auto const [to, bytes] = raw_rows_in(c, s, k);
        if (bytes > 0 && !aligned(to)) total += align_slot(bytes);
      }
    }
    return total;
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
    const codec* const framed = plan_.frame_codec(c, plan_.in_carriage[plan_.link(c, s)]);
    // A raw fixed-width partition comes as it is, with no frame.
    std::uint64_t const largest = framed == nullptr ? 0 : framed->max_frame_bytes(slice);
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
      engine_.at(Engine::stage::decode).pack(r.unstage);
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
      std::size_t status_at = r.k * p.frames_in_per_round;
      for (auto const& g : p.in_groups) {
        std::vector<decode_target> targets;
        std::vector<std::uint64_t> offsets;
        std::uint64_t last_end = 0;
        for (std::size_t s = 0; s < P; ++s) {
          for (std::size_t c : g.columns) {
            if (p.frame_codec(c, p.in_carriage[p.link(c, static_cast<int>(s))]) != g.c) continue;
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
    engine_.note(Engine::stage::decode, "decoded" + std::to_string(r.k));
    if (r.failed && !decode_failed_) decode_failed_ = r.failed;
  }

  decode_target target(std::size_t c, int s, std::uint64_t k) {
    auto const i = plan_.incoming(c, s, k);
    return detail::target_rows(outputs_[c], plan_.out_row[i], plan_.in_rows[i], plan_.out_char[i], plan_.in_chars[i]);
  }

  void check_statuses() {
    std::optional<failure> bad = decode_failed_;
    if (!bad) {
      auto const decoder = engine_.at(Engine::stage::decode);
      bad = attempt([&] {
        throw_if_failed(decoder.template read_array<frame_status>(statuses_, plan_.rounds * plan_.frames_in_per_round,
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
  clock_type::time_point last_mark_ = clock_type::now();
  std::string phases_;
};

// ---------------------------------------------------------------------------------------------
// Null masks: a nullable column's validity travels as one more column, of uint8 0/1 values (one
// per row, so the protocol slices it by rows like any fixed-width column), after the caller's
// columns. It is compressed by the bitmap codec (a bit a row, and a frame whose rows are all
// valid or all null a header and a byte) unless the caller sends its column raw. On arrival it
// is packed back into the output column's null mask. A column whose rows are all valid, or all
// null, on every rank sends no validity at all (null_columns.hpp).

constexpr std::string_view shuffle_name = "shuffle";

// The caller's columns with their validity columns, and the options that send them.
struct columns_with_validity {
  std::vector<shuffle_column> columns;  // the caller's, then one validity column per mixed one
  std::vector<column> validity;         // the validity columns' bytes
  std::vector<std::size_t> of;          // the caller's column of each validity column
  std::vector<detail::nulls_kind> nulls;  // per caller's column; empty when no column has a mask
  shuffle_options options;

  bool sends_validity() const { return !of.empty(); }
};

// The validity column of every column with both valid and null rows (all 1 where this rank's
// column has no mask), and what the others' masks will be. Collective; a failure on one rank is
// every rank's.
columns_with_validity add_validity(communicator& comm, std::span<const shuffle_column> columns,
                                   const shuffle_options& options, memory_kind memory, cudaStream_t stream) {
  columns_with_validity out;
  std::vector<column_view> views;
  for (auto const& c : columns) views.push_back(c.column);
  out.nulls = detail::column_nulls(comm, shuffle_name, views, std::nullopt, memory, stream);
  if (std::all_of(out.nulls.begin(), out.nulls.end(), [](auto k) { return k == detail::nulls_kind::none; })) {
    out.nulls.clear();
    return out;
  }
  agree_on(comm, shuffle_name, "checking the arguments", [&] {
    if (!options.column_codecs.empty() && options.column_codecs.size() != columns.size()) {
      ZS_FAIL(error_code::invalid_argument, "options.column_codecs has " + std::to_string(options.column_codecs.size()) +
                                                " entries for " + std::to_string(columns.size()) + " columns");
    }
  });
  agree_on(comm, shuffle_name, "expanding the null masks", [&] {
    std::vector<std::optional<codec_id>> codecs(columns.size(), options.codec);
    if (!options.codec && !options.column_codecs.empty()) codecs = options.column_codecs;
    out.columns.assign(columns.begin(), columns.end());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (out.nulls[c] != detail::nulls_kind::mixed) continue;
      auto const& v = columns[c].column;
      column valid = column::allocate(value_type::uint8, v.count, memory, stream);
      expand_null_mask(v.null_mask, v.count, valid.mutable_view().values<std::uint8_t>(), memory, stream);
      out.columns.push_back({valid.view(), columns[c].row_offsets});
      out.validity.push_back(std::move(valid));
      out.of.push_back(c);
      codecs.push_back(codecs[c] == codec_id::raw ? codec_id::raw : codec_id::bitmap);
    }
    out.options = options;
    out.options.codec.reset();
    out.options.column_codecs = std::move(codecs);
  });
  return out;
}

// The received validity columns packed into their columns' null masks, and their bytes counted
// in their columns' stats; the uniform masks written.
void restore_null_masks(communicator& comm, columns_with_validity& sent, std::vector<column>& outputs,
                        memory_kind memory, cudaStream_t stream, shuffle_stats* stats) {
  std::size_t const C = outputs.size() - sent.of.size();
  agree_on(comm, shuffle_name, "packing the null masks", [&] {
    for (std::size_t j = 0; j < sent.of.size(); ++j) {
      column& target = outputs[sent.of[j]];
      column const& valid = outputs[C + j];
      pack_null_mask(valid.view().values<std::uint8_t>(), valid.size(), target.add_null_mask(stream), memory, stream);
    }
    for (std::size_t c = 0; c < C; ++c) {
      auto const kind = sent.nulls[c];
      if (kind == detail::nulls_kind::all_valid || kind == detail::nulls_kind::all_null) {
        detail::add_uniform_null_mask(outputs[c], kind, stream);
      }
    }
  });
  outputs.resize(C);  // device memory goes back on the stream the packing ran on
  if (stats == nullptr) return;
  stats->column_null_raw_bytes.assign(C, 0);
  stats->column_null_wire_bytes.assign(C, 0);
  for (std::size_t j = 0; j < sent.of.size(); ++j) {
    std::size_t const c = sent.of[j];
    stats->column_null_raw_bytes[c] = stats->column_raw_bytes[C + j];
    stats->column_null_wire_bytes[c] = stats->column_wire_bytes[C + j];
    stats->column_raw_bytes[c] += stats->column_raw_bytes[C + j];
    stats->column_wire_bytes[c] += stats->column_wire_bytes[C + j];
  }
  stats->column_raw_bytes.resize(C);
  stats->column_wire_bytes.resize(C);
}

// Runs `move` (the driver over columns and options) with the validity columns added, where
// there are any.
template <typename Move>
std::vector<column> shuffle_with_nulls(communicator& comm, std::span<const shuffle_column> columns,
                                       const shuffle_options& options, memory_kind memory, cudaStream_t stream,
                                       shuffle_stats* stats, Move move) {
  auto const start = clock_type::now();
  columns_with_validity sent;
  {
    detail::call_timeout const timeout(comm, options.timeout);
    sent = add_validity(comm, columns, options, memory, stream);
  }
  if (sent.nulls.empty()) {
    auto outputs = move(columns, options, stats);
    if (stats != nullptr) {
      stats->column_null_raw_bytes.assign(outputs.size(), 0);
      stats->column_null_wire_bytes.assign(outputs.size(), 0);
    }
    return outputs;
  }
  auto outputs = sent.sends_validity() ? move(std::span<const shuffle_column>(sent.columns), sent.options, stats)
                                       : move(columns, options, stats);
  detail::call_timeout const timeout(comm, options.timeout);
  restore_null_masks(comm, sent, outputs, memory, stream, stats);
  if (stats != nullptr) stats->seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return outputs;
}

}  // namespace

std::vector<column> shuffle(device_communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, cudaStream_t stream, shuffle_stats* stats) {
  return shuffle_with_nulls(comm.host(), columns, options, memory_kind::device, stream, stats,
                            [&](std::span<const shuffle_column> all, const shuffle_options& how, shuffle_stats* s) {
                              device_engine engine(comm, stream);
                              return shuffle_driver<device_engine>(engine, all, how).run(s);
                            });
}

std::vector<column> shuffle(communicator& comm, std::span<const shuffle_column> columns,
                            const shuffle_options& options, shuffle_stats* stats) {
  return shuffle_with_nulls(comm, columns, options, memory_kind::host, nullptr, stats,
                            [&](std::span<const shuffle_column> all, const shuffle_options& how, shuffle_stats* s) {
                              host_engine engine(comm);
                              return shuffle_driver<host_engine>(engine, all, how).run(s);
                            });
}

}  // namespace zs
