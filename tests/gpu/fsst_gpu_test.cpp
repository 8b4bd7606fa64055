// The fsst codec on the GPU, white box: tables prepared on the GPU are the CPU's, frames the
// GPU encodes are the CPU's byte for byte (many frames, a 100 MB string), and frames that break
// the fsst rules get the CPU's statuses without their targets being written. The same for the
// fsst_dict codec's encoder (distinct values found on the GPU): its frames are the CPU's byte for
// byte on real columns and on inputs chosen to break it. Round trips of the
// adversarial inputs, cross decoding, truncation and bit flips are in the codec conformance suite.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::partition_sources;
using zs::test::partition_targets;

const zs::codec& fsst() { return zs::get_codec(zs::codec_id::fsst); }
const zs::codec& fsst_dict() { return zs::get_codec(zs::codec_id::fsst_dict); }

template <typename T>
std::vector<T> to_host(const void* d, std::size_t count, cudaStream_t stream) {
  std::vector<T> h(count);
  if (count != 0) zs::copy_async(h.data(), d, count * sizeof(T), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return h;
}

// A column in `parts` partitions, one table per partition (each its own column) or one for all.
std::vector<std::uint64_t> piece_begin_of(std::size_t parts, bool table_per_part) {
  std::vector<std::uint64_t> b;
  for (std::size_t k = 0; k <= (table_per_part ? parts : 1); ++k) b.push_back(table_per_part ? k : (k == 0 ? 0 : parts));
  return b;
}

struct frames_of {
  std::vector<std::byte> params;  // host copy of the tables
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;  // host copy
  std::vector<std::uint64_t> sizes;
};

// Tables and frames on the CPU.
frames_of encode_on_cpu(const zs::column& c, std::size_t parts, bool table_per_part, const zs::codec& codec = fsst()) {
  frames_of r;
  auto sources = partition_sources(c.view(), c.view(), parts);
  auto const begin = piece_begin_of(parts, table_per_part);
  auto const po = zs::layout_params(codec, std::vector<zs::value_type>(begin.size() - 1, zs::value_type::string));
  r.params.assign(po.back(), std::byte{0});
  codec.prepare_host({sources, begin}, r.params.data(), po);
  for (std::size_t f = 0; f < parts; ++f) sources[f].params = r.params.data() + po[table_per_part ? f : 0];
  r.offsets = zs::layout_frames(codec, sources);
  r.frames.assign(r.offsets.back(), std::byte{0});
  r.sizes.assign(parts, 0);
  codec.encode_host({sources, r.frames.data(), r.offsets, r.sizes.data()});
  return r;
}

// The same on the GPU, from a device copy of the column.
frames_of encode_on_gpu(const zs::column& c, std::size_t parts, bool table_per_part, cudaStream_t stream,
                        const zs::codec& codec = fsst()) {
  frames_of r;
  zs::column const d = c.copy_to(zs::memory_kind::device, stream);
  auto sources = partition_sources(c.view(), d.view(), parts);
  auto const begin = piece_begin_of(parts, table_per_part);
  auto const po = zs::layout_params(codec, std::vector<zs::value_type>(begin.size() - 1, zs::value_type::string));
  zs::device_buffer params(po.back(), stream);
  codec.prepare_async({sources, begin}, params.as<std::byte>(), po, stream);
  for (std::size_t f = 0; f < parts; ++f) sources[f].params = params.as<std::byte>() + po[table_per_part ? f : 0];
  r.offsets = zs::layout_frames(codec, sources);
  zs::device_buffer frames(r.offsets.back(), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0, r.offsets.back(), stream));
  zs::device_buffer sizes(parts * sizeof(std::uint64_t), stream);
  zs::device_buffer temp(codec.encode_temp_bytes(sources), stream);
  codec.encode_async({sources, frames.as<std::byte>(), r.offsets, sizes.as<std::uint64_t>()}, temp.data(), temp.size(),
                      stream);
  r.params = to_host<std::byte>(params.data(), po.back(), stream);
  r.frames = to_host<std::byte>(frames.data(), r.offsets.back(), stream);
  r.sizes = to_host<std::uint64_t>(sizes.data(), parts, stream);
  return r;
}

// Decodes host frames on the GPU into a column shaped like `c` whose characters start as 0x5A.
std::pair<std::vector<zs::frame_status>, zs::column> decode_on_gpu(const frames_of& e, const zs::column& c,
                                                                   std::size_t parts, cudaStream_t stream,
                                                                   const zs::codec& codec = fsst()) {
  zs::device_buffer in(e.frames.size(), stream);
  zs::copy_async(in.data(), e.frames.data(), e.frames.size(), stream);
  zs::column out = zs::test::empty_like(c, zs::memory_kind::device, stream);
  auto dv = out.mutable_view();
  if (c.data_bytes() != 0) ZS_CUDA_TRY(cudaMemsetAsync(dv.data, 0x5A, c.data_bytes(), stream));
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), dv);
  zs::device_buffer status(parts * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(codec.decode_temp_bytes(targets), stream);
  codec.decode_async({in.as<std::byte>(), e.offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                      stream);
  auto statuses = to_host<zs::frame_status>(status.data(), parts, stream);
  return {std::move(statuses), out.copy_to(zs::memory_kind::host, stream)};
}

void expect_gpu_as_cpu(const zs::column& c, std::size_t parts, bool table_per_part, cudaStream_t stream,
                       const zs::codec& codec = fsst()) {
  auto const cpu = encode_on_cpu(c, parts, table_per_part, codec);
  auto const gpu = encode_on_gpu(c, parts, table_per_part, stream, codec);
  ASSERT_EQ(gpu.params, cpu.params) << "tables";
  ASSERT_EQ(gpu.sizes, cpu.sizes);
  for (std::size_t f = 0; f < parts; ++f) {
    ASSERT_EQ(std::memcmp(gpu.frames.data() + gpu.offsets[f], cpu.frames.data() + cpu.offsets[f], cpu.sizes[f]), 0)
        << "frame " << f;
  }
  auto const [status, out] = decode_on_gpu(cpu, c, parts, stream, codec);
  for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok);
  EXPECT_EQ(out.strings(), c.strings());
}

}  // namespace

TEST(FsstGpu, RealColumnsEncodeAsOnTheCpuAndDecode) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const char* file : {"deb_maintainers.txt", "deb_paths.txt", "osm_poi_names.txt"}) {
    SCOPED_TRACE(file);
    auto const c = zs::test::data_column(file);
    expect_gpu_as_cpu(c, 1, false, stream.get());
    expect_gpu_as_cpu(c, 37, false, stream.get());
    expect_gpu_as_cpu(c, 16, true, stream.get());
  }
}

TEST(FsstGpu, OneHundredMegabyteStringAndAllEmptyStrings) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::string one(100u << 20, 'a');
  std::mt19937_64 rng(9);
  for (std::size_t i = 0; i < one.size(); i += 7) one[i] = static_cast<char>(rng());
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>{one}), 1, false, stream.get());
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>(100000, "")), 5, false, stream.get());
}

// The split kernels take groups of splits (a warp a split, a block a contiguous range of groups),
// a block filling its tables again at each frame it moves to: every block size the tuning may
// choose, on a grid of one wave, gives the CPU's frames and strings.
TEST(FsstGpu, EveryBlockSizeEncodesAndDecodesAsTheCpu) {
  ZS_REQUIRE_GPU();
  // Puts the process-wide table back however the test ends.
  struct restore_tuning {
    zs::tuning_table saved = *zs::tuning();
    ~restore_tuning() { zs::set_tuning(saved); }
  } const restore;
  zs::cuda_stream stream;
  auto const c = zs::test::data_column("deb_paths.txt");
  zs::device_profile const& d = zs::current_device_profile();
  for (unsigned threads : {32U, 64U, 128U, 256U}) {
    SCOPED_TRACE(threads);
    zs::tuning_table forced;
    for (const char* kernel : {"fsst_encode", "fsst_decode"}) {
      for (auto size : {zs::size_class::small, zs::size_class::medium, zs::size_class::large}) {
        forced.set({{d.name, d.compute_major, d.compute_minor, kernel, zs::value_type::string, size},
                    zs::launch_params{threads, 1, 0}});
      }
    }
    zs::set_tuning(forced);
    expect_gpu_as_cpu(c, 37, true, stream.get());
    expect_gpu_as_cpu(c, 1, false, stream.get());
  }
}

// Frames that break the fsst rules behind valid checksums: the GPU gives the CPU's statuses and
// writes none of their characters (a frame whose lengths do not add up may have had offsets
// written: inside its target, all that a payload decoder must keep to, zs/codec.hpp).
TEST(FsstGpu, CorruptFramesGetTheCpuStatusesAndLeaveTheirTargets) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::string> strings;
  for (int i = 0; i < 6000; ++i) strings.push_back("row " + std::to_string(i % 97) + " of a repetitive column");
  auto const c = zs::column::from_strings(strings);
  std::size_t const parts = 6;
  auto e = encode_on_cpu(c, parts, false);
  std::uint64_t const body_at = zs::params_section_bytes(fsst().params_bytes(zs::value_type::string));
  auto edit = [&](std::size_t f, auto change) {
    std::byte* frame = e.frames.data() + e.offsets[f];
    zs::frame_header h = zs::load_header(frame);
    change(h, frame + zs::frame_header_bytes);
    h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frame);
  };
  edit(1, [](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data(), 4096, 8); });  // split size
  edit(2, [](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, 80, 8); });  // lengths bytes
  edit(3, [&](zs::frame_header&, std::byte* payload) {
    // The first value (or reference) of the packed lengths off by one: they no longer add up.
    std::byte* lengths = payload + body_at;
    zs::frame_header const inner = zs::load_header(lengths);
    std::uint64_t const per_block = inner.codec == zs::codec_id::bitpack_rfor ? 512 : 128;
    std::uint64_t const starts = inner.codec == zs::codec_id::raw ? 0 : (inner.value_count + per_block - 1) / per_block;
    lengths[zs::frame_header_bytes + 4 * starts] ^= std::byte{1};
  });
  edit(4, [&](zs::frame_header&, std::byte* payload) { payload[zs::params_prefix_bytes + 4] = std::byte{0}; });  // table
  std::vector<zs::frame_status> expected(parts, zs::frame_status::not_decoded);
  zs::column host_out = zs::test::empty_like(c, zs::memory_kind::host);
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), host_out.mutable_view());
  fsst().decode_host({e.frames.data(), e.offsets, targets, expected.data()});
  EXPECT_EQ(expected[0], zs::frame_status::ok);
  for (std::size_t f = 1; f <= 4; ++f) EXPECT_EQ(expected[f], zs::frame_status::corrupt_payload) << "frame " << f;
  EXPECT_EQ(expected[5], zs::frame_status::ok);
  auto const [statuses, out] = decode_on_gpu(e, c, parts, stream.get());
  EXPECT_EQ(statuses, expected);
  auto const sources = partition_sources(c.view(), c.view(), parts);
  auto const* chars = static_cast<const std::uint8_t*>(out.view().data);
  for (std::size_t f = 1; f <= 4; ++f) {
    std::uint64_t const begin = static_cast<std::uint64_t>(sources[f].offsets[0]);
    for (std::uint64_t k = 0; k < sources[f].chars_bytes; ++k) {
      ASSERT_EQ(chars[begin + k], 0x5A) << "frame " << f << " wrote its target";
    }
  }
}

// --- fsst_dict ------------------------------------------------------------------------------

TEST(FsstDictGpu, RealColumnsEncodeAsOnTheCpuAndDecode) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const char* file : {"deb_maintainers.txt", "deb_paths.txt", "osm_poi_names.txt"}) {
    SCOPED_TRACE(file);
    auto const c = zs::test::data_column(file);
    expect_gpu_as_cpu(c, 1, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 37, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 16, true, stream.get(), fsst_dict());
  }
}

TEST(FsstDictGpu, AdversarialColumnsEncodeAsOnTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::mt19937_64 rng(17);
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  cases.push_back({"all equal", std::vector<std::string>(50000, "the same value every row")});
  std::vector<std::string> distinct, bytes, few;
  for (int i = 0; i < 40000; ++i) distinct.push_back("value " + std::to_string(i * 7919));
  cases.push_back({"all distinct", distinct});
  cases.push_back({"all empty", std::vector<std::string>(30000, "")});
  // Values that differ only in zero bytes, 0xFF bytes and their lengths, and empty values among them.
  for (int i = 0; i < 30000; ++i) {
    std::string v(static_cast<std::size_t>(rng() % 12), '\0');
    for (auto& ch : v) ch = rng() % 2 == 0 ? '\0' : '\xff';
    bytes.push_back(v);
  }
  cases.push_back({"0x00 and 0xFF bytes", bytes});
  for (int i = 0; i < 60000; ++i) few.push_back(i % 5 == 0 ? std::string() : std::string("k").append(std::to_string(rng() % 300)));
  cases.push_back({"few values and empty ones", few});
  std::string one(20u << 20, 'a');
  for (std::size_t i = 0; i < one.size(); i += 5) one[i] = static_cast<char>(rng());
  cases.push_back({"one long string", {one}});
  cases.push_back({"one long string twice", {one, "x", one}});
  for (auto const& [what, values] : cases) {
    SCOPED_TRACE(what);
    auto const c = zs::column::from_strings(values);
    expect_gpu_as_cpu(c, 1, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 7, true, stream.get(), fsst_dict());
  }
  // More frames than rows: empty frames among the others.
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>{"a", "b", "a"}), 8, false, stream.get(),
                    fsst_dict());
}
