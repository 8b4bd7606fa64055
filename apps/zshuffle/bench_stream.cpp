// zshuffle bench stream: a streaming shuffle (zs/comm/streaming_shuffle.hpp) of --factor times
// its device budget of real-data rows on each rank, against the bulk shuffle_table of the same
// rows, under mpirun (one GPU per rank).
//
// Each rank builds a table of the real columns (every column file of the folder, or those
// --column names), each tiled to the same row count, so that the table holds --factor x --budget
// bytes (as partition_store counts them); ranks start their tiles at different rows. Column 0 is
// the key. The rows are cut into --chunks chunks on the host, before any timing.
//
//   stream  per chunk: copy it to the device, hash_partition it into ranks x
//           --partitions-per-rank partitions, insert the partitions, progress() (an exchange once
//           a rank has buffered --batch bytes, on a thread of its own while the next chunk is
//           copied and partitioned; --no-overlap: before progress() returns); then
//           insert_finished and the extraction of every owned partition. Received rows wait in
//           the budget (spilled compressed beyond it).
//   bulk    copy the whole table to the device and shuffle_table it, the same partitions.
// Before the stream each rank pins host memory for its spills (zs::reserve_spill_host_memory,
// timed and reported apart), as a data engine pins its pool at startup, and streams its first two
// chunks once, untimed (reported apart): connections, kernels and the planner's measurements are
// then warm for both runs, as in a service that runs many shuffles.
// Both start from host memory and end with the rows on the device; each time is the slowest
// rank's. Every extracted partition is compared with the bulk result's (the same rows, in the
// same order), outside the timing. Without a GPU on every rank it says so and exits with 4.
#include <mpi.h>

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
#include "zs/comm/context.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/comm/streaming_shuffle.hpp"
#include "zs/io.hpp"
#include "zs/partition.hpp"
#include "zs/partition_store.hpp"
#include "zs/spill.hpp"

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// Rows [first, first + rows) of `real` repeated without end (row i is real's row i mod its size).
zs::column tile_rows(const zs::column& real, std::uint64_t first, std::uint64_t rows) {
  auto const v = real.view();
  if (v.type != zs::value_type::string) {
    std::uint64_t const width = zs::value_width(v.type);
    zs::column out = zs::column::allocate(v.type, rows, zs::memory_kind::host);
    auto* const to = static_cast<std::byte*>(out.mutable_view().data);
    for (std::uint64_t i = 0; i < rows; ++i) {
      std::memcpy(to + i * width, static_cast<const std::byte*>(v.data) + ((first + i) % v.count) * width, width);
    }
    return out;
  }
  std::uint64_t chars = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t const j = (first + i) % v.count;
    chars += static_cast<std::uint64_t>(v.offsets[j + 1] - v.offsets[j]);
  }
  zs::column out = zs::column::allocate(v.type, rows, zs::memory_kind::host, nullptr, chars);
  auto const o = out.mutable_view();
  o.offsets[0] = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t const j = (first + i) % v.count;
    auto const n = v.offsets[j + 1] - v.offsets[j];
    std::memcpy(static_cast<std::byte*>(o.data) + o.offsets[i], static_cast<const std::byte*>(v.data) + v.offsets[j],
                static_cast<std::size_t>(n));
    o.offsets[i + 1] = o.offsets[i] + n;
  }
  return out;
}

zs::table tile_table(const std::vector<zs::column>& reals, const std::vector<std::string>& names, std::uint64_t first,
                     std::uint64_t rows) {
  zs::table t;
  t.names = names;
  for (auto const& r : reals) t.columns.push_back(tile_rows(r, first, rows));
  return t;
}

// Whether host rows [first, first + rows) of `bulk` equal the host column `got`.
bool same_rows(const zs::column& bulk, std::uint64_t first, std::uint64_t rows, const zs::column& got) {
  if (got.size() != rows || got.type() != bulk.type()) return false;
  auto const a = bulk.view();
  auto const b = got.view();
  if (a.type != zs::value_type::string) {
    std::uint64_t const width = zs::value_width(a.type);
    return rows == 0 || std::memcmp(static_cast<const std::byte*>(a.data) + first * width, b.data, rows * width) == 0;
  }
  for (std::uint64_t i = 0; i <= rows; ++i) {
    if (a.offsets[first + i] - a.offsets[first] != b.offsets[i]) return false;
  }
  auto const chars = static_cast<std::size_t>(b.offsets[rows]);
  return chars == 0 ||
         std::memcmp(static_cast<const std::byte*>(a.data) + a.offsets[first], b.data, chars) == 0;
}

}  // namespace

int run_bench_stream(int argc, char** argv) {
  std::string data, json_path;
  std::vector<std::string> column_names;
  std::uint64_t budget = std::uint64_t{1} << 30, batch = 0;
  double factor = 4;
  std::uint32_t per_rank = 8, chunks = 32;
  CLI::App app{"A streaming shuffle of --factor x its device budget of real rows on each rank, against the bulk "
               "shuffle_table of the same rows (run under mpirun, one GPU per rank).",
               "zshuffle bench stream"};
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  app.add_option("--column", column_names, "a column file of the folder; repeat for more (default: every one); "
                                           "the first is the key")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  zs::cli::add_size_option(app, "--budget", budget, "device bytes the received rows may hold on each rank", 1);
  app.add_option("--factor", factor, "each rank streams this many times its budget")
      ->check(CLI::Range(0.01, 1000.0))
      ->capture_default_str();
  app.add_option("--partitions-per-rank", per_rank, "hash partitions each rank owns")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--chunks", chunks, "chunks each rank produces its rows in")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  zs::cli::add_size_option(app, "--batch", batch, "buffered bytes that trigger an exchange (default: budget / 4)", 1);
  bool keep_compressed = false;
  app.add_flag("--keep-compressed", keep_compressed,
               "keep received pieces compressed on the device (streaming_shuffle_options::keep_compressed)");
  bool no_overlap = false;
  app.add_flag("--no-overlap", no_overlap,
               "exchange before progress() returns, instead of on a thread of its own while the next chunk is "
               "produced (streaming_shuffle_options::overlap)");
  app.add_option("--json", json_path, "also write the results as JSON to this file (rank 0)");
  if (!zs::cli::parse(app, argc, argv)) return 0;
  if (batch == 0) batch = std::max<std::uint64_t>(1, budget / 4);
  std::optional<zs::cli::output_file> json;
  if (!json_path.empty()) json.emplace("--json", json_path);

  zs::context ctx;
  zs::communicator& comm = ctx.host();
  int const me = comm.rank(), ranks = comm.size();
  if (ctx.which() == zs::context::path::cpu) {
    return me == 0 ? zs::cli::no_gpu("bench stream", "not every rank has a CUDA device; the benchmark needs one per rank")
                   : zs::cli::exit_code::no_gpu;
  }
  zs::device_communicator& device = *ctx.device();
  cudaStream_t const stream = ctx.stream();

  fs::path const dir = zs::cli::data_folder(data);
  std::vector<fs::path> files;
  if (column_names.empty()) files = zs::io::list_columns(dir);
  for (auto const& name : column_names) files.push_back(dir / name);
  std::vector<zs::column> reals;
  std::vector<std::string> names;
  std::vector<zs::value_type> types;
  for (auto const& f : files) {
    zs::column c = zs::io::read_column(f);
    if (c.size() == 0) continue;
    names.push_back(f.filename().string());
    types.push_back(c.type());
    reals.push_back(std::move(c));
  }
  if (reals.empty()) ZS_FAIL(zs::error_code::invalid_argument, "no column file with rows in '" + dir.string() + "'");

  // Rows for factor x budget bytes, measured on a sample of the tiled table.
  std::uint64_t const sample_rows = 4096;
  std::uint64_t const sample_bytes = zs::partition_store::bytes_of(tile_table(reals, names, 0, sample_rows));
  auto const total_rows = static_cast<std::uint64_t>(factor * static_cast<double>(budget) /
                                                     (static_cast<double>(sample_bytes) / sample_rows));
  std::uint64_t const shift = reals[0].size() * static_cast<std::uint64_t>(me) / static_cast<std::uint64_t>(ranks);
  std::vector<zs::table> chunk_tables;
  for (std::uint32_t k = 0; k < chunks; ++k) {
    std::uint64_t const first = total_rows * k / chunks, last = total_rows * (k + 1) / chunks;
    chunk_tables.push_back(tile_table(reals, names, shift + first, last - first));
  }
  std::uint64_t my_bytes = 0;
  for (auto const& t : chunk_tables) my_bytes += zs::partition_store::bytes_of(t);
  std::uint32_t const partitions = per_rank * static_cast<std::uint32_t>(ranks);
  if (me == 0) {
    std::printf("zshuffle bench stream: %d rank(s), %s; %zu column(s), key %s; per rank %.2f GiB (%.1f x a budget "
                "of %.2f GiB) in %u chunks, %u partitions, exchanges at %.0f MiB buffered\n",
                ranks, ctx.description().c_str(), reals.size(), names[0].c_str(),
                static_cast<double>(my_bytes) / (1 << 30), factor, static_cast<double>(budget) / (1 << 30), chunks,
                partitions, static_cast<double>(batch) / (1 << 20));
    std::fflush(stdout);
  }

  // Spill memory pinned ahead, as a data engine pins its pool at startup (outside the timing,
  // reported): what the store spills is about the rows beyond its budget.
  double const reserve_seconds = zs::reserve_spill_host_memory(my_bytes);

  // The stream.
  zs::streaming_shuffle_options options;
  options.budget_bytes = budget;
  options.batch_bytes = batch;
  options.keep_compressed = keep_compressed;
  options.overlap = !no_overlap;
  std::size_t const keys[] = {0};
  // A warm-up stream of the first two chunks, untimed, as a service that runs many shuffles is
  // warm: the communicator's connections made, the kernels loaded, the link bandwidth and the
  // codecs' speeds on columns of an exchange's size measured (the planner remembers them).
  comm.barrier();
  auto start = clock_type::now();
  {
    zs::streaming_shuffle warm(device, names, types, partitions, options, stream);
    for (std::size_t k = 0; k < std::min<std::size_t>(2, chunk_tables.size()); ++k) {
      zs::table on_device{chunk_tables[k].names, {}};
      for (auto const& c : chunk_tables[k].columns) on_device.columns.push_back(c.copy_to(zs::memory_kind::device, stream));
      warm.insert(zs::hash_partition(on_device, keys, partitions, stream));
    }
    warm.insert_finished();
    for (std::uint32_t p : warm.owned_partitions()) (void)warm.extract(p);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  double const warm_up_ms = ms_since(start);

  comm.barrier();
  start = clock_type::now();
  zs::streaming_shuffle s(device, names, types, partitions, options, stream);
  for (auto const& chunk : chunk_tables) {
    zs::table on_device{chunk.names, {}};
    for (auto const& c : chunk.columns) on_device.columns.push_back(c.copy_to(zs::memory_kind::device, stream));
    s.insert(zs::hash_partition(on_device, keys, partitions, stream));
    s.progress();
  }
  s.insert_finished();
  double const produce_ms = ms_since(start);
  double extract_ms = 0;
  std::vector<zs::table> stream_rows;  // host copies, for the check
  for (std::uint32_t p : s.owned_partitions()) {
    auto const t0 = clock_type::now();
    zs::table t = s.extract(p);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    extract_ms += ms_since(t0);
    zs::table host{t.names, {}};
    for (auto const& c : t.columns) host.columns.push_back(c.copy_to(zs::memory_kind::host, stream));
    stream_rows.push_back(std::move(host));
  }
  double const stream_ms = produce_ms + extract_ms;
  auto const stats = s.stats();

  // The bulk shuffle of the same rows.
  zs::table whole = tile_table(reals, names, shift, total_rows);
  comm.barrier();
  start = clock_type::now();
  zs::table whole_device{whole.names, {}};
  for (auto const& c : whole.columns) whole_device.columns.push_back(c.copy_to(zs::memory_kind::device, stream));
  zs::table_shuffle_options bulk_options;
  bulk_options.partitions_per_rank = per_rank;
  zs::shuffled_table bulk = zs::shuffle_table(device, whole_device, keys, bulk_options, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  double const bulk_ms = ms_since(start);
  whole_device = {};

  // The check: every partition's rows, as the bulk shuffle gave them.
  bool same = stream_rows.size() == per_rank;
  std::vector<zs::column> bulk_host;
  for (auto const& c : bulk.rows.columns) bulk_host.push_back(c.copy_to(zs::memory_kind::host, stream));
  for (std::uint32_t j = 0; same && j < per_rank; ++j) {
    std::uint64_t const first = bulk.partition_offsets[j], rows = bulk.partition_offsets[j + 1] - first;
    for (std::size_t c = 0; same && c < bulk_host.size(); ++c) {
      same = same_rows(bulk_host[c], first, rows, stream_rows[j].columns[c]);
    }
  }
  bool const all_same = comm.all_ok(same);
  bool const within_budget = comm.all_ok(stats.store.high_water_bytes <= budget);
  double const slowest_stream = static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(stream_ms * 1e3))) / 1e3;
  double const slowest_bulk = static_cast<double>(comm.allreduce_max(static_cast<std::uint64_t>(bulk_ms * 1e3))) / 1e3;
  std::uint64_t const high_water = comm.allreduce_max(stats.store.high_water_bytes);
  std::uint64_t const spills = comm.allreduce_sum(stats.store.spills);
  std::uint64_t const received = comm.allreduce_sum(stats.received_bytes);

  if (me == 0) {
    std::printf("\n%-28s %12s\n", "", "value");
    std::printf("%-28s %12s\n", "completed, rows identical", all_same ? "yes" : "NO");
    std::printf("%-28s %12.2f\n", "stream ms (slowest rank)", slowest_stream);
    std::printf("%-28s %12.2f\n", "bulk shuffle_table ms", slowest_bulk);
    std::printf("%-28s %12.2f\n", "stream / bulk", slowest_stream / slowest_bulk);
    std::printf("%-28s %12.2f\n", "pinning spill memory ms", reserve_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "rank 0: warm-up ms", warm_up_ms);
    std::printf("%-28s %12.1f\n", "high-water MiB (max rank)", static_cast<double>(high_water) / (1 << 20));
    std::printf("%-28s %12.1f\n", "budget MiB", static_cast<double>(budget) / (1 << 20));
    std::printf("%-28s %12s\n", "within budget", within_budget ? "yes" : "NO");
    std::printf("%-28s %12llu\n", "exchanges", static_cast<unsigned long long>(stats.exchanges));
    std::printf("%-28s %12llu\n", "  in the background", static_cast<unsigned long long>(stats.background_exchanges));
    std::printf("%-28s %12llu\n", "pieces spilled (all ranks)", static_cast<unsigned long long>(spills));
    std::printf("%-28s %12s\n", "kept compressed", keep_compressed ? "yes" : "no");
    std::printf("%-28s %12.2f\n", "rank 0: produce ms", produce_ms);
    std::printf("%-28s %12.2f\n", "  waiting for exchanges ms", stats.overlap_wait_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "  exchanges ms", stats.exchange_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "    in zs::shuffle ms", stats.shuffle_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "    storing ms", stats.store_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "      spilling ms", stats.store.spill_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "rank 0: extract ms", stats.extract_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "  restoring ms", stats.store.restore_seconds * 1e3);
    std::printf("%-28s %12.2f\n", "received GiB (all ranks)", static_cast<double>(received) / (1 << 30));
    std::printf("rank 0 spills with:");
    for (std::size_t c = 0; c < names.size(); ++c) {
      auto const codec = s.spill_codec(c);
      std::printf(" %s %s;", names[c].c_str(), codec ? std::string(zs::get_codec(*codec).name()).c_str() : "-");
    }
    std::printf("\n");
    if (json) {
      json->write_json({{"benchmark", "stream"},
                        {"ranks", ranks},
                        {"path", ctx.description()},
                        {"columns", names},
                        {"bytes_per_rank", my_bytes},
                        {"budget_bytes", budget},
                        {"factor", factor},
                        {"batch_bytes", batch},
                        {"chunks", chunks},
                        {"partitions", partitions},
                        {"completed", all_same},
                        {"identical_to_bulk", all_same},
                        {"stream_ms", slowest_stream},
                        {"bulk_ms", slowest_bulk},
                        {"stream_over_bulk", slowest_stream / slowest_bulk},
                        {"pin_spill_memory_ms", reserve_seconds * 1e3},
                        {"rank0_warm_up_ms", warm_up_ms},
                        {"high_water_bytes", high_water},
                        {"within_budget", within_budget},
                        {"exchanges", stats.exchanges},
                        {"spilled_pieces", spills},
                        {"keep_compressed", keep_compressed},
                        {"overlap", !no_overlap},
                        {"background_exchanges", stats.background_exchanges},
                        {"rank0_wait_for_exchanges_ms", stats.overlap_wait_seconds * 1e3},
                        {"rank0_produce_ms", produce_ms},
                        {"rank0_exchange_ms", stats.exchange_seconds * 1e3},
                        {"rank0_shuffle_ms", stats.shuffle_seconds * 1e3},
                        {"rank0_store_ms", stats.store_seconds * 1e3},
                        {"rank0_spill_ms", stats.store.spill_seconds * 1e3},
                        {"rank0_extract_ms", stats.extract_seconds * 1e3},
                        {"rank0_restore_ms", stats.store.restore_seconds * 1e3},
                        {"received_bytes", received}});
    }
  }
  return all_same && within_budget ? zs::cli::exit_code::ok : zs::cli::exit_code::failed;
}
