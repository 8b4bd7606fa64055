// The fsst_dict codec on the GPU. Encoding runs on the device in one pass over the batch:
// kernels/fsst/fsst_dict_kernels.hpp finds every frame's distinct values (in the order of their
// first row, as the CPU reference lists them) and each row's code; one copy of two numbers per
// frame (entries, characters) comes down so that the host can plan the dictionaries' coding, which
// the fsst codec's kernels do as embedded frames of their own; the bitpack codec's kernels pack
// the codes straight into place; a last pass moves each dictionary section behind its codes and
// writes the body's fields. The same bytes as the CPU reference.
//
// Decoding runs on the device too, over every frame of a batch at once (the steps are in
// kernels/fsst/fsst_dict_kernels.hpp): the bodies' fields are checked, and one copy of what they
// say about each dictionary (its place and sizes) comes down so that the host can plan the
// dictionaries' decoding; each dictionary section is recast as an fsst frame in scratch and
// decoded (and checked by fsst's rules) by the fsst codec's kernels, the codes by the bitpack
// codec's kernels in place; then every code is checked against its dictionary, the rows' offsets
// come from a scan of their lengths, and the characters are gathered into the targets. The same
// statuses and bytes as the CPU reference.
#include <algorithm>
#include <string>
#include <vector>

#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/fsst/fsst_dict_codec.hpp"
#include "codecs/fsst/fsst_strings.hpp"
#include "fsst/fsst_dict_format.hpp"
#include "fsst/fsst_dict_kernels.hpp"
#include "fsst/fsst_format.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/overflow.hpp"

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

namespace {

// The decoder's plan of a batch from what the host knows before it reads a frame: per frame its
// rows and gather units, as prefixes over the batch.
struct decode_plan {
  std::vector<std::uint64_t> string_begin;  // F + 1
  std::vector<std::uint64_t> unit_begin;    // F + 1
  std::vector<decode_target> codes;         // n uint64 codes per frame (pointers set at run time)
};

decode_plan plan_decode(std::span<const decode_target> targets) {
  decode_plan p;
  p.string_begin.assign(targets.size() + 1, 0);
  p.unit_begin.assign(targets.size() + 1, 0);
  for (std::size_t f = 0; f < targets.size(); ++f) {
    auto const& t = targets[f];
    p.string_begin[f + 1] = p.string_begin[f] + t.count;
    auto const* out = static_cast<const std::byte*>(t.values) + t.chars_begin;
    p.unit_begin[f + 1] = p.unit_begin[f] + fsst_dict::gather_units(out, t.chars_bytes);
    p.codes.push_back({value_type::uint64, t.count, nullptr});
  }
  return p;
}

// What the dictionaries take, known once the sections are read: the fsst frames they are
// recast as, their characters, and the fsst decoder's scratch.
struct dictionary_sizes {
  std::uint64_t frames_bytes = 0;
  std::uint64_t chars_bytes = 0;
  std::vector<decode_target> targets;  // pointers set once the area is placed
};

struct dictionary_area {
  std::byte* frames;
  std::uint8_t* chars;
  void* fsst_temp;
  std::size_t fsst_bytes;
};

dictionary_area carve_dictionaries(detail::temp_layout& layout, const dictionary_sizes& sizes) {
  dictionary_area a{};
  a.frames = layout.take<std::byte>(sizes.frames_bytes);
  a.chars = layout.take<std::uint8_t>(sizes.chars_bytes);
  a.fsst_bytes = get_codec(codec_id::fsst).decode_temp_bytes(sizes.targets);
  a.fsst_temp = layout.take<std::byte>(a.fsst_bytes);
  return a;
}

// The largest dictionaries an encoder writes for these targets: every row an entry, every
// character in them, a section of the most bytes such a dictionary takes. The scratch holds
// them; a crafted frame whose dictionary is larger still decodes, in memory of its own.
// Saturates at UINT64_MAX: sizes that large are never reserved.
dictionary_sizes largest_dictionaries(std::span<const decode_target> targets) {
  dictionary_sizes d;
  for (auto const& t : targets) {
    std::uint64_t const section = fsst_strings::max_section_bytes(t.count, t.chars_bytes);
    std::uint64_t const frame = section == UINT64_MAX || add_overflows(section, frame_header_bytes + fsst_dict::body_at +
                                                                                    frame_alignment)
                                    ? UINT64_MAX
                                    : fsst_dict::dictionary_frame_bytes(section);
    d.frames_bytes = frame == UINT64_MAX || add_overflows(d.frames_bytes, frame) ? UINT64_MAX : d.frames_bytes + frame;
    std::uint64_t const chars = add_overflows(t.chars_bytes, frame_alignment) ? UINT64_MAX : align_frame(t.chars_bytes);
    d.chars_bytes = chars == UINT64_MAX || add_overflows(d.chars_bytes, chars) ? UINT64_MAX : d.chars_bytes + chars;
    d.targets.push_back({value_type::string, t.count, nullptr, nullptr, 0, t.chars_bytes});
  }
  return d;
}

// Bytes to reserve for the dictionaries in the batch's scratch: the largest an encoder writes,
// or none when those do not fit in 64 bits (the decoder then allocates what the frames need).
std::size_t reserved_dictionary_bytes(std::span<const decode_target> targets) {
  dictionary_sizes const largest = largest_dictionaries(targets);
  if (largest.frames_bytes == UINT64_MAX || largest.chars_bytes == UINT64_MAX) return 0;
  detail::temp_layout sizing;
  carve_dictionaries(sizing, largest);
  return sizing.bytes();
}

struct decode_carve {
  kd::decode_scratch s{};
  std::uint64_t* string_begin;
  std::uint64_t* unit_begin;
  std::uint64_t* dict_frame_at;
  std::uint64_t* entry_offsets_at;
  std::uint64_t* entry_chars_at;
  std::uint64_t* codes;
  frame_status* codes_status;
  frame_status* dict_status;
  std::int64_t* entry_offsets;
  void* cub_temp;
  std::size_t cub_bytes;
  void* codes_temp;
  std::size_t codes_temp_bytes;
  void* reserved;  // the dictionaries' area, when they fit
  std::size_t reserved_bytes;
};

decode_carve carve_decode(detail::temp_layout& layout, std::span<const decode_target> targets, const decode_plan& p) {
  std::size_t const frames = targets.size();
  std::uint64_t const rows = p.string_begin.back();
  decode_carve c{};
  // What the host uploads lies together, at the start: each send copies one range.
  c.string_begin = layout.take<std::uint64_t>(frames + 1);
  c.unit_begin = layout.take<std::uint64_t>(frames + 1);
  c.dict_frame_at = layout.take<std::uint64_t>(frames);
  c.entry_offsets_at = layout.take<std::uint64_t>(frames);
  c.entry_chars_at = layout.take<std::uint64_t>(frames);
  auto& s = c.s;
  s.string_begin = c.string_begin;
  s.num_rows = rows;
  s.unit_begin = c.unit_begin;
  s.num_units = p.unit_begin.back();
  s.sections = layout.take<fsst_dict::dictionary_section>(frames);
  s.dict_frame_at = c.dict_frame_at;
  s.entry_offsets_at = c.entry_offsets_at;
  s.entry_chars_at = c.entry_chars_at;
  // A dictionary has at most as many entries as its frame has rows (read_body checks d <= n).
  c.entry_offsets = layout.take<std::int64_t>(rows + frames);
  s.entry_offsets = c.entry_offsets;
  c.dict_status = layout.take<frame_status>(frames);
  s.dict_status = c.dict_status;
  s.copy_src = layout.take<const void*>(2 * frames);
  s.copy_dst = layout.take<void*>(2 * frames);
  s.copy_size = layout.take<std::uint64_t>(2 * frames);
  c.codes = layout.take<std::uint64_t>(rows + 1);
  s.codes = c.codes;
  c.codes_status = layout.take<frame_status>(frames);
  s.codes_status = c.codes_status;
  s.lengths = layout.take<std::uint64_t>(rows + 1);
  s.prefix = layout.take<std::uint64_t>(rows + 1);
  c.cub_bytes = kd::decode_cub_temp_bytes(rows, frames);
  c.cub_temp = layout.take<std::byte>(c.cub_bytes);
  c.codes_temp_bytes = fsst_strings::integer_codec().decode_temp_bytes(p.codes);
  c.codes_temp = layout.take<std::byte>(c.codes_temp_bytes);
  c.reserved_bytes = reserved_dictionary_bytes(targets);
  c.reserved = layout.take<std::byte>(c.reserved_bytes);
  return c;
}

}  // namespace

std::size_t fsst_dict_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  carve_decode(layout, targets, plan_decode(targets));
  return layout.bytes();
}

void fsst_dict_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                                            std::size_t temp_bytes, detail::upload_image& uploads,
                                            cudaStream_t stream) const {
  std::size_t const frames = host.targets.size();
  decode_plan p = plan_decode(host.targets);
  detail::temp_layout layout(temp, temp_bytes);
  decode_carve c = carve_decode(layout, host.targets, p);
  uploads.put<std::uint64_t>(c.string_begin, p.string_begin);
  uploads.put<std::uint64_t>(c.unit_begin, p.unit_begin);
  uploads.send(stream);
  if (frames == 0) return;

  // 1. The bodies' fields, before any section is read; what they say comes down to the host,
  // which plans the dictionaries from it (one copy, as the encoder's of its dictionaries' sizes).
  kd::check_frames(batch, c.s, stream);
  std::vector<fsst_dict::dictionary_section> sections(frames);
  copy_async(sections.data(), c.s.sections, frames * sizeof(sections[0]), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  // 2. The codes, unpacked by the bitpack codec from their place at body offset 32 into scratch.
  // Each codes frame's room ends where the next begins (read_body checked that a frame still ok
  // holds its codes frame exactly; the codes of the others are ignored). A frame too short to
  // reach its codes frame gets the last aligned byte it has, and its codes are refused.
  std::vector<std::uint64_t> codes_offsets(frames + 1);
  for (std::size_t f = 0; f < frames; ++f) {
    std::uint64_t const room_end = host.frame_offsets[f + 1] / frame_alignment * frame_alignment;
    codes_offsets[f] =
        std::min(host.frame_offsets[f] + fsst_dict::codes_frame_at, std::max(room_end, host.frame_offsets[f]));
    p.codes[f].values = c.codes + p.string_begin[f];
  }
  codes_offsets[frames] = host.frame_offsets[frames];
  fsst_strings::integer_codec().decode_async({host.frames, codes_offsets, p.codes, c.codes_status, true}, c.codes_temp,
                                             c.codes_temp_bytes, stream);

  // 3. The dictionaries: each section that read_body accepted becomes an fsst frame of d strings
  // and Cd characters, decoded (and checked by fsst's rules) by the fsst codec as embedded frames.
  // A frame not decoded gets an empty place, which the fsst decoder refuses as truncated.
  dictionary_sizes sizes;
  std::vector<std::uint64_t> dict_frame_at(frames + 1, 0), entry_offsets_at(frames, 0), entry_chars_at(frames, 0);
  std::uint64_t entries = 0;
  for (std::size_t f = 0; f < frames; ++f) {
    auto const& section = sections[f];
    ZS_EXPECTS(section.ok == 0 || section.entries <= host.targets[f].count,
               "a dictionary of no more entries than its frame's rows (fsst_dict frame " + std::to_string(f) + ")");
    dict_frame_at[f] = sizes.frames_bytes;
    entry_offsets_at[f] = entries;
    entry_chars_at[f] = sizes.chars_bytes;
    entries += section.entries + 1;
    if (section.ok != 0) {
      // The section lies in a payload of the batch, and Cd is at most 8 bytes per section byte:
      // these sums stay far below 2^64 for any buffer that exists.
      std::uint64_t const frame = fsst_dict::dictionary_frame_bytes(section.section_bytes);
      ZS_EXPECTS(!add_overflows(sizes.frames_bytes, frame) && !add_overflows(section.chars, frame_alignment) &&
                     !add_overflows(sizes.chars_bytes, align_frame(section.chars)),
                 "dictionaries whose sizes fit in 64 bits");
      sizes.frames_bytes += frame;
      sizes.chars_bytes += align_frame(section.chars);
    }
    sizes.targets.push_back({value_type::string, section.entries, nullptr, nullptr, 0, section.chars});
  }
  dict_frame_at[frames] = sizes.frames_bytes;

  // The area: in the reserved scratch when the dictionaries fit there (every frame an encoder
  // writes), else in memory of its own, freed on the stream after the batch's work.
  detail::temp_layout sizing;
  carve_dictionaries(sizing, sizes);
  device_buffer own;
  dictionary_area area{};
  if (sizing.bytes() <= c.reserved_bytes) {
    detail::temp_layout in(c.reserved, c.reserved_bytes);
    area = carve_dictionaries(in, sizes);
  } else {
    own = device_buffer(sizing.bytes(), stream);
    detail::temp_layout in(own.data(), own.size());
    area = carve_dictionaries(in, sizes);
  }
  for (std::size_t f = 0; f < frames; ++f) {
    sizes.targets[f].values = area.chars + entry_chars_at[f];
    sizes.targets[f].offsets = c.entry_offsets + entry_offsets_at[f];
  }
  c.s.dict_frames = area.frames;
  c.s.entry_chars = area.chars;
  uploads.put<std::uint64_t>(c.dict_frame_at, std::span<const std::uint64_t>(dict_frame_at.data(), frames));
  uploads.put<std::uint64_t>(c.entry_offsets_at, entry_offsets_at);
  uploads.put<std::uint64_t>(c.entry_chars_at, entry_chars_at);
  uploads.send(stream);
  kd::build_dictionary_frames(batch, c.s, c.cub_temp, c.cub_bytes, stream);
  get_codec(codec_id::fsst).decode_async({area.frames, dict_frame_at, sizes.targets, c.dict_status, true},
                                         area.fsst_temp, area.fsst_bytes, stream);

  // 4. Every code against its dictionary, the rows' offsets, their characters.
  kd::decode_rows(batch, c.s, c.cub_temp, c.cub_bytes, stream);
}

}  // namespace zs::codecs
