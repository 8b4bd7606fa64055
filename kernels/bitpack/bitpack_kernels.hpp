// Batched GPU kernels of the bitpack codec (lib/src/codecs/bitpack_codec.hpp). A fixed number
// of launches per batch whatever its size: frames of 32-bit and of 64-bit values get one
// launch each per pass (narrow values, coded as their 32-bit widening, run with the 32-bit
// ones). warp_programs.hpp says what each warp does.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "zs/batch.hpp"
#include "zs/launch.hpp"

namespace zs::bitpack {
struct frame_layout;
namespace gpu {
struct scheme_words;
struct block_words;
}
}  // namespace zs::bitpack

namespace zs::kernels::bitpack {

/// Launch shape of the decoder: the paper's D (blocks of 128 values in the tile one warp loads
/// into shared memory and decodes) and the threads per thread block. Parameters of the launch,
/// not of the format. The tuning table (kernel "bitpack_decode") holds D as
/// launch_params::items.
struct decode_config {
  /// 4, 8 or 16: tiles of 1, 2 or 4 segments of 512 values.
  unsigned blocks_per_tile = 4;
  /// 64, 128 or 256.
  unsigned threads = 128;
};

/// Throws zs::error (invalid_argument) for a configuration the kernels are not built for.
void check_config(const decode_config& config);

/// The decoder's shape from its launch params, and a launch with a fixed shape.
inline decode_config config_of(const launch_params& params) { return {params.items, params.threads}; }
launch_choice fixed_decode_choice(const decode_config& config, std::optional<value_type> type,
                                  std::uint64_t batch_bytes);

/// Segments of 512 values in one decode tile.
inline std::uint32_t tile_segments(const decode_config& config) { return config.blocks_per_tile / 4; }

/// Device memory an encode needs, laid out by the caller (lib/src/codecs/bitpack_codec_gpu.cpp).
struct encode_plan {
  device_encode_batch batch;        // batch.sums: per frame, zeroed
  const std::uint64_t* chunks32;           // num_frames + 1: segments of the 32-bit frames (others have none)
  const std::uint64_t* chunks64;           // num_frames + 1: segments of the 64-bit frames
  std::uint64_t segments32;
  std::uint64_t segments64;
  const std::uint64_t* seg_first;          // per frame: its first segment, 32-bit frames' first
  const std::uint64_t* sample_first32;     // num_frames + 1: per frame, its first sample (sample_count per 32-bit frame)
  const std::uint64_t* sample_first64;     // num_frames + 1: the same for the 64-bit frames
  std::uint64_t samples32;                 // the sample pass's segments of the 32-bit frames
  std::uint64_t samples64;
  zs::bitpack::gpu::block_words* within;   // segments32 + segments64
  // Pass 1's scan blocks (one per warp with work, at most one per segment):
  zs::bitpack::gpu::scheme_words* block_sums;  // segments32 + segments64
  zs::bitpack::gpu::scheme_words* offsets; // segments32 + segments64 + 1; the first zeroed by the caller
  zs::bitpack::gpu::scheme_words* samples; // num_frames, zeroed by the caller
  std::uint64_t* slot_at;                  // segments32 + segments64
  std::uint64_t* layouts;                  // segments32 + segments64
  std::uint8_t* choice;                    // num_frames
  std::uint32_t* encode_again;             // one word, zeroed by the caller
  std::uint32_t* slots32;                  // segments32 x slot_words(32)
  std::uint32_t* slots64;                  // segments64 x slot_words(64)
  void* scan_temp;
  std::size_t scan_temp_bytes;
  launch_choice analyze32, analyze64;  // kernel "bitpack_analyze", per width class
  launch_choice pack32, pack64;        // kernel "bitpack_pack"
  /// Whether some frame is of a narrow type (int8, int16, uint8, uint16): the 32-bit class then
  /// runs the passes that also load narrow values, and the narrow frames left raw are written
  /// by a pass of their own.
  bool narrow_frames = false;
  /// The schemes frames choose from: for, dfor and rfor, and where set pfor, pdfor and drfor,
  /// whose sizes go in four arrays of their own, sized as within .. samples above.
  bool extended_schemes = false;
  zs::bitpack::gpu::block_words* within_ext = nullptr;
  zs::bitpack::gpu::scheme_words* block_sums_ext = nullptr;
  zs::bitpack::gpu::scheme_words* offsets_ext = nullptr;
  zs::bitpack::gpu::scheme_words* samples_ext = nullptr;  // zeroed by the caller
};

/// Words of one segment's share of pass 1's slot pool for values of `width_bits` bits.
std::uint32_t slot_words(std::uint32_t width_bits);
/// Bytes of one scheme_words entry (per frame, per scan block).
std::size_t scheme_words_bytes();
/// Bytes of one per-segment block_words entry.
std::size_t block_words_bytes();
/// CUB scratch for scanning up to `blocks` scheme_words entries.
std::size_t scan_temp_bytes(std::uint64_t blocks);

/// Encodes every payload of the batch, fills the header fields a payload encoder owns, and
/// adds every payload's checksum terms into batch.sums.
void encode(const encode_plan& plan, cudaStream_t stream);

/// Device memory a decode needs.
struct decode_plan {
  device_decode_batch batch;    // batch.sums: per frame, zeroed
  zs::bitpack::frame_layout* layouts;  // num_frames
  const std::uint64_t* tiles32;        // num_frames + 1: decode tiles (of decode32's D) per frame
  const std::uint64_t* tiles64;
  std::uint64_t num_tiles32;
  std::uint64_t num_tiles64;
  launch_choice decode32, decode64;    // kernel "bitpack_decode": tiles32/64 have tiles of their D
  std::uint32_t accepted_codecs;       // codec_bit of each codec id the frames may carry
  /// Whether some target is of a narrow type (int8, int16, uint8, uint16): the 32-bit class
  /// then runs the decoder that also writes narrow values.
  bool narrow_frames = false;
  /// Whether the frames may take pfor, pdfor and drfor (accepted_codecs has them): the decoder
  /// compiled with those schemes runs, else the one of for, dfor and rfor only.
  bool extended_schemes = false;
};

/// Bytes of one frame_layout entry.
std::size_t frame_layout_bytes();

/// Checks every frame's header against its target (batch.status: what zs::validate_header
/// says), then decodes every frame whose status is ok and adds its checksum terms into
/// batch.sums; sets unsupported_type or corrupt_payload on frames the format rules refuse. A
/// tile is checked before anything is read through it; what a refused frame's target holds
/// afterwards is unspecified, and nothing outside it is written.
void decode(const decode_plan& plan, cudaStream_t stream);

}  // namespace zs::kernels::bitpack
