// The dict codec on the GPU against its CPU reference: every input of tests/codecs/
// dict_test_inputs.hpp (every integer type, distinct values below, at and above the limit, the
// types' extremes among them) in one batch, byte for byte, and decoded on both sides; real
// columns as they come, mapped onto few values, as their low bits with outliers, and sorted, in
// frames of many sizes; thousands of small
// frames in one batch; and the CPU's statuses for frames that break the format's rules, beside
// good frames that still decode. The conformance suite adds truncations and bit flips.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "dict/dict_format.hpp"
#include "dict_test_inputs.hpp"
#include "zs/codec.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace {

namespace inputs = zs::test::dict_inputs;

const zs::codec& dict() { return zs::get_codec(zs::codec_id::dict); }

using zs::test::to_host;

// The inputs' values back to back, and where each starts.
struct joined {
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> at;
};

joined join(const std::vector<inputs::input>& in) {
  joined j;
  for (auto const& c : in) {
    j.bytes.resize(zs::align_frame(j.bytes.size()));  // each column aligned, as a column's buffer is
    j.at.push_back(j.bytes.size());
    j.bytes.insert(j.bytes.end(), c.bytes.begin(), c.bytes.end());
  }
  j.at.push_back(j.bytes.size());
  return j;
}

std::vector<zs::encode_source> sources_over(const std::vector<inputs::input>& in, const joined& j, const std::byte* base) {
  std::vector<zs::encode_source> s;
  for (std::size_t c = 0; c < in.size(); ++c) s.push_back({in[c].type, in[c].rows, base + j.at[c]});
  return s;
}

std::vector<zs::decode_target> targets_over(const std::vector<inputs::input>& in, const joined& j, std::byte* base) {
  std::vector<zs::decode_target> t;
  for (std::size_t c = 0; c < in.size(); ++c) t.push_back({in[c].type, in[c].rows, base + j.at[c]});
  return t;
}

struct frames {
  std::vector<std::uint64_t> offsets, sizes;
  std::vector<std::byte> bytes;
};

// Decodes `f` on one side into targets shaped as `in`; statuses and the values' bytes.
struct decoded {
  std::vector<zs::frame_status> status;
  std::vector<std::byte> values;
};

decoded decode(bool on_gpu, const frames& f, const std::vector<inputs::input>& in, const joined& j, cudaStream_t stream) {
  decoded d;
  d.status.assign(in.size(), zs::frame_status::not_decoded);
  d.values.assign(j.bytes.size(), std::byte{0xA5});
  if (!on_gpu) {
    dict().decode_host({f.bytes.data(), f.offsets, targets_over(in, j, d.values.data()), d.status.data()});
    return d;
  }
  zs::device_buffer frames_in(f.bytes.size(), stream), out(j.bytes.size() + 16, stream),
      status(in.size() * sizeof(zs::frame_status), stream);
  zs::copy_async(frames_in.data(), f.bytes.data(), f.bytes.size(), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0xA5, out.size(), stream));
  auto const targets = targets_over(in, j, out.as<std::byte>());
  zs::device_buffer temp(dict().decode_temp_bytes(targets), stream);
  dict().decode_async({frames_in.as<std::byte>(), f.offsets, targets, status.as<zs::frame_status>()}, temp.data(),
                      temp.size(), stream);
  d.status = to_host<zs::frame_status>(status.data(), in.size(), stream);
  d.values = to_host<std::byte>(out.data(), j.bytes.size(), stream);
  return d;
}

// Encodes `in` in one batch on each side: the GPU's frames are the CPU's byte for byte, and each
// side decodes them to the values. Some frame takes a dictionary, and, where `expect_runs`, runs.
void expect_same_frames_and_round_trips(const std::vector<inputs::input>& in, bool expect_runs = false) {
  zs::cuda_stream stream;
  joined const j = join(in);
  zs::device_buffer values(j.bytes.size() + 16, stream);
  zs::copy_async(values.data(), j.bytes.data(), j.bytes.size(), stream);
  auto const host_sources = sources_over(in, j, j.bytes.data());
  auto const device_sources = sources_over(in, j, values.as<std::byte>());

  frames cpu;
  cpu.offsets = zs::layout_frames(dict(), host_sources);
  cpu.bytes.assign(cpu.offsets.back(), std::byte{0xEE});
  cpu.sizes.assign(in.size(), 0);
  dict().encode_host({host_sources, cpu.bytes.data(), cpu.offsets, cpu.sizes.data()});

  frames gpu;
  gpu.offsets = cpu.offsets;
  zs::device_buffer out(gpu.offsets.back(), stream), sizes(in.size() * sizeof(std::uint64_t), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0xEE, out.size(), stream));
  zs::device_buffer temp(dict().encode_temp_bytes(device_sources), stream);
  dict().encode_async({device_sources, out.as<std::byte>(), gpu.offsets, sizes.as<std::uint64_t>()}, temp.data(),
                      temp.size(), stream);
  gpu.bytes = to_host<std::byte>(out.data(), out.size(), stream);
  gpu.sizes = to_host<std::uint64_t>(sizes.data(), in.size(), stream);

  ASSERT_EQ(gpu.sizes, cpu.sizes) << "frame sizes differ between the GPU and the CPU";
  std::size_t dictionaries = 0, runs = 0;
  for (std::size_t c = 0; c < in.size(); ++c) {
    EXPECT_EQ(std::memcmp(gpu.bytes.data() + gpu.offsets[c], cpu.bytes.data() + cpu.offsets[c], cpu.sizes[c]), 0)
        << in[c].name << ": the GPU's frame differs from the CPU's";
    zs::dict::fields const f = zs::dict::load_fields(zs::load_header(cpu.bytes.data() + cpu.offsets[c]));
    dictionaries += f.dictionary() ? 1 : 0;
    runs += f.runs() ? 1 : 0;
  }
  EXPECT_GT(dictionaries, 0U) << "no frame of the batch took a dictionary";
  if (expect_runs) {
    EXPECT_GT(runs, 0U) << "no frame of the batch took runs";
  }
  for (bool const on_gpu : {false, true}) {
    decoded const d = decode(on_gpu, gpu, in, j, stream);
    for (std::size_t c = 0; c < in.size(); ++c) {
      ASSERT_EQ(d.status[c], zs::frame_status::ok) << in[c].name << (on_gpu ? " on the GPU" : " on the CPU");
      if (in[c].bytes.empty()) continue;
      EXPECT_EQ(std::memcmp(d.values.data() + j.at[c], in[c].bytes.data(), in[c].bytes.size()), 0)
          << in[c].name << (on_gpu ? ": GPU" : ": CPU") << " decode differs from the values";
    }
  }
}

TEST(DictGpu, EveryInputInOneBatchIsTheCpusFrameAndRoundTrips) {
  ZS_REQUIRE_GPU();
  expect_same_frames_and_round_trips(inputs::all(), true);
}

TEST(DictGpu, ThousandsOfSmallFramesInOneBatch) {
  ZS_REQUIRE_GPU();
  std::vector<inputs::input> in;
  for (std::uint64_t f = 0; f < 3000; ++f) {
    zs::value_type const type = inputs::integer_types[f % std::size(inputs::integer_types)];
    std::uint64_t const rows = 16 + (f * 131) % 2000;
    in.push_back(inputs::few_distinct(type, rows, 1 + f % 40, f % 2 == 0, 100 + f));
  }
  expect_same_frames_and_round_trips(in);
}

TEST(DictGpu, RealColumnsAsTheyComeAndOnFewValues) {
  ZS_REQUIRE_GPU();
  std::string why;
  auto const folder = zs::test::conformance::data_folder(why);
  if (!folder) GTEST_SKIP() << why;
  std::vector<inputs::input> in;
  for (zs::value_type const type : {zs::value_type::int32, zs::value_type::uint32, zs::value_type::int64,
                                    zs::value_type::int16, zs::value_type::uint8}) {
    for (auto const& real : zs::test::conformance::real_columns(*folder, type)) {
      zs::column_view const v = real.head.view();
      std::size_t const width = zs::value_width(type);
      auto const* bytes = static_cast<const std::byte*>(v.data);
      std::vector<std::uint64_t> values(v.count), few(v.count);
      for (std::uint64_t i = 0; i < v.count; ++i) std::memcpy(&values[i], bytes + i * width, width);
      // The first 64 distinct values, every row onto one of them by its value (equal rows stay equal).
      std::vector<std::uint64_t> kept;
      for (std::uint64_t i = 0; i < v.count && kept.size() < 64; ++i) {
        if (std::find(kept.begin(), kept.end(), values[i]) == kept.end()) kept.push_back(values[i]);
      }
      for (std::uint64_t i = 0; i < v.count; ++i) few[i] = kept[(values[i] * 0x9E3779B97F4A7C15ULL >> 40) % kept.size()];
      // Frames of several sizes: the limit depends on the rows.
      for (std::uint64_t const rows : {std::uint64_t{4096}, std::uint64_t{70'000}, v.count}) {
        std::uint64_t const n = std::min(rows, v.count);
        in.push_back(inputs::column_of(real.name + " head " + std::to_string(n), type,
                                       std::vector<std::uint64_t>(values.begin(), values.begin() + n)));
        in.push_back(inputs::column_of(real.name + " on 64 values " + std::to_string(n), type,
                                       std::vector<std::uint64_t>(few.begin(), few.begin() + n)));
        // Their low 10 bits, one row in 1000 the type's greatest value (`bench codec --shapes
        // outliers`): the differences form with bases that skip the outliers.
        std::vector<std::uint64_t> low(values.begin(), values.begin() + n);
        std::uint64_t const greatest = (width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1) ^
                                       zs::dict::key_flip(type);
        for (std::uint64_t i = 0; i < n; ++i) low[i] = i % 997 == 500 ? greatest : low[i] & 1023;
        in.push_back(inputs::column_of(real.name + " low bits and outliers " + std::to_string(n), type, low));
        // Sorted: runs of equal values, as long as the column repeats its values.
        std::vector<std::uint64_t> sorted(values.begin(), values.begin() + n);
        std::sort(sorted.begin(), sorted.end());
        in.push_back(inputs::column_of(real.name + " sorted " + std::to_string(n), type, sorted));
      }
    }
  }
  ASSERT_FALSE(in.empty());
  expect_same_frames_and_round_trips(in, true);
}

TEST(DictGpu, FramesThatBreakTheRulesGetTheCpusStatusBesideGoodFrames) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  // Each bad frame between two good ones.
  std::vector<inputs::input> shapes;
  frames f;
  std::vector<std::byte> expected_good;
  inputs::input const good = inputs::few_distinct(zs::value_type::int32, 5000, 12, true, 5);
  zs::encode_source const source{good.type, good.rows, good.bytes.data()};
  std::vector<std::uint64_t> const one = zs::layout_frames(dict(), std::span(&source, 1));
  std::vector<std::byte> good_frame(one.back());
  std::uint64_t good_size = 0;
  dict().encode_host({std::span(&source, 1), good_frame.data(), one, &good_size});
  good_frame.resize(good_size);
  ASSERT_NE(zs::dict::load_fields(zs::load_header(good_frame.data())).entries, 0U);
  auto append = [&](const std::vector<std::byte>& bytes, const inputs::input& shape) {
    f.offsets.push_back(f.bytes.size());
    f.bytes.insert(f.bytes.end(), bytes.begin(), bytes.end());
    f.bytes.resize(zs::align_frame(f.bytes.size()));
    shapes.push_back(shape);
  };
  auto const bad = inputs::bad_frames();
  append(good_frame, good);
  for (auto const& b : bad) {
    inputs::input shape{b.name, b.type, b.rows, std::vector<std::byte>(b.rows * zs::value_width(b.type)), false};
    append(b.bytes, shape);
    append(good_frame, good);
  }
  f.offsets.push_back(f.bytes.size());
  joined const j = join(shapes);
  decoded const cpu = decode(false, f, shapes, j, stream);
  decoded const gpu = decode(true, f, shapes, j, stream);
  for (std::size_t c = 0; c < shapes.size(); ++c) {
    bool const is_good = c % 2 == 0;
    SCOPED_TRACE(shapes[c].name);
    EXPECT_EQ(cpu.status[c], is_good ? zs::frame_status::ok : zs::frame_status::corrupt_payload);
    EXPECT_EQ(gpu.status[c], cpu.status[c]);
    if (is_good) {
      EXPECT_EQ(std::memcmp(gpu.values.data() + j.at[c], good.bytes.data(), good.bytes.size()), 0);
    }
  }
}

}  // namespace
