// Maps the blocks of one launch onto a batch of frames of different sizes.
//
// Each frame is cut into chunks of a fixed number of items; chunk_begin[f] is the index of the
// first chunk of frame f (a prefix sum, num_frames + 1 entries, computed on the host from sizes
// the host knows, such as capacities). Block b of the launch works on chunk
// b - chunk_begin[f] of the frame f with chunk_begin[f] <= b < chunk_begin[f + 1].
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zs/hd.hpp"

namespace zs::kernels {

/// chunk_begin for frames of items[f] items each, in chunks of chunk_items.
inline std::vector<std::uint64_t> chunk_prefix(std::span<const std::uint64_t> items,
                                               std::uint64_t chunk_items) {
  std::vector<std::uint64_t> begin(items.size() + 1, 0);
  for (std::size_t f = 0; f < items.size(); ++f) {
    begin[f + 1] = begin[f] + (items[f] + chunk_items - 1) / chunk_items;
  }
  return begin;
}

/// The frame that chunk `chunk` belongs to (binary search; frames without chunks are skipped).
ZS_HD inline std::size_t frame_of_chunk(const std::uint64_t* chunk_begin, std::size_t num_frames,
                                        std::uint64_t chunk) noexcept {
  std::size_t lo = 0;
  std::size_t hi = num_frames;  // invariant: chunk_begin[lo] <= chunk < chunk_begin[hi]
  while (hi - lo > 1) {
    std::size_t const mid = lo + (hi - lo) / 2;
    if (chunk_begin[mid] <= chunk) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace zs::kernels
