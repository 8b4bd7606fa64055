#include <cub/device/device_memcpy.cuh>
#include <cub/device/device_scan.cuh>

#include "common/launch.hpp"
#include "common/work_map.hpp"
#include "common/cuda_warp.cuh"
#include "fsst/fsst_format.hpp"
#include "fsst/fsst_warp.hpp"
#include "fsst/fsst_kernels.hpp"
#include "zs/error.hpp"

namespace zs::kernels::fsst {
namespace {

using namespace ::zs::fsst;

constexpr std::uint64_t body_at = params_section_bytes(table_bytes);

__device__ inline std::byte* body_of(const device_encode_batch& b, std::size_t f) {
  return b.frames + b.frame_offsets[f] + frame_header_bytes + body_at;
}
__device__ inline const std::byte* body_of(const device_decode_batch& b, std::size_t f) {
  return b.frames + b.frame_offsets[f] + frame_header_bytes + body_at;
}
__device__ inline const std::byte* table_of(const device_decode_batch& b, std::size_t f) {
  return b.frames + b.frame_offsets[f] + frame_header_bytes + params_prefix_bytes;
}

__global__ void gather_sample_kernel(const sample_copy* copies, std::size_t n, std::uint8_t* out) {
  for (std::size_t c = blockIdx.x; c < n; c += gridDim.x) {
    sample_copy const k = copies[c];
    const std::uint8_t* in = k.chars + k.offsets[0] + k.offset;
    for (std::uint64_t i = threadIdx.x; i < k.length; i += blockDim.x) out[k.dest + i] = in[i];
  }
}

__global__ void encode_lengths_kernel(device_encode_batch batch, batch_plan plan) {
  for (std::uint64_t j = first_item(); j <= plan.num_strings; j += item_stride()) {
    if (j == plan.num_strings) {
      plan.lengths[j] = 0;
      continue;
    }
    std::size_t const f = frame_of_chunk(plan.string_begin, batch.num_frames, j);
    const std::int64_t* offsets = batch.sources[f].offsets;
    std::uint64_t const i = j - plan.string_begin[f];
    plan.lengths[j] = static_cast<std::uint64_t>(offsets[i + 1] - offsets[i]);
  }
}

// Builds the block's encoder tables for the serialized table `block`: the block checks the
// table (a byte of the padding a thread) and reads its entries (a code a thread) in parallel,
// then thread 0 inserts the symbols in code order, as build_encode_table does on the CPU. A
// table that does not parse (prepare wrote it, so never) leaves every byte escaped. Every thread
// of the block calls it.
__device__ void fill_encode_table(const std::byte* block, encode_table& lookup, decode_table& parsed) {
  auto const* b = reinterpret_cast<const std::uint8_t*>(block);
  std::uint32_t symbol_bytes = 0;
  bool bad = !check_table_header(b, symbol_bytes);
  for (unsigned k = threadIdx.x; k < long_slots; k += blockDim.x) {
    lookup.long_bytes[k] = 0;
    lookup.long_info[k] = 0;
    if (k < pair_slots) lookup.pair[k] = 0;
    if (k < 256) {
      lookup.single[k] = no_code;
      std::uint64_t symbol = 0;
      std::uint8_t length = 0;
      if (!bad) load_decode_entry(block, k, symbol, length);
      parsed.symbol[k] = symbol;
      parsed.length[k] = length;
    }
  }
  if (!bad) {
    for (std::uint64_t k = table_header_bytes + symbol_bytes + threadIdx.x; k < table_bytes; k += blockDim.x) {
      bad |= b[k] != 0;
    }
  }
  bad = __syncthreads_or(bad) != 0;
  if (threadIdx.x == 0 && !bad) {
    std::uint32_t const count = table_symbol_count(block);
    for (std::uint32_t c = 0; c < count; ++c) insert(lookup, parsed.symbol[c], parsed.length[c], c);
  }
  __syncthreads();
}

// A block per group of splits of one frame, a warp per split (encode_split_warp); the frame's
// encoder tables in shared memory, built again only when the block moves to another frame's
// group. Each block takes a contiguous range of groups, so that it meets each frame once (the
// table build is serial, and the block's warps wait for it) rather than at every group.
__global__ void encode_splits_kernel(device_encode_batch batch, batch_plan plan, encode_scratch s) {
  __shared__ encode_table lookup;
  __shared__ decode_table parsed;
  extern __shared__ ::zs::kernels::warp::word4 warp_space[];
  ::zs::kernels::warp::cuda_warp w;
  unsigned const warp_in_block = threadIdx.x / 32;
  auto* space = reinterpret_cast<std::uint8_t*>(warp_space) + std::size_t{warp_in_block} * encode_warp_shared_bytes;
  std::uint64_t const first = plan.num_groups * blockIdx.x / gridDim.x;
  std::uint64_t const last = plan.num_groups * (blockIdx.x + 1) / gridDim.x;
  std::size_t loaded = SIZE_MAX;
  for (std::uint64_t g = first; g < last; ++g) {
    std::size_t const f = frame_of_chunk(plan.group_begin, batch.num_frames, g);
    if (f != loaded) {
      __syncthreads();  // every warp is done with the previous frame's tables
      fill_encode_table(batch.sources[f].params, lookup, parsed);
      loaded = f;
    }
    encode_source const& src = batch.sources[f];
    std::uint64_t const splits = plan.split_begin[f + 1] - plan.split_begin[f];
    std::uint64_t const i = (g - plan.group_begin[f]) * plan.group_splits + warp_in_block;
    if (i >= splits) continue;  // the whole warp
    std::uint64_t const n = split_chars(src.chars_bytes, default_split_bytes, i);
    auto const* in = static_cast<const std::uint8_t*>(src.values) + src.offsets[0] + i * default_split_bytes;
    std::uint8_t* out = s.split_data + (plan.split_begin[f] + i) * default_split_bytes;
    std::uint64_t const stored = encode_split_warp(w, lookup, in, n, out, n - 1, space);
    if (w.lane == 0) s.split_sizes[plan.split_begin[f] + i] = stored == no_fit ? n : stored;
  }
}

// Per frame: the header's fields, the padding after the lengths frame, the first split offset,
// and the copy of the lengths frame.
__global__ void encode_frames_kernel(device_encode_batch batch, batch_plan plan, encode_scratch s) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    std::byte* frame = batch.frames + batch.frame_offsets[f];
    std::byte* body = body_of(batch, f);
    std::uint64_t const lengths = s.lengths_frame_bytes[f];
    std::uint64_t const offsets_at = align_frame(lengths);
    std::uint64_t const first = plan.split_begin[f], end = plan.split_begin[f + 1];
    std::uint64_t const data_at = offsets_at + 8 * (end - first + 1);
    std::uint64_t const data = s.split_prefix[end] - s.split_prefix[first];
    for (std::uint64_t k = lengths; k < offsets_at; ++k) body[k] = std::byte{0};
    ::zs::detail::store_le(body + offsets_at, 0, 8);
    store_encoder_fields(frame, codec_id::fsst, data_at + data);
    store_codec_params(frame, default_split_bytes, lengths);
    s.copy_src[f] = s.lengths_frames + s.lengths_frame_at[f];
    s.copy_dst[f] = body;
    s.copy_size[f] = lengths;
  }
}

// Per split: its end in the split offsets, and its copy (from the encoded bytes, or the
// characters themselves for a raw split).
__global__ void encode_place_kernel(device_encode_batch batch, batch_plan plan, encode_scratch s) {
  for (std::uint64_t g = first_item(); g < plan.num_splits; g += item_stride()) {
    std::size_t const f = frame_of_chunk(plan.split_begin, batch.num_frames, g);
    encode_source const& src = batch.sources[f];
    std::uint64_t const first = plan.split_begin[f];
    std::uint64_t const i = g - first;
    std::byte* body = body_of(batch, f);
    std::uint64_t const offsets_at = align_frame(s.lengths_frame_bytes[f]);
    std::uint64_t const data_at = offsets_at + 8 * (plan.split_begin[f + 1] - first + 1);
    std::uint64_t const at = s.split_prefix[g] - s.split_prefix[first];
    std::uint64_t const size = s.split_sizes[g];
    std::uint64_t const n = split_chars(src.chars_bytes, default_split_bytes, i);
    ::zs::detail::store_le(body + offsets_at + 8 * (i + 1), at + size, 8);
    std::uint64_t const c = batch.num_frames + g;
    s.copy_src[c] = size == n ? static_cast<const void*>(static_cast<const std::uint8_t*>(src.values) + src.offsets[0] +
                                                        i * default_split_bytes)
                              : static_cast<const void*>(s.split_data + g * default_split_bytes);
    s.copy_dst[c] = body + data_at + at;
    s.copy_size[c] = size;
  }
}

// Per frame, before anything of its body past the lengths frame's header is read: the table,
// the layout (the split count the host planned from the target's characters), the lengths
// frame filling its place, and the split offsets' ends (0 and D). Each split's own offsets are
// checked by the warp that decodes it (decode_splits_kernel).
__global__ void decode_check_frames_kernel(device_decode_batch batch, batch_plan plan) {
  for (std::uint64_t f = first_item(); f <= batch.num_frames; f += item_stride()) {
    if (f == batch.num_frames) {
      plan.lengths[plan.num_strings] = 0;
      continue;
    }
    if (batch.status[f] != frame_status::ok) continue;
    frame_header const h = load_header(batch.frames + batch.frame_offsets[f]);
    decode_table t;
    body_layout l{};
    const std::byte* body = body_of(batch, f);
    bool ok = load_decode_table(table_of(batch, f), t) && read_layout(h, h.payload_bytes - body_at, l) &&
              l.splits == plan.split_begin[f + 1] - plan.split_begin[f] &&
              load_header(body).payload_bytes == l.lengths_bytes - frame_header_bytes &&
              check_split_offset_ends(body, l);
    if (!ok) batch.status[f] = frame_status::corrupt_payload;
  }
}

// Per frame: the lengths frame's status; a frame without strings must have no characters, and
// gets its one offset here.
__global__ void decode_lengths_status_kernel(device_decode_batch batch, batch_plan plan, const frame_status* lengths_status) {
  for (std::uint64_t f = first_item(); f < batch.num_frames; f += item_stride()) {
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    if (lengths_status[f] != frame_status::ok || (t.count == 0 && t.chars_bytes != 0)) {
      batch.status[f] = frame_status::corrupt_payload;
    }
  }
}

// Fills the block's shared table with frame f's (which decode_check_frames accepted), a code
// per thread. Every thread of the block calls it.
__device__ void fill_decode_table(const std::byte* block, decode_table& table) {
  for (unsigned c = threadIdx.x; c < 256; c += blockDim.x) {
    std::uint64_t symbol;
    std::uint8_t length;
    load_decode_entry(block, c, symbol, length);
    table.symbol[c] = symbol;
    table.length[c] = length;
  }
  if (threadIdx.x == 0) table.count = table_symbol_count(block);
}

// The split kernel: a block per group of one frame's splits, a warp per split (fsst_warp.hpp),
// the frame's table in shared memory, filled again only when the block moves to another frame;
// each block takes a contiguous range of groups, so that it meets each frame about once. Each
// warp gets a ring of ring_bytes in dynamic shared memory.
//
// A split is checked as it is decoded, in one pass over its codes: first its own offsets (in
// order, inside the data section, no more bytes than its characters: split_in_section), then
// its codes, which must decode to exactly its characters (decode_split_warp's verdict). A warp
// writes only its split's characters, so a bad split costs its frame (refused here) nothing
// outside the frame's target; what the other warps wrote of that frame is unspecified.
__global__ void decode_splits_kernel(device_decode_batch batch, batch_plan plan) {
  __shared__ decode_table table;
  __shared__ bool table_ok;
  extern __shared__ ::zs::kernels::warp::word4 rings[];
  ::zs::kernels::warp::cuda_warp w;
  unsigned const warp_in_block = threadIdx.x / 32;
  std::size_t loaded = SIZE_MAX;
  std::uint64_t const first = plan.num_groups * blockIdx.x / gridDim.x;
  std::uint64_t const last = plan.num_groups * (blockIdx.x + 1) / gridDim.x;
  for (std::uint64_t g = first; g < last; ++g) {
    std::size_t const f = frame_of_chunk(plan.group_begin, batch.num_frames, g);
    if (f != loaded) {
      __syncthreads();
      // Only a frame still ok is known to hold a valid table: thread 0 decides for the block
      // (another block may mark the frame corrupt meanwhile; its table stays valid).
      if (threadIdx.x == 0) table_ok = batch.status[f] == frame_status::ok;
      __syncthreads();
      if (table_ok) fill_decode_table(table_of(batch, f), table);
      __syncthreads();
      loaded = f;
    }
    if (!table_ok) continue;
    decode_target const& t = batch.targets[f];
    std::uint64_t const splits = plan.split_begin[f + 1] - plan.split_begin[f];
    std::uint64_t const i = (g - plan.group_begin[f]) * plan.group_splits + warp_in_block;
    if (i >= splits) continue;  // the whole warp
    frame_header const h = load_header(batch.frames + batch.frame_offsets[f]);
    body_layout l{};
    read_layout(h, h.payload_bytes - body_at, l);  // checked by decode_check_frames
    const std::byte* body = body_of(batch, f);
    std::uint64_t const begin = ::zs::detail::load_le(body + l.offsets_at + 8 * i, 8);
    std::uint64_t const end = ::zs::detail::load_le(body + l.offsets_at + 8 * (i + 1), 8);
    std::uint64_t const n = split_chars(t.chars_bytes, default_split_bytes, i);
    auto const* in = reinterpret_cast<const std::uint8_t*>(body + l.data_at);
    auto* out = static_cast<std::uint8_t*>(t.values) + t.chars_begin + i * default_split_bytes;
    auto* ring = reinterpret_cast<std::uint8_t*>(rings) + std::size_t{warp_in_block} * ring_bytes;
    // Every lane reaches the same verdict.
    bool const ok = split_in_section(begin, end, l.data_bytes, n) &&
                    decode_split_warp(w, table, in + begin, end - begin, out, n, ring);
    if (!ok && w.lane == 0) batch.status[f] = frame_status::corrupt_payload;
  }
}

// Per string: its offset, and the lengths' check (the running sum never wraps and ends at the
// frame's characters) in the same pass over the lengths. A frame refused here may have had some
// offsets written, inside its target (all that zs/codec.hpp asks of a payload decoder); its
// characters are not decoded, since the split kernel runs after this one and reads the status.
__global__ void decode_offsets_kernel(device_decode_batch batch, batch_plan plan) {
  for (std::uint64_t j = first_item(); j < plan.num_strings + batch.num_frames; j += item_stride()) {
    if (j >= plan.num_strings) {
      // One thread per frame writes its closing offset.
      std::size_t const f = j - plan.num_strings;
      if (batch.status[f] != frame_status::ok) continue;
      decode_target const& t = batch.targets[f];
      t.offsets[t.count] = static_cast<std::int64_t>(t.chars_begin + t.chars_bytes);
      continue;
    }
    std::size_t const f = frame_of_chunk(plan.string_begin, batch.num_frames, j);
    if (batch.status[f] != frame_status::ok) continue;
    decode_target const& t = batch.targets[f];
    std::uint64_t const first = plan.string_begin[f];
    std::uint64_t const base = plan.prefix[first];
    std::uint64_t const before = plan.prefix[j] - base, after = plan.prefix[j + 1] - base;
    bool const last = j + 1 == plan.string_begin[f + 1];
    if (after < before || (last && after != t.chars_bytes)) {
      batch.status[f] = frame_status::corrupt_payload;
      continue;
    }
    t.offsets[j - first] = static_cast<std::int64_t>(t.chars_begin + before);
  }
}

template <class Kernel, class... Args>
void launch_items(Kernel kernel, std::uint64_t items, cudaStream_t stream, Args... args) {
  if (items == 0) return;
  launch_record const r = plan_item_launch(reinterpret_cast<const void*>(kernel), frame_ops_choice(), items);
  observed_launch(r, stream, [&] { kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(args...); });
}

// A block per group of plan.group_splits splits, a warp each (threads_per_split = 32);
// `shared_bytes` of dynamic shared memory a block.
template <class Kernel, class... Args>
void launch_groups(Kernel kernel, std::string_view name, const launch_choice& choice, const batch_plan& plan,
                   unsigned threads_per_split, std::size_t shared_bytes, cudaStream_t stream, Args... args) {
  if (plan.num_groups == 0) return;
  expect_launch_of(name, choice);
  ZS_EXPECTS(choice.params.threads == plan.group_splits * threads_per_split, "split groups of the launch's block size");
  launch_record const r = plan_launch(reinterpret_cast<const void*>(kernel), choice, plan.num_groups, shared_bytes);
  observed_launch(r, stream,
                  [&] { kernel<<<r.geometry.grid, r.geometry.threads, shared_bytes, stream>>>(args...); });
}

std::size_t scan_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                            static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(items)));
  return bytes;
}

}  // namespace

void gather_sample(const sample_copy* copies, std::size_t num_copies, std::uint8_t* out, cudaStream_t stream) {
  if (num_copies == 0) return;
  launch_record const r = plan_launch(reinterpret_cast<const void*>(gather_sample_kernel), frame_ops_choice(), num_copies);
  observed_launch(r, stream, [&] {
    gather_sample_kernel<<<r.geometry.grid, r.geometry.threads, 0, stream>>>(copies, num_copies, out);
  });
}

std::size_t cub_temp_bytes(std::uint64_t num_strings, std::uint64_t num_splits, std::size_t num_frames) {
  std::size_t copies = 0;
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, copies, static_cast<const void**>(nullptr),
                                         static_cast<void**>(nullptr), static_cast<std::uint64_t*>(nullptr),
                                         static_cast<std::int64_t>(num_frames + num_splits)));
  return std::max(copies, std::max(scan_bytes(num_strings + 1), scan_bytes(num_splits + 1)));
}

void encode_lengths(const device_encode_batch& batch, const batch_plan& plan, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(encode_lengths_kernel, plan.num_strings + 1, stream, batch, plan);
}

void encode_splits(const device_encode_batch& batch, const batch_plan& plan, const encode_scratch& s,
                   const launch_choice& encode, void* cub_temp, std::size_t cub_bytes, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  ZS_CUDA_TRY(cudaMemsetAsync(s.split_sizes + plan.num_splits, 0, sizeof(std::uint64_t), stream));
  launch_groups(encode_splits_kernel, "fsst_encode", encode, plan, 32,
                std::size_t{plan.group_splits} * encode_warp_shared_bytes, stream, batch, plan, s);
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(cub_temp, cub_bytes, s.split_sizes, s.split_prefix,
                                            static_cast<std::int64_t>(plan.num_splits + 1), stream));
  launch_items(encode_frames_kernel, batch.num_frames, stream, batch, plan, s);
  launch_items(encode_place_kernel, plan.num_splits, stream, batch, plan, s);
  ZS_CUDA_TRY(cub::DeviceMemcpy::Batched(cub_temp, cub_bytes, s.copy_src, s.copy_dst, s.copy_size,
                                         static_cast<std::int64_t>(batch.num_frames + plan.num_splits), stream));
}

void decode_check_frames(const device_decode_batch& batch, const batch_plan& plan, cudaStream_t stream) {
  launch_items(decode_check_frames_kernel, batch.num_frames + 1, stream, batch, plan);
}

void decode_splits(const device_decode_batch& batch, const batch_plan& plan, const frame_status* lengths_status,
                   const launch_choice& decode, void* cub_temp, std::size_t cub_bytes, cudaStream_t stream) {
  if (batch.num_frames == 0) return;
  launch_items(decode_lengths_status_kernel, batch.num_frames, stream, batch, plan, lengths_status);
  ZS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(cub_temp, cub_bytes, plan.lengths, plan.prefix,
                                            static_cast<std::int64_t>(plan.num_strings + 1), stream));
  // The offsets, with the lengths' check; then the characters of every frame still ok.
  launch_items(decode_offsets_kernel, plan.num_strings + batch.num_frames, stream, batch, plan);
  launch_groups(decode_splits_kernel, "fsst_decode", decode, plan, 32, std::size_t{plan.group_splits} * ring_bytes,
                stream, batch, plan);
}

}  // namespace zs::kernels::fsst
