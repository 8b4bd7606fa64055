// The GPU encoder's and decoder's warp programs, run on the CPU by an emulated warp
// (warp_emulator.hpp) in the order bitpack_kernels.cu launches them. CI has no GPU: this is
// where it checks the GPU logic, against the CPU reference, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bitpack/warp_programs.hpp"
#include "codecs/bitpack/bitpack_codec.hpp"
#include "bitpack_test_inputs.hpp"
#include "warp_emulator.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

namespace bp = zs::bitpack;
namespace gp = zs::bitpack::gpu;
using zs::kernels::chunk_prefix;

const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }

// A codec of the extended schemes (pfor, pdfor, drfor besides for, dfor, rfor).
const zs::codecs::bitpack_codec& extended() {
  static const zs::codecs::bitpack_codec codec(zs::codecs::bitpack_schemes::extended);
  return codec;
}
// A codec of the classic schemes (for, dfor, rfor), for the tests written around their choices.
const zs::codecs::bitpack_codec& classic() {
  static const zs::codecs::bitpack_codec codec(zs::codecs::bitpack_schemes::classic);
  return codec;
}
// Whether frames of `codec` choose among the extended schemes.
bool chooses_extended(const zs::codec& codec) {
  return (codec.decodes() & zs::codec_bit(zs::codec_id::bitpack_pfor)) != 0;
}

// The width class of an integer type, as the GPU host code forms them: narrow types run with
// the 32-bit ones.
std::size_t class_width(zs::value_type type) {
  return zs::is_integer(type) ? bp::width_bits_of(type) / 8 : 0;
}

std::vector<std::uint64_t> class_map(std::span<const std::uint64_t> segments,
                                     std::span<const std::size_t> widths, std::size_t width,
                                     std::uint64_t per_chunk) {
  std::vector<std::uint64_t> items(segments.size());
  for (std::size_t f = 0; f < segments.size(); ++f) items[f] = widths[f] == width ? segments[f] : 0;
  return chunk_prefix(items, per_chunk);
}

// The sequence of bitpack_kernels.cu's encode() and decode(), and of the base class's steps
// around them, with the warp programs emulated.
struct emulated {
  using emu = zs::test::warp_emulator;
  using warp = emu::warp;

  // `guess`, where given, replaces the sample pass's per-frame sizes before pass 1.
  // (The extended codec's sizes of pfor, pdfor and drfor are the second vector.)
  using guess_hook = std::function<void(std::vector<gp::scheme_words>&, std::vector<gp::scheme_words>&)>;
  static std::vector<std::uint64_t> encode(std::span<const zs::encode_source> sources, std::byte* frames,
                                           std::span<const std::uint64_t> offsets, const guess_hook& guess = {},
                                           const zs::codec& codec = bitpack()) {
    std::size_t const nf = sources.size();
    std::vector<std::uint64_t> segments(nf);
    std::vector<std::size_t> widths(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      segments[f] = bp::segment_count(sources[f].count);
      widths[f] = class_width(sources[f].type);
    }
    auto const chunks32 = class_map(segments, widths, 4, 1);
    auto const chunks64 = class_map(segments, widths, 8, 1);
    std::uint64_t const s32 = chunks32.back(), s64 = chunks64.back();
    std::vector<std::uint64_t> seg_first(nf);
    for (std::size_t f = 0; f < nf; ++f) seg_first[f] = widths[f] == 8 ? s32 + chunks64[f] : chunks32[f];
    // Pass 1's warps take 5 segments of 32-bit values, or 3 of 64-bit ones: each a scan block.
    constexpr std::uint32_t per32 = 5, per64 = 3;
    std::uint64_t const blocks32 = gp::scan_blocks(s32, per32), blocks = blocks32 + gp::scan_blocks(s64, per64);
    std::vector<gp::block_words> within(s32 + s64), within_ext(s32 + s64);
    std::vector<gp::scheme_words> block_sums(blocks), scanned(blocks + 1), samples(nf);
    std::vector<gp::scheme_words> block_sums_ext(blocks), scanned_ext(blocks + 1), samples_ext(nf);
    std::vector<std::uint8_t> choice(nf);
    std::vector<std::uint64_t> slot_at(s32 + s64), layouts(s32 + s64), sums(nf, 0);
    std::uint32_t encode_again = 0;
    std::vector<std::uint32_t> slots32(s32 * gp::slot_words(32)), slots64(s64 * gp::slot_words(64));

    for (std::size_t f = 0; f < nf; ++f) {  // what the base class writes before the payloads
      zs::frame_header h;
      h.codec = zs::codec_id::bitpack_for;
      h.type = sources[f].type;
      h.value_count = sources[f].count;
      h.raw_bytes = sources[f].raw_bytes();
      zs::store_header(h, frames + offsets[f]);
    }
    std::vector<std::uint64_t> sampled(nf);
    for (std::size_t f = 0; f < nf; ++f) sampled[f] = gp::sample_count(segments[f]);
    auto const samples32 = class_map(sampled, widths, 4, 1);
    auto const samples64 = class_map(sampled, widths, 8, 1);
    bool const ext = chooses_extended(codec);
    gp::encode_args const a{sources.data(),    frames,         offsets.data(),   nf,
                            nullptr,           nullptr,        seg_first.data(), s32,
                            s64,               blocks,         per32,            0,
                            within.data(),     block_sums.data(), scanned.data(), samples.data(),
                            nullptr,           slot_at.data(), layouts.data(),   choice.data(),
                            sums.data(),       &encode_again,  ext,
                            ext ? within_ext.data() : nullptr,   ext ? block_sums_ext.data() : nullptr,
                            ext ? scanned_ext.data() : nullptr,  ext ? samples_ext.data() : nullptr};
    gp::encode_args a32 = a, a64 = a;
    a64.block_segments = per64;
    a64.block_base = blocks32;
    a32.chunks = chunks32.data();
    a32.sample_first = samples32.data();
    a32.slots = slots32.data();
    a64.chunks = chunks64.data();
    a64.sample_first = samples64.data();
    a64.slots = slots64.data();

    // One warp per range of segments (or samples), as on the GPU: ranges of 3 segments (the
    // repack) cover the seams between them; pass 1's ranges are its scan blocks.
    auto const ranges = [](std::uint64_t n) { return (n + 2) / 3; };
    // As the GPU host code does: the 32-bit class runs the programs with narrow paths only
    // where the batch has narrow frames.
    bool const narrow = std::any_of(sources.begin(), sources.end(),
                                    [](const zs::encode_source& s) { return bp::is_narrow_type(s.type); });
    // The programs of the codec's schemes (`ext`), as the GPU host code launches them.
    auto const pass1 = [&]<bool Narrow, bool Ext>(const gp::encode_args& args, std::uint64_t n, auto width) {
      using U = decltype(width);
      using smem_t = gp::encode_smem<U>;
      std::uint64_t const samples_here = (sizeof(U) == 4 ? samples32 : samples64).back();
      emu::run(ranges(samples_here), sizeof(smem_t), [&](warp& w, std::uint64_t r, std::byte* smem) {
        gp::sample_range<Narrow, Ext>(w, args, 3 * r, std::min<std::uint64_t>(3 * r + 3, samples_here),
                                 *reinterpret_cast<smem_t*>(smem));
      }, [](warp&) {});
      if (guess) guess(samples, samples_ext);
      std::uint64_t const per = args.block_segments;
      emu::run((n + per - 1) / per, sizeof(smem_t), [&](warp& w, std::uint64_t r, std::byte* smem) {
        gp::analyze_range<Narrow, Ext>(w, args, per * r, std::min<std::uint64_t>(per * r + per, n),
                                  *reinterpret_cast<smem_t*>(smem));
      }, [](warp&) {});
    };
    auto const pass2 = [&]<bool Narrow, bool Ext>(const gp::encode_args& args, std::uint64_t n, auto width) {
      using U = decltype(width);
      using smem_t = gp::encode_smem<U>;
      // Each lane has its own carrier, as on the GPU; only lane 0's adds.
      std::vector<gp::sum_carrier> carriers(32);
      auto const flush = [&](warp& w) { carriers[w.lane].flush(w, args.sums); };
      // The copy in ranges of 40 segments: more than one table of 32 jobs, frames changing inside one.
      emu::run((n + 39) / 40, gp::pack_warp_bytes, [&](warp& w, std::uint64_t r, std::byte* smem) {
        gp::pack_range<warp, U, Narrow, Ext>(w, args, 40 * r, std::min<std::uint64_t>(40 * r + 40, n),
                                reinterpret_cast<gp::pack_job*>(smem),
                                reinterpret_cast<gp::word4*>(smem + gp::pack_jobs_bytes), carriers[w.lane]);
      }, flush);
      emu::run(ranges(n), sizeof(smem_t), [&](warp& w, std::uint64_t r, std::byte* smem) {
        gp::repack_range<Narrow, Ext>(w, args, 3 * r, std::min<std::uint64_t>(3 * r + 3, n), *reinterpret_cast<smem_t*>(smem),
                                 carriers[w.lane]);
      }, flush);
      if constexpr (Narrow) {
        emu::run(ranges(n), 16, [&](warp& w, std::uint64_t r, std::byte*) {
          gp::narrow_raw_range(w, args, 3 * r, std::min<std::uint64_t>(3 * r + 3, n), carriers[w.lane]);
        }, flush);
      }
    };
    auto const pass1_all = [&]<bool Narrow, bool Ext>() {
      pass1.template operator()<Narrow, Ext>(a32, s32, std::uint32_t{});
      pass1.template operator()<false, Ext>(a64, s64, std::uint64_t{});
    };
    zs::kernels::warp::with_flags(narrow, ext, pass1_all);
    scanned[0] = scanned_ext[0] = {{0, 0, 0}};
    for (std::size_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < gp::schemes_per_words; ++i) {
        scanned[b + 1].w[i] = scanned[b].w[i] + block_sums[b].w[i];
        scanned_ext[b + 1].w[i] = scanned_ext[b].w[i] + block_sums_ext[b].w[i];
      }
    }
    for (std::size_t f = 0; f < nf; ++f) gp::choose_frame(a, f);
    auto const pass2_all = [&]<bool Narrow, bool Ext>() {
      pass2.template operator()<Narrow, Ext>(a32, s32, std::uint32_t{});
      pass2.template operator()<false, Ext>(a64, s64, std::uint64_t{});
    };
    zs::kernels::warp::with_flags(narrow, ext, pass2_all);
    auto const seams_all = [&]<bool Narrow, bool Ext>() {
      for (std::uint64_t c = 0; c < s32 && gp::encodes_again(a); ++c) {
        std::uint32_t f = 0;
        std::uint64_t const t = gp::seam_sum<std::uint32_t, Narrow, Ext>(a32, c, f);
        sums[f] += t;
      }
      for (std::uint64_t c = 0; c < s64 && gp::encodes_again(a); ++c) {
        std::uint32_t f = 0;
        std::uint64_t const t = gp::seam_sum<std::uint64_t, false, Ext>(a64, c, f);
        sums[f] += t;
      }
    };
    zs::kernels::warp::with_flags(narrow, ext, seams_all);

    std::vector<std::uint64_t> frame_bytes(nf);
    for (std::size_t f = 0; f < nf; ++f) {  // what the base class does after
      zs::frame_header h = zs::load_header(frames + offsets[f]);
      h.payload_checksum = zs::hash::finish(sums[f], h.payload_bytes);
      zs::store_header(h, frames + offsets[f]);
      frame_bytes[f] = zs::frame_header_bytes + h.payload_bytes;
    }
    return frame_bytes;
  }

  // g: segments per decode tile.
  static std::vector<zs::frame_status> decode(const std::byte* frames, std::span<const std::uint64_t> offsets,
                                              std::span<const zs::decode_target> targets, std::uint32_t g,
                                              const zs::codec& codec = bitpack()) {
    std::size_t const nf = targets.size();
    std::vector<zs::frame_status> status(nf, zs::frame_status::not_decoded);  // check_frame writes each
    std::vector<std::uint64_t> segments(nf), sums(nf, 0);
    std::vector<std::size_t> widths(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      bool const integer = zs::is_integer(targets[f].type);
      segments[f] = integer ? bp::segment_count(targets[f].count) : 0;
      widths[f] = class_width(targets[f].type);
    }
    auto const tiles32 = class_map(segments, widths, 4, g);
    auto const tiles64 = class_map(segments, widths, 8, g);
    std::vector<bp::frame_layout> layouts(nf);
    gp::decode_args a{frames,  offsets.data(), targets.data(), status.data(),        nf, layouts.data(),
                      nullptr, g,              sums.data(),    codec.decodes()};
    for (std::size_t f = 0; f < nf; ++f) gp::check_frame(a, f);  // the header checks included
    gp::decode_args a32 = a, a64 = a;
    a32.tiles = tiles32.data();
    a64.tiles = tiles64.data();
    // One warp per range of 3 tiles, as on the GPU; the 32-bit class with narrow paths where a
    // target is narrow.
    bool const narrow = std::any_of(targets.begin(), targets.end(),
                                    [](const zs::decode_target& t) { return bp::is_narrow_type(t.type); });
    bool const ext = chooses_extended(codec);
    auto const run = [&]<bool Narrow, bool Ext>(const gp::decode_args& args, std::uint64_t tiles, auto width) {
      using U = decltype(width);
      std::vector<gp::sum_carrier> carriers(32);
      emu::run((tiles + 2) / 3, 4 * gp::decode_warp_words(8 * sizeof(U), g), [&](warp& w, std::uint64_t r, std::byte* smem) {
        gp::decode_range<warp, U, Narrow, Ext>(w, args, 3 * r, std::min<std::uint64_t>(3 * r + 3, tiles),
                                          reinterpret_cast<std::uint32_t*>(smem), carriers[w.lane]);
      }, [&](warp& w) { carriers[w.lane].flush(w, args.sums); });
    };
    auto const run_all = [&]<bool Narrow, bool Ext>() {
      run.template operator()<Narrow, Ext>(a32, tiles32.back(), std::uint32_t{});
      run.template operator()<false, Ext>(a64, tiles64.back(), std::uint64_t{});
    };
    zs::kernels::warp::with_flags(narrow, ext, run_all);
    for (std::size_t f = 0; f < nf; ++f) {  // the base class's checksum comparison
      if (status[f] != zs::frame_status::ok) continue;
      zs::frame_header const h = zs::load_header(frames + offsets[f]);
      if (zs::hash::finish(sums[f], h.payload_bytes) != h.payload_checksum) status[f] = zs::frame_status::bad_payload_checksum;
    }
    return status;
  }
};

// A batch of columns of mixed integer types, each cut into frames.
struct batch {
  std::vector<std::vector<std::byte>> columns;
  std::vector<zs::value_type> types;
  std::vector<zs::encode_source> sources;

  template <typename T>
  void add(const std::vector<T>& v, std::size_t parts) {
    columns.emplace_back(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(columns.back().data(), v.data(), v.size() * sizeof(T));
    types.push_back(zs::value_type_of<T>::value);
    auto const* base = reinterpret_cast<const T*>(columns.back().data());
    for (std::size_t p = 0; p < parts; ++p) {
      std::size_t const begin = v.size() * p / parts, end = v.size() * (p + 1) / parts;
      // Moving a vector keeps its buffer, so these stay valid as `columns` grows.
      sources.push_back({zs::value_type_of<T>::value, end - begin, base + begin});
    }
  }
};

template <typename T>
std::vector<T> patterned(std::size_t n, int kind, std::uint64_t seed) {
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = static_cast<T>(rng() % 200); break;                        // for
      case 1: v[i] = static_cast<T>(5000 + 11 * i + rng() % 4); break;          // dfor
      case 2: v[i] = static_cast<T>((i / 150) % 2 == 0 ? L::max() : L::min()); break;  // rfor
      case 3: v[i] = static_cast<T>(rng()); break;                              // raw
      default: v[i] = i % 3 == 0 ? L::min() : (i % 3 == 1 ? L::max() : T{0});  // full width
    }
  }
  return v;
}

batch mixed_batch() {
  batch b;
  int kind = 0;
  std::uint64_t seed = 1;
  for (std::size_t n : {0, 1, 2, 127, 129, 511, 512, 513, 1500, 2600}) {
    b.add(patterned<std::int32_t>(n, kind++ % 5, seed++), 1);
    b.add(patterned<std::uint32_t>(n, kind++ % 5, seed++), 2);
    b.add(patterned<std::int64_t>(n, kind++ % 5, seed++), 1);
    b.add(patterned<std::uint64_t>(n, kind++ % 5, seed++), 3);
    // Narrow columns cut in parts start anywhere: off 16, 4 and 2 bytes.
    b.add(patterned<std::int8_t>(n, kind++ % 5, seed++), 3);
    b.add(patterned<std::uint8_t>(n, kind++ % 5, seed++), 1);
    b.add(patterned<std::int16_t>(n, kind++ % 5, seed++), 2);
    b.add(patterned<std::uint16_t>(n, kind++ % 5, seed++), 1);
  }
  return b;
}

struct cpu_frames {
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> bytes;
};

cpu_frames cpu_encode(const batch& b, const zs::codec& codec = bitpack()) {
  cpu_frames c;
  c.offsets = zs::layout_frames(codec, b.sources);
  c.frames.assign(c.offsets.back(), std::byte{0});
  c.bytes.assign(b.sources.size(), 0);
  codec.encode_host({b.sources, c.frames.data(), c.offsets, c.bytes.data()});
  return c;
}

void expect_same_frames_as_cpu(const batch& b, const emulated::guess_hook& guess = {},
                               const zs::codec& codec = bitpack()) {
  cpu_frames const cpu = cpu_encode(b, codec);
  std::vector<std::byte> frames(cpu.offsets.back(), std::byte{0});
  auto const bytes = emulated::encode(b.sources, frames.data(), cpu.offsets, guess, codec);
  ASSERT_EQ(bytes, cpu.bytes);
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    auto const* mine = frames.data() + cpu.offsets[f];
    auto const* theirs = cpu.frames.data() + cpu.offsets[f];
    std::size_t const at = static_cast<std::size_t>(std::mismatch(mine, mine + bytes[f], theirs).first - mine);
    ASSERT_EQ(at, bytes[f]) << "frame " << f << " (" << b.sources[f].count << " values, codec "
                            << static_cast<int>(theirs[6]) << ") differs from the CPU's first at byte " << at;
  }
}

// Decodes `frames` with the emulated programs into per-frame buffers filled with 0x33 first.
// With `unaligned`, each target starts one value after a 16-byte boundary (the decoder then
// writes its values one by one instead of regrouping them); the returned buffers hold the
// values from their start either way.
std::pair<std::vector<zs::frame_status>, std::vector<std::vector<std::byte>>> emulated_decode(
    const batch& b, const std::vector<std::byte>& frames, std::span<const std::uint64_t> offsets, std::uint32_t g,
    bool unaligned = false, const zs::codec& codec = bitpack()) {
  std::vector<std::vector<std::byte>> out;
  std::vector<zs::decode_target> targets;
  std::vector<std::size_t> skip;
  for (auto const& s : b.sources) {
    skip.push_back(unaligned && zs::is_integer(s.type) ? zs::value_width(s.type) : 0);
    out.emplace_back(s.raw_bytes() + skip.back(), std::byte{0x33});
  }
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    targets.push_back({b.sources[f].type, b.sources[f].count, out[f].data() + skip[f]});
  }
  auto status = emulated::decode(frames.data(), offsets, targets, g, codec);
  for (std::size_t f = 0; f < out.size(); ++f) out[f].erase(out[f].begin(), out[f].begin() + skip[f]);
  return {std::move(status), std::move(out)};
}

void expect_decodes_cpu_frames(const batch& b, std::uint32_t g, bool unaligned = false,
                               const zs::codec& codec = bitpack()) {
  cpu_frames const cpu = cpu_encode(b, codec);
  auto const [status, out] = emulated_decode(b, cpu.frames, cpu.offsets, g, unaligned, codec);
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    ASSERT_EQ(status[f], zs::frame_status::ok) << "frame " << f << ": " << zs::to_string(status[f]);
    if (b.sources[f].count == 0) continue;
    ASSERT_EQ(std::memcmp(out[f].data(), b.sources[f].values, b.sources[f].raw_bytes()), 0)
        << "frame " << f << " (" << b.sources[f].count << " values, codec "
        << static_cast<int>(cpu.frames[cpu.offsets[f] + 6]) << ") decodes wrong";
  }
}

// Pass 1 takes the shortest and longest run starting in a lane from two lookups in a table of
// head bytes; every pattern of 16 heads, against a walk over them.
TEST(BitpackPrograms, RunLengthsFromTheHeadTableMatchAWalk) {
  for (std::uint32_t heads = 0; heads < (1U << 16); ++heads) {
    for (std::uint32_t const next_head : {16U + 16U, 16U + 17U, 512U}) {  // the lane at p0 = 16
      std::uint32_t shortest = 0, longest = 0;
      gp::lane_run_lengths(heads, 16, next_head, shortest, longest);
      std::uint32_t walk_min = 0xffffffffU, walk_max = 0;
      gp::for_each_run(heads, 16, next_head, [&](unsigned, std::uint32_t length) {
        walk_min = std::min(walk_min, length);
        walk_max = std::max(walk_max, length);
      });
      ASSERT_EQ(shortest, walk_min) << "heads " << heads << " next " << next_head;
      ASSERT_EQ(longest, walk_max) << "heads " << heads << " next " << next_head;
    }
  }
}

TEST(BitpackPrograms, EncoderWritesTheCpuFramesByteForByte) {
  auto const b = mixed_batch();
  expect_same_frames_as_cpu(b);
}

TEST(BitpackPrograms, EncoderUsesEverySchemeInTheMixedBatch) {
  auto const b = mixed_batch();
  for (const zs::codec* codec : {static_cast<const zs::codec*>(&classic()), static_cast<const zs::codec*>(&extended())}) {
    cpu_frames const cpu = cpu_encode(b, *codec);
    std::vector<int> seen(16, 0);
    for (std::size_t f = 0; f < b.sources.size(); ++f) ++seen[static_cast<int>(cpu.frames[cpu.offsets[f] + 6]) % 16];
    for (int s = 0; s < 4; ++s) EXPECT_GT(seen[s], 0) << "no frame of codec " << s;
  }
}

// The sample pass's sizes per frame: those of every sample_stride-th segment from the first, as
// the CPU reference codes a segment alone (a segment is whole blocks, tiles and run blocks).
TEST(BitpackPrograms, SamplesAreTheSizesOfEveryStrideThSegment) {
  auto b = mixed_batch();
  b.add(patterned<std::int32_t>(600 * 512 + 77, 1, 99), 1);  // 601 segments: a stride of 10
  b.add(patterned<std::uint64_t>(20 * 512, 0, 98), 1);       // 20 segments: a stride of 8
  std::vector<gp::scheme_words> got;
  expect_same_frames_as_cpu(b, [&](std::vector<gp::scheme_words>& samples, std::vector<gp::scheme_words>&) { got = samples; });
  ASSERT_EQ(got.size(), b.sources.size());
  std::size_t several = 0;
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    auto const& src = b.sources[f];
    std::uint64_t const segments = bp::segment_count(src.count);
    std::uint64_t const stride = gp::sample_stride(segments);
    std::uint64_t want[3] = {0, 0, 0};
    for (std::uint64_t g = 0; g < segments; g += stride) {
      std::uint64_t const v0 = g * 512, m = std::min<std::uint64_t>(512, src.count - v0);
      auto const* values = static_cast<const std::byte*>(src.values) + v0 * zs::value_width(src.type);
      auto const bytes = zs::codecs::bitpack_codec::scheme_payload_bytes({src.type, m, values});
      for (int i = 0; i < 3; ++i) {
        auto const kind = static_cast<bp::scheme>(i + 1);
        want[i] += bytes[i + 1] / 4 - bp::block_count(kind, m);
      }
    }
    several += gp::sample_count(segments) > 2 ? 1 : 0;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(got[f].w[i], want[i]) << "frame " << f << ", scheme " << i + 1;
  }
  EXPECT_EQ(several, 2U);
}

TEST(BitpackPrograms, DecoderReadsTheCpuFramesWithEveryTileSize) {
  auto const b = mixed_batch();
  for (std::uint32_t g : {1U, 2U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g);
  }
}

// The rfor decoder gives each lane ceil(runs / 32) runs: segments of 1 to 512 runs of random
// lengths (each lane's share from 1 to 16, some lanes without runs), of both width classes and a
// narrow type, whole and with a partial last segment, checked against the input.
TEST(BitpackPrograms, RforSegmentsOfAnyRunCountDecode) {
  batch b;
  std::mt19937_64 rng(17);
  auto const runs_of = [&]<typename T>(std::size_t n, std::uint32_t longest, T) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n;) {
      std::size_t const length = 1 + rng() % longest;
      auto const value = static_cast<T>(rng() % 1000);
      for (std::size_t k = 0; k < length && i < n; ++k) v[i++] = value;
    }
    return v;
  };
  for (std::uint32_t longest : {1U, 2U, 5U, 20U, 60U, 200U, 700U}) {
    b.add(runs_of(6 * 512, longest, std::int32_t{}), 1);
    b.add(runs_of(3 * 512 + 77, longest, std::uint64_t{}), 1);
    b.add(runs_of(2 * 512 + 300, longest, std::int16_t{}), 1);
  }
  cpu_frames const cpu = cpu_encode(b);
  std::size_t rfor = 0;
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    rfor += zs::load_header(cpu.frames.data() + cpu.offsets[f]).codec == zs::codec_id::bitpack_rfor ? 1 : 0;
  }
  EXPECT_GE(rfor, b.sources.size() - 3) << "the inputs are meant to choose rfor (runs of one may not)";
  for (std::uint32_t g : {1U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g);
  }
}

// drfor: sorted runs (each run's value a small step above the last, so the steps code in fewer
// bits than the values) of 1 to 512 runs a segment, decoded by shuffles (32 runs or fewer) or by
// each lane's walk over the steps (more), for 32- and 64-bit and narrow values.
TEST(BitpackPrograms, DrforSegmentsOfAnyRunCountDecode) {
  batch b;
  std::mt19937_64 rng(23);
  auto const sorted_runs = [&]<typename T>(std::size_t n, std::uint32_t longest, T, std::int64_t base) {
    std::vector<T> v(n);
    std::int64_t value = base;
    for (std::size_t i = 0; i < n;) {
      std::size_t const length = 1 + rng() % longest;
      value += 1 + static_cast<std::int64_t>(rng() % 5);
      for (std::size_t k = 0; k < length && i < n; ++k) v[i++] = static_cast<T>(value);
    }
    return v;
  };
  for (std::uint32_t longest : {1U, 2U, 5U, 20U, 60U}) {
    b.add(sorted_runs(6 * 512, longest, std::int32_t{}, -1000000), 1);
    b.add(sorted_runs(3 * 512 + 77, longest, std::uint64_t{}, std::int64_t{1} << 50), 1);
    b.add(sorted_runs(2 * 512 + 300, longest, std::int16_t{}, -9000), 1);
  }
  cpu_frames const cpu = cpu_encode(b, extended());
  std::size_t drfor = 0;
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    drfor += zs::load_header(cpu.frames.data() + cpu.offsets[f]).codec == zs::codec_id::bitpack_drfor ? 1 : 0;
  }
  // (Segments of a few long runs may take rfor: its values cost little there.)
  EXPECT_GE(drfor, b.sources.size() - 2) << "the inputs are meant to choose drfor";
  for (std::uint32_t g : {1U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g, false, extended());
  }
  expect_same_frames_as_cpu(b, {}, extended());
}

// How the decoder's tile region (gp::region_words) holds tiles of data that compresses less
// and less: the tile being decoded and the next one side by side, or the next one placed before
// the other (the region's start), or the next alone once the other is decoded, or a tile too
// large for the region in parts (two segments, or one).
TEST(BitpackPrograms, TilesShareTheRegionOrArriveAloneOrInParts) {
  batch b;
  std::mt19937_64 rng(5);
  // for: 28 random bits over a base that steps every block (about 450 words a segment)
  std::vector<std::int32_t> stepped(5 * 512 + 300);
  for (std::size_t i = 0; i < stepped.size(); ++i) {
    stepped[i] = static_cast<std::int32_t>(((i / 128) % 4) << 29 | (rng() & ((1U << 28) - 1)));
  }
  // rfor: 54 random bits, no two alike (867 words a segment)
  std::vector<std::uint64_t> wide(4 * 512);
  for (auto& x : wide) x = rng() >> 10;
  // rfor (runs of one, 290 words a segment, just below for)
  std::vector<std::int32_t> narrow(9 * 512 + 100);
  for (auto& x : narrow) x = static_cast<std::int32_t>(rng() & ((1U << 18) - 1));
  // rfor (runs of one, their lengths in no bits: about 200 words a segment)
  std::vector<std::int32_t> twelve(14 * 512 + 7);
  for (auto& x : twelve) x = static_cast<std::int32_t>(rng() & ((1U << 12) - 1));
  // for, a tile of four in parts (two segments of 20 random bits, then two of 32) and tiles of
  // four small values after it: the second part must not be copied over the next tile, so the
  // next tile does not start before a tile cut in parts is done.
  std::vector<std::int32_t> uneven(3 * 4 * 512);
  for (std::size_t i = 0; i < uneven.size(); ++i) {
    std::uint32_t const bits = i < 1024 ? 20 : (i < 2048 ? 32 : 4);
    uneven[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()) >> (32 - bits));
  }
  b.add(stepped, 1);
  b.add(wide, 1);
  b.add(narrow, 1);
  b.add(twelve, 1);
  b.add(uneven, 1);
  cpu_frames const cpu = cpu_encode(b);
  zs::codec_id const expected[] = {zs::codec_id::bitpack_for, zs::codec_id::bitpack_rfor, zs::codec_id::bitpack_rfor,
                                   zs::codec_id::bitpack_rfor};
  std::uint64_t const o = gp::tile_overhead_words;
  ASSERT_EQ(zs::load_header(cpu.frames.data() + cpu.offsets[4]).codec, zs::codec_id::bitpack_for);
  for (std::size_t f = 0; f < 4; ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    zs::frame_header const h = zs::load_header(cpu.frames.data() + cpu.offsets[f]);
    ASSERT_EQ(h.codec, expected[f]);
    std::uint32_t const width = 8 * static_cast<std::uint32_t>(zs::value_width(b.sources[f].type));
    std::uint64_t const per_segment = h.payload_bytes / 4 / bp::segment_count(b.sources[f].count);
    std::uint64_t const four = 4 * per_segment, two = 2 * per_segment;
    if (f < 2) {
      ASSERT_GT(four, gp::whole_tile_words(width, 4)) << "tiles of four in parts";
      ASSERT_LE(two, gp::whole_tile_words(width, 2)) << "tiles of two whole";
      ASSERT_GT(2 * (two + o), gp::region_words(width, 2)) << "tiles of two alone";
      ASSERT_LE(2 * (per_segment + o), gp::region_words(width, 1)) << "tiles of one side by side";
    } else if (f == 2) {
      ASSERT_LE(four + 16, gp::whole_tile_words(width, 4)) << "tiles of four whole";
      ASSERT_GT(2 * (four + o), gp::region_words(width, 4) + 16) << "tiles of four alone";
      ASSERT_LE(2 * (two + o) + 16, gp::region_words(width, 2)) << "tiles of two side by side";
    } else {
      ASSERT_LE(2 * (four + o) + 16, gp::region_words(width, 4)) << "tiles of four side by side";
      ASSERT_GT(3 * (four + o), gp::region_words(width, 4) + 16) << "the third at the region's start";
    }
  }
  for (std::uint32_t g : {1U, 2U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g);
  }
}

// Targets off a 16-byte boundary take the decoder's other store path.
TEST(BitpackPrograms, DecoderWritesTargetsOffSixteenByteBoundaries) {
  auto const b = mixed_batch();
  for (std::uint32_t g : {1U, 2U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g, true);
  }
}

// Frames whose sampled segments (every 8th here) prefer another scheme than the frame's: pass
// 1 writes them in the guessed scheme, so pass 2 must encode every segment again in the chosen
// one, and the seams must still give the CPU's checksum.
TEST(BitpackPrograms, FramesWhoseGuessIsWrongAreEncodedAgain) {
  batch b;
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<std::int32_t> v;
    std::mt19937_64 rng(40 + variant);
    for (int seg = 0; seg < 17; ++seg) {
      for (int i = 0; i < 512; ++i) {
        if (seg % 8 == 0) {
          v.push_back(static_cast<std::int32_t>(rng() % 64));  // small values: for wins
        } else {
          v.push_back(static_cast<std::int32_t>(1000000 * seg + 3 * i));  // steady steps: dfor wins
        }
      }
    }
    v.resize(v.size() - 37 * variant);  // and a partial last segment
    b.add(v, 1);
  }
  // The classic schemes choose dfor, the extended ones drfor (steps of 3 are runs of one with
  // one step); the sampled segments (every 8th) guess for either way.
  for (const zs::codec* codec : {static_cast<const zs::codec*>(&classic()), static_cast<const zs::codec*>(&extended())}) {
    bool const ext = chooses_extended(*codec);
    auto const chosen = ext ? bp::scheme::drfor : bp::scheme::dfor;
    cpu_frames const cpu = cpu_encode(b, *codec);
    for (std::size_t f = 0; f < b.sources.size(); ++f) {
      ASSERT_EQ(static_cast<int>(cpu.frames[cpu.offsets[f] + 6]), static_cast<int>(chosen)) << "frame " << f;
      ASSERT_EQ(gp::sample_stride(bp::segment_count(b.sources[f].count)), 8U);
      auto const first = zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type::int32, 512, b.sources[f].values});
      ASSERT_LT(first[static_cast<int>(bp::scheme::for_)], first[static_cast<int>(chosen)]);
    }
    expect_same_frames_as_cpu(b, {}, *codec);
    expect_decodes_cpu_frames(b, 2, false, *codec);
  }
}

// A guess far larger than raw: rfor forced as the guess for 64-bit values that nearly never
// repeat (runs of 1 but one of 17 a segment: 1073 words against 1024 raw). Pass 1 keeps what
// its pools hold, and the frame goes raw; the next frame must stay intact.
TEST(BitpackPrograms, GuessesLargerThanRawLeaveTheFrameRaw) {
  batch b;
  std::vector<std::uint64_t> v;
  std::mt19937_64 rng(7);
  for (int seg = 0; seg < 8; ++seg) {
    std::uint64_t const value = rng();
    for (int i = 0; i < 512; ++i) v.push_back(i < 17 ? value : rng());
  }
  b.add(v, 1);
  b.add(patterned<std::uint64_t>(1500, 1, 3), 1);  // the next frame, which must stay intact
  auto const words = zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type::uint64, 512, v.data()});
  ASSERT_EQ(words[static_cast<int>(bp::scheme::rfor)], 4 * (1 + 1073));
  cpu_frames const cpu = cpu_encode(b);
  ASSERT_EQ(static_cast<int>(cpu.frames[cpu.offsets[0] + 6]), static_cast<int>(bp::scheme::raw));
  expect_same_frames_as_cpu(b, [](std::vector<gp::scheme_words>& samples, std::vector<gp::scheme_words>&) {
    samples[0] = {{100, 100, 1}};
  });
  expect_decodes_cpu_frames(b, 1);
}

// A warp keeps its segments' encodings in one pool of its segments' slots (half the raw size
// each): a segment larger than its slot is kept after a smaller one (the frame's 3 segments
// are one emulated warp's), and one the pool cannot hold is encoded again in pass 2.
TEST(BitpackPrograms, SegmentsLargerThanTheirSlotAreKeptWhileThePoolHasRoom) {
  batch b;
  std::vector<std::int32_t> v;
  std::mt19937_64 rng(11);
  for (int seg = 0; seg < 3; ++seg) {
    std::uint32_t const bits = seg == 0 ? 2 : 24;  // about 40, 392, 392 words: the pool holds 768
    for (int i = 0; i < 512; ++i) v.push_back(static_cast<std::int32_t>(rng() & ((1U << bits) - 1)));
  }
  b.add(v, 1);
  for (int seg = 0; seg < 3; ++seg) {
    auto const words = zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type::int32, 512, v.data() + 512 * seg});
    ASSERT_EQ(words[static_cast<int>(bp::scheme::for_)] / 4 - 4, seg == 0 ? 40U : 392U) << "segment " << seg;
  }
  cpu_frames const cpu = cpu_encode(b);
  ASSERT_EQ(static_cast<int>(cpu.frames[cpu.offsets[0] + 6]), static_cast<int>(bp::scheme::for_));
  expect_same_frames_as_cpu(b);
  expect_decodes_cpu_frames(b, 1);
}

// The checksum term after a frame's block starts (an odd number of them) pairs the last start
// with the frame's first data word. Pass 2 adds it where the frame's first and last segments
// are both copied; here the first is encoded again (it ends a scan block of 5 segments whose
// pool the previous frame's segments have filled) and the last is copied, so the seam pass adds
// it.
TEST(BitpackPrograms, TheTermAfterTheBlockStartsWhereOnlyTheLastSegmentIsCopied) {
  batch b;
  std::mt19937_64 rng(23);
  // Random values of `bits` bits above a base that changes every block: for wins.
  auto const add_values = [&](std::vector<std::int32_t>& v, int values, unsigned bits) {
    for (int i = 0; i < values; ++i) {
      v.push_back(static_cast<std::int32_t>((i / 128 % 4) << 28 | (rng() & ((1U << bits) - 1))));
    }
  };
  std::vector<std::int32_t> previous, frame;
  add_values(previous, 4 * 512, 27);  // 440 words a segment: the pool of 5 slots (1280) holds two
  add_values(frame, 512, 25);         // 408 words: more than the pool has left (400)
  add_values(frame, 512 + 128, 3);    // kept by the next scan block
  b.add(previous, 1);
  b.add(frame, 1);
  ASSERT_EQ(bp::block_count(bp::scheme::for_, frame.size()) % 2, 1U);
  auto const words = zs::codecs::bitpack_codec::scheme_payload_bytes({zs::value_type::int32, 512, frame.data()});
  ASSERT_EQ(words[static_cast<int>(bp::scheme::for_)] / 4 - 4, 408U);
  cpu_frames const cpu = cpu_encode(b);
  for (std::size_t f = 0; f < 2; ++f) {
    ASSERT_EQ(static_cast<int>(cpu.frames[cpu.offsets[f] + 6]), static_cast<int>(bp::scheme::for_)) << "frame " << f;
  }
  expect_same_frames_as_cpu(b);
  expect_decodes_cpu_frames(b, 1);
}

TEST(BitpackPrograms, AdversarialInputsOfEveryTypeInOneBatch) {
  batch b;
  for (auto const& v : zs::test::adversarial_inputs<std::int32_t>()) b.add(v, 1);
  for (auto const& v : zs::test::adversarial_inputs<std::uint32_t>()) b.add(v, 2);
  for (auto const& v : zs::test::adversarial_inputs<std::int64_t>()) b.add(v, 1);
  for (auto const& v : zs::test::adversarial_inputs<std::uint64_t>()) b.add(v, 2);
  for (auto const& v : zs::test::adversarial_inputs<std::int8_t>()) b.add(v, 3);
  for (auto const& v : zs::test::adversarial_inputs<std::uint8_t>()) b.add(v, 1);
  for (auto const& v : zs::test::adversarial_inputs<std::int16_t>()) b.add(v, 2);
  for (auto const& v : zs::test::adversarial_inputs<std::uint16_t>()) b.add(v, 1);
  for (const zs::codec* codec : {static_cast<const zs::codec*>(&classic()), static_cast<const zs::codec*>(&extended())}) {
    SCOPED_TRACE(std::string(codec->name()));
    expect_same_frames_as_cpu(b, {}, *codec);
    expect_decodes_cpu_frames(b, 2, false, *codec);
    expect_decodes_cpu_frames(b, 4, true, *codec);
  }
}

TEST(BitpackPrograms, RealColumnsEncodeAndDecodeLikeTheCpu) {
  batch b;
  for (const char* file : {"etopo5_elev_m.i32", "ncbi_tax_id.i32"}) {
    auto const c = zs::test::data_column(file);
    auto const* v = c.view().values<std::int32_t>();
    // A slice from the middle keeps the emulation short; two frames of it.
    std::size_t const begin = c.size() / 2, n = 12000;
    b.add(std::vector<std::int32_t>(v + begin, v + begin + n), 2);
  }
  auto const g = zs::test::data_column("geoip4_lo.u32");
  auto const* v = g.view().values<std::uint32_t>();
  b.add(std::vector<std::uint32_t>(v, v + 9000), 1);
  expect_same_frames_as_cpu(b);
  expect_decodes_cpu_frames(b, 2);
}

// The decoder checks each frame's header against its target before anything else, as the CPU
// reference does: a bad magic, a header that fails its checksum, a count or a type other than
// the target's, a slot shorter than the frame.
TEST(BitpackPrograms, HeadersAreCheckedLikeTheCpu) {
  batch b;
  for (int kind = 0; kind < 3; ++kind) {
    b.add(patterned<std::int32_t>(1400, kind, 30 + kind), 1);
    b.add(patterned<std::uint32_t>(900, kind, 40 + kind), 1);
  }
  cpu_frames const cpu = cpu_encode(b);
  std::vector<std::byte> frames = cpu.frames;
  std::vector<std::uint64_t> offsets = cpu.offsets;
  std::size_t const nf = b.sources.size();
  std::vector<std::vector<std::byte>> out(nf), out_cpu(nf);
  std::vector<zs::decode_target> targets(nf), targets_cpu(nf);
  for (std::size_t f = 0; f < nf; ++f) {
    zs::decode_target t{b.sources[f].type, b.sources[f].count, nullptr};
    std::byte* frame = frames.data() + offsets[f];
    switch (f) {
      case 0: frame[0] ^= std::byte{1}; break;
      case 1: frame[8] ^= std::byte{4}; break;
      case 2: t.count += 1; break;
      case 3: t.type = zs::value_type::int32; break;
      case 4: break;
      default: offsets[f + 1] = offsets[f] + zs::frame_header_bytes + 8; break;
    }
    out[f].assign(t.raw_bytes(), std::byte{0x33});
    out_cpu[f] = out[f];
    targets[f] = t;
    targets[f].values = out[f].data();
    targets_cpu[f] = t;
    targets_cpu[f].values = out_cpu[f].data();
  }
  std::vector<zs::frame_status> expected(nf);
  bitpack().decode_host({frames.data(), offsets, targets_cpu, expected.data()});
  for (std::size_t f = 0; f < nf; ++f) {
    EXPECT_EQ(expected[f] == zs::frame_status::ok, f == 4) << "frame " << f << ": " << zs::to_string(expected[f]);
  }
  EXPECT_EQ(emulated::decode(frames.data(), offsets, targets, 2), expected);
  EXPECT_EQ(out[4], out_cpu[4]);
}

// Corrupt payloads behind valid checksums get the CPU's status; the other frames of the batch
// decode as the CPU decodes them. (What a refused frame's target holds is unspecified.)
TEST(BitpackPrograms, CorruptFramesGetTheCpuStatuses) {
  batch b;
  for (int kind = 0; kind < 3; ++kind) {
    b.add(patterned<std::int32_t>(1400, kind, 10 + kind), 1);
    b.add(patterned<std::uint64_t>(1400, kind, 20 + kind), 1);
  }
  // Barely compressible frames: their tiles arrive one segment at a time.
  b.add(zs::test::adversarial_inputs<std::int32_t>().back(), 1);
  b.add(zs::test::adversarial_inputs<std::uint64_t>().back(), 1);
  cpu_frames cpu = cpu_encode(b);
  std::mt19937_64 rng(5);
  std::size_t const nf = b.sources.size();
  for (int round = 0; round < 12; ++round) {
    std::vector<std::byte> frames = cpu.frames;
    // Edit one word of each frame's block starts or block headers, then reseal.
    for (std::size_t f = 0; f < nf; ++f) {
      std::byte* frame = frames.data() + cpu.offsets[f];
      zs::frame_header h = zs::load_header(frame);
      std::uint64_t const words = h.payload_bytes / 4;
      std::uint64_t const blocks = bp::block_count(static_cast<bp::scheme>(h.codec), h.value_count);
      std::uint64_t const i = round % 2 == 0 ? rng() % (blocks + 4) : rng() % words;
      std::byte* w = frame + zs::frame_header_bytes + 4 * (i % words);
      zs::detail::store_le(w, zs::detail::load_le(w, 4) ^ (std::uint64_t{1} << (rng() % 32)), 4);
      h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
      zs::store_header(h, frame);
    }
    std::vector<std::vector<std::byte>> expected_out;
    std::vector<zs::decode_target> targets;
    for (auto const& s : b.sources) expected_out.emplace_back(s.raw_bytes(), std::byte{0x33});
    for (std::size_t f = 0; f < nf; ++f) targets.push_back({b.sources[f].type, b.sources[f].count, expected_out[f].data()});
    std::vector<zs::frame_status> expected(nf);
    bitpack().decode_host({frames.data(), cpu.offsets, targets, expected.data()});

    auto const [status, out] = emulated_decode(b, frames, cpu.offsets, 2);
    EXPECT_EQ(status, expected) << "round " << round;
    for (std::size_t f = 0; f < nf; ++f) {
      if (status[f] == zs::frame_status::ok) {
        EXPECT_EQ(out[f], expected_out[f]) << "round " << round << " frame " << f;
      }
    }
  }
}

// A frame claiming a narrow type whose payload decodes to values outside it (an int8 frame
// holding 300, in each scheme) is corrupt for the GPU decoder as for the CPU's, and the frames
// beside it decode.
TEST(BitpackPrograms, NarrowFramesWhoseValuesDoNotFitGetTheCpuStatus) {
  batch wide, b;
  std::vector<std::int32_t> small(1300), steps(1300), runs(1300);
  for (std::size_t i = 0; i < small.size(); ++i) {
    small[i] = static_cast<std::int32_t>(i % 50);
    steps[i] = static_cast<std::int32_t>(i % 200) - 100;  // dfor: steps of one
    runs[i] = static_cast<std::int32_t>(i / 100);  // rfor
  }
  small[700] = 300;
  steps[1299] = 300;
  runs[600] = -200;
  for (auto const* v : {&small, &steps, &runs}) {
    wide.add(*v, 1);
    b.add(std::vector<std::int8_t>(v->begin(), v->end()), 1);
  }
  b.add(patterned<std::int8_t>(2000, 0, 4), 2);  // intact frames after them
  // The classic schemes write for, dfor and rfor frames of them; the extended ones others.
  for (const zs::codec* codec : {static_cast<const zs::codec*>(&classic()), static_cast<const zs::codec*>(&extended())}) {
    cpu_frames const bad = cpu_encode(wide, *codec);
    cpu_frames cpu = cpu_encode(b);
    for (std::size_t f = 0; f < 3; ++f) {
      zs::frame_header h = zs::load_header(bad.frames.data() + bad.offsets[f]);
      if (!chooses_extended(*codec)) {
        ASSERT_EQ(static_cast<int>(h.codec), static_cast<int>(f) + 1) << "frame " << f << " in scheme " << f + 1;
      }
      ASSERT_NE(h.codec, zs::codec_id::raw) << "frame " << f;
      h.type = zs::value_type::int8;
      h.raw_bytes = h.value_count;
      ASSERT_LE(bad.bytes[f], cpu.offsets[f + 1] - cpu.offsets[f]) << "frame " << f << " fits its slot";
      std::memcpy(cpu.frames.data() + cpu.offsets[f], bad.frames.data() + bad.offsets[f], bad.bytes[f]);
      zs::store_header(h, cpu.frames.data() + cpu.offsets[f]);
    }
    std::vector<std::vector<std::byte>> expected_out;
    std::vector<zs::decode_target> targets;
    for (auto const& src : b.sources) expected_out.emplace_back(src.raw_bytes(), std::byte{0x33});
    for (std::size_t f = 0; f < b.sources.size(); ++f) targets.push_back({b.sources[f].type, b.sources[f].count, expected_out[f].data()});
    std::vector<zs::frame_status> expected(b.sources.size());
    codec->decode_host({cpu.frames.data(), cpu.offsets, targets, expected.data()});
    for (std::size_t f = 0; f < b.sources.size(); ++f) {
      EXPECT_EQ(expected[f], f < 3 ? zs::frame_status::corrupt_payload : zs::frame_status::ok) << "frame " << f;
    }
    for (std::uint32_t g : {1U, 4U}) {
      auto const [status, out] = emulated_decode(b, cpu.frames, cpu.offsets, g, false, *codec);
      EXPECT_EQ(status, expected) << "segments per tile " << g;
      for (std::size_t f = 3; f < b.sources.size(); ++f) EXPECT_EQ(out[f], expected_out[f]) << "frame " << f;
    }
  }
}

// The decoder sums the checksum terms itself: a payload that does not match its header's
// checksum is refused, and the frames around it decode.
TEST(BitpackPrograms, PayloadsThatFailTheirChecksumAreRefused) {
  auto const b = mixed_batch();
  cpu_frames cpu = cpu_encode(b);
  std::size_t const nf = b.sources.size();
  std::vector<bool> damaged(nf, false);
  for (std::size_t f = 0; f < nf; f += 3) {
    std::byte* frame = cpu.frames.data() + cpu.offsets[f];
    zs::frame_header h = zs::load_header(frame);
    if (h.payload_bytes == 0) continue;
    h.payload_checksum ^= 0x10;  // the header stays valid: only the payload's sum disagrees
    zs::store_header(h, frame);
    damaged[f] = true;
  }
  auto const [status, out] = emulated_decode(b, cpu.frames, cpu.offsets, 1);
  for (std::size_t f = 0; f < nf; ++f) {
    if (damaged[f]) {
      EXPECT_EQ(status[f], zs::frame_status::bad_payload_checksum) << "frame " << f;
    } else {
      ASSERT_EQ(status[f], zs::frame_status::ok) << "frame " << f << ": " << zs::to_string(status[f]);
      if (b.sources[f].count > 0) {
        EXPECT_EQ(std::memcmp(out[f].data(), b.sources[f].values, b.sources[f].raw_bytes()), 0) << "frame " << f;
      }
    }
  }
}

// --- the extended schemes (pfor, pdfor, drfor) ---------------------------------------------------

// Columns that make each extended scheme win: outliers among small values (pfor), steady steps
// with a jump every segment (pdfor), short runs rising (drfor), steps of 2^k (shifts).
template <typename T>
std::vector<T> extended_patterned(std::size_t n, int kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = static_cast<T>(i % 97 == 13 ? std::numeric_limits<T>::max() / 2 - rng() % 8 : rng() % 4); break;  // pfor
      case 1: v[i] = static_cast<T>(1000 + 17 * i + (i / 300) * 90 + (i % 211 == 5 ? 120 : 0)); break;  // pdfor
      case 2: v[i] = static_cast<T>((i / 3) * 5 + 12 + (i / 3) % 2); break;  // drfor
      case 3: v[i] = static_cast<T>((rng() % 60) * 16); break;  // for with a shift of 4
      default: v[i] = static_cast<T>(rng() % 7 == 0 ? 120 : rng() % 4); break;  // many exceptions
    }
  }
  return v;
}

batch extended_batch() {
  batch b;
  int kind = 0;
  std::uint64_t seed = 100;
  for (std::size_t n : {1, 2, 31, 33, 127, 129, 511, 512, 513, 1500, 2600}) {
    b.add(extended_patterned<std::int32_t>(n, kind++ % 5, seed++), 1);
    b.add(extended_patterned<std::uint32_t>(n, kind++ % 5, seed++), 2);
    b.add(extended_patterned<std::int64_t>(n, kind++ % 5, seed++), 1);
    b.add(extended_patterned<std::uint64_t>(n, kind++ % 5, seed++), 3);
    b.add(extended_patterned<std::int8_t>(n, kind++ % 5, seed++), 3);
    b.add(extended_patterned<std::uint8_t>(n, kind++ % 5, seed++), 1);
    b.add(extended_patterned<std::int16_t>(n, kind++ % 5, seed++), 2);
    b.add(extended_patterned<std::uint16_t>(n, kind++ % 5, seed++), 1);
  }
  return b;
}

// How many frames of each codec id the CPU reference writes for a batch.
std::vector<int> codecs_chosen(const batch& b, const zs::codec& codec) {
  cpu_frames const cpu = cpu_encode(b, codec);
  std::vector<int> seen(16, 0);
  for (std::size_t f = 0; f < b.sources.size(); ++f) ++seen[static_cast<int>(cpu.frames[cpu.offsets[f] + 6])];
  return seen;
}

TEST(BitpackPrograms, ExtendedSchemesAreWrittenAndReadLikeTheCpu) {
  auto const b = extended_batch();
  auto const seen = codecs_chosen(b, extended());
  for (int id : {1, 2, 3, 8, 9, 10}) EXPECT_GT(seen[id], 0) << "no frame of codec " << id;
  expect_same_frames_as_cpu(b, {}, extended());
  for (std::uint32_t g : {1U, 2U, 4U}) {
    SCOPED_TRACE("segments per tile " + std::to_string(g));
    expect_decodes_cpu_frames(b, g, false, extended());
  }
  expect_decodes_cpu_frames(b, 2, true, extended());
}

TEST(BitpackPrograms, ExtendedSchemesOfTheMixedBatch) {
  auto const b = mixed_batch();
  expect_same_frames_as_cpu(b, {}, extended());
  expect_decodes_cpu_frames(b, 4, false, extended());
}

// Pass 1 keeps each segment in its frame's guessed scheme: every guess, right or wrong, for
// each extended scheme, gives the CPU's frames.
TEST(BitpackPrograms, ExtendedFramesEncodeLikeTheCpuWhateverTheGuess) {
  auto const b = extended_batch();
  for (int guess = 0; guess < bp::coded_schemes; ++guess) {
    SCOPED_TRACE("guess " + std::to_string(guess));
    expect_same_frames_as_cpu(b, [&](std::vector<gp::scheme_words>& samples, std::vector<gp::scheme_words>& ext) {
      for (std::size_t f = 0; f < samples.size(); ++f) {
        for (int i = 0; i < bp::coded_schemes; ++i) {
          auto& word = i < gp::schemes_per_words ? samples[f].w[i] : ext[f].w[i - gp::schemes_per_words];
          word = i == guess ? 0 : 1;
        }
      }
    }, extended());
  }
}

// The real columns as they are and in the shapes `zshuffle bench codec --shapes` builds from
// them: sorted, in runs, with rare outliers, with a fill value; as their own type and as every
// other integer type (their values cast), so that each width class and storage is checked.
template <typename T>
std::vector<std::vector<T>> shaped(const std::vector<T>& real) {
  std::mt19937_64 rng(5);
  std::vector<std::vector<T>> out{real};
  auto sorted = real;
  std::sort(sorted.begin(), sorted.end());
  out.push_back(sorted);
  std::vector<T> runs;
  for (std::size_t i = 0; runs.size() < real.size(); ++i) runs.insert(runs.end(), 1 + rng() % 6, real[i]);
  runs.resize(real.size());
  out.push_back(runs);
  auto outliers = real;
  for (std::size_t i = 0; i < outliers.size(); i += 700 + rng() % 600) {
    outliers[i] = static_cast<T>(rng());
  }
  out.push_back(outliers);
  auto fill = real;
  for (std::size_t i = 0; i < fill.size(); i += 1 + rng() % 20) fill[i] = std::numeric_limits<T>::max();
  out.push_back(fill);
  return out;
}

template <typename T, typename From>
std::vector<T> cast_values(const From* v, std::size_t n) {
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(v[i]);
  return out;
}

TEST(BitpackPrograms, ExtendedRealColumnsInEveryShapeAndType) {
  batch b;
  for (const char* file : {"etopo5_elev_m.i32", "ncbi_tax_id.i32", "geoip4_lo.u32"}) {
    auto const c = zs::test::data_column(file);
    // A slice from the middle keeps the emulation short.
    std::size_t const begin = c.size() / 3, n = 5000;
    auto const add_all = [&](const auto* v) {
      for (auto const& s : shaped(cast_values<std::int32_t>(v + begin, n))) b.add(s, 2);
      for (auto const& s : shaped(cast_values<std::uint32_t>(v + begin, n))) b.add(s, 1);
      for (auto const& s : shaped(cast_values<std::int64_t>(v + begin, n))) b.add(s, 1);
      for (auto const& s : shaped(cast_values<std::uint64_t>(v + begin, n))) b.add(s, 2);
      for (auto const& s : shaped(cast_values<std::int16_t>(v + begin, n))) b.add(s, 1);
      for (auto const& s : shaped(cast_values<std::uint16_t>(v + begin, n))) b.add(s, 1);
      for (auto const& s : shaped(cast_values<std::int8_t>(v + begin, n))) b.add(s, 1);
      for (auto const& s : shaped(cast_values<std::uint8_t>(v + begin, n))) b.add(s, 1);
    };
    if (c.type() == zs::value_type::uint32) {
      add_all(c.view().values<std::uint32_t>());
    } else {
      add_all(c.view().values<std::int32_t>());
    }
  }
  auto const seen = codecs_chosen(b, extended());
  for (int id : {8, 9, 10}) EXPECT_GT(seen[id], 0) << "no frame of codec " << id;
  expect_same_frames_as_cpu(b, {}, extended());
  expect_decodes_cpu_frames(b, 4, false, extended());
  expect_decodes_cpu_frames(b, 1, true, extended());
}

// Frames of the extended schemes whose blocks break a rule are refused as the CPU reference
// refuses them; single bit flips in the data section, of every word, either decode as the CPU
// does or are refused by both.
TEST(BitpackPrograms, CorruptExtendedFramesGetTheCpuStatuses) {
  batch b;
  b.add(extended_patterned<std::int32_t>(1500, 0, 1), 1);   // pfor
  b.add(extended_patterned<std::int64_t>(1300, 1, 2), 1);   // pdfor
  b.add(extended_patterned<std::uint32_t>(1100, 2, 3), 1);  // drfor
  b.add(extended_patterned<std::uint16_t>(700, 0, 4), 1);   // pfor, narrow
  cpu_frames const cpu = cpu_encode(b, extended());
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    EXPECT_EQ(static_cast<int>(cpu.frames[cpu.offsets[f] + 6]), f == 1 ? 9 : f == 2 ? 10 : 8) << "frame " << f;
  }
  std::mt19937_64 rng(77);
  int refused = 0;
  for (int trial = 0; trial < 60; ++trial) {
    cpu_frames bad = cpu;
    for (std::size_t f = 0; f < b.sources.size(); ++f) {
      std::byte* frame = bad.frames.data() + bad.offsets[f];
      zs::frame_header h = zs::load_header(frame);
      if (h.payload_bytes < 8) continue;
      auto* words = reinterpret_cast<std::uint32_t*>(frame + zs::frame_header_bytes);
      std::size_t const n = h.payload_bytes / 4;
      words[rng() % n] ^= 1U << (rng() % 32);
      // A valid payload checksum, so that the block rules are what refuses.
      h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
      zs::store_header(h, frame);
    }
    std::vector<std::vector<std::byte>> cpu_out;
    std::vector<zs::decode_target> targets;
    for (auto const& s : b.sources) cpu_out.emplace_back(s.raw_bytes(), std::byte{0x33});
    for (std::size_t f = 0; f < b.sources.size(); ++f) targets.push_back({b.sources[f].type, b.sources[f].count, cpu_out[f].data()});
    std::vector<zs::frame_status> cpu_status(b.sources.size());
    extended().decode_host({bad.frames.data(), bad.offsets, targets, cpu_status.data()});
    auto const [status, out] = emulated_decode(b, bad.frames, bad.offsets, 2, false, extended());
    for (std::size_t f = 0; f < b.sources.size(); ++f) {
      ASSERT_EQ(status[f], cpu_status[f]) << "trial " << trial << ", frame " << f;
      refused += status[f] == zs::frame_status::corrupt_payload ? 1 : 0;
      if (status[f] == zs::frame_status::ok) {
        ASSERT_EQ(out[f], cpu_out[f]) << "trial " << trial << ", frame " << f;
      }
    }
  }
  EXPECT_GT(refused, 10);  // flips in the head words and bitmaps break the rules
}

}  // namespace
