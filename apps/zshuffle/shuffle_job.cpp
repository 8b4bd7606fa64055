#include "shuffle_job.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <span>

#include "args.hpp"
#include "job.hpp"
#include "zs/comm/mpi_device_communicator.hpp"
#include "zs/comm/nccl_communicator.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs/partition.hpp"

namespace zs::cli {
namespace {

namespace fs = std::filesystem;

// A checksum of rows [begin, end) of a host column; for strings it covers the lengths too.
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

// What identifies a column file's content, compared across ranks.
constexpr std::size_t fingerprint_words = 4;  // type, rows, bytes, checksum

std::string describe_fingerprint(const std::uint64_t* f) {
  char text[160];
  std::snprintf(text, sizeof text, "%" PRIu64 " rows of %s (%" PRIu64 " bytes, checksum %016" PRIx64 ")", f[1],
                std::string(zs::to_string(static_cast<zs::value_type>(f[0]))).c_str(), f[2], f[3]);
  return text;
}

// Every rank compares what every rank read; all reach the same verdict from the same gathered
// words, so a difference is an agreed error without a further collective.
void check_same_input(zs::communicator& comm, std::string_view command, const std::vector<input_column>& input) {
  int const ranks = comm.size();
  std::string const lead = std::string(command) + ": the ranks read different input, and rows would be lost: ";

  auto const counts = together([&] { return comm.allgather(input.size()); });
  for (int r = 1; r < ranks; ++r) {
    if (counts[r] == counts[0]) continue;
    std::string message = lead + "they chose different numbers of column files (";
    for (int p = 0; p < ranks; ++p) message += (p ? ", rank " : "rank ") + std::to_string(p) + ": " + std::to_string(counts[p]);
    throw agreed_error(zs::error_code::size_mismatch, message + ")", __FILE__, __LINE__);
  }
  std::size_t const files = input.size();

  // Names, each ended by a NUL (which no file name holds), and the fingerprints.
  std::string names;
  std::vector<std::uint64_t> mine;
  for (auto const& c : input) {
    names += c.name + '\0';
    mine.insert(mine.end(), {static_cast<std::uint64_t>(c.whole.type()), c.whole.size(), c.whole.data_bytes(),
                             content_checksum(c.whole.view(), 0, c.whole.size())});
  }
  std::vector<std::uint64_t> all(mine.size() * static_cast<std::size_t>(ranks));
  std::vector<char> all_names;
  std::vector<std::uint64_t> name_bytes;
  together([&] {
    comm.allgatherv(std::as_bytes(std::span(mine)), std::as_writable_bytes(std::span(all)),
                    std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), mine.size() * 8));
    name_bytes = comm.allgather(names.size());
    std::uint64_t total = 0;
    for (auto const n : name_bytes) total += n;
    all_names.resize(total);
    comm.allgatherv(std::as_bytes(std::span(names)), std::as_writable_bytes(std::span(all_names)), name_bytes);
  });
  std::vector<std::vector<std::string>> names_of(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0, at = 0; r < names_of.size(); at += name_bytes[r], ++r) {
    for (std::size_t i = at; i < at + name_bytes[r];) {
      std::size_t const end = std::string_view(all_names.data() + i, at + name_bytes[r] - i).find('\0') + i;
      names_of[r].emplace_back(all_names.data() + i, end - i);
      i = end + 1;
    }
  }

  std::string differences;
  for (std::size_t c = 0; c < files; ++c) {
    const std::uint64_t* first = &all[c * fingerprint_words];
    std::string ranks_that_differ;
    int differing = 0;
    for (int r = 1; r < ranks; ++r) {
      const std::uint64_t* other = &all[(static_cast<std::size_t>(r) * files + c) * fingerprint_words];
      bool const same_name = names_of[r][c] == names_of[0][c];
      if (same_name && std::equal(first, first + fingerprint_words, other)) continue;
      if (++differing > 4) continue;
      ranks_that_differ += ", rank " + std::to_string(r) + " read " +
                           (same_name ? "" : "'" + names_of[r][c] + "': ") + describe_fingerprint(other);
    }
    if (differing == 0) continue;
    if (differing > 4) ranks_that_differ += ", and " + std::to_string(differing - 4) + " more rank(s) differ";
    differences += (differences.empty() ? "" : "; ") + std::string("column file '") + names_of[0][c] +
                   "' differs: rank 0 read " + describe_fingerprint(first) + ranks_that_differ;
  }
  if (!differences.empty()) throw agreed_error(zs::error_code::size_mismatch, lead + differences, __FILE__, __LINE__);
}

// The shuffle's device side: NCCL when every rank has its own GPU, otherwise MPI staged through
// pinned host memory (ranks may then share a GPU).
std::unique_ptr<zs::device_communicator> device_side(zs::mpi_communicator& comm) {
  if (zs::ranks_have_distinct_gpus(comm)) return std::make_unique<zs::nccl_communicator>(comm);
  return std::make_unique<zs::mpi_device_communicator>(comm);
}

}  // namespace

void add_round_bytes_option(CLI::App& app, std::uint64_t& round_bytes) {
  add_size_option(app, "--round-bytes", round_bytes,
                  "uncompressed bytes per rank per pipeline round, at least " + format_size(min_round_bytes), min_round_bytes);
  app.footer(app.get_footer() + "\n\n--round-bytes bounds memory (about three rounds of frames are alive at once on the "
             "GPU) and sets the\npipeline's grain. It starts at " + format_size(min_round_bytes) +
             ": below that, a round's fixed costs (frame headers, manifest\nentries, several collectives) outweigh "
             "its data, and the rounds become absurdly many.");
}

void add_job_options(CLI::App& app, job_options& options) {
  app.add_option("--data", options.data, "folder of the decompressed column files (default: $ZS_DATA_DIR)");
  app.add_option("--columns", options.columns, "only these files of the folder, comma separated (default: every column file)")
      ->delimiter(',');
  app.add_flag("--cpu", options.cpu, "run the CPU reference codecs even where a GPU is present");
  add_round_bytes_option(app, options.round_bytes);
  app.add_option("--json", options.json, "also write the results as JSON to this file (rank 0 writes it)");
  add_progress_options(app, options.progress);
}

bool parse_on_every_rank(zs::communicator& comm, CLI::App& app, int argc, char** argv, std::string_view command,
                         const std::string& json_path, std::optional<output_file>& json) {
  bool const lead = comm.rank() == 0;
  bool go = true;
  agreed_step(comm, command, "reading the command line", [&] {
    go = parse(app, argc, argv, lead);
    if (go && lead && !json_path.empty()) json.emplace("--json", json_path);
  });
  return together([&] { return comm.all_ok(go); });
}

std::vector<input_column> read_agreed_input(zs::communicator& comm, std::string_view command,
                                            const job_options& options) {
  std::vector<input_column> input;
  agreed_step(comm, command, "reading the column files", [&] {
    fs::path const dir = data_folder(options.data);
    std::vector<fs::path> files;
    if (options.columns.empty()) {
      files = zs::io::list_columns(dir);
      if (files.empty()) ZS_FAIL(zs::error_code::io_error, "no column files in '" + dir.string() + "'");
    } else {
      for (auto const& name : options.columns) files.push_back(dir / name);
    }
    for (auto const& file : files) input.push_back({file.filename().string(), zs::io::read_column(file)});
  });
  check_same_input(comm, command, input);
  return input;
}

partitioned_column partition_slice(const zs::column& whole, int rank, int ranks) {
  auto const w = whole.view();
  std::uint64_t const begin = w.count * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
  std::uint64_t const end = w.count * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
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
  p.row_begin.assign(static_cast<std::size_t>(ranks) + 1, 0);
  p.chars_begin.assign(static_cast<std::size_t>(ranks) + 1, 0);
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

shuffler::shuffler(zs::mpi_communicator& comm, bool cpu_only, std::string_view command)
    : comm_(comm), command_(command) {
  // Every rank must take the same path.
  int devices = 0;
  bool const have_gpu = !cpu_only && zs::cuda_device_available() && cudaGetDeviceCount(&devices) == cudaSuccess &&
                        devices > 0;
  if (!together([&] { return comm.all_ok(have_gpu); })) {
    description_ = cpu_only ? "CPU reference codecs (--cpu), frames over MPI"
                            : "CPU reference codecs over MPI: no GPU on every rank; same formats and protocol";
    return;
  }
  std::string gpu_name;
  agreed_step(comm, command_, "choosing this rank's GPU", [&] {
    gpu_ = zs::device_for_rank(devices);
    ZS_CUDA_TRY(cudaSetDevice(gpu_));
    gpu_name = zs::query_device(gpu_).name;
    stream_.emplace();
  });
  device_ = together([&] { return device_side(comm); });
  description_ = "GPU codecs on " + gpu_name + ", frames over " + std::string(device_->transport());
}

std::string shuffler::transport() const { return on_gpu() ? std::string(device_->transport()) : "mpi (cpu)"; }

void shuffler::load(const std::vector<partitioned_column>& parts) {
  agreed_step(comm_, command_, "loading the partitions", [&] {
    on_device_.clear();
    inputs_.clear();
    for (auto const& p : parts) {
      if (on_gpu()) on_device_.push_back(p.rows.copy_to(zs::memory_kind::device, stream_->get()));
      inputs_.push_back({on_gpu() ? on_device_.back().view() : p.rows.view(), p.row_begin});
    }
    if (on_gpu()) stream_->synchronize();
  });
}

std::vector<zs::column> shuffler::run(const zs::shuffle_options& options, zs::shuffle_stats* stats) {
  if (!on_gpu()) return together([&] { return zs::shuffle(comm_, inputs_, options, stats); });
  auto const arrived = together([&] { return zs::shuffle(*device_, inputs_, options, stream_->get(), stats); });
  std::vector<zs::column> host;
  agreed_step(comm_, command_, "copying the shuffled columns to the host", [&] {
    for (auto const& c : arrived) host.push_back(c.copy_to(zs::memory_kind::host, stream_->get()));
  });
  return host;
}

zs::shuffled_table shuffler::shuffle_table(const zs::table& host, std::span<const std::size_t> keys,
                                           const zs::table_shuffle_options& options, zs::shuffle_stats* stats) {
  if (!on_gpu()) return together([&] { return zs::shuffle_table(comm_, host, keys, options, stats); });
  zs::table device{host.names, {}};
  agreed_step(comm_, command_, "copying the table to the GPU", [&] {
    for (auto const& c : host.columns) device.columns.push_back(c.copy_to(zs::memory_kind::device, stream_->get()));
  });
  auto out = together([&] { return zs::shuffle_table(*device_, device, keys, options, stream_->get(), stats); });
  agreed_step(comm_, command_, "copying the shuffled table to the host", [&] {
    for (auto& c : out.rows.columns) c = c.copy_to(zs::memory_kind::host, stream_->get());
  });
  return out;
}

zs::table table_slice(const std::vector<input_column>& input, std::uint64_t n, int rank, int ranks) {
  std::uint64_t const begin = n * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
  std::uint64_t const end = n * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
  zs::table t;
  for (auto const& c : input) {
    auto const w = c.whole.view();
    ZS_EXPECTS(w.count > 0, "a column file with rows");
    t.names.push_back(c.name);
    if (w.type != zs::value_type::string) {
      std::size_t const width = zs::value_width(w.type);
      zs::column out = zs::column::allocate(w.type, end - begin, zs::memory_kind::host);
      auto* to = static_cast<std::byte*>(out.mutable_view().data);
      for (std::uint64_t i = begin; i < end; ++i) {
        std::memcpy(to + (i - begin) * width, static_cast<const std::byte*>(w.data) + (i % w.count) * width, width);
      }
      t.columns.push_back(std::move(out));
      continue;
    }
    auto const length = [&](std::uint64_t i) {
      return static_cast<std::uint64_t>(w.offsets[i % w.count + 1] - w.offsets[i % w.count]);
    };
    std::uint64_t chars = 0;
    for (std::uint64_t i = begin; i < end; ++i) chars += length(i);
    zs::column out = zs::column::allocate(w.type, end - begin, zs::memory_kind::host, nullptr, chars);
    auto const to = out.mutable_view();
    to.offsets[0] = 0;
    for (std::uint64_t i = begin; i < end; ++i) {
      std::uint64_t const r = i - begin, len = length(i);
      std::memcpy(static_cast<char*>(to.data) + to.offsets[r], static_cast<const char*>(w.data) + w.offsets[i % w.count],
                  len);
      to.offsets[r + 1] = to.offsets[r] + static_cast<std::int64_t>(len);
    }
    t.columns.push_back(std::move(out));
  }
  return t;
}

namespace {

// The bytes of row i of a host column: its value, or its characters.
std::pair<const std::byte*, std::uint64_t> value_bytes(const zs::column_view& v, std::uint64_t i) {
  if (v.type == zs::value_type::string) {
    return {static_cast<const std::byte*>(v.data) + v.offsets[i], static_cast<std::uint64_t>(v.offsets[i + 1] - v.offsets[i])};
  }
  std::size_t const width = zs::value_width(v.type);
  return {static_cast<const std::byte*>(v.data) + i * width, width};
}

// The rank a key value belongs to: its hash_partition hash modulo ranks.
int home_of(const zs::column_view& key, std::uint64_t i, int ranks) {
  std::uint32_t h = 0;
  switch (key.type) {
    case zs::value_type::int8: h = zs::hash_key(key.values<std::int8_t>()[i]); break;
    case zs::value_type::int16: h = zs::hash_key(key.values<std::int16_t>()[i]); break;
    case zs::value_type::uint8:
    case zs::value_type::bool8: h = zs::hash_key(key.values<std::uint8_t>()[i]); break;  // hashed as uint8
    case zs::value_type::uint16: h = zs::hash_key(key.values<std::uint16_t>()[i]); break;
    case zs::value_type::int32: h = zs::hash_key(key.values<std::int32_t>()[i]); break;
    case zs::value_type::int64: h = zs::hash_key(key.values<std::int64_t>()[i]); break;
    case zs::value_type::uint32: h = zs::hash_key(key.values<std::uint32_t>()[i]); break;
    case zs::value_type::uint64: h = zs::hash_key(key.values<std::uint64_t>()[i]); break;
    case zs::value_type::float32: h = zs::hash_key(key.values<float>()[i]); break;
    case zs::value_type::float64: h = zs::hash_key(key.values<double>()[i]); break;
    case zs::value_type::string: {
      auto const [at, n] = value_bytes(key, i);
      h = zs::hash_key(std::string_view(reinterpret_cast<const char*>(at), n));
      break;
    }
    default: ZS_FAIL(zs::error_code::unsupported, "the demo cannot place keys of type " + std::string(zs::to_string(key.type)));
  }
  return static_cast<int>(h % static_cast<std::uint32_t>(ranks));
}

// Order-free fingerprints of a table's rows: per column the count and the wrapping sum of each
// value's mixed checksum, and the same over whole rows (all columns of a row folded together),
// so rows that arrive torn apart or changed show even when every column's values are all there.
std::vector<std::uint64_t> fingerprints(const zs::table& t) {
  std::size_t const C = t.columns.size();
  std::vector<std::uint64_t> sums(C + 2, 0);  // per column, whole rows, row count
  std::uint64_t const rows = C == 0 ? 0 : t.columns.front().size();
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t row = 0;
    for (std::size_t c = 0; c < C; ++c) {
      auto const [at, n] = value_bytes(t.columns[c].view(), i);
      std::uint64_t const h = zs::hash::mix64(zs::hash::checksum(at, n) + c);
      sums[c] += h;
      row = zs::hash::mix64(row ^ h);
    }
    sums[C] += zs::hash::mix64(row);
  }
  sums[C + 1] = rows;
  return sums;
}

}  // namespace

std::vector<column_check> verify_table(zs::communicator& comm, const zs::table& sent, const zs::table& received,
                                       std::size_t key) {
  int const ranks = comm.size(), me = comm.rank();
  std::size_t const C = sent.columns.size();
  bool home = received.columns.size() == C;
  std::uint64_t const rows = home && C > 0 ? received.columns.front().size() : 0;
  for (std::uint64_t i = 0; home && i < rows; ++i) home = home_of(received.columns[key].view(), i, ranks) == me;
  auto const mine_sent = fingerprints(sent);
  auto const mine_received = home ? fingerprints(received) : std::vector<std::uint64_t>(C + 2, 0);
  std::vector<column_check> checks(C);
  together([&] {
    bool const all_home = comm.all_ok(home);
    bool const rows_whole = comm.allreduce_sum(mine_sent[C]) == comm.allreduce_sum(mine_received[C]) &&
                            comm.allreduce_sum(mine_sent[C + 1]) == comm.allreduce_sum(mine_received[C + 1]);
    for (std::size_t c = 0; c < C; ++c) {
      checks[c].rows = comm.allreduce_sum(home ? received.columns[c].size() : 0);
      checks[c].intact = all_home && rows_whole &&
                         comm.allreduce_sum(mine_sent[c]) == comm.allreduce_sum(mine_received[c]);
    }
  });
  return checks;
}

std::vector<column_check> verify(zs::communicator& comm, const std::vector<input_column>& input,
                                 const std::vector<partitioned_column>& parts,
                                 const std::vector<zs::column>& received) {
  int const ranks = comm.size();
  std::vector<column_check> checks;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    auto const& p = parts[c];
    // What this rank sent to each destination: rows and a checksum of them.
    std::vector<std::uint64_t> rows_to(ranks), sums_to(ranks), words(ranks, 8), sums_from(ranks);
    for (int d = 0; d < ranks; ++d) {
      rows_to[d] = p.row_begin[d + 1] - p.row_begin[d];
      sums_to[d] = content_checksum(p.rows.view(), p.row_begin[d], p.row_begin[d + 1]);
    }
    column_check check;
    bool const arrived_intact = together([&] {
      auto const rows_from = comm.exchange_counts(rows_to);
      comm.alltoallv(std::as_bytes(std::span(sums_to)), words, std::as_writable_bytes(std::span(sums_from)), words);
      // Rows arrive in source rank order: compare each source's run of rows with what it sent.
      bool ok = true;
      std::uint64_t row = 0;
      for (int s = 0; s < ranks; ++s) {
        ok = ok && row + rows_from[s] <= received[c].size() &&
             content_checksum(received[c].view(), row, row + rows_from[s]) == sums_from[s];
        row += rows_from[s];
      }
      ok = ok && row == received[c].size();
      check.rows = comm.allreduce_sum(received[c].size());
      return comm.all_ok(ok);
    });
    check.intact = arrived_intact && check.rows == input[c].whole.size();
    checks.push_back(check);
  }
  return checks;
}

}  // namespace zs::cli
