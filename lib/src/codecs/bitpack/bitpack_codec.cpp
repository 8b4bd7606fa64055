// The bitpack codec on the CPU: the reference encoders and decoders of for, dfor, rfor and of
// their variants pfor, pdfor (patched miniblocks) and drfor (runs of differences).
//
// Written serially and plainly, block after block, as the executable form of docs/FORMAT.md.
// The GPU encoder (kernels/bitpack) is an independent implementation that must produce the
// same bytes; the validation rules are shared (bitpack_format.hpp).
#include "codecs/bitpack/bitpack_codec.hpp"
#include "codecs/registry.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <vector>

#include "bitpack/bitpack_format.hpp"
#include "zs/error.hpp"

namespace zs::codecs {

static_assert(std::endian::native == std::endian::little,
              "the CPU reference reads and writes little-endian words as they are");

namespace {

using bitpack::scheme;
using words = std::vector<std::uint32_t>;

// Appends bit fields LSB first to a word vector; align() makes the next field start a word.
class bit_writer {
 public:
  explicit bit_writer(words& out) : out_(out) {}

  void put(std::uint64_t value, std::uint32_t bits) {
    while (bits > 0) {
      if (used_ == 0) out_.push_back(0);
      std::uint32_t const take = std::min(bits, 32 - used_);
      out_.back() |= static_cast<std::uint32_t>((value & bitpack::low_mask(take)) << used_);
      value = take == 64 ? 0 : value >> take;
      bits -= take;
      used_ = (used_ + take) % 32;
    }
  }
  void align() noexcept { used_ = 0; }

 private:
  words& out_;
  std::uint32_t used_ = 0;
};

// One scheme's payload: the block starts, then the data section.
struct encoding {
  words starts;
  words data;
  std::uint64_t payload_bytes() const noexcept { return 4 * (starts.size() + data.size()); }
};

template <typename U>
void put_reference(words& data, U ref) {
  data.push_back(static_cast<std::uint32_t>(ref));
  if constexpr (sizeof(U) == 8) data.push_back(static_cast<std::uint32_t>(ref >> 32));
}

template <typename U>
U get_reference(const std::uint32_t* p) {
  if constexpr (sizeof(U) == 8) return static_cast<U>(p[0]) | (static_cast<U>(p[1]) << 32);
  return static_cast<U>(p[0]);
}

template <typename U>
constexpr U sign_bit = U{1} << (8 * sizeof(U) - 1);

// The start of a block, as a 32-bit word offset; sections too large for one are never chosen
// (pick_scheme refuses them), so truncation here cannot reach a frame.
std::uint32_t start_of(const words& data) { return static_cast<std::uint32_t>(data.size()); }

// One for-block of the fields offset(p) for p in [lo, lo + 128), with reference `ref`; offsets of
// positions that hold no value are 0. `valid(p)` says which positions hold values. `patched`
// writes a pfor block instead: each miniblock's offsets without the trailing zeros they all
// share, at the low width that makes the miniblock smallest, the fields above that width patched
// from the exception section.
template <typename U, typename Offset, typename Valid>
void put_block(encoding& e, U ref, std::uint64_t lo, Offset offset, Valid valid, bool patched) {
  U o[bitpack::block_values];
  for (std::uint32_t k = 0; k < bitpack::block_values; ++k) o[k] = valid(lo + k) ? offset(lo + k) : U{0};
  std::uint32_t low = 0, full = 0, shifts = 0;
  for (std::uint32_t j = 0; patched && j < bitpack::miniblocks; ++j) {
    U any = 0;
    for (std::uint32_t k = 32 * j; k < 32 * j + 32; ++k) any |= o[k];
    std::uint32_t const shift = any == 0 ? 0U : static_cast<std::uint32_t>(std::countr_zero(any));
    for (std::uint32_t k = 32 * j; k < 32 * j + 32; ++k) o[k] = static_cast<U>(o[k] >> shift);
    shifts |= shift << (8 * j);
  }
  for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
    U most = 0;
    for (std::uint32_t k = 32 * j; k < 32 * j + 32; ++k) most = std::max(most, o[k]);
    std::uint32_t const b_full = bitpack::bit_width(most);
    std::uint32_t b_low = b_full;
    if (patched) {
      // at_least[b]: the offsets of more than b bits, the exceptions at low width b.
      std::uint32_t at_least[65] = {};
      for (std::uint32_t k = 32 * j; k < 32 * j + 32; ++k) {
        for (std::uint32_t b = 0; b < bitpack::bit_width(o[k]); ++b) ++at_least[b];
      }
      b_low = bitpack::best_low_width(at_least, b_full);
    }
    low |= b_low << (8 * j);
    full |= b_full << (8 * j);
  }
  e.starts.push_back(start_of(e.data));
  put_reference(e.data, ref);
  e.data.push_back(low);
  if (patched) {
    e.data.push_back(full);
    e.data.push_back(shifts);
  }
  bit_writer out(e.data);
  for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
    std::uint32_t const b = bitpack::width_of(low, j);
    // 32 fields of b bits fill exactly b words, so every miniblock ends on a word; put() keeps
    // the low b bits of an exception.
    for (std::uint32_t k = 32 * j; k < 32 * j + 32; ++k) out.put(o[k], b);
  }
  if (!patched) return;
  auto const is_exception = [&](std::uint32_t j, std::uint32_t k) {
    return bitpack::bit_width(o[32 * j + k]) > bitpack::width_of(low, j);
  };
  for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
    if (bitpack::width_of(full, j) == bitpack::width_of(low, j)) continue;
    std::uint32_t bitmap = 0;
    for (std::uint32_t k = 0; k < 32; ++k) bitmap |= is_exception(j, k) ? 1U << k : 0U;
    e.data.push_back(bitmap);
  }
  for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
    std::uint32_t const b = bitpack::width_of(low, j);
    std::uint32_t const high_bits = bitpack::width_of(full, j) - b;
    if (high_bits == 0) continue;
    for (std::uint32_t k = 0; k < 32; ++k) {
      if (is_exception(j, k)) out.put(o[32 * j + k] >> b, high_bits);
    }
    out.align();
  }
}

// for (pfor with `patched`): the reference of a block is its minimum in the type's order
// (`flip` maps that order to the unsigned one); offsets are differences modulo 2^w.
template <typename U>
encoding encode_for(const U* x, std::uint64_t n, U flip, bool patched) {
  encoding e;
  for (std::uint64_t lo = 0; lo < n; lo += bitpack::block_values) {
    std::uint64_t const hi = std::min<std::uint64_t>(n, lo + bitpack::block_values);
    U key = std::numeric_limits<U>::max();
    for (std::uint64_t p = lo; p < hi; ++p) key = std::min<U>(key, x[p] ^ flip);
    U const ref = key ^ flip;
    put_block<U>(e, ref, lo, [&](std::uint64_t p) { return static_cast<U>(x[p] - ref); },
                 [&](std::uint64_t p) { return p < hi; }, patched);
  }
  return e;
}

// dfor (pdfor with `patched`): per tile of 512 values the first value, then for-blocks (pfor
// blocks) of the differences of consecutive values; the tile's first position holds no
// difference. Differences are ordered as signed w-bit integers whatever the column's type, so
// small steps down stay small.
template <typename U>
encoding encode_dfor(const U* x, std::uint64_t n, bool patched) {
  encoding e;
  for (std::uint64_t t = 0; t < n; t += bitpack::segment_values) {
    std::uint64_t const tile_end = std::min<std::uint64_t>(n, t + bitpack::segment_values);
    put_reference(e.data, x[t]);
    auto const delta = [&](std::uint64_t p) { return static_cast<U>(x[p] - x[p - 1]); };
    for (std::uint64_t lo = t; lo < tile_end; lo += bitpack::block_values) {
      std::uint64_t const hi = std::min<std::uint64_t>(tile_end, lo + bitpack::block_values);
      auto const valid = [&](std::uint64_t p) { return p > t && p < hi; };
      bool any = false;
      U key = std::numeric_limits<U>::max();
      for (std::uint64_t p = lo; p < hi; ++p) {
        if (valid(p)) {
          key = std::min<U>(key, delta(p) ^ sign_bit<U>);
          any = true;
        }
      }
      U const ref = any ? static_cast<U>(key ^ sign_bit<U>) : U{0};
      put_block<U>(e, ref, lo, [&](std::uint64_t p) { return static_cast<U>(delta(p) - ref); }, valid, patched);
    }
  }
  return e;
}

// rfor: per block of 512 values, the runs of equal values: run values as for with one width,
// run lengths minus the shortest with one width, each stream starting on a word. drfor (with
// `delta`): the run values as the first one, then the differences of consecutive run values
// from their least (ordered as signed, as dfor's), which a sorted column keeps small; and the
// lengths of all runs but the last, which takes the positions left.
template <typename U>
encoding encode_rfor(const U* x, std::uint64_t n, U flip, bool delta) {
  encoding e;
  std::vector<U> values;
  std::vector<std::uint32_t> lengths;
  for (std::uint64_t lo = 0; lo < n; lo += bitpack::rfor_block_values) {
    std::uint64_t const hi = std::min<std::uint64_t>(n, lo + bitpack::rfor_block_values);
    values.clear();
    lengths.clear();
    for (std::uint64_t p = lo; p < hi; ++p) {
      if (p == lo || x[p] != x[p - 1]) {
        values.push_back(x[p]);
        lengths.push_back(1);
      } else {
        ++lengths.back();
      }
    }
    U low = std::numeric_limits<U>::max(), high = 0;
    for (U v : values) {
      low = std::min<U>(low, v ^ flip);
      high = std::max<U>(high, v ^ flip);
    }
    U const ref = low ^ flip;
    auto const runs = static_cast<std::uint32_t>(values.size());
    std::uint32_t const stored = bitpack::stored_lengths(delta ? scheme::drfor : scheme::rfor, runs);
    std::uint32_t shortest = 1, longest = 1;  // with no length stored: 1 and width 0
    if (stored > 0) {
      auto const [s, l] = std::minmax_element(lengths.begin(), lengths.begin() + stored);
      shortest = *s, longest = *l;
    }
    bitpack::rfor_header h{runs, shortest, bitpack::bit_width(static_cast<U>(high - low)),
                           bitpack::bit_width(longest - shortest)};
    // drfor: the differences of consecutive run values, from the least in signed order.
    auto const step = [&](std::size_t k) { return static_cast<U>(values[k] - values[k - 1]); };
    U step_ref = 0, step_most = 0;
    if (delta && values.size() > 1) {
      U key = std::numeric_limits<U>::max();
      for (std::size_t k = 1; k < values.size(); ++k) key = std::min<U>(key, step(k) ^ sign_bit<U>);
      step_ref = static_cast<U>(key ^ sign_bit<U>);
      for (std::size_t k = 1; k < values.size(); ++k) step_most = std::max<U>(step_most, static_cast<U>(step(k) - step_ref));
      h.value_bits = bitpack::bit_width(step_most);
      h.step_in_header = bitpack::step_fits_header(runs, step_ref);
      h.step = static_cast<std::uint32_t>(step_ref);
    } else if (delta) {
      h.value_bits = 0;
    }
    e.starts.push_back(start_of(e.data));
    e.data.push_back(bitpack::pack_rfor_header(h));
    bit_writer out(e.data);
    if (delta) {
      put_reference(e.data, values[0]);
      // One run: no differences, no reference; two runs whose step is small: the header holds it.
      if (values.size() > 1 && !h.step_in_header) put_reference(e.data, step_ref);
      for (std::size_t k = 1; k < values.size(); ++k) out.put(static_cast<U>(step(k) - step_ref), h.value_bits);
    } else {
      put_reference(e.data, ref);
      for (U v : values) out.put(static_cast<U>(v - ref), h.value_bits);
    }
    out.align();
    for (std::uint32_t k = 0; k < stored; ++k) out.put(lengths[k] - h.min_length, h.length_bits);
    out.align();
  }
  return e;
}

// Every coded scheme's encoding, in the order of bitpack::coded_scheme.
using encodings = std::array<encoding, bitpack::coded_schemes>;

template <typename U>
encodings encode_all(const U* x, std::uint64_t count, value_type type) {
  U const flip = bitpack::is_signed_type(type) ? sign_bit<U> : U{0};
  return {encode_for<U>(x, count, flip, false), encode_dfor<U>(x, count, false),
          encode_rfor<U>(x, count, flip, false),  encode_for<U>(x, count, flip, true),
          encode_dfor<U>(x, count, true),         encode_rfor<U>(x, count, flip, true)};
}

// A narrow column's 32-bit widening (sign-extended for int8 and int16), which the schemes code.
template <typename Narrow>
std::vector<std::uint32_t> widen(const void* values, std::uint64_t count) {
  auto const* x = static_cast<const Narrow*>(values);
  std::vector<std::uint32_t> wide(count);
  for (std::uint64_t i = 0; i < count; ++i) wide[i] = static_cast<std::uint32_t>(x[i]);
  return wide;
}

std::vector<std::uint32_t> widen(const encode_source& s) {
  switch (s.type) {
    case value_type::int8: return widen<std::int8_t>(s.values, s.count);
    case value_type::int16: return widen<std::int16_t>(s.values, s.count);
    case value_type::uint8:
    case value_type::bool8: return widen<std::uint8_t>(s.values, s.count);
    case value_type::uint16: return widen<std::uint16_t>(s.values, s.count);
    default: ZS_FAIL(error_code::internal, "widen: " + std::string(to_string(s.type)) + " is no narrow type");
  }
}

encodings encode_all(const encode_source& s) {
  if (bitpack::is_narrow_type(s.type)) return encode_all<std::uint32_t>(widen(s).data(), s.count, s.type);
  if (value_width(s.type) == 8) return encode_all<std::uint64_t>(static_cast<const std::uint64_t*>(s.values), s.count, s.type);
  return encode_all<std::uint32_t>(static_cast<const std::uint32_t*>(s.values), s.count, s.type);
}

// --- decoding --------------------------------------------------------------------------------

template <typename U>
void decode_for_blocks(const bitpack::frame_layout& f, const std::uint32_t* starts,
                       const std::uint32_t* data, U* out) {
  std::uint32_t const rw = bitpack::reference_words(f.width_bits);
  bool const delta = f.kind == scheme::dfor;
  for (std::uint64_t i = 0; i < f.blocks; ++i) {
    const std::uint32_t* block = data + starts[i];
    std::uint64_t const lo = i * bitpack::block_values;
    std::uint64_t const tile = lo - lo % bitpack::segment_values;
    if (delta && lo == tile) out[tile] = get_reference<U>(block - rw);
    U const ref = get_reference<U>(block);
    std::uint32_t const widths = block[rw];
    const std::uint32_t* mini = block + rw + 1;
    for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
      std::uint32_t const b = bitpack::width_of(widths, j);
      for (std::uint32_t k = 0; k < bitpack::miniblock_values; ++k) {
        std::uint64_t const p = lo + 32 * j + k;
        if (p >= f.count) break;
        auto const o = static_cast<U>(bitpack::read_field(mini, std::uint64_t{k} * b, b));
        if (!delta) {
          out[p] = static_cast<U>(ref + o);
        } else if (p != tile) {
          out[p] = static_cast<U>(out[p - 1] + ref + o);
        }
      }
      mini += b;
    }
  }
}

// pfor and pdfor: a block's offsets are its low fields with the exceptions' high bits put
// back, shifted left by their miniblock's shift, then values as for and dfor make them.
template <typename U>
void decode_patched_blocks(const bitpack::frame_layout& f, const std::uint32_t* starts,
                           const std::uint32_t* data, U* out) {
  std::uint32_t const rw = bitpack::reference_words(f.width_bits);
  bool const delta = f.kind == scheme::pdfor;
  for (std::uint64_t i = 0; i < f.blocks; ++i) {
    const std::uint32_t* block = data + starts[i];
    std::uint64_t const lo = i * bitpack::block_values;
    std::uint64_t const tile = lo - lo % bitpack::segment_values;
    U const ref = get_reference<U>(block);
    std::uint32_t const low = block[rw], full = block[rw + 1], shifts = block[rw + 2];
    U o[bitpack::block_values];
    const std::uint32_t* mini = block + bitpack::patched_head_words(f.width_bits);
    for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) {
      std::uint32_t const b = bitpack::width_of(low, j);
      for (std::uint32_t k = 0; k < bitpack::miniblock_values; ++k) {
        o[32 * j + k] = static_cast<U>(bitpack::read_field(mini, std::uint64_t{k} * b, b));
      }
      mini += b;
    }
    const std::uint32_t* bitmaps = mini;
    std::uint32_t patched = 0;
    for (std::uint32_t j = 0; j < bitpack::miniblocks; ++j) patched += bitpack::width_of(full, j) > bitpack::width_of(low, j);
    const std::uint32_t* highs = bitmaps + patched;
    for (std::uint32_t j = 0, m = 0; j < bitpack::miniblocks; ++j) {
      std::uint32_t const b = bitpack::width_of(low, j), high_bits = bitpack::width_of(full, j) - b;
      if (high_bits == 0) continue;
      std::uint32_t const bitmap = bitmaps[m++];
      std::uint64_t e = 0;
      for (std::uint32_t k = 0; k < bitpack::miniblock_values; ++k) {
        if (((bitmap >> k) & 1U) == 0) continue;
        o[32 * j + k] |= static_cast<U>(static_cast<U>(bitpack::read_field(highs, e * high_bits, high_bits)) << b);
        ++e;
      }
      highs += bitpack::field_words(e, high_bits);
    }
    for (std::uint32_t k = 0; k < bitpack::block_values; ++k) {
      o[k] = static_cast<U>(o[k] << bitpack::width_of(shifts, k / bitpack::miniblock_values));
    }
    if (delta && lo == tile) out[tile] = get_reference<U>(block - rw);
    for (std::uint32_t k = 0; k < bitpack::block_values && lo + k < f.count; ++k) {
      std::uint64_t const p = lo + k;
      if (!delta) {
        out[p] = static_cast<U>(ref + o[k]);
      } else if (p != tile) {
        out[p] = static_cast<U>(out[p - 1] + ref + o[k]);
      }
    }
  }
}

// rfor and drfor: each run's value written over its length; drfor's run values are the prefix
// sums of their differences from the first.
template <typename U>
void decode_rfor_blocks(const bitpack::frame_layout& f, const std::uint32_t* starts,
                        const std::uint32_t* data, U* out) {
  std::uint32_t const rw = bitpack::reference_words(f.width_bits);
  bool const delta = f.kind == scheme::drfor;
  for (std::uint64_t i = 0; i < f.blocks; ++i) {
    const std::uint32_t* block = data + starts[i];
    bitpack::rfor_header const h = bitpack::unpack_run_header(f.kind, block[0]);
    U const ref = get_reference<U>(block + 1);  // drfor: the first run value
    U const step_ref = !delta || h.runs == 1 ? U{0}
                       : h.step_in_header ? static_cast<U>(h.step)
                                          : get_reference<U>(block + 1 + rw);
    const std::uint32_t* values = block + (delta ? bitpack::drfor_head_words(h, f.width_bits) : 1 + rw);
    const std::uint32_t* lengths = block + bitpack::run_lengths_at(f.kind, h, f.width_bits);
    std::uint64_t const first = i * bitpack::rfor_block_values;
    std::uint64_t const end = std::min<std::uint64_t>(f.count, first + bitpack::rfor_block_values);
    std::uint64_t p = first;
    U v = ref;
    for (std::uint32_t k = 0; k < h.runs; ++k) {
      if (!delta) {
        v = static_cast<U>(ref + bitpack::read_field(values, std::uint64_t{k} * h.value_bits, h.value_bits));
      } else if (k > 0) {
        v = static_cast<U>(v + step_ref + bitpack::read_field(values, std::uint64_t{k - 1} * h.value_bits, h.value_bits));
      }
      // drfor's last run takes the positions left (validation saw the others leave some).
      std::uint64_t const length =
          k < bitpack::stored_lengths(f.kind, h.runs)
              ? h.min_length + bitpack::read_field(lengths, std::uint64_t{k} * h.length_bits, h.length_bits)
              : end - p;
      for (std::uint64_t l = 0; l < length; ++l) out[p++] = v;
    }
  }
}

template <typename U>
std::vector<U> decode_blocks(const bitpack::frame_layout& f, const std::uint32_t* starts, const std::uint32_t* data) {
  std::vector<U> out(f.count);
  if (bitpack::is_run_scheme(f.kind)) {
    decode_rfor_blocks<U>(f, starts, data, out.data());
  } else if (bitpack::is_patched(f.kind)) {
    decode_patched_blocks<U>(f, starts, data, out.data());
  } else {
    decode_for_blocks<U>(f, starts, data, out.data());
  }
  return out;
}

// Writes decoded 32-bit words as the narrow values they widen; false, writing nothing, when
// one of them is no such widening (a corrupt frame, never a silent truncation).
template <typename Narrow>
bool narrow_into(value_type type, const std::vector<std::uint32_t>& wide, void* target) {
  for (std::uint32_t v : wide) {
    if (!bitpack::fits_type(type, v)) return false;
  }
  auto* out = static_cast<Narrow*>(target);
  for (std::size_t i = 0; i < wide.size(); ++i) out[i] = static_cast<Narrow>(wide[i]);
  return true;
}

bool narrow_into(value_type type, const std::vector<std::uint32_t>& wide, void* target) {
  switch (type) {
    case value_type::int8: return narrow_into<std::int8_t>(type, wide, target);
    case value_type::int16: return narrow_into<std::int16_t>(type, wide, target);
    case value_type::uint8:
    case value_type::bool8: return narrow_into<std::uint8_t>(type, wide, target);
    case value_type::uint16: return narrow_into<std::uint16_t>(type, wide, target);
    default: return false;
  }
}

}  // namespace

std::uint64_t bitpack_codec::max_frame_bytes(const encode_source& source) const noexcept {
  // Raw is always among the candidates and ties go to it, so no frame is larger than raw.
  return frame_header_bytes + source.raw_bytes();
}

std::array<std::uint64_t, bitpack_codec::scheme_ids> bitpack_codec::scheme_payload_bytes(const encode_source& source) {
  ZS_EXPECTS(is_integer(source.type), "an integer source");
  ZS_EXPECTS(source.count == 0 || source.values != nullptr, "values for a non-empty source");
  auto const all = encode_all(source);
  std::array<std::uint64_t, scheme_ids> bytes;
  bytes.fill(~std::uint64_t{0});
  bytes[0] = source.raw_bytes();
  for (int i = 0; i < bitpack::coded_schemes; ++i) {
    auto const s = bitpack::coded_scheme(i);
    bytes[static_cast<int>(s)] = bitpack::scheme_payload_bytes(s, source.count, all[i].data.size());
  }
  return bytes;
}

void bitpack_codec::encode_payload_host(const encode_source& source, std::byte* frame,
                                        std::uint64_t /*capacity*/) const {
  auto const all = encode_all(source);
  std::uint64_t data_words[bitpack::coded_schemes];
  for (int i = 0; i < bitpack::coded_schemes; ++i) data_words[i] = all[i].data.size();
  std::uint64_t const classic[3] = {data_words[0], data_words[1], data_words[2]};  // for, dfor, rfor
  scheme const best = schemes_ == bitpack_schemes::extended
                          ? bitpack::pick_scheme(source.count, source.raw_bytes(), data_words)
                          : bitpack::pick_scheme(source.count, source.raw_bytes(), classic);
  std::byte* payload = frame + frame_header_bytes;
  if (best == scheme::raw) {
    if (source.raw_bytes() != 0) std::memcpy(payload, source.values, source.raw_bytes());
    bitpack::store_scheme_fields(frame, scheme::raw, source.raw_bytes(), 0);
    return;
  }
  int index = 0;
  while (bitpack::coded_scheme(index) != best) ++index;
  encoding const& e = all[index];
  std::memcpy(payload, e.starts.data(), 4 * e.starts.size());
  std::memcpy(payload + 4 * e.starts.size(), e.data.data(), 4 * e.data.size());
  bitpack::store_scheme_fields(frame, best, e.payload_bytes(), e.data.size());
}

frame_status bitpack_codec::decode_payload_host(const frame_header& header, const std::byte* payload,
                                                const decode_target& target) const {
  // (A frame whose id is not in decodes() never gets here: the base class refuses it.)
  bitpack::frame_layout layout;
  frame_status const status = bitpack::read_layout(header, layout);
  if (status != frame_status::ok) return status;
  if (layout.kind == scheme::raw) {
    if (header.raw_bytes != 0) std::memcpy(target.values, payload, header.raw_bytes);
    return frame_status::ok;
  }
  // An aligned copy of the payload's words; then every block is checked before anything is
  // written, so a corrupt frame leaves the target as it was.
  words w(header.payload_bytes / 4);
  if (!w.empty()) std::memcpy(w.data(), payload, header.payload_bytes);
  const std::uint32_t* starts = w.data();
  const std::uint32_t* data = w.data() + layout.blocks;
  for (std::uint64_t s = 0; s < bitpack::segment_count(layout.count); ++s) {
    if (!bitpack::segment_is_valid(layout, starts, data, s)) return frame_status::corrupt_payload;
  }
  if (bitpack::is_narrow_type(header.type)) {
    auto const wide = decode_blocks<std::uint32_t>(layout, starts, data);
    return narrow_into(header.type, wide, target.values) ? frame_status::ok : frame_status::corrupt_payload;
  }
  if (layout.width_bits == 64) {
    auto const out = decode_blocks<std::uint64_t>(layout, starts, data);
    if (!out.empty()) std::memcpy(target.values, out.data(), out.size() * sizeof(std::uint64_t));
  } else {
    auto const out = decode_blocks<std::uint32_t>(layout, starts, data);
    if (!out.empty()) std::memcpy(target.values, out.data(), out.size() * sizeof(std::uint32_t));
  }
  return frame_status::ok;
}

ZS_REGISTER_CODEC(bitpack_codec)

namespace {
[[maybe_unused]] const bool registered_extended = [] {
  static const bitpack_codec extended(bitpack_schemes::extended);
  register_codec(extended);
  return true;
}();
}  // namespace

}  // namespace zs::codecs
