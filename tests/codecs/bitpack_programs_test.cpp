// The GPU encoder's and decoder's thread-block programs, run on the CPU by an emulated thread
// block (block_emulator.hpp) in the order bitpack_kernels.cu launches them. CI has no GPU: this
// is where it checks the GPU logic, against the CPU reference, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bitpack/bitpack_programs.hpp"
#include "bitpack_test_inputs.hpp"
#include "block_emulator.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

namespace bp = zs::bitpack;
namespace gp = zs::bitpack::gpu;
using zs::kernels::chunk_prefix;

const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }

std::vector<std::uint64_t> class_map(std::span<const std::uint64_t> segments,
                                     std::span<const std::size_t> widths, std::size_t width,
                                     std::uint64_t per_chunk) {
  std::vector<std::uint64_t> items(segments.size());
  for (std::size_t f = 0; f < segments.size(); ++f) items[f] = widths[f] == width ? segments[f] : 0;
  return chunk_prefix(items, per_chunk);
}

// The sequence of bitpack_kernels.cu's encode() and decode(), with the programs emulated.
template <unsigned Threads>
struct emulated {
  using emu = zs::test::block_emulator<Threads>;
  using block = typename emu::block;

  static std::vector<std::uint64_t> encode(std::span<const zs::encode_source> sources, std::byte* frames,
                                           std::span<const std::uint64_t> offsets) {
    std::size_t const nf = sources.size();
    std::vector<std::uint64_t> segments(nf);
    std::vector<std::size_t> widths(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      segments[f] = bp::segment_count(sources[f].count);
      widths[f] = zs::value_width(sources[f].type);
    }
    auto const chunks32 = class_map(segments, widths, 4, 1);
    auto const chunks64 = class_map(segments, widths, 8, 1);
    std::uint64_t const s32 = chunks32.back(), s64 = chunks64.back();
    std::vector<std::uint64_t> seg_first(nf);
    for (std::size_t f = 0; f < nf; ++f) seg_first[f] = widths[f] == 8 ? s32 + chunks64[f] : chunks32[f];
    std::vector<gp::scheme_words> sizes(s32 + s64), scanned(s32 + s64 + 1);
    std::vector<std::uint8_t> kept(s32 + s64), choice(nf);
    std::vector<std::uint32_t> slots32(s32 * gp::slot_words(32) + 4), slots64(s64 * gp::slot_words(64) + 4);

    for (std::size_t f = 0; f < nf; ++f) {  // what the base class writes before the payloads
      zs::frame_header h;
      h.codec = zs::codec_id::bitpack_for;
      h.type = sources[f].type;
      h.value_count = sources[f].count;
      h.raw_bytes = sources[f].raw_bytes();
      zs::store_header(h, frames + offsets[f]);
    }
    std::vector<std::uint32_t> frame32(s32), frame64(s64);
    for (std::uint64_t c = 0; c < s32; ++c) gp::index_chunk(chunks32.data(), nf, c, frame32.data());
    for (std::uint64_t c = 0; c < s64; ++c) gp::index_chunk(chunks64.data(), nf, c, frame64.data());
    gp::encode_args const a{sources.data(), frames,         offsets.data(), nf,          nullptr,      nullptr,
                            seg_first.data(), sizes.data(), scanned.data(), kept.data(), choice.data(), nullptr};
    gp::encode_args a32 = a, a64 = a;
    a32.chunks = chunks32.data();
    a32.chunk_frame = frame32.data();
    a32.slots = slots32.data();
    a64.chunks = chunks64.data();
    a64.chunk_frame = frame64.data();
    a64.slots = slots64.data();

    emu::run(s32, sizeof(gp::analyze_smem<std::uint32_t>), [&](block& blk, std::uint64_t b, std::byte* smem) {
      gp::analyze_program(blk, a32, b, *reinterpret_cast<gp::analyze_smem<std::uint32_t>*>(smem));
    });
    emu::run(s64, sizeof(gp::analyze_smem<std::uint64_t>), [&](block& blk, std::uint64_t b, std::byte* smem) {
      gp::analyze_program(blk, a64, b, *reinterpret_cast<gp::analyze_smem<std::uint64_t>*>(smem));
    });
    scanned[0] = {{0, 0, 0}};
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      for (int i = 0; i < 3; ++i) scanned[s + 1].w[i] = scanned[s].w[i] + sizes[s].w[i];
    }
    for (std::size_t f = 0; f < nf; ++f) gp::choose_frame(a, f);
    emu::run(s32, sizeof(gp::pack_smem<std::uint32_t>), [&](block& blk, std::uint64_t b, std::byte* smem) {
      gp::pack_program(blk, a32, b, *reinterpret_cast<gp::pack_smem<std::uint32_t>*>(smem));
    });
    emu::run(s64, sizeof(gp::pack_smem<std::uint64_t>), [&](block& blk, std::uint64_t b, std::byte* smem) {
      gp::pack_program(blk, a64, b, *reinterpret_cast<gp::pack_smem<std::uint64_t>*>(smem));
    });

    std::vector<std::uint64_t> frame_bytes(nf);
    for (std::size_t f = 0; f < nf; ++f) {  // what the base class does after
      zs::frame_header h = zs::load_header(frames + offsets[f]);
      h.payload_checksum = zs::hash::checksum(frames + offsets[f] + zs::frame_header_bytes, h.payload_bytes);
      zs::store_header(h, frames + offsets[f]);
      frame_bytes[f] = zs::frame_header_bytes + h.payload_bytes;
    }
    return frame_bytes;
  }

  static std::vector<zs::frame_status> decode(const std::byte* frames, std::span<const std::uint64_t> offsets,
                                              std::span<const zs::decode_target> targets, std::uint32_t g) {
    std::size_t const nf = targets.size();
    std::vector<zs::frame_status> status(nf);
    for (std::size_t f = 0; f < nf; ++f) {  // the base class's validation
      status[f] = zs::validate_frame_host(frames + offsets[f], offsets[f + 1] - offsets[f],
                                          {bitpack().decodes(), targets[f].type, targets[f].count,
                                           targets[f].raw_bytes()});
    }
    std::vector<std::uint64_t> segments(nf);
    std::vector<std::size_t> widths(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      bool const integer = zs::is_integer(targets[f].type);
      segments[f] = integer ? bp::segment_count(targets[f].count) : 0;
      widths[f] = integer ? zs::value_width(targets[f].type) : 0;
    }
    auto const checks = chunk_prefix(segments, Threads);
    auto const chunks32 = class_map(segments, widths, 4, g);
    auto const chunks64 = class_map(segments, widths, 8, g);
    std::vector<bp::frame_layout> layouts(nf);
    gp::decode_args a{frames, offsets.data(), targets.data(), status.data(), nf, layouts.data(), nullptr, g, nullptr};
    for (std::size_t f = 0; f < nf; ++f) gp::check_frame(a, f);
    gp::decode_args v = a;
    v.chunks = checks.data();
    emu::run(checks.back(), 0, [&](block& blk, std::uint64_t b, std::byte*) { gp::validate_program(blk, v, b); });
    std::vector<gp::chunk_plan> plans32(chunks32.back()), plans64(chunks64.back());
    gp::decode_args a32 = a, a64 = a;
    a32.chunks = chunks32.data();
    a32.plans = plans32.data();
    a64.chunks = chunks64.data();
    a64.plans = plans64.data();
    for (std::uint64_t c = 0; c < plans32.size(); ++c) gp::plan_chunk(a32, c);
    for (std::uint64_t c = 0; c < plans64.size(); ++c) gp::plan_chunk(a64, c);
    emu::run(chunks32.back(), gp::decode_smem_layout<std::uint32_t>(g).bytes,
             [&](block& blk, std::uint64_t b, std::byte* smem) {
               gp::decode_program<block, std::uint32_t>(blk, a32, b, smem);
             });
    emu::run(chunks64.back(), gp::decode_smem_layout<std::uint64_t>(g).bytes,
             [&](block& blk, std::uint64_t b, std::byte* smem) {
               gp::decode_program<block, std::uint64_t>(blk, a64, b, smem);
             });
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
  }
  return b;
}

struct cpu_frames {
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> bytes;
};

cpu_frames cpu_encode(const batch& b) {
  cpu_frames c;
  c.offsets = zs::layout_frames(bitpack(), b.sources);
  c.frames.assign(c.offsets.back(), std::byte{0});
  c.bytes.assign(b.sources.size(), 0);
  bitpack().encode_host({b.sources, c.frames.data(), c.offsets, c.bytes.data()});
  return c;
}

template <unsigned Threads>
void expect_same_frames_as_cpu(const batch& b) {
  cpu_frames const cpu = cpu_encode(b);
  std::vector<std::byte> frames(cpu.offsets.back(), std::byte{0});
  auto const bytes = emulated<Threads>::encode(b.sources, frames.data(), cpu.offsets);
  ASSERT_EQ(bytes, cpu.bytes);
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    ASSERT_EQ(std::memcmp(frames.data() + cpu.offsets[f], cpu.frames.data() + cpu.offsets[f], bytes[f]), 0)
        << "frame " << f << " (" << b.sources[f].count << " values, codec "
        << static_cast<int>(cpu.frames[cpu.offsets[f] + 6]) << ") differs from the CPU's";
  }
}

// Decodes `frames` with the emulated programs into per-frame buffers filled with 0x33 first.
template <unsigned Threads>
std::pair<std::vector<zs::frame_status>, std::vector<std::vector<std::byte>>> emulated_decode(
    const batch& b, const std::vector<std::byte>& frames, std::span<const std::uint64_t> offsets, std::uint32_t g) {
  std::vector<std::vector<std::byte>> out;
  std::vector<zs::decode_target> targets;
  for (auto const& s : b.sources) {
    out.emplace_back(s.raw_bytes(), std::byte{0x33});
  }
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    targets.push_back({b.sources[f].type, b.sources[f].count, out[f].data()});
  }
  auto status = emulated<Threads>::decode(frames.data(), offsets, targets, g);
  return {std::move(status), std::move(out)};
}

template <unsigned Threads>
void expect_decodes_cpu_frames(const batch& b, std::uint32_t g) {
  cpu_frames const cpu = cpu_encode(b);
  auto const [status, out] = emulated_decode<Threads>(b, cpu.frames, cpu.offsets, g);
  for (std::size_t f = 0; f < b.sources.size(); ++f) {
    ASSERT_EQ(status[f], zs::frame_status::ok) << "frame " << f << ": " << zs::to_string(status[f]);
    if (b.sources[f].count == 0) continue;
    ASSERT_EQ(std::memcmp(out[f].data(), b.sources[f].values, b.sources[f].raw_bytes()), 0)
        << "frame " << f << " (" << b.sources[f].count << " values, codec "
        << static_cast<int>(cpu.frames[cpu.offsets[f] + 6]) << ") decodes wrong";
  }
}

TEST(BitpackPrograms, EncoderWritesTheCpuFramesByteForByte) {
  auto const b = mixed_batch();
  expect_same_frames_as_cpu<32>(b);
  expect_same_frames_as_cpu<64>(b);
}

TEST(BitpackPrograms, EncoderUsesEverySchemeInTheMixedBatch) {
  auto const b = mixed_batch();
  cpu_frames const cpu = cpu_encode(b);
  std::vector<int> seen(4, 0);
  for (std::size_t f = 0; f < b.sources.size(); ++f) ++seen[static_cast<int>(cpu.frames[cpu.offsets[f] + 6])];
  for (int s = 0; s < 4; ++s) EXPECT_GT(seen[s], 0) << "no frame of codec " << s;
}

TEST(BitpackPrograms, DecoderReadsTheCpuFramesWithEveryChunkSize) {
  auto const b = mixed_batch();
  for (std::uint32_t g : {1U, 2U, 3U, 8U}) {
    SCOPED_TRACE("segments per chunk " + std::to_string(g));
    expect_decodes_cpu_frames<64>(b, g);
  }
  expect_decodes_cpu_frames<32>(b, 4);
  expect_decodes_cpu_frames<128>(b, 4);
}

TEST(BitpackPrograms, AdversarialInputsOfEveryTypeInOneBatch) {
  batch b;
  for (auto const& v : zs::test::adversarial_inputs<std::int32_t>()) b.add(v, 1);
  for (auto const& v : zs::test::adversarial_inputs<std::uint32_t>()) b.add(v, 2);
  for (auto const& v : zs::test::adversarial_inputs<std::int64_t>()) b.add(v, 1);
  for (auto const& v : zs::test::adversarial_inputs<std::uint64_t>()) b.add(v, 2);
  expect_same_frames_as_cpu<64>(b);
  expect_decodes_cpu_frames<64>(b, 2);
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
  expect_same_frames_as_cpu<64>(b);
  expect_decodes_cpu_frames<64>(b, 4);
}

// Corrupt payloads behind valid checksums get the CPU's status and leave their targets as they
// were; the other frames of the batch decode.
TEST(BitpackPrograms, CorruptFramesGetTheCpuStatusesAndStayUnwritten) {
  batch b;
  for (int kind = 0; kind < 3; ++kind) {
    b.add(patterned<std::int32_t>(1400, kind, 10 + kind), 1);
    b.add(patterned<std::uint64_t>(1400, kind, 20 + kind), 1);
  }
  cpu_frames cpu = cpu_encode(b);
  std::mt19937_64 rng(5);
  std::size_t const nf = b.sources.size();
  for (int round = 0; round < 12; ++round) {
    std::vector<std::byte> frames = cpu.frames;
    // Edit one or two words of each frame's block starts or block headers, then reseal.
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

    auto const [status, out] = emulated_decode<64>(b, frames, cpu.offsets, 2);
    EXPECT_EQ(status, expected) << "round " << round;
    for (std::size_t f = 0; f < nf; ++f) {
      EXPECT_EQ(out[f], expected_out[f]) << "round " << round << " frame " << f << " "
                                         << zs::to_string(status[f]);
    }
  }
}

}  // namespace
