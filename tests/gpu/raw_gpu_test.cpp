// The raw codec on the GPU, checked against the CPU reference: the same frames byte for byte,
// and each side decodes what the other wrote.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::empty_like;
using zs::test::expect_same_column;
using zs::test::partition_sources;
using zs::test::partition_targets;

const zs::codec& raw() { return zs::get_codec(zs::codec_id::raw); }

template <typename T>
std::vector<T> to_host(const zs::device_buffer& d, std::size_t count, cudaStream_t stream) {
  std::vector<T> h(count);
  zs::copy_async(h.data(), d.data(), count * sizeof(T), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return h;
}

// Decodes host `frames` on the GPU into a column shaped like `like` whose value bytes start as
// 0x5A (so a target a refused frame wrote to shows), one target per source; returns the frame
// statuses and the column, back in host memory.
std::pair<std::vector<zs::frame_status>, zs::column> decode_on_gpu(const std::vector<std::byte>& frames,
                                                                   const std::vector<std::uint64_t>& offsets,
                                                                   const std::vector<zs::encode_source>& sources,
                                                                   const zs::column& like, cudaStream_t stream) {
  zs::device_buffer in(frames.size(), stream);
  zs::copy_async(in.data(), frames.data(), frames.size(), stream);
  zs::column device_out = empty_like(like, zs::memory_kind::device, stream);
  auto dv = device_out.mutable_view();
  ZS_CUDA_TRY(cudaMemsetAsync(dv.data, 0x5A, like.data_bytes(), stream));
  auto const targets = partition_targets(sources, dv);
  zs::device_buffer status(targets.size() * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(raw().decode_temp_bytes(targets), stream);
  raw().decode_async({in.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                     stream);
  auto statuses = to_host<zs::frame_status>(status, targets.size(), stream);
  return {std::move(statuses), device_out.copy_to(zs::memory_kind::host, stream)};
}

// Encodes `c` in `parts` frames on the GPU and on the CPU; checks the frames are identical,
// then decodes the GPU frames on the CPU and the CPU frames on the GPU.
void check_against_cpu(const zs::column& c, std::size_t parts) {
  zs::cuda_stream stream;
  zs::column const d = c.copy_to(zs::memory_kind::device, stream);
  auto const host_sources = partition_sources(c.view(), c.view(), parts);
  auto const device_sources = partition_sources(c.view(), d.view(), parts);
  auto const offsets = zs::layout_frames(raw(), host_sources);
  std::uint64_t const total = offsets.back();

  // CPU reference frames. Both encoders write into stale bytes (0xEE): a header field an encoder
  // fails to write shows as a difference or a refused frame.
  std::vector<std::byte> cpu_frames(total, std::byte{0xEE});
  std::vector<std::uint64_t> cpu_bytes(parts);
  raw().encode_host({host_sources, cpu_frames.data(), offsets, cpu_bytes.data()});

  // GPU frames.
  zs::device_buffer frames(total, stream);
  zs::device_buffer frame_bytes(parts * sizeof(std::uint64_t), stream);
  zs::device_buffer temp(raw().encode_temp_bytes(device_sources), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0xEE, total, stream));
  raw().encode_async({device_sources, frames.as<std::byte>(), offsets, frame_bytes.as<std::uint64_t>()},
                     temp.data(), temp.size(), stream);
  auto const gpu_frames = to_host<std::byte>(frames, total, stream);
  auto const gpu_bytes = to_host<std::uint64_t>(frame_bytes, parts, stream);
  ASSERT_EQ(gpu_bytes, cpu_bytes);
  for (std::size_t f = 0; f < parts; ++f) {
    ASSERT_EQ(std::memcmp(gpu_frames.data() + offsets[f], cpu_frames.data() + offsets[f], cpu_bytes[f]), 0)
        << "frame " << f << " differs between GPU and CPU";
  }

  // CPU decodes the GPU frames.
  zs::column host_out = empty_like(c, zs::memory_kind::host, stream);
  auto const host_targets = partition_targets(host_sources, host_out.mutable_view());
  std::vector<zs::frame_status> host_status(parts, zs::frame_status::not_decoded);
  raw().decode_host({gpu_frames.data(), offsets, host_targets, host_status.data()});
  for (auto s : host_status) ASSERT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
  expect_same_column(c, host_out);

  // GPU decodes the CPU frames.
  zs::device_buffer in(total, stream);
  zs::copy_async(in.data(), cpu_frames.data(), total, stream);
  zs::column device_out = empty_like(c, zs::memory_kind::device, stream);
  auto const device_targets = partition_targets(device_sources, device_out.mutable_view());
  zs::device_buffer status(parts * sizeof(zs::frame_status), stream);
  zs::device_buffer decode_temp(raw().decode_temp_bytes(device_targets), stream);
  raw().decode_async({in.as<std::byte>(), offsets, device_targets, status.as<zs::frame_status>()},
                     decode_temp.data(), decode_temp.size(), stream);
  for (auto s : to_host<zs::frame_status>(status, parts, stream)) {
    ASSERT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
  }
  expect_same_column(c, device_out.copy_to(zs::memory_kind::host, stream));
}

class RawGpuRealData : public ::testing::TestWithParam<const char*> {};

TEST_P(RawGpuRealData, MatchesTheCpuReferenceBothWays) {
  ZS_REQUIRE_GPU();
  auto const c = zs::test::data_column(GetParam());
  check_against_cpu(c, 1);
  check_against_cpu(c, 13);
}

INSTANTIATE_TEST_SUITE_P(AllColumns, RawGpuRealData,
                         ::testing::Values("deb_paths.txt", "deb_descriptions.txt", "deb_maintainers.txt",
                                           "deb_homepages.txt", "osm_poi_names.txt", "geoip4_lo.u32",
                                           "ncbi_tax_id.i32", "etopo5_elev_m.i32", "airport_lat.f64",
                                           "levitus_temp.f32", "navy_wind_u.f32"));

TEST(RawGpuAdversarial, EmptyOneValueExtremesAndSpecialFloats) {
  ZS_REQUIRE_GPU();
  check_against_cpu(zs::column::from_values<std::int32_t>(std::vector<std::int32_t>{}), 3);
  check_against_cpu(zs::column::from_values<std::int64_t>(std::vector<std::int64_t>{
                        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}), 5);
  check_against_cpu(zs::column::from_values<std::uint32_t>(std::vector<std::uint32_t>{42}), 1);
  check_against_cpu(zs::column::from_values<double>(std::vector<double>{
                        std::numeric_limits<double>::quiet_NaN(), -0.0, std::numeric_limits<double>::infinity()}), 2);
}

TEST(RawGpuAdversarial, EmptyLongAndNonAsciiStrings) {
  ZS_REQUIRE_GPU();
  std::vector<std::string> s{"", std::string(3 << 20, 'L'), "naïve café", "日本語", "", std::string(1, '\0')};
  check_against_cpu(zs::column::from_strings(s), 1);
  check_against_cpu(zs::column::from_strings(s), 6);
  check_against_cpu(zs::column::from_strings(std::vector<std::string>(5000, "")), 7);
}

TEST(RawGpuBatch, ManySmallFramesInOneBatch) {
  ZS_REQUIRE_GPU();
  std::vector<std::int64_t> v(100000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i * i) - 5000;
  check_against_cpu(zs::column::from_values<std::int64_t>(v), 4096);
}

// Corrupt frames on the GPU get the statuses the CPU gives them, and leave the others intact.
TEST(RawGpuCorrupt, StatusesMatchTheCpuValidation) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = zs::column::from_strings(std::vector<std::string>{"alpha", "beta", "", "gamma", "delta", "x"});
  auto const sources = partition_sources(c.view(), c.view(), 6);
  auto offsets = zs::layout_frames(raw(), sources);
  std::vector<std::byte> frames(offsets.back());
  std::vector<std::uint64_t> bytes(6);
  raw().encode_host({sources, frames.data(), offsets, bytes.data()});

  frames[offsets[1]] = std::byte{'Q'};                               // magic
  frames[offsets[2] + 9] ^= std::byte{1};                            // header field
  frames[offsets[3] + zs::frame_header_bytes + 20] ^= std::byte{4};  // payload
  {  // frame 4: offsets that decrease, behind a valid checksum
    std::byte* payload = frames.data() + offsets[4] + zs::frame_header_bytes;
    zs::detail::store_le(payload, 3, 8);
    auto h = zs::load_header(frames.data() + offsets[4]);
    h.payload_checksum = zs::hash::checksum(payload, h.payload_bytes);
    zs::store_header(h, frames.data() + offsets[4]);
  }

  std::vector<zs::frame_status> expected(6);
  zs::column host_out = empty_like(c, zs::memory_kind::host, stream);
  auto const host_targets = partition_targets(sources, host_out.mutable_view());
  raw().decode_host({frames.data(), offsets, host_targets, expected.data()});
  EXPECT_EQ(expected[0], zs::frame_status::ok);
  EXPECT_EQ(expected[1], zs::frame_status::bad_magic);
  EXPECT_EQ(expected[2], zs::frame_status::bad_header_checksum);
  EXPECT_EQ(expected[3], zs::frame_status::bad_payload_checksum);
  EXPECT_EQ(expected[4], zs::frame_status::corrupt_payload);
  EXPECT_EQ(expected[5], zs::frame_status::ok);

  auto const [statuses, out] = decode_on_gpu(frames, offsets, sources, c, stream);
  EXPECT_EQ(statuses, expected);

  // Frames 0 and 5 decoded; the characters of the rejected frames were not written.
  auto const* chars = static_cast<const char*>(out.view().data);
  EXPECT_EQ(std::string(chars, 5), "alpha");
  EXPECT_EQ(std::string(chars + 5, 4), "ZZZZ");  // frame 1 ("beta") was refused
  EXPECT_EQ(chars[c.data_bytes() - 1], 'x');
}

// The raw format's own header rules, zero parameters and payload sizes, give the same statuses
// on the GPU as on the CPU, and refused frames leave their targets as they were.
TEST(RawGpuCorrupt, NonZeroParametersAndWrongPayloadSizesAreRefusedAsOnTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<zs::column> columns;
  columns.push_back(zs::column::from_strings(std::vector<std::string>{"alpha", "beta", "", "gamma", "delta", "x"}));
  columns.push_back(zs::column::from_values<std::uint64_t>(std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  for (auto const& c : columns) {
    SCOPED_TRACE(std::string(zs::to_string(c.type())));
    auto const sources = partition_sources(c.view(), c.view(), 3);
    auto const offsets = zs::layout_frames(raw(), sources);
    std::vector<std::byte> frames(offsets.back());
    std::vector<std::uint64_t> bytes(3);
    raw().encode_host({sources, frames.data(), offsets, bytes.data()});
    {  // frame 1: a non-zero parameter byte
      auto h = zs::load_header(frames.data() + offsets[1]);
      h.params[9] = std::byte{0x40};
      zs::store_header(h, frames.data() + offsets[1]);
    }
    {  // frame 2: 8 payload bytes fewer than the format gives, behind a valid checksum
      std::byte* frame = frames.data() + offsets[2];
      auto h = zs::load_header(frame);
      h.payload_bytes -= 8;
      h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
      zs::store_header(h, frame);
    }
    std::vector<zs::frame_status> expected(3);
    zs::column host_out = empty_like(c, zs::memory_kind::host, stream);
    raw().decode_host({frames.data(), offsets, partition_targets(sources, host_out.mutable_view()), expected.data()});
    EXPECT_EQ(expected, (std::vector<zs::frame_status>{zs::frame_status::ok, zs::frame_status::corrupt_payload,
                                                       zs::frame_status::corrupt_payload}));

    auto const [statuses, out] = decode_on_gpu(frames, offsets, sources, c, stream);
    EXPECT_EQ(statuses, expected);
    auto const* got = static_cast<const unsigned char*>(out.view().data);
    std::uint64_t const refused_from = c.type() == zs::value_type::string ? sources[0].chars_bytes
                                                                         : sources[0].count * 8;
    EXPECT_EQ(std::memcmp(got, c.view().data, refused_from), 0) << "frame 0 decoded";
    for (std::uint64_t b = refused_from; b < c.data_bytes(); ++b) {
      ASSERT_EQ(got[b], 0x5A) << "byte " << b << " of a refused frame's target was written";
    }
  }
}

TEST(RawGpuCorrupt, TruncatedFramesAreRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::uint32_t> v(1000, 3);
  zs::encode_source const src{zs::value_type::uint32, v.size(), v.data()};
  std::vector<zs::encode_source> sources{src};
  auto const full = zs::layout_frames(raw(), sources);
  std::vector<std::byte> frames(full.back());
  std::uint64_t bytes = 0;
  raw().encode_host({sources, frames.data(), full, &bytes});
  zs::device_buffer in(frames.size(), stream);
  zs::copy_async(in.data(), frames.data(), frames.size(), stream);
  zs::device_buffer out(v.size() * 4, stream);
  zs::device_buffer status(sizeof(zs::frame_status), stream);
  std::vector<zs::decode_target> targets{{zs::value_type::uint32, v.size(), out.data()}};
  zs::device_buffer temp(raw().decode_temp_bytes(targets), stream);
  for (std::uint64_t keep : {std::uint64_t{0}, std::uint64_t{48}, std::uint64_t{64}, bytes - 1}) {
    std::vector<std::uint64_t> offsets{0, keep};
    raw().decode_async({in.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, temp.data(),
                       temp.size(), stream);
    EXPECT_EQ(to_host<zs::frame_status>(status, 1, stream)[0], zs::frame_status::truncated) << keep;
  }
}

}  // namespace
