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

// The nvCOMP arguments of `chunks` chunks in host arrays, and a parking chunk whose addresses
// are nowhere near any body or output of the tests (they are only compared).
struct host_chunk_arguments {
  explicit host_chunk_arguments(std::size_t chunks)
      : in(chunks, nullptr), in_bytes(chunks, 0), out(chunks, nullptr), out_bytes(chunks, 0) {}
  nv::chunk_arguments view() { return {in.data(), in_bytes.data(), out.data(), out_bytes.data()}; }
  std::vector<const void*> in;
  std::vector<std::size_t> in_bytes;
  std::vector<void*> out;
  std::vector<std::size_t> out_bytes;
};

std::vector<std::byte> parking_storage(4096);
nv::parking_chunk const parking{parking_storage.data(), 24, 64, parking_storage.data() + 1024, 64};

// Whether entry c of `args` is the parking chunk with its own output slot.
bool parked(host_chunk_arguments& args, std::size_t c) {
  return args.in[c] == parking.in && args.in_bytes[c] == parking.in_bytes &&
         args.out[c] == parking.out + c * parking.out_slot_bytes && args.out_bytes[c] == parking.raw_bytes;
}

TEST(NvcompChunkPlan, AimsAGoodTablesChunksAtTheBodyAndTileTheFramesOutputExactly) {
  std::uint64_t const raw = 2 * nv::chunk_bytes + 100;
  auto const body = body_of(raw, {1000, 17, 40});
  std::vector<std::byte> target(raw);
  host_chunk_arguments args(5);
  ASSERT_TRUE(nv::plan_frame_chunks(body.data(), body.size(), raw, true, target.data(), 2, args.view(), parking));
  std::uint64_t const first = nv::chunks_begin(3);
  std::vector<std::uint64_t> const offsets{first, first + 1008, first + 1008 + 32}, sizes{1000, 17, 40};
  std::uint64_t covered = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(args.in[2 + k], body.data() + offsets[k]) << "chunk " << k;
    EXPECT_EQ(args.in_bytes[2 + k], sizes[k]) << "chunk " << k;
    // The chunk's room begins where the previous one's ends and holds at most a chunk.
    EXPECT_EQ(args.out[2 + k], target.data() + covered) << "chunk " << k;
    EXPECT_LE(args.out_bytes[2 + k], nv::chunk_bytes) << "chunk " << k;
    covered += args.out_bytes[2 + k];
  }
  EXPECT_EQ(covered, raw) << "the rooms are the frame's output, exactly";
  for (std::size_t const c : {0, 1}) EXPECT_EQ(args.in[c], nullptr) << "entry " << c << " is another frame's";
}

TEST(NvcompChunkPlan, ParksEveryChunkOfARefusedFrameAndNoOtherEntry) {
  std::uint64_t const raw = nv::chunk_bytes + 1;
  auto const good = body_of(raw, {300, 1});
  std::vector<std::byte> target(raw);
  std::vector<std::pair<std::string, std::vector<std::byte>>> bad;
  auto with = [&](const std::string& what, std::size_t at, std::uint64_t value, int bytes) {
    auto b = good;
    zs::detail::store_le(b.data() + at, value, bytes);
    bad.emplace_back(what, b);
  };
  with("a chunk count for other raw bytes", 0, 7, 8);
  with("a chunk count whose table needs more than 2^64 bytes", 0, UINT64_MAX, 8);
  with("another chunk size", 8, 4096, 8);
  with("a chunk of no bytes", 16, 0, 4);
  with("a chunk past the end", 16, 0xffffffffU, 4);
  with("the last chunk past the end", 16, 300 + 16, 4);
  with("bytes after the last chunk", 16, 300 - 16, 4);
  for (auto const& [what, body] : bad) {
    host_chunk_arguments args(4);
    EXPECT_FALSE(nv::plan_frame_chunks(body.data(), body.size(), raw, true, target.data(), 1, args.view(), parking))
        << what;
    EXPECT_TRUE(parked(args, 1) && parked(args, 2)) << what << ": a chunk of the frame aimed elsewhere";
    EXPECT_TRUE(args.in[0] == nullptr && args.in[3] == nullptr) << what << ": another frame's entry written";
  }
  // A frame refused before (its header or checksum): parked without a byte of it read.
  host_chunk_arguments args(2);
  EXPECT_FALSE(nv::plan_frame_chunks(nullptr, 0, raw, false, target.data(), 0, args.view(), parking));
  EXPECT_TRUE(parked(args, 0) && parked(args, 1));
  // An empty frame has no entries: a table of no chunks is planned (and checked) all the same.
  auto const empty = body_of(0, {});
  EXPECT_TRUE(nv::plan_frame_chunks(empty.data(), empty.size(), 0, true, nullptr, 0, args.view(), parking));
  EXPECT_FALSE(nv::plan_frame_chunks(good.data(), good.size(), 0, true, nullptr, 0, args.view(), parking));
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

// Decoding frames that were damaged, for each codec: a batch of two frames of the same values
// (3 chunks each, the last one short), of which the first is damaged and the second intact.
// The first must be refused with the status expected and the second must decode whole beside it.
class damaged_frames {
 public:
  damaged_frames(const zs::codec& c, zs::cuda_stream& stream)
      : codec_(c), stream_(stream), input_(shaped(value_type::uint32, 2 * nv::chunk_bytes / 4 + 3, "small", 3)),
        count_(input_.size() / 4), in_(input_.size(), stream), out_(2 * input_.size(), stream) {
    zs::copy_async(in_.data(), input_.data(), input_.size(), stream);
    sources_ = {{value_type::uint32, count_, in_.data()}, {value_type::uint32, count_, in_.data()}};
    targets_ = {{value_type::uint32, count_, out_.as<std::byte>()},
                {value_type::uint32, count_, out_.as<std::byte>() + input_.size()}};
    offsets_ = zs::layout_frames(c, sources_);
    frames_ = zs::device_buffer(offsets_.back(), stream);
    zs::device_buffer sizes(16, stream);
    zs::device_buffer encode_temp(c.encode_temp_bytes(sources_), stream);
    c.encode_async({sources_, frames_.as<std::byte>(), offsets_, sizes.as<std::uint64_t>()}, encode_temp.data(),
                   encode_temp.size(), stream);
    good_.resize(offsets_.back());
    zs::copy_async(good_.data(), frames_.data(), good_.size(), stream);
    stream.synchronize();
  }

  /// The first frame's payload bytes, as encoded.
  std::uint64_t payload_bytes() const { return zs::load_header(good_.data()).payload_bytes; }

  /// Applies `damage` to the first frame's body (payload_bytes() bytes), makes its payload
  /// checksum right again where `fix_checksum`, decodes both frames and checks the first
  /// refused with `expected`, its target untouched where `untouched`, and the second decoded;
  /// where `whole_batch_may_fail`, both may instead be refused as corrupt_payload (nvCOMP may
  /// refuse a batch as a whole when its decompressor meets the damage).
  template <typename Damage>
  void expect(const std::string& what, Damage damage, bool fix_checksum, zs::frame_status expected,
              bool untouched, bool whole_batch_may_fail = false) {
    SCOPED_TRACE(std::string(codec_.name()) + ": " + what);
    std::vector<std::byte> bad = good_;
    std::byte* body = bad.data() + offsets_[0] + zs::frame_header_bytes;
    damage(body);
    if (fix_checksum) {
      zs::frame_header fixed = zs::load_header(bad.data() + offsets_[0]);
      fixed.payload_checksum = zs::hash::checksum(body, fixed.payload_bytes);
      zs::store_header(fixed, bad.data() + offsets_[0]);
    }
    zs::copy_async(frames_.data(), bad.data(), bad.size(), stream_);
    // A pattern in the first target: a refused frame's chunks must not be written there.
    std::vector<std::byte> const pattern(input_.size(), std::byte{0x5c});
    zs::copy_async(out_.data(), pattern.data(), pattern.size(), stream_);
    zs::device_buffer status(2 * sizeof(zs::frame_status), stream_);
    zs::device_buffer decode_temp(codec_.decode_temp_bytes(targets_), stream_);
    codec_.decode_async({frames_.as<std::byte>(), offsets_, targets_, status.as<zs::frame_status>()},
                        decode_temp.data(), decode_temp.size(), stream_);
    std::vector<zs::frame_status> got(2);
    zs::copy_async(got.data(), status.data(), status.size(), stream_);
    std::vector<std::byte> back(out_.size());
    zs::copy_async(back.data(), out_.data(), back.size(), stream_);
    stream_.synchronize();
    // Where nvCOMP may refuse the whole batch, that refusal (corrupt_payload) may stand in for
    // the frame's own: either way the frame is refused.
    if (!(whole_batch_may_fail && got[0] == zs::frame_status::corrupt_payload)) {
      EXPECT_EQ(got[0], expected) << zs::to_string(got[0]);
    }
    if (untouched) {
      EXPECT_EQ(0, std::memcmp(back.data(), pattern.data(), pattern.size()))
          << "the refused frame's target was written";
    }
    if (whole_batch_may_fail && got[1] == zs::frame_status::corrupt_payload) return;
    EXPECT_EQ(got[1], zs::frame_status::ok) << "the intact frame: " << zs::to_string(got[1]);
    EXPECT_EQ(0, std::memcmp(back.data() + input_.size(), input_.data(), input_.size())) << "the intact frame's values";
  }

 private:
  const zs::codec& codec_;
  zs::cuda_stream& stream_;
  std::vector<std::byte> input_;
  std::uint64_t count_;
  zs::device_buffer in_, out_, frames_;
  std::vector<zs::encode_source> sources_;
  std::vector<zs::decode_target> targets_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::byte> good_;
};

// The chunk sizes of the table at `body`, entry k changed by `delta`.
auto resize_chunk(std::size_t k, std::int64_t delta) {
  return [=](std::byte* body) {
    std::byte* entry = body + nv::body_prefix_bytes + 4 * k;
    auto const size = static_cast<std::int64_t>(zs::detail::load_le(entry, 4));
    zs::detail::store_le(entry, static_cast<std::uint64_t>(size + delta), 4);
  };
}

TEST(NvcompCodecsGpu, ACorruptChunkTableThatPassesTheChecksumIsRefused) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    damaged_frames frames(*c, stream);
    // Each is refused before nvCOMP reads a chunk of the frame, and nothing of it is written;
    // the intact frame of the same batch decodes, or is refused with it where nvCOMP refuses the
    // batch as a whole (seen on an H200: never wrong values).
    auto refused = [&](const std::string& what, auto damage) {
      frames.expect(what, damage, true, zs::frame_status::corrupt_payload, true, true);
    };
    refused("chunk count", [](std::byte* body) { zs::detail::store_le(body, 7, 8); });
    refused("a chunk count whose table needs more than 2^64 bytes",
            [](std::byte* body) { zs::detail::store_le(body, UINT64_MAX, 8); });
    refused("chunk size", [](std::byte* body) { zs::detail::store_le(body + 8, 4096, 8); });
    refused("chunk size 0", [](std::byte* body) { zs::detail::store_le(body + 8, 0, 8); });
    refused("a chunk past the end", [](std::byte* body) { zs::detail::store_le(body + 16, 0x7fffffffU, 4); });
    refused("a chunk of 2^32 - 1 bytes", [](std::byte* body) { zs::detail::store_le(body + 16, 0xffffffffU, 4); });
    refused("an empty chunk", [](std::byte* body) { zs::detail::store_le(body + 20, 0, 4); });
    refused("the last chunk past the end", resize_chunk(0, 16));
    refused("bytes after the last chunk", resize_chunk(0, -16));
  }
}

TEST(NvcompCodecsGpu, GarbageChunksAreRefusedByTheChecksum) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const zs::codec* c : nv::nvcomp_codecs()) {
    damaged_frames frames(*c, stream);
    std::uint64_t const payload = frames.payload_bytes();
    auto garbage = [payload](std::byte* body) {
      for (std::uint64_t i = nv::chunks_begin(3); i < payload; ++i) body[i] = std::byte{0xa5};
    };
    auto one_byte = [payload](std::byte* body) { body[(nv::chunks_begin(3) + payload) / 2] ^= std::byte{0x10}; };
    // Damage by accident: the checksum catches it before nvCOMP reads a chunk, for every codec
    // (the intact frame of the batch decodes, or is refused with it: never wrong values).
    frames.expect("the chunks' bytes", garbage, false, zs::frame_status::bad_payload_checksum, true, true);
    frames.expect("one byte in a chunk", one_byte, false, zs::frame_status::bad_payload_checksum, true, true);
    // Garbage crafted behind a matching checksum is not tested: on an H200 nvCOMP 6.0's
    // decompressors read past such chunks (LZ4) or decoded them without an error (nvcomp_codecs.hpp,
    // "Trust").
  }
}

}  // namespace
