// The nvcomp:NAME codecs of the command line (apps/zshuffle/nvcomp_codecs.hpp): what they say of
// themselves and the chunk table checks, on any machine; round trips through the codec framework
// on the GPU, on a real column and adversarial inputs, with sources and targets at every
// alignment, and a corrupt chunk table that passes the checksum refused before nvCOMP reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nvcomp_codecs.hpp"
#include "nvcomp_format.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/hash.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace {

using zs::value_type;
namespace nv = zs::nvcomp;

const std::vector<value_type> fixed_width{value_type::int32,  value_type::int64,   value_type::uint32,
                                          value_type::uint64, value_type::float32, value_type::float64};

// --- on any machine -------------------------------------------------------------------------

TEST(NvcompCodecs, AreFiveWithPrivateUseIdsAndTheirNames) {
  auto const codecs = nv::nvcomp_codecs();
  std::vector<std::string> const names{"nvcomp:cascaded", "nvcomp:bitcomp", "nvcomp:ans", "nvcomp:lz4", "nvcomp:zstd"};
  ASSERT_EQ(codecs.size(), names.size());
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    EXPECT_EQ(static_cast<int>(codecs[i]->id()), zs::first_private_codec_id + static_cast<int>(i));
    EXPECT_EQ(codecs[i]->name(), names[i]);
  }
}

TEST(NvcompCodecs, EncodeFixedWidthTypesNotStringsAndAreNeverADefault) {
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    for (value_type const type : fixed_width) EXPECT_TRUE(c->supports(type)) << c->name();
    EXPECT_FALSE(c->supports(value_type::string)) << c->name();
    EXPECT_LT(c->preference(), 0) << c->name();
  }
}

TEST(NvcompCodecs, RegisterOnceUnderTheirNames) {
  nv::register_nvcomp_codecs();
  nv::register_nvcomp_codecs();  // a second call does nothing
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    EXPECT_EQ(&zs::get_codec(c->name()), c);
    EXPECT_EQ(&zs::get_codec(c->id()), c);
  }
  for (value_type const type : fixed_width) EXPECT_NE(zs::default_codec(type).name().substr(0, 7), "nvcomp:");
}

TEST(NvcompCodecs, MaxFrameBytesHoldsTheChunkTableAndEveryChunkAtItsBound) {
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    zs::encode_source const empty{value_type::int32, 0, nullptr};
    EXPECT_EQ(c->max_frame_bytes(empty), zs::frame_header_bytes + nv::body_prefix_bytes) << c->name();
    // 3 chunks and a bit: 4 entries in the table, each chunk at least its raw bytes.
    zs::encode_source const some{value_type::int64, (3 * nv::chunk_bytes + 8) / 8, nullptr};
    EXPECT_GE(c->max_frame_bytes(some), zs::frame_header_bytes + nv::chunks_begin(4) + 4 * nv::chunk_bytes)
        << c->name();
  }
}

TEST(NvcompCodecs, CpuHooksSayThereIsNoCpuReference) {
  std::vector<std::int32_t> values{1, 2, 3};
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    std::vector<zs::encode_source> const sources{{value_type::int32, values.size(), values.data()}};
    auto const offsets = zs::layout_frames(*c, sources);
    std::vector<std::byte> frame(offsets.back());
    std::uint64_t bytes = 0;
    try {
      c->encode_host({sources, frame.data(), offsets, &bytes});
      ADD_FAILURE() << c->name() << ": encode_host did not throw";
    } catch (const zs::error& e) {
      EXPECT_EQ(e.code(), zs::error_code::unsupported);
      EXPECT_NE(e.message().find("no CPU reference"), std::string::npos) << e.message();
    }
  }
}

// A body with chunk sizes `sizes` (the chunks' bytes zero), for a frame of `raw_bytes`.
std::vector<std::byte> body_of(std::uint64_t raw_bytes, const std::vector<std::uint32_t>& sizes) {
  std::vector<std::byte> body(nv::chunks_begin(sizes.size()));
  zs::detail::store_le(body.data(), nv::chunk_count(raw_bytes), 8);
  zs::detail::store_le(body.data() + 8, nv::chunk_bytes, 8);
  for (std::size_t k = 0; k < sizes.size(); ++k) zs::detail::store_le(body.data() + 16 + 4 * k, sizes[k], 4);
  for (auto const size : sizes) body.resize(body.size() + nv::align16(size));
  return body;
}

TEST(NvcompChunkTable, DescribesTheBodyExactly) {
  std::uint64_t const raw = 2 * nv::chunk_bytes + 100;
  auto const body = body_of(raw, {1000, 17, 40});
  std::vector<std::uint64_t> offsets, raw_sizes;
  EXPECT_TRUE(nv::walk_chunks(body.data(), body.size(), raw, [&](std::uint64_t, std::uint64_t offset, std::uint64_t,
                                                                 std::uint64_t chunk_raw) {
    offsets.push_back(offset);
    raw_sizes.push_back(chunk_raw);
  }));
  std::uint64_t const first = nv::chunks_begin(3);
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{first, first + 1008, first + 1008 + 32}));
  EXPECT_EQ(raw_sizes, (std::vector<std::uint64_t>{nv::chunk_bytes, nv::chunk_bytes, 100}));
  EXPECT_TRUE(nv::valid_chunk_table(body_of(0, {}).data(), nv::body_prefix_bytes, 0));
}

TEST(NvcompChunkTable, RefusesEveryTableThatDoesNotDescribeTheBody) {
  std::uint64_t const raw = nv::chunk_bytes + 1;
  auto const good = body_of(raw, {300, 1});
  ASSERT_TRUE(nv::valid_chunk_table(good.data(), good.size(), raw));

  EXPECT_FALSE(nv::valid_chunk_table(good.data(), 15, raw)) << "shorter than the prefix";
  EXPECT_FALSE(nv::valid_chunk_table(good.data(), good.size(), raw + nv::chunk_bytes)) << "a chunk count for other raw bytes";
  EXPECT_FALSE(nv::valid_chunk_table(good.data(), good.size() - 16, raw)) << "the last chunk past the end";
  auto longer = good;
  longer.resize(longer.size() + 16);
  EXPECT_FALSE(nv::valid_chunk_table(longer.data(), longer.size(), raw)) << "bytes after the last chunk";

  auto bad = good;
  zs::detail::store_le(bad.data() + 8, 4096, 8);
  EXPECT_FALSE(nv::valid_chunk_table(bad.data(), bad.size(), raw)) << "another chunk size";
  bad = good;
  zs::detail::store_le(bad.data() + 16, 0, 4);
  EXPECT_FALSE(nv::valid_chunk_table(bad.data(), bad.size(), raw)) << "a chunk of no bytes";
  bad = good;
  zs::detail::store_le(bad.data() + 16, 0xffffffffU, 4);
  EXPECT_FALSE(nv::valid_chunk_table(bad.data(), bad.size(), raw)) << "a chunk far past the end";

  // A count whose table would need more than 2^64 bytes: refused before its size is computed.
  std::uint64_t const huge_raw = UINT64_MAX / 2;
  auto huge = body_of(0, {});
  zs::detail::store_le(huge.data(), nv::chunk_count(huge_raw), 8);
  EXPECT_FALSE(nv::valid_chunk_table(huge.data(), huge.size(), huge_raw));
}

// --- on the GPU -----------------------------------------------------------------------------

// Bytes of `count` values of `type` for an input shape: a stand-in for any type's values.
std::vector<std::byte> shaped(value_type type, std::uint64_t count, const std::string& shape, std::uint32_t seed) {
  std::size_t const width = zs::value_width(type);
  std::vector<std::byte> bytes(count * width);
  std::mt19937_64 random(seed);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t v = 0;
    if (shape == "equal") v = 0x4142434445464748ULL;
    if (shape == "random") v = random();
    if (shape == "small") v = random() % 1000;
    if (shape == "sorted") v = i * 3;
    std::memcpy(bytes.data() + i * width, &v, width);
  }
  return bytes;
}

// Encodes `frames` sources cut from `input` (host bytes of `type`) on the GPU, each placed
// `misalign` bytes past an aligned address, decodes them into targets placed likewise, and
// checks every frame ok and every byte back.
void round_trip(const zs::codec& c, value_type type, const std::vector<std::byte>& input, std::size_t frames,
                std::size_t misalign, const std::string& what) {
  SCOPED_TRACE(std::string(c.name()) + " " + std::string(zs::to_string(type)) + " " + what + ", " +
               std::to_string(frames) + " frames, offset " + std::to_string(misalign));
  zs::cuda_stream stream;
  std::size_t const width = zs::value_width(type);
  std::uint64_t const count = input.size() / width;
  // Each frame in its own 256-byte-aligned place, then `misalign` bytes on.
  std::vector<std::uint64_t> at(frames + 1, 0);
  for (std::size_t f = 0; f < frames; ++f) {
    std::uint64_t const rows = count * (f + 1) / frames - count * f / frames;
    at[f + 1] = at[f] + (rows * width + misalign + 255) / 256 * 256;
  }
  zs::device_buffer in(at.back() + 256, stream), out(at.back() + 256, stream);
  std::vector<zs::encode_source> sources;
  std::vector<zs::decode_target> targets;
  for (std::size_t f = 0; f < frames; ++f) {
    std::uint64_t const begin = count * f / frames, rows = count * (f + 1) / frames - begin;
    std::byte* src = in.as<std::byte>() + at[f] + misalign;
    if (rows > 0) zs::copy_async(src, input.data() + begin * width, rows * width, stream);
    sources.push_back({type, rows, src});
    targets.push_back({type, rows, out.as<std::byte>() + at[f] + misalign});
  }
  auto const offsets = zs::layout_frames(c, sources);
  zs::device_buffer framebuf(offsets.back(), stream), sizes(frames * 8, stream), status(frames * 4, stream);
  zs::device_buffer encode_temp(c.encode_temp_bytes(sources), stream);
  c.encode_async({sources, framebuf.as<std::byte>(), offsets, sizes.as<std::uint64_t>()}, encode_temp.data(),
                 encode_temp.size(), stream);
  zs::device_buffer decode_temp(c.decode_temp_bytes(targets), stream);
  c.decode_async({framebuf.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, decode_temp.data(),
                 decode_temp.size(), stream);
  std::vector<zs::frame_status> statuses(frames);
  zs::copy_async(statuses.data(), status.data(), frames * sizeof(zs::frame_status), stream);
  std::vector<std::byte> back(at.back());
  if (!back.empty()) zs::copy_async(back.data(), out.data(), back.size(), stream);
  stream.synchronize();
  for (std::size_t f = 0; f < frames; ++f) {
    EXPECT_EQ(statuses[f], zs::frame_status::ok) << "frame " << f << ": " << zs::to_string(statuses[f]);
    std::uint64_t const begin = count * f / frames, rows = count * (f + 1) / frames - begin;
    EXPECT_EQ(0, rows == 0 ? 0 : std::memcmp(back.data() + at[f] + misalign, input.data() + begin * width, rows * width))
        << "frame " << f << " decoded to other values";
  }
}

TEST(NvcompCodecsGpu, RoundTripARealColumnAsEveryType) {
  ZS_REQUIRE_GPU();
  zs::column const real = zs::test::data_column("ncbi_tax_id.i32");
  auto const* values = static_cast<const std::int32_t*>(real.view().data);
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    for (value_type const type : fixed_width) {
      std::size_t const width = zs::value_width(type);
      std::vector<std::byte> input(real.size() * width);
      for (std::size_t i = 0; i < real.size(); ++i) {
        std::int64_t const v = values[i];
        std::memcpy(input.data() + i * width, &v, width);  // the low bytes: the value for integers
      }
      round_trip(*c, type, input, 16, 0, "ncbi_tax_id");
    }
  }
}

TEST(NvcompCodecsGpu, RoundTripAdversarialInputsAtEveryAlignment) {
  ZS_REQUIRE_GPU();
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    for (value_type const type : fixed_width) {
      std::size_t const width = zs::value_width(type);
      round_trip(*c, type, {}, 1, 0, "empty");
      round_trip(*c, type, {}, 3, 0, "three empty frames");
      round_trip(*c, type, shaped(type, 1, "random", 1), 1, 0, "one value");
      for (std::string const shape : {"equal", "random", "small", "sorted"}) {
        // A chunk boundary and a bit, so the last chunk is short.
        auto const input = shaped(type, (3 * nv::chunk_bytes) / width + 5, shape, 7);
        for (std::size_t const misalign : {std::size_t{0}, width, std::size_t{8}}) {
          round_trip(*c, type, input, 5, misalign, shape);
        }
      }
    }
  }
}

TEST(NvcompCodecsGpu, ACorruptChunkTableThatPassesTheChecksumIsRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const input = shaped(value_type::uint32, 2 * nv::chunk_bytes / 4 + 3, "small", 3);
  std::uint64_t const count = input.size() / 4;
  zs::device_buffer in(input.size(), stream), out(input.size(), stream);
  zs::copy_async(in.data(), input.data(), input.size(), stream);
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    SCOPED_TRACE(std::string(c->name()));
    std::vector<zs::encode_source> const sources{{value_type::uint32, count, in.data()}};
    std::vector<zs::decode_target> const targets{{value_type::uint32, count, out.data()}};
    auto const offsets = zs::layout_frames(*c, sources);
    zs::device_buffer frame(offsets.back(), stream), size(8, stream), status(4, stream);
    zs::device_buffer encode_temp(c->encode_temp_bytes(sources), stream);
    c->encode_async({sources, frame.as<std::byte>(), offsets, size.as<std::uint64_t>()}, encode_temp.data(),
                    encode_temp.size(), stream);
    std::vector<std::byte> good(offsets.back());
    zs::copy_async(good.data(), frame.data(), good.size(), stream);
    stream.synchronize();

    // Each corruption, with the checksums made right again so that only the table is wrong.
    auto refused = [&](const std::string& what, auto corrupt) {
      std::vector<std::byte> bad = good;
      std::byte* body = bad.data() + zs::frame_header_bytes;
      corrupt(body);
      zs::frame_header fixed = zs::load_header(bad.data());
      fixed.payload_checksum = zs::hash::checksum(body, fixed.payload_bytes);
      zs::store_header(fixed, bad.data());
      zs::copy_async(frame.data(), bad.data(), bad.size(), stream);
      zs::device_buffer decode_temp(c->decode_temp_bytes(targets), stream);
      c->decode_async({frame.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, decode_temp.data(),
                      decode_temp.size(), stream);
      zs::frame_status got = zs::frame_status::ok;
      zs::copy_async(&got, status.data(), sizeof got, stream);
      stream.synchronize();
      EXPECT_EQ(got, zs::frame_status::corrupt_payload) << what << ": " << zs::to_string(got);
    };
    refused("chunk count", [](std::byte* body) { zs::detail::store_le(body, 7, 8); });
    refused("chunk size", [](std::byte* body) { zs::detail::store_le(body + 8, 4096, 8); });
    refused("a chunk past the end", [](std::byte* body) { zs::detail::store_le(body + 16, 0x7fffffffU, 4); });
    refused("an empty chunk", [](std::byte* body) { zs::detail::store_le(body + 20, 0, 4); });
    // Garbage in the chunks behind a valid table is not tested: nvCOMP's decompressors are not
    // held to untrusted input (nvcomp_codecs.hpp, "Trust").
  }
}

}  // namespace
