// Device memory resources: a replacement serves every device allocation (buffers, columns, a
// codec batch's scratch), frees come back to it on the right stream, and a budget it enforces
// surfaces as out_of_memory.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs_test.hpp"

namespace {

// Counts what it hands out and refuses to go over a budget; the memory itself comes from the
// pool.
class counting_resource final : public zs::device_memory_resource {
 public:
  explicit counting_resource(std::size_t budget) : budget_(budget) {}
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    std::lock_guard<std::mutex> const hold(lock_);
    if (live_ + bytes > budget_) ZS_FAIL(zs::error_code::out_of_memory, "over the test's budget");
    void* p = zs::pool_memory_resource().allocate(bytes, stream);
    live_ += bytes;
    ++allocations;
    sizes_[p] = bytes;
    return p;
  }
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override {
    std::lock_guard<std::mutex> const hold(lock_);
    if (sizes_.count(p) == 0 || sizes_[p] != bytes) ++mismatched_frees;
    sizes_.erase(p);
    live_ -= bytes;
    zs::pool_memory_resource().deallocate(p, bytes, stream);
  }
  std::size_t live() {
    std::lock_guard<std::mutex> const hold(lock_);
    return live_;
  }
  int allocations = 0, mismatched_frees = 0;

 private:
  std::mutex lock_;
  std::size_t budget_, live_ = 0;
  std::map<void*, std::size_t> sizes_;
};

// Installs a resource on the current device for one test, and puts the previous one back.
class installed {
 public:
  explicit installed(zs::device_memory_resource* r) {
    ZS_CUDA_TRY(cudaGetDevice(&device_));
    previous_ = zs::set_device_resource(device_, r);
  }
  ~installed() { zs::set_device_resource(device_, previous_ == &zs::pool_memory_resource() ? nullptr : previous_); }

 private:
  int device_ = 0;
  zs::device_memory_resource* previous_ = nullptr;
};

TEST(DeviceMemoryResource, ServesEveryAllocationAndGetsEveryByteBack) {
  ZS_REQUIRE_GPU();
  counting_resource counting(std::size_t{1} << 30);
  {
    installed const use(&counting);
    zs::cuda_stream stream;
    std::vector<std::int64_t> values(100000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i * i % 977);
    zs::column const host = zs::column::from_values<std::int64_t>(values);
    {
      zs::column const device = host.copy_to(zs::memory_kind::device, stream);
      // A codec batch's buffers come from the same resource.
      auto const& codec = zs::get_codec(zs::codec_id::raw);
      std::vector<zs::encode_source> sources{{zs::value_type::int64, values.size(), device.view().data}};
      auto const layout = zs::layout_frames(codec, sources);
      zs::device_buffer frames(layout.back(), stream), sizes(8, stream);
      zs::device_buffer temp(codec.encode_temp_bytes(sources), stream);
      codec.encode_async({sources, frames.as<std::byte>(), layout, sizes.as<std::uint64_t>()}, temp.data(), temp.size(),
                         stream);
      stream.synchronize();
      EXPECT_GE(counting.allocations, 3);
      EXPECT_GT(counting.live(), values.size() * 8);
    }
    stream.synchronize();
    EXPECT_EQ(counting.live(), 0u);
  }
  EXPECT_EQ(counting.mismatched_frees, 0);
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  EXPECT_EQ(&zs::device_resource(device), &zs::pool_memory_resource()) << "the pool is back";
}

TEST(DeviceMemoryResource, ABudgetItRefusesIsOutOfMemory) {
  ZS_REQUIRE_GPU();
  counting_resource small(4096);
  installed const use(&small);
  zs::cuda_stream stream;
  auto const e = zs::test::thrown_error([&] { zs::column::allocate(zs::value_type::int32, 1 << 20, zs::memory_kind::device, stream); });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code(), zs::error_code::out_of_memory);
  EXPECT_EQ(small.live(), 0u);
}

// Setting and restoring needs no GPU: the slots are plain pointers.
TEST(DeviceMemoryResource, SetReturnsThePreviousAndNullRestoresThePool) {
  counting_resource counting(0);
  EXPECT_EQ(zs::set_device_resource(3, &counting), &zs::pool_memory_resource());
  EXPECT_EQ(&zs::device_resource(3), &counting);
  EXPECT_EQ(zs::set_device_resource(3, nullptr), &counting);
  EXPECT_EQ(&zs::device_resource(3), &zs::pool_memory_resource());
  EXPECT_EQ(zs::test::thrown_error([] { zs::set_device_resource(-1, nullptr); })->code(), zs::error_code::invalid_argument);
}

}  // namespace
