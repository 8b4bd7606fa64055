// The bitpack codec on the GPU: work maps from what the host knows (types and counts), scratch
// layout, and the batched launches of kernels/bitpack.
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "bitpack/bitpack_format.hpp"
#include "bitpack/bitpack_kernels.hpp"
#include "bitpack/warp_programs.hpp"
#include "codecs/bitpack/bitpack_codec.hpp"
#include "common/work_map.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "codecs/bitpack/bitpack_tuning.hpp"

namespace zs::codecs {
namespace {

namespace kb = kernels::bitpack;

// Segments of 512 values are the kernels' unit of work.
std::uint64_t segments_of(std::uint64_t count) { return bitpack::segment_count(count); }

// The width class (bytes of the words the kernels compute on) of an integer type: 4 for the
// narrow types, which are coded as their 32-bit widening, and the 32-bit ones; 8 for the 64-bit
// ones; 0 for the other types.
std::size_t class_width(value_type type) {
  return is_integer(type) ? bitpack::width_bits_of(type) / 8 : 0;
}

// Work maps: frame f's items (segments, or chunks of segments) in a class of value width, with
// none for the frames of the other class.
std::vector<std::uint64_t> class_map(const std::vector<std::uint64_t>& segments,
                                     const std::vector<std::size_t>& widths, std::size_t width,
                                     std::uint64_t segments_per_item) {
  std::vector<std::uint64_t> items(segments.size());
  for (std::size_t f = 0; f < segments.size(); ++f) items[f] = widths[f] == width ? segments[f] : 0;
  return kernels::chunk_prefix(items, segments_per_item);
}

// The frames of one width class (4 or 8: class_width; 0 for every integer frame) as launches
// are tuned for them: their bytes, and the type that holds most of those bytes.
struct class_work {
  std::optional<value_type> type;
  std::uint64_t bytes = 0;
};

template <typename Descriptor>
class_work work_of(std::span<const Descriptor> frames, std::size_t width) {
  std::array<std::uint64_t, std::size_t{last_value_type_id} + 1> by_type{};
  class_work w;
  for (auto const& d : frames) {
    if (!is_integer(d.type) || (width != 0 && class_width(d.type) != width)) continue;
    std::uint64_t const bytes = d.count * value_width(d.type);
    // Narrow frames run the 32-bit kernels: tuned as the 32-bit type of their widening.
    value_type const tuned = !bitpack::is_narrow_type(d.type) ? d.type
                             : is_signed_integer(d.type)      ? value_type::int32
                                                              : value_type::uint32;
    by_type[static_cast<std::size_t>(tuned)] += bytes;
    w.bytes += bytes;
  }
  std::uint64_t most = 0;
  for (std::size_t t = 1; t < by_type.size(); ++t) {
    if (by_type[t] > most) {
      most = by_type[t];
      w.type = static_cast<value_type>(t);
    }
  }
  return w;
}

// --- encode ----------------------------------------------------------------------------------

// The segments of each width class: all that the scratch's size depends on, counted without
// building the maps (sizing a batch of many frames costs one pass over them).
struct class_segments {
  std::uint64_t segments32 = 0, segments64 = 0;
};

struct encode_maps {
  std::vector<std::uint64_t> chunks32, chunks64, seg_first, sample_first32, sample_first64;
  class_segments counts;
};

encode_maps plan_encode(std::span<const encode_source> sources) {
  std::vector<std::uint64_t> segments(sources.size());
  std::vector<std::size_t> widths(sources.size());
  for (std::size_t f = 0; f < sources.size(); ++f) {
    segments[f] = segments_of(sources[f].count);
    widths[f] = class_width(sources[f].type);
  }
  encode_maps m;
  m.chunks32 = class_map(segments, widths, 4, 1);
  m.chunks64 = class_map(segments, widths, 8, 1);
  m.counts = {m.chunks32.back(), m.chunks64.back()};
  std::vector<std::uint64_t> samples(sources.size());
  for (std::size_t f = 0; f < sources.size(); ++f) samples[f] = bitpack::gpu::sample_count(segments[f]);
  m.sample_first32 = class_map(samples, widths, 4, 1);
  m.sample_first64 = class_map(samples, widths, 8, 1);
  m.seg_first.resize(sources.size());
  for (std::size_t f = 0; f < sources.size(); ++f) {
    m.seg_first[f] = widths[f] == 8 ? m.counts.segments32 + m.chunks64[f] : m.chunks32[f];
  }
  return m;
}

struct encode_scratch {
  std::uint64_t* chunks32;
  std::uint64_t* chunks64;
  std::uint64_t* seg_first;
  std::uint64_t* sample_first32;
  std::uint64_t* sample_first64;
  void* within;
  void* block_sums;
  void* offsets;
  void* samples;
  std::uint64_t* slot_at;
  std::uint64_t* layouts;
  std::uint8_t* choice;
  std::uint32_t* encode_again;
  std::uint32_t* slots32;
  std::uint32_t* slots64;
  void* scan;
  std::size_t scan_bytes;
  // The extended schemes' sizes (null for the classic codec).
  void* samples_ext;
  void* offsets_ext;
  void* within_ext;
  void* block_sums_ext;
};

class_segments count_segments(std::span<const encode_source> sources) {
  class_segments c;
  for (auto const& s : sources) {
    std::size_t const width = class_width(s.type);
    if (width == 4) c.segments32 += segments_of(s.count);
    if (width == 8) c.segments64 += segments_of(s.count);
  }
  return c;
}

encode_scratch carve_encode(detail::temp_layout& layout, std::size_t frames, const class_segments& m,
                            bool extended) {
  std::uint64_t const segments = m.segments32 + m.segments64;
  std::uint64_t const blocks = segments;  // pass 1's scan blocks: at most one per segment
  encode_scratch s{};
  // What goes up from the host first, side by side (one upload_image), ending with the first
  // entry of offsets (the rest of offsets must stay out of the image: it is large).
  s.chunks32 = layout.take<std::uint64_t>(frames + 1);
  s.chunks64 = layout.take<std::uint64_t>(frames + 1);
  s.seg_first = layout.take<std::uint64_t>(frames);
  s.sample_first32 = layout.take<std::uint64_t>(frames + 1);
  s.sample_first64 = layout.take<std::uint64_t>(frames + 1);
  s.samples = layout.take<std::byte>(frames * kb::scheme_words_bytes());
  if (extended) s.samples_ext = layout.take<std::byte>(frames * kb::scheme_words_bytes());
  s.encode_again = layout.take<std::uint32_t>(1);
  s.offsets = layout.take<std::byte>((blocks + 1) * kb::scheme_words_bytes());
  s.within = layout.take<std::byte>(segments * kb::block_words_bytes());
  s.block_sums = layout.take<std::byte>(blocks * kb::scheme_words_bytes());
  s.slot_at = layout.take<std::uint64_t>(segments);
  s.layouts = layout.take<std::uint64_t>(segments);
  s.choice = layout.take<std::uint8_t>(frames);
  s.slots32 = layout.take<std::uint32_t>(m.segments32 * kb::slot_words(32));
  s.slots64 = layout.take<std::uint32_t>(m.segments64 * kb::slot_words(64));
  s.scan_bytes = kb::scan_temp_bytes(blocks);
  s.scan = layout.take<std::byte>(s.scan_bytes);
  if (extended) {
    s.offsets_ext = layout.take<std::byte>((blocks + 1) * kb::scheme_words_bytes());
    s.within_ext = layout.take<std::byte>(segments * kb::block_words_bytes());
    s.block_sums_ext = layout.take<std::byte>(blocks * kb::scheme_words_bytes());
  }
  return s;
}

// --- decode ---------------------------------------------------------------------------------

// The decoder's launch per width class; the tile maps follow from them, and so does the
// scratch size.
struct decode_choices {
  launch_choice decode32, decode64;
};

decode_choices choose_decode(std::span<const decode_target> targets,
                             const std::optional<kb::decode_config>& fixed) {
  class_work const w32 = work_of(targets, 4), w64 = work_of(targets, 8);
  decode_choices c;
  if (fixed) {
    c.decode32 = kb::fixed_decode_choice(*fixed, w32.type, w32.bytes);
    c.decode64 = kb::fixed_decode_choice(*fixed, w64.type, w64.bytes);
  } else {
    c.decode32 = choose_launch(bitpack_decode_spec, w32.type, w32.bytes);
    c.decode64 = choose_launch(bitpack_decode_spec, w64.type, w64.bytes);
  }
  return c;
}

struct decode_maps {
  std::vector<std::uint64_t> tiles32, tiles64;
};

decode_maps plan_decode(std::span<const decode_target> targets, const decode_choices& choices) {
  std::vector<std::uint64_t> segments(targets.size());
  std::vector<std::size_t> widths(targets.size());
  for (std::size_t f = 0; f < targets.size(); ++f) {
    // Only integer frames are decoded; the others are refused (unsupported_type) by the
    // frame check and get no work here.
    bool const integer = is_integer(targets[f].type);
    segments[f] = integer ? segments_of(targets[f].count) : 0;
    widths[f] = class_width(targets[f].type);
  }
  decode_maps m;
  m.tiles32 = class_map(segments, widths, 4, kb::tile_segments(kb::config_of(choices.decode32.params)));
  m.tiles64 = class_map(segments, widths, 8, kb::tile_segments(kb::config_of(choices.decode64.params)));
  return m;
}

struct decode_scratch {
  void* layouts;
  std::uint64_t* tiles32;
  std::uint64_t* tiles64;
};

decode_scratch carve_decode(detail::temp_layout& layout, std::size_t frames) {
  decode_scratch s{};
  s.layouts = layout.take<std::byte>(frames * kb::frame_layout_bytes());
  s.tiles32 = layout.take<std::uint64_t>(frames + 1);
  s.tiles64 = layout.take<std::uint64_t>(frames + 1);
  return s;
}

}  // namespace

std::size_t bitpack_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  carve_encode(layout, sources.size(), count_segments(sources), schemes_ == bitpack_schemes::extended);
  return layout.bytes();
}

void bitpack_codec::encode_payloads_async(const device_encode_batch& batch,
                                          const encode_batch& host, void* temp,
                                          std::size_t temp_bytes, detail::upload_image& uploads,
                                          cudaStream_t stream) const {
  encode_maps const m = plan_encode(host.sources);
  class_work const w32 = work_of(host.sources, 4), w64 = work_of(host.sources, 8);
  detail::temp_layout layout(temp, temp_bytes);
  bool const extended = schemes_ == bitpack_schemes::extended;
  encode_scratch const s = carve_encode(layout, host.sources.size(), m.counts, extended);
  uploads.put<std::uint64_t>(s.chunks32, m.chunks32);
  uploads.put<std::uint64_t>(s.chunks64, m.chunks64);
  uploads.put<std::uint64_t>(s.seg_first, m.seg_first);
  uploads.put<std::uint64_t>(s.sample_first32, m.sample_first32);
  uploads.put<std::uint64_t>(s.sample_first64, m.sample_first64);
  uploads.zero(s.samples, host.sources.size() * kb::scheme_words_bytes());
  uploads.zero(s.offsets, kb::scheme_words_bytes());
  uploads.zero(s.encode_again, sizeof(std::uint32_t));
  if (extended) uploads.zero(s.samples_ext, host.sources.size() * kb::scheme_words_bytes());
  uploads.send(stream);
  bool const narrow_frames = std::any_of(host.sources.begin(), host.sources.end(),
                                        [](const encode_source& src) { return bitpack::is_narrow_type(src.type); });
  kb::encode_plan plan{batch,
                       s.chunks32,
                       s.chunks64,
                       m.counts.segments32,
                       m.counts.segments64,
                       s.seg_first,
                       s.sample_first32,
                       s.sample_first64,
                       m.sample_first32.back(),
                       m.sample_first64.back(),
                       static_cast<bitpack::gpu::block_words*>(s.within),
                       static_cast<bitpack::gpu::scheme_words*>(s.block_sums),
                       static_cast<bitpack::gpu::scheme_words*>(s.offsets),
                       static_cast<bitpack::gpu::scheme_words*>(s.samples),
                       s.slot_at,
                       s.layouts,
                       s.choice,
                       s.encode_again,
                       s.slots32,
                       s.slots64,
                       s.scan,
                       s.scan_bytes,
                       choose_launch(bitpack_analyze_spec, w32.type, w32.bytes),
                       choose_launch(bitpack_analyze_spec, w64.type, w64.bytes),
                       choose_launch(bitpack_pack_spec, w32.type, w32.bytes),
                       choose_launch(bitpack_pack_spec, w64.type, w64.bytes),
                       narrow_frames,
                       extended};
  if (extended) {
    plan.within_ext = static_cast<bitpack::gpu::block_words*>(s.within_ext);
    plan.block_sums_ext = static_cast<bitpack::gpu::scheme_words*>(s.block_sums_ext);
    plan.offsets_ext = static_cast<bitpack::gpu::scheme_words*>(s.offsets_ext);
    plan.samples_ext = static_cast<bitpack::gpu::scheme_words*>(s.samples_ext);
  }
  kb::encode(plan, stream);
}

std::size_t bitpack_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  carve_decode(layout, targets.size());
  return layout.bytes();
}

void bitpack_codec::decode_payloads_async(const device_decode_batch& batch,
                                          const decode_batch& host, void* temp,
                                          std::size_t temp_bytes, detail::upload_image& uploads,
                                          cudaStream_t stream) const {
  decode_choices const choices = choose_decode(host.targets, fixed_decode_);
  decode_maps const m = plan_decode(host.targets, choices);
  detail::temp_layout layout(temp, temp_bytes);
  decode_scratch const s = carve_decode(layout, host.targets.size());
  uploads.put<std::uint64_t>(s.tiles32, m.tiles32);
  uploads.put<std::uint64_t>(s.tiles64, m.tiles64);
  uploads.send(stream);  // with the base class's descriptors and offsets: headers are checked here
  kb::decode_plan const plan{batch,
                             static_cast<bitpack::frame_layout*>(s.layouts),
                             s.tiles32,
                             s.tiles64,
                             m.tiles32.back(),
                             m.tiles64.back(),
                             choices.decode32,
                             choices.decode64,
                             decodes(),
                             std::any_of(host.targets.begin(), host.targets.end(),
                                         [](const decode_target& t) { return bitpack::is_narrow_type(t.type); }),
                             schemes_ == bitpack_schemes::extended};
  kb::decode(plan, stream);
}

}  // namespace zs::codecs
