// Launch geometry: the block size, grid and work per block of every GPU kernel, chosen for the
// device it runs on.
//
// Each kernel has a few tunables (launch_params): threads per block, a cap on the grid in waves
// of resident blocks, and for some kernels the work one block takes at a time. A kernel's grid
// is never a constant: at each launch it is
//
//     grid = min(work units, occupancy x SMs x waves)        (waves = 0: one block per unit)
//
// where occupancy is what cudaOccupancyMaxActiveBlocksPerMultiprocessor reports for that kernel
// at that block size and shared memory on the current device. Kernels loop over their work with
// a grid stride, so any grid gives the same results: tunables change speed, never output bytes.
//
// The tunables come from a tuning table (tuning_table): entries measured by `zshuffle tune`,
// keyed by device model, compute capability, kernel, value type and batch size class. Without a
// matching entry a kernel runs with its defaults (kernel_spec::defaults). docs/TUNING.md
// describes the policy, the file format and the search order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zs/device.hpp"
#include "zs/types.hpp"

namespace zs {

// --- kernels and their tunables ----------------------------------------------------------------

/// The kernels whose launch geometry is chosen per device. The names (to_string) are the ones
/// tuning files use.
enum class kernel_id : std::uint8_t {
  frame_ops,         // "frame_ops": one thread per frame, segment or chunk (headers, frame
                     //   checks, chunk plans, copy lists)
  checksum,          // "checksum": payload checksums, on encode and on validation
  raw_offsets,       // "raw_offsets": the raw codec's string offsets (encode, check, decode)
  bitpack_analyze,   // "bitpack_analyze": bitpack encode, pass 1 (a warp per segment)
  bitpack_pack,      // "bitpack_pack": bitpack encode, pass 2 (a warp per segment)
  bitpack_decode,    // "bitpack_decode": bitpack decode (a warp per tile)
  gather,            // "gather": 64-bit gather by index (the shuffle's offset reads)
};
inline constexpr std::size_t kernel_count = 7;

std::string_view to_string(kernel_id kernel) noexcept;
/// The kernel named `name`; nullopt for an unknown name.
std::optional<kernel_id> parse_kernel_id(std::string_view name) noexcept;

/// The tunables of one kernel launch.
struct launch_params {
  /// Threads per block.
  unsigned threads = 0;
  /// Cap on the grid in waves of resident blocks (occupancy x SMs x waves); 0 for no cap: one
  /// block per work unit. Work beyond the grid is covered by the kernel's grid-stride loop.
  unsigned waves = 0;
  /// Work one block takes at a time, for kernels that have that knob: checksum, 64-bit words
  /// per chunk; raw_offsets, offsets per chunk; bitpack_decode, 128-value blocks per warp tile
  /// (the D of the GPU-FOR paper). 0 for the other kernels.
  unsigned items = 0;

  friend bool operator==(const launch_params&, const launch_params&) = default;
};

/// What one kernel accepts, where it starts, and whether `zshuffle tune` sweeps it.
struct kernel_spec {
  kernel_id kernel;
  launch_params defaults;
  std::span<const unsigned> threads;  // block sizes the kernel is built for
  std::span<const unsigned> items;    // accepted values of `items`; empty: it must be 0
  unsigned max_waves;
  /// Swept by `zshuffle tune`. The others have so little work per launch that their defaults
  /// are not worth measuring; a table entry still applies to them.
  bool swept;
  std::string_view what;  // one line for people
};

/// The spec of `kernel`.
const kernel_spec& spec_of(kernel_id kernel) noexcept;
/// Every kernel's spec, in kernel_id order.
std::span<const kernel_spec> kernel_specs() noexcept;

/// Why `params` are not valid for `kernel` (a block size it is not built for, an `items` it
/// does not take, too many waves); empty when they are valid.
std::string check_params(kernel_id kernel, const launch_params& params);
inline bool valid_params(kernel_id kernel, const launch_params& params) { return check_params(kernel, params).empty(); }

/// The kernel's defaults on `device`: its spec's defaults, with a block size the device can run
/// (the largest accepted one within max_threads_per_block, when the default is not).
launch_params default_params(kernel_id kernel, const device_profile& device);

/// Short text of params: "256 threads, 4 waves, 4096 items" ("no cap" for waves = 0).
std::string to_string(kernel_id kernel, const launch_params& params);

// --- size classes ------------------------------------------------------------------------------

/// Batches by the bytes one launch covers: tables may hold different tunables for each.
enum class size_class : std::uint8_t { small, medium, large };
inline constexpr std::size_t size_class_count = 3;
inline constexpr std::uint64_t small_batch_bytes = std::uint64_t{16} << 20;    // small: below
inline constexpr std::uint64_t medium_batch_bytes = std::uint64_t{256} << 20;  // medium: below

size_class size_class_of(std::uint64_t bytes) noexcept;
std::string_view to_string(size_class size) noexcept;
std::optional<size_class> parse_size_class(std::string_view name) noexcept;

// --- the grid policy (pure CPU) ----------------------------------------------------------------

/// The shape of one launch.
struct launch_geometry {
  unsigned threads = 0;
  /// Blocks; 0 when there is no work.
  unsigned grid = 0;
  /// Resident blocks per SM that the grid was sized with (at least 1).
  int blocks_per_sm = 0;
};

/// The largest grid a launch uses: CUDA's limit on gridDim.x.
inline constexpr std::uint64_t max_grid_blocks = 0x7fffffffULL;

/// The launch policy: `work_units` units of work (chunks, segments, frames ...) for a kernel
/// that fits `blocks_per_sm` blocks of params.threads on each SM of `device` (from the
/// occupancy calculator; values below 1 count as 1). The grid is one block per unit, capped at
/// params.waves waves of device.sm_count x blocks_per_sm blocks and at max_grid_blocks.
/// No CUDA calls: tests give made-up profiles.
launch_geometry launch_policy(const device_profile& device, const launch_params& params, int blocks_per_sm,
                              std::uint64_t work_units) noexcept;

// --- tuning tables -----------------------------------------------------------------------------

/// What one table entry is measured for.
struct tuning_key {
  std::string device;  // device model, as CUDA names it (device_profile::name)
  int compute_major = 0;
  int compute_minor = 0;
  kernel_id kernel = kernel_id::frame_ops;
  /// The value type of the launch; nullopt for an entry that applies to any type (kernels
  /// whose work does not depend on it, such as the checksum).
  std::optional<value_type> type;
  size_class size = size_class::small;

  friend bool operator==(const tuning_key&, const tuning_key&) = default;
  friend auto operator<=>(const tuning_key&, const tuning_key&) = default;
};

struct tuning_entry {
  tuning_key key;
  launch_params params;
  /// Throughput measured with `params` and with the defaults in the same run (GB/s of the
  /// kernel's work bytes); 0 where not recorded. For people reading the file.
  double tuned_gbs = 0;
  double default_gbs = 0;
};

/// A set of entries, at most one per key, and their JSON form (docs/TUNING.md, "File format"):
///
///   {"schema": "zshuffle-tuning", "version": 1,
///    "entries": [{"device": "NVIDIA H200", "compute_capability": "9.0",
///                 "kernel": "bitpack_decode", "type": "int32", "size_class": "large",
///                 "params": {"threads": 128, "waves": 4, "items": 16},
///                 "tuned_gbs": 1234.5, "default_gbs": 1180.2}]}
///
/// "type" is a value type name or "any"; other keys are ignored.
class tuning_table {
 public:
  static constexpr std::string_view schema = "zshuffle-tuning";
  static constexpr int version = 1;

  /// Adds `entry`, replacing any with the same key. Throws zs::error (invalid_argument) when
  /// its params are not valid for its kernel.
  void set(tuning_entry entry);
  /// Adds every entry of `other`; its entries win over this table's for the same key.
  void merge(const tuning_table& other);

  /// Entries sorted by key.
  std::span<const tuning_entry> entries() const noexcept { return entries_; }
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  /// The entry that applies to a launch of `kernel` for `type` and `size` on a device of model
  /// `device` and compute capability major.minor; nullptr when there is none. Among the
  /// entries of that device, capability and kernel it prefers the same type, then a type of
  /// the same width, then an entry for any type; within those, the same size class, then the
  /// nearest one (the larger on a tie).
  const tuning_entry* find(std::string_view device, int compute_major, int compute_minor, kernel_id kernel,
                           std::optional<value_type> type, size_class size) const;

  /// The JSON text of the table (entries sorted by key, so files diff well).
  std::string to_json() const;
  /// Parses a table from its text, touching no file. Throws zs::error (invalid_argument) naming
  /// the first problem: not JSON, another schema or version, a missing or mistyped field, an
  /// unknown kernel, type or size class, params the kernel does not accept, or two entries for
  /// one key (naming both). Linear in the entries, but for sorting them.
  static tuning_table from_json(std::string_view text);

  /// Writes the table to `path`, creating its directory; the file is replaced in one rename, so
  /// a reader never sees half of it. Throws zs::error (io_error).
  void save(const std::filesystem::path& path) const;
  /// Reads a table. Throws zs::error: io_error when the file cannot be read, is not a regular
  /// file (a FIFO, a device, a directory) or holds more than 16 MiB (no table comes near it),
  /// invalid_argument (naming the file) when it is not a valid table.
  static tuning_table load(const std::filesystem::path& path);

 private:
  std::vector<tuning_entry> entries_;
};

// --- the process-wide table ----------------------------------------------------------------------

/// The user's tuning file: $ZS_TUNING_FILE when set, else $XDG_CACHE_HOME/zshuffle/tuning.json,
/// else $HOME/.cache/zshuffle/tuning.json; nullopt when none of these variables is set.
std::optional<std::filesystem::path> tuning_file_path();

/// The tables shipped with zshuffle (tuning/*.json in the source tree, compiled into the
/// library), merged.
const tuning_table& shipped_tuning();

/// The table kernel launches use: the shipped tables with the user's tuning file merged over
/// them (the file's entries win). Loaded on first use and kept. Never throws: a file that is
/// named by $ZS_TUNING_FILE but missing, or one that load() refuses (unreadable, not a regular
/// file, too large, not a valid table), costs one warning on stderr and is ignored; the shipped
/// tables stay. ZS_TUNING=off gives an empty table: defaults everywhere.
/// Thread-safe; the pointer stays valid while the caller holds it.
std::shared_ptr<const tuning_table> tuning();

/// Replaces the process-wide table (zshuffle tune, tests). Codec calls size their scratch from
/// the table in force (bitpack decoding depends on D): do not replace it between a
/// *_temp_bytes call and the *_async call that uses its answer.
void set_tuning(tuning_table table);

/// Reads the environment and the files again, as on first use (tests of the search order).
void reload_tuning();

// --- choosing and observing launches -----------------------------------------------------------

/// The tunables a launch runs with, and what they were chosen for.
struct launch_choice {
  kernel_id kernel = kernel_id::frame_ops;
  std::optional<value_type> type;
  size_class size = size_class::small;
  /// The bytes of work the choice was made for, as the host planned them (capacities where only
  /// the device knows exact sizes): what tuners and benchmarks divide by time.
  std::uint64_t batch_bytes = 0;
  launch_params params;
  bool from_table = false;  // a table entry, not the defaults
};

/// The choice for a launch of `kernel` over a batch of `batch_bytes` bytes of `type` on a
/// device described by `device`, from `table`. No CUDA calls.
launch_choice choose_launch(const tuning_table& table, const device_profile& device, kernel_id kernel,
                            std::optional<value_type> type, std::uint64_t batch_bytes);

/// The same on the current device with the process-wide table: what the codecs call.
launch_choice choose_launch(kernel_id kernel, std::optional<value_type> type, std::uint64_t batch_bytes);

/// One kernel launch as it was made.
struct launch_record {
  launch_choice choice;
  launch_geometry geometry;
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
  std::uint64_t work_units = 0;  // chunks, segments or frames the grid covers
};

/// "bitpack_decode int32/large: 128 threads x 3696 blocks (4 waves of 7/SM), 16 items, table".
std::string describe(const launch_record& record);

/// Sees every kernel launch of the library: benchmarks report geometries with it, and
/// `zshuffle tune` times one kernel inside a codec call with events around its launches.
class launch_observer {
 public:
  virtual ~launch_observer() = default;
  /// Called on the launching thread right before the launch is enqueued on `stream`, and right
  /// after. Exceptions propagate to the codec call.
  virtual void before_launch(const launch_record& record, cudaStream_t stream) = 0;
  virtual void after_launch(const launch_record& record, cudaStream_t stream) = 0;
};

/// Installs `observer` for the whole process (nullptr: none) and returns the previous one. The
/// observer must outlive its installation and accept calls from any thread that launches.
launch_observer* set_launch_observer(launch_observer* observer) noexcept;
/// The installed observer, or nullptr.
launch_observer* current_launch_observer() noexcept;

/// Installs an observer for the lifetime of this object, then puts the previous one back.
class scoped_launch_observer {
 public:
  explicit scoped_launch_observer(launch_observer& observer) noexcept
      : previous_(set_launch_observer(&observer)) {}
  ~scoped_launch_observer() { set_launch_observer(previous_); }
  scoped_launch_observer(const scoped_launch_observer&) = delete;
  scoped_launch_observer& operator=(const scoped_launch_observer&) = delete;

 private:
  launch_observer* previous_;
};

}  // namespace zs
