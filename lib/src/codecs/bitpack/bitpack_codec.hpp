// The tile-based bit-packing codec for integer columns: GPU-FOR, GPU-DFOR and GPU-RFOR after
// "Tile-based Lightweight Integer Compression in GPU" (SIGMOD 2022), extended to 64-bit values,
// any length, and GPU encoding.
//
// Two codecs of one class, each picking per frame the smallest of its schemes and raw by exact
// encoded size and writing the chosen id into the frame header; its decoder accepts every id
// it writes, so batches that mix schemes decode in one call. A frame that picks raw carries
// exactly the raw codec's payload. Frames are never larger than raw: max_frame_bytes is the raw
// frame size.
//
//   "bitpack" (codec_id::bitpack_for, the classic schemes): for, dfor and rfor. The default
//       codec of integer columns: the fastest to encode and decode.
//   "bitpack_ext" (codec_id::bitpack_pfor, the extended schemes): those and pfor, pdfor and
//       drfor. pfor and pdfor are for and dfor whose miniblocks drop the trailing zero bits
//       their offsets share and patch rare outliers from an exception list instead of widening
//       the whole miniblock; drfor is rfor over the differences of consecutive run values
//       (sorted columns with short runs). Smaller frames on such columns, slower kernels: a
//       spill takes it for a column where that is predicted to pay over PCIe
//       (detail::prefers_extended, lib/src/spill_state.hpp), and a shuffle's sender for an
//       integer column left to the default where its planner predicts so (comm/src/shuffle.cpp).
//
// Each runs kernels compiled for its schemes alone, so the classic codec's carry none of the
// extended schemes' work. Either way the GPU's frames are the CPU reference's byte for byte.
//
// Value types: every integer type. int8, int16, uint8, uint16 and bool8 (as a uint8) are coded
// as their 32-bit widening, and their decoder refuses (corrupt_payload) a frame whose values do
// not fit the narrow type. The decoder refuses frames of other types with
// frame_status::unsupported_type.
// docs/FORMAT.md ("Codec 1: for" and after) is the format.
//
// GPU costs: the encoder reads its input once, keeps each 512-value segment's encoding in the
// scheme its frame is likely to choose between its two passes when that takes at most half the
// raw size, and reads the input again only for the segments where that guess or the room
// failed; so encode_temp_bytes is about half the batch's raw bytes. The payload
// kernels add the checksum terms as they go (sums_payloads), so no pass reads a payload twice.
// The decoder is one pass: a warp checks a tile's blocks, loads it into shared memory and
// writes its values; a frame refused by its checksum afterwards leaves its target unspecified.
// kernels/bitpack/warp_programs.hpp describes the passes.
#pragma once

#include <array>
#include <optional>

#include "bitpack/bitpack_kernels.hpp"
#include "zs/codec.hpp"

namespace zs::codecs {

/// An integer column's frames take bitpack_ext instead of bitpack only where its estimated ratio
/// is above bitpack's times this (its kernels are slower; a smaller gain is not worth measuring).
inline constexpr double extended_min_gain = 1.05;

/// The schemes a bitpack codec chooses from: for, dfor, rfor (classic, "bitpack"), or those and
/// pfor, pdfor, drfor (extended, "bitpack_ext").
enum class bitpack_schemes : std::uint8_t { classic, extended };

class bitpack_codec final : public codec {
 public:
  /// GPU launch shapes come from the tuning table for each batch (zs/tuning.hpp).
  bitpack_codec() = default;
  /// A fixed shape for the GPU decoder (blocks of 128 values per warp tile and threads per
  /// block) for every batch, in place of the table's: for tests and experiments.
  explicit bitpack_codec(kernels::bitpack::decode_config decode) : fixed_decode_(decode) {}
  /// A codec of the given schemes with a fixed decoder shape.
  bitpack_codec(bitpack_schemes schemes, kernels::bitpack::decode_config decode)
      : fixed_decode_(decode), schemes_(schemes) {}
  /// A codec of the given schemes.
  explicit bitpack_codec(bitpack_schemes schemes) : schemes_(schemes) {}

  codec_id id() const noexcept override {
    return schemes_ == bitpack_schemes::classic ? codec_id::bitpack_for : codec_id::bitpack_pfor;
  }
  std::string_view name() const noexcept override {
    return schemes_ == bitpack_schemes::classic ? "bitpack" : "bitpack_ext";
  }
  bool supports(value_type type) const noexcept override { return is_integer(type); }
  /// The classic codec is the default for integers; the extended one is chosen per column.
  int preference() const noexcept override { return schemes_ == bitpack_schemes::classic ? 10 : 9; }
  std::uint32_t decodes() const noexcept override {
    std::uint32_t const classic = codec_bit(codec_id::raw) | codec_bit(codec_id::bitpack_for) |
                                  codec_bit(codec_id::bitpack_dfor) | codec_bit(codec_id::bitpack_rfor);
    if (schemes_ == bitpack_schemes::classic) return classic;
    return classic | codec_bit(codec_id::bitpack_pfor) | codec_bit(codec_id::bitpack_pdfor) |
           codec_bit(codec_id::bitpack_drfor);
  }
  bitpack_schemes schemes() const noexcept { return schemes_; }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override;

  /// The fixed decoder shape; nullopt when the tuning table chooses it.
  const std::optional<kernels::bitpack::decode_config>& fixed_decode_config() const noexcept { return fixed_decode_; }

  /// Entries of scheme_payload_bytes: codec ids 0 (raw) to 10 (drfor).
  static constexpr std::size_t scheme_ids = 11;
  /// CPU reference: the payload bytes each scheme would take for `source` (host memory),
  /// indexed by codec id (raw 0, for 1, dfor 2, rfor 3, pfor 8, pdfor 9, drfor 10); UINT64_MAX
  /// where a scheme cannot hold it and at the ids of other codecs. For tests and benchmarks that
  /// compare schemes; encoding picks the smallest.
  static std::array<std::uint64_t, scheme_ids> scheme_payload_bytes(const encode_source& source);

 protected:
  bool sums_payloads() const noexcept override { return true; }
  bool validates_headers() const noexcept override { return true; }
  std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const override;
  void encode_payloads_async(const device_encode_batch& batch,
                             const encode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  void encode_payload_host(const encode_source& source, std::byte* frame,
                           std::uint64_t capacity) const override;

  std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const override;
  void decode_payloads_async(const device_decode_batch& batch,
                             const decode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads,
                             cudaStream_t stream) const override;
  frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                   const decode_target& target) const override;

 private:
  std::optional<kernels::bitpack::decode_config> fixed_decode_;
  bitpack_schemes schemes_ = bitpack_schemes::classic;
};

}  // namespace zs::codecs
