// Compressed spill on the GPU path (zs/spill.hpp): device columns spilled through the GPU codecs
// into pinned host memory and restored to the device or the host, the same frames as the CPU
// path, and the failures (white box where a test corrupts spilled frames in place).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "spill_state.hpp"
#include "zs/codec.hpp"
#include "zs/io.hpp"
#include "zs/spill.hpp"
#include "spill_test_inputs.hpp"
#include "zs_test.hpp"

namespace {

namespace fs = std::filesystem;
using zs::memory_kind;
using zs::value_type;

using zs::test::spill_inputs::all_types;
using zs::test::spill_inputs::sample_column;
using zs::test::spill_inputs::small_frames;

std::string type_name(value_type t) { return std::string(zs::to_string(t)); }

// Spills the device copy of `host`, restores it to the device and to the host, and compares.
void expect_device_round_trip(const zs::column& host, const zs::spill_options& options, cudaStream_t stream) {
  zs::column const device = host.copy_to(memory_kind::device, stream);
  zs::spilled_column handle = zs::spill(device.view(), stream, options);
  EXPECT_EQ(handle.origin(), memory_kind::device);
  if (options.codec) {
    EXPECT_EQ(handle.report().codec, *options.codec);
  }
  zs::column const back = zs::restore(handle, stream);
  ASSERT_EQ(back.memory(), memory_kind::device);
  zs::test::expect_same_column(host, back.copy_to(memory_kind::host, stream));
  zs::test::expect_same_column(host, zs::restore(handle, memory_kind::host, stream));
  // The CPU path writes the same frames with the same codec: the same bytes in host memory.
  if (!options.codec) return;  // the sides choose by their own codecs' speeds
  zs::spilled_column on_host = zs::spill(host.view(), stream, options);
  EXPECT_EQ(on_host.report().codec, handle.report().codec);
  EXPECT_EQ(on_host.report().spilled_bytes, handle.report().spilled_bytes);
}

class SpillGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    ZS_REQUIRE_GPU();
    stream_.emplace();
  }
  // The pinned blocks spills keep for reuse go back after each test, so that the leak check of
  // compute-sanitizer (device-check) finds only what a handle failed to give back.
  void TearDown() override { zs::release_spill_host_cache(); }
  std::optional<zs::cuda_stream> stream_;
  cudaStream_t stream() const { return stream_->get(); }
};

TEST_F(SpillGpu, EveryTypeRoundTripsForcedRawForcedCodecAndAuto) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    zs::column const c = sample_column(type, 5000);
    expect_device_round_trip(c, small_frames(zs::codec_id::raw), stream());
    expect_device_round_trip(c, small_frames(zs::default_codec(type).id()), stream());
    zs::column const device = c.copy_to(memory_kind::device, stream());
    auto automatic = zs::spill(device.view(), stream(), small_frames());
    zs::test::expect_same_column(c, zs::restore(automatic, memory_kind::host, stream()));
  }
}

TEST_F(SpillGpu, EmptyColumnsAndOneValueRoundTrip) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    for (std::uint64_t rows : {0, 1}) {
      zs::column const c = sample_column(type, rows);
      expect_device_round_trip(c, small_frames(), stream());
      expect_device_round_trip(c, small_frames(zs::default_codec(type).id()), stream());
    }
  }
}

TEST_F(SpillGpu, RealColumnsRoundTripWithTheDefaults) {
  for (auto const& file : zs::io::list_columns(zs::io::data_dir())) {
    SCOPED_TRACE(file.filename().string());
    zs::column const host = zs::io::read_column(file);
    zs::column const device = host.copy_to(memory_kind::device, stream());
    for (bool forced : {false, true}) {
      zs::spill_options o;
      o.name = file.filename().string();
      if (forced) o.codec = zs::default_codec(host.type()).id();
      auto handle = zs::spill(device.view(), stream(), o);
      zs::test::expect_same_column(host, zs::restore(handle, stream()).copy_to(memory_kind::host, stream()));
      EXPECT_GT(handle.spill_seconds(), 0.0);
      EXPECT_GT(handle.restore_seconds(), 0.0);
      if (forced) {
        EXPECT_GT(handle.report().ratio(), 1.0);
      }
    }
  }
}

TEST_F(SpillGpu, HostColumnsRestoreToTheDeviceAndBack) {
  zs::column const c = sample_column(value_type::string, 3000);
  auto handle = zs::spill(c.view(), stream(), small_frames(zs::default_codec(value_type::string).id()));
  zs::column const back = zs::restore(handle, memory_kind::device, stream());
  zs::test::expect_same_column(c, back.copy_to(memory_kind::host, stream()));
}

TEST_F(SpillGpu, CorruptedFrameThrowsNamingTheColumnAndKeepsTheData) {
  for (auto const type : {value_type::int32, value_type::float64, value_type::string}) {
    SCOPED_TRACE(type_name(type));
    zs::column const host = sample_column(type, 5000);
    zs::column const device = host.copy_to(memory_kind::device, stream());
    auto handle = zs::spill(device.view(), stream(), small_frames(zs::default_codec(type).id()));
    (void)handle.spill_seconds();  // the copies are done
    auto& state = handle.state();
    ASSERT_GE(state.frames.size(), 2u);
    auto const& f = state.frames[1];
    std::byte& victim = state.blocks[f.block].data()[f.offset + f.bytes - 1];
    victim ^= std::byte{0x04};
    auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, stream()); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), zs::error_code::corrupt_frame);
    EXPECT_NE(e->message().find("column 'test'"), std::string::npos) << e->message();
    EXPECT_NE(e->message().find("frame 1"), std::string::npos) << e->message();
    victim ^= std::byte{0x04};
    zs::test::expect_same_column(host, zs::restore(handle, stream()).copy_to(memory_kind::host, stream()));
  }
}

TEST_F(SpillGpu, PinnedAllocationFailureIsAClearError) {
  zs::column const device = sample_column(value_type::int64, 10000).copy_to(memory_kind::device, stream());
  ::setenv("ZS_FAULT", "spill.host_allocation=oom", 1);
  auto const e = zs::test::thrown_error([&] { (void)zs::spill(device.view(), stream(), small_frames()); });
  ::unsetenv("ZS_FAULT");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::out_of_memory);
  EXPECT_NE(e->message().find("column 'test'"), std::string::npos) << e->message();
}

TEST_F(SpillGpu, DeviceOutOfMemoryOnRestoreLeavesTheHandleIntact) {
  zs::column host = sample_column(value_type::int64, std::uint64_t{32} << 20);  // 256 MiB
  zs::spilled_column handle;
  {
    zs::column const device = host.copy_to(memory_kind::device, stream());
    handle = zs::spill(device.view(), stream());
    stream_->synchronize();
  }
  ZS_CUDA_TRY(cudaDeviceSynchronize());
  // The pool keeps freed memory; give it back, then take the device's free memory but a little,
  // so that the restored column finds no room.
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  ZS_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  ZS_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
  std::size_t free = 0, total = 0;
  ZS_CUDA_TRY(cudaMemGetInfo(&free, &total));
  void* hog = nullptr;
  for (std::size_t spare = std::size_t{16} << 20; hog == nullptr && spare < free; spare *= 2) {
    if (cudaMalloc(&hog, free - spare) != cudaSuccess) {
      (void)cudaGetLastError();
      hog = nullptr;
    }
  }
  ASSERT_NE(hog, nullptr) << "could not take the device's free memory";
  auto const e = zs::test::thrown_error([&] { (void)zs::restore(handle, stream()); });
  ZS_CUDA_TRY(cudaFree(hog));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::out_of_memory);
  EXPECT_NE(e->message().find("frames are kept"), std::string::npos) << e->message();
  zs::test::expect_same_column(host, zs::restore(handle, stream()).copy_to(memory_kind::host, stream()));
}

TEST_F(SpillGpu, FileTierRoundTripsADeviceSpill) {
  fs::path const path = fs::temp_directory_path() / ("zs_spill_gpu_test_" + std::to_string(::getpid()));
  zs::column const host = sample_column(value_type::float32, 20000);
  zs::column const device = host.copy_to(memory_kind::device, stream());
  auto handle = zs::spill(device.view(), stream(), small_frames(zs::default_codec(value_type::float32).id()));
  zs::spill_to_file(handle, path);
  auto loaded = zs::restore_from_file(path);
  fs::remove(path);
  EXPECT_EQ(loaded.origin(), memory_kind::device);
  zs::test::expect_same_column(host, zs::restore(loaded, stream()).copy_to(memory_kind::host, stream()));
}

// The raw fast path: with a link far faster than any codec the choice is raw, and a device
// column is one plain copy each way (a string column's offsets and characters), with no frames.
TEST_F(SpillGpu, RawChoiceTakesThePlainCopyPathBothWaysAndToAFile) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    for (std::uint64_t rows : {0, 1, 20000}) {
      zs::column const host = sample_column(type, rows);
      zs::column const device = host.copy_to(memory_kind::device, stream());
      auto options = small_frames();
      options.pcie_bandwidth = 1e16;
      auto handle = zs::spill(device.view(), stream(), options);
      EXPECT_EQ(handle.report().codec, zs::codec_id::raw);
      EXPECT_FALSE(handle.report().forced);
      EXPECT_EQ(handle.report().frames, 0u);
      EXPECT_TRUE(handle.state().unframed);
      std::uint64_t const values_bytes = type == value_type::string ? 8 * (rows + 1) + host.data_bytes()
                                                                     : rows * zs::value_width(type);
      EXPECT_EQ(handle.report().spilled_bytes, values_bytes);
      zs::test::expect_same_column(host, zs::restore(handle, stream()).copy_to(memory_kind::host, stream()));
      zs::test::expect_same_column(host, zs::restore(handle, memory_kind::host, stream()));
      fs::path const path = fs::temp_directory_path() / ("zs_spill_gpu_fast_" + std::to_string(::getpid()));
      zs::spill_to_file(handle, path);
      auto loaded = zs::restore_from_file(path);
      fs::remove(path);
      zs::test::expect_same_column(host, zs::restore(loaded, stream()).copy_to(memory_kind::host, stream()));
    }
  }
}

TEST_F(SpillGpu, ForcedRawStaysFramed) {
  zs::column const device = sample_column(value_type::int64, 20000).copy_to(memory_kind::device, stream());
  auto forced = zs::spill(device.view(), stream(), small_frames(zs::codec_id::raw));
  EXPECT_FALSE(forced.state().unframed);
  EXPECT_GT(forced.report().frames, 0u);
}

// A string view whose offsets do not start at 0 (rows in the middle of a column) spills by the
// plain copy and comes back as an owning column whose offsets do.
TEST_F(SpillGpu, AStringSliceTakesThePlainCopyPathAndComesBackRebased) {
  zs::column const host = sample_column(value_type::string, 20000);
  zs::column const device = host.copy_to(memory_kind::device, stream());
  std::uint64_t const first = 1234, rows = 5000;
  zs::column_view slice = device.view();
  slice.offsets += first;
  slice.count = rows;
  auto options = small_frames();
  options.chosen_before = zs::codec_id::raw;
  auto handle = zs::spill(slice, stream(), options);
  EXPECT_TRUE(handle.state().unframed);
  std::vector<std::string> const all = host.strings();
  std::vector<std::string> const expected(all.begin() + first, all.begin() + first + rows);
  zs::column const back = zs::restore(handle, stream()).copy_to(memory_kind::host, stream());
  ASSERT_EQ(back.size(), rows);
  EXPECT_EQ(back.view().offsets[0], 0);
  EXPECT_EQ(back.strings(), expected);
  zs::column const on_host = zs::restore(handle, memory_kind::host, stream());
  EXPECT_EQ(on_host.view().offsets[0], 0);
  EXPECT_EQ(on_host.strings(), expected);
}

// Frames kept on the device (frames_in device): restored from where they are, moved to host
// memory as they are (no re-encode), and restored again from there; the file tier wants them
// on the host first; a host column cannot keep frames on the device.
TEST_F(SpillGpu, FramesKeptOnTheDeviceRestoreMoveToHostAndRestoreAgain) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    zs::column host = sample_column(type, 30000);
    std::uint8_t* const mask = host.add_null_mask();
    for (std::uint64_t b = 0; b < zs::null_mask_bytes(host.size()); ++b) mask[b] = static_cast<std::uint8_t>(b * 11 + 3);
    zs::column const device = host.copy_to(memory_kind::device, stream());
    for (auto const codec : {std::optional<zs::codec_id>(), std::optional<zs::codec_id>(zs::codec_id::raw)}) {
      auto options = small_frames(codec);
      options.frames_in = memory_kind::device;
      auto handle = zs::spill(device.view(), stream(), options);
      EXPECT_EQ(handle.frames_memory(), memory_kind::device);
      std::uint64_t const frame_bytes = handle.report().spilled_bytes;
      zs::column const back = zs::restore(handle, stream()).copy_to(memory_kind::host, stream());
      zs::test::expect_same_column(host, back);
      EXPECT_EQ(back.validity(), host.validity());
      fs::path const path = fs::temp_directory_path() / ("zs_spill_gpu_device_frames_" + std::to_string(::getpid()));
      auto const refused = zs::test::thrown_error([&] { zs::spill_to_file(handle, path); });
      ASSERT_TRUE(refused);
      EXPECT_EQ(refused->code(), zs::error_code::invalid_argument);
      EXPECT_NE(refused->message().find("move_to_host"), std::string::npos) << refused->message();
      zs::move_to_host(handle, stream());
      EXPECT_EQ(handle.frames_memory(), memory_kind::host);
      EXPECT_EQ(handle.report().spilled_bytes, frame_bytes) << "the same frames, moved";
      zs::column const again = zs::restore(handle, stream()).copy_to(memory_kind::host, stream());
      zs::test::expect_same_column(host, again);
      EXPECT_EQ(again.validity(), host.validity());
      zs::column const on_host = zs::restore(handle, memory_kind::host, stream());
      zs::test::expect_same_column(host, on_host);
    }
  }
  auto options = small_frames();
  options.frames_in = memory_kind::device;
  zs::column const host = sample_column(value_type::int32, 100);
  auto const e = zs::test::thrown_error([&] { (void)zs::spill(host.view(), stream(), options); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), zs::error_code::invalid_argument);
}

TEST_F(SpillGpu, NullableDeviceColumnsRoundTripWithTheirMask) {
  for (auto const type : all_types) {
    SCOPED_TRACE(type_name(type));
    zs::column host = sample_column(type, 5000);
    std::uint8_t* const mask = host.add_null_mask();
    for (std::uint64_t b = 0; b < zs::null_mask_bytes(host.size()); ++b) mask[b] = static_cast<std::uint8_t>(b * 37 + 1);
    zs::column const device = host.copy_to(memory_kind::device, stream());
    ASSERT_TRUE(device.nullable());
    for (auto const codec : {std::optional<zs::codec_id>(zs::codec_id::raw),
                             std::optional<zs::codec_id>(zs::default_codec(type).id()), std::optional<zs::codec_id>()}) {
      auto handle = zs::spill(device.view(), stream(), small_frames(codec));
      EXPECT_TRUE(handle.nullable());
      zs::column const back = zs::restore(handle, stream()).copy_to(memory_kind::host, stream());
      ASSERT_TRUE(back.nullable());
      EXPECT_EQ(back.validity(), host.validity());
      zs::test::expect_same_column(host, back);
      EXPECT_EQ(zs::restore(handle, memory_kind::host, stream()).validity(), host.validity());
    }
  }
}

// A preparation (codec and column parameters) taken from one spill serves the next piece of the
// column: the same codec without a choice, frames that restore to the new piece, the same
// preparation handed on; in device frames too, with a null mask beside; a preparation of another
// value type is refused.
TEST_F(SpillGpu, APreparationServesTheNextPieceOfTheColumn) {
  for (auto const type : {value_type::string, value_type::float64, value_type::int32}) {
    SCOPED_TRACE(type_name(type));
    zs::column const first = sample_column(type, 30000).copy_to(memory_kind::device, stream());
    auto options = small_frames();
    options.codec = type == value_type::string ? zs::codec_id::fsst : zs::default_codec(type).id();
    zs::spilled_column const made = zs::spill(first.view(), stream(), options);
    auto const prepared = made.preparation();
    ASSERT_NE(prepared, nullptr);
    for (auto const frames_in : {memory_kind::host, memory_kind::device}) {
      zs::column next = sample_column(type, 20011);
      std::uint8_t* const mask = next.add_null_mask();
      for (std::uint64_t b = 0; b < zs::null_mask_bytes(next.size()); ++b) mask[b] = static_cast<std::uint8_t>(b * 5 + 1);
      zs::column const device = next.copy_to(memory_kind::device, stream());
      auto taken = small_frames();
      taken.prepared = prepared;
      taken.frames_in = frames_in;
      zs::spilled_column handle = zs::spill(device.view(), stream(), taken);
      EXPECT_EQ(handle.report().codec, made.report().codec);
      EXPECT_FALSE(handle.report().forced);
      EXPECT_EQ(handle.report().estimated_ratio, 0.0) << "no estimate when a preparation is given";
      EXPECT_EQ(handle.preparation(), prepared);
      zs::column const back = zs::restore(handle, stream()).copy_to(memory_kind::host, stream());
      zs::test::expect_same_column(next, back);
      EXPECT_EQ(back.validity(), next.validity());
    }
  }
  zs::column const ints = sample_column(value_type::int32, 1000).copy_to(memory_kind::device, stream());
  zs::column const floats = sample_column(value_type::float32, 1000).copy_to(memory_kind::device, stream());
  auto options = small_frames(zs::default_codec(value_type::int32).id());
  auto const prepared = zs::spill(ints.view(), stream(), options).preparation();
  ASSERT_NE(prepared, nullptr);
  auto other = small_frames();
  other.prepared = prepared;
  auto const refused = zs::test::thrown_error([&] { zs::spill(floats.view(), stream(), other); });
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code(), zs::error_code::invalid_argument);
  EXPECT_NE(refused->message().find("prepared"), std::string::npos) << refused->message();
}

TEST_F(SpillGpu, PcieBandwidthIsMeasuredOnce) {
  double const first = zs::measured_pcie_bandwidth();
  EXPECT_GT(first, 1e9) << "a PCIe link moves more than 1 GB/s";
  EXPECT_EQ(zs::measured_pcie_bandwidth(), first);
}

}  // namespace
