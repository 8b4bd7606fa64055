// zshuffle bench spill: compressed spill and restore of each real column (zs/spill.hpp) against
// moving its raw bytes device -> pinned host -> device with cudaMemcpyAsync, in the same run.
//
// Each column file of the data folder (or those --column names) is tiled on the host to --bytes
// (its values, or the characters of strings, whose offsets follow the copies) and put on the
// device. The baseline copies the tiled column's bytes (values, or characters and offsets) to a
// pinned host buffer and back into a device buffer, both allocated beforehand. The spill runs
// zs::spill then zs::restore on the same stream, timed on the host from the spill's call to the
// restored column's readiness: the choice of codec, the encoding, the copies, the checksums'
// verification and the restored column's allocation. Each is the median of --repeat runs after
// a warm-up run, which also measures what the choice of codec needs (PCIe bandwidth, codec
// speeds) and pins the host blocks that later spills reuse. The restored column is verified
// against the original once.
//
// Under mpirun every rank does the same on a GPU of its own (device_for_rank), all at once: a
// barrier starts each timed run on every rank, and each time is the slowest rank's, so GPUs that
// share a PCIe switch or the host's memory show what sharing costs. Ratios count every rank's
// bytes; rank 0 prints and writes the JSON.
//
// Speedup = baseline time / spill + restore time; ratio = raw bytes / spilled bytes (raw bytes as
// shuffle statistics count them: values, or characters + 8 per string). The target: a speedup of
// at least 0.8 x the ratio where the codec encodes and decodes faster than PCIe moves bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "output_file.hpp"
#include "zs/codec.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/device.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"
#include "zs/spill.hpp"

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

constexpr double target_share = 0.8;  // of the ratio, as speedup

struct result {
  std::string column;
  zs::value_type type = zs::value_type::int32;
  zs::spill_report report;  // this rank's
  std::uint64_t rows = 0;
  // Every rank's bytes, whether every rank chose report.codec, and whether every rank's restored
  // column was the original.
  std::uint64_t raw_bytes = 0, spilled_bytes = 0;
  bool same_codec = true;
  bool verified = false;
  double copy_ms = 0, total_ms = 0, spill_ms = 0, restore_ms = 0;  // medians of the slowest rank's

  double ratio() const {
    return spilled_bytes == 0 ? 1.0 : static_cast<double>(raw_bytes) / static_cast<double>(spilled_bytes);
  }
  double speedup() const { return copy_ms / total_ms; }
  double share() const { return speedup() / ratio(); }
  bool codec_faster_than_pcie() const {
    return report.compressed() && report.encode_bps > report.pcie_bps && report.decode_bps > report.pcie_bps;
  }
};

// The slowest rank's time, to the nanosecond.
double slowest_ms(zs::communicator& comm, double ms) {
  return static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(ms * 1e6))) / 1e6;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The host column `c` (not empty) repeated up to `bytes` of values (or characters of strings,
// whole strings only; at least one value, and one copy of a column of empty strings).
zs::column tile(const zs::column& c, std::uint64_t bytes) {
  auto const v = c.view();
  if (c.type() != zs::value_type::string) {
    std::uint64_t const width = zs::value_width(c.type());
    std::uint64_t const rows = std::max<std::uint64_t>(1, bytes / width);
    zs::column out = zs::column::allocate(c.type(), rows, zs::memory_kind::host);
    auto* to = static_cast<std::byte*>(out.mutable_view().data);
    for (std::uint64_t done = 0; done < rows;) {
      std::uint64_t const n = std::min(rows - done, c.size());
      std::memcpy(to + done * width, v.data, n * width);
      done += n;
    }
    return out;
  }
  std::uint64_t const chars = c.data_bytes();
  std::vector<std::int64_t> offsets{0};
  std::uint64_t total = 0;
  // Whole copies, then the strings of the next copy that end within `bytes`.
  bool cut = false;
  do {
    for (std::uint64_t i = 0; i < c.size() && !cut; ++i) {
      std::uint64_t const len = static_cast<std::uint64_t>(v.offsets[i + 1] - v.offsets[i]);
      cut = total + len > bytes && offsets.size() > 1;
      if (cut) break;
      total += len;
      offsets.push_back(static_cast<std::int64_t>(total));
    }
  } while (!cut && chars > 0 && total < bytes);
  std::uint64_t const rows = offsets.size() - 1;
  zs::column out = zs::column::allocate(c.type(), rows, zs::memory_kind::host, nullptr, total);
  auto const o = out.mutable_view();
  std::memcpy(o.offsets, offsets.data(), offsets.size() * sizeof(std::int64_t));
  auto* to = static_cast<char*>(o.data);
  for (std::uint64_t done = 0; done < total;) {
    std::uint64_t const n = std::min(total - done, chars);
    std::memcpy(to + done, v.data, n);
    done += n;
  }
  return out;
}

bool same_column(const zs::column& a, const zs::column& b) {
  if (a.type() != b.type() || a.size() != b.size() || a.data_bytes() != b.data_bytes()) return false;
  if (a.data_bytes() > 0 && std::memcmp(a.view().data, b.view().data, a.data_bytes()) != 0) return false;
  return a.type() != zs::value_type::string ||
         std::memcmp(a.view().offsets, b.view().offsets, (a.size() + 1) * sizeof(std::int64_t)) == 0;
}

// `options`: the spill's, codec and frame and batch sizes included; the column's name is set here.
// Collective over `comm`: every rank measures its own copy of the column at the same time.
result measure(zs::communicator& comm, const fs::path& file, const zs::column& host, zs::spill_options options,
               int repeat, cudaStream_t stream) {
  result r;
  r.column = file.filename().string();
  r.type = host.type();
  r.rows = host.size();
  zs::column const device = host.copy_to(zs::memory_kind::device, stream);

  // The baseline: the same bytes through a pinned buffer and back, into buffers made beforehand.
  std::uint64_t const values = host.data_bytes();
  std::uint64_t const offsets = host.type() == zs::value_type::string ? (host.size() + 1) * 8 : 0;
  zs::pinned_buffer parked(values + offsets);
  zs::device_buffer back_values(values, stream), back_offsets(offsets, stream);
  auto const v = device.view();
  auto const round_trip = [&] {
    if (values > 0) ZS_CUDA_TRY(cudaMemcpyAsync(parked.data(), v.data, values, cudaMemcpyDeviceToHost, stream));
    if (offsets > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(parked.as<std::byte>() + values, v.offsets, offsets, cudaMemcpyDeviceToHost, stream));
    }
    if (values > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(back_values.data(), parked.data(), values, cudaMemcpyHostToDevice, stream));
    }
    if (offsets > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(back_offsets.data(), parked.as<std::byte>() + values, offsets, cudaMemcpyHostToDevice,
                                  stream));
    }
  };
  round_trip();
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<double> copy_ms;
  for (int i = 0; i < repeat; ++i) {
    zs::cuda_event start, stop;
    comm.barrier();
    start.record(stream);
    round_trip();
    stop.record(stream);
    stop.synchronize();
    copy_ms.push_back(slowest_ms(comm, stop.elapsed_ms_since(start)));
  }
  r.copy_ms = median(copy_ms);

  options.name = r.column;
  std::vector<double> total_ms, spill_ms, restore_ms;
  for (int i = 0; i <= repeat; ++i) {  // run 0 is the warm-up
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    comm.barrier();
    auto const start = clock_type::now();
    zs::spilled_column handle = zs::spill(device.view(), stream, options);
    zs::column restored = zs::restore(handle, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    double const ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    if (i == 0) {
      r.report = handle.report();
      r.raw_bytes = comm.allreduce_sum(r.report.raw_bytes);
      r.spilled_bytes = comm.allreduce_sum(r.report.spilled_bytes);
      auto const codec = static_cast<std::uint64_t>(r.report.codec);
      r.same_codec = comm.allreduce_min(codec) == comm.allreduce_max(codec);
      r.verified = comm.allreduce_min(same_column(host, restored.copy_to(zs::memory_kind::host, stream)) ? 1 : 0) == 1;
      continue;
    }
    total_ms.push_back(slowest_ms(comm, ms));
    spill_ms.push_back(slowest_ms(comm, handle.spill_seconds() * 1e3));
    restore_ms.push_back(slowest_ms(comm, handle.restore_seconds() * 1e3));
  }
  r.total_ms = median(total_ms);
  r.spill_ms = median(spill_ms);
  r.restore_ms = median(restore_ms);
  return r;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

int run_bench_spill(int argc, char** argv) {
  std::string data, json_path, codec_option;
  std::vector<std::string> columns;
  std::uint64_t bytes = std::uint64_t{2} << 30;
  int repeat = 5;
  CLI::App app{"Compressed spill + restore of each real column (zs::spill, zs::restore) against cudaMemcpyAsync of "
               "its raw bytes device -> pinned host -> device, in the same run; under mpirun on every rank's GPU at "
               "once.",
               "zshuffle bench spill"};
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  app.add_option("--column", columns, "a column file of the folder; repeat for more (default: every one)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  zs::cli::add_size_option(app, "--bytes", bytes,
                           "each column is tiled to this many uncompressed bytes (values, or characters of strings)",
                           1);
  app.add_option("--repeat", repeat, "timed runs after one warm-up; the median is reported")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--codec", codec_option,
                 "force this codec for every column, by name (default: the spill chooses per column, raw where the "
                 "codec would not beat PCIe)");
  zs::spill_options options;
  zs::cli::add_size_option(app, "--frame-bytes", options.frame_bytes,
                           "uncompressed bytes per frame (zs::spill_options::frame_bytes)", 1);
  zs::cli::add_size_option(app, "--batch-bytes", options.batch_bytes,
                           "uncompressed bytes per encode call and host block (zs::spill_options::batch_bytes)", 1);
  app.add_option("--json", json_path, "also write the results as JSON to this file (rank 0)");
  if (!zs::cli::parse(app, argc, argv)) return 0;
  zs::mpi_communicator comm;
  int const me = comm.rank(), ranks = comm.size();
  std::optional<zs::cli::output_file> json;
  if (!json_path.empty() && me == 0) json.emplace("--json", json_path);
  fs::path const dir = zs::cli::data_folder(data);
  std::optional<zs::codec_id>& codec = options.codec;
  if (!codec_option.empty()) {
    try {
      codec = zs::get_codec(std::string_view(codec_option)).id();
    } catch (const zs::error& e) {
      ZS_FAIL(zs::error_code::invalid_argument, "--codec: " + e.message());
    }
  }
  std::vector<fs::path> files;
  if (columns.empty()) files = zs::io::list_columns(dir);
  for (auto const& name : columns) {
    if (!zs::io::type_of_file(dir / name)) {
      ZS_FAIL(zs::error_code::invalid_argument,
              "--column '" + name + "' is no column file: its extension names no type");
    }
    files.push_back(dir / name);
  }
  if (files.empty()) ZS_FAIL(zs::error_code::invalid_argument, "no column file in '" + dir.string() + "'");
  if (comm.allreduce_min(zs::cuda_device_available() ? 1 : 0) == 0) {
    return me == 0 ? zs::cli::no_gpu("bench spill", "not every rank has a CUDA device; the benchmark needs one per rank")
                   : zs::cli::exit_code::no_gpu;
  }

  int device_count = 0;
  ZS_CUDA_TRY(cudaGetDeviceCount(&device_count));
  int const device = zs::device_for_rank(device_count);
  ZS_CUDA_TRY(cudaSetDevice(device));
  std::string const device_name = zs::query_device(device).name;
  zs::cuda_stream stream;
  // PCIe measured by every rank at once, as the spills will run.
  comm.barrier();
  double const pcie = zs::measured_pcie_bandwidth();
  double const slowest_pcie = static_cast<double>(comm.allreduce_min(static_cast<std::uint64_t>(pcie)));
  if (me == 0) {
    std::printf("zshuffle bench spill: %d rank(s), each on a %s at once, columns tiled to %.2f GiB, median of %d "
                "after a warm-up; PCIe (pinned copies, slower direction, slowest rank): %.1f GB/s\n",
                ranks, device_name.c_str(), static_cast<double>(bytes) / (1 << 30), repeat, slowest_pcie / 1e9);
    std::printf("copy = cudaMemcpyAsync device -> pinned host -> device; spill = zs::spill + zs::restore (host "
                "clock); times of the slowest rank\n\n");
    std::printf("%-24s %-7s %-8s %7s %7s %9s %9s %9s %9s %8s %9s %6s %4s\n", "column", "type", "codec", "ratio",
                "est", "copy ms", "spill ms", "rest. ms", "total ms", "speedup", "sp/ratio", "fast", "ok");
  }

  std::vector<result> results;
  bool all_verified = true;
  for (auto const& file : files) {
    zs::column const real = zs::io::read_column(file);
    if (real.size() == 0) {
      if (me == 0) std::printf("%-24s skipped: the file holds no rows\n", file.filename().string().c_str());
      continue;
    }
    zs::column const host = tile(real, bytes);
    if (codec && !zs::get_codec(*codec).supports(host.type())) {
      if (me == 0) {
        std::printf("%-24s skipped: codec '%s' does not encode %s values\n", file.filename().string().c_str(),
                    codec_option.c_str(), std::string(zs::to_string(host.type())).c_str());
      }
      continue;
    }
    result const r = measure(comm, file, host, options, repeat, stream);
    if (me == 0) {
      std::string const codec_name = r.same_codec ? r.report.codec_name : r.report.codec_name + "+";
      std::printf("%-24s %-7s %-8s %7.3f %7.3f %9.2f %9.2f %9.2f %9.2f %8.2f %9.2f %6s %4s\n", r.column.c_str(),
                  std::string(zs::to_string(r.type)).c_str(), codec_name.c_str(), r.ratio(),
                  r.report.estimated_ratio, r.copy_ms, r.spill_ms, r.restore_ms, r.total_ms, r.speedup(), r.share(),
                  yes_no(r.codec_faster_than_pcie()).c_str(), r.verified ? "yes" : "NO");
      std::fflush(stdout);
    }
    all_verified = all_verified && r.verified;
    results.push_back(r);
  }
  if (me == 0) {
    std::printf("\nfast: the codec encodes and decodes faster than PCIe (rank 0's figures); the target there is "
                "sp/ratio >= %.1f\n",
                target_share);
    if (ranks > 1) std::printf("codec: rank 0's choice, with + where another rank chose another codec\n");
  }

  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (auto const& r : results) {
      rows.push_back({{"column", r.column},
                      {"type", zs::to_string(r.type)},
                      {"rows", r.rows},
                      {"codec", r.report.codec_name},
                      {"same_codec_on_every_rank", r.same_codec},
                      {"forced", r.report.forced},
                      {"raw_bytes", r.raw_bytes},
                      {"spilled_bytes", r.spilled_bytes},
                      {"frames", r.report.frames},
                      // The raw fast path: one plain copy each way, no frames (docs/SPILL.md).
                      {"plain_copy", r.report.codec == zs::codec_id::raw && r.report.frames == 0 && r.report.raw_bytes > 0},
                      {"ratio", r.ratio()},
                      {"estimated_ratio", r.report.estimated_ratio},
                      {"encode_gbs", r.report.encode_bps / 1e9},
                      {"decode_gbs", r.report.decode_bps / 1e9},
                      {"predicted_raw_ms", r.report.predicted_raw_seconds * 1e3},
                      {"predicted_compressed_ms", r.report.predicted_compressed_seconds * 1e3},
                      {"copy_ms", r.copy_ms},
                      {"spill_ms", r.spill_ms},
                      {"restore_ms", r.restore_ms},
                      {"total_ms", r.total_ms},
                      {"speedup", r.speedup()},
                      {"speedup_over_ratio", r.share()},
                      {"codec_faster_than_pcie", r.codec_faster_than_pcie()},
                      {"target_met", !r.codec_faster_than_pcie() || r.share() >= target_share},
                      {"verified", r.verified}});
    }
    json->write_json({{"benchmark", "spill"},
                      {"ranks", ranks},
                      {"device", device_name},
                      {"pcie_gbs", slowest_pcie / 1e9},
                      {"bytes_per_column", bytes},
                      {"repeat", repeat},
                      {"frame_bytes", options.frame_bytes},
                      {"batch_bytes", options.batch_bytes},
                      {"codec", codec_option.empty() ? "auto" : codec_option},
                      {"target_speedup_over_ratio", target_share},
                      {"results", std::move(rows)}});
  }
  return all_verified ? zs::cli::exit_code::ok : zs::cli::exit_code::failed;
}
