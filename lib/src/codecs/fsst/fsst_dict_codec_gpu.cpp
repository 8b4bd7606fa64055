// The fsst_dict codec on the GPU. Encoding runs on the device in one pass over the batch:
// kernels/fsst/fsst_dict_kernels.hpp finds every frame's distinct values (in the order of their
// first row, as the CPU reference lists them) and each row's code; one copy of two numbers per
// frame (entries, characters) comes down so that the host can plan the dictionaries' coding, which
// the fsst codec's kernels do as embedded frames of their own; the bitpack codec's kernels pack
// the codes straight into place; a last pass moves each dictionary section behind its codes and
// writes the body's fields. The same bytes as the CPU reference.
//
// Decoding still runs the CPU reference on a copy of the batch in host memory (the same checks
// and bytes on either side).
#include <algorithm>
#include <vector>

#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/fsst/fsst_dict_codec.hpp"
#include "codecs/fsst/fsst_strings.hpp"
#include "fsst/fsst_dict_kernels.hpp"
#include "fsst/fsst_format.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {

void fsst_dict_codec::prepare_params_async(const sample_batch& samples, std::byte* params,
                                           std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const {
  // The fsst codec's tables: the same preparation, sample gathered on the GPU.
  get_codec(codec_id::fsst).prepare_async(samples, params, params_offsets, stream);
}

namespace {

namespace kd = kernels::fsst_dict;

// The body's first bytes (Lc, Cd, Ld, zero): the codes frame follows them.
constexpr std::uint64_t dict_header_bytes = 32;

// What the host knows of a batch before the distinct values are found: rows per frame, and the
// largest dictionaries the frames can have (every row distinct), which size the scratch.
struct dict_plan {
  std::vector<std::uint64_t> string_begin;  // F + 1
  std::vector<encode_source> largest_dictionaries;
  std::vector<encode_source> codes;  // uint64 codes at codes + string_begin[f] (pointers set at run time)
  std::uint64_t rows = 0, chars = 0;
};

dict_plan plan_dictionaries(std::span<const encode_source> sources) {
  dict_plan p;
  p.string_begin.assign(sources.size() + 1, 0);
  for (std::size_t f = 0; f < sources.size(); ++f) {
    auto const& s = sources[f];
    p.string_begin[f + 1] = p.string_begin[f] + s.count;
    p.chars += s.chars_bytes;
    p.largest_dictionaries.push_back({value_type::string, s.count, nullptr, nullptr, s.chars_bytes, s.params});
    p.codes.push_back(fsst_strings::integer_source(s.count, nullptr));
  }
  p.rows = p.string_begin.back();
  return p;
}

struct dict_carve {
  kd::distinct_scratch d{};
  kd::assemble_scratch a{};
  std::uint64_t* string_begin;
  std::uint64_t* dict_frame_at;
  std::uint64_t* dict_frame_bytes;
  std::uint64_t* codes_frame_bytes;
  std::byte* dict_frames;
  std::uint64_t dict_frames_bytes;
  void* cub_temp;
  std::size_t cub_bytes;
  void* fsst_temp;
  std::size_t fsst_bytes;
  void* codes_temp;
  std::size_t codes_bytes;
};

dict_carve carve_dict(detail::temp_layout& layout, const dict_plan& p) {
  std::size_t const frames = p.codes.size();
  std::uint64_t const n = p.rows;
  dict_carve c{};
  c.string_begin = layout.take<std::uint64_t>(frames + 1);
  c.dict_frame_at = layout.take<std::uint64_t>(frames);
  c.dict_frame_bytes = layout.take<std::uint64_t>(frames);
  c.codes_frame_bytes = layout.take<std::uint64_t>(frames);
  auto& d = c.d;
  d.string_begin = c.string_begin;
  d.num_rows = n;
  d.row_frame = layout.take<std::uint32_t>(n);
  d.hash = layout.take<std::uint64_t>(n);
  d.sorted_hash = layout.take<std::uint64_t>(n);
  d.rows = layout.take<std::uint64_t>(n);
  d.sorted_rows = layout.take<std::uint64_t>(n);
  d.run_start = layout.take<std::uint64_t>(n);
  d.first_row = layout.take<std::uint64_t>(n);
  d.is_first = layout.take<std::uint64_t>(n + 1);
  d.rank = layout.take<std::uint64_t>(n + 1);
  d.first_chars = layout.take<std::uint64_t>(n + 1);
  d.dict_at = layout.take<std::uint64_t>(n + 1);
  d.codes = layout.take<std::uint64_t>(n);
  d.dict_offsets = layout.take<std::int64_t>(n + frames);
  d.dict_chars = layout.take<std::uint8_t>(p.chars);
  d.copy_src = layout.take<const void*>(std::max<std::uint64_t>(n, frames));
  d.copy_dst = layout.take<void*>(std::max<std::uint64_t>(n, frames));
  d.copy_size = layout.take<std::uint64_t>(std::max<std::uint64_t>(n, frames));
  d.frame_sizes = layout.take<std::uint64_t>(2 * frames);
  c.a = {nullptr, c.dict_frame_at, c.codes_frame_bytes, d.frame_sizes, d.copy_src, d.copy_dst, d.copy_size};
  c.dict_frames_bytes = layout_frames(get_codec(codec_id::fsst), p.largest_dictionaries).back();
  c.dict_frames = layout.take<std::byte>(c.dict_frames_bytes);
  c.a.dict_frames = c.dict_frames;
  c.cub_bytes = kd::cub_temp_bytes(n, frames);
  c.cub_temp = layout.take<std::byte>(c.cub_bytes);
  c.fsst_bytes = get_codec(codec_id::fsst).encode_temp_bytes(p.largest_dictionaries);
  c.fsst_temp = layout.take<std::byte>(c.fsst_bytes);
  c.codes_bytes = fsst_strings::integer_codec().encode_temp_bytes(p.codes);
  c.codes_temp = layout.take<std::byte>(c.codes_bytes);
  return c;
}

}  // namespace

std::size_t fsst_dict_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  carve_dict(layout, plan_dictionaries(sources));
  return layout.bytes();
}

void fsst_dict_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                            std::size_t temp_bytes, detail::upload_image& uploads,
                                            cudaStream_t stream) const {
  std::size_t const frames = host.sources.size();
  if (frames == 0) return;
  dict_plan p = plan_dictionaries(host.sources);
  detail::temp_layout layout(temp, temp_bytes);
  dict_carve const c = carve_dict(layout, p);
  uploads.put<std::uint64_t>(c.string_begin, p.string_begin);
  uploads.send(stream);

  // 1. Distinct values and codes; the dictionaries' sizes down to the host.
  kd::find_distinct(batch, c.d, c.cub_temp, c.cub_bytes, stream);
  std::vector<std::uint64_t> sizes(2 * frames);
  copy_async(sizes.data(), c.d.frame_sizes, sizes.size() * sizeof(std::uint64_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  // 2. The dictionaries as fsst frames (embedded: their bytes are summed in the frame they go
  // to). Frame f's dictionary offsets start at slot (entries of the frames before it) + f.
  std::vector<encode_source> dictionaries;
  std::uint64_t entries_before = 0;
  for (std::size_t f = 0; f < frames; ++f) {
    std::uint64_t const d = sizes[2 * f], chars = sizes[2 * f + 1];
    ZS_EXPECTS(d <= host.sources[f].count && chars <= host.sources[f].chars_bytes,
               "a dictionary no larger than its frame's rows (fsst_dict distinct values)");
    dictionaries.push_back({value_type::string, d, c.d.dict_chars, c.d.dict_offsets + entries_before + f, chars,
                            host.sources[f].params});
    entries_before += d;
  }
  auto const dict_offsets = layout_frames(get_codec(codec_id::fsst), dictionaries);
  ZS_EXPECTS(dict_offsets.back() <= c.dict_frames_bytes, "dictionary frames within their scratch");
  uploads.put<std::uint64_t>(c.dict_frame_at, std::span<const std::uint64_t>(dict_offsets.data(), frames));
  uploads.send(stream);
  const codec& fsst_codec = get_codec(codec_id::fsst);
  std::size_t const fsst_needed = fsst_codec.encode_temp_bytes(dictionaries);
  // The scratch was sized for dictionaries of every row; smaller ones need no more, but should a
  // codec's scratch ever grow otherwise, a buffer of its own keeps the batch correct.
  device_buffer extra;
  void* fsst_temp = c.fsst_temp;
  if (fsst_needed > c.fsst_bytes) {
    extra = device_buffer(fsst_needed, stream);
    fsst_temp = extra.data();
  }
  fsst_codec.encode_async({dictionaries, c.dict_frames, dict_offsets, c.dict_frame_bytes, true}, fsst_temp,
                          std::max(fsst_needed, c.fsst_bytes), stream);

  // 3. The codes, packed in place at body offset 32 of each frame. Each codes frame may use its
  // frame's room (the last one's ends with the buffer).
  std::uint64_t const codes_at = frame_header_bytes + fsst_detail::body_offset() + dict_header_bytes;
  std::vector<std::uint64_t> codes_offsets(frames + 1);
  for (std::size_t f = 0; f < frames; ++f) {
    codes_offsets[f] = host.frame_offsets[f] + codes_at;
    p.codes[f].values = c.d.codes + p.string_begin[f];
  }
  codes_offsets[frames] = host.frame_offsets[frames];
  fsst_strings::integer_codec().encode_async({p.codes, host.frames, codes_offsets, c.codes_frame_bytes, true},
                                             c.codes_temp, c.codes_bytes, stream);

  // 4. The frames put together.
  kd::assemble_frames(batch, fsst_detail::body_offset(), c.a, c.cub_temp, c.cub_bytes, stream);
}

void fsst_dict_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void*,
                                            std::size_t, detail::upload_image& uploads, cudaStream_t stream) const {
  uploads.send(stream);
  std::size_t const n = host.targets.size();
  std::vector<frame_status> status(n);
  if (n != 0) copy_async(status.data(), batch.status, n * sizeof(frame_status), stream);
  std::vector<std::byte> headers(n * frame_header_bytes);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    copy_async(headers.data() + f * frame_header_bytes, host.frames + host.frame_offsets[f], frame_header_bytes, stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  // Frames that passed validation: their payloads lie inside their rooms.
  std::vector<std::vector<std::byte>> payloads(n);
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    payloads[f].resize(load_header(headers.data() + f * frame_header_bytes).payload_bytes);
    copy_async(payloads[f].data(), host.frames + host.frame_offsets[f] + frame_header_bytes, payloads[f].size(), stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<std::vector<std::int64_t>> offsets(n);
  std::vector<std::vector<std::byte>> chars(n);
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    decode_target const& t = host.targets[f];
    offsets[f].resize(t.count + 1);
    chars[f].resize(t.chars_bytes);
    decode_target local = t;
    local.values = chars[f].data();
    local.offsets = offsets[f].data();
    local.chars_begin = 0;
    status[f] = decode_payload_host(load_header(headers.data() + f * frame_header_bytes), payloads[f].data(), local);
    if (status[f] != frame_status::ok) continue;
    for (auto& o : offsets[f]) o += static_cast<std::int64_t>(t.chars_begin);
    copy_async(t.offsets, offsets[f].data(), offsets[f].size() * sizeof(std::int64_t), stream);
    copy_async(static_cast<std::byte*>(t.values) + t.chars_begin, chars[f].data(), chars[f].size(), stream);
  }
  if (n != 0) copy_async(batch.status, status.data(), n * sizeof(frame_status), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
}

}  // namespace zs::codecs
