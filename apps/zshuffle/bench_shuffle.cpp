// zshuffle bench shuffle: compressed all-to-all vs the raw all-to-all of the same bytes, over
// the same transport, in the same run.
//
// Each rank tiles the real columns (integers, floats and strings) to --bytes in total, hash-partitions the rows by
// value across ranks (as a join or group-by shuffle would), and then times, after a warm-up,
// the median of --repeat runs of:
//   plain       the reference a user would write: the same bytes per peer in cudaMalloc
//               buffers of its own, each block 256-byte aligned; over NCCL one grouped ncclSend
//               and ncclRecv per peer (nccl-tests style), over MPI (--mpi) a copy to pinned host
//               memory, one MPI_Alltoallv and a copy back (below 2 GiB a rank);
//   raw         one all-to-all of all partitions through zshuffle's device communicator,
//               uncompressed (packed once by destination, blocks 256-byte aligned, untimed);
//   compressed  zs::shuffle of the same columns: encode, exchange frames, decode, verify status.
// Speedups are against the faster of plain and raw.
// NCCL reads its link settings (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_NET ...) when it
// starts, so each link setting is its own mpirun; --label names it in the output.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "geometry.hpp"
#include "job.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "shuffle_job.hpp"
#include "zs/comm/error.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/mpi_device_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/comm/shuffle.hpp"
#include "zs/device.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct bench_column {
  std::string name;
  zs::column host;                          // tiled and grouped by destination
  std::vector<std::uint64_t> row_offsets;   // ranks + 1
  zs::column device;
};

// Tiles `file` to about `bytes` uncompressed bytes (values; for strings characters and 8-byte
// offsets), then groups the rows by destination (hash of the value's bytes mod ranks).
bench_column prepare(const std::filesystem::path& file, std::uint64_t bytes, int ranks, int me) {
  zs::column const whole = zs::io::read_column(file);
  ZS_EXPECTS(whole.size() > 0, "a non-empty column");
  auto const v = whole.view();
  bool const strings = v.type == zs::value_type::string;
  std::size_t const width = zs::value_width(v.type);
  auto const* src = static_cast<const std::byte*>(v.data);
  auto const row_of = [&](std::uint64_t j) -> std::pair<const std::byte*, std::uint64_t> {
    if (!strings) return {src + j * width, width};
    return {src + v.offsets[j], static_cast<std::uint64_t>(v.offsets[j + 1] - v.offsets[j])};
  };
  std::uint64_t const row_bytes =
      strings ? std::max<std::uint64_t>(1, (whole.data_bytes() + 8 * v.count) / v.count) : width;
  std::uint64_t const rows = std::max<std::uint64_t>(1, bytes / row_bytes);
  // Each rank starts its tiles at another row, so ranks do not send identical data.
  std::uint64_t const shift = v.count * static_cast<std::uint64_t>(me) / static_cast<std::uint64_t>(ranks);
  std::vector<int> dest(rows);
  std::vector<std::uint64_t> offsets(ranks + 1, 0);
  std::uint64_t chars = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    auto const [at, n] = row_of((i + shift) % v.count);
    std::uint64_t key = 0;
    if (strings) {
      key = zs::hash::checksum(at, n);
      chars += n;
    } else {
      std::memcpy(&key, at, n);
    }
    dest[i] = static_cast<int>(zs::hash::mix64(key) % static_cast<std::uint64_t>(ranks));
    ++offsets[dest[i] + 1];
  }
  for (int d = 0; d < ranks; ++d) offsets[d + 1] += offsets[d];
  bench_column c;
  c.name = file.filename().string();
  c.host = zs::column::allocate(v.type, rows, zs::memory_kind::host, nullptr, chars);
  auto const out = c.host.mutable_view();
  auto* const out_bytes = static_cast<std::byte*>(out.data);
  std::vector<std::uint64_t> next(offsets.begin(), offsets.end() - 1);
  if (strings) {
    // Row positions first, then the characters in row order.
    std::vector<std::uint64_t> length(rows);
    for (std::uint64_t i = 0; i < rows; ++i) length[next[dest[i]]++] = row_of((i + shift) % v.count).second;
    out.offsets[0] = 0;
    for (std::uint64_t r = 0; r < rows; ++r) out.offsets[r + 1] = out.offsets[r] + static_cast<std::int64_t>(length[r]);
    std::copy(offsets.begin(), offsets.end() - 1, next.begin());
  }
  for (std::uint64_t i = 0; i < rows; ++i) {
    auto const [at, n] = row_of((i + shift) % v.count);
    std::uint64_t const r = next[dest[i]]++;
    if (n > 0) std::memcpy(out_bytes + (strings ? static_cast<std::uint64_t>(out.offsets[r]) : r * width), at, n);
  }
  c.row_offsets = std::move(offsets);
  return c;
}

// The uncompressed bytes of rows [first, last) of a column: values, or characters and offsets.
std::uint64_t rows_bytes(const zs::column& host, std::uint64_t first, std::uint64_t last) {
  auto const v = host.view();
  if (v.type != zs::value_type::string) return (last - first) * zs::value_width(v.type);
  return static_cast<std::uint64_t>(v.offsets[last] - v.offsets[first]) + 8 * (last - first);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct measurement {
  std::string transport;
  double raw_s = 0, compressed_s = 0;
  std::optional<double> plain_s;  // the plain reference of the same transport
  std::uint64_t raw_bytes = 0, wire_bytes = 0;  // this rank's, sent
  std::uint64_t rounds = 0;
  std::vector<std::string> geometry;  // the launch geometry of each kernel of the compressed run
  std::optional<zs::transfer_plan> plan;  // this rank's plan of the last compressed run
  std::uint64_t compressed_links = 0, links = 0;  // (column, destination) pairs of this rank
};

// Device memory of its own (cudaMalloc, not the pool), as a plain NCCL program holds it.
class plain_buffer {
 public:
  explicit plain_buffer(std::uint64_t bytes) { ZS_CUDA_TRY(cudaMalloc(&data_, std::max<std::uint64_t>(bytes, 1))); }
  ~plain_buffer() { cudaFree(data_); }
  plain_buffer(const plain_buffer&) = delete;
  plain_buffer& operator=(const plain_buffer&) = delete;
  std::byte* data() const noexcept { return static_cast<std::byte*>(data_); }

 private:
  void* data_ = nullptr;
};

// Where each peer's block starts in a plain buffer: at 256-byte boundaries, as separately
// allocated or equally sized blocks of nccl-tests are aligned.
std::vector<std::uint64_t> plain_layout(std::span<const std::uint64_t> counts) {
  std::vector<std::uint64_t> at(counts.size() + 1, 0);
  for (std::size_t p = 0; p < counts.size(); ++p) at[p + 1] = at[p] + (counts[p] + 255) / 256 * 256;
  return at;
}

// Whether MPI_Alltoallv's int counts and displacements hold a plain layout (below 2 GiB a rank).
bool plain_mpi_fits(std::span<const std::uint64_t> send_at, std::span<const std::uint64_t> recv_at) {
  auto const limit = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  return send_at.back() <= limit && recv_at.back() <= limit;
}

// Times `run` (which must leave the device idle when it returns) on every rank: the slowest
// rank's time per repetition, median over repetitions after one warm-up. Each run, warm-up
// included, is a step of `phase` on the progress line, moving `bytes` of this rank's.
template <typename Run>
double time_collective(zs::communicator& comm, int repeat, zs::cli::progress_display& progress, std::string phase,
                       std::uint64_t bytes, Run run) {
  auto const runs = static_cast<std::uint64_t>(repeat) + 1;
  progress.begin(std::move(phase), "run");
  run();
  progress.update(1, runs, static_cast<double>(bytes));
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    auto const start = clock_type::now();
    run();
    double const mine = std::chrono::duration<double>(clock_type::now() - start).count();
    seconds.push_back(static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(mine * 1e9))) / 1e9);
    progress.update(static_cast<std::uint64_t>(r) + 2, runs, static_cast<double>(bytes) * static_cast<double>(r + 2));
  }
  return median(seconds);
}

measurement measure(zs::mpi_communicator& comm, zs::device_communicator& device, std::vector<bench_column>& columns,
                    const zs::shuffle_options& options, int repeat, cudaStream_t stream,
                    zs::cli::progress_display& progress) {
  int const ranks = comm.size();
  measurement m;
  m.transport = std::string(device.transport());

  // Raw: all partitions packed by destination, one all-to-all. Each destination's block is
  // padded to a multiple of 256 bytes, so that every block starts aligned: NCCL moves blocks at
  // 1- or 4-byte boundaries at about half the speed of 16-byte aligned ones (4 x H100, NVLink:
  // 152 against 289 GB/s a rank; bench/RESULTS.md), and a user would align them. The padding
  // (under 256 bytes a destination) is sent but not counted as payload.
  std::vector<std::uint64_t> payload_counts(ranks, 0), send_counts(ranks, 0);
  for (auto const& c : columns) {
    for (int d = 0; d < ranks; ++d) payload_counts[d] += rows_bytes(c.host, c.row_offsets[d], c.row_offsets[d + 1]);
  }
  std::uint64_t send_total = 0, payload_total = 0;
  for (int d = 0; d < ranks; ++d) {
    send_counts[d] = (payload_counts[d] + 255) / 256 * 256;
    send_total += send_counts[d];
    payload_total += payload_counts[d];
  }
  auto const recv_counts = comm.exchange_counts(send_counts);
  std::uint64_t recv_total = 0;
  for (auto b : recv_counts) recv_total += b;
  zs::device_buffer send(send_total, stream), recv(recv_total, stream);
  {
    std::vector<std::byte> packed(send_total);
    std::vector<std::uint64_t> at(ranks, 0);
    for (int d = 1; d < ranks; ++d) at[d] = at[d - 1] + send_counts[d - 1];
    for (auto const& c : columns) {
      auto const v = c.host.view();
      auto const* src = static_cast<const std::byte*>(v.data);
      for (int d = 0; d < ranks; ++d) {
        std::uint64_t const first = c.row_offsets[d], last = c.row_offsets[d + 1];
        if (v.type == zs::value_type::string) {
          // Characters, then the rows' offsets: the bytes a string partition moves.
          auto const chars = static_cast<std::uint64_t>(v.offsets[last] - v.offsets[first]);
          std::memcpy(packed.data() + at[d], src + v.offsets[first], chars);
          std::memcpy(packed.data() + at[d] + chars, v.offsets + first, 8 * (last - first));
          at[d] += chars + 8 * (last - first);
        } else {
          std::uint64_t const bytes = rows_bytes(c.host, first, last);
          std::memcpy(packed.data() + at[d], src + first * zs::value_width(v.type), bytes);
          at[d] += bytes;
        }
      }
    }
    zs::copy_async(send.data(), packed.data(), send_total, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  m.raw_bytes = payload_total;
  m.raw_s = time_collective(comm, repeat, progress, m.transport + " raw", payload_total, [&] {
    device.alltoallv(send.as<std::byte>(), send_counts, recv.as<std::byte>(), recv_counts, stream,
                     zs::device_communicator::sizes::agreed);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  });

  // The plain reference: the same bytes per peer, in buffers of its own (cudaMalloc), every
  // peer's block 256-byte aligned, moved as a user of the transport would move them.
  auto const plain_recv_counts = comm.exchange_counts(payload_counts);
  auto const send_at = plain_layout(payload_counts), recv_at = plain_layout(plain_recv_counts);
  plain_buffer plain_send(send_at.back()), plain_recv(recv_at.back());
  if (auto* nccl = dynamic_cast<zs::nccl_communicator*>(&device)) {
    // nccl-tests style: one grouped ncclSend and ncclRecv per peer in rank order.
    m.plain_s = time_collective(comm, repeat, progress, m.transport + " plain", payload_total, [&] {
      ZS_NCCL_TRY(ncclGroupStart());
      for (int p = 0; p < ranks; ++p) {
        auto const q = static_cast<std::size_t>(p);
        ZS_NCCL_TRY(ncclSend(plain_send.data() + send_at[q], payload_counts[q], ncclChar, p, nccl->get(), stream));
        ZS_NCCL_TRY(ncclRecv(plain_recv.data() + recv_at[q], plain_recv_counts[q], ncclChar, p, nccl->get(), stream));
      }
      ZS_NCCL_TRY(ncclGroupEnd());
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    });
  } else if (plain_mpi_fits(send_at, recv_at)) {
    // Host MPI: the bytes down to pinned memory, one MPI_Alltoallv, the received bytes up again.
    auto const ints = [](std::span<const std::uint64_t> v) { return std::vector<int>(v.begin(), v.end()); };
    std::vector<int> const send_n = ints(payload_counts), recv_n = ints(plain_recv_counts);
    std::vector<int> const send_d = ints(std::span(send_at).first(ranks)), recv_d = ints(std::span(recv_at).first(ranks));
    zs::pinned_buffer host_send(send_at.back()), host_recv(recv_at.back());
    m.plain_s = time_collective(comm, repeat, progress, m.transport + " plain", payload_total, [&] {
      zs::copy_async(host_send.data(), plain_send.data(), send_at.back(), stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
      ZS_MPI_TRY(MPI_Alltoallv(host_send.data(), send_n.data(), send_d.data(), MPI_BYTE, host_recv.data(),
                               recv_n.data(), recv_d.data(), MPI_BYTE, comm.get()));
      zs::copy_async(plain_recv.data(), host_recv.data(), recv_at.back(), stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    });
  }

  // Compressed: the shuffle of the same columns.
  std::vector<zs::shuffle_column> inputs;
  for (auto const& c : columns) inputs.push_back({c.device.view(), c.row_offsets});
  zs::shuffle_stats stats;
  m.compressed_s = time_collective(comm, repeat, progress, m.transport + " compressed", payload_total, [&] {
    auto out = zs::shuffle(device, inputs, options, stream, &stats);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  });
  m.wire_bytes = stats.wire_bytes;
  m.rounds = stats.rounds;
  m.plan = stats.plan;
  if (m.plan) {
    for (auto how : m.plan->choice) m.compressed_links += how == zs::carriage::compressed;
    m.links = m.plan->choice.size();
  }
  zs::cli::record_geometry(m.geometry, stream, [&] {
    auto out = zs::shuffle(device, inputs, options, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  });
  return m;
}

}  // namespace

int run_bench_shuffle(int argc, char** argv) {
  auto comm = zs::cli::together([] { return zs::mpi_communicator(); });
  int const ranks = comm.size(), me = comm.rank();
  bool const lead = me == 0;

  std::string data, label = "default", json_path;
  // A mixed table: every type the shuffle compresses, as real columns.
  std::vector<std::string> names{"etopo5_elev_m.i32", "ncbi_tax_id.i32",  "geoip4_lo.u32",      "airport_lat.f64",
                                 "levitus_temp.f32",  "navy_wind_u.f32", "deb_maintainers.txt", "deb_paths.txt"};
  std::uint64_t bytes = std::uint64_t{1} << 30;
  int repeat = 5;
  bool mpi_too = false, explain = false;
  std::string codec_name, plan_name = "auto";
  zs::shuffle_options options;
  CLI::App app{"Compressed all-to-all (zs::shuffle) against the raw all-to-all of the same partitions, over the "
               "same transport, in the same run.",
               "zshuffle bench shuffle"};
  app.footer("Run it under mpirun with a GPU per rank: mpirun -np N zshuffle bench shuffle --data DIR");
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  app.add_option("--columns", names, "column files (integers, floats, strings), comma separated")->delimiter(',')->capture_default_str();
  zs::cli::add_size_option(app, "--bytes", bytes, "uncompressed bytes per rank, over all columns", 1);
  app.add_option("--repeat", repeat, "timed repetitions after one warm-up")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  zs::cli::add_round_bytes_option(app, options.round_bytes);
  app.add_option("--label", label, "names the link setting in the output (e.g. nvlink, no-p2p, socket)")
      ->capture_default_str();
  app.add_flag("--mpi", mpi_too, "also measure MPI staged through pinned host memory (raw and compressed)");
  app.add_option("--codec", codec_name,
                 "compress every column with this codec on every link (a name `zshuffle info` lists); "
                 "default: the planner chooses per column and link")
      ->check([](const std::string& name) -> std::string {
        try {
          zs::get_codec(name);
          return "";
        } catch (const zs::error& e) {
          return e.what();
        }
      });
  app.add_option("--plan", plan_name, "auto: the planner chooses raw or compressed per column and link; "
                                      "compress: every column compressed on every link")
      ->check(CLI::IsMember({"auto", "compress"}))
      ->capture_default_str();
  app.add_flag("--explain", explain, "print rank 0's plan: per column and link the estimate, speeds, predicted "
                                     "times and the choice");
  app.add_option("--json", json_path, "write the results as JSON to this file (rank 0 writes it)");
  zs::cli::progress_flags progress_flags;
  zs::cli::add_progress_options(app, progress_flags);
  std::optional<zs::cli::output_file> json;
  if (!zs::cli::parse_on_every_rank(comm, app, argc, argv, "bench shuffle", json_path, json)) return 0;  // --help
  if (!codec_name.empty()) options.codec = zs::get_codec(codec_name).id();
  if (plan_name == "compress") options.plan = zs::shuffle_options::planning::compress;

  int devices = 0;
  bool const gpu = zs::cuda_device_available() && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  if (!zs::cli::together([&] { return comm.all_ok(gpu); })) {
    return lead ? zs::cli::no_gpu("bench shuffle", "needs a GPU on every rank") : zs::cli::exit_code::no_gpu;
  }
  int device = 0;
  std::optional<zs::cuda_stream> stream_holder;
  zs::cli::agreed_step(comm, "bench shuffle", "choosing this rank's GPU", [&] {
    device = zs::device_for_rank(devices);
    ZS_CUDA_TRY(cudaSetDevice(device));
    stream_holder.emplace();
  });
  if (!zs::cli::together([&] { return zs::ranks_have_distinct_gpus(comm); })) {
    return lead ? zs::cli::no_gpu("bench shuffle", "NCCL needs a GPU per rank (see ZS_DEVICES)")
                : zs::cli::exit_code::no_gpu;
  }
  cudaStream_t const stream = stream_holder->get();

  std::vector<bench_column> columns;
  zs::cli::agreed_step(comm, "bench shuffle", "reading the column files", [&] {
    std::filesystem::path const dir = zs::cli::data_folder(data);
    for (auto const& name : names) {
      auto const file = dir / name;
      if (!zs::io::type_of_file(file)) {
        ZS_FAIL(zs::error_code::invalid_argument, "'" + name + "' is not a column file (.i32, .u32, .f64, .txt ...)");
      }
      columns.push_back(prepare(file, bytes / names.size(), ranks, me));
      columns.back().device = columns.back().host.copy_to(zs::memory_kind::device, stream);
    }
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  });

  std::vector<measurement> results;
  zs::cli::progress_display progress(progress_flags, me);
  zs::cli::together([&] {
    {
      zs::nccl_communicator nccl(comm);
      results.push_back(measure(comm, nccl, columns, options, repeat, stream, progress));
    }
    if (mpi_too) {
      zs::mpi_device_communicator staged(comm, zs::mpi_device_communicator::mode::staged);
      results.push_back(measure(comm, staged, columns, options, repeat, stream, progress));
    }
  });
  progress.clear();

  if (lead) {
    auto const gpu_name = zs::query_device(device).name;
    std::printf("zshuffle bench shuffle: %d ranks on %s, link setting '%s', %.2f GiB per rank of %zu columns, "
                "median of %d after a warm-up\n",
                ranks, gpu_name.c_str(), label.c_str(), static_cast<double>(bytes) / (1 << 30), names.size(), repeat);
    // The speedup is against the faster of the two raw all-to-alls: the shuffle's own transport
    // (packed partitions, pool memory) and the plain reference.
    std::printf("%-42s %10s %10s %10s %7s %10s %10s %10s %8s %6s\n", "transport", "plain ms", "raw ms", "zs ms",
                "ratio", "plain GB/s", "raw GB/s", "zs GB/s", "speedup", "rounds");
  }
  nlohmann::json rows = nlohmann::json::array();
  for (auto const& m : results) {
    // Algorithm bandwidth: this rank's uncompressed bytes over the time of the slowest rank.
    double raw_bytes = 0, ratio = 0;
    zs::cli::together([&] {
      raw_bytes = static_cast<double>(comm.allreduce_max(m.raw_bytes));
      ratio = static_cast<double>(comm.allreduce_sum(m.raw_bytes)) /
              static_cast<double>(std::max<std::uint64_t>(1, comm.allreduce_sum(m.wire_bytes)));
    });
    // The plan over all ranks: links compressed, and the slowest rank's predicted time.
    std::uint64_t compressed_links = 0, links = 0, predicted_ns = 0;
    zs::cli::together([&] {
      compressed_links = comm.allreduce_sum(m.compressed_links);
      links = comm.allreduce_sum(m.links);
      predicted_ns = comm.allreduce_max(m.plan ? static_cast<std::uint64_t>(m.plan->predicted.total * 1e9) : 0);
    });
    double const raw_bw = raw_bytes / m.raw_s / 1e9, zs_bw = raw_bytes / m.compressed_s / 1e9;
    double const best_raw_s = m.plain_s ? std::min(*m.plain_s, m.raw_s) : m.raw_s;
    double const speedup = best_raw_s / m.compressed_s;
    if (lead) {
      char plain_ms[32] = "-", plain_gbs[32] = "-";
      if (m.plain_s) {
        std::snprintf(plain_ms, sizeof plain_ms, "%.2f", *m.plain_s * 1e3);
        std::snprintf(plain_gbs, sizeof plain_gbs, "%.1f", raw_bytes / *m.plain_s / 1e9);
      }
      std::printf("%-42s %10s %10.2f %10.2f %7.2f %10s %10.1f %10.1f %8.2f %6llu\n", m.transport.c_str(), plain_ms,
                  m.raw_s * 1e3, m.compressed_s * 1e3, ratio, plain_gbs, raw_bw, zs_bw, speedup,
                  static_cast<unsigned long long>(m.rounds));
      for (auto const& g : m.geometry) std::printf("    geometry: %s\n", g.c_str());
      if (links > 0) {
        std::printf("    plan: %llu of %llu (column, link) pairs compressed; predicted %.2f ms, measured %.2f ms\n",
                    static_cast<unsigned long long>(compressed_links), static_cast<unsigned long long>(links),
                    static_cast<double>(predicted_ns) / 1e6, m.compressed_s * 1e3);
        if (explain && m.plan) std::printf("%s", m.plan->explain().c_str());
      }
    }
    nlohmann::json row{{"transport", m.transport},
                       {"raw_s", m.raw_s},
                       {"compressed_s", m.compressed_s},
                       {"ratio", ratio},
                       {"raw_algbw_gbs", raw_bw},
                       {"compressed_algbw_gbs", zs_bw},
                       {"speedup", speedup},
                       {"speedup_against", m.plain_s && *m.plain_s < m.raw_s ? "plain" : "raw"},
                       {"rounds", m.rounds},
                       {"geometry", m.geometry}};
    if (links > 0) {
      row["predicted_s"] = static_cast<double>(predicted_ns) / 1e9;
      row["compressed_links"] = compressed_links;
      row["links"] = links;
    }
    if (m.plain_s) {
      row["plain_s"] = *m.plain_s;
      row["plain_algbw_gbs"] = raw_bytes / *m.plain_s / 1e9;
    }
    rows.push_back(std::move(row));
  }
  zs::cli::agreed_step(comm, "bench shuffle", "writing the results", [&] {
    if (json) {
      json->write_json(nlohmann::json{{"label", label},
                                      {"ranks", ranks},
                                      {"bytes_per_rank", bytes},
                                      {"columns", names},
                                      {"codec", codec_name.empty() ? "default" : codec_name},
                                      {"plan", plan_name},
                                      {"results", std::move(rows)}});
    }
  });
  return 0;
}
