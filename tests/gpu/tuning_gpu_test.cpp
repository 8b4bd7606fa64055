// Launch geometry on the GPU: every tunable kernel gives the same output under geometries other
// than its defaults (other block sizes, work per block, and grids smaller than the work, so the
// grid-stride loops run), grids come from the device's SMs and occupancy, and the process-wide
// table's entry for this device is the one launches use.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/batch_ops.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/hash.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

using zs::launch_params;
using zs::value_type;

// A table that puts `params` in force for every launch of `kernel` on this device: one entry for
// any type, which the lookup's fallbacks apply to every type and size class.
zs::tuning_table forcing(std::string_view kernel, launch_params params) {
  zs::device_profile const& d = zs::current_device_profile();
  zs::tuning_table t;
  t.set({{d.name, d.compute_major, d.compute_minor, std::string(kernel), std::nullopt, zs::size_class::medium},
         params});
  return t;
}

class recorder final : public zs::launch_observer {
 public:
  void before_launch(const zs::launch_record&, cudaStream_t) override {}
  void after_launch(const zs::launch_record& r, cudaStream_t) override { records.push_back(r); }
  std::vector<zs::launch_record> records;
};

struct outcome {
  std::vector<std::byte> bytes;
  std::vector<zs::launch_record> launches;
};

// Appends `count` values of T from device memory to `out`; the copy lands before `out` can
// grow again (growing may move it).
template <typename T>
void append(std::vector<std::byte>& out, const void* device, std::size_t count, cudaStream_t stream) {
  std::size_t const at = out.size();
  out.resize(at + count * sizeof(T));
  if (count == 0) return;
  zs::copy_async(out.data() + at, device, count * sizeof(T), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
}

// Restores the process-wide table that was in force before each test.
class TuningGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!zs::cuda_device_available()) return;  // the test skips itself
    saved_ = *zs::tuning();
    stream_.emplace();
  }
  void TearDown() override {
    if (zs::cuda_device_available()) zs::set_tuning(saved_);
  }

  // Runs `op` (which returns the bytes it produced) under `table`, recording its launches.
  template <typename Op>
  outcome run_under(const zs::tuning_table& table, Op op) {
    zs::set_tuning(table);
    recorder r;
    outcome o;
    {
      zs::scoped_launch_observer const observe(r);
      o.bytes = op();
    }
    o.launches = std::move(r.records);
    return o;
  }

  // `op` gives the same bytes under each of `geometries` for `kernel` as under the defaults,
  // and each launch of the kernel ran with the table's params on a grid the device sized.
  template <typename Op>
  void expect_same_output(std::string_view kernel_name, std::initializer_list<launch_params> geometries, Op op,
                          bool expect_strided) {
    zs::kernel_spec const& kernel = zs::get_kernel_spec(kernel_name);
    zs::device_profile const& d = zs::current_device_profile();
    outcome const reference = run_under(zs::tuning_table{}, op);
    ASSERT_FALSE(reference.bytes.empty());
    bool ran = false;
    for (auto const& r : reference.launches) {
      if (r.choice.kernel != kernel.name) continue;
      ran = true;
      EXPECT_FALSE(r.choice.from_table);
      EXPECT_EQ(r.choice.params, zs::default_params(kernel, d));
    }
    ASSERT_TRUE(ran) << kernel.name << " did not run under the defaults";
    bool strided = false;
    for (auto const& p : geometries) {
      std::string const what = std::string(kernel.name) + ": " + zs::to_string(kernel, p);
      SCOPED_TRACE(what);
      ASSERT_TRUE(zs::valid_params(kernel, p)) << zs::check_params(kernel, p);
      ASSERT_NE(p, zs::default_params(kernel, d)) << "a geometry other than the defaults";
      outcome const got = run_under(forcing(kernel.name, p), op);
      bool seen = false;
      for (auto const& r : got.launches) {
        if (r.choice.kernel != kernel.name) continue;
        seen = true;
        EXPECT_TRUE(r.choice.from_table) << zs::describe(r);
        EXPECT_EQ(r.choice.params, p) << zs::describe(r);
        EXPECT_EQ(r.geometry.threads, p.threads) << zs::describe(r);
        // The grid is the policy's on this device: one block per unit up to the waves' cap.
        std::uint64_t expected = std::min<std::uint64_t>(r.work_units, zs::max_grid_blocks);
        if (p.waves != 0) {
          expected = std::min<std::uint64_t>(
              expected, std::uint64_t{static_cast<unsigned>(d.sm_count)} * r.geometry.blocks_per_sm * p.waves);
        }
        EXPECT_EQ(r.geometry.grid, expected) << zs::describe(r);
        if (r.geometry.grid < r.work_units) strided = true;
      }
      EXPECT_TRUE(seen) << "the kernel did not run";
      ASSERT_EQ(got.bytes.size(), reference.bytes.size());
      EXPECT_TRUE(got.bytes == reference.bytes) << "output differs from the defaults'";
    }
    if (expect_strided) {
      EXPECT_TRUE(strided) << "no geometry had a grid smaller than its work: loops not exercised";
    }
  }

  cudaStream_t stream() const { return stream_->get(); }

 private:
  std::optional<zs::cuda_stream> stream_;
  zs::tuning_table saved_;
};

// --- data ------------------------------------------------------------------------------------

// `host` (bytes) repeated on the device to `total` bytes.
zs::device_buffer tiled(const void* host, std::size_t bytes, std::size_t total, cudaStream_t stream) {
  zs::device_buffer d(total, stream);
  std::size_t const first = std::min(bytes, total);
  zs::copy_async(d.data(), host, first, stream);
  for (std::size_t have = first; have < total;) {
    std::size_t const n = std::min(have, total - have);
    ZS_CUDA_TRY(cudaMemcpyAsync(d.as<std::byte>() + have, d.data(), n, cudaMemcpyDeviceToDevice, stream));
    have += n;
  }
  return d;
}

std::vector<zs::encode_source> cut(value_type type, const void* values, std::uint64_t count, std::uint64_t parts) {
  std::vector<zs::encode_source> sources;
  std::size_t const width = zs::value_width(type);
  for (std::uint64_t p = 0; p < parts; ++p) {
    std::uint64_t const begin = count * p / parts, end = count * (p + 1) / parts;
    sources.push_back({type, end - begin, static_cast<const std::byte*>(values) + begin * width});
  }
  return sources;
}

// Encodes `sources` with `c`; the frames (zeroed first) and their sizes.
std::vector<std::byte> encode(const zs::codec& c, const std::vector<zs::encode_source>& sources,
                              const std::vector<std::uint64_t>& offsets, zs::device_buffer& frames,
                              cudaStream_t stream) {
  zs::device_buffer sizes(sources.size() * 8, stream);
  ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0, frames.size(), stream));
  zs::device_buffer temp(c.encode_temp_bytes(sources), stream);
  c.encode_async({sources, frames.as<std::byte>(), offsets, sizes.as<std::uint64_t>()}, temp.data(), temp.size(),
                 stream);
  std::vector<std::byte> out;
  append<std::uint64_t>(out, sizes.data(), sources.size(), stream);
  append<std::byte>(out, frames.data(), frames.size(), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

// Decodes `frames` into fresh targets shaped like `sources`; the statuses and decoded bytes
// (string targets: offsets and characters).
std::vector<std::byte> decode(const zs::codec& c, const std::vector<zs::encode_source>& sources,
                              const std::vector<std::uint64_t>& offsets, const zs::device_buffer& frames,
                              cudaStream_t stream) {
  std::vector<zs::device_buffer> values, string_offsets;
  std::vector<zs::decode_target> targets;
  for (auto const& s : sources) {
    values.emplace_back(std::max<std::uint64_t>(s.raw_bytes(), 1), stream);
    ZS_CUDA_TRY(cudaMemsetAsync(values.back().data(), 0x5a, values.back().size(), stream));
    zs::decode_target t{s.type, s.count, values.back().data()};
    if (s.type == value_type::string) {
      string_offsets.emplace_back((s.count + 1) * 8, stream);
      t.offsets = string_offsets.back().as<std::int64_t>();
      t.chars_bytes = s.chars_bytes;
    }
    targets.push_back(t);
  }
  zs::device_buffer status(sources.size() * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(c.decode_temp_bytes(targets), stream);
  c.decode_async({frames.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                 stream);
  std::vector<std::byte> out;
  append<zs::frame_status>(out, status.data(), sources.size(), stream);
  for (std::size_t f = 0; f < sources.size(); ++f) {
    append<std::byte>(out, values[f].data(), sources[f].raw_bytes(), stream);
  }
  for (auto const& o : string_offsets) append<std::byte>(out, o.data(), o.size(), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::size_t f = 0; f < sources.size(); ++f) {
    zs::frame_status status{};
    std::memcpy(&status, out.data() + f * sizeof status, sizeof status);
    EXPECT_EQ(status, zs::frame_status::ok) << "frame " << f << ": " << zs::to_string(status);
  }
  return out;
}

// Real integer columns on the device: etopo5 (int32) repeated to 64 MiB, geoip4 (uint32)
// repeated to 24 MiB, and etopo5's values widened to int64 (32 MiB).
struct integer_columns {
  zs::device_buffer i32, u32, i64;
  std::uint64_t n32 = 0, nu32 = 0, n64 = 0;

  explicit integer_columns(cudaStream_t stream) {
    zs::column const etopo = zs::test::data_column("etopo5_elev_m.i32");
    zs::column const geoip = zs::test::data_column("geoip4_lo.u32");
    n32 = (std::uint64_t{64} << 20) / 4;
    i32 = tiled(etopo.view().data, etopo.data_bytes(), n32 * 4, stream);
    nu32 = (std::uint64_t{24} << 20) / 4;
    u32 = tiled(geoip.view().data, geoip.data_bytes(), nu32 * 4, stream);
    auto const* v = etopo.view().values<std::int32_t>();
    std::vector<std::int64_t> wide(v, v + etopo.size());
    n64 = (std::uint64_t{32} << 20) / 8;
    i64 = tiled(wide.data(), wide.size() * 8, n64 * 8, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }

  std::vector<zs::encode_source> batch(std::uint64_t parts) const {
    auto sources = cut(value_type::int32, i32.data(), n32, parts);
    auto more = cut(value_type::uint32, u32.data(), nu32, parts);
    sources.insert(sources.end(), more.begin(), more.end());
    more = cut(value_type::int64, i64.data(), n64, parts);
    sources.insert(sources.end(), more.begin(), more.end());
    return sources;
  }
};

const zs::codec& raw() { return zs::get_codec(zs::codec_id::raw); }
const zs::codec& bitpack() { return zs::get_codec(zs::codec_id::bitpack_for); }

// --- every kernel under other geometries -------------------------------------------------------

TEST_F(TuningGpu, ChecksumGivesTheSameFramesAndStatusesUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  integer_columns const data(stream());
  auto const sources = cut(value_type::int32, data.i32.data(), data.n32, 13);
  auto const offsets = zs::layout_frames(raw(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  expect_same_output("checksum", {{128, 1, 1024}, {512, 2, 16384}, {256, 0, 2048}}, [&] {
    auto out = encode(raw(), sources, offsets, frames, stream());
    auto const decoded = decode(raw(), sources, offsets, frames, stream());
    out.insert(out.end(), decoded.begin(), decoded.end());
    return out;
  }, true);
}

TEST_F(TuningGpu, StringOffsetsRoundTripTheSameUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  // Every string column, one after another, on the device.
  std::vector<std::byte> chars;
  std::vector<std::int64_t> offs{0};
  for (const char* name : {"osm_poi_names.txt", "deb_paths.txt", "deb_descriptions.txt"}) {
    zs::column const c = zs::test::data_column(name);
    auto const* o = c.view().offsets;
    auto const* base = static_cast<const std::byte*>(c.view().data);
    chars.insert(chars.end(), base + o[0], base + o[c.size()]);
    for (std::uint64_t i = 1; i <= c.size(); ++i) offs.push_back(offs.back() + (o[i] - o[i - 1]));
  }
  zs::device_buffer d_chars(chars.size(), stream()), d_offs(offs.size() * 8, stream());
  zs::copy_async(d_chars.data(), chars.data(), chars.size(), stream());
  zs::copy_async(d_offs.data(), offs.data(), offs.size() * 8, stream());
  std::uint64_t const rows = offs.size() - 1, parts = 7;
  std::vector<zs::encode_source> sources;
  for (std::uint64_t p = 0; p < parts; ++p) {
    std::uint64_t const begin = rows * p / parts, end = rows * (p + 1) / parts;
    sources.push_back({value_type::string, end - begin, d_chars.data(), d_offs.as<std::int64_t>() + begin,
                       static_cast<std::uint64_t>(offs[end] - offs[begin])});
  }
  auto const offsets = zs::layout_frames(raw(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  expect_same_output("raw_offsets", {{128, 1, 512}, {1024, 2, 8192}, {256, 0, 1024}}, [&] {
    auto out = encode(raw(), sources, offsets, frames, stream());
    auto const decoded = decode(raw(), sources, offsets, frames, stream());
    out.insert(out.end(), decoded.begin(), decoded.end());
    return out;
  }, true);
}

TEST_F(TuningGpu, BitpackEncodePassesWriteTheSameFramesUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  integer_columns const data(stream());
  auto const sources = data.batch(13);
  auto const offsets = zs::layout_frames(bitpack(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  auto const op = [&] { return encode(bitpack(), sources, offsets, frames, stream()); };
  expect_same_output("bitpack_analyze", {{128, 1, 0}, {256, 0, 0}, {64, 2, 0}}, op, true);
  expect_same_output("bitpack_pack", {{128, 1, 0}, {256, 0, 0}, {64, 2, 0}}, op, true);
}

TEST_F(TuningGpu, BitpackDecodeGivesTheSameValuesUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  integer_columns const data(stream());
  auto const sources = data.batch(13);
  auto const offsets = zs::layout_frames(bitpack(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  zs::set_tuning({});
  encode(bitpack(), sources, offsets, frames, stream());
  auto const op = [&] { return decode(bitpack(), sources, offsets, frames, stream()); };
  expect_same_output("bitpack_decode", {{128, 1, 4}, {256, 2, 8}, {256, 0, 8}, {64, 1, 8}}, op, true);
  // The decoded values are the input, not merely the same under every geometry.
  auto const decoded = run_under(forcing("bitpack_decode", {256, 1, 8}), op).bytes;
  std::size_t at = sources.size() * sizeof(zs::frame_status);
  for (auto const& s : sources) {
    std::vector<std::byte> input(s.raw_bytes());
    zs::copy_async(input.data(), s.values, input.size(), stream());
    ZS_CUDA_TRY(cudaStreamSynchronize(stream()));
    ASSERT_EQ(std::memcmp(decoded.data() + at, input.data(), input.size()), 0);
    at += input.size();
  }
}

TEST_F(TuningGpu, PerFrameKernelsGiveTheSameResultsUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  integer_columns const data(stream());
  // Many small frames: one thread each in the header, check and plan kernels.
  auto const sources = cut(value_type::int32, data.i32.data(), 3'000'000, 3001);
  auto const offsets = zs::layout_frames(bitpack(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  expect_same_output("frame_ops", {{64, 1, 0}, {1024, 0, 0}, {256, 2, 0}}, [&] {
    auto out = encode(bitpack(), sources, offsets, frames, stream());
    auto const decoded = decode(bitpack(), sources, offsets, frames, stream());
    out.insert(out.end(), decoded.begin(), decoded.end());
    return out;
  }, false);
}

TEST_F(TuningGpu, GatherGivesTheSameValuesUnderOtherGeometries) {
  ZS_REQUIRE_GPU();
  zs::column const c = zs::test::data_column("deb_paths.txt");
  std::uint64_t const n = c.size() + 1;
  // Rows grouped by a hash of their index, as a partition by destination groups them.
  std::vector<std::uint64_t> index;
  for (std::uint64_t part = 0; part < 8; ++part) {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (zs::hash::mix64(i) % 8 == part) index.push_back(i);
    }
  }
  zs::device_buffer values(n * 8, stream()), d_index(n * 8, stream()), out(n * 8, stream());
  zs::copy_async(values.data(), c.view().offsets, n * 8, stream());
  zs::copy_async(d_index.data(), index.data(), n * 8, stream());
  auto const op = [&] {
    ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0, n * 8, stream()));
    zs::kernels::gather_i64(values.as<std::int64_t>(), d_index.as<std::uint64_t>(), out.as<std::int64_t>(), n,
                            stream());
    std::vector<std::byte> bytes;
    append<std::int64_t>(bytes, out.data(), n, stream());
    ZS_CUDA_TRY(cudaStreamSynchronize(stream()));
    return bytes;
  };
  expect_same_output("gather", {{128, 1, 0}, {1024, 0, 0}, {512, 2, 0}}, op, true);
  auto const got = op();
  for (std::uint64_t i = 0; i < n; i += 997) {
    std::int64_t v = 0;
    std::memcpy(&v, got.data() + i * 8, 8);
    ASSERT_EQ(v, c.view().offsets[index[i]]) << "row " << i;
  }
}

// --- the table in force ------------------------------------------------------------------------

TEST_F(TuningGpu, TheEntryForThisDeviceIsTheOneLaunchesUse) {
  ZS_REQUIRE_GPU();
  zs::device_profile const& d = zs::current_device_profile();
  std::uint64_t const bytes = std::uint64_t{64} << 20;
  zs::tuning_table t;
  t.set({{d.name, d.compute_major, d.compute_minor, "bitpack_decode", value_type::int32,
          zs::size_class_of(bytes)},
         {256, 2, 8}});
  t.set({{d.name + " (another model)", d.compute_major, d.compute_minor, "checksum", std::nullopt,
          zs::size_class_of(bytes)},
         {512, 1, 16384}});
  zs::set_tuning(t);
  auto const decode_choice = zs::choose_launch(zs::get_kernel_spec("bitpack_decode"), value_type::int32, bytes);
  EXPECT_TRUE(decode_choice.from_table);
  EXPECT_EQ(decode_choice.params, (launch_params{256, 2, 8}));
  auto const checksum = zs::choose_launch(zs::get_kernel_spec("checksum"), std::nullopt, bytes);
  EXPECT_FALSE(checksum.from_table) << "an entry for another device model is not this device's";
  EXPECT_EQ(checksum.params, zs::default_params(zs::get_kernel_spec("checksum"), d));

  // And a real decode of int32 frames launches with it.
  integer_columns const data(stream());
  auto const sources = cut(value_type::int32, data.i32.data(), data.n32, 5);
  auto const offsets = zs::layout_frames(bitpack(), sources);
  zs::device_buffer frames(offsets.back(), stream());
  encode(bitpack(), sources, offsets, frames, stream());
  recorder r;
  {
    zs::scoped_launch_observer const observe(r);
    decode(bitpack(), sources, offsets, frames, stream());
  }
  bool seen = false;
  for (auto const& rec : r.records) {
    if (rec.choice.kernel != "bitpack_decode" || rec.work_units == 0) continue;
    seen = true;
    EXPECT_TRUE(rec.choice.from_table) << zs::describe(rec);
    EXPECT_EQ(rec.choice.params, (launch_params{256, 2, 8})) << zs::describe(rec);
    EXPECT_EQ(rec.choice.type, value_type::int32);
  }
  EXPECT_TRUE(seen);
}

TEST_F(TuningGpu, CachedProfileIsTheQueriedOne) {
  ZS_REQUIRE_GPU();
  int ordinal = 0;
  ZS_CUDA_TRY(cudaGetDevice(&ordinal));
  zs::device_profile const fresh = zs::query_device(ordinal);
  zs::device_profile const& cached = zs::current_device_profile();
  EXPECT_EQ(&cached, &zs::cached_device_profile(ordinal));
  EXPECT_EQ(cached.name, fresh.name);
  EXPECT_EQ(cached.sm_count, fresh.sm_count);
  EXPECT_GT(cached.max_threads_per_block, 0);
  EXPECT_GT(cached.max_blocks_per_sm, 0);
  EXPECT_GT(cached.registers_per_block, 0);
}

}  // namespace
