// The codec framework on the GPU against the CPU: column parameters (format version 2) and
// embedded frames through the fixture codec, and the estimate hook.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "fixture_codec.hpp"
#include "zs/codec.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::empty_like;
using zs::test::expect_same_column;
using zs::test::partition_sources;
using zs::test::partition_targets;

// Frames of `c` for `parts` partitions of `host` (and its device copy `device`), with the
// column's parameters prepared from all partitions on the side that encodes.
struct frames {
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> offsets;  // layout: each frame's room
  std::vector<std::uint64_t> written;
};

frames encode_cpu(const zs::codec& c, const zs::column& host, std::size_t parts) {
  auto sources = partition_sources(host.view(), host.view(), parts);
  std::vector<std::uint64_t> const begin{0, sources.size()};
  auto const params_at = zs::layout_params(c, std::vector<zs::value_type>{host.type()});
  std::vector<std::byte> params(std::max<std::uint64_t>(params_at.back(), 1));
  c.prepare_host({sources, begin}, params.data(), params_at);
  if (c.params_bytes(host.type()) != 0) {
    for (auto& s : sources) s.params = params.data();
  }
  frames f;
  f.offsets = zs::layout_frames(c, sources);
  f.bytes.resize(f.offsets.back());
  f.written.resize(sources.size());
  c.encode_host({sources, f.bytes.data(), f.offsets, f.written.data()});
  return f;
}

frames encode_gpu(const zs::codec& c, const zs::column& host, const zs::column& device, std::size_t parts,
                  cudaStream_t stream) {
  auto sources = partition_sources(host.view(), device.view(), parts);
  std::vector<std::uint64_t> const begin{0, sources.size()};
  auto const params_at = zs::layout_params(c, std::vector<zs::value_type>{host.type()});
  zs::device_buffer params(std::max<std::uint64_t>(params_at.back(), 1), stream);
  c.prepare_async({sources, begin}, params.as<std::byte>(), params_at, stream);
  if (c.params_bytes(host.type()) != 0) {
    for (auto& s : sources) s.params = params.as<std::byte>();
  }
  frames f;
  f.offsets = zs::layout_frames(c, sources);
  zs::device_buffer out(f.offsets.back(), stream), written(sources.size() * 8, stream);
  zs::device_buffer temp(c.encode_temp_bytes(sources), stream);
  c.encode_async({sources, out.as<std::byte>(), f.offsets, written.as<std::uint64_t>()}, temp.data(), temp.size(),
                 stream);
  f.bytes.resize(f.offsets.back());
  f.written.resize(sources.size());
  zs::copy_async(f.bytes.data(), out.data(), f.bytes.size(), stream);
  zs::copy_async(f.written.data(), written.data(), f.written.size() * 8, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return f;
}

// Decodes `f` on the GPU into a column shaped like `host`; returns the statuses and the column.
std::pair<std::vector<zs::frame_status>, zs::column> decode_gpu(const zs::codec& c, const frames& f,
                                                                const zs::column& host, std::size_t parts,
                                                                cudaStream_t stream) {
  auto const sources = partition_sources(host.view(), host.view(), parts);
  zs::column device_out = empty_like(host, zs::memory_kind::device, stream);
  auto const targets = partition_targets(sources, device_out.mutable_view());
  zs::device_buffer in(f.bytes.size(), stream), status(sources.size() * sizeof(zs::frame_status), stream);
  zs::copy_async(in.data(), f.bytes.data(), f.bytes.size(), stream);
  zs::device_buffer temp(c.decode_temp_bytes(targets), stream);
  c.decode_async({in.as<std::byte>(), f.offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                 stream);
  std::vector<zs::frame_status> statuses(sources.size());
  zs::copy_async(statuses.data(), status.data(), statuses.size() * sizeof(zs::frame_status), stream);
  zs::column back = device_out.copy_to(zs::memory_kind::host, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return {statuses, std::move(back)};
}

std::vector<zs::column> test_columns() {
  std::vector<zs::column> cols;
  std::vector<std::int32_t> small(100000);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<std::int32_t>(i % 1000) - 500;
  cols.push_back(zs::column::from_values<std::int32_t>(small));
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> noise(30000);
  for (auto& v : noise) v = rng();
  cols.push_back(zs::column::from_values<std::uint64_t>(noise));
  std::vector<double> floats(20000);
  for (std::size_t i = 0; i < floats.size(); ++i) floats[i] = 0.25 * static_cast<double>(i);
  cols.push_back(zs::column::from_values<double>(floats));
  std::vector<std::string> strings;
  for (int i = 0; i < 20000; ++i) strings.push_back(i % 7 == 0 ? std::string() : "name " + std::to_string(i * 13));
  cols.push_back(zs::column::from_strings(strings));
  cols.push_back(zs::test::data_column("ncbi_tax_id.i32"));
  return cols;
}

TEST(CodecFrameworkGpu, ColumnParametersAndEmbeddedFramesMatchTheCpuByteForByte) {
  ZS_REQUIRE_GPU();
  auto const& fixture = zs::test::register_fixture_codec();
  zs::cuda_stream stream;
  for (auto const& host : test_columns()) {
    SCOPED_TRACE(std::string(zs::to_string(host.type())) + " of " + std::to_string(host.size()) + " rows");
    std::size_t const parts = 7;
    zs::column const device = host.copy_to(zs::memory_kind::device, stream);
    auto const cpu = encode_cpu(fixture, host, parts);
    auto const gpu = encode_gpu(fixture, host, device, parts, stream);
    ASSERT_EQ(gpu.written, cpu.written);
    for (std::size_t i = 0; i < parts; ++i) {
      EXPECT_TRUE(zs::test::same_bytes(gpu.bytes.data() + gpu.offsets[i], cpu.bytes.data() + cpu.offsets[i],
                                       cpu.written[i]))
          << "frame " << i;
      EXPECT_EQ(zs::load_header(gpu.bytes.data() + gpu.offsets[i]).version, zs::frame_version_params);
    }
    // Each side decodes the other's frames.
    auto const [statuses, back] = decode_gpu(fixture, cpu, host, parts, stream);
    for (auto s : statuses) EXPECT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
    expect_same_column(back, host);
    zs::column cpu_back = empty_like(host, zs::memory_kind::host);
    auto const sources = partition_sources(host.view(), host.view(), parts);
    auto const targets = partition_targets(sources, cpu_back.mutable_view());
    std::vector<zs::frame_status> cpu_statuses(parts);
    fixture.decode_host({gpu.bytes.data(), gpu.offsets, targets, cpu_statuses.data()});
    for (auto s : cpu_statuses) EXPECT_EQ(s, zs::frame_status::ok) << zs::to_string(s);
    expect_same_column(cpu_back, host);
  }
}

TEST(CodecFrameworkGpu, ADamagedParameterPrefixIsRefusedOnTheGpu) {
  ZS_REQUIRE_GPU();
  auto const& fixture = zs::test::register_fixture_codec();
  zs::cuda_stream stream;
  std::vector<std::int64_t> values(5000, 42);
  auto const host = zs::column::from_values<std::int64_t>(values);
  auto f = encode_cpu(fixture, host, 3);
  // Frame 1: a parameter size that is not the codec's, with both checksums made to match.
  std::byte* frame = f.bytes.data() + f.offsets[1];
  zs::detail::store_le(frame + 64, 48, 8);
  zs::frame_header h = zs::load_header(frame);
  h.payload_checksum = zs::hash::checksum(frame + 64, h.payload_bytes);
  zs::store_header(h, frame);
  auto const [statuses, back] = decode_gpu(fixture, f, host, 3, stream);
  EXPECT_EQ(statuses[0], zs::frame_status::ok);
  EXPECT_EQ(statuses[1], zs::frame_status::corrupt_payload);
  EXPECT_EQ(statuses[2], zs::frame_status::ok);
}

TEST(CodecFrameworkGpu, EstimatesEqualTheCpuReferences) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const cols = test_columns();
  for (const zs::codec* c : zs::all_codecs()) {
    std::vector<zs::column> device;
    std::vector<zs::encode_source> host_pieces, device_pieces;
    std::vector<std::uint64_t> begin{0};
    for (auto const& col : cols) {
      if (!c->supports(col.type())) continue;
      device.push_back(col.copy_to(zs::memory_kind::device, stream));
      auto const h = partition_sources(col.view(), col.view(), 5);
      auto const d = partition_sources(col.view(), device.back().view(), 5);
      host_pieces.insert(host_pieces.end(), h.begin(), h.end());
      device_pieces.insert(device_pieces.end(), d.begin(), d.end());
      begin.push_back(host_pieces.size());
    }
    if (begin.size() == 1) continue;
    auto const cpu = c->estimate_host({host_pieces, begin});
    auto const gpu = c->estimate({device_pieces, begin}, stream);
    ASSERT_EQ(gpu.size(), cpu.size()) << c->name();
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      EXPECT_EQ(gpu[i].raw_bytes, cpu[i].raw_bytes) << c->name() << " column " << i;
      EXPECT_EQ(gpu[i].frame_bytes, cpu[i].frame_bytes) << c->name() << " column " << i;
      EXPECT_GT(gpu[i].raw_bytes, 0u);
    }
  }
}

TEST(CodecFrameworkGpu, EmbeddedFramesSkipTheirOwnChecksum) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const& bitpack = zs::get_codec(zs::codec_id::bitpack_for);
  std::vector<std::uint32_t> values(20000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i / 3);
  auto const host = zs::column::from_values<std::uint32_t>(values);
  auto const device = host.copy_to(zs::memory_kind::device, stream);
  auto const sources = partition_sources(host.view(), device.view(), 2);
  auto const offsets = zs::layout_frames(bitpack, sources);
  zs::device_buffer out(offsets.back(), stream), written(16, stream);
  zs::device_buffer temp(bitpack.encode_temp_bytes(sources), stream);
  bitpack.encode_async({sources, out.as<std::byte>(), offsets, written.as<std::uint64_t>(), true}, temp.data(),
                       temp.size(), stream);
  frames f{std::vector<std::byte>(offsets.back()), offsets, {}};
  zs::copy_async(f.bytes.data(), out.data(), f.bytes.size(), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(zs::load_header(f.bytes.data() + offsets[i]).payload_checksum, 0u);

  auto const hs = partition_sources(host.view(), host.view(), 2);
  zs::column device_out = empty_like(host, zs::memory_kind::device, stream);
  auto const targets = partition_targets(hs, device_out.mutable_view());
  zs::device_buffer status(2 * sizeof(zs::frame_status), stream);
  zs::device_buffer dtemp(bitpack.decode_temp_bytes(targets), stream);
  for (bool embedded : {true, false}) {
    bitpack.decode_async({out.as<std::byte>(), offsets, targets, status.as<zs::frame_status>(), embedded}, dtemp.data(),
                         dtemp.size(), stream);
    std::vector<zs::frame_status> got(2);
    zs::copy_async(got.data(), status.data(), 2 * sizeof(zs::frame_status), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    for (auto s : got) {
      EXPECT_EQ(s, embedded ? zs::frame_status::ok : zs::frame_status::bad_payload_checksum) << zs::to_string(s);
    }
    if (embedded) expect_same_column(device_out.copy_to(zs::memory_kind::host, stream), host);
  }
}

}  // namespace
