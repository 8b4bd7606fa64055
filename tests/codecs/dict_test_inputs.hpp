// Inputs of the dict codec's tests, shared by the CPU reference's (tests/codecs/dict_cpu_test.cpp)
// and the GPU's (tests/gpu/dict_gpu_test.cpp): integer columns of every type whose distinct values
// sit below, at and above the encoder's limit, with the types' extremes among them, and frames
// whose fields break the format's rules behind valid checksums.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dict/dict_format.hpp"
#include "zs/codec.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"
#include "zs/types.hpp"

namespace zs::test::dict_inputs {

/// The integer types the codec encodes.
inline constexpr value_type integer_types[] = {value_type::int8,  value_type::int16,  value_type::uint8,
                                               value_type::uint16, value_type::int32,  value_type::int64,
                                               value_type::uint32, value_type::uint64, value_type::bool8};

/// A column of one integer type: its values' bytes (value_width(type) each).
struct input {
  std::string name;
  value_type type = value_type::int32;
  std::uint64_t rows = 0;
  std::vector<std::byte> bytes;
  /// Whether its distinct values are within the encoder's limit (a frame of it may take a
  /// dictionary; whether it does depends on the sizes).
  bool within_limit = false;
};

/// `distinct` values of `type` spread over its range, the smallest and largest among them where
/// there are two or more, as raw bits.
inline std::vector<std::uint64_t> spread_values(value_type type, std::uint64_t distinct, std::mt19937_64& random) {
  std::size_t const width = value_width(type);
  std::uint64_t const mask = width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
  std::uint64_t const flip = dict::key_flip(type);
  std::vector<std::uint64_t> keys;
  if (distinct >= 2) keys = {0, mask};  // the type's least and greatest value
  while (keys.size() < distinct) {
    std::uint64_t const k = random() & mask;
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  for (auto& k : keys) k ^= flip;  // keys back to values' bits
  return keys;
}

inline input column_of(std::string name, value_type type, const std::vector<std::uint64_t>& values) {
  input in{std::move(name), type, values.size(), {}, false};
  std::size_t const width = value_width(type);
  in.bytes.resize(values.size() * width);
  for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(in.bytes.data() + i * width, &values[i], width);
  return in;
}

/// Runs of 1 to `longest` equal rows (their lengths at random; 1: every row drawn on its own),
/// each run's value drawn from `distinct` spread values.
inline input long_runs(value_type type, std::uint64_t rows, std::uint64_t distinct, std::uint64_t longest,
                       std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uint64_t const most = value_width(type) == 1 ? 256 : distinct;
  std::vector<std::uint64_t> const pool = spread_values(type, std::min(distinct, most), random);
  std::vector<std::uint64_t> values;
  values.reserve(rows);
  while (values.size() < rows) {
    std::uint64_t const v = pool[random() % pool.size()];
    std::uint64_t const repeat = longest > 1 ? 1 + random() % longest : 1;
    for (std::uint64_t k = 0; k < repeat && values.size() < rows; ++k) values.push_back(v);
  }
  std::string const name = std::string(to_string(type)) + " " + std::to_string(rows) + " rows of " +
                           std::to_string(pool.size()) + " values" +
                           (longest > 1 ? " in runs of 1 to " + std::to_string(longest) : "");
  input in = column_of(name, type, values);
  std::vector<std::uint64_t> seen(values);
  std::sort(seen.begin(), seen.end());
  in.within_limit = static_cast<std::uint64_t>(std::unique(seen.begin(), seen.end()) - seen.begin()) <=
                    dict::entry_limit(rows);
  return in;
}

/// Rows drawn from `distinct` spread values: at random, or in runs of 1 to 8 equal rows.
inline input few_distinct(value_type type, std::uint64_t rows, std::uint64_t distinct, bool runs, std::uint64_t seed) {
  return long_runs(type, rows, distinct, runs ? 8 : 1, seed);
}

/// Values that change smoothly: a walk whose step changes every 64 to 192 rows (up to `steepest`
/// either way, less for narrow types) with a little noise, wrapping at the type's ends; with
/// `outliers`, one row in 1000 the type's greatest value instead.
inline input smooth(value_type type, std::uint64_t rows, std::uint64_t steepest, bool outliers, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::size_t const width = value_width(type);
  std::uint64_t const mask = width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
  std::uint64_t const steep = std::min(steepest, mask / 8);
  std::uint64_t const greatest = mask ^ dict::key_flip(type);
  std::vector<std::uint64_t> values(rows);
  std::uint64_t v = random() & mask, step = 0, left = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (left == 0) {
      step = random() % (2 * steep + 1) - steep;  // modulo 2^64: a step down wraps as the values do
      left = 64 + random() % 129;
    }
    --left;
    v = (v + step + random() % 7 - 3) & mask;
    values[i] = outliers && random() % 1000 == 0 ? greatest : v;
  }
  return column_of(std::string(to_string(type)) + " " + std::to_string(rows) + " smooth rows" +
                       (outliers ? " with outliers" : ""),
                   type, values);
}

/// Every type at row counts around the limit's steps, with distinct values of 1, 2, 64, the
/// frame's limit and one above it, at random and in runs; a column of distinct rows; long runs of
/// many values (the runs form, across the GPU's chunks); and smooth values, with and without
/// outliers, over a few tiles, a tile and a row, and part of a group (the differences form).
inline std::vector<input> all() {
  std::vector<input> out;
  std::uint64_t seed = 1;
  for (value_type const type : integer_types) {
    for (std::uint64_t const rows : {std::uint64_t{0}, std::uint64_t{15}, std::uint64_t{16}, std::uint64_t{1000},
                                     std::uint64_t{65'539}}) {
      std::uint64_t const limit = dict::entry_limit(rows);
      std::vector<std::uint64_t> counts{1, 2, 64};
      if (limit > 2) counts.push_back(limit);
      if (limit > 0) counts.push_back(limit + 1);
      for (std::uint64_t const distinct : counts) {
        if (rows == 0 && distinct > 1) continue;
        for (bool const runs : {false, true}) out.push_back(few_distinct(type, rows, distinct, runs, seed++));
      }
    }
    std::vector<std::uint64_t> rising(5000);
    for (std::uint64_t i = 0; i < rising.size(); ++i) rising[i] = i * 7919;
    out.push_back(column_of(std::string(to_string(type)) + " 5000 distinct rows", type, rising));
    out.push_back(long_runs(type, 100'003, 5000, 300, seed++));
    out.push_back(long_runs(type, 20'000, 3, 2000, seed++));
    out.push_back(smooth(type, 65'539, 1000, false, seed++));
    out.push_back(smooth(type, 4097, 1000, true, seed++));
    out.push_back(smooth(type, 31, 3, true, seed++));
  }
  return out;
}

// --- frames that break the rules ----------------------------------------------------------

/// Sets a frame's codec parameters and recomputes its checksums.
inline void reseal_with(std::vector<std::byte>& frame, std::uint64_t entries, std::uint64_t dictionary_bytes) {
  frame_header h = load_header(frame.data());
  detail::store_le(h.params.data(), entries, 8);
  detail::store_le(h.params.data() + 8, dictionary_bytes, 8);
  h.payload_checksum = hash::checksum(frame.data() + frame_header_bytes, h.payload_bytes);
  store_header(h, frame.data());
}

/// A dict frame of `type` and `rows` rows put together by hand: form field `form`, its first
/// embedded frame of `first`'s values and its main frame of `main`'s, each packed by bitpack_ext.
inline std::vector<std::byte> hand_made(value_type type, std::uint64_t rows, std::uint64_t form, const input& first,
                                        const input& main) {
  const codec& packer = get_codec(codec_id::bitpack_pfor);
  encode_source const pieces[2] = {{first.type, first.rows, first.bytes.data()}, {main.type, main.rows, main.bytes.data()}};
  std::vector<std::uint64_t> const offsets = layout_frames(packer, pieces);
  std::vector<std::byte> packed(offsets.back());
  std::uint64_t sizes[2] = {0, 0};
  packer.encode_host({pieces, packed.data(), offsets, sizes, true});
  std::uint64_t const main_at = dict::main_frame_at(sizes[0]);
  std::uint64_t const payload = main_at + sizes[1];
  std::vector<std::byte> frame(frame_header_bytes + payload, std::byte{0});
  std::memcpy(frame.data() + frame_header_bytes, packed.data(), sizes[0]);
  std::memcpy(frame.data() + frame_header_bytes + main_at, packed.data() + offsets[1], sizes[1]);
  frame_header h;
  h.codec = codec_id::dict;
  h.type = type;
  h.value_count = rows;
  h.raw_bytes = rows * value_width(type);
  h.payload_bytes = payload;
  store_header(h, frame.data());
  reseal_with(frame, form, sizes[0]);
  return frame;
}

/// A dict frame of `type` put together by hand from `dictionary` and `codes` (raw bits, one
/// value each): the rules the encoder follows do not bind it (the dictionary need not be sorted,
/// codes may point past it).
inline std::vector<std::byte> hand_made_frame(value_type type, const std::vector<std::uint64_t>& dictionary,
                                              const std::vector<std::uint64_t>& codes) {
  return hand_made(type, codes.size(), dictionary.size(), column_of("dictionary", type, dictionary),
                   column_of("codes", dict::code_type(type), codes));
}

/// A dict frame of the runs form put together by hand from `lengths` and `values` (raw bits), its
/// row count `rows`: the lengths need not add up to it.
inline std::vector<std::byte> hand_made_runs(value_type type, const std::vector<std::uint64_t>& lengths,
                                             const std::vector<std::uint64_t>& values, std::uint64_t rows) {
  return hand_made(type, rows, dict::runs_flag | values.size(), column_of("lengths", value_type::uint32, lengths),
                   column_of("values", type, values));
}

/// A dict frame of the differences form put together by hand from `side` (each group's base, then
/// each tile's first value) and `residuals` (raw bits), its row count `rows`: the bases need not
/// be the encoder's, nor the counts right.
inline std::vector<std::byte> hand_made_deltas(value_type type, const std::vector<std::uint64_t>& side,
                                               const std::vector<std::uint64_t>& residuals, std::uint64_t rows) {
  return hand_made(type, rows, dict::deltas_flag, column_of("side", dict::base_type(type), side),
                   column_of("residuals", dict::code_type(type), residuals));
}

/// A frame that breaks one rule, and the status every decoder gives it.
struct bad_frame {
  std::string name;
  std::vector<std::byte> bytes;
  value_type type;
  std::uint64_t rows;
};

/// Frames of int32 rows around a valid hand-made one (4 entries, 64 rows): each breaks one of
/// the rules of docs/FORMAT.md ("Validation (dict)"), all with valid checksums, all refused as
/// corrupt_payload.
inline std::vector<bad_frame> bad_frames() {
  value_type const type = value_type::int32;
  std::vector<std::uint64_t> const dictionary{5, 17, 1000, 123456};
  std::vector<std::uint64_t> codes(64);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = (i * 7) % 4;
  std::vector<std::byte> const good = hand_made_frame(type, dictionary, codes);
  frame_header const h = load_header(good.data());
  std::uint64_t const ld = dict::load_fields(h).dictionary_bytes;
  std::vector<bad_frame> out;
  auto edited = [&](std::string name, std::uint64_t entries, std::uint64_t dictionary_bytes) {
    std::vector<std::byte> f = good;
    reseal_with(f, entries, dictionary_bytes);
    out.push_back({std::move(name), std::move(f), type, codes.size()});
  };
  edited("plain with dictionary bytes", 0, ld);
  edited("more entries than rows", 65, ld);
  edited("fewer entries than its dictionary frame holds", 3, ld);
  edited("dictionary bytes below a header", 4, 63);
  edited("dictionary bytes past the payload", 4, h.payload_bytes + 1);
  edited("dictionary bytes 16 short", 4, ld - 16);
  edited("dictionary bytes 16 long", 4, ld + 16);
  std::vector<std::uint64_t> far(codes);
  far[37] = 4;
  out.push_back({"a code past the dictionary", hand_made_frame(type, dictionary, far), type, codes.size()});
  std::vector<std::byte> too_big = hand_made_frame(type, std::vector<std::uint64_t>(dict::max_entries + 1, 9),
                                                   std::vector<std::uint64_t>(dict::max_entries + 1, 0));
  out.push_back({"more entries than a dictionary may have", std::move(too_big), type, dict::max_entries + 1});
  std::vector<std::byte> cut = good;
  frame_header ch = load_header(cut.data());
  ch.payload_bytes -= 8;  // the codes frame no longer fills its place
  cut.resize(frame_header_bytes + ch.payload_bytes);
  store_header(ch, cut.data());
  reseal_with(cut, dictionary.size(), ld);
  out.push_back({"a codes frame longer than its place", std::move(cut), type, codes.size()});

  // The runs form: 3 runs of 64 rows, around a valid one.
  std::vector<std::uint64_t> const lengths{10, 50, 4}, values{7, 123456, 7};
  std::vector<std::byte> const runs = hand_made_runs(type, lengths, values, 64);
  std::uint64_t const lengths_bytes = dict::load_fields(load_header(runs.data())).dictionary_bytes;
  auto runs_edited = [&](std::string name, std::uint64_t entries, std::uint64_t first_bytes) {
    std::vector<std::byte> f = runs;
    reseal_with(f, entries, first_bytes);
    out.push_back({std::move(name), std::move(f), type, 64});
  };
  runs_edited("no runs", dict::runs_flag, lengths_bytes);
  runs_edited("more runs than rows", dict::runs_flag | 65, lengths_bytes);
  runs_edited("more runs than its frames hold", dict::runs_flag | 4, lengths_bytes);
  runs_edited("fewer runs than its frames hold", dict::runs_flag | 2, lengths_bytes);
  runs_edited("a lengths frame 16 bytes short", dict::runs_flag | 3, lengths_bytes - 16);
  out.push_back({"lengths adding up to a row too few", hand_made_runs(type, {10, 50, 3}, values, 64), type, 64});
  out.push_back({"lengths adding up to a row too many", hand_made_runs(type, {10, 50, 5}, values, 64), type, 64});
  out.push_back({"a run of no rows", hand_made_runs(type, {10, 0, 54}, values, 64), type, 64});
  out.push_back({"lengths past 2^32 rows", hand_made_runs(type, {0xffffffffULL, 0xffffffffULL, 66}, values, 64), type, 64});

  // The differences form: 100 rows (4 groups and a tile), around a valid one.
  std::vector<std::uint64_t> const side{3, 0xfffffffeULL, 0, 9, 1000}, residuals(100, 1);
  std::vector<std::byte> const deltas = hand_made_deltas(type, side, residuals, 100);
  std::uint64_t const side_bytes = dict::load_fields(load_header(deltas.data())).dictionary_bytes;
  auto deltas_edited = [&](std::string name, std::uint64_t entries, std::uint64_t first_bytes) {
    std::vector<std::byte> f = deltas;
    reseal_with(f, entries, first_bytes);
    out.push_back({std::move(name), std::move(f), type, 100});
  };
  deltas_edited("the differences flag with a count", dict::deltas_flag | 1, side_bytes);
  deltas_edited("a bases frame 16 bytes short", dict::deltas_flag, side_bytes - 16);
  out.push_back({"a base short", hand_made_deltas(type, {3, 0xfffffffeULL, 0, 1000}, residuals, 100), type, 100});
  out.push_back({"a first value too many", hand_made_deltas(type, {3, 0xfffffffeULL, 0, 9, 1000, 1}, residuals, 100),
                 type, 100});
  out.push_back({"a residual short", hand_made_deltas(type, side, std::vector<std::uint64_t>(99, 1), 100), type, 100});
  out.push_back({"differences of no rows", hand_made_deltas(type, {}, {}, 0), type, 0});
  std::vector<std::byte> unsigned_bases = hand_made(type, 100, dict::deltas_flag, column_of("side", value_type::uint32, side),
                                                    column_of("residuals", value_type::uint32, residuals));
  out.push_back({"bases of the unsigned type", std::move(unsigned_bases), type, 100});
  return out;
}

}  // namespace zs::test::dict_inputs
