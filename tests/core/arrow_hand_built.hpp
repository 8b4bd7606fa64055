// A struct array built by hand, as another producer would hand it over through the Arrow C Data
// Interface, for the Arrow interop tests (tests/core/arrow_test.cpp, tests/gpu/arrow_gpu_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "zs/arrow.hpp"
#include "zs/column.hpp"
#include "zs/memory.hpp"

namespace zs::test {

/// The test owns every buffer, in host or device memory (`memory`); each node's release callback
/// counts its calls, and the top-level ones also release the children not moved out, as the
/// specification requires, so a test can check that every node was released exactly once.
class hand_built {
 public:
  ArrowSchema schema{};
  ArrowArray array{};

  explicit hand_built(memory_kind memory = memory_kind::host) : memory_(memory) {}
  hand_built(const hand_built&) = delete;
  hand_built& operator=(const hand_built&) = delete;

  /// A buffer holding `values`, in the builder's memory.
  template <typename T>
  const void* keep(std::vector<T> values) {
    std::size_t const bytes = values.size() * sizeof(T);
    if (memory_ == memory_kind::device) {
      auto& buffer = device_storage_.emplace_back(bytes == 0 ? 1 : bytes, nullptr);
      if (bytes != 0) copy_async(buffer.data(), values.data(), bytes, nullptr);
      ZS_CUDA_TRY(cudaStreamSynchronize(nullptr));
      return buffer.data();
    }
    auto& buffer = host_storage_.emplace_back(bytes);
    if (bytes != 0) std::memcpy(buffer.data(), values.data(), bytes);
    return buffer.data();
  }
  /// A validity bitmap from "1" (valid) and "0" (null) characters, row 0 first.
  const void* bitmap(const std::string& bits) {
    std::vector<std::uint8_t> bytes((bits.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      if (bits[i] == '1') bytes[i / 8] = static_cast<std::uint8_t>(bytes[i / 8] | (1u << (i % 8)));
    }
    return keep(bytes);
  }

  /// A child column; returns its array to adjust (offset, null_count ...).
  ArrowArray& add(const char* name, const char* format, std::int64_t length, std::vector<const void*> buffers) {
    auto& b = buffer_lists_.emplace_back(std::move(buffers));
    ArrowSchema& s = child_schemas_.emplace_back();
    s.format = format;
    s.name = name;
    s.release = count_release<ArrowSchema>;
    s.private_data = &counters_.emplace_back(0);
    ArrowArray& a = child_arrays_.emplace_back();
    a.length = length;
    a.n_buffers = static_cast<std::int64_t>(b.size());
    a.buffers = b.data();
    a.release = count_release<ArrowArray>;
    a.private_data = &counters_.emplace_back(0);
    return a;
  }

  /// Fills the top-level struct of `length` rows over the children added so far.
  void finish(std::int64_t length) {
    for (auto& s : child_schemas_) schema_children_.push_back(&s);
    for (auto& a : child_arrays_) array_children_.push_back(&a);
    schema.format = "+s";
    schema.name = "";
    schema.n_children = static_cast<std::int64_t>(child_schemas_.size());
    schema.children = schema_children_.data();
    schema.release = release_top<ArrowSchema>;
    schema.private_data = &counters_.emplace_back(0);
    array.length = length;
    array.n_buffers = 1;
    array.buffers = top_buffers_;
    array.n_children = static_cast<std::int64_t>(child_arrays_.size());
    array.children = array_children_.data();
    array.release = release_top<ArrowArray>;
    array.private_data = &counters_.emplace_back(0);
  }

  /// `array` moved into an ArrowDeviceArray of `device_type` on `device_id` (the specification's
  /// move: `array` is marked released; its release callback travels with the copy).
  ArrowDeviceArray move_to_device_array(ArrowDeviceType device_type, std::int64_t device_id,
                                        void* sync_event = nullptr) {
    ArrowDeviceArray out{};
    out.array = array;
    array.release = nullptr;
    out.device_type = device_type;
    out.device_id = device_id;
    out.sync_event = sync_event;
    return out;
  }

  /// Checks that every node, top and children, was released exactly once.
  void expect_released_once() const {
    for (int const calls : counters_) EXPECT_EQ(calls, 1) << "a release callback ran " << calls << " times";
    EXPECT_EQ(schema.release, nullptr);
  }

 private:
  template <typename Node>
  static void count_release(Node* node) {
    ++*static_cast<int*>(node->private_data);
    node->release = nullptr;
  }
  template <typename Node>
  static void release_top(Node* node) {
    for (std::int64_t i = 0; i < node->n_children; ++i) {
      if (node->children[i]->release != nullptr) node->children[i]->release(node->children[i]);
    }
    count_release(node);
  }

  memory_kind memory_;
  std::deque<std::vector<std::byte>> host_storage_;
  std::deque<device_buffer> device_storage_;
  std::deque<std::vector<const void*>> buffer_lists_;
  std::deque<ArrowSchema> child_schemas_;
  std::deque<ArrowArray> child_arrays_;
  std::deque<int> counters_;
  std::vector<ArrowSchema*> schema_children_;
  std::vector<ArrowArray*> array_children_;
  const void* top_buffers_[1] = {nullptr};
};

}  // namespace zs::test
