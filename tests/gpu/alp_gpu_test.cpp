// The alp codec on the GPU, white box: column parameters prepared by a GPU thread are the CPU's
// bytes; batches of many frames of every awkward size (empty, one value, partial vectors) and
// every kind of float bit pattern encode to the CPU's bytes and decode both ways; vectors that
// break the format get the CPU's statuses. The conformance suite (tests/codecs) adds the real
// columns, truncation and bit flips.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "zs/codec.hpp"
#include "zs/hash.hpp"
#include "zs_test.hpp"

namespace {

const zs::codec& alp() { return zs::get_codec(zs::codec_id::alp); }

using zs::test::to_host;

// Values that exercise every path: decimals, fill runs, NaN payloads, -0.0, infinities,
// denormals, extremes, random bit patterns.
template <typename T>
std::vector<T> awkward_values(std::size_t n) {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(17);
  std::vector<T> v(n);
  T const specials[] = {T(-0.0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), L::max(), L::lowest()};
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const kind = (i / 700) % 4;
    if (kind == 0) v[i] = static_cast<T>(static_cast<double>(rng() % 100000) / 1000.0);
    if (kind == 1) v[i] = (i / 37) % 2 == 0 ? T(-1e34) : static_cast<T>(static_cast<double>(rng() % 500) / 10.0);
    if (kind == 2) v[i] = i % 3 == 0 ? specials[rng() % 7] : std::bit_cast<T>(static_cast<bits>(rng()));
    if (kind == 3) v[i] = static_cast<T>(1.0 + static_cast<double>(rng() % 1000000007) / 1000000007.0);
  }
  return v;
}

struct frame_set {
  std::vector<zs::encode_source> sources;
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;
  std::vector<std::uint64_t> bytes;
  std::vector<std::byte> params;
};

// Frames of the given sizes cut from `values` (and `mask`, the column's validity bitmap in the
// same memory, or nullptr) on one side. Two frames in three carry the mask, from their first
// row's bit: a batch mixes frames with and without.
bool masked_frame(std::size_t f) { return f % 3 != 2; }

template <typename T>
frame_set cut(const T* values, const std::vector<std::uint64_t>& sizes, const std::uint8_t* mask = nullptr) {
  frame_set s;
  std::uint64_t at = 0;
  for (auto n : sizes) {
    s.sources.push_back({zs::value_type_of<T>::value, n, values + at});
    if (mask != nullptr && masked_frame(s.sources.size() - 1)) {
      s.sources.back().null_mask = mask;
      s.sources.back().null_mask_bit = at;
    }
    at += n;
  }
  s.offsets = zs::layout_frames(alp(), s.sources);
  return s;
}

// `mask`: the column's validity (cut's frames carry it); the decoded values of its null rows
// are not compared (the CPU and GPU frames, and so what both decode, are the same bytes).
template <typename T>
void check_batch(const std::vector<T>& values, const std::vector<std::uint64_t>& sizes,
                 const std::vector<std::uint8_t>* mask = nullptr) {
  zs::cuda_stream stream;
  zs::value_type const type = zs::value_type_of<T>::value;
  zs::device_buffer device_values(values.size() * sizeof(T) + 16, stream);
  zs::copy_async(device_values.data(), values.data(), values.size() * sizeof(T), stream);
  zs::device_buffer device_mask(mask != nullptr ? mask->size() : 0, stream);
  if (mask != nullptr) zs::copy_async(device_mask.data(), mask->data(), mask->size(), stream);

  // Parameters: prepared on each side from the same pieces.
  frame_set host = cut(values.data(), sizes, mask != nullptr ? mask->data() : nullptr);
  frame_set dev = cut(device_values.as<T>(), sizes, mask != nullptr ? device_mask.as<std::uint8_t>() : nullptr);
  std::vector<std::uint64_t> const piece_begin{0, sizes.size()};
  zs::value_type const types[] = {type};
  auto const params_offsets = zs::layout_params(alp(), types);
  host.params.resize(params_offsets.back());
  alp().prepare_host({host.sources, piece_begin}, host.params.data(), params_offsets);
  zs::device_buffer device_params(params_offsets.back(), stream);
  alp().prepare_async({dev.sources, piece_begin}, device_params.as<std::byte>(), params_offsets, stream);
  EXPECT_EQ(to_host<std::byte>(device_params.data(), params_offsets.back(), stream), host.params)
      << "column parameters differ between the GPU and the CPU";
  for (auto& s : host.sources) s.params = host.params.data();
  for (auto& s : dev.sources) s.params = device_params.as<std::byte>();

  // Encode on both sides: the same frames byte for byte.
  host.frames.resize(host.offsets.back());
  host.bytes.resize(sizes.size());
  alp().encode_host({host.sources, host.frames.data(), host.offsets, host.bytes.data()});
  zs::device_buffer frames(host.offsets.back(), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0, host.offsets.back(), stream));
  zs::device_buffer bytes(sizes.size() * sizeof(std::uint64_t), stream);
  zs::device_buffer temp(alp().encode_temp_bytes(dev.sources), stream);
  alp().encode_async({dev.sources, frames.as<std::byte>(), dev.offsets, bytes.as<std::uint64_t>()}, temp.data(),
                     temp.size(), stream);
  auto const gpu_bytes = to_host<std::uint64_t>(bytes.data(), sizes.size(), stream);
  auto const gpu_frames = to_host<std::byte>(frames.data(), host.offsets.back(), stream);
  ASSERT_EQ(gpu_bytes, host.bytes);
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    EXPECT_EQ(std::memcmp(gpu_frames.data() + host.offsets[f], host.frames.data() + host.offsets[f], host.bytes[f]), 0)
        << "frame " << f << " (" << sizes[f] << " values) differs between the GPU and the CPU";
  }

  // Decode the CPU's frames on the GPU: every value's bits come back.
  zs::device_buffer out(values.size() * sizeof(T) + 16, stream);
  std::vector<zs::decode_target> targets;
  std::uint64_t at = 0;
  for (auto n : sizes) {
    targets.push_back({type, n, out.as<T>() + at});
    at += n;
  }
  zs::device_buffer in(host.offsets.back(), stream);
  zs::copy_async(in.data(), host.frames.data(), host.offsets.back(), stream);
  zs::device_buffer status(sizes.size() * sizeof(zs::frame_status), stream);
  zs::device_buffer dtemp(alp().decode_temp_bytes(targets), stream);
  alp().decode_async({in.as<std::byte>(), host.offsets, targets, status.as<zs::frame_status>()}, dtemp.data(),
                     dtemp.size(), stream);
  auto const statuses = to_host<zs::frame_status>(status.data(), sizes.size(), stream);
  for (std::size_t f = 0; f < sizes.size(); ++f) EXPECT_EQ(statuses[f], zs::frame_status::ok) << "frame " << f;
  auto const decoded = to_host<T>(out.data(), values.size(), stream);
  if (mask == nullptr) {
    EXPECT_TRUE(values.empty() || std::memcmp(decoded.data(), values.data(), values.size() * sizeof(T)) == 0)
        << "decoded bits differ";
    return;
  }
  at = 0;
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    for (std::uint64_t i = at; i < at + sizes[f]; ++i) {
      if (masked_frame(f) && !zs::row_is_valid(mask->data(), i)) continue;
      ASSERT_EQ(std::memcmp(&decoded[i], &values[i], sizeof(T)), 0) << "row " << i << " of frame " << f;
    }
    at += sizes[f];
  }
}

std::vector<std::uint64_t> awkward_sizes() {
  std::vector<std::uint64_t> sizes{0, 1, 2, 31, 1023, 1024, 1025, 4096, 0, 5000, 777};
  for (int i = 0; i < 200; ++i) sizes.push_back(static_cast<std::uint64_t>((i * 7919) % 3001));
  return sizes;
}
std::uint64_t total(const std::vector<std::uint64_t>& sizes) {
  std::uint64_t t = 0;
  for (auto n : sizes) t += n;
  return t;
}

TEST(AlpGpu, ManyAwkwardFramesOfFloat32MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(awkward_values<float>(total(sizes)), sizes);
}

TEST(AlpGpu, ManyAwkwardFramesOfFloat64MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(awkward_values<double>(total(sizes)), sizes);
}

// Null rows, given their mask, are coded as the CPU codes them: as fill cells where they are
// many (a third here, in runs and scattered), the CPU's bytes in every frame, with or without a
// mask, whatever bit the frame's first row has in it.
template <typename T>
void check_null_rows() {
  auto const sizes = awkward_sizes();
  std::vector<T> const values = awkward_values<T>(total(sizes));
  std::mt19937_64 rng(29);
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(values.size()), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if ((i / 90) % 3 != 1 && rng() % 40 != 0) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  check_batch(values, sizes, &mask);
}

TEST(AlpGpu, NullRowsOfFloat32MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  check_null_rows<float>();
}

TEST(AlpGpu, NullRowsOfFloat64MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  check_null_rows<double>();
}

// Null rows too few for a fill value repeat their vector's first value (+0.0 in a vector
// without one), as on the CPU: decimals, one row in 97 null, and a stretch of null rows longer
// than a vector.
TEST(AlpGpu, RareNullRowsMatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  std::size_t const n = total(sizes);
  std::mt19937_64 rng(31);
  std::vector<double> values(n);
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(n), 0);
  for (std::size_t i = 0; i < n; ++i) {
    bool const valid = i % 97 != 3 && (i < 20000 || i >= 22100);
    values[i] = valid ? static_cast<double>(rng() % 100000) / 1000.0 : std::numeric_limits<double>::quiet_NaN();
    if (valid) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1U << (i % 8)));
  }
  check_batch(values, sizes, &mask);
}

// Values that are not decimal, as ALP_RD codes them (the warp's sort and dictionary): few
// left parts, many, many of equal counts, rare ones among common ones, and fill cells.
template <typename T>
std::vector<T> rd_values(std::size_t n) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const kind = (i / 1024) % 5;
    double const noise = unit(rng);
    if (kind == 0) v[i] = static_cast<T>(3.7 + std::sqrt(2.0) * noise);
    if (kind == 1) v[i] = static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(rng() % 40) - 20));
    if (kind == 2) v[i] = static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(i % 16) - 8));
    if (kind == 3) v[i] = i % 5 == 0 ? T(-1e34) : static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(i % 11) - 3));
    if (kind == 4) v[i] = static_cast<T>(std::ldexp(1.0 + noise, i % 40 == 7 ? static_cast<int>(rng() % 60) - 30
                                                                             : static_cast<int>(rng() % 3)));
  }
  return v;
}

TEST(AlpGpu, AlpRdFramesOfFloat32MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(rd_values<float>(total(sizes)), sizes);
}

TEST(AlpGpu, AlpRdFramesOfFloat64MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(rd_values<double>(total(sizes)), sizes);
}

// A fill value among values of its own left part (ALP_RD of both views from one sort): fill
// runs shortened, gone, joined at wider splits; whole vectors of fill; one cell not fill.
template <typename T>
std::vector<T> fill_near_values(std::size_t n) {
  using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int low_bits = static_cast<int>(sizeof(T) * 8) - 16;  // below ALP_RD's widest left part
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  T const fill = T(-1e34);
  auto const fill_bits = static_cast<std::uint64_t>(std::bit_cast<bits_t>(fill));
  std::uint64_t const fill_top = fill_bits >> low_bits;
  auto with_top = [&](std::uint64_t top) {
    auto const b = static_cast<bits_t>((top << low_bits) | (rng() & ((std::uint64_t{1} << low_bits) - 1)));
    return b == static_cast<bits_t>(fill_bits) ? T(1.5) : std::bit_cast<T>(b);
  };
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const kind = (i / 1024) % 5;
    T const plain = static_cast<T>(3.7 + std::sqrt(2.0) * unit(rng));
    if (kind == 0) v[i] = i % 10 < 3 ? fill : i % 10 == 3 ? with_top(fill_top) : plain;
    if (kind == 1) v[i] = fill;
    if (kind == 2) v[i] = i % 1024 == 517 ? plain : fill;
    if (kind == 3) v[i] = i % 2 == 0 ? fill : with_top((fill_top & ~std::uint64_t{0xf}) | ((fill_top + 1 + rng() % 7) & 0xf));
    if (kind == 4) v[i] = i % 3 == 0 ? fill : with_top(fill_top - 20 + rng() % 41);
  }
  return v;
}

TEST(AlpGpu, FillNearItsLeftPartFramesOfFloat32MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(fill_near_values<float>(total(sizes)), sizes);
}

TEST(AlpGpu, FillNearItsLeftPartFramesOfFloat64MatchTheCpuBothWays) {
  ZS_REQUIRE_GPU();
  auto const sizes = awkward_sizes();
  check_batch(fill_near_values<double>(total(sizes)), sizes);
}

// A vector that breaks the format behind valid checksums: the GPU refuses it as the CPU does,
// and the frames beside it decode.
TEST(AlpGpu, BrokenVectorsGetTheCpuStatus) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const values = awkward_values<double>(3 * 3000);
  std::vector<std::uint64_t> const sizes{3000, 3000, 3000};
  frame_set s = cut(values.data(), sizes);
  std::vector<std::uint64_t> const piece_begin{0, 3};
  zs::value_type const types[] = {zs::value_type::float64};
  auto const params_offsets = zs::layout_params(alp(), types);
  s.params.resize(params_offsets.back());
  alp().prepare_host({s.sources, piece_begin}, s.params.data(), params_offsets);
  for (auto& x : s.sources) x.params = s.params.data();
  s.frames.resize(s.offsets.back());
  s.bytes.resize(3);
  alp().encode_host({s.sources, s.frames.data(), s.offsets, s.bytes.data()});
  // Frame 1: its second vector's mode byte set to an unknown mode.
  std::byte* frame = s.frames.data() + s.offsets[1];
  std::byte* body = frame + zs::frame_header_bytes + zs::params_section_bytes(alp().params_bytes(zs::value_type::float64));
  std::uint64_t const second = zs::detail::load_le(body, 8);
  body[3 * 8 + second] = std::byte{3};
  auto h = zs::load_header(frame);
  h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
  zs::store_header(h, frame);

  std::vector<double> host_out(values.size());
  std::vector<zs::decode_target> host_targets;
  for (int f = 0; f < 3; ++f) host_targets.push_back({zs::value_type::float64, 3000, host_out.data() + 3000 * f});
  std::vector<zs::frame_status> expected(3);
  alp().decode_host({s.frames.data(), s.offsets, host_targets, expected.data()});
  EXPECT_EQ(expected[1], zs::frame_status::corrupt_payload);

  zs::device_buffer in(s.offsets.back(), stream);
  zs::copy_async(in.data(), s.frames.data(), s.offsets.back(), stream);
  zs::device_buffer out(values.size() * sizeof(double), stream);
  std::vector<zs::decode_target> targets;
  for (int f = 0; f < 3; ++f) targets.push_back({zs::value_type::float64, 3000, out.as<double>() + 3000 * f});
  zs::device_buffer status(3 * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(alp().decode_temp_bytes(targets), stream);
  alp().decode_async({in.as<std::byte>(), s.offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                     stream);
  EXPECT_EQ(to_host<zs::frame_status>(status.data(), 3, stream), expected);
  auto const decoded = to_host<double>(out.data(), values.size(), stream);
  EXPECT_EQ(std::memcmp(decoded.data(), values.data(), 3000 * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(decoded.data() + 6000, values.data() + 6000, 3000 * sizeof(double)), 0);
}

}  // namespace
