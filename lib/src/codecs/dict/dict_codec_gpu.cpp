// The dict codec on the GPU. Encoding: bitpack_ext packs every frame's values in place (the plain
// frame); kernels/dict finds each frame's distinct values while there are few enough, and one
// copy of their counts comes down so that the host can place the dictionaries and codes of the
// frames that have some; those are sorted and coded, bitpack_ext packs them in memory of their
// own, and a last pass copies each frame's smaller choice into place and writes its fields. The
// same bytes as the CPU reference.
//
// Decoding: the frames' fields are checked and one copy of them comes down, so that the host can
// plan the embedded frames; bitpack_ext unpacks them all at once (plain frames and codes straight
// into the targets, dictionaries into scratch); a frame whose embedded frames fail is refused, and
// the codes are replaced by their values in place. The same statuses and values as the CPU
// reference; the target of a refused frame holds unspecified values.
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
  std::vector<std::uint64_t> chunk_begin, slots_at;
  std::uint64_t keys = 0;  // the most dictionary keys the frames can have
};

encode_plan plan_encode(std::span<const encode_source> sources) {
  encode_plan p;
  p.chunks = chunk_choice(sources);
  p.chunk_begin = chunks_of(sources, p.chunks.params.items, [&](std::size_t f) { return dict::entry_limit(sources[f].count) > 0; });
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
  std::uint64_t* slots_at;
  std::uint32_t* inserted;
  std::uint32_t* flags;
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
  c.slots_at = layout.take<std::uint64_t>(frames + 1);
  c.inserted = layout.take<std::uint32_t>(frames);
  c.flags = layout.take<std::uint32_t>(frames);
  c.entries = layout.take<std::uint64_t>(frames);
  c.key_at = layout.take<std::uint64_t>(frames);
  c.values_at = layout.take<std::uint64_t>(frames);
  c.codes_at = layout.take<std::uint64_t>(frames);
  c.code_chunk_begin = layout.take<std::uint64_t>(frames + 1);
  c.first_piece = layout.take<std::uint32_t>(frames);
  c.piece_at = layout.take<std::uint64_t>(2 * frames + 1);
  c.plain_bytes = layout.take<std::uint64_t>(frames);
  c.piece_bytes = layout.take<std::uint64_t>(2 * frames);
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

dictionary_plan plan_dictionaries(std::span<const encode_source> sources, std::span<const std::uint32_t> inserted,
                                  std::span<const std::uint32_t> flags, std::uint64_t chunk_rows) {
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
    if (limit == 0 || (flags[f] & kd::too_many) != 0 || d > limit) continue;
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

// --- decode ----------------------------------------------------------------------------------

struct decode_carve {
  std::uint64_t* dictionary_at;  // uploaded first
  std::uint64_t* chunk_begin;    // uploaded once the fields are known, with owner
  std::uint32_t* owner;
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
  uploads.put<std::uint64_t>(c.slots_at, p.slots_at);
  uploads.zero(c.inserted, frames * sizeof(std::uint32_t));
  uploads.zero(c.flags, frames * sizeof(std::uint32_t));
  uploads.send(stream);
  if (p.slots_at.back() != 0) {
    ZS_CUDA_TRY(cudaMemsetAsync(c.slots, 0xff, p.slots_at.back() * sizeof(std::uint64_t), stream));
  }

  // 1. The plain frames, each at its frame's payload; and each frame's distinct values.
  std::vector<std::uint64_t> plain_at(frames + 1);
  for (std::size_t f = 0; f < frames; ++f) plain_at[f] = host.frame_offsets[f] + frame_header_bytes;
  plain_at[frames] = host.frame_offsets[frames];
  packer().encode_async({host.sources, host.frames, plain_at, c.plain_bytes, true}, c.packer_temp, c.packer_bytes, stream);
  kd::distinct_tables const tables{c.slots_at, c.slots, c.inserted, c.flags};
  kd::find_distinct(batch, p.chunks, c.chunk_begin, p.chunk_begin.back(), tables, stream);
  std::vector<std::uint32_t> counts(2 * frames);
  copy_async(counts.data(), c.inserted, frames * sizeof(std::uint32_t), stream);
  copy_async(counts.data() + frames, c.flags, frames * sizeof(std::uint32_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));

  // 2. The dictionaries and codes of the frames that have one, packed in memory of their own.
  dictionary_plan d = plan_dictionaries(host.sources, std::span(counts).first(frames), std::span(counts).subspan(frames),
                                        p.chunks.params.items);
  device_buffer area;
  std::vector<std::uint64_t> piece_at(2 * frames + 1, 0);
  if (!d.pieces.empty()) {
    std::vector<std::uint64_t> const packed_at = layout_frames(packer(), d.pieces);
    std::size_t const pack_temp = packer().encode_temp_bytes(d.pieces);
    area = device_buffer(d.area_bytes + packed_at.back() + pack_temp, stream);
    auto* base = area.as<std::byte>();
    for (std::size_t f = 0; f < frames; ++f) {
      if (d.first_piece[f] == no_piece) continue;
      d.pieces[d.first_piece[f]].values = base + d.values_at[f];
      d.pieces[d.first_piece[f] + 1].values = base + d.codes_at[f];
    }
    std::copy(packed_at.begin(), packed_at.end(), piece_at.begin());
    uploads.put<std::uint64_t>(c.entries, d.entries);
    uploads.put<std::uint64_t>(c.key_at, d.key_at);
    uploads.put<std::uint64_t>(c.values_at, d.values_at);
    uploads.put<std::uint64_t>(c.codes_at, d.codes_at);
    uploads.put<std::uint64_t>(c.code_chunk_begin, d.code_chunk_begin);
    uploads.put<std::uint32_t>(c.first_piece, d.first_piece);
    uploads.send(stream);
    kd::dictionaries const dicts{c.entries, c.key_at, c.keys, c.values_at, c.codes_at, base};
    kd::sort_dictionaries(batch, tables, dicts, stream);
    kd::code_rows(batch, p.chunks, c.code_chunk_begin, d.code_chunk_begin.back(), dicts, stream);
    std::byte* packed = base + d.area_bytes;
    packer().encode_async({d.pieces, packed, packed_at, c.piece_bytes, true}, packed + packed_at.back(), pack_temp,
                          stream);
    // The pieces' offsets are relative to the packed frames, which follow the area.
    for (auto& at : piece_at) at += d.area_bytes;
  } else {
    uploads.put<std::uint64_t>(c.entries, d.entries);
    uploads.put<std::uint32_t>(c.first_piece, d.first_piece);
    uploads.send(stream);
  }

  // 3. Each frame's smaller choice, and its fields.
  uploads.put<std::uint64_t>(c.piece_at, piece_at);
  uploads.send(stream);
  kd::assemble(batch, {c.plain_bytes, c.entries, c.first_piece, area.as<std::byte>(), c.piece_at, c.piece_bytes}, stream);
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
  // begins (check_frame found that each fills its place exactly).
  std::vector<decode_target> pieces;
  std::vector<std::uint64_t> piece_at;
  std::vector<std::uint32_t> owner;
  for (std::size_t f = 0; f < frames; ++f) {
    if (status[f] != frame_status::ok) continue;
    auto const& t = host.targets[f];
    std::uint64_t const payload = host.frame_offsets[f] + frame_header_bytes;
    std::uint64_t const entries = fields[2 * f];
    if (entries == 0) {
      pieces.push_back({t.type, t.count, t.values});
      piece_at.push_back(payload);
    } else {
      pieces.push_back({t.type, entries, c.dictionaries + dictionary_at[f]});
      piece_at.push_back(payload);
      pieces.push_back({dict::code_type(t.type), t.count, t.values});
      piece_at.push_back(payload + dict::main_frame_at(fields[2 * f + 1]));
      owner.push_back(static_cast<std::uint32_t>(f));
    }
    owner.push_back(static_cast<std::uint32_t>(f));
  }
  if (pieces.empty()) return;
  piece_at.push_back(host.frame_offsets[frames]);
  std::size_t const needed = packer().decode_temp_bytes(pieces);
  ZS_EXPECTS(needed <= c.packer_bytes, "the packer's scratch within the dict decoder's");
  packer().decode_async({host.frames, piece_at, pieces, c.piece_status, true}, c.packer_temp, c.packer_bytes, stream);

  // 3. Frames whose embedded frames failed refused; the codes of the others replaced.
  launch_choice const chunks = chunk_choice(host.targets);
  std::vector<std::uint64_t> const chunk_begin = chunks_of(
      host.targets, chunks.params.items, [&](std::size_t f) { return status[f] == frame_status::ok && fields[2 * f] != 0; });
  uploads.put<std::uint64_t>(c.chunk_begin, chunk_begin);
  uploads.put<std::uint32_t>(c.owner, owner);
  uploads.send(stream);
  kd::fold_statuses(batch, c.piece_status, c.owner, pieces.size(), stream);
  kd::replace_codes(batch, chunks, c.chunk_begin, chunk_begin.back(), c.fields, c.dictionaries, c.dictionary_at, stream);
}

}  // namespace zs::codecs
