// What `zshuffle demo` and `zshuffle bench soak` share: their options, the input every rank
// agrees on, its partitions, the shuffle on the GPU or the CPU, and the end-to-end check of what
// arrived.
//
// Each rank reads every chosen column file whole, and the ranks make sure they read the same
// files (names, types, rows, checksums) before anyone slices them: ranks that sliced files of
// different lengths would lose rows without a trace. Each rank then takes its slice (rows
// [n * r / R, n * (r + 1) / R) of n) and groups it by destination, a hash of each value, so
// equal values meet on one rank as in a distributed join or group-by.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/mpi_communicator.hpp"
#include "zs/comm/shuffle.hpp"
#include "zs/comm/shuffle_table.hpp"
#include "zs/memory.hpp"
#include "output_file.hpp"
#include "progress.hpp"

namespace zs::cli {

/// The smallest --round-bytes: below it a round's fixed costs (a manifest entry, a frame header
/// and an agreement per partition, several collectives per round) outweigh its data, and the
/// round count (bytes / round) becomes absurd: 1 byte per round would need billions of rounds.
inline constexpr std::uint64_t min_round_bytes = std::uint64_t{64} << 10;

struct job_options {
  std::string data;                  // --data; empty: $ZS_DATA_DIR
  std::vector<std::string> columns;  // --columns; empty: every column file of the folder
  bool cpu = false;                  // --cpu
  std::uint64_t round_bytes = zs::shuffle_options{}.round_bytes;
  std::string json;                  // --json; empty: none
  progress_flags progress;           // --quiet, --progress
};

/// Adds --round-bytes (at least min_round_bytes) to `app`, and to its footer why the minimum.
/// Call it after setting the footer.
void add_round_bytes_option(CLI::App& app, std::uint64_t& round_bytes);

/// Adds --data, --columns, --cpu, --round-bytes, --json, --quiet and --progress to `app`.
void add_job_options(CLI::App& app, job_options& options);

/// Parses the command line on every rank at one agreement point, so a bad argument on one rank
/// ends every rank with its message; on rank 0 it also checks `json_path` (when not empty)
/// before the run and opens `json` for it. Returns false when the command should end at once
/// with status 0 (some rank showed --help). `command` starts the messages ("demo").
bool parse_on_every_rank(zs::communicator& comm, CLI::App& app, int argc, char** argv, std::string_view command,
                         const std::string& json_path, std::optional<output_file>& json);

/// A column file, read whole.
struct input_column {
  std::string name;  // the file's name in the data folder
  zs::column whole;
};

/// Reads the chosen column files on every rank, then makes sure that every rank read the same
/// input: the same number of files, and for each the same name, type, rows, bytes and checksum.
/// Collective. Throws agreed_error on every rank when the data folder or a file cannot be read
/// on some rank (naming the rank and the reason), or when ranks read different input (naming
/// the file and the ranks that differ). `command` starts the messages ("demo").
std::vector<input_column> read_agreed_input(zs::communicator& comm, std::string_view command,
                                            const job_options& options);

/// This rank's slice of a column, its rows grouped by destination rank.
struct partitioned_column {
  zs::column rows;                         // host memory
  std::vector<std::uint64_t> row_begin;    // ranks + 1 entries: rows for rank d start here
  std::vector<std::uint64_t> chars_begin;  // strings: ranks + 1 entries, likewise for characters
};

/// Rows [n * rank / ranks, n * (rank + 1) / ranks) of `whole` (n rows), grouped by destination
/// (a hash of each value modulo `ranks`) and in their original order within a destination.
partitioned_column partition_slice(const zs::column& whole, int rank, int ranks);

/// Runs the shuffle on the GPU where every rank has one (NCCL when each rank has its own,
/// otherwise MPI staged through pinned host memory), else with the CPU reference codecs over
/// MPI. Collective to construct; any failure is agreed (agreed_error on every rank).
class shuffler {
 public:
  shuffler(zs::mpi_communicator& comm, bool cpu_only, std::string_view command);
  shuffler(const shuffler&) = delete;
  shuffler& operator=(const shuffler&) = delete;

  bool on_gpu() const noexcept { return device_ != nullptr; }
  /// "GPU codecs on NVIDIA H100 ..., frames over nccl", or which CPU path and why.
  const std::string& description() const noexcept { return description_; }
  /// The frames' transport, for results: the device communicator's, or "mpi (cpu)".
  std::string transport() const;
  /// The GPU this rank uses; only on_gpu().
  int device() const noexcept { return gpu_; }

  /// Makes `parts` the input of every later run() (copied to the GPU once on the GPU path).
  /// `parts` must outlive those runs. Collective: a failure (out of memory) is agreed.
  void load(const std::vector<partitioned_column>& parts);

  /// One shuffle of the loaded input. Returns the columns that arrived, in host memory.
  /// Collective; the library's own failures are agreed, a transport failure is not.
  std::vector<zs::column> run(const zs::shuffle_options& options, zs::shuffle_stats* stats = nullptr);

  /// zs::shuffle_table of a host table on this path (copied to the GPU and back on the GPU
  /// path). Returns the rows this rank owns, in host memory. Collective, agreed as run().
  zs::shuffled_table shuffle_table(const zs::table& host, std::span<const std::size_t> keys,
                                   const zs::table_shuffle_options& options, zs::shuffle_stats* stats = nullptr);

 private:
  zs::mpi_communicator& comm_;
  std::string command_;
  std::string description_;
  int gpu_ = -1;
  std::unique_ptr<zs::device_communicator> device_;
  std::optional<zs::cuda_stream> stream_;
  std::vector<zs::column> on_device_;
  std::vector<zs::shuffle_column> inputs_;
};

/// What the end-to-end check found for one column.
struct column_check {
  std::uint64_t rows = 0;  // rows received, summed over ranks
  bool intact = false;     // on every rank, what each peer sent arrived (rows and checksums),
                           // and the rows received over all ranks are the file's rows
};

/// Checks, for every column, that what each rank sent to this one arrived here intact (row
/// count and a checksum of the rows, per source rank) and that no row was lost or added on the
/// way (the rows received over all ranks equal the rows of the file). Collective; the result
/// is the same on every rank.
std::vector<column_check> verify(zs::communicator& comm, const std::vector<input_column>& input,
                                 const std::vector<partitioned_column>& parts,
                                 const std::vector<zs::column>& received);

/// Rows [n * rank / ranks, n * (rank + 1) / ranks) of a table of n rows made of the files, in
/// host memory: row i holds value i mod rows of each file (shorter files repeat from their
/// start). Names: the file names.
zs::table table_slice(const std::vector<input_column>& input, std::uint64_t n, int rank, int ranks);

/// Checks a table shuffle end to end against the slices sent: every received row's key hashes
/// to this rank (zs::hash_key modulo ranks, the shuffle's documented placement), and over all
/// ranks the rows received are the rows sent, whole (an order-free sum of row fingerprints) and
/// column by column. Collective; the result is the same on every rank.
std::vector<column_check> verify_table(zs::communicator& comm, const zs::table& sent, const zs::table& received,
                                       std::size_t key);

}  // namespace zs::cli
