// The dict codec's CPU reference: the bytes the GPU must write and the checks it must make
// (kernels/dict/dict_format.hpp holds both sides' rules).
#include "codecs/dict/dict_codec.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <vector>

#include "codecs/registry.hpp"
#include "dict/dict_format.hpp"
#include "zs/overflow.hpp"

namespace zs::codecs {
namespace {

// Calls fn with a zero of the unsigned integer type of `width` bytes (1, 2, 4 or 8).
template <typename Fn>
decltype(auto) with_unsigned(std::size_t width, Fn&& fn) {
  switch (width) {
    case 1: return fn(std::uint8_t{});
    case 2: return fn(std::uint16_t{});
    case 4: return fn(std::uint32_t{});
    default: return fn(std::uint64_t{});
  }
}

// A frame's dictionary: its distinct values in ascending order (as keys: value bits ^ flip) and
// each row's entry; none where it has more than `limit` distinct values.
template <typename U>
struct dictionary {
  std::vector<U> values;
  std::vector<U> codes;
};

template <typename U>
std::optional<dictionary<U>> dictionary_of(const U* values, std::uint64_t rows, U flip, std::uint64_t limit) {
  if (limit == 0) return std::nullopt;
  std::unordered_set<U> seen;
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (seen.insert(static_cast<U>(values[i] ^ flip)).second && seen.size() > limit) return std::nullopt;
  }
  std::vector<U> keys(seen.begin(), seen.end());
  std::sort(keys.begin(), keys.end());
  dictionary<U> d;
  d.codes.resize(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    auto const at = std::lower_bound(keys.begin(), keys.end(), static_cast<U>(values[i] ^ flip));
    d.codes[i] = static_cast<U>(at - keys.begin());
  }
  d.values.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) d.values[k] = static_cast<U>(keys[k] ^ flip);
  return d;
}

// A frame's runs of equal values: each run's value and length; none where it has more than
// `limit` runs.
template <typename U>
struct runs {
  std::vector<U> values;
  std::vector<std::uint32_t> lengths;
};

template <typename U>
std::optional<runs<U>> runs_of(const U* values, std::uint64_t rows, std::uint64_t limit) {
  if (limit == 0) return std::nullopt;
  runs<U> r;
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (i > 0 && values[i] == values[i - 1]) {
      ++r.lengths.back();
      continue;
    }
    if (r.values.size() == limit) return std::nullopt;
    r.values.push_back(values[i]);
    r.lengths.push_back(1);
  }
  return r;
}

// The differences form's pieces: a base per group then each tile's first value (side), and each
// row's residual: its difference from the row before (the first row's from 0) less its group's
// base, modulo 2^(8 w).
template <typename U>
struct deltas {
  std::vector<U> side;
  std::vector<U> residuals;
};

template <typename U>
deltas<U> deltas_of(const U* values, std::uint64_t rows) {
  constexpr std::uint64_t mask = static_cast<U>(~U{0});
  constexpr std::uint64_t sign = std::uint64_t{1} << (8 * sizeof(U) - 1);
  std::uint64_t const groups = dict::groups_of(rows);
  deltas<U> out;
  out.side.resize(dict::side_count(rows));
  out.residuals.resize(rows);
  for (std::uint64_t g = 0; g < groups; ++g) {
    std::uint64_t const first = g * dict::group_rows;
    auto const count = static_cast<unsigned>(std::min(dict::group_rows, rows - first));
    std::uint64_t d[dict::group_rows];
    for (unsigned k = 0; k < count; ++k) {
      std::uint64_t const i = first + k;
      d[k] = (std::uint64_t{values[i]} - (i == 0 ? 0 : std::uint64_t{values[i - 1]})) & mask;
    }
    std::uint64_t const base = dict::choose_base(d, count, sign, mask);
    out.side[g] = static_cast<U>(base);
    for (unsigned k = 0; k < count; ++k) out.residuals[first + k] = static_cast<U>(d[k] - base);
  }
  for (std::uint64_t t = 0; t < dict::tiles_of(rows); ++t) out.side[groups + t] = values[t * dict::tile_rows];
  return out;
}

// One embedded frame of the packer at `at`, with `room` bytes; returns its bytes.
std::uint64_t pack_embedded(const encode_source& source, std::byte* at, std::uint64_t room) {
  std::uint64_t const offsets[2] = {0, room};
  std::uint64_t bytes = 0;
  dict_codec::packer().encode_host({std::span(&source, 1), at, offsets, &bytes, true});
  return bytes;
}

// Decodes the embedded frame in [at, at + bytes) into `target`; ok or corrupt_payload.
frame_status unpack_embedded(const std::byte* at, std::uint64_t bytes, const decode_target& target) {
  std::uint64_t const offsets[2] = {0, bytes};
  frame_status status = frame_status::not_decoded;
  dict_codec::packer().decode_host({at, offsets, std::span(&target, 1), &status, true});
  return status == frame_status::ok ? frame_status::ok : frame_status::corrupt_payload;
}

// A form of two embedded frames, packed: the first at 0, the main one at main_frame_at of the
// first's bytes, zeros between.
struct packed_form {
  std::vector<std::byte> bytes;
  std::uint64_t first_bytes = 0;
  std::uint64_t payload_bytes = 0;
};

packed_form pack_form(const encode_source& first, const encode_source& main) {
  packed_form out;
  std::uint64_t const first_room = dict_codec::packer().max_frame_bytes(first);
  out.bytes.assign(align_frame(first_room) + dict_codec::packer().max_frame_bytes(main), std::byte{0});
  out.first_bytes = pack_embedded(first, out.bytes.data(), first_room);
  std::uint64_t const main_at = dict::main_frame_at(out.first_bytes);
  out.payload_bytes = main_at + pack_embedded(main, out.bytes.data() + main_at, out.bytes.size() - main_at);
  return out;
}

}  // namespace

const codec& dict_codec::packer() { return get_codec(codec_id::bitpack_pfor); }

bool dict_codec::supports(value_type type) const noexcept { return dict::encodes(type); }

std::uint64_t dict_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // The plain body, one embedded frame, is the largest a frame takes (a dictionary is written
  // only where it is smaller).
  std::uint64_t const inner = packer().max_frame_bytes(source);
  return add_overflows(inner, frame_header_bytes) ? UINT64_MAX : frame_header_bytes + inner;
}

void dict_codec::encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t capacity) const {
  std::byte* payload = frame + frame_header_bytes;
  std::uint64_t const plain_bytes = pack_embedded(source, payload, capacity - frame_header_bytes);
  dict::fields chosen;
  std::uint64_t payload_bytes = plain_bytes;
  // A form replaces the one so far where its payload is strictly smaller.
  auto const take = [&](const packed_form& form, std::uint64_t entries) {
    if (form.payload_bytes >= payload_bytes) return;
    std::memcpy(payload, form.bytes.data(), form.payload_bytes);
    chosen = {entries, form.first_bytes};
    payload_bytes = form.payload_bytes;
  };
  with_unsigned(value_width(source.type), [&](auto zero) {
    using U = decltype(zero);
    const U* values = static_cast<const U*>(source.values);
    if (auto const d = dictionary_of(values, source.count, static_cast<U>(dict::key_flip(source.type)),
                                     dict::entry_limit(source.count))) {
      take(pack_form({source.type, d->values.size(), d->values.data()},
                     {dict::code_type(source.type), source.count, d->codes.data()}),
           d->values.size());
    }
    if (auto const r = runs_of(values, source.count, dict::max_runs(source.count))) {
      take(pack_form({value_type::uint32, r->lengths.size(), r->lengths.data()},
                     {source.type, r->values.size(), r->values.data()}),
           dict::runs_flag | r->values.size());
    }
    if (dict::tries_deltas(source.count)) {
      auto const d = deltas_of(values, source.count);
      take(pack_form({dict::base_type(source.type), d.side.size(), d.side.data()},
                     {dict::code_type(source.type), source.count, d.residuals.data()}),
           dict::deltas_flag);
    }
    return 0;
  });
  dict::store_fields(frame, chosen, payload_bytes);
}

frame_status dict_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                             const decode_target& target) const {
  if (frame_status const status = dict::check_frame(header, payload); status != frame_status::ok) return status;
  dict::fields const f = dict::load_fields(header);
  std::uint64_t const main_at = f.plain() ? 0 : dict::main_frame_at(f.dictionary_bytes);
  std::uint64_t const main_bytes = header.payload_bytes - main_at;
  if (f.plain()) return unpack_embedded(payload, main_bytes, target);
  if (f.runs()) {
    // Both embedded frames, and the lengths (each at least 1, adding up to n), checked before
    // the target is written.
    return with_unsigned(value_width(header.type), [&](auto zero) {
      using U = decltype(zero);
      std::uint64_t const r = f.run_count();
      std::vector<std::uint32_t> lengths(r);
      std::vector<U> values(r);
      frame_status status = unpack_embedded(payload, main_at, {value_type::uint32, r, lengths.data()});
      if (status == frame_status::ok) status = unpack_embedded(payload + main_at, main_bytes, {header.type, r, values.data()});
      if (status != frame_status::ok) return status;
      std::uint64_t rows = 0;
      for (std::uint32_t const l : lengths) {
        if (l == 0) return frame_status::corrupt_payload;
        rows += l;
      }
      if (rows != header.value_count) return frame_status::corrupt_payload;
      U* out = static_cast<U*>(target.values);
      for (std::uint64_t k = 0; k < r; ++k) out = std::fill_n(out, lengths[k], values[k]);
      return frame_status::ok;
    });
  }
  if (f.deltas()) {
    // Row i: a tile's first value where a tile starts, else the row before plus its group's base
    // and its residual (modulo 2^(8 w)).
    return with_unsigned(value_width(header.type), [&](auto zero) {
      using U = decltype(zero);
      std::uint64_t const n = header.value_count;
      std::uint64_t const groups = dict::groups_of(n);
      std::vector<U> side(dict::side_count(n)), residuals(n);
      frame_status status = unpack_embedded(payload, main_at, {dict::base_type(header.type), side.size(), side.data()});
      if (status == frame_status::ok) {
        status = unpack_embedded(payload + main_at, main_bytes, {dict::code_type(header.type), n, residuals.data()});
      }
      if (status != frame_status::ok) return status;
      U* out = static_cast<U*>(target.values);
      U value = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        value = i % dict::tile_rows == 0 ? side[groups + i / dict::tile_rows]
                                         : static_cast<U>(value + side[i / dict::group_rows] + residuals[i]);
        out[i] = value;
      }
      return frame_status::ok;
    });
  }
  // A dictionary frame: both embedded frames and every code checked before the target is written.
  return with_unsigned(value_width(header.type), [&](auto zero) {
    using U = decltype(zero);
    std::vector<U> values(f.entries), codes(header.value_count);
    frame_status status = unpack_embedded(payload, main_at, {header.type, f.entries, values.data()});
    if (status == frame_status::ok) {
      status = unpack_embedded(payload + main_at, main_bytes, {dict::code_type(header.type), header.value_count, codes.data()});
    }
    if (status != frame_status::ok) return status;
    if (std::any_of(codes.begin(), codes.end(), [&](U c) { return c >= f.entries; })) return frame_status::corrupt_payload;
    U* out = static_cast<U*>(target.values);
    for (std::uint64_t i = 0; i < header.value_count; ++i) out[i] = values[codes[i]];
    return frame_status::ok;
  });
}

ZS_REGISTER_CODEC(dict_codec)

}  // namespace zs::codecs
