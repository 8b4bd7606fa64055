// Batched GPU kernels of the bitpack codec (lib/src/codecs/bitpack_codec.hpp). A fixed number
// of launches per batch whatever its size: frames of 32-bit and of 64-bit values get one
// launch each per pass. bitpack_programs.hpp says what each thread block does.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/codec.hpp"
#include "zs/tuning.hpp"

namespace zs::bitpack {
struct frame_layout;
namespace gpu {
struct scheme_words;
struct chunk_plan;
}
}  // namespace zs::bitpack

namespace zs::kernels::bitpack {

/// Launch shape of the decoder: the paper's D (blocks of 128 values per thread block) and the
/// threads per thread block. Parameters of the launch, not of the format. The tuning table
/// (kernel_id::bitpack_decode) holds D as launch_params::items.
struct decode_config {
  /// A multiple of 4 (one 512-value segment) from 4 to 32. For 64-bit values a thread block
  /// takes half as many blocks (at least one segment): the same bytes, and shared memory that
  /// leaves room for several thread blocks per multiprocessor.
  unsigned blocks_per_cta = 32;
  /// 128 or 256.
  unsigned threads = 128;
};

/// Throws zs::error (invalid_argument) for a configuration the kernels are not built for.
void check_config(const decode_config& config);

/// The decoder's shape from its launch params, and a launch with a fixed shape.
inline decode_config config_of(const launch_params& params) { return {params.items, params.threads}; }
launch_choice fixed_decode_choice(const decode_config& config, std::optional<value_type> type,
                                  std::uint64_t batch_bytes);

/// Segments of 512 values per decode thread block for values of `width_bits` bits.
inline std::uint32_t segments_per_cta(const decode_config& config, std::uint32_t width_bits) {
  std::uint32_t const segments = config.blocks_per_cta / 4;
  return width_bits == 64 && segments > 1 ? segments / 2 : segments;
}

/// Segments of 512 values one validation chunk holds: one per thread of its block
/// (kernel_id::bitpack_validate's threads).
inline std::uint32_t validate_segments_per_chunk(const launch_choice& validate) { return validate.params.threads; }

/// Device memory an encode needs, laid out by the caller (lib/src/codecs/bitpack_codec_gpu.cpp).
struct encode_plan {
  codec::device_encode_batch batch;
  const std::uint64_t* chunks32;  // num_frames + 1: segments of the 32-bit frames (others have none)
  const std::uint64_t* chunks64;  // num_frames + 1: segments of the 64-bit frames
  std::uint64_t segments32;
  std::uint64_t segments64;
  std::uint32_t* chunk_frame32;            // segments32: each one's frame
  std::uint32_t* chunk_frame64;            // segments64
  const std::uint64_t* seg_first;          // per frame: its first segment, 32-bit frames' first
  zs::bitpack::gpu::scheme_words* sizes;   // segments32 + segments64
  zs::bitpack::gpu::scheme_words* offsets; // segments32 + segments64 + 1
  std::uint8_t* segment_scheme;            // segments32 + segments64
  std::uint8_t* choice;                    // num_frames
  std::uint32_t* slots32;                  // segments32 x slot_words(32)
  std::uint32_t* slots64;                  // segments64 x slot_words(64)
  void* scan_temp;
  std::size_t scan_temp_bytes;
  launch_choice analyze32, analyze64;  // kernel_id::bitpack_analyze, per width class
  launch_choice pack32, pack64;        // kernel_id::bitpack_pack
};

/// Words of one segment's temp slot for values of `width_bits` bits.
std::uint32_t slot_words(std::uint32_t width_bits);
/// Bytes of one per-segment scheme_words entry.
std::size_t scheme_words_bytes();
/// CUB scratch for scanning `segments` scheme_words entries.
std::size_t scan_temp_bytes(std::uint64_t segments);

/// Encodes every payload of the batch and fills the header fields a payload encoder owns.
void encode(const encode_plan& plan, cudaStream_t stream);

/// Device memory a decode needs.
struct decode_plan {
  codec::device_decode_batch batch;
  zs::bitpack::frame_layout* layouts;  // num_frames
  const std::uint64_t* chunks32;       // num_frames + 1: decode chunks (segments_per_cta of decode32)
  const std::uint64_t* chunks64;
  std::uint64_t num_chunks32;
  std::uint64_t num_chunks64;
  const std::uint64_t* checks;         // num_frames + 1: validation chunks of every integer frame
  std::uint64_t num_checks;
  zs::bitpack::gpu::chunk_plan* plans32;  // num_chunks32
  zs::bitpack::gpu::chunk_plan* plans64;  // num_chunks64
  launch_choice validate;              // kernel_id::bitpack_validate: checks has chunks of its threads
  launch_choice decode32, decode64;    // kernel_id::bitpack_decode: chunks32/64 have chunks of their D
};

/// Bytes of one frame_layout entry, and of one chunk_plan entry.
std::size_t frame_layout_bytes();
std::size_t chunk_plan_bytes();

/// Checks and decodes every frame whose status is ok; sets unsupported_type or corrupt_payload
/// on frames the format rules refuse, before anything of theirs is written.
void decode(const decode_plan& plan, cudaStream_t stream);

}  // namespace zs::kernels::bitpack
