// zshuffle demo: a compressed shuffle of the real columns, across every rank of the job.
//
// Each rank takes a slice of every column and hash-partitions its rows by destination rank
// (rows with equal values meet on one rank, as in a distributed join or group-by). One call of
// zs::shuffle then moves all columns at once: batched encodes, frame exchange, batched decodes.
// Finally every rank checks that what each peer sent it arrived intact. With GPUs the shuffle
// runs on them (NCCL with a GPU per rank, else MPI staged through pinned host memory); without
// one, the CPU reference codecs run the same protocol over host memory.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "zs/codec.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/mpi_device_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/comm/shuffle.hpp"
#include "zs/device.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"

namespace {

// A host column whose rows are grouped by destination rank.
struct partitioned_column {
  zs::column rows;
  std::vector<std::uint64_t> row_begin;    // ranks + 1 entries
  std::vector<std::uint64_t> chars_begin;  // strings: ranks + 1 entries
};

// The destination of each row: a hash of its value, so equal values go to the same rank.
std::vector<int> destinations(const zs::column_view& v, int ranks) {
  std::vector<int> dest(v.count);
  for (std::uint64_t i = 0; i < v.count; ++i) {
    std::uint64_t h = 0;
    if (v.type == zs::value_type::string) {
      auto const* chars = static_cast<const std::byte*>(v.data);
      h = zs::hash::checksum(chars + v.offsets[i], static_cast<std::uint64_t>(v.offsets[i + 1] - v.offsets[i]));
    } else {
      std::uint64_t bits = 0;
      std::size_t const width = zs::value_width(v.type);
      std::memcpy(&bits, static_cast<const std::byte*>(v.data) + i * width, width);
      h = zs::hash::mix64(bits);
    }
    dest[i] = static_cast<int>(h % static_cast<std::uint64_t>(ranks));
  }
  return dest;
}

// Rows [begin, end) of `whole`, grouped by destination (a stable counting sort).
partitioned_column partition_slice(const zs::column& whole, std::uint64_t begin, std::uint64_t end, int ranks) {
  auto const w = whole.view();
  zs::column_view slice = w;
  slice.count = end - begin;
  std::size_t const width = zs::value_width(w.type);
  if (w.type == zs::value_type::string) {
    slice.offsets = w.offsets + begin;
  } else {
    slice.data = static_cast<const std::byte*>(w.data) + begin * width;
  }
  auto const dest = destinations(slice, ranks);

  partitioned_column p;
  p.row_begin.assign(ranks + 1, 0);
  p.chars_begin.assign(ranks + 1, 0);
  for (std::uint64_t i = 0; i < slice.count; ++i) {
    ++p.row_begin[dest[i] + 1];
    if (w.type == zs::value_type::string) {
      p.chars_begin[dest[i] + 1] += static_cast<std::uint64_t>(slice.offsets[i + 1] - slice.offsets[i]);
    }
  }
  for (int r = 0; r < ranks; ++r) {
    p.row_begin[r + 1] += p.row_begin[r];
    p.chars_begin[r + 1] += p.chars_begin[r];
  }
  p.rows = zs::column::allocate(w.type, slice.count, zs::memory_kind::host, nullptr,
                                w.type == zs::value_type::string ? p.chars_begin[ranks] : 0);
  auto out = p.rows.mutable_view();
  std::vector<std::uint64_t> next_row(p.row_begin.begin(), p.row_begin.end() - 1);
  std::vector<std::uint64_t> next_char(p.chars_begin.begin(), p.chars_begin.end() - 1);
  if (w.type == zs::value_type::string) {
    // Lengths first (in destination order), then turn them into offsets.
    std::vector<std::int64_t> lengths(slice.count);
    for (std::uint64_t i = 0; i < slice.count; ++i) {
      std::uint64_t const row = next_row[dest[i]]++;
      auto const len = slice.offsets[i + 1] - slice.offsets[i];
      lengths[row] = len;
      std::memcpy(static_cast<char*>(out.data) + next_char[dest[i]],
                  static_cast<const char*>(slice.data) + slice.offsets[i], static_cast<std::size_t>(len));
      next_char[dest[i]] += static_cast<std::uint64_t>(len);
    }
    out.offsets[0] = 0;
    for (std::uint64_t i = 0; i < slice.count; ++i) out.offsets[i + 1] = out.offsets[i] + lengths[i];
  } else {
    for (std::uint64_t i = 0; i < slice.count; ++i) {
      std::memcpy(static_cast<std::byte*>(out.data) + next_row[dest[i]]++ * width,
                  static_cast<const std::byte*>(slice.data) + i * width, width);
    }
  }
  return p;
}

// A checksum of rows [begin, end) of a host column, including string lengths.
std::uint64_t content_checksum(const zs::column_view& v, std::uint64_t begin, std::uint64_t end) {
  if (v.type != zs::value_type::string) {
    std::size_t const width = zs::value_width(v.type);
    return zs::hash::checksum(static_cast<const std::byte*>(v.data) + begin * width, (end - begin) * width);
  }
  std::vector<std::uint64_t> lengths(end - begin);
  for (std::uint64_t i = begin; i < end; ++i) lengths[i - begin] = static_cast<std::uint64_t>(v.offsets[i + 1] - v.offsets[i]);
  auto const chars = zs::hash::checksum(static_cast<const std::byte*>(v.data) + v.offsets[begin],
                                        static_cast<std::uint64_t>(v.offsets[end] - v.offsets[begin]));
  return chars ^ zs::hash::mix64(zs::hash::checksum(reinterpret_cast<const std::byte*>(lengths.data()),
                                                    lengths.size() * 8));
}

struct column_result {
  std::string name;
  zs::value_type type;
  std::string codec;
  std::uint64_t rows = 0;        // received, summed over ranks
  std::uint64_t raw_bytes = 0;   // uncompressed layout bytes sent, summed over ranks
  std::uint64_t wire_bytes = 0;  // frame bytes sent, summed over ranks
  bool verified = false;
};

void print_usage() {
  std::puts(
      "usage: mpirun -np N zshuffle demo [--data DIR] [--columns a,b,...] [--cpu] [--round-bytes SIZE] [--json PATH]\n"
      "  --data DIR          decompressed column files (default: $ZS_DATA_DIR)\n"
      "  --columns LIST      only these files, comma separated (default: every column file in DIR)\n"
      "  --cpu               run the CPU reference codecs even where a GPU is present\n"
      "  --round-bytes SIZE  uncompressed bytes per rank per pipeline round (default 256M)\n"
      "  --json PATH         also write the results as JSON (rank 0)");
}

std::vector<std::filesystem::path> chosen_columns(const std::filesystem::path& dir, const std::string& list) {
  if (list.empty()) return zs::io::list_columns(dir);
  std::vector<std::filesystem::path> files;
  for (auto const& name : zs::cli::split_list(list)) files.push_back(dir / name);
  return files;
}

void write_json(const std::string& path, int ranks, const std::string& transport, double seconds,
                const std::vector<column_result>& results) {
  std::ofstream out(path);
  if (!out) ZS_FAIL(zs::error_code::io_error, "cannot write '" + path + "'");
  out << "{\n  \"ranks\": " << ranks << ",\n  \"transport\": \"" << transport << "\",\n  \"seconds\": " << seconds
      << ",\n  \"columns\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto const& r = results[i];
    out << "    {\"name\": \"" << r.name << "\", \"type\": \"" << zs::to_string(r.type) << "\", \"codec\": \""
        << r.codec << "\", \"rows\": " << r.rows << ", \"raw_bytes\": " << r.raw_bytes
        << ", \"wire_bytes\": " << r.wire_bytes << ", \"verified\": " << (r.verified ? "true" : "false") << "}"
        << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

// The shuffle's device side: NCCL when every rank has its own GPU, otherwise MPI staged through
// pinned host memory (ranks may then share a GPU).
std::unique_ptr<zs::device_communicator> device_side(zs::mpi_communicator& comm) {
  if (zs::ranks_have_distinct_gpus(comm)) return std::make_unique<zs::nccl_communicator>(comm);
  return std::make_unique<zs::mpi_device_communicator>(comm);
}

}  // namespace

int run_demo(int argc, char** argv) {
  zs::cli::args const args(argc, argv, {"data", "columns", "json", "round-bytes"}, {"cpu", "help"});
  if (args.flag("help")) {
    print_usage();
    return 0;
  }
  zs::mpi_environment mpi(nullptr, nullptr, MPI_THREAD_SINGLE);
  zs::mpi_communicator comm;
  int const ranks = comm.size(), me = comm.rank();
  bool const lead = me == 0;

  std::filesystem::path const dir = args.get("data") ? std::filesystem::path(*args.get("data")) : zs::io::data_dir();
  auto const files = chosen_columns(dir, args.get_or("columns", ""));
  ZS_EXPECTS(!files.empty(), "column files in '" + dir.string() + "'");
  zs::shuffle_options options;
  options.round_bytes = args.size_or("round-bytes", options.round_bytes);

  // Every rank must take the same path.
  int devices = 0;
  bool const have_gpu = !args.flag("cpu") && zs::cuda_device_available() &&
                        cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  bool const use_gpu = comm.all_ok(have_gpu);
  std::unique_ptr<zs::device_communicator> device;
  std::optional<zs::cuda_stream> stream;
  std::string path;
  if (use_gpu) {
    int const gpu = zs::device_for_rank(devices);
    ZS_CUDA_TRY(cudaSetDevice(gpu));
    device = device_side(comm);
    stream.emplace();
    path = "GPU codecs on " + zs::query_device(gpu).name + ", frames over " + std::string(device->transport());
  } else {
    path = args.flag("cpu") ? "CPU reference codecs (--cpu), frames over MPI"
                            : "CPU reference codecs over MPI: no GPU on this machine; same formats and protocol";
  }
  if (lead) {
    std::printf("zshuffle demo: %d rank%s, %s\n", ranks, ranks == 1 ? "" : "s", path.c_str());
    std::printf("data: %s (%zu columns), rows hash-partitioned by value across ranks\n", dir.string().c_str(),
                files.size());
    std::fflush(stdout);
  }

  // Load and partition every column, then shuffle them all in one call.
  std::vector<partitioned_column> parts;
  std::vector<zs::column> on_device;
  std::vector<zs::shuffle_column> inputs;
  for (auto const& file : files) {
    zs::column const whole = zs::io::read_column(file);
    std::uint64_t const begin = whole.size() * me / ranks, end = whole.size() * (me + 1) / ranks;
    parts.push_back(partition_slice(whole, begin, end, ranks));
  }
  for (auto& p : parts) {
    if (use_gpu) on_device.push_back(p.rows.copy_to(zs::memory_kind::device, stream->get()));
    inputs.push_back({use_gpu ? on_device.back().view() : p.rows.view(), p.row_begin});
  }
  zs::shuffle_stats stats;
  std::vector<zs::column> received;
  if (use_gpu) {
    for (auto const& c : zs::shuffle(*device, inputs, options, stream->get(), &stats)) {
      received.push_back(c.copy_to(zs::memory_kind::host, stream->get()));
    }
  } else {
    received = zs::shuffle(comm, inputs, options, &stats);
  }
  double const seconds = static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(stats.seconds * 1e9))) / 1e9;

  // Verify: what rank s sent here equals what arrived from rank s (rows and checksums).
  std::vector<column_result> results;
  bool all_verified = true;
  for (std::size_t c = 0; c < files.size(); ++c) {
    auto const& p = parts[c];
    std::vector<std::uint64_t> rows_to(ranks), sums_to(ranks), words(ranks, 8), sums_from(ranks);
    for (int d = 0; d < ranks; ++d) {
      rows_to[d] = p.row_begin[d + 1] - p.row_begin[d];
      sums_to[d] = content_checksum(p.rows.view(), p.row_begin[d], p.row_begin[d + 1]);
    }
    auto const rows_from = comm.exchange_counts(rows_to);
    comm.alltoallv(std::as_bytes(std::span(sums_to)), words, std::as_writable_bytes(std::span(sums_from)), words);
    bool ok = true;
    std::uint64_t row = 0;
    for (int s = 0; s < ranks; ++s) {
      ok = ok && row + rows_from[s] <= received[c].size() &&
           content_checksum(received[c].view(), row, row + rows_from[s]) == sums_from[s];
      row += rows_from[s];
    }
    ok = ok && row == received[c].size();
    column_result r;
    r.name = files[c].filename().string();
    r.type = received[c].type();
    r.codec = std::string(zs::default_codec(r.type).name());
    r.verified = comm.all_ok(ok);
    r.rows = comm.allreduce_sum(received[c].size());
    r.raw_bytes = comm.allreduce_sum(stats.column_raw_bytes[c]);
    r.wire_bytes = comm.allreduce_sum(stats.column_wire_bytes[c]);
    all_verified = all_verified && r.verified;
    results.push_back(r);
  }

  if (lead) {
    double const mib = 1024.0 * 1024.0;
    std::printf("\n%-22s %-8s %-8s %11s %10s %10s %7s  %s\n", "column", "type", "codec", "rows", "raw MiB", "wire MiB",
                "ratio", "check");
    std::uint64_t raw = 0, wire = 0;
    for (auto const& r : results) {
      raw += r.raw_bytes, wire += r.wire_bytes;
      std::printf("%-22s %-8s %-8s %11llu %10.2f %10.2f %7.2f  %s\n", r.name.c_str(),
                  std::string(zs::to_string(r.type)).c_str(), r.codec.c_str(), static_cast<unsigned long long>(r.rows),
                  r.raw_bytes / mib, r.wire_bytes / mib,
                  r.wire_bytes ? static_cast<double>(r.raw_bytes) / static_cast<double>(r.wire_bytes) : 0.0,
                  r.verified ? "ok" : "MISMATCH");
    }
    std::printf("\ntotal: %.2f MiB of columns crossed as %.2f MiB of frames (ratio %.2f) in %llu round%s, %.1f ms\n",
                raw / mib, wire / mib, wire ? static_cast<double>(raw) / static_cast<double>(wire) : 0.0,
                static_cast<unsigned long long>(stats.rounds), stats.rounds == 1 ? "" : "s", seconds * 1e3);
    std::printf("%s\n", all_verified ? "verified: every partition arrived intact on every rank (rows and checksums)"
                                     : "FAILED: some partitions did not arrive intact");
    if (auto json = args.get("json")) write_json(*json, ranks, use_gpu ? std::string(device->transport()) : "mpi (cpu)", seconds, results);
  }
  return all_verified ? 0 : 1;
}
