// Codecs: batched, two-phase encode and decode of frames (docs/FORMAT.md), on the GPU and on
// the CPU, in the CUB style.
//
// A batch is many frames, typically every (column, partition) pair of a shuffle, handled by a
// fixed number of kernel launches whatever its size. The caller owns all memory:
//
//   1. sizes: max_frame_bytes(source) for each frame gives the room the encoder may use;
//      the caller lays frames out at frame_alignment multiples (layout_frames does this).
//   2. temp:  encode_temp_bytes / decode_temp_bytes give the device scratch a batch needs.
//   3. run:   encode_async / decode_async on a stream (GPU), or encode_host / decode_host (CPU
//      reference, same formats, same results byte for byte).
//
// Decoders never trust their input: every frame's header is validated and its payload checksum
// verified before its payload is read, and each frame gets a frame_status. A bad frame does not
// stop the others; throw_if_failed turns statuses into one error naming the first bad frame.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "zs/batch.hpp"
#include "zs/frame.hpp"
#include "zs/types.hpp"

namespace zs {

namespace detail {
class upload_image;  // lib/src/temp_layout.hpp
}  // namespace detail

struct encode_batch {
  std::span<const encode_source> sources;  // host array of descriptors
  /// Output buffer; frame i is written at frames + frame_offsets[i] and may use up to
  /// frame_offsets[i + 1] - frame_offsets[i] bytes (at least max_frame_bytes(sources[i])).
  std::byte* frames = nullptr;
  std::span<const std::uint64_t> frame_offsets;  // host array, sources.size() + 1 entries
  /// Out: bytes written per frame (header + payload). Device memory for encode_async,
  /// host memory for encode_host.
  std::uint64_t* frame_bytes = nullptr;
  /// The frames are sections of larger frames (composition: a codec writing part of its
  /// payload with another codec). Their payload checksums are left 0 and not computed: the
  /// enclosing frame's checksum covers their bytes, so every byte is summed once.
  bool embedded = false;
};

struct decode_batch {
  /// Input buffer; frame i lies within [frames + frame_offsets[i], frames + frame_offsets[i+1]).
  /// decode_async needs it on a frame_alignment boundary (payloads are read in 16-byte chunks);
  /// device allocations are.
  const std::byte* frames = nullptr;
  std::span<const std::uint64_t> frame_offsets;  // host array, targets.size() + 1 entries
  std::span<const decode_target> targets;        // host array of descriptors
  /// Out: one status per frame. Device memory for decode_async, host memory for decode_host.
  /// Nothing outside a frame's target is ever written. The target of a frame whose status is
  /// not ok is left as it was by decode_host; after decode_async its contents are unspecified
  /// for codecs that check a payload while they decode it: those that sum the checksum
  /// (codec::sums_payloads, e.g. bitpack), fsst, which checks each split's codes as it
  /// decodes them, and dict, which unpacks a frame's codes into its target before it checks them.
  frame_status* status = nullptr;
  /// The frames are sections of larger frames whose payload checksums were verified: their
  /// own (0) are not checked. Headers are validated as always.
  bool embedded = false;
};

/// Samples of columns: what a codec prepares column parameters from, and estimates its ratio
/// on. Column c's sample is pieces[piece_begin[c] .. piece_begin[c + 1]): rows of that column
/// as encode sources (all of one type, in the memory of the side that runs), typically every
/// partition of the column that a batch encodes. The codec picks the rows it reads from them.
struct sample_batch {
  std::span<const encode_source> pieces;
  std::span<const std::uint64_t> piece_begin;  // host array, columns + 1 entries

  std::size_t columns() const noexcept { return piece_begin.empty() ? 0 : piece_begin.size() - 1; }
  std::span<const encode_source> of(std::size_t c) const {
    return pieces.subspan(piece_begin[c], piece_begin[c + 1] - piece_begin[c]);
  }
};

/// What a codec expects of a column: the uncompressed bytes of the rows it estimated from
/// (values x width, or characters + 8 per string for its offset, as shuffle_stats counts) and
/// the frame bytes it makes of them.
struct codec_estimate {
  std::uint64_t raw_bytes = 0;
  std::uint64_t frame_bytes = 0;
  /// raw / frame bytes; 1 for an empty sample.
  double ratio() const noexcept {
    return frame_bytes == 0 ? 1.0 : static_cast<double>(raw_bytes) / static_cast<double>(frame_bytes);
  }
};

/// The most bytes of column parameters a codec may have per column: 4 KiB, so that with the
/// 16-byte parameter prefix a frame of 1 MiB spends at most 0.4% on them.
inline constexpr std::uint64_t max_params_bytes = 4096;

/// A codec family. Subclasses provide the payload encoders and decoders; this base class adds
/// what every codec shares: header writing, checksums, and validation before decoding.
class codec {
 public:
  virtual ~codec() = default;

  virtual codec_id id() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;
  virtual bool supports(value_type type) const noexcept = 0;
  /// How default_codec ranks this codec among those that encode a type: raw has 0, codecs that
  /// compress something higher.
  virtual int preference() const noexcept { return 0; }
  /// The codec ids this codec's decoder accepts (codec_bit of each); by default its own id.
  /// A codec that picks a scheme per frame accepts every scheme it writes.
  virtual std::uint32_t decodes() const noexcept { return codec_bit(id()); }
  /// The most bytes a frame of `source` can take, header included (and the column parameters,
  /// for a codec that has them).
  virtual std::uint64_t max_frame_bytes(const encode_source& source) const noexcept = 0;

  // --- column parameters ---
  // Some codecs share parameters over every frame of a column (a symbol table, exponents, a
  // dictionary): prepared once per column (per round of a shuffle) from a sample, batched over
  // columns, then handed to every frame's encode_source::params. Each frame carries a copy, so
  // frames still decode alone (docs/FORMAT.md, "Column parameters": format version 2).

  /// Bytes of the parameter block of a column of `type`, at most max_params_bytes; 0 (the
  /// default) for a codec without column parameters, whose frames are format version 1.
  virtual std::uint64_t params_bytes(value_type /*type*/) const noexcept { return 0; }
  /// Prepares the parameter block of every column of `samples` on the GPU: column c's at
  /// params + params_offsets[c] (device memory, params_bytes(type) bytes each;
  /// params_offsets: host array, columns + 1 entries, layout_params gives one). Stream
  /// ordered; scratch comes from the device pool on `stream`. Nothing to do for a codec
  /// without column parameters.
  void prepare_async(const sample_batch& samples, std::byte* params, std::span<const std::uint64_t> params_offsets,
                     cudaStream_t stream) const;
  /// The same on the CPU, over host memory; the same bytes as prepare_async.
  void prepare_host(const sample_batch& samples, std::byte* params, std::span<const std::uint64_t> params_offsets) const;

  // --- estimates: what a planner chooses codecs by ---

  /// The frame bytes this codec expects for each column of `samples`, from at most about
  /// estimate_sample_bytes of each column's sample, on the GPU. Waits for `stream`. The
  /// default encodes that much of the sample (parameters prepared from it) and counts the frame
  /// bytes: exact for the rows it reads, except that a column's parameters count once (as in
  /// the large frames of a shuffle or spill), not once per sample frame. Where every piece of
  /// `samples` carries parameters (encode_source::params, prepared by the caller for the whole
  /// column), the estimate encodes with them instead of preparing its own. A codec may answer
  /// more cheaply.
  virtual std::vector<codec_estimate> estimate(const sample_batch& samples, cudaStream_t stream) const;
  /// The same on the CPU, over host memory.
  virtual std::vector<codec_estimate> estimate_host(const sample_batch& samples) const;
  static constexpr std::uint64_t estimate_sample_bytes = std::uint64_t{256} << 10;

  // --- GPU: device memory, stream ordered. ---
  /// Device scratch bytes that encode_async needs for this batch.
  std::size_t encode_temp_bytes(std::span<const encode_source> sources) const;
  void encode_async(const encode_batch& batch, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream) const;
  /// Device scratch bytes that decode_async needs for this batch.
  std::size_t decode_temp_bytes(std::span<const decode_target> targets) const;
  void decode_async(const decode_batch& batch, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream) const;

  // --- CPU reference: host memory, synchronous. ---
  void encode_host(const encode_batch& batch) const;
  void decode_host(const decode_batch& batch) const;

 protected:
  // Payload encoders write the codec's body at frame + frame_header_bytes +
  // params_section_bytes(source.params_bytes) and fill, in the header, the codec id (offset 6:
  // the codec's own, or the scheme it picked for the frame), the payload bytes field (offset
  // 24: the body's bytes) and the codec parameters (offset 40, zero where it has none:
  // store_encoder_fields). For a codec with column parameters the base class has already
  // copied them into the frame (payload + params_prefix_bytes); after the body it writes the
  // prefix, adds the parameter section to the payload bytes, and writes the rest of the header
  // (magic, version, type, counts, checksums: complete_header).
  virtual std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const;
  // `host` is the caller's batch (host descriptor arrays and frame offsets, params_bytes filled
  // in). `uploads` carries host data into device scratch (`temp` included). It holds the base
  // class's descriptors, frame offsets and zeroed sums, not yet sent: a payload hook puts its
  // own host data there too and sends it before its first kernel, so that a batch's data goes
  // up in one copy.
  virtual void encode_payloads_async(const device_encode_batch& batch,
                                     const encode_batch& host, void* temp,
                                     std::size_t temp_bytes, detail::upload_image& uploads,
                                     cudaStream_t stream) const = 0;
  virtual void encode_payload_host(const encode_source& source, std::byte* frame,
                                   std::uint64_t capacity) const = 0;

  /// Whether the GPU payload kernels add each payload's checksum terms (zs/hash.hpp) into
  /// batch.sums as they write or read it, sparing the base class a pass over every payload.
  /// Such a decoder runs before the checksum is compared: it writes frames that may then be
  /// refused (within their targets), so their targets' contents are unspecified.
  virtual bool sums_payloads() const noexcept { return false; }
  /// Whether the GPU payload decoder checks each frame's header itself (zs::validate_header
  /// against its target, into the batch's status) before it reads anything else of the frame,
  /// sparing the base class its validation pass. Only for codecs that sums_payloads().
  virtual bool validates_headers() const noexcept { return false; }

  // Payload decoders get the whole payload (header.payload_bytes, parameter section included:
  // the body starts params_section_bytes(params_bytes(type)) into it) and see only frames
  // whose status is ok after validation (header, unless they
  // validate headers themselves, and payload checksum unless they sum payloads themselves), must
  // not read or write outside any frame or target, and set corrupt_payload where a payload does
  // not decode within its bounds. Frames they decode keep status ok.
  virtual std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const;
  // `uploads` holds the base class's descriptors, offsets and zeroed sums; they are not sent yet
  // when the codec validates_headers(). The hook sends them with its own before its first kernel.
  virtual void decode_payloads_async(const device_decode_batch& batch,
                                     const decode_batch& host, void* temp,
                                     std::size_t temp_bytes, detail::upload_image& uploads,
                                     cudaStream_t stream) const = 0;
  virtual frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                           const decode_target& target) const = 0;

  // Column parameters, for codecs whose params_bytes is above 0. The hooks write column c's
  // block at params + params_offsets[c]; the base class checks the batch first.
  virtual void prepare_params_async(const sample_batch& samples, std::byte* params,
                                    std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const;
  virtual void prepare_params_host(const sample_batch& samples, std::byte* params,
                                   std::span<const std::uint64_t> params_offsets) const;
};

/// Offsets of the parameter blocks of columns of `types` for `c`: column i's at offsets[i],
/// each params_bytes(type) rounded up to frame_alignment. Returns types.size() + 1 offsets; the
/// last is the bytes all need (0 for a codec without column parameters).
std::vector<std::uint64_t> layout_params(const codec& c, std::span<const value_type> types);

/// The codec registered under `id`; throws zs::error (unsupported) for one not registered.
const codec& get_codec(codec_id id);
/// The codec registered under `name` (codec::name); throws zs::error (unsupported), listing the
/// registered names, for one not registered.
const codec& get_codec(std::string_view name);
/// Every registered codec, by id.
std::span<const codec* const> all_codecs();

/// Adds `c` to the registered codecs (get_codec, all_codecs, default_codec). The codecs built
/// in register themselves when the library loads, one line in each codec's folder
/// (ZS_REGISTER_CODEC, lib/src/codecs/registry.hpp); a program may register its own under a
/// private-use id. `c` must outlive every use. Throws zs::error (invalid_argument) when its id
/// is above max_codec_id, its id or name is taken, or its column parameters for some type are
/// above max_params_bytes.
void register_codec(const codec& c);

/// The codec a column of `type` uses unless the caller names one: of the registered codecs
/// that encode `type`, the one of highest codec::preference (raw, at 0, when no other does).
const codec& default_codec(value_type type);

/// Frame offsets for a batch: frame i gets max_frame_bytes(sources[i]) rounded up to
/// frame_alignment. Returns sources.size() + 1 offsets; the last is the buffer size.
std::vector<std::uint64_t> layout_frames(const codec& c, std::span<const encode_source> sources);

/// Throws zs::error (corrupt_frame) naming the first frame whose status is not ok.
void throw_if_failed(std::span<const frame_status> statuses);

/// CPU check of one frame: header, then payload checksum. What every host decoder runs first.
frame_status validate_frame_host(const std::byte* frame, std::uint64_t available,
                                 const frame_expectation& expected) noexcept;

}  // namespace zs
