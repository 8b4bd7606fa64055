// The bitpack codec on the GPU, white box: every decoder launch shape decodes the CPU's frames,
// batches of mixed types and of large frames match the CPU reference, and corrupt frames get the
// CPU's statuses on every launch shape. Round trips of single-type batches, identity with the
// CPU's frames, truncation, bit flips and the statuses every codec shares are in the codec
// conformance suite (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "bitpack/bitpack_format.hpp"
#include "bitpack_test_inputs.hpp"
#include "codecs/bitpack/bitpack_codec.hpp"
#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

namespace bp = zs::bitpack;

// The registered codecs: the classic schemes ("bitpack") and the extended ones ("bitpack_ext").
const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }
const zs::codec& bitpack_ext() { return zs::get_codec(zs::codec_id::bitpack_pfor); }
zs::codecs::bitpack_schemes schemes_of(const zs::codec& c) {
  return dynamic_cast<const zs::codecs::bitpack_codec&>(c).schemes();
}

using zs::test::to_host;

// Columns of mixed integer types on the host and the device, each cut into frames.
struct batch {
  std::vector<std::vector<std::byte>> host;
  std::vector<zs::device_buffer> device;
  std::vector<zs::encode_source> host_sources, device_sources;

  template <typename T>
  void add(const std::vector<T>& v, std::size_t parts, cudaStream_t stream) {
    host.emplace_back(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(host.back().data(), v.data(), v.size() * sizeof(T));
    device.emplace_back(v.size() * sizeof(T), stream);
    if (!v.empty()) zs::copy_async(device.back().data(), v.data(), v.size() * sizeof(T), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    for (std::size_t p = 0; p < parts; ++p) {
      std::size_t const begin = v.size() * p / parts, end = v.size() * (p + 1) / parts;
      // Moving a vector or buffer keeps its memory, so these stay valid as the lists grow.
      host_sources.push_back({zs::value_type_of<T>::value, end - begin,
                              reinterpret_cast<const T*>(host.back().data()) + begin});
      device_sources.push_back({zs::value_type_of<T>::value, end - begin, device.back().as<T>() + begin});
    }
  }
};

struct frames {
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> sizes;
};

// Both encoders write into buffers of stale bytes (0xEE): a header field or payload word that an
// encoder fails to write shows as a difference or a refused frame.
frames cpu_encode(const batch& b, const zs::codec& c = bitpack()) {
  frames f;
  f.offsets = zs::layout_frames(c, b.host_sources);
  f.bytes.assign(f.offsets.back(), std::byte{0xEE});
  f.sizes.assign(b.host_sources.size(), 0);
  c.encode_host({b.host_sources, f.bytes.data(), f.offsets, f.sizes.data()});
  return f;
}

frames gpu_encode(const batch& b, cudaStream_t stream, const zs::codec& c = bitpack()) {
  frames f;
  f.offsets = zs::layout_frames(c, b.device_sources);
  std::size_t const n = b.device_sources.size();
  zs::device_buffer out(f.offsets.back(), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0xEE, f.offsets.back(), stream));
  zs::device_buffer sizes(n * sizeof(std::uint64_t), stream);
  zs::device_buffer temp(c.encode_temp_bytes(b.device_sources), stream);
  c.encode_async({b.device_sources, out.as<std::byte>(), f.offsets, sizes.as<std::uint64_t>()}, temp.data(),
                 temp.size(), stream);
  f.bytes = to_host<std::byte>(out.data(), f.offsets.back(), stream);
  f.sizes = to_host<std::uint64_t>(sizes.data(), n, stream);
  return f;
}

// Decodes `in` on the GPU into targets pre-filled with 0x33; returns statuses and the targets.
// With `unaligned`, each target starts one value after a 16-byte boundary, where the decoder
// cannot regroup its stores into 16-byte ones.
std::pair<std::vector<zs::frame_status>, std::vector<std::vector<std::byte>>> gpu_decode(
    const zs::codec& c, const batch& b, const frames& in, cudaStream_t stream, bool unaligned = false) {
  std::size_t const n = b.device_sources.size();
  zs::device_buffer frames_d(in.bytes.size(), stream);
  zs::copy_async(frames_d.data(), in.bytes.data(), in.bytes.size(), stream);
  std::vector<zs::device_buffer> outs;
  std::vector<zs::decode_target> targets;
  for (auto const& s : b.device_sources) {
    std::size_t const skip = unaligned ? zs::value_width(s.type) : 0;
    outs.emplace_back(s.raw_bytes() + skip, stream);
    if (s.raw_bytes() != 0) ZS_CUDA_TRY(cudaMemsetAsync(outs.back().data(), 0x33, s.raw_bytes() + skip, stream));
    targets.push_back({s.type, s.count, outs.back().as<std::byte>() + skip});
  }
  zs::device_buffer status(n * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(c.decode_temp_bytes(targets), stream);
  c.decode_async({frames_d.as<std::byte>(), in.offsets, targets, status.as<zs::frame_status>()}, temp.data(),
                 temp.size(), stream);
  auto statuses = to_host<zs::frame_status>(status.data(), n, stream);
  std::vector<std::vector<std::byte>> values;
  for (std::size_t f = 0; f < n; ++f) values.push_back(to_host<std::byte>(targets[f].values, b.device_sources[f].raw_bytes(), stream));
  return {std::move(statuses), std::move(values)};
}

std::pair<std::vector<zs::frame_status>, std::vector<std::vector<std::byte>>> cpu_decode(
    const batch& b, const frames& in, const zs::codec& c = bitpack()) {
  std::vector<std::vector<std::byte>> values;
  std::vector<zs::decode_target> targets;
  for (auto const& s : b.host_sources) values.emplace_back(s.raw_bytes(), std::byte{0x33});
  for (std::size_t f = 0; f < b.host_sources.size(); ++f) {
    targets.push_back({b.host_sources[f].type, b.host_sources[f].count, values[f].data()});
  }
  std::vector<zs::frame_status> status(targets.size());
  c.decode_host({in.bytes.data(), in.offsets, targets, status.data()});
  return {std::move(status), std::move(values)};
}

void expect_original_values(const batch& b, const std::vector<zs::frame_status>& status,
                            const std::vector<std::vector<std::byte>>& values, const char* who) {
  for (std::size_t f = 0; f < b.host_sources.size(); ++f) {
    ASSERT_EQ(status[f], zs::frame_status::ok) << who << ", frame " << f << ": " << zs::to_string(status[f]);
    if (b.host_sources[f].count == 0) continue;
    ASSERT_EQ(std::memcmp(values[f].data(), b.host_sources[f].values, b.host_sources[f].raw_bytes()), 0)
        << who << ", frame " << f << " (" << b.host_sources[f].count << " values) decodes wrong";
  }
}

// The GPU decodes `cpu`, the CPU's frames of `b`, with each decoder launch shape in `configs`.
void decode_with_shapes(const batch& b, const frames& cpu, cudaStream_t stream,
                        std::initializer_list<zs::kernels::bitpack::decode_config> configs,
                        const zs::codec& c = bitpack()) {
  for (auto const& config : configs) {
    zs::codecs::bitpack_codec const codec(schemes_of(c), config);
    auto const [status, values] = gpu_decode(codec, b, cpu, stream);
    std::string const who = "GPU decoding CPU frames, D = " + std::to_string(config.blocks_per_tile) +
                            ", threads = " + std::to_string(config.threads);
    expect_original_values(b, status, values, who.c_str());
  }
}

// GPU frames == CPU frames; the CPU decodes the GPU's; the GPU decodes the CPU's with `codecs`.
void check_against_cpu(const batch& b, cudaStream_t stream,
                       std::initializer_list<zs::kernels::bitpack::decode_config> configs = {{}},
                       const zs::codec& c = bitpack()) {
  frames const cpu = cpu_encode(b, c);
  frames const gpu = gpu_encode(b, stream, c);
  ASSERT_EQ(gpu.sizes, cpu.sizes);
  for (std::size_t f = 0; f < cpu.sizes.size(); ++f) {
    ASSERT_EQ(std::memcmp(gpu.bytes.data() + cpu.offsets[f], cpu.bytes.data() + cpu.offsets[f], cpu.sizes[f]), 0)
        << "frame " << f << " (" << b.host_sources[f].count << " values, codec "
        << static_cast<int>(cpu.bytes[cpu.offsets[f] + 6]) << ") differs between GPU and CPU";
  }
  auto const [cpu_status, cpu_values] = cpu_decode(b, gpu, c);
  expect_original_values(b, cpu_status, cpu_values, "CPU decoding GPU frames");
  decode_with_shapes(b, cpu, stream, configs, c);
}

constexpr std::initializer_list<zs::kernels::bitpack::decode_config> all_configs = {
    {4, 128}, {8, 128}, {16, 128}, {4, 64}, {8, 64}, {16, 64}, {4, 256}, {8, 256}, {16, 256}};

// The GPU decodes the CPU's frames with each decoder launch shape in `configs`.
void check_launch_shapes(const batch& b, cudaStream_t stream,
                         std::initializer_list<zs::kernels::bitpack::decode_config> configs) {
  decode_with_shapes(b, cpu_encode(b), stream, configs);
}

class BitpackGpuRealData : public ::testing::TestWithParam<const char*> {};

TEST_P(BitpackGpuRealData, EveryLaunchShapeDecodesTheColumn) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = zs::test::data_column(GetParam());
  batch b;
  if (c.type() == zs::value_type::int32) {
    auto const* v = c.view().values<std::int32_t>();
    b.add(std::vector<std::int32_t>(v, v + c.size()), 13, stream);
  } else {
    auto const* v = c.view().values<std::uint32_t>();
    b.add(std::vector<std::uint32_t>(v, v + c.size()), 13, stream);
  }
  check_launch_shapes(b, stream, all_configs);
}

// bitpack_ext on the real column, as it comes and sorted (sorted columns take drfor and
// pdfor): the GPU's frames are the CPU's, and each side decodes the other's.
TEST_P(BitpackGpuRealData, ExtendedFramesAreTheCpus) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = zs::test::data_column(GetParam());
  batch b;
  auto const add = [&]<typename T>(const T* v) {
    std::vector<T> values(v, v + c.size());
    b.add(values, 13, stream);
    std::sort(values.begin(), values.end());
    b.add(values, 7, stream);
  };
  if (c.type() == zs::value_type::int32) {
    add(c.view().values<std::int32_t>());
  } else {
    add(c.view().values<std::uint32_t>());
  }
  check_against_cpu(b, stream, {{4, 128}, {16, 256}}, bitpack_ext());
}

INSTANTIATE_TEST_SUITE_P(IntegerColumns, BitpackGpuRealData,
                         ::testing::Values("etopo5_elev_m.i32", "ncbi_tax_id.i32", "geoip4_lo.u32"));

template <typename T>
class BitpackGpuTyped : public ::testing::Test {};
using integer_types = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
TYPED_TEST_SUITE(BitpackGpuTyped, integer_types);

TYPED_TEST(BitpackGpuTyped, EveryLaunchShapeDecodesTheAdversarialInputs) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) b.add(v, 1, stream);
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) b.add(v, 3, stream);
  check_launch_shapes(b, stream, all_configs);
}

TEST(BitpackGpuBatch, ManySmallFramesOfMixedTypesInOneBatch) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> a(100000);
  std::vector<std::uint32_t> b32(70000);
  std::vector<std::int32_t> c(5000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int64_t>(i * i) - 5000;
  for (std::size_t i = 0; i < b32.size(); ++i) b32[i] = static_cast<std::uint32_t>((i / 700) * 77 + (rng() % 2));
  for (auto& x : c) x = static_cast<std::int32_t>(rng());
  batch b;
  b.add(a, 4096, stream);
  b.add(b32, 333, stream);
  b.add(c, 7, stream);
  check_against_cpu(b, stream);
}

// Narrow integers (coded as their 32-bit widening, or left raw) in frames that start at any byte,
// mixed with 32- and 64-bit ones: the GPU's frames equal the CPU's byte for byte, and decode on
// both sides; then into targets off 16 bytes.
TEST(BitpackGpuBatch, NarrowTypesInFramesStartingAnywhere) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::mt19937_64 rng(17);
  std::vector<std::int8_t> small(70001), random8(5003);
  std::vector<std::uint8_t> runs(40000);
  std::vector<std::int16_t> steps(33333);
  std::vector<std::uint16_t> high(20000);
  std::vector<std::int32_t> between(3000);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<std::int8_t>(static_cast<int>(rng() % 9) - 4);
  for (auto& x : random8) x = static_cast<std::int8_t>(rng());
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i] = static_cast<std::uint8_t>((i / 90) % 2 == 0 ? 255 : i / 90);
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i] = static_cast<std::int16_t>(-32000 + static_cast<int>(i) * 2);
  for (std::size_t i = 0; i < high.size(); ++i) high[i] = static_cast<std::uint16_t>(65535 - rng() % 300);
  for (auto& x : between) x = static_cast<std::int32_t>(rng() % 1000);
  batch b;
  b.add(small, 13, stream);
  b.add(random8, 3, stream);
  b.add(runs, 1, stream);
  b.add(between, 2, stream);
  b.add(steps, 7, stream);
  b.add(high, 5, stream);
  for (auto const& v : zs::test::adversarial_inputs<std::int8_t>()) b.add(v, 3, stream);
  for (auto const& v : zs::test::adversarial_inputs<std::uint16_t>()) b.add(v, 2, stream);
  check_against_cpu(b, stream);
  frames const cpu = cpu_encode(b);
  for (auto const& config : all_configs) {
    zs::codecs::bitpack_codec const codec(config);
    auto const [status, values] = gpu_decode(codec, b, cpu, stream, true);
    std::string const who = "GPU decoding narrow values into unaligned targets, D = " +
                            std::to_string(config.blocks_per_tile) + ", threads = " + std::to_string(config.threads);
    expect_original_values(b, status, values, who.c_str());
  }
}

// A frame claiming a narrow type whose payload decodes to values outside it (int8 holding 300)
// is corrupt on the GPU as on the CPU; the frames beside it decode.
TEST(BitpackGpuCorrupt, NarrowFramesWhoseValuesDoNotFitAreRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::int32_t> wide(3000);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int32_t>(i % 50);
  std::vector<std::int8_t> narrow(wide.begin(), wide.end());
  wide[1777] = 300;
  batch b;
  b.add(narrow, 1, stream);  // frame 0: rewritten below to hold the int32 frame's payload
  b.add(narrow, 2, stream);  // frames 1 and 2 stay as they are
  frames in = cpu_encode(b);
  batch w;
  w.add(wide, 1, stream);
  frames const bad = cpu_encode(w);
  zs::frame_header h = zs::load_header(bad.bytes.data());
  ASSERT_NE(h.codec, zs::codec_id::raw);
  h.type = zs::value_type::int8;
  h.raw_bytes = wide.size();
  std::vector<std::byte> frame(bad.bytes.begin(), bad.bytes.begin() + static_cast<std::ptrdiff_t>(bad.sizes[0]));
  zs::store_header(h, frame.data());
  ASSERT_LE(frame.size(), in.offsets[1] - in.offsets[0]) << "the frame fits the first slot";
  std::copy(frame.begin(), frame.end(), in.bytes.begin() + static_cast<std::ptrdiff_t>(in.offsets[0]));
  auto const [expected, expected_values] = cpu_decode(b, in);
  ASSERT_EQ(expected[0], zs::frame_status::corrupt_payload);
  for (auto const& config : all_configs) {
    zs::codecs::bitpack_codec const codec(config);
    auto const [status, values] = gpu_decode(codec, b, in, stream);
    EXPECT_EQ(status, expected);
    EXPECT_EQ(values[1], expected_values[1]);
    EXPECT_EQ(values[2], expected_values[2]);
  }
}

TEST(BitpackGpuBatch, TargetsOffSixteenByteBoundaries) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::int32_t> a(50000);
  std::vector<std::uint64_t> d(30000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int32_t>(3 * i) - 7000;
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = (std::uint64_t{1} << 40) + (i % 1000) * 9;
  batch b;
  b.add(a, 3, stream);
  b.add(d, 2, stream);
  frames const cpu = cpu_encode(b);
  for (auto const& config : all_configs) {
    zs::codecs::bitpack_codec const codec(config);
    auto const [status, values] = gpu_decode(codec, b, cpu, stream, true);
    std::string const who = "GPU decoding into unaligned targets, D = " + std::to_string(config.blocks_per_tile) +
                            ", threads = " + std::to_string(config.threads);
    expect_original_values(b, status, values, who.c_str());
  }
}

// The decoder copies payloads in 16-byte chunks: a frames buffer off a 16-byte boundary is
// refused up front, before anything runs, and the same frames decode from an aligned buffer.
TEST(BitpackGpuBatch, FramesBufferOffSixteenBytesIsRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  b.add(std::vector<std::int32_t>(3000, 7), 2, stream);
  frames const f = cpu_encode(b);
  zs::device_buffer frames_d(f.bytes.size() + 16, stream);
  zs::copy_async(frames_d.as<std::byte>() + 4, f.bytes.data(), f.bytes.size(), stream);
  zs::device_buffer out(b.device_sources[0].raw_bytes() + b.device_sources[1].raw_bytes(), stream);
  std::vector<zs::decode_target> targets;
  std::size_t at = 0;
  for (auto const& s : b.device_sources) {
    targets.push_back({s.type, s.count, out.as<std::byte>() + at});
    at += s.raw_bytes();
  }
  zs::device_buffer status(targets.size() * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(bitpack().decode_temp_bytes(targets), stream);
  EXPECT_THROW(bitpack().decode_async({frames_d.as<std::byte>() + 4, f.offsets, targets, status.as<zs::frame_status>()},
                                      temp.data(), temp.size(), stream),
               zs::error);
  auto const [statuses, values] = gpu_decode(bitpack(), b, f, stream);
  expect_original_values(b, statuses, values, "the same frames from an aligned buffer");
}

TEST(BitpackGpuBatch, LargeFramesOfManySegments) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = zs::test::data_column("etopo5_elev_m.i32");
  auto const* v = c.view().values<std::int32_t>();
  std::vector<std::int32_t> big(c.size() * 5);  // 20M values, 80 MB
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = v[(i * 7) % c.size()] + static_cast<std::int32_t>(i / c.size());
  batch b;
  b.add(big, 3, stream);
  std::vector<std::uint64_t> wide(3000000);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = (std::uint64_t{1} << 50) + 1000 * i + (i % 7);
  b.add(wide, 2, stream);
  check_against_cpu(b, stream, {{8, 128}, {8, 256}, {16, 64}});
}

// Frames the CPU refuses are refused by the GPU with the same status; the others of the batch
// decode as on the CPU. (A refused frame's target is unspecified on the GPU: the decoder sums
// the checksum as it writes.)
TEST(BitpackGpuCorrupt, StatusesMatchTheCpuAndTheOtherFramesDecode) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  std::mt19937_64 rng(5);
  for (int round = 0; round < 4; ++round) {
    std::vector<std::int32_t> small(1400), sorted(1400), runs(1400);
    std::vector<std::uint64_t> small64(1400), sorted64(1400), runs64(1400);
    for (std::size_t i = 0; i < 1400; ++i) {
      small[i] = static_cast<std::int32_t>(rng() % 200);
      sorted[i] = static_cast<std::int32_t>(5000 + 11 * i + rng() % 4);
      runs[i] = static_cast<std::int32_t>((i / 150) * 1000);
      small64[i] = rng() % 200;
      sorted64[i] = (std::uint64_t{1} << 40) + 11 * i + rng() % 4;
      runs64[i] = (i / 150) * 100000000000ULL;
    }
    b.add(small, 1, stream);
    b.add(sorted, 1, stream);
    b.add(runs, 1, stream);
    b.add(small64, 1, stream);
    b.add(sorted64, 1, stream);
    b.add(runs64, 1, stream);
  }
  frames in = cpu_encode(b);
  std::size_t const n = b.host_sources.size();
  for (std::size_t f = 0; f < n; ++f) {
    if (f % 6 == 5) continue;  // leave some frames intact
    std::byte* frame = in.bytes.data() + in.offsets[f];
    zs::frame_header h = zs::load_header(frame);
    std::uint64_t const words = h.payload_bytes / 4;
    std::uint64_t const blocks = bp::block_count(static_cast<bp::scheme>(h.codec), h.value_count);
    std::uint64_t const i = (f % 2 == 0 ? rng() % (blocks + 4) : rng() % words) % words;
    std::byte* w = frame + zs::frame_header_bytes + 4 * i;
    zs::detail::store_le(w, zs::detail::load_le(w, 4) ^ (std::uint64_t{1} << (rng() % 32)), 4);
    h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frame);
  }
  auto const [expected, expected_values] = cpu_decode(b, in);
  std::size_t refused = 0;
  for (auto s : expected) refused += s == zs::frame_status::corrupt_payload;
  EXPECT_GT(refused, 0U);
  for (auto const& config : all_configs) {
    zs::codecs::bitpack_codec const codec(config);
    auto const [status, values] = gpu_decode(codec, b, in, stream);
    EXPECT_EQ(status, expected);
    for (std::size_t f = 0; f < n; ++f) {
      if (expected[f] == zs::frame_status::ok) {
        EXPECT_EQ(values[f], expected_values[f]) << "frame " << f;
      }
    }
  }
}

TEST(BitpackGpuCorrupt, AFrameEndingOffTheAlignmentDecodes) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  std::vector<std::uint32_t> v(5000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(i % 300);
  b.add(v, 1, stream);
  frames in = cpu_encode(b);
  // The frame alone, in a buffer that ends where the frame does (not on 16 bytes): it decodes,
  // and the decoder reads nothing past the buffer (compute-sanitizer checks that).
  std::uint64_t const size = in.sizes[0];
  in.bytes.resize(size);
  in.offsets = {0, size};
  auto const [status, values] = gpu_decode(bitpack(), b, in, stream);
  expect_original_values(b, status, values, "GPU decoding a tightly sized frame");
}

// The decoder's frame pass checks each header as the CPU does (the base class runs no header
// check of its own for this codec): the frames with a bad one are refused with the CPU's
// statuses, and the others decode.
TEST(BitpackGpuCorrupt, HeadersAreCheckedLikeTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  for (int f = 0; f < 6; ++f) {
    std::vector<std::int32_t> v(1500 + 100 * f);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>((i * 7 + f) % 500);
    b.add(v, 1, stream);
  }
  frames in = cpu_encode(b);
  auto const header = [&](std::size_t f) { return in.bytes.data() + in.offsets[f]; };
  header(0)[0] ^= std::byte{1};  // magic
  header(1)[9] ^= std::byte{4};  // a header field, the header checksum not redone
  for (std::size_t f : {2, 3}) {  // the version, and a codec it does not decode, resealed
    zs::frame_header h = zs::load_header(header(f));
    if (f == 2) h.version = 2;
    if (f == 3) h.codec = zs::codec_id::fsst;
    zs::store_header(h, header(f));
  }
  auto const [expected, expected_values] = cpu_decode(b, in);
  std::vector<zs::frame_status> const statuses{zs::frame_status::bad_magic, zs::frame_status::bad_header_checksum,
                                               zs::frame_status::bad_version, zs::frame_status::wrong_codec,
                                               zs::frame_status::ok, zs::frame_status::ok};
  ASSERT_EQ(expected, statuses);
  auto const [status, values] = gpu_decode(bitpack(), b, in, stream);
  EXPECT_EQ(status, expected);
  EXPECT_EQ(values[4], expected_values[4]);
  EXPECT_EQ(values[5], expected_values[5]);
}

// Columns where each extended scheme wins (pfor: outliers; pdfor: steps with jumps; drfor:
// short runs rising; a for frame between them), as 32-bit, 64-bit and narrow values.
template <typename T>
std::vector<std::vector<T>> extended_columns(std::size_t n) {
  std::vector<T> outliers(n), jumps(n), sorted_runs(n), small(n);
  for (std::size_t i = 0; i < n; ++i) {
    outliers[i] = static_cast<T>(i % 128 == 100 ? std::numeric_limits<T>::max() / 2 : (i * 7919) % 4);
    jumps[i] = static_cast<T>(10 + 3 * i + (i / 128 + (i % 128 > 70)) * 300);
    sorted_runs[i] = static_cast<T>(5 + (i / 3) * 2 + (i / 3) % 2);
    small[i] = static_cast<T>(i % 100);
  }
  return {outliers, small, jumps, sorted_runs};
}

// bitpack_ext writes pfor, pdfor and drfor on the GPU as the CPU reference does, for every
// integer type, and reads them with every decoder launch shape.
TEST(BitpackGpuExtended, FramesOfEverySchemeAreTheCpus) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  for (auto const& v : extended_columns<std::int32_t>(3000)) b.add(v, 1, stream);
  for (auto const& v : extended_columns<std::uint64_t>(2100)) b.add(v, 2, stream);
  for (auto const& v : extended_columns<std::int16_t>(1300)) b.add(v, 1, stream);
  for (auto const& v : extended_columns<std::uint8_t>(700)) b.add(v, 3, stream);
  frames const cpu = cpu_encode(b, bitpack_ext());
  std::vector<int> seen(16, 0);
  for (std::size_t f = 0; f < cpu.sizes.size(); ++f) ++seen[static_cast<int>(cpu.bytes[cpu.offsets[f] + 6])];
  for (int id : {8, 9, 10}) EXPECT_GT(seen[id], 0) << "no frame of codec " << id;
  check_against_cpu(b, stream, all_configs, bitpack_ext());
}

template <typename T>
class BitpackGpuExtendedTyped : public ::testing::Test {};
using all_integer_types = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, std::int8_t,
                                           std::uint8_t, std::int16_t, std::uint16_t>;
TYPED_TEST_SUITE(BitpackGpuExtendedTyped, all_integer_types);

TYPED_TEST(BitpackGpuExtendedTyped, AdversarialInputsAndExtendedColumns) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  for (auto const& v : zs::test::adversarial_inputs<TypeParam>()) b.add(v, 1, stream);
  for (auto const& v : extended_columns<TypeParam>(5000)) b.add(v, 2, stream);
  check_against_cpu(b, stream, {{4, 128}, {16, 256}}, bitpack_ext());
}

// Frames of the extended schemes reach a decoder of the classic schemes as frames of codecs it
// does not decode: refused with wrong_codec, as the CPU refuses them, never decoded as another
// scheme; the frames around them decode.
TEST(BitpackGpuCorrupt, FramesOfTheExtendedSchemesAreRefusedByTheClassicCodec) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  for (auto const& v : extended_columns<std::int32_t>(3000)) b.add(v, 1, stream);
  b.add(std::vector<std::int32_t>(3000, 7), 1, stream);  // one value: a for frame (ties go to the lower id)
  frames const in = cpu_encode(b, bitpack_ext());
  // Which scheme each frame took is the encoder's choice by size; the decoder must refuse
  // exactly the extended ones.
  std::vector<zs::frame_status> expected;
  std::set<zs::codec_id> extended_seen;
  for (std::size_t f = 0; f < in.sizes.size(); ++f) {
    auto const id = zs::load_header(in.bytes.data() + in.offsets[f]).codec;
    bool const extended = id == zs::codec_id::bitpack_pfor || id == zs::codec_id::bitpack_pdfor ||
                          id == zs::codec_id::bitpack_drfor;
    if (extended) extended_seen.insert(id);
    expected.push_back(extended ? zs::frame_status::wrong_codec : zs::frame_status::ok);
  }
  ASSERT_EQ(extended_seen.size(), 3u) << "the columns should take pfor, pdfor and drfor";
  ASSERT_EQ(expected.back(), zs::frame_status::ok);
  zs::codecs::bitpack_codec const classic(zs::codecs::bitpack_schemes::classic);
  auto const [status, values] = gpu_decode(classic, b, in, stream);
  EXPECT_EQ(status, expected);
  std::size_t const last = expected.size() - 1;
  EXPECT_EQ(std::memcmp(values[last].data(), b.host_sources[last].values, b.host_sources[last].raw_bytes()), 0);
}

// The decoder sums the payload checksum as it decodes: a payload that disagrees with its
// header's checksum is refused, on every tile shape, and the frames around it decode.
TEST(BitpackGpuCorrupt, PayloadsThatFailTheirChecksumAreRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  batch b;
  std::mt19937_64 rng(9);
  for (std::size_t n : {1U, 600U, 5000U, 20000U}) {
    std::vector<std::int32_t> sorted(n);
    std::vector<std::uint64_t> runs(n);
    for (std::size_t i = 0; i < n; ++i) {
      sorted[i] = static_cast<std::int32_t>(11 * i + rng() % 4);
      runs[i] = (i / 90) * 3;
    }
    b.add(sorted, 2, stream);
    b.add(runs, 1, stream);
  }
  frames in = cpu_encode(b);
  std::size_t const n = b.host_sources.size();
  std::vector<zs::frame_status> expected(n, zs::frame_status::ok);
  for (std::size_t f = 0; f < n; f += 2) {
    std::byte* frame = in.bytes.data() + in.offsets[f];
    zs::frame_header h = zs::load_header(frame);
    h.payload_checksum ^= 0x100;  // the header stays valid: only the payload's sum disagrees
    zs::store_header(h, frame);
    expected[f] = zs::frame_status::bad_payload_checksum;
  }
  EXPECT_EQ(cpu_decode(b, in).first, expected);
  for (auto const& config : all_configs) {
    zs::codecs::bitpack_codec const codec(config);
    auto const [status, values] = gpu_decode(codec, b, in, stream);
    EXPECT_EQ(status, expected) << "D = " << config.blocks_per_tile << ", threads = " << config.threads;
    for (std::size_t f = 1; f < n; f += 2) {
      EXPECT_EQ(std::memcmp(values[f].data(), b.host_sources[f].values, b.host_sources[f].raw_bytes()), 0) << f;
    }
  }
}

}  // namespace
