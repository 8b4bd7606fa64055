// Launch tuning without a GPU: the grid policy on made-up device profiles, kernel specs, tuning
// tables (lookups, JSON round trips, rejection of bad files) and the process-wide table's search
// order and failure handling.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "prompt_io.hpp"
#include "shipped_tuning.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs/tuning.hpp"

namespace {

namespace fs = std::filesystem;
using zs::launch_params;
using zs::size_class;
using zs::value_type;

// An A100-like and an H100-like profile, as far as the policy reads them.
zs::device_profile made_up_device(const std::string& name, int sms, int major, int minor) {
  zs::device_profile d;
  d.name = name;
  d.sm_count = sms;
  d.compute_major = major;
  d.compute_minor = minor;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  return d;
}
zs::device_profile a100() { return made_up_device("Made-up A100-like", 108, 8, 0); }
zs::device_profile h100() { return made_up_device("Made-up H100-like", 132, 9, 0); }

// The registered spec of a kernel the library ships.
const zs::kernel_spec& spec(std::string_view name) { return zs::get_kernel_spec(name); }

zs::tuning_entry entry(const zs::device_profile& d, const std::string& kernel, std::optional<value_type> type,
                       size_class size, launch_params params) {
  return {{d.name, d.compute_major, d.compute_minor, kernel, type, size}, params};
}

// Sets (or unsets) environment variables for one test and puts the old values back.
class scoped_env {
 public:
  void set(const char* name, const std::optional<std::string>& value) {
    if (saved_.find(name) == saved_.end()) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    for (auto const& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
    zs::reload_tuning();
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// A fresh folder under the system's temp folder, removed afterwards.
class temp_dir {
 public:
  temp_dir() {
    path_ = fs::temp_directory_path() / ("zs_tuning_test_" + std::to_string(::getpid()) + "_" + std::to_string(count_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int count_ = 0;
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

int count_of(const std::string& text, const std::string& word) {
  int n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// --- kernels and params ------------------------------------------------------------------------

// The kernels the library and its codec families register, as tuning files name them.
const std::vector<std::string> shipped_kernels{"frame_ops",    "checksum",       "raw_offsets", "bitpack_analyze",
                                               "bitpack_pack", "bitpack_decode", "gather"};

TEST(KernelSpecs, EveryRegisteredNameRoundTripsThroughLookupAndSpecsHaveValidDefaults) {
  auto const specs = zs::kernel_specs();
  ASSERT_GE(specs.size(), shipped_kernels.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    zs::kernel_spec const& s = *specs[i];
    if (i > 0) {
      EXPECT_LT(specs[i - 1]->name, s.name) << "sorted by name, one spec a name";
    }
    EXPECT_EQ(zs::find_kernel_spec(s.name), &s) << s.name;
    EXPECT_EQ(&zs::get_kernel_spec(std::string(s.name)), &s) << "a lookup needs no static string";
    EXPECT_TRUE(zs::valid_params(s, s.defaults)) << s.name << ": " << zs::check_params(s, s.defaults);
    EXPECT_GT(s.defaults.waves, 0u) << s.name << ": defaults must size the grid from the device";
    EXPECT_FALSE(s.what.empty()) << s.name;
  }
  for (auto const& name : shipped_kernels) {
    const zs::kernel_spec* s = zs::find_kernel_spec(name);
    ASSERT_NE(s, nullptr) << name << " is registered";
    EXPECT_EQ(s->name, name);
  }
  EXPECT_EQ(zs::find_kernel_spec("no_such_kernel"), nullptr);
  EXPECT_EQ(zs::find_kernel_spec(""), nullptr);
}

TEST(KernelSpecs, TheSweptOnesAreTheOnesWorthMeasuring) {
  std::vector<std::string> swept;
  for (const zs::kernel_spec* s : zs::kernel_specs()) {
    if (s->swept) swept.emplace_back(s->name);
  }
  EXPECT_EQ(swept, (std::vector<std::string>{"alp_decode", "alp_encode", "bitpack_analyze", "bitpack_decode",
                                             "bitpack_pack", "checksum", "fsst_decode", "fsst_encode", "raw_offsets"}));
}

TEST(KernelSpecs, EverySweptSpecHasAWorkloadWhoseRegisteredCodecSupportsItsTypes) {
  std::vector<zs::value_type> const every_type{value_type::int32,   value_type::int64,   value_type::uint32,
                                                value_type::uint64,  value_type::float32, value_type::float64,
                                                value_type::string};
  for (const zs::kernel_spec* s : zs::kernel_specs()) {
    zs::tune_workload const& w = s->tune;
    if (!s->swept) {
      EXPECT_TRUE(w.codec.empty()) << s->name << ": not swept, so no workload";
      continue;
    }
    ASSERT_FALSE(w.codec.empty()) << s->name;
    const zs::codec& codec = zs::get_codec(w.codec);  // throws for a codec that is not registered
    if (w.types == zs::tuned_types::each) {
      EXPECT_TRUE(std::any_of(every_type.begin(), every_type.end(), [&](value_type t) { return codec.supports(t); }))
          << s->name << ": tuned per type through " << w.codec << ", which supports none";
    } else {
      EXPECT_TRUE(codec.supports(w.type)) << s->name << ": " << w.codec << " does not support "
                                          << zs::to_string(w.type);
    }
    zs::tune_outputs const& out = w.compares;
    EXPECT_TRUE(out.frames || out.headers || out.decoded_values || out.decoded_offsets)
        << s->name << ": a candidate's output must be compared with the defaults'";
  }
}

// What tune measured before the workloads moved into the specs: the same codec calls, types
// and compared outputs, so tables measured since mean the same.
TEST(KernelSpecs, TheShippedWorkloadsAreTheCodecCallsThatLaunchTheirKernels) {
  struct expected {
    std::string_view codec;
    zs::tune_calls calls;
    zs::tuned_types types;
    std::optional<value_type> type;  // for one and any
    zs::tune_outputs compares;
  };
  std::map<std::string, expected> const workloads{
      {"checksum",
       {"raw", zs::tune_calls::encode_and_decode, zs::tuned_types::any, value_type::int32, {.headers = true}}},
      {"raw_offsets",
       {"raw", zs::tune_calls::encode_and_decode, zs::tuned_types::one, value_type::string,
        {.headers = true, .decoded_offsets = true}}},
      {"bitpack_analyze", {"bitpack", zs::tune_calls::encode, zs::tuned_types::each, std::nullopt, {.frames = true}}},
      {"bitpack_pack", {"bitpack", zs::tune_calls::encode, zs::tuned_types::each, std::nullopt, {.frames = true}}},
      {"bitpack_decode",
       {"bitpack", zs::tune_calls::decode, zs::tuned_types::each, std::nullopt, {.decoded_values = true}}},
  };
  for (auto const& [name, want] : workloads) {
    zs::tune_workload const& w = spec(name).tune;
    EXPECT_EQ(w.codec, want.codec) << name;
    EXPECT_EQ(w.calls, want.calls) << name;
    EXPECT_EQ(w.types, want.types) << name;
    if (want.type) {
      EXPECT_EQ(w.type, *want.type) << name;
    }
    EXPECT_EQ(w.compares.frames, want.compares.frames) << name;
    EXPECT_EQ(w.compares.headers, want.compares.headers) << name;
    EXPECT_EQ(w.compares.decoded_values, want.compares.decoded_values) << name;
    EXPECT_EQ(w.compares.decoded_offsets, want.compares.decoded_offsets) << name;
  }
}

TEST(KernelSpecs, RegisteringASweptSpecWithoutAWorkloadOrAWorkloadItCannotCheckThrowsNamingIt) {
  static constexpr unsigned threads[] = {128, 256};
  auto refused = [](const zs::kernel_spec& s, std::string_view why) {
    try {
      (void)zs::register_kernel(s);
      ADD_FAILURE() << s.name << " was registered: " << why;
    } catch (const zs::error& e) {
      EXPECT_EQ(e.code(), zs::error_code::invalid_argument) << s.name;
      EXPECT_NE(std::string(e.what()).find(std::string(s.name)), std::string::npos) << e.what();
    }
    EXPECT_EQ(zs::find_kernel_spec(s.name), nullptr) << s.name;
  };
  zs::kernel_spec const base{.name = "", .defaults = {128, 4, 0}, .threads = threads, .items = {}, .max_waves = 64,
                             .swept = true, .tune = {}, .what = "a test kernel"};
  zs::kernel_spec no_workload = base;
  no_workload.name = "test_swept_without_workload";
  refused(no_workload, "swept, but tune would not know which codec call runs it");

  zs::kernel_spec compares_nothing = base;
  compares_nothing.name = "test_swept_comparing_nothing";
  compares_nothing.tune = {.codec = "raw", .calls = zs::tune_calls::encode};
  refused(compares_nothing, "a geometry that changed its output would go unnoticed");

  zs::kernel_spec decoded_without_decode = base;
  decoded_without_decode.name = "test_swept_decoded_without_decode";
  decoded_without_decode.tune = {.codec = "raw", .calls = zs::tune_calls::encode, .compares = {.decoded_values = true}};
  refused(decoded_without_decode, "its calls decode nothing to compare");

  zs::kernel_spec unswept_with_workload = base;
  unswept_with_workload.name = "test_unswept_with_workload";
  unswept_with_workload.swept = false;
  unswept_with_workload.tune = {.codec = "raw", .compares = {.headers = true}};
  refused(unswept_with_workload, "a workload that would never run");
}

TEST(KernelSpecs, AnUnknownNameIsRefusedNamingItAndTheRegisteredOnes) {
  try {
    (void)zs::get_kernel_spec("unregistered_decode");
    FAIL() << "no kernel is registered as unregistered_decode";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    std::string const what = e.what();
    EXPECT_NE(what.find("'unregistered_decode'"), std::string::npos) << what;
    EXPECT_NE(what.find("bitpack_decode"), std::string::npos) << "lists the registered ones: " << what;
  }
  EXPECT_NE(zs::check_params("unregistered_decode", {128, 4, 0}).find("'unregistered_decode'"), std::string::npos);
  EXPECT_FALSE(zs::valid_params("unregistered_decode", {128, 4, 0}));
}

TEST(KernelSpecs, RegisteringATakenNameThrowsNamingItAndChangesNothing) {
  auto const before = zs::kernel_specs();
  const zs::kernel_spec* const checksum = zs::find_kernel_spec("checksum");
  ASSERT_NE(checksum, nullptr);
  zs::kernel_spec clash = *checksum;
  clash.what = "a second checksum kernel";
  try {
    (void)zs::register_kernel(clash);
    FAIL() << "a second spec named checksum was registered";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'checksum'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(zs::kernel_specs(), before);
  EXPECT_EQ(zs::find_kernel_spec("checksum"), checksum) << "the first registration stays";
}

TEST(KernelSpecs, RegisteringASpecWithoutANameOrWithDefaultsItRefusesThrows) {
  static constexpr unsigned threads[] = {128, 256};
  zs::kernel_spec nameless{.name = "", .defaults = {128, 4, 0}, .threads = threads, .items = {}, .max_waves = 64,
                           .swept = false, .what = "no name"};
  EXPECT_THROW((void)zs::register_kernel(nameless), zs::error);
  zs::kernel_spec bad_defaults{.name = "test_bad_defaults", .defaults = {512, 4, 0}, .threads = threads,
                               .items = {}, .max_waves = 64, .swept = false, .what = "512 threads it refuses"};
  try {
    (void)zs::register_kernel(bad_defaults);
    FAIL() << "defaults outside the spec's block sizes were registered";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("test_bad_defaults"), std::string::npos) << e.what();
  }
  EXPECT_EQ(zs::find_kernel_spec("test_bad_defaults"), nullptr);
}

TEST(KernelSpecs, CheckParamsNamesWhatIsWrong) {
  EXPECT_NE(zs::check_params("checksum", {100, 4, 4096}).find("threads 100"), std::string::npos);
  EXPECT_NE(zs::check_params("checksum", {256, 4, 3000}).find("items 3000"), std::string::npos);
  EXPECT_NE(zs::check_params("bitpack_analyze", {64, 4, 16}).find("items must be 0"), std::string::npos);
  EXPECT_NE(zs::check_params("bitpack_decode", {128, 65, 8}).find("waves 65"), std::string::npos);
  EXPECT_NE(zs::check_params("bitpack_decode", {128, 4, 6}).find("items 6"), std::string::npos);
  EXPECT_TRUE(zs::valid_params("bitpack_decode", {256, 0, 8}));
  EXPECT_FALSE(zs::valid_params("bitpack_decode", {256, 0, 12}));
  EXPECT_NE(zs::check_params("bitpack_decode", {512, 4, 4}).find("threads 512"), std::string::npos);
  EXPECT_TRUE(zs::valid_params("raw_offsets", {1024, 64, 512}));
}

TEST(KernelSpecs, DefaultsFitTheDevicesLargestBlock) {
  zs::device_profile small_blocks = h100();
  small_blocks.max_threads_per_block = 128;
  for (const zs::kernel_spec* s : zs::kernel_specs()) {
    launch_params const p = zs::default_params(*s, small_blocks);
    EXPECT_LE(p.threads, 128u) << s->name;
    EXPECT_TRUE(zs::valid_params(*s, p)) << s->name;
  }
  // A device that runs every block size keeps the spec's defaults.
  EXPECT_EQ(zs::default_params(spec("checksum"), h100()), spec("checksum").defaults);
}

TEST(SizeClasses, BoundariesAndNames) {
  EXPECT_EQ(zs::size_class_of(0), size_class::small);
  EXPECT_EQ(zs::size_class_of(zs::small_batch_bytes - 1), size_class::small);
  EXPECT_EQ(zs::size_class_of(zs::small_batch_bytes), size_class::medium);
  EXPECT_EQ(zs::size_class_of(zs::medium_batch_bytes - 1), size_class::medium);
  EXPECT_EQ(zs::size_class_of(zs::medium_batch_bytes), size_class::large);
  for (auto c : {size_class::small, size_class::medium, size_class::large}) {
    EXPECT_EQ(zs::parse_size_class(zs::to_string(c)), c);
  }
  EXPECT_EQ(zs::parse_size_class("huge"), std::nullopt);
}

// --- the policy --------------------------------------------------------------------------------

TEST(LaunchPolicy, GridIsOccupancyTimesSmsTimesWavesOnEachDevice) {
  launch_params const p{256, 4, 0};
  std::uint64_t const work = 1'000'000;
  EXPECT_EQ(zs::launch_policy(a100(), p, 8, work).grid, 108u * 8 * 4);
  EXPECT_EQ(zs::launch_policy(h100(), p, 8, work).grid, 132u * 8 * 4);
  EXPECT_EQ(zs::launch_policy(h100(), p, 8, work).threads, 256u);
  EXPECT_EQ(zs::launch_policy(h100(), p, 8, work).blocks_per_sm, 8);
  // Occupancy and waves scale the cap.
  EXPECT_EQ(zs::launch_policy(h100(), p, 3, work).grid, 132u * 3 * 4);
  EXPECT_EQ(zs::launch_policy(h100(), {256, 1, 0}, 8, work).grid, 132u * 8);
}

TEST(LaunchPolicy, SmallWorkGetsOneBlockPerUnit) {
  EXPECT_EQ(zs::launch_policy(a100(), {128, 4, 0}, 16, 100).grid, 100u);
  EXPECT_EQ(zs::launch_policy(h100(), {128, 4, 0}, 16, 1).grid, 1u);
  EXPECT_EQ(zs::launch_policy(h100(), {128, 4, 0}, 16, 0).grid, 0u) << "no work, no launch";
}

TEST(LaunchPolicy, NoCapAndTheGridLimit) {
  EXPECT_EQ(zs::launch_policy(h100(), {128, 0, 0}, 16, 5'000'000).grid, 5'000'000u);
  EXPECT_EQ(zs::launch_policy(h100(), {128, 0, 0}, 16, std::uint64_t{1} << 40).grid, zs::max_grid_blocks);
  EXPECT_EQ(zs::launch_policy(h100(), {128, 64, 0}, 1 << 20, std::uint64_t{1} << 40).grid, zs::max_grid_blocks);
}

TEST(LaunchPolicy, AnOccupancyBelowOneCountsAsOne) {
  auto const g = zs::launch_policy(a100(), {256, 2, 0}, 0, 1'000'000);
  EXPECT_EQ(g.grid, 108u * 2);
  EXPECT_EQ(g.blocks_per_sm, 1);
  EXPECT_EQ(zs::launch_policy(a100(), {256, 2, 0}, -5, 1'000'000).grid, 108u * 2);
}

// --- tables ------------------------------------------------------------------------------------

TEST(TuningTable, SetReplacesTheEntryOfTheSameKeyAndRejectsBadParams) {
  zs::tuning_table t;
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {256, 4, 4096}));
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {512, 2, 8192}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.entries()[0].params, (launch_params{512, 2, 8192}));
  EXPECT_THROW(t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {100, 2, 8192})),
               zs::error);
  EXPECT_EQ(t.size(), 1u);
}

TEST(TuningTable, FindPrefersTheSameTypeThenTheSameWidthThenAnyType) {
  zs::tuning_table t;
  t.set(entry(h100(), "bitpack_decode", value_type::int32, size_class::large, {128, 4, 8}));
  t.set(entry(h100(), "bitpack_decode", std::nullopt, size_class::large, {256, 4, 4}));
  auto find = [&](std::optional<value_type> type) {
    return t.find(h100().name, 9, 0, "bitpack_decode", type, size_class::large);
  };
  ASSERT_NE(find(value_type::int32), nullptr);
  EXPECT_EQ(find(value_type::int32)->params.items, 8u);
  ASSERT_NE(find(value_type::uint32), nullptr);
  EXPECT_EQ(find(value_type::uint32)->params.items, 8u) << "uint32 takes the int32 entry (same width)";
  ASSERT_NE(find(value_type::int64), nullptr);
  EXPECT_EQ(find(value_type::int64)->params.items, 4u) << "int64 takes the entry for any type";
  ASSERT_NE(find(std::nullopt), nullptr);
  EXPECT_EQ(find(std::nullopt)->params.items, 4u);

  zs::tuning_table typed_only;
  typed_only.set(entry(h100(), "bitpack_decode", value_type::int32, size_class::large, {128, 4, 8}));
  EXPECT_EQ(typed_only.find(h100().name, 9, 0, "bitpack_decode", value_type::int64, size_class::large),
            nullptr);
  EXPECT_EQ(typed_only.find(h100().name, 9, 0, "bitpack_decode", value_type::float32, size_class::large),
            nullptr)
      << "a float is not an integer of the same width";
}

TEST(TuningTable, FindTakesTheNearestSizeClassAndTheLargerOnATie) {
  zs::tuning_table t;
  t.set(entry(h100(), "checksum", std::nullopt, size_class::small, {128, 4, 1024}));
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {512, 4, 16384}));
  auto items = [&](size_class c) {
    auto const* e = t.find(h100().name, 9, 0, "checksum", std::nullopt, c);
    return e ? e->params.items : 0u;
  };
  EXPECT_EQ(items(size_class::small), 1024u);
  EXPECT_EQ(items(size_class::medium), 16384u);
  EXPECT_EQ(items(size_class::large), 16384u);

  zs::tuning_table small_only;
  small_only.set(entry(h100(), "checksum", std::nullopt, size_class::small, {128, 4, 1024}));
  auto const* e = small_only.find(h100().name, 9, 0, "checksum", std::nullopt, size_class::large);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->params.items, 1024u);
}

TEST(TuningTable, FindIgnoresOtherDevicesCapabilitiesAndKernels) {
  zs::tuning_table t;
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {512, 4, 16384}));
  EXPECT_NE(t.find(h100().name, 9, 0, "checksum", std::nullopt, size_class::large), nullptr);
  EXPECT_EQ(t.find(a100().name, 8, 0, "checksum", std::nullopt, size_class::large), nullptr);
  EXPECT_EQ(t.find(h100().name, 9, 1, "checksum", std::nullopt, size_class::large), nullptr);
  EXPECT_EQ(t.find(h100().name, 9, 0, "raw_offsets", std::nullopt, size_class::large), nullptr);
}

TEST(ChooseLaunch, TakesAMatchingEntryElseTheDefaults) {
  zs::tuning_table t;
  t.set(entry(h100(), "bitpack_decode", value_type::int32, size_class::large, {256, 2, 8}));
  std::uint64_t const large = std::uint64_t{512} << 20;

  auto const tuned = zs::choose_launch(t, h100(), spec("bitpack_decode"), value_type::int32, large);
  EXPECT_TRUE(tuned.from_table);
  EXPECT_EQ(tuned.params, (launch_params{256, 2, 8}));
  EXPECT_EQ(tuned.size, size_class::large);
  EXPECT_EQ(tuned.batch_bytes, large);

  auto const other = zs::choose_launch(t, a100(), spec("bitpack_decode"), value_type::int32, large);
  EXPECT_FALSE(other.from_table) << "an unknown device runs with the defaults";
  EXPECT_EQ(other.params, zs::default_params(spec("bitpack_decode"), a100()));

  // The same entry for a device whose blocks are smaller than the entry's is passed over.
  zs::device_profile small_blocks = h100();
  small_blocks.max_threads_per_block = 128;
  auto const refused = zs::choose_launch(t, small_blocks, spec("bitpack_decode"), value_type::int32, large);
  EXPECT_FALSE(refused.from_table);
  EXPECT_EQ(refused.params, zs::default_params(spec("bitpack_decode"), small_blocks));
}

TEST(ChooseLaunch, TheSameTableGivesDifferentGridsOnDifferentDevices) {
  zs::tuning_table t;
  t.set(entry(a100(), "checksum", std::nullopt, size_class::large, {512, 8, 16384}));
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {256, 2, 4096}));
  std::uint64_t const bytes = std::uint64_t{1} << 30;
  auto const on_a = zs::choose_launch(t, a100(), spec("checksum"), std::nullopt, bytes);
  auto const on_h = zs::choose_launch(t, h100(), spec("checksum"), std::nullopt, bytes);
  EXPECT_NE(on_a.params, on_h.params);
  std::uint64_t const chunks_a = bytes / 8 / on_a.params.items, chunks_h = bytes / 8 / on_h.params.items;
  EXPECT_EQ(zs::launch_policy(a100(), on_a.params, 4, chunks_a).grid, 108u * 4 * 8);
  EXPECT_EQ(zs::launch_policy(h100(), on_h.params, 8, chunks_h).grid, 132u * 8 * 2);
}

zs::tuning_table sample_table() {
  zs::tuning_table t;
  t.set(entry(h100(), "checksum", std::nullopt, size_class::large, {512, 2, 16384}));
  t.set(entry(h100(), "raw_offsets", value_type::string, size_class::medium, {1024, 0, 8192}));
  t.set(entry(a100(), "bitpack_decode", value_type::uint64, size_class::small, {256, 16, 8}));
  zs::tuning_entry measured = entry(h100(), "bitpack_pack", value_type::int32, size_class::large, {128, 4, 0});
  measured.tuned_gbs = 1234.5;
  measured.default_gbs = 1100.25;
  t.set(measured);
  return t;
}

void expect_same(const zs::tuning_table& a, const zs::tuning_table& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.entries()[i].key, b.entries()[i].key) << "entry " << i;
    EXPECT_EQ(a.entries()[i].params, b.entries()[i].params) << "entry " << i;
    EXPECT_DOUBLE_EQ(a.entries()[i].tuned_gbs, b.entries()[i].tuned_gbs) << "entry " << i;
    EXPECT_DOUBLE_EQ(a.entries()[i].default_gbs, b.entries()[i].default_gbs) << "entry " << i;
  }
}

TEST(TuningTableJson, RoundTripsThroughTextAndFiles) {
  zs::tuning_table const t = sample_table();
  std::string const text = t.to_json();
  EXPECT_NE(text.find("\"schema\": \"zshuffle-tuning\""), std::string::npos);
  EXPECT_NE(text.find("\"compute_capability\": \"9.0\""), std::string::npos);
  EXPECT_NE(text.find("\"type\": \"any\""), std::string::npos);
  expect_same(zs::tuning_table::from_json(text), t);

  temp_dir dir;
  fs::path const path = dir.path() / "nested" / "folder" / "tuning.json";
  t.save(path);
  expect_same(zs::tuning_table::load(path), t);
  EXPECT_EQ(zs::tuning_table::load(path).to_json(), text) << "saving is deterministic";
  // Nothing but the table is left behind.
  int files = 0;
  for (auto const& f : fs::directory_iterator(path.parent_path())) files += f.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
}

TEST(TuningTableJson, MergeLetsTheOtherTableWin) {
  zs::tuning_table base = sample_table();
  zs::tuning_table over;
  over.set(entry(h100(), "checksum", std::nullopt, size_class::large, {128, 1, 1024}));
  over.set(entry(h100(), "gather", value_type::int64, size_class::small, {1024, 1, 0}));
  base.merge(over);
  EXPECT_EQ(base.size(), sample_table().size() + 1);
  auto const* e = base.find(h100().name, 9, 0, "checksum", std::nullopt, size_class::large);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->params, (launch_params{128, 1, 1024}));
}

// A valid document with `entry_json` as its only entry.
std::string one_entry(const std::string& entry_json) {
  return R"({"schema": "zshuffle-tuning", "version": 1, "entries": [)" + entry_json + "]}";
}
std::string good_entry(const std::string& replace_from = "", const std::string& replace_to = "") {
  std::string e =
      R"({"device": "NVIDIA H200", "compute_capability": "9.0", "kernel": "bitpack_decode", "type": "int32",)"
      R"( "size_class": "large", "params": {"threads": 128, "waves": 4, "items": 8}})";
  if (!replace_from.empty()) {
    auto const at = e.find(replace_from);
    EXPECT_NE(at, std::string::npos) << replace_from;
    if (at != std::string::npos) e.replace(at, replace_from.size(), replace_to);
  }
  return e;
}

void expect_rejected(const std::string& text, const std::string& reason) {
  SCOPED_TRACE(text);
  try {
    zs::tuning_table::from_json(text);
    ADD_FAILURE() << "accepted a table that is " << reason;
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(TuningTableJson, AcceptsTheGoodEntryUsedBelow) {
  auto const t = zs::tuning_table::from_json(one_entry(good_entry()));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.entries()[0].key.device, "NVIDIA H200");
  EXPECT_EQ(t.entries()[0].params, (launch_params{128, 4, 8}));
  // Unknown extra keys are allowed at both levels.
  EXPECT_EQ(zs::tuning_table::from_json(R"({"schema": "zshuffle-tuning", "version": 1, "note": "x", "entries": [)" +
                                        good_entry("\"size_class\"", "\"comment\": \"y\", \"size_class\"") + "]}")
                .size(),
            1u);
}

TEST(TuningTableJson, RejectsCorruptTruncatedAndForeignDocuments) {
  std::string const good = one_entry(good_entry());
  expect_rejected("this is not json", "not JSON");
  expect_rejected(good.substr(0, good.size() / 2), "not JSON");
  expect_rejected("", "not JSON");
  expect_rejected("[1, 2, 3]", "not a JSON object");
  expect_rejected(R"({"schema": "something-else", "version": 1, "entries": []})", "\"schema\"");
  expect_rejected(R"({"version": 1, "entries": []})", "\"schema\"");
  expect_rejected(R"({"schema": "zshuffle-tuning", "version": 2, "entries": []})", "version 2");
  expect_rejected(R"({"schema": "zshuffle-tuning", "version": "1", "entries": []})", "version");
  expect_rejected(R"({"schema": "zshuffle-tuning", "version": 1})", "\"entries\"");
  expect_rejected(R"({"schema": "zshuffle-tuning", "version": 1, "entries": {}})", "\"entries\"");
}

TEST(TuningTableJson, RejectsEntriesOfTheWrongSchema) {
  expect_rejected(one_entry("42"), "entry 0 is not an object");
  expect_rejected(one_entry(good_entry("\"device\": \"NVIDIA H200\", ", "")), "no \"device\"");
  expect_rejected(one_entry(good_entry("\"NVIDIA H200\"", "\"\"")), "empty device");
  expect_rejected(one_entry(good_entry("\"9.0\"", "\"9\"")), "MAJOR.MINOR");
  expect_rejected(one_entry(good_entry("\"9.0\"", "9.0")), "not a string");
  expect_rejected(one_entry(good_entry("bitpack_decode", "warp_drive")), "unknown kernel");
  expect_rejected(one_entry(good_entry("\"int32\"", "\"int256\"")), "unknown type");
  expect_rejected(one_entry(good_entry("\"large\"", "\"huge\"")), "unknown size class");
  expect_rejected(one_entry(good_entry("\"threads\": 128", "\"threads\": 100")), "threads 100");
  expect_rejected(one_entry(good_entry("\"threads\": 128", "\"threads\": -128")), "whole number");
  expect_rejected(one_entry(good_entry("\"threads\": 128", "\"threads\": \"128\"")), "whole number");
  expect_rejected(one_entry(good_entry("\"items\": 8", "\"items\": 6")), "items 6");
  expect_rejected(one_entry(good_entry(", \"items\": 8", "")), "no \"items\"");
  expect_rejected(one_entry(good_entry("\"waves\": 4", "\"waves\": 1000")), "waves 1000");
  expect_rejected(one_entry(good_entry("}}", "}, \"tuned_gbs\": -1}")), "tuned_gbs");
  expect_rejected(one_entry(good_entry() + ", " + good_entry()), "repeats the key");
}

TEST(TuningTableJson, AnEntryForAKernelNoSpecIsRegisteredAsIsRefusedNamingIt) {
  expect_rejected(one_entry(good_entry("bitpack_decode", "unregistered_decode")), "unknown kernel \"unregistered_decode\"");
  // Names match exactly: a registered name in another case or with a space is another name.
  expect_rejected(one_entry(good_entry("bitpack_decode", "Bitpack_decode")), "unknown kernel \"Bitpack_decode\"");
  expect_rejected(one_entry(good_entry("bitpack_decode", "bitpack_decode ")), "unknown kernel \"bitpack_decode \"");
  // After a good entry too, naming the entry.
  expect_rejected(one_entry(good_entry() + ", " + good_entry("bitpack_decode", "gpu_for_decode")),
                  "entry 1: unknown kernel \"gpu_for_decode\"");
  // Built by hand rather than read, the table refuses it as well.
  zs::tuning_table t;
  try {
    t.set(entry(h100(), "unregistered_decode", value_type::int32, size_class::large, {128, 4, 0}));
    FAIL() << "an entry for an unregistered kernel was set";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'unregistered_decode'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(t.empty());
}

TEST(TuningTableJson, LoadNamesTheFileAndFailsOnAMissingOne) {
  temp_dir dir;
  try {
    zs::tuning_table::load(dir.path() / "absent.json");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::io_error);
  }
  write_file(dir.path() / "bad.json", "{\"schema\": \"zshuffle-tuning\", \"vers");
  try {
    zs::tuning_table::load(dir.path() / "bad.json");
    ADD_FAILURE() << "loaded a truncated file";
  } catch (const zs::error& e) {
    EXPECT_EQ(e.code(), zs::error_code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

// A table of `n` entries with distinct keys (n prime to 7919), in an order far from sorted, with
// the key of entry 0 again at the end when `repeat_first`.
std::string many_entries(std::size_t n, bool repeat_first = false) {
  std::string text = R"({"schema": "zshuffle-tuning", "version": 1, "entries": [)";
  auto const add = [&](std::size_t i) {
    // Entry i gets key number j = 7919 i mod n: device j / 21, kernel j mod 7, size class
    // j / 7 mod 3, and the items that kernel takes.
    text += R"({"device":"D)" + std::to_string((i * 7919) % n / 21) + R"(","compute_capability":"9.0","kernel":")" +
            shipped_kernels[(i * 7919) % n % 7] +
            R"(","type":"any","size_class":")" +
            std::string(zs::to_string(static_cast<size_class>((i * 7919) % n / 7 % 3))) +
            R"(","params":{"threads":256,"waves":4,"items":)" +
            ((i * 7919) % n % 7 == 1 ? "4096" : (i * 7919) % n % 7 == 2 ? "2048" : (i * 7919) % n % 7 == 5 ? "4" : "0") +
            "}},";
  };
  for (std::size_t i = 0; i < n; ++i) add(i);
  if (repeat_first) add(0);
  text.back() = ']';
  return text + "}";
}

// The processor time this thread has used, so that a machine busy with other work does not
// fail a test of how much work a call does.
double thread_seconds() {
  timespec t{};
  EXPECT_EQ(::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t), 0);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Keys were checked against every earlier entry: a file of 200k entries took 114 s of processor
// time. In one pass it takes about 1 s here; the bound is far from both, so that a sanitizer
// build or a slow machine does not fail it while the quadratic check still would.
TEST(TuningTableJson, ParsesTwoHundredThousandEntriesWithoutAQuadraticKeyCheck) {
  std::size_t const n = 200000;
  std::string const text = many_entries(n);
  double const start = thread_seconds();
  auto const table = zs::tuning_table::from_json(text);
  double const seconds = thread_seconds() - start;
  EXPECT_EQ(table.size(), n);
  EXPECT_LT(seconds, 20.0);
  EXPECT_TRUE(std::is_sorted(table.entries().begin(), table.entries().end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
  // A repeated key is still found, and both entries are named.
  expect_rejected(many_entries(n, true), "entry 200000 repeats the key of entry 0");
}

TEST(TuningTableJson, MergingABigTableKeepsKeyOrderAndLetsTheOtherWin) {
  auto big = zs::tuning_table::from_json(many_entries(5000));
  zs::tuning_table over;
  auto changed = big.entries()[1234];
  changed.params.waves = 9;
  over.set(changed);
  over.set(entry(h100(), "gather", std::nullopt, size_class::small, {512, 2, 0}));
  std::size_t const before = big.size();
  big.merge(over);
  EXPECT_EQ(big.size(), before + 1);
  EXPECT_EQ(big.entries()[1234].params.waves, 9u);
  EXPECT_TRUE(std::is_sorted(big.entries().begin(), big.entries().end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
}

// A tuning file that is not a regular file is refused at once: a FIFO used to block for ever,
// /dev/zero to be read until memory ran out, and a directory was said to be "not JSON".
TEST(TuningTableFile, LoadRefusesFifosDirectoriesAndDevicesAtOnce) {
  temp_dir dir;
  fs::path const fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  zs::test::expect_io_error_within_seconds(5, fifo, [&] { zs::tuning_table::load(fifo); }, "is a FIFO");
  zs::test::expect_io_error_within_seconds(5, {}, [&] { zs::tuning_table::load(dir.path()); }, "is a directory");
  if (fs::exists("/dev/zero")) {
    zs::test::expect_io_error_within_seconds(5, {}, [&] { zs::tuning_table::load("/dev/zero"); },
                                             "is a character device");
  }
}

TEST(TuningTableFile, LoadRefusesAFileOver16MiBNamingTheLimit) {
  temp_dir dir;
  fs::path const big = dir.path() / "big.json";
  write_file(big, "");
  fs::resize_file(big, (std::uint64_t{16} << 20) + 1);  // sparse: costs no disk
  zs::test::expect_io_error_within_seconds(5, {}, [&] { zs::tuning_table::load(big); }, "16 MiB");
}

// --- shipped tables ----------------------------------------------------------------------------

TEST(ShippedTuning, EveryShippedTableParsesAndNamesItsDevice) {
  ASSERT_FALSE(zs::detail::shipped_table_texts().empty()) << "the tuning/ tables are compiled in";
  std::size_t entries = 0;
  for (auto const& t : zs::detail::shipped_table_texts()) {
    SCOPED_TRACE(std::string(t.file));
    zs::tuning_table table;
    ASSERT_NO_THROW(table = zs::tuning_table::from_json(t.json));
    entries += table.size();
    // nvidia-h200.json holds H200 entries only, and so on.
    std::string model(t.file.substr(0, t.file.find('.')));
    if (model.rfind("nvidia-", 0) == 0) model = model.substr(7);
    for (char& c : model) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (auto const& e : table.entries()) EXPECT_NE(e.key.device.find(model), std::string::npos) << e.key.device;
  }
  EXPECT_EQ(zs::shipped_tuning().size(), entries) << "shipped tables do not share keys";
}

// --- the process-wide table --------------------------------------------------------------------

TEST(TuningFilePath, SearchOrderIsVariableThenXdgCacheThenHome) {
  scoped_env env;
  env.set("ZS_TUNING_FILE", "/some/where/table.json");
  env.set("XDG_CACHE_HOME", "/xdg/cache");
  env.set("HOME", "/home/someone");
  EXPECT_EQ(zs::tuning_file_path(), fs::path("/some/where/table.json"));
  env.set("ZS_TUNING_FILE", std::nullopt);
  EXPECT_EQ(zs::tuning_file_path(), fs::path("/xdg/cache/zshuffle/tuning.json"));
  env.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(zs::tuning_file_path(), fs::path("/home/someone/.cache/zshuffle/tuning.json"));
  env.set("HOME", std::nullopt);
  EXPECT_EQ(zs::tuning_file_path(), std::nullopt);
}

// Reloads the process-wide table under `env` and returns what it printed to stderr.
std::string reload_and_capture_stderr() {
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(zs::reload_tuning());
  EXPECT_NO_THROW(zs::tuning());
  return testing::internal::GetCapturedStderr();
}

TEST(ProcessTuning, ACorruptFileCostsOneWarningAndLeavesTheShippedTables) {
  temp_dir dir;
  scoped_env env;
  env.set("ZS_TUNING", std::nullopt);
  for (std::string const& text : {std::string("{ not json"), one_entry(good_entry()).substr(0, 40),
                                 std::string(R"({"schema": "zshuffle-tuning", "version": 99, "entries": []})"),
                                 std::string(R"({"schema": "other", "version": 1, "entries": []})"),
                                 one_entry(good_entry("\"threads\": 128", "\"threads\": 3"))}) {
    SCOPED_TRACE(text);
    write_file(dir.path() / "tuning.json", text);
    env.set("ZS_TUNING_FILE", (dir.path() / "tuning.json").string());
    std::string const err = reload_and_capture_stderr();
    EXPECT_EQ(count_of(err, "warning"), 1) << err;
    EXPECT_NE(err.find("tuning.json"), std::string::npos) << err;
    EXPECT_EQ(zs::tuning()->to_json(), zs::shipped_tuning().to_json());
  }
}

TEST(ProcessTuning, AMissingNamedFileWarnsOnceAndAMissingCacheFileIsSilent) {
  temp_dir dir;
  scoped_env env;
  env.set("ZS_TUNING", std::nullopt);
  env.set("ZS_TUNING_FILE", (dir.path() / "absent.json").string());
  std::string err = reload_and_capture_stderr();
  EXPECT_EQ(count_of(err, "warning"), 1) << err;
  EXPECT_EQ(zs::tuning()->to_json(), zs::shipped_tuning().to_json());

  env.set("ZS_TUNING_FILE", std::nullopt);
  env.set("XDG_CACHE_HOME", dir.path().string());
  err = reload_and_capture_stderr();
  EXPECT_EQ(err, "") << "no tuning file yet is the normal case";
  EXPECT_EQ(zs::tuning()->to_json(), zs::shipped_tuning().to_json());
}

TEST(ProcessTuning, TheUsersFileIsMergedOverTheShippedTables) {
  temp_dir dir;
  scoped_env env;
  env.set("ZS_TUNING", std::nullopt);
  env.set("ZS_TUNING_FILE", std::nullopt);
  env.set("XDG_CACHE_HOME", dir.path().string());
  zs::tuning_table const mine = sample_table();
  mine.save(dir.path() / "zshuffle" / "tuning.json");
  std::string const err = reload_and_capture_stderr();
  EXPECT_EQ(err, "");
  zs::tuning_table expected = zs::shipped_tuning();
  expected.merge(mine);
  EXPECT_EQ(zs::tuning()->to_json(), expected.to_json());
  auto const choice = zs::choose_launch(*zs::tuning(), h100(), spec("checksum"), std::nullopt, std::uint64_t{1} << 30);
  EXPECT_TRUE(choice.from_table);
  EXPECT_EQ(choice.params, (launch_params{512, 2, 16384}));
}

TEST(ProcessTuning, TuningOffMeansDefaultsEverywhere) {
  temp_dir dir;
  scoped_env env;
  sample_table().save(dir.path() / "t.json");
  env.set("ZS_TUNING_FILE", (dir.path() / "t.json").string());
  env.set("ZS_TUNING", "off");
  EXPECT_EQ(reload_and_capture_stderr(), "");
  EXPECT_TRUE(zs::tuning()->empty());
}

TEST(ProcessTuning, SetTuningReplacesTheTableForLaterLookups) {
  scoped_env env;  // reloads the environment's table afterwards
  zs::set_tuning({});
  auto const before = zs::tuning();
  zs::set_tuning(sample_table());
  EXPECT_EQ(zs::tuning()->to_json(), sample_table().to_json());
  EXPECT_TRUE(before->empty()) << "holders of the old table keep it as it was";
}

// Whatever the user's file is, the process keeps the shipped tables and warns once.
TEST(ProcessTuning, AFileThatIsNotARegularFileCostsOneWarningAndLeavesTheShippedTables) {
  temp_dir dir;
  scoped_env env;
  env.set("ZS_TUNING", std::nullopt);
  fs::path const fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<fs::path> paths{fifo, dir.path()};
  if (fs::exists("/dev/zero")) paths.emplace_back("/dev/zero");
  for (auto const& path : paths) {
    SCOPED_TRACE(path.string());
    env.set("ZS_TUNING_FILE", path.string());
    auto reloaded = std::async(std::launch::async, [] { return reload_and_capture_stderr(); });
    if (reloaded.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << "still loading after 5 s";
      int const fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets a blocked open end
      if (fd >= 0) ::close(fd);
    }
    std::string const err = reloaded.get();
    EXPECT_EQ(count_of(err, "warning"), 1) << err;
    EXPECT_NE(err.find(path.string()), std::string::npos) << err;
    EXPECT_EQ(zs::tuning()->to_json(), zs::shipped_tuning().to_json());
  }
}

// Running out of memory on the user's file used to drop the shipped tables as well.
TEST(ProcessTuning, RunningOutOfMemoryOnTheUsersFileLeavesTheShippedTables) {
  temp_dir dir;
  scoped_env env;
  env.set("ZS_TUNING", std::nullopt);
  sample_table().save(dir.path() / "t.json");
  env.set("ZS_TUNING_FILE", (dir.path() / "t.json").string());
  env.set("ZS_FAULT", "tuning.user_file=oom");
  std::string const err = reload_and_capture_stderr();
  EXPECT_EQ(count_of(err, "warning"), 1) << err;
  EXPECT_NE(err.find("t.json"), std::string::npos) << err;
  ASSERT_FALSE(zs::shipped_tuning().empty());
  EXPECT_EQ(zs::tuning()->to_json(), zs::shipped_tuning().to_json());
}

// --- observing launches ------------------------------------------------------------------------

class counting_observer final : public zs::launch_observer {
 public:
  void before_launch(const zs::launch_record&, cudaStream_t) override { ++before; }
  void after_launch(const zs::launch_record&, cudaStream_t) override { ++after; }
  int before = 0, after = 0;
};

TEST(LaunchObserver, ScopedInstallationPutsThePreviousOneBack) {
  counting_observer outer, inner;
  EXPECT_EQ(zs::current_launch_observer(), nullptr);
  {
    zs::scoped_launch_observer const a(outer);
    EXPECT_EQ(zs::current_launch_observer(), &outer);
    {
      zs::scoped_launch_observer const b(inner);
      EXPECT_EQ(zs::current_launch_observer(), &inner);
    }
    EXPECT_EQ(zs::current_launch_observer(), &outer);
  }
  EXPECT_EQ(zs::current_launch_observer(), nullptr);
}

TEST(LaunchRecord, DescribeSaysKernelShapeAndSource) {
  zs::launch_record r;
  r.choice = zs::choose_launch(sample_table(), h100(), spec("checksum"), std::nullopt, std::uint64_t{1} << 30);
  r.geometry = zs::launch_policy(h100(), r.choice.params, 4, 100000);
  r.work_units = 100000;
  std::string const s = zs::describe(r);
  EXPECT_NE(s.find("checksum any/large"), std::string::npos) << s;
  EXPECT_NE(s.find("512 threads x 1056 blocks"), std::string::npos) << s;
  EXPECT_NE(s.find("2 waves of 4/SM"), std::string::npos) << s;
  EXPECT_NE(s.find("16384 items"), std::string::npos) << s;
  EXPECT_NE(s.find("table"), std::string::npos) << s;
  r.choice = zs::choose_launch(zs::tuning_table{}, a100(), spec("bitpack_pack"), value_type::int64, 1000);
  EXPECT_NE(zs::describe(r).find("bitpack_pack int64/small"), std::string::npos) << zs::describe(r);
  EXPECT_NE(zs::describe(r).find("default"), std::string::npos) << zs::describe(r);
  EXPECT_EQ(zs::describe(r).find("items"), std::string::npos) << "bitpack_pack has no items knob";
}

}  // namespace
