// zshuffle demo: a compressed shuffle of the real columns, across every rank of the job.
//
// Each rank takes a slice of every column, hash-partitions its rows by destination rank (rows
// with equal values meet on one rank, as in a distributed join or group-by), encodes one frame
// per destination, exchanges frames with an all-to-all, decodes what it received, and checks
// end to end that every partition arrived intact. With a GPU the codecs run on it and frames
// are staged through pinned host memory for MPI; without one, the CPU reference codecs run the
// same protocol over host memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "zs/codec.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/device.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

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

// The codec for a column: the best one built in for its type, raw otherwise.
const zs::codec& codec_for(zs::value_type type) {
  if (zs::is_integer(type)) {
    for (const zs::codec* c : zs::all_codecs()) {
      if (c->id() == zs::codec_id::bitpack_for && c->supports(type)) return *c;
    }
  }
  return zs::get_codec(zs::codec_id::raw);
}

struct column_result {
  std::string name;
  zs::value_type type;
  std::string codec;
  std::uint64_t rows = 0;        // summed over ranks
  std::uint64_t raw_bytes = 0;   // uncompressed layout bytes, summed over ranks
  std::uint64_t wire_bytes = 0;  // summed over ranks
  double encode_s = 0, exchange_s = 0, decode_s = 0;  // slowest rank
  bool verified = false;
};

class shuffler {
 public:
  shuffler(zs::communicator& comm, bool use_gpu) : comm_(comm), use_gpu_(use_gpu) {
    if (use_gpu_) stream_.emplace();
  }

  column_result run(const std::string& name, const zs::column& whole) {
    int const ranks = comm_.size();
    int const me = comm_.rank();
    column_result result;
    result.name = name;
    result.type = whole.type();
    const zs::codec& codec = codec_for(whole.type());
    result.codec = std::string(codec.name());

    std::uint64_t const begin = whole.size() * me / ranks, end = whole.size() * (me + 1) / ranks;
    partitioned_column const part = partition_slice(whole, begin, end, ranks);

    // Encode one frame per destination into a compact send buffer.
    auto t0 = clock_type::now();
    std::vector<std::byte> send;
    std::vector<std::uint64_t> send_counts(ranks);
    encode(codec, part, send, send_counts);
    result.encode_s = seconds_since(t0);

    // Exchange sizes, then frames, then the senders' checksums for verification.
    t0 = clock_type::now();
    auto const recv_counts = comm_.exchange_counts(send_counts);
    std::uint64_t total = 0;
    for (auto c : recv_counts) total += c;
    std::vector<std::byte> recv(total);
    comm_.alltoallv(send, send_counts, recv, recv_counts);
    result.exchange_s = seconds_since(t0);

    // Decode into one column: partitions concatenated in source rank order.
    t0 = clock_type::now();
    std::vector<std::uint64_t> recv_offsets(ranks + 1, 0);
    for (int r = 0; r < ranks; ++r) recv_offsets[r + 1] = recv_offsets[r] + recv_counts[r];
    std::vector<std::uint64_t> recv_rows;
    zs::column received;
    bool const decoded = decode(codec, whole.type(), recv, recv_offsets, received, recv_rows);
    result.decode_s = seconds_since(t0);
    if (!comm_.all_ok(decoded)) {
      ZS_FAIL(zs::error_code::corrupt_frame, "column '" + name + "': a rank could not decode what it received");
    }

    // Verify: what rank s sent to me equals what I decoded from rank s.
    std::vector<std::uint64_t> sent_sums(ranks), sent_words(ranks, 8), got_sums(ranks);
    for (int d = 0; d < ranks; ++d) sent_sums[d] = content_checksum(part.rows.view(), part.row_begin[d], part.row_begin[d + 1]);
    comm_.alltoallv(std::as_bytes(std::span(sent_sums)), sent_words, std::as_writable_bytes(std::span(got_sums)), sent_words);
    bool ok = true;
    std::uint64_t row = 0;
    for (int s = 0; s < ranks; ++s) {
      ok = ok && content_checksum(received.view(), row, row + recv_rows[s]) == got_sums[s];
      row += recv_rows[s];
    }
    result.verified = comm_.all_ok(ok);
    result.rows = comm_.allreduce_sum(received.size());
    // What an uncompressed shuffle sends: the values, or for strings the characters plus the
    // int64 offsets of the Arrow layout.
    std::uint64_t const layout_bytes =
        part.rows.data_bytes() + (whole.type() == zs::value_type::string ? 8 * part.rows.size() : 0);
    result.raw_bytes = comm_.allreduce_sum(layout_bytes);
    result.wire_bytes = comm_.allreduce_sum(send.size());
    bool const rows_conserved = result.rows == whole.size();
    result.verified = result.verified && rows_conserved;
    result.encode_s = max_over_ranks(result.encode_s);
    result.exchange_s = max_over_ranks(result.exchange_s);
    result.decode_s = max_over_ranks(result.decode_s);
    return result;
  }

 private:
  double max_over_ranks(double seconds) {
    return static_cast<double>(comm_.allreduce_max(static_cast<std::uint64_t>(seconds * 1e9))) / 1e9;
  }

  std::vector<zs::encode_source> sources(const partitioned_column& p, const zs::column_view& v) const {
    std::vector<zs::encode_source> out;
    int const ranks = comm_.size();
    for (int d = 0; d < ranks; ++d) {
      std::uint64_t const b = p.row_begin[d], e = p.row_begin[d + 1];
      zs::encode_source s{v.type, e - b, nullptr};
      if (v.type == zs::value_type::string) {
        s.values = v.data;
        s.offsets = v.offsets + b;
        s.chars_bytes = p.chars_begin[d + 1] - p.chars_begin[d];
      } else {
        s.values = static_cast<const std::byte*>(v.data) + b * zs::value_width(v.type);
      }
      out.push_back(s);
    }
    return out;
  }

  void encode(const zs::codec& codec, const partitioned_column& p, std::vector<std::byte>& send,
              std::vector<std::uint64_t>& send_counts) {
    int const ranks = comm_.size();
    auto const host_sources = sources(p, p.rows.view());
    auto const layout = zs::layout_frames(codec, host_sources);
    std::vector<std::uint64_t> frame_bytes(ranks);
    std::vector<std::byte> frames;
    if (!use_gpu_) {
      frames.resize(layout.back());
      codec.encode_host({host_sources, frames.data(), layout, frame_bytes.data()});
    } else {
      zs::column const d = p.rows.copy_to(zs::memory_kind::device, stream());
      auto const device_sources = sources(p, d.view());
      zs::device_buffer out(layout.back(), stream());
      zs::device_buffer bytes(ranks * sizeof(std::uint64_t), stream());
      zs::device_buffer temp(codec.encode_temp_bytes(device_sources), stream());
      codec.encode_async({device_sources, out.as<std::byte>(), layout, bytes.as<std::uint64_t>()}, temp.data(),
                         temp.size(), stream());
      zs::copy_async(frame_bytes.data(), bytes.data(), ranks * sizeof(std::uint64_t), stream());
      ZS_CUDA_TRY(cudaStreamSynchronize(stream()));
      // Download only the bytes each frame used, packed, through pinned memory.
      std::uint64_t packed = 0;
      for (auto b : frame_bytes) packed += zs::align_frame(b);
      staging_ = zs::pinned_buffer(std::max<std::uint64_t>(packed, 1));
      std::uint64_t at = 0;
      for (int r = 0; r < ranks; ++r) {
        zs::copy_async(staging_.as<std::byte>() + at, out.as<std::byte>() + layout[r], frame_bytes[r], stream());
        at += zs::align_frame(frame_bytes[r]);
      }
      ZS_CUDA_TRY(cudaStreamSynchronize(stream()));
      frames.assign(staging_.as<std::byte>(), staging_.as<std::byte>() + packed);
      send.swap(frames);
      for (int r = 0; r < ranks; ++r) send_counts[r] = zs::align_frame(frame_bytes[r]);
      return;
    }
    // Pack the frames so each block of the all-to-all is one frame.
    send.clear();
    for (int r = 0; r < ranks; ++r) {
      send_counts[r] = zs::align_frame(frame_bytes[r]);
      send.insert(send.end(), frames.begin() + static_cast<std::ptrdiff_t>(layout[r]),
                  frames.begin() + static_cast<std::ptrdiff_t>(layout[r] + frame_bytes[r]));
      send.resize(send.size() + (send_counts[r] - frame_bytes[r]), std::byte{0});
    }
  }

  // Sizes the output from the received headers, then decodes every frame. Returns false (and
  // prints why) when a frame is unusable; the caller makes every rank agree before throwing.
  bool decode(const zs::codec& codec, zs::value_type type, const std::vector<std::byte>& recv,
              const std::vector<std::uint64_t>& offsets, zs::column& out, std::vector<std::uint64_t>& rows) {
    int const ranks = comm_.size();
    rows.assign(ranks, 0);
    std::vector<std::uint64_t> chars(ranks, 0);
    for (int s = 0; s < ranks; ++s) {
      std::uint64_t const available = offsets[s + 1] - offsets[s];
      const std::byte* frame = recv.data() + offsets[s];
      // Trust the counts only from a header that is intact and of this column's type.
      zs::frame_header const h = available >= zs::frame_header_bytes ? zs::load_header(frame) : zs::frame_header{};
      zs::frame_expectation const expect{codec.decodes(), type, h.value_count, h.raw_bytes};
      auto const status = zs::validate_header(frame, available, expect);
      if (status != zs::frame_status::ok) {
        std::fprintf(stderr, "rank %d: frame from rank %d: %s\n", comm_.rank(), s,
                     std::string(zs::to_string(status)).c_str());
        return false;
      }
      rows[s] = h.value_count;
      chars[s] = type == zs::value_type::string ? h.raw_bytes : 0;
    }
    std::uint64_t total_rows = 0, total_chars = 0;
    for (int s = 0; s < ranks; ++s) total_rows += rows[s], total_chars += chars[s];
    zs::memory_kind const where = use_gpu_ ? zs::memory_kind::device : zs::memory_kind::host;
    zs::column decoded = zs::column::allocate(type, total_rows, where, stream(), total_chars);
    auto v = decoded.mutable_view();
    std::vector<zs::decode_target> targets;
    std::uint64_t row = 0, at = 0;
    for (int s = 0; s < ranks; ++s) {
      zs::decode_target t{type, rows[s], nullptr};
      if (type == zs::value_type::string) {
        t.values = v.data;
        t.offsets = v.offsets + row;
        t.chars_begin = at;
        t.chars_bytes = chars[s];
      } else {
        t.values = static_cast<std::byte*>(v.data) + row * zs::value_width(type);
      }
      row += rows[s];
      at += chars[s];
      targets.push_back(t);
    }
    std::vector<zs::frame_status> status(ranks, zs::frame_status::not_decoded);
    if (!use_gpu_) {
      codec.decode_host({recv.data(), offsets, targets, status.data()});
      out = std::move(decoded);
    } else {
      zs::device_buffer in(recv.size(), stream());
      zs::copy_async(in.data(), recv.data(), recv.size(), stream());
      zs::device_buffer d_status(ranks * sizeof(zs::frame_status), stream());
      zs::device_buffer temp(codec.decode_temp_bytes(targets), stream());
      codec.decode_async({in.as<std::byte>(), offsets, targets, d_status.as<zs::frame_status>()}, temp.data(),
                         temp.size(), stream());
      zs::copy_async(status.data(), d_status.data(), ranks * sizeof(zs::frame_status), stream());
      out = decoded.copy_to(zs::memory_kind::host, stream());  // synchronises
    }
    for (int s = 0; s < ranks; ++s) {
      if (status[s] != zs::frame_status::ok) {
        std::fprintf(stderr, "rank %d: frame from rank %d: %s\n", comm_.rank(), s,
                     std::string(zs::to_string(status[s])).c_str());
        return false;
      }
    }
    return true;
  }

  cudaStream_t stream() const { return stream_ ? stream_->get() : nullptr; }

  zs::communicator& comm_;
  bool use_gpu_;
  std::optional<zs::cuda_stream> stream_;  // only on the GPU path
  zs::pinned_buffer staging_;
};

}  // namespace

namespace {

void print_usage() {
  std::puts(
      "usage: mpirun -np N zshuffle demo [--data DIR] [--columns a,b,...] [--cpu] [--json PATH]\n"
      "  --data DIR      decompressed column files (default: $ZS_DATA_DIR)\n"
      "  --columns LIST  only these files, comma separated (default: every column file in DIR)\n"
      "  --cpu           run the CPU reference codecs even where a GPU is present\n"
      "  --json PATH     also write the results as JSON (rank 0)");
}

std::vector<std::filesystem::path> chosen_columns(const std::filesystem::path& dir, const std::string& list) {
  if (list.empty()) return zs::io::list_columns(dir);
  std::vector<std::filesystem::path> files;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t const comma = std::min(list.find(',', start), list.size());
    if (comma > start) files.push_back(dir / list.substr(start, comma - start));
    start = comma + 1;
  }
  return files;
}

void write_json(const std::string& path, int ranks, bool gpu, const std::vector<column_result>& results) {
  std::ofstream out(path);
  if (!out) ZS_FAIL(zs::error_code::io_error, "cannot write '" + path + "'");
  out << "{\n  \"ranks\": " << ranks << ",\n  \"path\": \"" << (gpu ? "gpu" : "cpu") << "\",\n  \"columns\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto const& r = results[i];
    out << "    {\"name\": \"" << r.name << "\", \"type\": \"" << zs::to_string(r.type) << "\", \"codec\": \""
        << r.codec << "\", \"rows\": " << r.rows << ", \"raw_bytes\": " << r.raw_bytes
        << ", \"wire_bytes\": " << r.wire_bytes << ", \"encode_s\": " << r.encode_s
        << ", \"exchange_s\": " << r.exchange_s << ", \"decode_s\": " << r.decode_s
        << ", \"verified\": " << (r.verified ? "true" : "false") << "}" << (i + 1 < results.size() ? "," : "")
        << "\n";
  }
  out << "  ]\n}\n";
}

}  // namespace

int run_demo(int argc, char** argv) {
  zs::cli::args const args(argc, argv, {"data", "columns", "json"}, {"cpu", "help"});
  if (args.flag("help")) {
    print_usage();
    return 0;
  }
  zs::mpi_environment mpi(nullptr, nullptr, MPI_THREAD_SINGLE);
  zs::mpi_communicator comm;
  bool const lead = comm.rank() == 0;

  std::filesystem::path const dir = args.get("data") ? std::filesystem::path(*args.get("data")) : zs::io::data_dir();
  auto const files = chosen_columns(dir, args.get_or("columns", ""));
  ZS_EXPECTS(!files.empty(), "column files in '" + dir.string() + "'");

  // One GPU per rank, by local rank; every rank must agree on the path.
  int devices = 0;
  bool const have_gpu = !args.flag("cpu") && zs::cuda_device_available() &&
                        cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  bool const use_gpu = comm.all_ok(have_gpu);
  std::string gpu_name;
  if (use_gpu) {
    int const device = zs::local_rank() % devices;
    ZS_CUDA_TRY(cudaSetDevice(device));
    gpu_name = zs::query_device(device).name;
  }
  if (lead) {
    std::string path;
    if (use_gpu) {
      path = "GPU codecs (" + gpu_name + "), frames staged through pinned host memory for MPI";
    } else if (args.flag("cpu")) {
      path = "CPU reference codecs (--cpu)";
    } else {
      path = "CPU reference codecs: no GPU on this machine, same formats and protocol";
    }
    std::printf("zshuffle demo: %d rank%s, %s\n", comm.size(), comm.size() == 1 ? "" : "s", path.c_str());
    std::printf("data: %s (%zu columns), rows hash-partitioned by value across ranks\n\n", dir.string().c_str(),
                files.size());
    std::printf("%-22s %-8s %-5s %11s %10s %10s %6s %9s %9s %9s  %s\n", "column", "type", "codec", "rows",
                "raw MiB", "wire MiB", "ratio", "enc ms", "xchg ms", "dec ms", "check");
  }

  shuffler shuffle(comm, use_gpu);
  std::vector<column_result> results;
  bool all_verified = true;
  for (auto const& file : files) {
    zs::column const whole = zs::io::read_column(file);
    auto const r = shuffle.run(file.filename().string(), whole);
    all_verified = all_verified && r.verified;
    results.push_back(r);
    if (lead) {
      double const mib = 1024.0 * 1024.0;
      std::printf("%-22s %-8s %-5s %11llu %10.2f %10.2f %6.2f %9.1f %9.1f %9.1f  %s\n", r.name.c_str(),
                  std::string(zs::to_string(r.type)).c_str(), r.codec.c_str(),
                  static_cast<unsigned long long>(r.rows), r.raw_bytes / mib, r.wire_bytes / mib,
                  r.wire_bytes ? static_cast<double>(r.raw_bytes) / static_cast<double>(r.wire_bytes) : 0.0,
                  r.encode_s * 1e3, r.exchange_s * 1e3, r.decode_s * 1e3, r.verified ? "ok" : "MISMATCH");
      std::fflush(stdout);
    }
  }
  if (lead) {
    std::uint64_t raw = 0, wire = 0;
    for (auto const& r : results) raw += r.raw_bytes, wire += r.wire_bytes;
    std::printf("\ntotal: %.2f MiB of column data crossed as %.2f MiB of frames (ratio %.2f)\n",
                raw / 1048576.0, wire / 1048576.0, wire ? static_cast<double>(raw) / static_cast<double>(wire) : 0.0);
    std::printf("%s\n", all_verified ? "verified: every partition arrived intact on every rank (rows and checksums)"
                                     : "FAILED: some partitions did not arrive intact");
    if (auto json = args.get("json")) write_json(*json, comm.size(), use_gpu, results);
  }
  return all_verified ? 0 : 1;
}
