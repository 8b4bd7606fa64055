// Compressed spill: park a column in host memory, compressed, and bring it back later.
//
// When device memory runs short, a data engine moves columns it does not need right now to host
// memory and restores them when it does. PCIe moves about 55 GB/s per direction, far slower than
// device memory, so a column that compresses 3x and whose codec runs faster than the link comes
// back nearly 3x sooner in compressed form. zs::spill writes a column as frames of the wire
// format (docs/FORMAT.md: self-describing, checksummed) into pinned host memory; zs::restore
// decodes them back, verifying every frame's checksum first.
//
//   zs::spilled_column parked = zs::spill(device_column.view(), stream);   // frames in host memory
//   device_column = {};                                                     // device memory freed
//   ...
//   zs::column back = zs::restore(parked, stream);                          // on the device again
//
// Where it runs: a device column spills through the GPU codecs, a host column through the CPU
// reference codecs (the same frames, byte for byte); restore decodes on the GPU into device
// memory or on the CPU into host memory, whichever the caller asks, from any handle.
//
// Codec per column: spill_options::codec when set (codec_id::raw keeps the bytes as they are,
// still framed and checksummed), otherwise the type's default codec (zs::default_codec) when it
// is predicted to beat moving the raw bytes over PCIe, else raw. The prediction uses the codec's
// estimate of the ratio on a sample of the column, its encode and decode speeds on the column
// (measured on the first 64 MiB of a column, 4 MiB on the CPU, once per process, device, codec,
// type and spill_options::name, then remembered for columns whose sample is at most twice as
// large) and the PCIe bandwidth (measured once per device by timing pinned copies, or
// spill_options::pcie_bandwidth). Encoding and copying run in batches that overlap, so the time
// of each direction is predicted as the slower of the two:
//
//   compressed = max(raw / encode_bps, spilled / pcie) + max(spilled / pcie, raw / decode_bps)
//   raw        = 2 x raw / pcie
//
// spill_report records the decision, the figures it came from and what was spilled.
//
// The raw fast path: where the choice falls on raw for a device column (not forced), the spill
// is a cudaMemcpyAsync of the values (a string column's offsets and characters) into pinned
// memory and the restore copies them back, as fast as a plain copy; such a spill has no frames
// (report().frames is 0) and so no payload checksum to verify on restore. Forced raw and host
// columns stay framed.
//
// Streams: spill enqueues its work on `stream` after whatever the caller enqueued before it;
// the column must stay valid until that work is done (stream order suffices). It waits on the
// host for each batch's frame sizes (to size the host memory exactly), so it returns once every
// batch is encoded and its copy to host memory is enqueued; the handle's frames are complete
// when `stream` reaches that point (restore and spill_to_file order themselves after it).
// restore enqueues the copies and decoding on `stream` and waits for the frames' statuses,
// so that a bad frame throws before the caller uses the column; the restored column is ready in
// stream order.
//
// Host memory: pinned blocks, one per batch, blocks of up to 8 MiB cut from shared 64 MiB slabs.
// Freed blocks are kept for reuse by later spills (pinning memory costs more than copying it);
// reserve_spill_host_memory() pins ahead, release_spill_host_cache() gives them back.
//
// Failures (zs::error, each naming the column): a pinned host allocation that fails
// (out_of_memory; what was allocated is freed), a frame that fails its checks on restore
// (corrupt_frame; the handle keeps its frames, so nothing is lost), no room on the device for
// the restored column (out_of_memory; the handle is intact), a handle that holds nothing
// (invalid_argument: moved from, or default constructed).
//
// Null masks: a nullable column's mask (zs/column.hpp) is spilled beside its values, as raw
// frames of its bytes (each checksummed like every frame), and restored with the column; the
// report counts its bytes apart (spill_report::null_mask_bytes). The file tier carries the mask
// in a section of its own after the values' frames.
//
// A third tier: spill_to_file writes a handle's frames to a file; restore_from_file reads them
// back into a handle, detecting a truncated or corrupted file. docs/SPILL.md has the file layout.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/frame.hpp"
#include "zs/types.hpp"

namespace zs {

/// What a spill of a device column chose and prepared: its codec and that codec's column
/// parameters in device memory (an FSST symbol table, ALP's exponent candidates). Shared and
/// immutable; spilled_column::preparation hands it out, spill_options::prepared takes it.
struct spill_preparation;

struct spill_options {
  /// The codec for every frame of the column; unset: chosen per column (see above).
  std::optional<codec_id> codec;
  /// The choice made for an earlier spill of a column like this one (its report().codec), taken
  /// again without estimating: for callers that spill many pieces of one column
  /// (zs::partition_store), where estimating every piece would cost more than spilling it. Raw
  /// keeps the fast path, as a choice of raw does. Ignored when `codec` is set.
  std::optional<codec_id> chosen_before;
  /// The choice and the column parameters of an earlier spill of a device column like this one
  /// (its preparation()), taken again: no estimate and no second preparation. The parameters
  /// are what costs a string column most (an FSST table is milliseconds of host time, more than
  /// encoding a piece of a few MiB), so a caller that spills many pieces of one column passes
  /// the first piece's. Its value type must be the column's (invalid_argument otherwise); a host
  /// column takes its codec alone, as chosen_before. Takes precedence over chosen_before; a
  /// `codec` set to another codec overrides it.
  std::shared_ptr<const spill_preparation> prepared;
  /// PCIe bandwidth in bytes per second, one direction, for the choice of codec; 0: measured
  /// once per device (host columns on a machine without a GPU assume 25 GB/s, PCIe 4.0 x16).
  double pcie_bandwidth = 0;
  /// Uncompressed bytes per frame (values, or characters + 8 per string): the unit of encoding
  /// that the batched codecs spread over the GPU.
  std::uint64_t frame_bytes = std::uint64_t{1} << 20;
  /// Uncompressed bytes per batch: one encode (or decode) call and one host block each, so that
  /// a batch's copy overlaps the next batch's encoding. Two batches' frames are on the device at
  /// once (at most about 2 x batch_bytes of scratch). Each call has a fixed cost of about a
  /// millisecond, so batches of 256 MiB spill a 2 GiB string column in 47 ms where batches of
  /// 64 MiB take 67 (bench/RESULTS.md). Where the codec outruns PCIe, a column of more than two
  /// batches starts and ends with a batch of an eighth of this, so that less of the pipeline
  /// runs without overlap.
  std::uint64_t batch_bytes = std::uint64_t{256} << 20;
  /// How errors and reports name the column; empty: "column".
  std::string name;
  /// Where the frames go: host memory (pinned), or device memory (a device column only): the
  /// column kept compressed on the device, as a store under a device budget keeps what it
  /// receives; move_to_host moves such frames to host memory later, by plain copies. With
  /// `device` the codec is chosen by ratio alone (compressed where the estimate saves at least
  /// device_frames_min_saving of the bytes, else raw), PCIe being no part of keeping data.
  memory_kind frames_in = memory_kind::host;
};

/// The share of a column's bytes a codec must save for a spill with frames_in device to compress.
inline constexpr double device_frames_min_saving = 0.1;

/// The choice of codec for one column, the figures it came from, and what was spilled.
struct spill_report {
  codec_id codec = codec_id::raw;
  std::string codec_name = "raw";
  bool forced = false;          // spill_options::codec chose it
  std::uint64_t raw_bytes = 0;  // values, or characters + 8 per string (as shuffle statistics count)
  std::uint64_t spilled_bytes = 0;  // frame bytes in host memory, headers included
  std::uint64_t frames = 0;
  /// A nullable column's mask: its bytes (null_mask_bytes(rows)) and the bytes of its frames in
  /// host memory (headers included), apart from raw_bytes and spilled_bytes, which count the
  /// values. 0 for a column without a mask.
  std::uint64_t null_mask_bytes = 0;
  std::uint64_t null_mask_spilled_bytes = 0;
  /// The figures the choice came from; 0 where it did not need them (a forced codec or raw, an
  /// empty column, a type whose default codec is raw).
  double estimated_ratio = 0;
  double encode_bps = 0, decode_bps = 0;  // of the default (or forced) codec, uncompressed bytes/s
  double pcie_bps = 0;
  /// Predicted seconds of spill + restore in raw form, and with the codec that was considered.
  double predicted_raw_seconds = 0;
  double predicted_compressed_seconds = 0;

  bool compressed() const noexcept { return codec != codec_id::raw; }
  /// raw / spilled bytes; 1 for an empty column.
  double ratio() const noexcept {
    return spilled_bytes == 0 ? 1.0 : static_cast<double>(raw_bytes) / static_cast<double>(spilled_bytes);
  }
};

namespace detail {
struct spill_state;  // lib/src/spill_state.hpp
}  // namespace detail

/// A spilled column: owns its frames in host memory, and knows the column's type, size and codec.
/// Move-only; a moved-from or default-constructed handle holds nothing.
class spilled_column {
 public:
  spilled_column();
  ~spilled_column();
  spilled_column(spilled_column&& other) noexcept;
  spilled_column& operator=(spilled_column&& other) noexcept;
  spilled_column(const spilled_column&) = delete;
  spilled_column& operator=(const spilled_column&) = delete;

  /// Whether the handle holds a column (false once moved from).
  bool holds_data() const noexcept { return state_ != nullptr; }
  /// Where the frames are: host memory, or the device (spill_options::frames_in) until
  /// move_to_host. Throws zs::error (invalid_argument) on a handle that holds nothing.
  memory_kind frames_memory() const;
  /// These throw zs::error (invalid_argument) on a handle that holds nothing.
  const std::string& name() const;
  value_type type() const;
  std::uint64_t size() const;          // values (rows)
  std::uint64_t chars_bytes() const;   // character bytes of a string column, else 0
  bool nullable() const;               // whether the column had a null mask (restored with it)
  memory_kind origin() const;          // where the column was spilled from: what restore returns to
  const spill_report& report() const;
  /// Seconds from the start of the spill to its last copy to host memory (waits for it).
  double spill_seconds() const;
  /// Seconds of the last restore, from its start to its last decoded frame; 0 before any.
  double restore_seconds() const;
  /// The codec and column parameters this spill of a device column took (chosen and prepared,
  /// or given as spill_options::prepared), for later spills of the same column; null for a
  /// host column, an empty column and a handle that holds nothing.
  std::shared_ptr<const spill_preparation> preparation() const;

  /// For the library's own use (spill.cpp).
  explicit spilled_column(std::unique_ptr<detail::spill_state> state) noexcept;
  detail::spill_state& state() const;

 private:
  std::unique_ptr<detail::spill_state> state_;
};

/// Spilled columns of a table, by name.
struct spilled_table {
  std::vector<std::string> names;
  std::vector<spilled_column> columns;
  /// Each column's logical type (metadata the frames do not carry), given back on restore.
  std::vector<logical_type> logical_types;
};

/// Spills `column` (host or device memory) to host memory; see above. Throws zs::error:
/// invalid_argument for a malformed view or options, unsupported when the forced codec does not
/// encode the column's type, out_of_memory when host memory cannot be allocated.
spilled_column spill(const column_view& column, cudaStream_t stream, const spill_options& options = {});
/// A typed buffer: `count` values of the fixed-width `type` at `data` in `memory`.
spilled_column spill(const void* data, value_type type, std::uint64_t count, memory_kind memory, cudaStream_t stream,
                     const spill_options& options = {});
/// Every column of `t`, each named by its name in `t` (options.name is ignored).
spilled_table spill(const table& t, cudaStream_t stream, const spill_options& options = {});

/// The column back in the memory it was spilled from; the handle keeps its frames (restore again,
/// or drop it). Throws zs::error: invalid_argument for a handle that holds nothing, corrupt_frame
/// naming the column and the first bad frame, out_of_memory when the column finds no room.
column restore(spilled_column& handle, cudaStream_t stream);
/// The same into `memory`: device (GPU codecs) or host (CPU reference codecs).
column restore(spilled_column& handle, memory_kind memory, cudaStream_t stream);
/// Every column of `t`, in order, with its name and logical type.
table restore(spilled_table& t, cudaStream_t stream);

/// Moves a handle's frames (its null mask's too) from device memory to pinned host memory by
/// plain copies, no decoding, and frees their device memory; waits for the copies. Nothing
/// happens to frames already in host memory. Throws zs::error (out_of_memory) when host memory
/// cannot be had, the frames then staying on the device.
void move_to_host(spilled_column& handle, cudaStream_t stream);
/// Every column of `t`.
void move_to_host(spilled_table& t, cudaStream_t stream);

/// Writes the handle's frames to `path` (replacing the file), after the spill's copies are done.
/// A nullable column's mask goes with it. Throws zs::error: io_error naming the path when it
/// cannot be written completely, invalid_argument for frames in device memory (move_to_host
/// first).
void spill_to_file(const spilled_column& handle, const std::filesystem::path& path);
/// A handle holding the frames of a file that spill_to_file wrote (this version's, or version 1's
/// without masks), in host memory, with its null mask where the file has one. Every frame's
/// header and checksum is verified as it is read. Throws zs::error: io_error when the file cannot
/// be read, corrupt_frame naming the file when it is truncated, has bytes after its end, or any
/// of its bytes is not what was written.
spilled_column restore_from_file(const std::filesystem::path& path);

/// Frees the pinned host blocks that spills keep for reuse (those still owned by handles stay).
void release_spill_host_cache() noexcept;
/// Pins at least `bytes` of host memory for later spills, now: pinning runs at a few GB/s
/// (1.6 GB/s measured on an H200 host), slower than the copies a spill makes, so a data engine
/// reserves its spill memory at startup, as it would a pinned pool. It serves blocks of up to
/// 8 MiB (what a partition store's pieces take; larger blocks are pinned on first use, then kept)
/// and is kept like every freed block (release_spill_host_cache gives it back). Returns the
/// seconds it took.
/// Throws zs::error (out_of_memory) when the memory cannot be pinned; what was pinned stays.
double reserve_spill_host_memory(std::uint64_t bytes);

/// The PCIe bandwidth the choice of codec assumes on the current device: bytes per second of the
/// slower direction of a pinned copy of 64 MiB, measured on the first call on each device and
/// remembered.
double measured_pcie_bandwidth();

}  // namespace zs
