// The descriptors of a batch of frames, as the codecs' host code and their GPU kernels both see
// them: what each frame encodes from (encode_source) or decodes into (decode_target), and the
// batch once its descriptor arrays are in device memory. Kernels include this header, not
// zs/codec.hpp: they know frames and descriptors, never the codec classes that launch them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zs/frame.hpp"
#include "zs/hd.hpp"
#include "zs/types.hpp"

namespace zs {

/// One partition of one column to encode. Pointers are in the memory of the side that runs.
struct encode_source {
  value_type type = value_type::int32;
  std::uint64_t count = 0;
  /// Fixed width: the first value. Strings: the column's character buffer (offsets index it).
  const void* values = nullptr;
  /// Strings only: count + 1 offsets into `values`; the slice's characters are
  /// values[offsets[0] .. offsets[count]).
  const std::int64_t* offsets = nullptr;
  /// Strings only: offsets[count] - offsets[0]. The caller supplies it because reading it from
  /// device memory would cost a synchronisation per partition.
  std::uint64_t chars_bytes = 0;
  /// Codecs with column parameters (codec::params_bytes above 0): the block that
  /// codec::prepare wrote for this frame's column, params_bytes(type) bytes in the memory of
  /// the side that runs. The encoder copies it into the frame (docs/FORMAT.md, "Column
  /// parameters") and encodes with it. nullptr for other codecs.
  const std::byte* params = nullptr;
  /// Set by the codec's base class for its kernels (callers leave it 0): params_bytes(type).
  std::uint64_t params_bytes = 0;
  /// Fixed width, optional: which rows hold a value. Row i is null where bit null_mask_bit + i
  /// of this Arrow validity bitmap (bit b: bit b % 8 of byte b / 8) is 0; nullptr: no row is.
  /// A null row's value is unspecified, so a codec may code whatever costs it least there and
  /// decode that: alp codes null rows as fill cells (docs/FORMAT.md, "Null rows"). Codecs that
  /// do not use it code the rows' values as they are. The mask does not travel in the frame.
  const std::uint8_t* null_mask = nullptr;
  std::uint64_t null_mask_bit = 0;

  /// Uncompressed bytes of the slice: count x width, or the character bytes of strings.
  ZS_HD std::uint64_t raw_bytes() const noexcept {
    return type == value_type::string ? chars_bytes : count * value_width(type);
  }
  /// Whether row i holds a value (null_mask above).
  ZS_HD bool holds_value(std::uint64_t i) const noexcept {
    if (null_mask == nullptr) return true;
    std::uint64_t const bit = null_mask_bit + i;
    return ((null_mask[bit / 8] >> (bit % 8)) & 1U) != 0;
  }
};

/// Where one decoded frame goes.
struct decode_target {
  value_type type = value_type::int32;
  std::uint64_t count = 0;  // the frame must hold exactly this many values
  /// Fixed width: room for `count` values. Strings: the destination character buffer.
  void* values = nullptr;
  /// Strings only: room for count + 1 offsets. The decoder writes chars_begin + the offset of
  /// each string inside the frame, so frames decoded one after another into the same column
  /// yield one column with absolute offsets.
  std::int64_t* offsets = nullptr;
  std::uint64_t chars_begin = 0;  // strings only: where this frame's characters go in `values`
  std::uint64_t chars_bytes = 0;  // strings only: the character bytes the frame must hold
  /// Set by the codec's base class for its kernels (callers leave it 0): the column parameter
  /// bytes the codec's frames of this type carry.
  std::uint64_t params_bytes = 0;

  ZS_HD std::uint64_t raw_bytes() const noexcept {
    return type == value_type::string ? chars_bytes : count * value_width(type);
  }
};

/// A batch as payload kernels see it: the descriptor arrays copied to device memory.
struct device_encode_batch {
  const encode_source* sources;
  std::byte* frames;
  const std::uint64_t* frame_offsets;  // num_frames + 1 entries
  std::size_t num_frames;
  /// Per frame, zeroed: where a codec that sums_payloads() adds its checksum terms.
  std::uint64_t* sums;
};
struct device_decode_batch {
  const std::byte* frames;
  const std::uint64_t* frame_offsets;  // num_frames + 1 entries
  const decode_target* targets;
  frame_status* status;
  std::size_t num_frames;
  /// Per frame, zeroed: where a codec that sums_payloads() adds its checksum terms.
  std::uint64_t* sums;
};

}  // namespace zs
