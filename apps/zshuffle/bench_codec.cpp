// zshuffle bench codec: the bitpack codec's compression ratio and GPU encode and decode
// throughput on the real integer columns, against the memory-bound limit measured in the same run.
//
// Each column is tiled on the device to --bytes and cut into --frames frames, encoded and decoded
// as one batch (one launch sequence for all frames). Times are CUDA events around encode_async
// and decode_async (the whole codec call: headers, checksums, validation), the median of
// --repeat runs after --warmup runs. Throughput is uncompressed bytes per second. The limit is
// the bytes a pass must move at least (encode: read the values, write the frames; decode: read
// the frames, write the values) at the device's measured copy bandwidth (bytes read + written).
// The CPU reference encodes the untiled column as one frame: its ratio is printed beside the
// GPU's, and the GPU's frame of the same untiled column must equal it byte for byte.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "geometry.hpp"
#include "output_file.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace {

const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Milliseconds of `run` (stream-ordered work on `stream`): median of `repeat` after `warmup`.
template <typename Run>
double time_ms(int warmup, int repeat, cudaStream_t stream, Run run) {
  for (int i = 0; i < warmup; ++i) run();
  zs::cuda_event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    start.record(stream);
    run();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  return median(ms);
}

std::vector<zs::encode_source> cut(zs::value_type type, std::uint64_t rows, const void* values, std::uint64_t frames) {
  std::size_t const width = zs::value_width(type);
  std::vector<zs::encode_source> sources;
  for (std::uint64_t f = 0; f < frames; ++f) {
    std::uint64_t const begin = rows * f / frames, end = rows * (f + 1) / frames;
    sources.push_back({type, end - begin, static_cast<const std::byte*>(values) + begin * width});
  }
  return sources;
}

struct result {
  std::string name;
  zs::value_type type = zs::value_type::int32;
  std::uint64_t rows = 0, raw_bytes = 0, frame_bytes = 0;
  double cpu_ratio = 0;            // CPU reference, untiled column, one frame
  std::string cpu_scheme;
  bool identical = false;          // the GPU's frame of the untiled column == the CPU's
  double ratio = 0;                // GPU, tiled column, all frames
  std::uint64_t schemes[4] = {0, 0, 0, 0};  // frames per codec id
  double encode_ms = 0, decode_ms = 0;
  double encode_limit_ms = 0, decode_limit_ms = 0;
  bool verified = false;           // decoded values == input, every status ok
  std::vector<std::string> geometry;  // launch geometry of each kernel (zs::describe)
};

// The CPU reference frame of the whole column, and whether the GPU writes the same bytes.
void reference(const zs::column& host, result& r, cudaStream_t stream) {
  std::vector<zs::encode_source> sources{{host.type(), host.size(), host.view().data}};
  auto const offsets = zs::layout_frames(bitpack(), sources);
  std::vector<std::byte> cpu(offsets.back());
  std::uint64_t cpu_bytes = 0;
  bitpack().encode_host({sources, cpu.data(), offsets, &cpu_bytes});
  r.cpu_ratio = static_cast<double>(host.data_bytes()) / static_cast<double>(cpu_bytes);
  r.cpu_scheme = std::string(zs::to_string(static_cast<zs::codec_id>(cpu[6])));

  zs::column const device = host.copy_to(zs::memory_kind::device, stream);
  std::vector<zs::encode_source> dsources{{host.type(), host.size(), device.view().data}};
  zs::device_buffer frames(offsets.back(), stream), bytes(sizeof(std::uint64_t), stream);
  zs::device_buffer temp(bitpack().encode_temp_bytes(dsources), stream);
  bitpack().encode_async({dsources, frames.as<std::byte>(), offsets, bytes.as<std::uint64_t>()}, temp.data(),
                         temp.size(), stream);
  std::vector<std::byte> gpu(offsets.back());
  std::uint64_t gpu_bytes = 0;
  zs::copy_async(gpu.data(), frames.data(), gpu.size(), stream);
  zs::copy_async(&gpu_bytes, bytes.data(), sizeof gpu_bytes, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  r.identical = gpu_bytes == cpu_bytes && std::memcmp(gpu.data(), cpu.data(), cpu_bytes) == 0;
}

result measure(const std::filesystem::path& file, std::uint64_t bytes, std::uint64_t frame_count, int warmup,
               int repeat, double copy_bandwidth, cudaStream_t stream) {
  zs::column const host = zs::io::read_column(file);
  ZS_EXPECTS(zs::is_integer(host.type()) && host.size() > 0, "a non-empty integer column");
  result r;
  r.name = file.filename().string();
  r.type = host.type();
  reference(host, r, stream);

  // Tile on the device: one copy up, then doubling device-to-device copies.
  std::size_t const width = zs::value_width(host.type());
  r.rows = bytes / width;
  r.raw_bytes = r.rows * width;
  zs::device_buffer input(r.raw_bytes, stream);
  std::uint64_t const first = std::min<std::uint64_t>(host.data_bytes(), r.raw_bytes);
  zs::copy_async(input.data(), host.view().data, first, stream);
  for (std::uint64_t have = first; have < r.raw_bytes;) {
    std::uint64_t const n = std::min(have, r.raw_bytes - have);
    ZS_CUDA_TRY(cudaMemcpyAsync(input.as<std::byte>() + have, input.data(), n, cudaMemcpyDeviceToDevice, stream));
    have += n;
  }

  auto const sources = cut(host.type(), r.rows, input.data(), frame_count);
  auto const offsets = zs::layout_frames(bitpack(), sources);
  zs::device_buffer frames(offsets.back(), stream);
  zs::device_buffer frame_bytes(frame_count * sizeof(std::uint64_t), stream);
  zs::device_buffer encode_temp(bitpack().encode_temp_bytes(sources), stream);
  zs::encode_batch const encode{sources, frames.as<std::byte>(), offsets, frame_bytes.as<std::uint64_t>()};
  r.encode_ms = time_ms(warmup, repeat, stream, [&] {
    bitpack().encode_async(encode, encode_temp.data(), encode_temp.size(), stream);
  });
  zs::cli::record_geometry(r.geometry, stream, [&] {
    bitpack().encode_async(encode, encode_temp.data(), encode_temp.size(), stream);
  });

  std::vector<std::uint64_t> sizes(frame_count);
  zs::copy_async(sizes.data(), frame_bytes.data(), frame_count * sizeof(std::uint64_t), stream);
  std::vector<std::byte> ids(frame_count);
  for (std::uint64_t f = 0; f < frame_count; ++f) {
    zs::copy_async(&ids[f], frames.as<std::byte>() + offsets[f] + 6, 1, stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::uint64_t f = 0; f < frame_count; ++f) {
    r.frame_bytes += sizes[f];
    auto const id = static_cast<unsigned>(ids[f]);
    if (id < 4) ++r.schemes[id];
  }
  r.ratio = static_cast<double>(r.raw_bytes) / static_cast<double>(r.frame_bytes);

  zs::device_buffer output(r.raw_bytes, stream);
  std::vector<zs::decode_target> targets;
  for (auto const& s : sources) {
    auto const at = static_cast<const std::byte*>(s.values) - input.as<std::byte>();
    targets.push_back({s.type, s.count, output.as<std::byte>() + at});
  }
  zs::device_buffer status(frame_count * sizeof(zs::frame_status), stream);
  zs::device_buffer decode_temp(bitpack().decode_temp_bytes(targets), stream);
  zs::decode_batch const decode{frames.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()};
  ZS_CUDA_TRY(cudaMemsetAsync(output.data(), 0, r.raw_bytes, stream));
  r.decode_ms = time_ms(warmup, repeat, stream, [&] {
    bitpack().decode_async(decode, decode_temp.data(), decode_temp.size(), stream);
  });
  zs::cli::record_geometry(r.geometry, stream, [&] {
    bitpack().decode_async(decode, decode_temp.data(), decode_temp.size(), stream);
  });

  // Verify: every frame ok and the values back as they were.
  std::vector<zs::frame_status> statuses(frame_count);
  zs::copy_async(statuses.data(), status.data(), frame_count * sizeof(zs::frame_status), stream);
  std::vector<std::byte> a(r.raw_bytes), b(r.raw_bytes);
  zs::copy_async(a.data(), input.data(), r.raw_bytes, stream);
  zs::copy_async(b.data(), output.data(), r.raw_bytes, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  r.verified = std::all_of(statuses.begin(), statuses.end(), [](auto s) { return s == zs::frame_status::ok; }) &&
               std::memcmp(a.data(), b.data(), r.raw_bytes) == 0;

  double const moved = static_cast<double>(r.raw_bytes + r.frame_bytes);
  r.encode_limit_ms = moved / copy_bandwidth * 1e3;
  r.decode_limit_ms = moved / copy_bandwidth * 1e3;
  return r;
}

nlohmann::json result_json(const result& r) {
  return {{"column", r.name},
          {"type", zs::to_string(r.type)},
          {"rows", r.rows},
          {"raw_bytes", r.raw_bytes},
          {"frame_bytes", r.frame_bytes},
          {"ratio", r.ratio},
          {"cpu_reference_ratio_untiled", r.cpu_ratio},
          {"cpu_reference_scheme", r.cpu_scheme},
          {"gpu_equals_cpu_untiled", r.identical},
          {"frames_by_scheme", {{"raw", r.schemes[0]}, {"for", r.schemes[1]}, {"dfor", r.schemes[2]}, {"rfor", r.schemes[3]}}},
          {"encode_ms", r.encode_ms},
          {"encode_gbs", static_cast<double>(r.raw_bytes) / r.encode_ms / 1e6},
          {"encode_limit_ms", r.encode_limit_ms},
          {"encode_pct_of_limit", 100.0 * r.encode_limit_ms / r.encode_ms},
          {"decode_ms", r.decode_ms},
          {"decode_gbs", static_cast<double>(r.raw_bytes) / r.decode_ms / 1e6},
          {"decode_limit_ms", r.decode_limit_ms},
          {"decode_pct_of_limit", 100.0 * r.decode_limit_ms / r.decode_ms},
          {"verified", r.verified},
          {"geometry", r.geometry}};
}

}  // namespace

int run_bench_codec(int argc, char** argv) {
  std::string data, json_path;
  std::vector<std::string> names{"etopo5_elev_m.i32", "ncbi_tax_id.i32", "geoip4_lo.u32"};
  std::uint64_t bytes = std::uint64_t{2} << 30;
  std::uint64_t frame_count = 64;
  int repeat = 10, warmup = 2;
  CLI::App app{"The bitpack codec's compression ratio and GPU encode and decode throughput on the real integer "
               "columns, against the memory-bound limit measured in the same run.",
               "zshuffle bench codec"};
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  app.add_option("--columns", names, "integer column files, comma separated")->delimiter(',')->capture_default_str();
  zs::cli::add_size_option(app, "--bytes", bytes, "each column is tiled to this many uncompressed bytes on the GPU", 1);
  app.add_option("--frames", frame_count, "frames the tiled column is cut into, coded as one batch")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--repeat", repeat, "timed runs; the median is reported")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs first")->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  if (!zs::cli::parse(app, argc, argv)) return 0;
  std::optional<zs::cli::output_file> json;
  if (!json_path.empty()) json.emplace("--json", json_path);
  std::filesystem::path const dir = zs::cli::data_folder(data);
  if (!zs::cuda_device_available()) {
    return zs::cli::no_gpu("bench codec", "no CUDA device on this machine; the benchmark needs one");
  }
  std::vector<std::filesystem::path> files;
  for (auto const& name : names) files.push_back(dir / name);
  ZS_EXPECTS(!files.empty(), "at least one column");

  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  zs::cuda_stream stream;
  std::string const gpu = zs::query_device(device).name;
  double const copy_bandwidth = zs::measure_copy_bandwidth(std::min<std::uint64_t>(bytes, std::uint64_t{1} << 30), 10, stream);

  std::printf("zshuffle bench codec: bitpack on %s, columns tiled to %.2f GiB in %llu frames, median of %d after "
              "%d warm-up runs\n",
              gpu.c_str(), static_cast<double>(bytes) / (1 << 30), static_cast<unsigned long long>(frame_count), repeat,
              warmup);
  std::printf("device copy bandwidth (read + write): %.1f GB/s; limit = (raw + frame bytes) / that bandwidth\n\n",
              copy_bandwidth / 1e9);
  std::printf("%-20s %7s %7s %6s %-16s %9s %9s %7s %9s %9s %7s %3s\n", "column", "ratio", "cpu", "same",
              "frames r/f/d/rf", "enc ms", "enc GB/s", "% lim", "dec ms", "dec GB/s", "% lim", "ok");
  std::vector<result> results;
  bool all_ok = true;
  for (auto const& file : files) {
    result const r = measure(file, bytes, frame_count, warmup, repeat, copy_bandwidth, stream);
    char schemes[64];
    std::snprintf(schemes, sizeof schemes, "%llu/%llu/%llu/%llu", static_cast<unsigned long long>(r.schemes[0]),
                  static_cast<unsigned long long>(r.schemes[1]), static_cast<unsigned long long>(r.schemes[2]),
                  static_cast<unsigned long long>(r.schemes[3]));
    std::printf("%-20s %7.3f %7.3f %6s %-16s %9.3f %9.1f %7.1f %9.3f %9.1f %7.1f %3s\n", r.name.c_str(), r.ratio,
                r.cpu_ratio, r.identical ? "yes" : "NO", schemes, r.encode_ms,
                static_cast<double>(r.raw_bytes) / r.encode_ms / 1e6, 100.0 * r.encode_limit_ms / r.encode_ms,
                r.decode_ms, static_cast<double>(r.raw_bytes) / r.decode_ms / 1e6,
                100.0 * r.decode_limit_ms / r.decode_ms, r.verified ? "yes" : "NO");
    for (auto const& g : r.geometry) std::printf("    geometry: %s\n", g.c_str());
    all_ok = all_ok && r.identical && r.verified;
    results.push_back(r);
  }

  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (auto const& r : results) all.push_back(result_json(r));
    json->write_json(nlohmann::json{{"benchmark", "codec"},
                               {"codec", "bitpack"},
                               {"device", gpu},
                               {"copy_bandwidth_gbs", copy_bandwidth / 1e9},
                               {"bytes_per_column", bytes},
                               {"frames", frame_count},
                               {"repeat", repeat},
                               {"warmup", warmup},
                               {"results", std::move(all)}});
  }
  return all_ok ? 0 : 1;
}
