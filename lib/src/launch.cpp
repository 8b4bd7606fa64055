// The launch vocabulary (zs/launch.hpp: size classes, the grid policy, records, the observer)
// and the host side of kernels/common/launch.hpp (occupancy queries, the choices kernels make
// by a registered kernel's name).
#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

#include "common/launch.hpp"
#include "zs/launch.hpp"
#include "zs/tuning.hpp"

namespace zs {
namespace {

constexpr std::array<std::string_view, size_class_count> size_names{"small", "medium", "large"};

std::atomic<launch_observer*> observer{nullptr};

}  // namespace

// --- size classes ------------------------------------------------------------------------------

size_class size_class_of(std::uint64_t bytes) noexcept {
  if (bytes < small_batch_bytes) return size_class::small;
  if (bytes < medium_batch_bytes) return size_class::medium;
  return size_class::large;
}

std::string_view to_string(size_class size) noexcept {
  auto const i = static_cast<std::size_t>(size);
  return i < size_names.size() ? size_names[i] : std::string_view("invalid");
}

std::optional<size_class> parse_size_class(std::string_view name) noexcept {
  for (std::size_t i = 0; i < size_names.size(); ++i) {
    if (size_names[i] == name) return static_cast<size_class>(i);
  }
  return std::nullopt;
}

// --- policy ------------------------------------------------------------------------------------

launch_geometry launch_policy(const device_profile& device, const launch_params& params, int blocks_per_sm,
                              std::uint64_t work_units) noexcept {
  launch_geometry g;
  g.threads = params.threads;
  g.blocks_per_sm = std::max(blocks_per_sm, 1);
  std::uint64_t grid = std::min(work_units, max_grid_blocks);
  if (params.waves > 0) {
    std::uint64_t const sms = static_cast<std::uint64_t>(std::max(device.sm_count, 1));
    std::uint64_t const cap = sms * static_cast<std::uint64_t>(g.blocks_per_sm) * params.waves;
    grid = std::min(grid, cap);
  }
  g.grid = static_cast<unsigned>(grid);
  return g;
}

// --- records and the observer ------------------------------------------------------------------

std::string describe(const launch_record& r) {
  launch_choice const& c = r.choice;
  std::string s = std::string(c.kernel) + " " + (c.type ? std::string(to_string(*c.type)) : std::string("any")) +
                  "/" + std::string(to_string(c.size)) + ": " + std::to_string(r.geometry.threads) + " threads x " +
                  std::to_string(r.geometry.grid) + " blocks (";
  if (c.params.waves == 0) {
    s += "one per unit";
  } else {
    s += std::to_string(c.params.waves) + " waves of " + std::to_string(r.geometry.blocks_per_sm) + "/SM";
  }
  s += ", " + std::to_string(r.work_units) + " units)";
  // A kernel that takes items says how many; a choice for no registered kernel (made by hand)
  // shows them when they are set.
  const kernel_spec* spec = find_kernel_spec(c.kernel);
  bool const has_items = spec != nullptr ? !spec->items.empty() : c.params.items != 0;
  if (has_items) s += ", " + std::to_string(c.params.items) + " items";
  s += c.from_table ? ", table" : ", default";
  return s;
}

launch_observer* set_launch_observer(launch_observer* next) noexcept { return observer.exchange(next); }

launch_observer* current_launch_observer() noexcept { return observer.load(std::memory_order_acquire); }

}  // namespace zs

namespace zs::kernels {
namespace {

// The occupancy calculator costs a driver call; a kernel's answer for one block size and shared
// memory size on one device never changes, and launches repeat the same few combinations.
int blocks_per_sm(const void* kernel_fn, int device, unsigned threads, std::size_t shared_bytes) {
  using key = std::tuple<const void*, int, unsigned, std::size_t>;
  static std::mutex mutex;
  static std::map<key, int> cache;
  key const k{kernel_fn, device, threads, shared_bytes};
  {
    std::lock_guard<std::mutex> const lock(mutex);
    if (auto const it = cache.find(k); it != cache.end()) return it->second;
  }
  int blocks = 0;
  ZS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_fn, static_cast<int>(threads),
                                                            shared_bytes));
  std::lock_guard<std::mutex> const lock(mutex);
  cache.emplace(k, blocks);
  return blocks;
}

}  // namespace

launch_record plan_launch(const void* kernel_fn, const launch_choice& choice, std::uint64_t work_units,
                          std::size_t shared_bytes) {
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  device_profile const& profile = cached_device_profile(device);
  launch_record r;
  r.choice = choice;
  r.shared_bytes = shared_bytes;
  r.work_units = work_units;
  int const occupancy = work_units == 0 ? 1 : blocks_per_sm(kernel_fn, device, choice.params.threads, shared_bytes);
  r.geometry = launch_policy(profile, choice.params, occupancy, work_units);
  return r;
}

launch_choice frame_ops_choice() { return choose_launch(frame_ops_spec, std::nullopt, 0); }

launch_choice choose_registered_launch(std::string_view kernel, std::optional<value_type> type,
                                       std::uint64_t batch_bytes) {
  return choose_launch(get_kernel_spec(kernel), type, batch_bytes);
}

launch_params registered_defaults(std::string_view kernel) { return get_kernel_spec(kernel).defaults; }

void expect_launch_of(std::string_view kernel, const launch_choice& choice) {
  if (choice.kernel != kernel) {
    std::string const given = choice.kernel.empty() ? std::string("no kernel") : std::string(choice.kernel);
    ZS_FAIL(error_code::invalid_argument, "a launch of " + std::string(kernel) + " was given the choice made for " + given);
  }
  std::string const why = check_params(kernel, choice.params);
  if (!why.empty()) ZS_FAIL(error_code::invalid_argument, std::string(kernel) + " launch params (" + why + ")");
}

}  // namespace zs::kernels
