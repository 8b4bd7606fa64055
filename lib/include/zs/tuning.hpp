// Launch tuning: where each kernel launch's tunables (zs/launch.hpp) come from.
//
// Each kernel whose launch geometry is chosen per device has a registered kernel_spec: its
// name (the one tuning files use), the tunables it accepts and its defaults. The library
// registers the specs of the kernels every codec shares (frame_ops, checksum, gather); each
// codec family registers its own, in its folder (lib/src/codecs/<family>/<family>_tuning.cpp).
//
// The tunables come from a tuning table (tuning_table): entries measured by `zshuffle tune`,
// keyed by device model, compute capability, kernel, value type and batch size class. Without a
// matching entry a kernel runs with its defaults (kernel_spec::defaults). docs/TUNING.md
// describes the policy, the file format and the search order.
#pragma once

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
#include "zs/launch.hpp"
#include "zs/types.hpp"

namespace zs {

// --- kernels and their tunables ----------------------------------------------------------------

/// Which codec calls `zshuffle tune` runs, and times the kernel's launches in.
enum class tune_calls : std::uint8_t {
  encode,             // encode_async
  decode,             // decode_async (validation included) of frames encoded once, under the defaults
  encode_and_decode,  // encode_async, then decode_async of its frames
};

/// Which value types `zshuffle tune` makes table entries for.
enum class tuned_types : std::uint8_t {
  /// One entry per type of `zshuffle tune --types` that the codec supports and the data folder
  /// has columns of: the kernel's best geometry depends on the type.
  each,
  /// One entry for tune_workload::type alone (a kernel of one type, such as string offsets).
  one,
  /// One entry for any type (tuning_key::type empty), measured on tune_workload::type, or on
  /// a type of its width and kind where the data folder has none of it: the kernel's work does
  /// not depend on the type (checksums).
  any,
};

/// The outputs a kernel decides, which every candidate geometry must leave byte for byte as
/// the defaults wrote them. Decoded frames' statuses are always compared.
struct tune_outputs {
  bool frames = false;           // every frame byte, and each frame's size
  bool headers = false;          // the frame headers, whose payload checksums cover the payloads
  bool decoded_values = false;   // the decode targets' values (fixed-width types)
  bool decoded_offsets = false;  // the decode targets' string offsets
};

/// How `zshuffle tune` exercises a swept kernel: it runs `calls` of the codec named `codec` over
/// batches of real columns of each size class, cut into frames, times only this kernel's
/// launches in them, and compares `compares` with the defaults' output. Kernels that are not
/// swept leave it empty (no codec).
struct tune_workload {
  std::string_view codec;  // codec::name, as zs::get_codec finds it; empty: no workload
  tune_calls calls = tune_calls::encode_and_decode;
  tuned_types types = tuned_types::each;
  value_type type = value_type::int32;  // the type of `one` and `any`; unused for `each`
  tune_outputs compares{};
};

/// What one kernel accepts, where it starts, and whether and how `zshuffle tune` sweeps it.
/// Every view in it must outlive the program: string literals for the texts, static arrays for
/// the candidate sets.
struct kernel_spec {
  /// The name tuning files use ("bitpack_decode"); unique among registered specs.
  std::string_view name;
  launch_params defaults;
  std::span<const unsigned> threads;  // block sizes the kernel is built for
  std::span<const unsigned> items;    // accepted values of `items`; empty: it must be 0
  unsigned max_waves = 0;
  /// Swept by `zshuffle tune`. The others have so little work per launch that their defaults
  /// are not worth measuring; a table entry still applies to them.
  bool swept = false;
  /// For a swept kernel, the codec calls and data tune measures it on; so a codec describes its
  /// kernels in its own folder, and tune needs no change for them.
  tune_workload tune{};
  std::string_view what;  // one line for people
};

/// The default cap of waves for a kernel's launches, and the largest cap a spec accepts. Four
/// waves keep every SM busy to the end of a launch while blocks still loop over several units
/// each, which spares the scheduler the block churn of one block per unit on batches of many
/// small units.
inline constexpr unsigned default_launch_waves = 4;
inline constexpr unsigned max_launch_waves = 64;

/// Adds `spec` to the registered kernels and returns the registered copy, which lives as long
/// as the program. Codec families register their kernels' specs while the library loads, from
/// a namespace-scope definition in their folder:
///
///   const kernel_spec& raw_offsets_spec = register_kernel({.name = "raw_offsets", ...});
///
/// Such references, and lookups by name, are for use once the library has loaded, not from
/// another static initializer (whose order against the registrations is unspecified). Throws
/// zs::error (invalid_argument) naming the spec when its name is empty or already registered,
/// it accepts no block size, its defaults are not among the params it accepts, it is swept
/// without a workload (tune.codec empty), compares none of the workload's outputs or decoded
/// ones its calls do not decode, or it has a workload without being swept. Whether the codec is
/// registered, and supports the types named, is checked by `zshuffle tune` (codecs register
/// while the library loads too, in an unspecified order against the kernels).
const kernel_spec& register_kernel(const kernel_spec& spec);

/// The registered spec named `name`; nullptr when there is none.
const kernel_spec* find_kernel_spec(std::string_view name) noexcept;
/// The registered spec named `name`. Throws zs::error (invalid_argument) naming it and the
/// registered ones when there is none.
const kernel_spec& get_kernel_spec(std::string_view name);
/// Every registered spec, sorted by name.
std::vector<const kernel_spec*> kernel_specs();

/// The kernels every codec shares, registered by the library itself.
extern const kernel_spec& frame_ops_spec;  // "frame_ops": one thread per frame, segment or chunk
                                           //   (headers, frame checks, chunk plans, copy lists)
extern const kernel_spec& checksum_spec;   // "checksum": payload checksums, on encode and on validation
extern const kernel_spec& gather_spec;     // "gather": 64-bit gather by index (the shuffle's offset reads)

/// Why `params` are not valid for `kernel` (a block size it is not built for, an `items` it
/// does not take, too many waves); empty when they are valid.
std::string check_params(const kernel_spec& kernel, const launch_params& params);
/// The same for the kernel registered as `kernel`; "no kernel is registered as '...'" when none is.
std::string check_params(std::string_view kernel, const launch_params& params);
inline bool valid_params(const kernel_spec& kernel, const launch_params& params) {
  return check_params(kernel, params).empty();
}
inline bool valid_params(std::string_view kernel, const launch_params& params) {
  return check_params(kernel, params).empty();
}

/// The kernel's defaults on `device`: its spec's defaults, with a block size the device can run
/// (the largest accepted one within max_threads_per_block, when the default is not).
launch_params default_params(const kernel_spec& kernel, const device_profile& device);

/// Short text of params: "256 threads, 4 waves, 4096 items" ("no cap" for waves = 0).
std::string to_string(const kernel_spec& kernel, const launch_params& params);

// --- tuning tables -----------------------------------------------------------------------------

/// What one table entry is measured for.
struct tuning_key {
  std::string device;  // device model, as CUDA names it (device_profile::name)
  int compute_major = 0;
  int compute_minor = 0;
  /// The name of a registered kernel spec.
  std::string kernel;
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
  /// no kernel is registered under its name or its params are not valid for its kernel.
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
  const tuning_entry* find(std::string_view device, int compute_major, int compute_minor,
                           std::string_view kernel, std::optional<value_type> type, size_class size) const;

  /// The JSON text of the table (entries sorted by key, so files diff well).
  std::string to_json() const;
  /// Parses a table from its text, touching no file. Throws zs::error (invalid_argument) naming
  /// the first problem: not JSON, another schema or version, a missing or mistyped field, a
  /// kernel no registered spec is named after, an unknown type or size class, params the kernel
  /// does not accept, or two entries for one key (naming both). Linear in the entries, but for
  /// sorting them.
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

// --- choosing launches ------------------------------------------------------------------------

/// The choice for a launch of `kernel` over a batch of `batch_bytes` bytes of `type` on a
/// device described by `device`, from `table`. No CUDA calls.
launch_choice choose_launch(const tuning_table& table, const device_profile& device, const kernel_spec& kernel,
                            std::optional<value_type> type, std::uint64_t batch_bytes);

/// The same on the current device with the process-wide table: what the codecs call.
launch_choice choose_launch(const kernel_spec& kernel, std::optional<value_type> type, std::uint64_t batch_bytes);

}  // namespace zs
