// The vocabulary of a kernel launch: the tunables it runs with (launch_params), the batch size
// class they were chosen for, the grid policy that turns them into a launch_geometry, the record
// of a launch as it was made, and the observer that sees every launch of the library.
//
// Device code and its launchers need only this header. Where the tunables come from (kernel
// specs, tuning tables, choose_launch) is zs/tuning.hpp.
//
// A kernel's grid is never a constant: at each launch it is
//
//     grid = min(work units, occupancy x SMs x waves)        (waves = 0: one block per unit)
//
// where occupancy is what cudaOccupancyMaxActiveBlocksPerMultiprocessor reports for that kernel
// at that block size and shared memory on the current device. Kernels loop over their work with
// a grid stride, so any grid gives the same results: tunables change speed, never output bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zs/device.hpp"
#include "zs/types.hpp"

namespace zs {

// --- tunables ----------------------------------------------------------------------------------

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

// --- choices, records and the observer ---------------------------------------------------------

/// The tunables a launch runs with, and what they were chosen for.
struct launch_choice {
  /// The name of the registered kernel spec the choice is for (kernel_spec::name in
  /// zs/tuning.hpp, the name tuning files use). Specs' names are static strings, so the view
  /// stays valid for the whole program.
  std::string_view kernel;
  std::optional<value_type> type;
  size_class size = size_class::small;
  /// The bytes of work the choice was made for, as the host planned them (capacities where only
  /// the device knows exact sizes): what tuners and benchmarks divide by time.
  std::uint64_t batch_bytes = 0;
  launch_params params;
  bool from_table = false;  // a table entry, not the defaults
};

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
