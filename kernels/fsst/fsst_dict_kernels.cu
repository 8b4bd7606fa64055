#include <cub/device/device_memcpy.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>

#include <algorithm>

#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "fsst/fsst_dict_format.hpp"
#include "fsst/fsst_dict_kernels.hpp"
#include "fsst/fsst_format.hpp"
#include "zs/error.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"

namespace zs::kernels::fsst_dict {
namespace {

// The fsst_dict body's format (fsst_dict_format.hpp); this namespace's own name is the kernels'.
namespace format = ::zs::fsst_dict;
using format::dict_header_bytes;

using hash::mix64;

struct row_ref {
  const std::uint8_t* chars;
  std::uint64_t length;
};

__device__ inline row_ref row_of(const device_encode_batch& batch, const distinct_scratch& s, std::uint64_t row,
                                 std::uint32_t frame) {
  encode_source const& source = batch.sources[frame];
  std::uint64_t const i = row - s.string_begin[frame];
  std::int64_t const begin = source.offsets[i];
  return {static_cast<const std::uint8_t*>(source.values) + begin,
          static_cast<std::uint64_t>(source.offsets[i + 1] - begin)};
}

// Each row's frame and hash; the row numbers the sort carries along.
__global__ void hash_rows_kernel(device_encode_batch batch, distinct_scratch s) {
  for (std::uint64_t r = first_item(); r < s.num_rows; r += item_stride()) {
    auto const f = static_cast<std::uint32_t>(frame_of_chunk(s.string_begin, batch.num_frames, r));
    row_ref const v = row_of(batch, s, r, f);
    std::uint64_t h = mix64(f + 0x9e3779b97f4a7c15ULL);
    std::uint64_t word = 0;
    for (std::uint64_t k = 0; k < v.length; ++k) {
      word |= std::uint64_t{v.chars[k]} << (8 * (k % 8));
      if (k % 8 == 7) {
        h = mix64(h ^ word) + 0x9e3779b97f4a7c15ULL;
        word = 0;
      }
    }
    s.hash[r] = mix64(h ^ word ^ (v.length * 0xd6e8feb86659fd93ULL));
    s.row_frame[r] = f;
    s.rows[r] = r;
  }
}

// Position i where a run of equal hashes starts holds i, the others 0: a running maximum then
// gives every position its run's start.
__global__ void run_heads_kernel(distinct_scratch s, std::uint64_t* heads) {
  for (std::uint64_t i = first_item(); i < s.num_rows; i += item_stride()) {
    heads[i] = i == 0 || s.sorted_hash[i] != s.sorted_hash[i - 1] ? i : 0;
  }
}

__device__ inline bool same_value(const row_ref& a, const row_ref& b) {
  if (a.length != b.length) return false;
  for (std::uint64_t k = 0; k < a.length; ++k) {
    if (a.chars[k] != b.chars[k]) return false;
  }
  return true;
}

// Each row's first occurrence: the first row of its run (row order within a run) of the same
// frame and bytes. Without collisions that is the run's first row, one comparison.
__global__ void first_rows_kernel(device_encode_batch batch, distinct_scratch s) {
  for (std::uint64_t i = first_item(); i <= s.num_rows; i += item_stride()) {
    if (i == s.num_rows) {
      s.is_first[i] = 0;
      s.first_chars[i] = 0;
      continue;
    }
    std::uint64_t const r = s.sorted_rows[i];
    std::uint32_t const f = s.row_frame[r];
    row_ref const v = row_of(batch, s, r, f);
    std::uint64_t j = s.run_start[i];
    for (; j < i; ++j) {
      std::uint64_t const q = s.sorted_rows[j];
      if (s.row_frame[q] == f && same_value(row_of(batch, s, q, f), v)) break;
    }
    s.first_row[r] = s.sorted_rows[j];
    s.is_first[r] = j == i ? 1 : 0;
    s.first_chars[r] = j == i ? v.length : 0;
  }
}

// Codes, dictionary offsets and the copies of the dictionaries' characters.
__global__ void codes_kernel(device_encode_batch batch, distinct_scratch s) {
  for (std::uint64_t r = first_item(); r < s.num_rows; r += item_stride()) {
    std::uint32_t const f = s.row_frame[r];
    std::uint64_t const frame_rank = s.rank[s.string_begin[f]];
    s.codes[r] = s.rank[s.first_row[r]] - frame_rank;
    bool const first = s.is_first[r] != 0;
    row_ref const v = row_of(batch, s, r, f);
    if (first) s.dict_offsets[s.rank[r] + f] = static_cast<std::int64_t>(s.dict_at[r]);
    s.copy_src[r] = v.chars;
    s.copy_dst[r] = s.dict_chars + s.dict_at[r];
    s.copy_size[r] = first ? v.length : 0;
  }
}

// Per frame: its entries and characters, and its dictionary's closing offset.
__global__ void frame_sizes_kernel(device_encode_batch batch, distinct_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    std::uint64_t const begin = s.string_begin[f], end = s.string_begin[f + 1];
    s.frame_sizes[2 * f] = s.rank[end] - s.rank[begin];
    s.frame_sizes[2 * f + 1] = s.dict_at[end] - s.dict_at[begin];
    s.dict_offsets[s.rank[end] + f] = static_cast<std::int64_t>(s.dict_at[end]);
  }
}

__global__ void assemble_kernel(device_encode_batch batch, std::uint64_t body_offset, assemble_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* body = frame + frame_header_bytes + body_offset;
    const std::byte* dict_frame = s.dict_frames + s.dict_frame_at[f];
    std::uint64_t const codes_bytes = s.codes_frame_bytes[f];
    std::uint64_t const section_at = (dict_header_bytes + codes_bytes + frame_alignment - 1) / frame_alignment * frame_alignment;
    std::uint64_t const section_bytes = load_header(dict_frame).payload_bytes - body_offset;
    std::uint64_t const dict_lengths_bytes = detail::load_le(dict_frame + 48, 8);  // the fsst frame's L
    for (std::uint64_t k = dict_header_bytes + codes_bytes; k < section_at; ++k) body[k] = std::byte{0};
    detail::store_le(body, codes_bytes, 8);
    detail::store_le(body + 8, s.frame_sizes[2 * f + 1], 8);
    detail::store_le(body + 16, dict_lengths_bytes, 8);
    detail::store_le(body + 24, 0, 8);
    store_encoder_fields(frame, codec_id::fsst_dict, section_at + section_bytes);
    fsst::store_codec_params(frame, fsst::default_split_bytes, s.frame_sizes[2 * f]);
    s.copy_src[f] = dict_frame + frame_header_bytes + body_offset;
    s.copy_dst[f] = body + section_at;
    s.copy_size[f] = section_bytes;
  }
}

// ---- decoding ----

using format::dictionary_section;

__global__ void check_frames_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    dictionary_section section{};
    if (batch.status[f] == frame_status::ok && !format::read_body(batch.frames + batch.frame_offsets[f], section)) {
      batch.status[f] = frame_status::corrupt_payload;
    }
    s.sections[f] = section;
  }
}

// Per frame: the header of its dictionary's fsst frame, and the copies of its table and section
// (none for a frame not decoded, which has no dictionary frame).
__global__ void dictionary_frames_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    dictionary_section const section = s.sections[f];
    std::byte* dict_frame = s.dict_frames + s.dict_frame_at[f];
    const std::byte* frame = batch.frames + batch.frame_offsets[f];
    if (section.ok != 0) format::store_dictionary_frame_header(dict_frame, section);
    std::uint64_t const table_at = frame_header_bytes + params_prefix_bytes;
    s.copy_src[2 * f] = frame + table_at;
    s.copy_dst[2 * f] = dict_frame + table_at;
    s.copy_size[2 * f] = section.ok != 0 ? fsst::table_bytes : 0;
    s.copy_src[2 * f + 1] = frame + section.section_at;
    s.copy_dst[2 * f + 1] = dict_frame + frame_header_bytes + format::body_at;
    s.copy_size[2 * f + 1] = section.ok != 0 ? section.section_bytes : 0;
  }
}

// Per frame: the embedded decoders' verdicts, and a frame without rows must have no characters
// (its rows' lengths add up to 0).
__global__ void decoded_parts_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    if (s.sections[f].ok == 0 || s.dict_status[f] != frame_status::ok || s.codes_status[f] != frame_status::ok ||
        (t.count == 0 && t.chars_bytes != 0)) {
      batch.status[f] = frame_status::corrupt_payload;
    }
  }
}

// Per row: its code checked against its frame's dictionary, and its length (its entry's); the
// last slot 0, for the scan.
__global__ void row_lengths_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t j = first_item(); j <= s.num_rows; j += item_stride()) {
    if (j == s.num_rows) {
      s.lengths[j] = 0;
      continue;
    }
    std::size_t const f = frame_of_chunk(s.string_begin, batch.num_frames, j);
    std::uint64_t length = 0;
    if (batch.status[f] == frame_status::ok) {
      std::uint64_t const code = s.codes[j];
      if (code < s.sections[f].entries) {
        const std::int64_t* entries = s.entry_offsets + s.entry_offsets_at[f];
        length = static_cast<std::uint64_t>(entries[code + 1] - entries[code]);
      } else {
        batch.status[f] = frame_status::corrupt_payload;
      }
    }
    s.lengths[j] = length;
  }
}

// Per row: its offset, with the check that the running sum of its frame's lengths never wraps
// and ends at the frame's characters; then, one thread per frame, the closing offset. Only
// differences of the scan count, so earlier frames' lengths (wrapped or not) change nothing.
__global__ void row_offsets_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t j = first_item(); j < s.num_rows + batch.num_frames; j += item_stride()) {
    if (j >= s.num_rows) {
      std::size_t const f = j - s.num_rows;
      if (batch.status[f] != frame_status::ok) continue;
      decode_target const& t = batch.targets[f];
      t.offsets[t.count] = static_cast<std::int64_t>(t.chars_begin + t.chars_bytes);
      continue;
    }
    std::size_t const f = frame_of_chunk(s.string_begin, batch.num_frames, j);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::uint64_t const first = s.string_begin[f];
    std::uint64_t const base = s.prefix[first];
    std::uint64_t const before = s.prefix[j] - base, after = s.prefix[j + 1] - base;
    bool const last = j + 1 == s.string_begin[f + 1];
    if (after < before || (last && after != t.chars_bytes)) {
      batch.status[f] = frame_status::corrupt_payload;
      continue;
    }
    t.offsets[j - first] = static_cast<std::int64_t>(t.chars_begin + before);
  }
}

// Per unit (an aligned window of a target, fsst_dict_format.hpp): its characters, for frames
// still ok after every check.
__global__ void gather_kernel(device_decode_batch batch, decode_scratch s) {
  for (std::uint64_t u = first_item(); u < s.num_units; u += item_stride()) {
    std::size_t const f = frame_of_chunk(s.unit_begin, batch.num_frames, u);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::uint64_t const first = s.string_begin[f];
    format::gather_rows const rows{s.prefix + first,
                                      s.codes + first,
                                      s.entry_offsets + s.entry_offsets_at[f],
                                      s.entry_chars + s.entry_chars_at[f],
                                      t.count,
                                      t.chars_bytes};
    format::gather_unit(static_cast<std::uint8_t*>(t.values) + t.chars_begin, rows, u - s.unit_begin[f]);
  }
}

template <class Kernel, class... Args>
void launch_items(Kernel kernel, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

}  // namespace

std::size_t cub_temp_bytes(std::uint64_t num_rows, std::size_t num_frames) {
  auto const n = static_cast<std::int64_t>(num_rows);
  std::size_t sort = 0, scan = 0, max_scan = 0, copies = 0;
  ZS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<const std::uint64_t*>(nullptr),
                                              static_cast<std::uint64_t*>(nullptr),
                                              static_cast<const std::uint64_t*>(nullptr),
                                              static_cast<std::uint64_t*>(nullptr), n));
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr), n + 1));
  ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, max_scan, static_cast<const std::uint64_t*>(nullptr),
                                             static_cast<std::uint64_t*>(nullptr), cuda::maximum<std::uint64_t>{}, n));
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, copies, static_cast<const void**>(nullptr),
                                         static_cast<void**>(nullptr), static_cast<std::uint64_t*>(nullptr),
                                         std::max({n, static_cast<std::int64_t>(num_frames), std::int64_t{1}})));
  return std::max({sort, scan, max_scan, copies, std::size_t{1}});
}

void find_distinct(const device_encode_batch& batch, const distinct_scratch& s, void* cub_temp, std::size_t cub_bytes,
                   cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  auto const n = static_cast<std::int64_t>(s.num_rows);
  if (s.num_rows > 0) {
    launch_items(hash_rows_kernel, s.num_rows, stream, batch, s);
    std::size_t bytes = cub_bytes;
    ZS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(cub_temp, bytes, s.hash, s.sorted_hash, s.rows, s.sorted_rows, n, 0,
                                                64, stream));
    // rank serves as the run heads' scratch until the scan of first occurrences fills it.
    launch_items(run_heads_kernel, s.num_rows, stream, s, s.rank);
    bytes = cub_bytes;
    ZS_CUDA_TRY(cub::DeviceScan::InclusiveScan(cub_temp, bytes, s.rank, s.run_start, cuda::maximum<std::uint64_t>{}, n,
                                               stream));
  }
  launch_items(first_rows_kernel, s.num_rows + 1, stream, batch, s);
  std::size_t bytes = cub_bytes;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(cub_temp, bytes, s.is_first, s.rank, n + 1, stream));
  bytes = cub_bytes;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(cub_temp, bytes, s.first_chars, s.dict_at, n + 1, stream));
  launch_items(codes_kernel, s.num_rows, stream, batch, s);
  launch_items(frame_sizes_kernel, batch.num_frames, stream, batch, s);
  if (s.num_rows > 0) {
    bytes = cub_bytes;
    ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(cub_temp, bytes, s.copy_src, s.copy_dst, s.copy_size, n, stream));
  }
}

void assemble_frames(const device_encode_batch& batch, std::uint64_t body_offset, const assemble_scratch& s,
                     void* cub_temp, std::size_t cub_bytes, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(assemble_kernel, batch.num_frames, stream, batch, body_offset, s);
  std::size_t bytes = cub_bytes;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(cub_temp, bytes, s.copy_src, s.copy_dst, s.copy_size,
                                         static_cast<std::int64_t>(batch.num_frames), stream));
}

std::size_t decode_cub_temp_bytes(std::uint64_t num_rows, std::size_t num_frames) {
  std::size_t scan = 0, copies = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr),
                                            static_cast<std::int64_t>(num_rows + 1)));
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, copies, static_cast<const void**>(nullptr),
                                         static_cast<void**>(nullptr), static_cast<std::uint64_t*>(nullptr),
                                         std::max<std::int64_t>(2 * static_cast<std::int64_t>(num_frames), 1)));
  return std::max({scan, copies, std::size_t{1}});
}

void check_frames(const device_decode_batch& batch, const decode_scratch& s, cudaStream_t stream) {
  launch_items(check_frames_kernel, batch.num_frames, stream, batch, s);
}

void build_dictionary_frames(const device_decode_batch& batch, const decode_scratch& s, void* cub_temp,
                             std::size_t cub_bytes, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(dictionary_frames_kernel, batch.num_frames, stream, batch, s);
  std::size_t bytes = cub_bytes;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(cub_temp, bytes, s.copy_src, s.copy_dst, s.copy_size,
                                         static_cast<std::int64_t>(2 * batch.num_frames), stream));
}

void decode_rows(const device_decode_batch& batch, const decode_scratch& s, void* cub_temp, std::size_t cub_bytes,
                 cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(decoded_parts_kernel, batch.num_frames, stream, batch, s);
  launch_items(row_lengths_kernel, s.num_rows + 1, stream, batch, s);
  std::size_t bytes = cub_bytes;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(cub_temp, bytes, s.lengths, s.prefix,
                                            static_cast<std::int64_t>(s.num_rows + 1), stream));
  launch_items(row_offsets_kernel, s.num_rows + batch.num_frames, stream, batch, s);
  launch_items(gather_kernel, s.num_units, stream, batch, s);
}

}  // namespace zs::kernels::fsst_dict
