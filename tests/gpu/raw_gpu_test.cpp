// The raw codec on the GPU, white box: the rules of its format that only its own checks catch
// (string offsets, zero parameters, payload sizes) give the CPU's statuses, and refused frames
// leave their targets as they were. Round trips, identity with the CPU's frames, decoding across
// the sides, truncation and bit flips are in the codec conformance suite
// (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "zs/codec.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::empty_like;
using zs::test::partition_sources;
using zs::test::partition_targets;

const zs::codec& raw() { return zs::get_codec(zs::codec_id::raw); }

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
  auto statuses = zs::test::to_host<zs::frame_status>(status.data(), targets.size(), stream);
  return {std::move(statuses), device_out.copy_to(zs::memory_kind::host, stream)};
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

}  // namespace
