// The dict codec on the GPU. Encoding: bitpack_ext packs every frame's values in place (the plain
// frame); kernels/dict finds each frame's distinct values while there are few enough and counts
// its runs, and one copy of those counts comes down so that the host can place the dictionaries
// and codes, and the runs, of the frames that may take them; those are sorted and coded, the runs
// written, every frame's differences' bases and residuals written (a warp a group of 32 rows),
// bitpack_ext packs them all in memory of their own, and a last pass copies each frame's
// smallest form into place and writes its fields. The same bytes as the CPU reference.
//
// Decoding: the frames' fields are checked and one copy of them comes down, so that the host can
// plan the embedded frames; bitpack_ext unpacks them all at once (plain frames, codes and
// residuals straight into the targets; dictionaries, runs and bases into scratch); a frame whose
// embedded frames fail is refused, the codes are replaced by their values in place, the runs'
// lengths are checked and their rows written, and the residuals added up in place (a warp a
// tile). The same statuses and values as the CPU reference; the target of a refused frame holds
// unspecified values.
#include <algorithm>
#include <string>
#include <vector>

#include "codecs/dict/dict_codec.hpp"
#include "codecs/dict/dict_tuning.hpp"
#include "common/work_map.hpp"
#include "dict/dict_format.hpp"
#include "dict/dict_kernels.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {
namespace {

namespace kd = kernels::dict;

constexpr std::uint32_t no_piece = ~std::uint32_t{0};

template <typename Descriptor>
launch_choice chunk_choice(std::span<const Descriptor> frames) {
  std::uint64_t bytes = 0;
  for (auto const& d : frames) bytes += d.count * value_width(d.type);
  return choose_launch(dict_chunks_spec, frames.empty() ? value_type::int32 : frames.front().type, bytes);
}

// Chunks of each frame's rows, counting only the frames `wanted` says.
template <typename Descriptor, typename Wanted>
std::vector<std::uint64_t> chunks_of(std::span<const Descriptor> frames, std::uint64_t chunk_rows, Wanted wanted) {
  std::vector<std::uint64_t> rows(frames.size());
  for (std::size_t f = 0; f < frames.size(); ++f) rows[f] = wanted(f) ? frames[f].count : 0;
  return kernels::chunk_prefix(rows, chunk_rows);
}

// --- encode ----------------------------------------------------------------------------------

struct encode_plan {
  launch_choice chunks;
  std::vector<std::uint64_t> chunk_begin, delta_chunk_begin, slots_at;
  std::uint64_t keys = 0;  // the most dictionary keys the frames can have
};

encode_plan plan_encode(std::span<const encode_source> sources) {
  encode_plan p;
  p.chunks = chunk_choice(sources);
  p.chunk_begin = chunks_of(sources, p.chunks.params.items, [&](std::size_t f) { return dict::entry_limit(sources[f].count) > 0; });
  p.delta_chunk_begin = chunks_of(sources, p.chunks.params.items, [&](std::size_t f) { return dict::tries_deltas(sources[f].count); });
  p.slots_at.assign(sources.size() + 1, 0);
  for (std::size_t f = 0; f < sources.size(); ++f) {
    p.slots_at[f + 1] = p.slots_at[f] + dict::table_slots(sources[f].count);
    p.keys += dict::entry_limit(sources[f].count);
  }
  return p;
}

struct encode_carve {
  // Uploaded before the search, side by side.
  std::uint64_t* chunk_begin;
  std::uint64_t* delta_chunk_begin;
  std::uint64_t* slots_at;
  std::uint32_t* inserted;
  std::uint32_t* flags;
  std::uint32_t* chunk_runs;  // written by count_runs
  // Uploaded once the runs are counted.
  std::uint64_t* chunk_run_first;
  std::uint64_t* run_begin;
  std::uint64_t* run_values_at;
  std::uint64_t* run_count;
  std::uint32_t* run_piece;
  std::uint64_t* side_at;
  std::uint64_t* residuals_at;
  std::uint32_t* delta_piece;
  // Uploaded once the dictionaries are known.
  std::uint64_t* entries;
  std::uint64_t* key_at;
  std::uint64_t* values_at;
  std::uint64_t* codes_at;
  std::uint64_t* code_chunk_begin;
  std::uint32_t* first_piece;
  std::uint64_t* piece_at;
  // Written by the kernels.
  std::uint64_t* plain_bytes;
  std::uint64_t* piece_bytes;
  std::uint64_t* slots;
  std::uint64_t* keys;
  void* packer_temp;
  std::size_t packer_bytes;
};

encode_carve carve_encode(detail::temp_layout& layout, std::span<const encode_source> sources, const encode_plan& p) {
  std::size_t const frames = sources.size();
  encode_carve c{};
  c.chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.delta_chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.slots_at = layout.take<std::uint64_t>(frames + 1);
  c.inserted = layout.take<std::uint32_t>(frames);
  c.flags = layout.take<std::uint32_t>(frames);
  c.chunk_runs = layout.take<std::uint32_t>(p.chunk_begin.back());
  c.chunk_run_first = layout.take<std::uint64_t>(p.chunk_begin.back());
  c.run_begin = layout.take<std::uint64_t>(frames + 1);
  c.run_values_at = layout.take<std::uint64_t>(frames);
  c.run_count = layout.take<std::uint64_t>(frames);
  c.run_piece = layout.take<std::uint32_t>(frames);
  c.side_at = layout.take<std::uint64_t>(frames);
  c.residuals_at = layout.take<std::uint64_t>(frames);
  c.delta_piece = layout.take<std::uint32_t>(frames);
  c.entries = layout.take<std::uint64_t>(frames);
  c.key_at = layout.take<std::uint64_t>(frames);
  c.values_at = layout.take<std::uint64_t>(frames);
  c.codes_at = layout.take<std::uint64_t>(frames);
  c.code_chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.first_piece = layout.take<std::uint32_t>(frames);
  c.piece_at = layout.take<std::uint64_t>(6 * frames + 1);
  c.plain_bytes = layout.take<std::uint64_t>(frames);
  c.piece_bytes = layout.take<std::uint64_t>(6 * frames);
  c.slots = layout.take<std::uint64_t>(p.slots_at.back());
  c.keys = layout.take<std::uint64_t>(p.keys);
  c.packer_bytes = dict_codec::packer().encode_temp_bytes(sources);
  c.packer_temp = layout.take<std::byte>(c.packer_bytes);
  return c;
}

// The frames that take a dictionary, once their distinct values are counted: where their keys,
// values and codes go, and the dictionaries and codes as sources for the packer (pointers into
// `area`, set once it is allocated).
struct dictionary_plan {
  std::vector<std::uint64_t> entries, key_at, values_at, codes_at, code_chunk_begin;
  std::vector<std::uint32_t> first_piece;
  std::vector<encode_source> pieces;
  std::uint64_t area_bytes = 0;
};

// Each frame's runs where it may take the runs form (dict::max_runs), else 0, from the counts of
// its chunks (plan_encode's).
std::vector<std::uint64_t> runs_of_frames(std::span<const encode_source> sources, std::span<const std::uint64_t> chunk_begin,
                                          std::span<const std::uint32_t> chunk_runs) {
  std::vector<std::uint64_t> runs(sources.size(), 0);
  for (std::size_t f = 0; f < sources.size(); ++f) {
    std::uint64_t r = 0;
    for (std::uint64_t k = chunk_begin[f]; k < chunk_begin[f + 1]; ++k) r += chunk_runs[k];
    runs[f] = r <= dict::max_runs(sources[f].count) ? r : 0;
  }
  return runs;
}

// Whether `runs` runs make a frame of `s` smaller than any dictionary could: the most the runs
// form takes (its two embedded frames at their largest) below the least a dictionary takes (two
// embedded headers, and the codes frame's block starts: every bitpack_ext scheme has 4 bytes or
// more per 512 rows). Then the choice would not take a dictionary, and none is coded.
bool runs_beat_any_dictionary(const encode_source& s, std::uint64_t runs) {
  if (runs == 0) return false;
  std::uint64_t const most = dict::main_frame_at(dict_codec::packer().max_frame_bytes({value_type::uint32, runs, nullptr})) +
                             dict_codec::packer().max_frame_bytes({s.type, runs, nullptr});
  std::uint64_t const least = 2 * frame_header_bytes + 4 * ((s.count + 511) / 512);
  return most < least;
}

dictionary_plan plan_dictionaries(std::span<const encode_source> sources, std::span<const std::uint32_t> inserted,
                                  std::span<const std::uint32_t> flags, std::span<const std::uint64_t> runs,
                                  std::uint64_t chunk_rows) {
  std::size_t const frames = sources.size();
  dictionary_plan p;
  p.entries.assign(frames, 0);
  p.key_at.assign(frames, 0);
  p.values_at.assign(frames, 0);
  p.codes_at.assign(frames, 0);
  p.first_piece.assign(frames, no_piece);
  std::uint64_t keys = 0;
  for (std::size_t f = 0; f < frames; ++f) {
    auto const& s = sources[f];
    std::uint64_t const limit = dict::entry_limit(s.count);
    std::uint64_t const d = inserted[f] + ((flags[f] & kd::has_empty_key) != 0 ? 1 : 0);
    if (limit == 0 || (flags[f] & kd::too_many) != 0 || d > limit || runs_beat_any_dictionary(s, runs[f])) continue;
    std::uint64_t const width = value_width(s.type);
    p.entries[f] = d;
    p.key_at[f] = keys;
    keys += d;
    p.values_at[f] = p.area_bytes;
    p.area_bytes += align_frame(d * width);
    p.codes_at[f] = p.area_bytes;
    p.area_bytes += align_frame(s.count * width);
    p.first_piece[f] = static_cast<std::uint32_t>(p.pieces.size());
    p.pieces.push_back({s.type, d, nullptr});
    p.pieces.push_back({dict::code_type(s.type), s.count, nullptr});
  }
  p.code_chunk_begin = chunks_of(sources, chunk_rows, [&](std::size_t f) { return p.entries[f] != 0; });
  return p;
}

// The frames that take the runs form's pieces, once their runs are counted (chunk_runs: per
// chunk of plan_encode's): batch-wide run arrays, each frame's run values in the area after the
// dictionaries' (values_at counts from the area's start), and its lengths and run values as
// sources for the packer (pointers set once the area is allocated).
struct runs_plan {
  std::vector<std::uint64_t> chunk_run_first, run_begin, values_at, run_count;
  std::vector<std::uint32_t> run_piece;
  std::uint64_t total = 0;       // runs of all the frames that take them
  std::uint64_t area_bytes = 0;  // their run values
};

runs_plan plan_runs(std::span<const encode_source> sources, std::span<const std::uint64_t> chunk_begin,
                    std::span<const std::uint32_t> chunk_runs, std::span<const std::uint64_t> frame_runs,
                    std::uint64_t values_from, std::vector<encode_source>& pieces) {
  std::size_t const frames = sources.size();
  runs_plan r;
  r.chunk_run_first.assign(chunk_runs.size(), 0);
  r.run_begin.assign(frames + 1, 0);
  r.values_at.assign(frames, 0);
  r.run_count.assign(frames, 0);
  r.run_piece.assign(frames, no_piece);
  std::uint64_t area = values_from;
  for (std::size_t f = 0; f < frames; ++f) {
    auto const& s = sources[f];
    std::uint64_t const runs = frame_runs[f];
    r.run_begin[f + 1] = r.run_begin[f];
    if (runs == 0) continue;
    for (std::uint64_t k = chunk_begin[f], next = r.total; k < chunk_begin[f + 1]; next += chunk_runs[k++]) {
      r.chunk_run_first[k] = next;
    }
    r.run_begin[f + 1] = r.total + runs;
    r.total += runs;
    r.run_count[f] = runs;
    r.values_at[f] = area;
    area += align_frame(runs * value_width(s.type));
    r.run_piece[f] = static_cast<std::uint32_t>(pieces.size());
    pieces.push_back({value_type::uint32, runs, nullptr});
    pieces.push_back({s.type, runs, nullptr});
  }
  r.area_bytes = area - values_from;
  return r;
}

// The frames that try the differences form (every frame of dict::tries_deltas): their bases and
// first values, and residuals, in the area from `values_from` on (side_at and residuals_at count
// from the area's start), and both as sources for the packer (pointers set once the area is
// allocated).
struct deltas_plan {
  std::vector<std::uint64_t> side_at, residuals_at;
  std::vector<std::uint32_t> piece;
  std::uint64_t area_bytes = 0;
};

deltas_plan plan_deltas(std::span<const encode_source> sources, std::uint64_t values_from,
                        std::vector<encode_source>& pieces) {
  std::size_t const frames = sources.size();
  deltas_plan d;
  d.side_at.assign(frames, 0);
  d.residuals_at.assign(frames, 0);
  d.piece.assign(frames, no_piece);
  std::uint64_t area = values_from;
  for (std::size_t f = 0; f < frames; ++f) {
    auto const& s = sources[f];
    if (!dict::tries_deltas(s.count)) continue;
    std::uint64_t const width = value_width(s.type);
    d.side_at[f] = area;
    area += align_frame(dict::side_count(s.count) * width);
    d.residuals_at[f] = area;
    area += align_frame(s.count * width);
    d.piece[f] = static_cast<std::uint32_t>(pieces.size());
    pieces.push_back({dict::base_type(s.type), dict::side_count(s.count), nullptr});
    pieces.push_back({dict::code_type(s.type), s.count, nullptr});
  }
  d.area_bytes = area - values_from;
  return d;
}

// --- decode ----------------------------------------------------------------------------------

struct decode_carve {
  std::uint64_t* dictionary_at;  // uploaded first
  std::uint64_t* chunk_begin;    // uploaded once the fields are known, with owner and the runs' places
  std::uint32_t* owner;
  std::uint64_t* run_chunk_begin;
  std::uint64_t* run_begin;
  std::uint64_t* run_values_at;
  std::uint64_t* delta_tile_begin;
  std::uint64_t* side_at;
  std::uint64_t* fields;
  frame_status* piece_status;
  std::byte* dictionaries;
  void* packer_temp;
  std::size_t packer_bytes;
};

// The dictionaries' places: the most entries a frame's dictionary may have (dict::check_frame
// allows no more), at its values' width.
std::vector<std::uint64_t> dictionary_places(std::span<const decode_target> targets) {
  std::vector<std::uint64_t> at(targets.size() + 1, 0);
  for (std::size_t f = 0; f < targets.size(); ++f) {
    std::uint64_t const most = std::min(targets[f].count, dict::max_entries);
    at[f + 1] = at[f] + align_frame(most * value_width(targets[f].type));
  }
  return at;
}

// The packer's decode of the most embedded frames a batch can have: two a frame.
std::vector<decode_target> largest_pieces(std::span<const decode_target> targets) {
  std::vector<decode_target> pieces;
  for (auto const& t : targets) {
    pieces.push_back({t.type, std::min(t.count, dict::max_entries), nullptr});
    pieces.push_back({dict::code_type(t.type), t.count, nullptr});
  }
  return pieces;
}

decode_carve carve_decode(detail::temp_layout& layout, std::span<const decode_target> targets,
                          std::uint64_t dictionary_bytes) {
  std::size_t const frames = targets.size();
  decode_carve c{};
  c.dictionary_at = layout.take<std::uint64_t>(frames);
  c.chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.owner = layout.take<std::uint32_t>(2 * frames);
  c.run_chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.run_begin = layout.take<std::uint64_t>(frames + 1);
  c.run_values_at = layout.take<std::uint64_t>(frames);
  c.delta_tile_begin = layout.take<std::uint64_t>(frames + 1);
  c.side_at = layout.take<std::uint64_t>(frames);
  c.fields = layout.take<std::uint64_t>(2 * frames);
  c.piece_status = layout.take<frame_status>(2 * frames);
  c.dictionaries = layout.take<std::byte>(dictionary_bytes);
  c.packer_bytes = dict_codec::packer().decode_temp_bytes(largest_pieces(targets));
  c.packer_temp = layout.take<std::byte>(c.packer_bytes);
  return c;
}

}  // namespace

std::size_t dict_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  carve_encode(layout, sources, plan_encode(sources));
  return layout.bytes();
}

void dict_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                       std::size_t temp_bytes, detail::upload_image& uploads,
                                       cudaStream_t stream) const {
  std::size_t const frames = host.sources.size();
  if (frames == 0) return;
  encode_plan const p = plan_encode(host.sources);
  detail::temp_layout layout(temp, temp_bytes);
  encode_carve const c = carve_encode(layout, host.sources, p);
  uploads.put<std::uint64_t>(c.chunk_begin, p.chunk_begin);
  uploads.put<std::uint64_t>(c.delta_chunk_begin, p.delta_chunk_begin);
  uploads.put<std::uint64_t>(c.slots_at, p.slots_at);
  uploads.zero(c.inserted, frames * sizeof(std::uint32_t));
  uploads.zero(c.flags, frames * sizeof(std::uint32_t));
  uploads.send(stream);
  if (p.slots_at.back() != 0) {
    ZS_CUDA_TRY(cudaMemsetAsync(c.slots, 0xff, p.slots_at.back() * sizeof(std::uint64_t), stream));
  }

  // 1. The plain frames, each at its frame's payload; each frame's distinct values and runs.
  std::vector<std::uint64_t> plain_at(frames + 1);
  for (std::size_t f = 0; f < frames; ++f) plain_at[f] = host.frame_offsets[f] + frame_header_bytes;
  plain_at[frames] = host.frame_offsets[frames];
  packer().encode_async({host.sources, host.frames, plain_at, c.plain_bytes, true}, c.packer_temp, c.packer_bytes, stream);
  kd::distinct_tables const tables{c.slots_at, c.slots, c.inserted, c.flags};
  std::uint64_t const chunks = p.chunk_begin.back();
  kd::find_distinct(batch, p.chunks, c.chunk_begin, chunks, tables, stream);
  kd::count_runs(batch, p.chunks, c.chunk_begin, chunks, c.chunk_runs, stream);
  std::vector<std::uint32_t> counts(2 * frames), chunk_runs(chunks);
  copy_async(counts.data(), c.inserted, frames * sizeof(std::uint32_t), stream);
  copy_async(counts.data() + frames, c.flags, frames * sizeof(std::uint32_t), stream);
  copy_async(chunk_runs.data(), c.chunk_runs, chunks * sizeof(std::uint32_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  // 2. The dictionaries and codes, and the runs, of the frames that may take them, packed in
  // memory of their own: the dictionaries' area, the run values, the runs' first rows and
  // lengths, the packed frames, the packer's scratch.
  std::vector<std::uint64_t> const frame_runs = runs_of_frames(host.sources, p.chunk_begin, chunk_runs);
  dictionary_plan d = plan_dictionaries(host.sources, std::span(counts).first(frames), std::span(counts).subspan(frames),
                                        frame_runs, p.chunks.params.items);
  runs_plan const r = plan_runs(host.sources, p.chunk_begin, chunk_runs, frame_runs, d.area_bytes, d.pieces);
  deltas_plan const dd = plan_deltas(host.sources, d.area_bytes + r.area_bytes, d.pieces);
  std::uint64_t const starts_at = d.area_bytes + r.area_bytes + dd.area_bytes;
  std::uint64_t const lengths_at = starts_at + align_frame(r.total * sizeof(std::uint32_t));
  std::uint64_t const packed_from = lengths_at + align_frame(r.total * sizeof(std::uint32_t));
  device_buffer area;
  std::vector<std::uint64_t> piece_at(6 * frames + 1, 0);
  if (!d.pieces.empty()) {
    std::vector<std::uint64_t> const packed_at = layout_frames(packer(), d.pieces);
    std::size_t const pack_temp = packer().encode_temp_bytes(d.pieces);
    area = device_buffer(packed_from + packed_at.back() + pack_temp, stream);
    auto* base = area.as<std::byte>();
    auto* starts = reinterpret_cast<std::uint32_t*>(base + starts_at);
    auto* lengths = reinterpret_cast<std::uint32_t*>(base + lengths_at);
    for (std::size_t f = 0; f < frames; ++f) {
      if (d.first_piece[f] != no_piece) {
        d.pieces[d.first_piece[f]].values = base + d.values_at[f];
        d.pieces[d.first_piece[f] + 1].values = base + d.codes_at[f];
      }
      if (r.run_piece[f] != no_piece) {
        d.pieces[r.run_piece[f]].values = lengths + r.run_begin[f];
        d.pieces[r.run_piece[f] + 1].values = base + r.values_at[f];
      }
      if (dd.piece[f] != no_piece) {
        d.pieces[dd.piece[f]].values = base + dd.side_at[f];
        d.pieces[dd.piece[f] + 1].values = base + dd.residuals_at[f];
      }
    }
    // The pieces' offsets are relative to the packed frames, which follow the scratch above.
    for (std::size_t i = 0; i < packed_at.size(); ++i) piece_at[i] = packed_from + packed_at[i];
    uploads.put<std::uint64_t>(c.entries, d.entries);
    uploads.put<std::uint64_t>(c.key_at, d.key_at);
    uploads.put<std::uint64_t>(c.values_at, d.values_at);
    uploads.put<std::uint64_t>(c.codes_at, d.codes_at);
    uploads.put<std::uint64_t>(c.code_chunk_begin, d.code_chunk_begin);
    uploads.put<std::uint32_t>(c.first_piece, d.first_piece);
    uploads.put<std::uint64_t>(c.chunk_run_first, r.chunk_run_first);
    uploads.put<std::uint64_t>(c.run_begin, r.run_begin);
    uploads.put<std::uint64_t>(c.run_values_at, r.values_at);
    uploads.put<std::uint64_t>(c.run_count, r.run_count);
    uploads.put<std::uint32_t>(c.run_piece, r.run_piece);
    uploads.put<std::uint64_t>(c.side_at, dd.side_at);
    uploads.put<std::uint64_t>(c.residuals_at, dd.residuals_at);
    uploads.put<std::uint32_t>(c.delta_piece, dd.piece);
    uploads.send(stream);
    if (d.code_chunk_begin.back() != 0) {
      kd::dictionaries const dicts{c.entries, c.key_at, c.keys, c.values_at, c.codes_at, base};
      kd::sort_dictionaries(batch, tables, dicts, stream);
      kd::code_rows(batch, p.chunks, c.code_chunk_begin, d.code_chunk_begin.back(), dicts, stream);
    }
    kd::write_runs(batch, p.chunks, c.chunk_begin, chunks, c.chunk_run_first, r.total,
                   {c.run_begin, starts, lengths, c.run_values_at, base}, stream);
    kd::write_deltas(batch, p.chunks, c.delta_chunk_begin, p.delta_chunk_begin.back(),
                     {c.side_at, c.residuals_at, base}, stream);
    std::byte* packed = base + packed_from;
    packer().encode_async({d.pieces, packed, packed_at, c.piece_bytes, true}, packed + packed_at.back(), pack_temp,
                          stream);
  } else {
    uploads.put<std::uint64_t>(c.entries, d.entries);
    uploads.put<std::uint32_t>(c.first_piece, d.first_piece);
    uploads.put<std::uint64_t>(c.run_count, r.run_count);
    uploads.put<std::uint32_t>(c.run_piece, r.run_piece);
    uploads.put<std::uint32_t>(c.delta_piece, dd.piece);
    uploads.send(stream);
  }

  // 3. Each frame's smallest form, and its fields.
  uploads.put<std::uint64_t>(c.piece_at, piece_at);
  uploads.send(stream);
  kd::assemble(batch,
               {c.plain_bytes, c.entries, c.first_piece, c.run_count, c.run_piece, c.delta_piece, area.as<std::byte>(),
                c.piece_at, c.piece_bytes},
               stream);
}

std::size_t dict_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  carve_decode(layout, targets, dictionary_places(targets).back());
  return layout.bytes();
}

void dict_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                                       std::size_t temp_bytes, detail::upload_image& uploads,
                                       cudaStream_t stream) const {
  std::size_t const frames = host.targets.size();
  if (frames == 0) return;
  std::vector<std::uint64_t> const dictionary_at = dictionary_places(host.targets);
  detail::temp_layout layout(temp, temp_bytes);
  decode_carve const c = carve_decode(layout, host.targets, dictionary_at.back());
  uploads.put<std::uint64_t>(c.dictionary_at, std::span(dictionary_at).first(frames));
  uploads.send(stream);

  // 1. The fields of every frame still ok, checked; they and the statuses come down.
  kd::check_frames(batch, c.fields, stream);
  std::vector<std::uint64_t> fields(2 * frames);
  std::vector<frame_status> status(frames);
  copy_async(fields.data(), c.fields, fields.size() * sizeof(std::uint64_t), stream);
  copy_async(status.data(), batch.status, frames * sizeof(frame_status), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  // 2. The embedded frames, in the order they lie in: each one's room ends where the next
  // begins (check_frame found that each fills its place exactly). Runs go to scratch of their
  // own: their lengths and first rows batch-wide, their values per frame.
  std::vector<decode_target> pieces;
  std::vector<std::uint64_t> piece_at;
  std::vector<std::uint32_t> owner;
  std::vector<std::uint64_t> run_begin(frames + 1, 0), run_values_at(frames, 0);
  std::vector<std::uint64_t> side_at(frames, 0);
  std::uint64_t run_values_bytes = 0, side_bytes = 0;
  for (std::size_t f = 0; f < frames; ++f) {
    dict::fields const form{fields[2 * f], fields[2 * f + 1]};
    bool const ok = status[f] == frame_status::ok;
    std::uint64_t const width = value_width(host.targets[f].type);
    std::uint64_t const runs = ok && form.runs() ? form.run_count() : 0;
    run_begin[f + 1] = run_begin[f] + runs;
    run_values_at[f] = run_values_bytes;
    run_values_bytes += align_frame(runs * width);
    side_at[f] = side_bytes;
    if (ok && form.deltas()) side_bytes += align_frame(dict::side_count(host.targets[f].count) * width);
  }
  device_buffer side_area(side_bytes, stream);
  std::uint64_t const total_runs = run_begin[frames];
  std::uint64_t const starts_at = run_values_bytes;
  std::uint64_t const lengths_at = starts_at + align_frame(total_runs * sizeof(std::uint32_t));
  std::uint64_t const check_at = lengths_at + align_frame(total_runs * sizeof(std::uint32_t));
  std::size_t const check_bytes = total_runs == 0 ? 0 : kd::check_runs_temp_bytes(total_runs);
  device_buffer runs_area(total_runs == 0 ? 0 : check_at + check_bytes, stream);
  auto* const run_values = runs_area.as<std::byte>();
  auto* const starts = reinterpret_cast<std::uint32_t*>(run_values + starts_at);
  auto* const lengths = reinterpret_cast<std::uint32_t*>(run_values + lengths_at);
  for (std::size_t f = 0; f < frames; ++f) {
    if (status[f] != frame_status::ok) continue;
    auto const& t = host.targets[f];
    std::uint64_t const payload = host.frame_offsets[f] + frame_header_bytes;
    dict::fields const form{fields[2 * f], fields[2 * f + 1]};
    if (form.plain()) {
      pieces.push_back({t.type, t.count, t.values});
      piece_at.push_back(payload);
    } else if (form.deltas()) {
      pieces.push_back({dict::base_type(t.type), dict::side_count(t.count), side_area.as<std::byte>() + side_at[f]});
      piece_at.push_back(payload);
      pieces.push_back({dict::code_type(t.type), t.count, t.values});
      piece_at.push_back(payload + dict::main_frame_at(form.dictionary_bytes));
      owner.push_back(static_cast<std::uint32_t>(f));
    } else if (form.runs()) {
      pieces.push_back({value_type::uint32, form.run_count(), lengths + run_begin[f]});
      piece_at.push_back(payload);
      pieces.push_back({t.type, form.run_count(), run_values + run_values_at[f]});
      piece_at.push_back(payload + dict::main_frame_at(form.dictionary_bytes));
      owner.push_back(static_cast<std::uint32_t>(f));
    } else {
      pieces.push_back({t.type, form.entries, c.dictionaries + dictionary_at[f]});
      piece_at.push_back(payload);
      pieces.push_back({dict::code_type(t.type), t.count, t.values});
      piece_at.push_back(payload + dict::main_frame_at(form.dictionary_bytes));
      owner.push_back(static_cast<std::uint32_t>(f));
    }
    owner.push_back(static_cast<std::uint32_t>(f));
  }
  if (pieces.empty()) return;
  piece_at.push_back(host.frame_offsets[frames]);
  // A frame of runs may have more embedded rows than largest_pieces planned for: then the
  // packer's scratch comes from the pool.
  std::size_t const needed = packer().decode_temp_bytes(pieces);
  device_buffer more_scratch(needed > c.packer_bytes ? needed : 0, stream);
  void* const packer_temp = needed > c.packer_bytes ? more_scratch.data() : c.packer_temp;
  packer().decode_async({host.frames, piece_at, pieces, c.piece_status, true}, packer_temp, std::max(needed, c.packer_bytes),
                        stream);

  // 3. Frames whose embedded frames failed refused; the codes of the others replaced, their runs
  // checked and written.
  launch_choice const chunks = chunk_choice(host.targets);
  auto const ok_and = [&](auto form_is) {
    return [&, form_is](std::size_t f) {
      return status[f] == frame_status::ok && form_is(dict::fields{fields[2 * f], fields[2 * f + 1]});
    };
  };
  std::vector<std::uint64_t> const chunk_begin =
      chunks_of(host.targets, chunks.params.items, ok_and([](const dict::fields& x) { return x.dictionary(); }));
  std::vector<std::uint64_t> const run_chunk_begin =
      chunks_of(host.targets, chunks.params.items, ok_and([](const dict::fields& x) { return x.runs(); }));
  std::vector<std::uint64_t> const delta_tile_begin =
      chunks_of(host.targets, dict::tile_rows, ok_and([](const dict::fields& x) { return x.deltas(); }));
  uploads.put<std::uint64_t>(c.chunk_begin, chunk_begin);
  uploads.put<std::uint32_t>(c.owner, owner);
  uploads.put<std::uint64_t>(c.run_chunk_begin, run_chunk_begin);
  uploads.put<std::uint64_t>(c.run_begin, run_begin);
  uploads.put<std::uint64_t>(c.run_values_at, run_values_at);
  uploads.put<std::uint64_t>(c.delta_tile_begin, delta_tile_begin);
  uploads.put<std::uint64_t>(c.side_at, side_at);
  uploads.send(stream);
  kd::fold_statuses(batch, c.piece_status, c.owner, pieces.size(), stream);
  kd::replace_codes(batch, chunks, c.chunk_begin, chunk_begin.back(), c.fields, c.dictionaries, c.dictionary_at, stream);
  if (total_runs != 0) {
    kd::check_runs(batch, c.run_begin, total_runs, lengths, starts, run_values + check_at, check_bytes, stream);
    kd::expand_runs(batch, chunks, c.run_chunk_begin, run_chunk_begin.back(), c.run_begin, starts, run_values,
                    c.run_values_at, stream);
  }
  kd::add_up_deltas(batch, c.delta_tile_begin, delta_tile_begin.back(), side_area.as<std::byte>(), c.side_at, stream);
}

}  // namespace zs::codecs
