// The bitmap codec on the GPU against its CPU reference: every mode at every row count of
// tests/codecs/bitmap_test_inputs.hpp in one batch, batches of thousands of frames, frames of a
// million rows over many chunks, decoding across the sides, and the CPU's statuses for bodies
// that break the format's rules (with their targets left as they were: the GPU decoder checks
// every frame before it writes). The conformance suite adds real columns, truncations and bit
// flips (tests/codecs/conformance_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bitmap/bitmap_format.hpp"
#include "bitmap_test_inputs.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

namespace inputs = zs::test::bitmap_inputs;
using zs::bitmap::mode;

const zs::codec& bitmap() { return zs::get_codec(zs::codec_id::bitmap); }

using zs::test::to_host;

// Columns of one byte a row, back to back in one host buffer and its device copy.
struct byte_columns {
  std::vector<std::string> names;
  std::vector<zs::value_type> types;
  std::vector<std::vector<std::uint8_t>> values;

  void add(std::string name, zs::value_type type, std::vector<std::uint8_t> v) {
    names.push_back(std::move(name));
    types.push_back(type);
    values.push_back(std::move(v));
  }
  std::vector<std::uint8_t> joined() const {
    std::vector<std::uint8_t> all;
    for (auto const& v : values) all.insert(all.end(), v.begin(), v.end());
    return all;
  }
  // One source per column over `base`, the joined values in host or device memory.
  std::vector<zs::encode_source> sources(const std::uint8_t* base) const {
    std::vector<zs::encode_source> out;
    std::uint64_t at = 0;
    for (std::size_t c = 0; c < values.size(); ++c) {
      out.push_back({types[c], values[c].size(), base + at});
      at += values[c].size();
    }
    return out;
  }
};

struct frames {
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> sizes;
};

frames encode_cpu(const std::vector<zs::encode_source>& sources) {
  frames f;
  f.offsets = zs::layout_frames(bitmap(), sources);
  f.bytes.assign(f.offsets.back(), std::byte{0xEE});
  f.sizes.assign(sources.size(), 0);
  bitmap().encode_host({sources, f.bytes.data(), f.offsets, f.sizes.data()});
  return f;
}

frames encode_gpu(const std::vector<zs::encode_source>& device_sources, cudaStream_t stream) {
  frames f;
  f.offsets = zs::layout_frames(bitmap(), device_sources);
  zs::device_buffer out(f.offsets.back(), stream), sizes(device_sources.size() * 8, stream);
  if (!out.empty()) ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0xEE, out.size(), stream));
  zs::device_buffer temp(bitmap().encode_temp_bytes(device_sources), stream);
  bitmap().encode_async({device_sources, out.as<std::byte>(), f.offsets, sizes.as<std::uint64_t>()}, temp.data(),
                        temp.size(), stream);
  f.bytes = to_host<std::byte>(out.data(), out.size(), stream);
  f.sizes = to_host<std::uint64_t>(sizes.data(), device_sources.size(), stream);
  return f;
}

// Statuses and values of decoding `bytes` (frame i at offsets[i]) into targets of `shapes`
// (type, rows), every target byte 0xA5 first.
struct decoded {
  std::vector<zs::frame_status> status;
  std::vector<std::vector<std::uint8_t>> values;
};
struct shape {
  zs::value_type type;
  std::uint64_t rows;
};

decoded decode(bool on_gpu, const std::vector<std::byte>& bytes, const std::vector<std::uint64_t>& offsets,
               const std::vector<shape>& shapes, cudaStream_t stream) {
  std::uint64_t total = 0;
  for (auto const& s : shapes) total += s.rows;
  std::vector<std::uint8_t> host_out(total, 0xA5);
  decoded d;
  d.status.assign(shapes.size(), zs::frame_status::not_decoded);
  auto targets_over = [&](std::uint8_t* base) {
    std::vector<zs::decode_target> t;
    std::uint64_t at = 0;
    for (auto const& s : shapes) {
      t.push_back({s.type, s.rows, base + at});
      at += s.rows;
    }
    return t;
  };
  if (!on_gpu) {
    bitmap().decode_host({bytes.data(), offsets, targets_over(host_out.data()), d.status.data()});
  } else {
    zs::device_buffer in(bytes.size(), stream), out(total, stream), status(shapes.size() * sizeof(zs::frame_status), stream);
    zs::copy_async(in.data(), bytes.data(), bytes.size(), stream);
    if (total != 0) ZS_CUDA_TRY(cudaMemsetAsync(out.data(), 0xA5, total, stream));
    auto const targets = targets_over(out.as<std::uint8_t>());
    zs::device_buffer temp(bitmap().decode_temp_bytes(targets), stream);
    bitmap().decode_async({in.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()}, temp.data(),
                          temp.size(), stream);
    d.status = to_host<zs::frame_status>(status.data(), shapes.size(), stream);
    host_out = to_host<std::uint8_t>(out.data(), total, stream);
  }
  std::uint64_t at = 0;
  for (auto const& s : shapes) {
    d.values.emplace_back(host_out.begin() + static_cast<std::ptrdiff_t>(at),
                          host_out.begin() + static_cast<std::ptrdiff_t>(at + s.rows));
    at += s.rows;
  }
  return d;
}

// Encodes `columns` on both sides in one batch each: the GPU's frames are the CPU's byte for
// byte, and each side decodes both sides' frames to the values.
void expect_same_frames_and_round_trips(const byte_columns& columns) {
  zs::cuda_stream stream;
  auto const joined = columns.joined();
  zs::device_buffer device(joined.size(), stream);
  zs::copy_async(device.data(), joined.data(), joined.size(), stream);
  auto const host_sources = columns.sources(joined.data());
  auto const device_sources = columns.sources(device.as<std::uint8_t>());
  frames const cpu = encode_cpu(host_sources);
  frames const gpu = encode_gpu(device_sources, stream);
  ASSERT_EQ(gpu.sizes, cpu.sizes) << "frame sizes differ between GPU and CPU";
  std::vector<shape> shapes;
  for (std::size_t c = 0; c < columns.values.size(); ++c) {
    shapes.push_back({columns.types[c], columns.values[c].size()});
    bool const same = std::memcmp(gpu.bytes.data() + gpu.offsets[c], cpu.bytes.data() + cpu.offsets[c], cpu.sizes[c]) == 0;
    EXPECT_TRUE(same) << columns.names[c] << ": the GPU's frame differs from the CPU's";
  }
  for (bool const gpu_decodes : {false, true}) {
    for (const frames* f : {&cpu, &gpu}) {
      std::string const who = std::string(gpu_decodes ? "GPU" : "CPU") + " decoding " + (f == &gpu ? "GPU" : "CPU") + " frames";
      auto const d = decode(gpu_decodes, f->bytes, f->offsets, shapes, stream);
      for (std::size_t c = 0; c < shapes.size(); ++c) {
        EXPECT_EQ(d.status[c], zs::frame_status::ok) << who << ", " << columns.names[c];
        EXPECT_TRUE(d.values[c] == columns.values[c]) << who << ", " << columns.names[c] << ": values differ";
      }
    }
  }
}

TEST(BitmapGpu, EveryModeAndRowCountGivesTheCpusFrames) {
  ZS_REQUIRE_GPU();
  byte_columns columns;
  for (auto& in : inputs::all()) columns.add(in.name, in.type, in.values);
  expect_same_frames_and_round_trips(columns);
}

TEST(BitmapGpu, BatchesOfThousandsOfFramesGiveTheCpusFrames) {
  ZS_REQUIRE_GPU();
  // Null masks of a wide shuffle: many small partitions, most all valid, some all null, some
  // mixed, a few with other bytes, of row counts on both sides of a chunk and of a warp's 32.
  std::mt19937_64 rng(11);
  byte_columns columns;
  for (int f = 0; f < 4000; ++f) {
    std::uint64_t const rows = f % 7 == 0 ? rng() % 70'000 : rng() % 300;
    std::vector<std::uint8_t> v(rows, 1);
    switch (rng() % 5) {
      case 0: break;
      case 1: std::fill(v.begin(), v.end(), 0); break;
      case 2:
        for (auto& x : v) x = static_cast<std::uint8_t>(rng() % 10 != 0);
        break;
      case 3:
        for (auto& x : v) x = static_cast<std::uint8_t>(rng() % 2);
        if (rows != 0) v[rng() % rows] = static_cast<std::uint8_t>(2 + rng() % 254);
        break;
      default:
        if (rows != 0) v[rows - 1] = 0;  // one null in the last row
        break;
    }
    columns.add("frame " + std::to_string(f), f % 3 == 0 ? zs::value_type::bool8 : zs::value_type::uint8, std::move(v));
  }
  expect_same_frames_and_round_trips(columns);
}

// The chunk kernels loop with a grid stride and take whole warps of rows: one small block with
// the smallest chunks, the largest blocks, and chunks larger than most frames give the same
// frames.
TEST(BitmapGpu, AnyLaunchGeometryGivesTheCpusFrames) {
  ZS_REQUIRE_GPU();
  struct restore_tuning {
    zs::tuning_table saved = *zs::tuning();
    ~restore_tuning() { zs::set_tuning(saved); }
  } const restore;
  byte_columns columns;
  for (auto& in : inputs::all()) {
    if (in.values.size() <= 9 || in.values.size() > 1'000'000) columns.add(in.name, in.type, in.values);
  }
  std::vector<std::uint8_t> mixed(70'001);
  for (std::size_t i = 0; i < mixed.size(); ++i) mixed[i] = static_cast<std::uint8_t>(i % 97 != 0);
  columns.add("mostly valid, 70001 rows", zs::value_type::uint8, mixed);
  zs::device_profile const& d = zs::current_device_profile();
  for (zs::launch_params p : {zs::launch_params{128, 1, 1024}, zs::launch_params{1024, 0, 1024},
                              zs::launch_params{256, 4, 65536}}) {
    SCOPED_TRACE(std::to_string(p.threads) + " threads, " + std::to_string(p.items) + " rows a chunk");
    zs::tuning_table forced;
    for (auto size : {zs::size_class::small, zs::size_class::medium, zs::size_class::large}) {
      forced.set({{d.name, d.compute_major, d.compute_minor, "bitmap_chunks", std::nullopt, size}, p});
    }
    zs::set_tuning(forced);
    expect_same_frames_and_round_trips(columns);
  }
}

TEST(BitmapGpu, CorruptBodiesGetTheCpusStatusAndLeaveTheirTargets) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::uint8_t> alternating(13), with_two(13);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = with_two[i] = static_cast<std::uint8_t>(i % 2);
  with_two[5] = 2;
  byte_columns valid;
  valid.add("constant", zs::value_type::uint8, std::vector<std::uint8_t>(13, 1));
  valid.add("bits", zs::value_type::uint8, alternating);
  valid.add("bytes", zs::value_type::uint8, with_two);
  auto const joined = valid.joined();
  frames const cpu = encode_cpu(valid.sources(joined.data()));
  auto frame = [&](std::size_t i) {
    return std::vector<std::byte>(cpu.bytes.begin() + static_cast<std::ptrdiff_t>(cpu.offsets[i]),
                                  cpu.bytes.begin() + static_cast<std::ptrdiff_t>(cpu.offsets[i] + cpu.sizes[i]));
  };
  auto const corrupt = inputs::corruptions(frame(0), frame(1), frame(2));
  // One batch: every corrupt frame between two intact ones, each at a 16-byte boundary.
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> offsets;
  std::vector<shape> shapes;
  std::vector<std::string> names;
  std::vector<zs::frame_status> expected;
  auto put = [&](const std::vector<std::byte>& f, std::string name, zs::frame_status status) {
    offsets.push_back(bytes.size());
    bytes.insert(bytes.end(), f.begin(), f.end());
    bytes.resize(zs::align_frame(bytes.size()), std::byte{0});
    shapes.push_back({zs::load_header(f.data()).type, 13});
    names.push_back(std::move(name));
    expected.push_back(status);
  };
  for (auto const& c : corrupt) {
    put(frame(1), "intact bits frame", zs::frame_status::ok);
    put(c.frame, c.name, c.expected);
  }
  put(frame(0), "intact constant frame", zs::frame_status::ok);
  offsets.push_back(bytes.size());
  auto const on_cpu = decode(false, bytes, offsets, shapes, stream);
  auto const on_gpu = decode(true, bytes, offsets, shapes, stream);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    EXPECT_EQ(on_cpu.status[k], expected[k]) << names[k] << " on the CPU: " << zs::to_string(on_cpu.status[k]);
    EXPECT_EQ(on_gpu.status[k], on_cpu.status[k]) << names[k] << ": " << zs::to_string(on_gpu.status[k])
                                                  << " on the GPU";
    if (expected[k] == zs::frame_status::ok) {
      EXPECT_EQ(on_gpu.values[k], on_cpu.values[k]) << names[k];
    } else {
      EXPECT_EQ(on_gpu.values[k], std::vector<std::uint8_t>(13, 0xA5)) << names[k] << ": refused, but written";
    }
  }
}

}  // namespace
