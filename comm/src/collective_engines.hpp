// What the compressed collectives (shuffle.cpp, column_collectives.cpp) share beneath their
// protocols: the primitives of their engines, the codec descriptors of a run of rows, and the
// way ranks agree on a failure.
//
//   host_ops    host memory and the CPU reference codecs; every call completes before it returns.
//   device_ops  device memory and the GPU codecs, all on the one stream it is made for. The
//               collectives use the caller's stream; the shuffle makes one per pipeline stage.
//               Its host waits go through the device communicator's synchronize, since the
//               stream may carry (or wait for) that communicator's traffic.
//
// Both offer the same calls, so a protocol written against one runs on the other. What moves the
// frames between ranks, and what orders the stages, stays with each collective's own engines.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/batch_ops.hpp"
#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/comm/agreement.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/error.hpp"
#include "zs/hash.hpp"
#include "zs/memory.hpp"

namespace zs::detail {

/// One encoded frame's move from the encoder's scratch to its place in a send buffer.
struct frame_copy {
  const std::byte* src;
  std::byte* dst;
  std::uint64_t bytes;
};

/// Device copies in one batched launch, ordered on `stream`: with many columns and ranks, one
/// copy launch per piece would cost more than the copies. The three lists (sources,
/// destinations, sizes) travel in one upload.
inline void copy_batch(std::span<const frame_copy> copies, cudaStream_t stream) {
  std::size_t const n = copies.size();
  if (n == 0) return;
  std::vector<std::uint64_t> lists(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    lists[i] = reinterpret_cast<std::uintptr_t>(copies[i].src);
    lists[n + i] = reinterpret_cast<std::uintptr_t>(copies[i].dst);
    lists[2 * n + i] = copies[i].bytes;
  }
  device_buffer d_lists(lists.size() * sizeof(std::uint64_t), stream);
  copy_async(d_lists.data(), lists.data(), lists.size() * sizeof(std::uint64_t), stream);
  device_buffer temp(kernels::copy_buffers_temp_bytes(n), stream);
  auto* const words = d_lists.as<std::uint64_t>();
  kernels::copy_buffers(reinterpret_cast<const void* const*>(words), reinterpret_cast<void* const*>(words + n),
                        words + 2 * n, n, temp.data(), temp.size(), stream);
}

/// Pieces of an all-to-all (device_communicator::send_piece or recv_piece) packed by peer into
/// one buffer: each peer's block after the blocks of the peers before it, its pieces in list
/// order. What a transport that moves one buffer per peer sends and receives.
struct packed_pieces {
  std::vector<std::uint64_t> counts;  // bytes per peer
  std::vector<std::uint64_t> at;      // where each piece starts in the packed buffer
  std::uint64_t total = 0;
};
template <typename Piece>
packed_pieces pack_by_peer(std::span<const Piece> pieces, std::size_t ranks) {
  packed_pieces out;
  out.counts.assign(ranks, 0);
  for (auto const& p : pieces) out.counts[static_cast<std::size_t>(p.peer)] += p.bytes;
  std::vector<std::uint64_t> next(ranks, 0);
  for (std::size_t q = 0; q < ranks; ++q) {
    next[q] = out.total;
    out.total += out.counts[q];
  }
  for (auto const& p : pieces) {
    out.at.push_back(next[static_cast<std::size_t>(p.peer)]);
    next[static_cast<std::size_t>(p.peer)] += p.bytes;
  }
  return out;
}

/// The bytes of a host_buffer or a device_buffer.
template <typename Buffer>
std::byte* bytes_of(Buffer& b) {
  return b.template as<std::byte>();
}

/// Rows [row, row + rows) of `v` as a codec source; `chars` is their character bytes (strings).
inline encode_source source_rows(const column_view& v, std::uint64_t row, std::uint64_t rows, std::uint64_t chars) {
  encode_source s{v.type, rows, nullptr};
  if (v.type == value_type::string) {
    s.values = v.data;
    s.offsets = v.offsets + row;
    s.chars_bytes = chars;
  } else {
    s.values = static_cast<const std::byte*>(v.data) + row * value_width(v.type);
    s.null_mask = v.null_mask;
    s.null_mask_bit = row;
  }
  return s;
}

/// Where a frame of `rows` rows (`chars` character bytes) decodes into `out`: from output row
/// `row` and, for strings, character `char_at` on.
inline decode_target target_rows(column& out, std::uint64_t row, std::uint64_t rows, std::uint64_t char_at,
                                 std::uint64_t chars) {
  auto const v = out.mutable_view();
  decode_target t{v.type, rows, nullptr};
  if (v.type == value_type::string) {
    t.values = v.data;
    t.offsets = v.offsets + row;
    t.chars_begin = char_at;
    t.chars_bytes = chars;
  } else {
    t.values = static_cast<std::byte*>(v.data) + row * value_width(v.type);
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Engine primitives

class host_ops {
 public:
  using buffer = host_buffer;
  static constexpr memory_kind memory = memory_kind::host;

  /// Never empty, so every buffer has an address to hand to a codec or communicator.
  static buffer allocate(std::uint64_t bytes) { return host_buffer(std::max<std::uint64_t>(bytes, 1)); }

  /// The first n values of type T in b (`what` names them for device_ops' timeout message).
  template <typename T>
  static std::vector<T> read_array(const buffer& b, std::size_t n, std::string_view /*what*/) {
    return {b.as<T>(), b.as<T>() + n};
  }

  static void prepare(const codec& c, const sample_batch& samples, std::byte* params,
                      std::span<const std::uint64_t> offsets) {
    c.prepare_host(samples, params, offsets);
  }
  static std::vector<codec_estimate> estimate(const codec& c, const sample_batch& samples) {
    return c.estimate_host(samples);
  }
  static void encode(const codec& c, std::span<const encode_source> sources, std::byte* frames,
                     std::span<const std::uint64_t> layout, std::uint64_t* frame_bytes) {
    c.encode_host({sources, frames, layout, frame_bytes});
  }
  static void decode(const codec& c, const std::byte* frames, std::span<const std::uint64_t> offsets,
                     std::span<const decode_target> targets, frame_status* status) {
    c.decode_host({frames, offsets, targets, status});
  }
  static void pack(std::span<const frame_copy> copies) {
    for (auto const& c : copies) std::memcpy(c.dst, c.src, c.bytes);
  }

  /// A column of its final size; a string column's first offset is set to 0, as decoders write
  /// only the offsets after each frame's first row.
  static column allocate_output(value_type type, std::uint64_t rows, std::uint64_t chars) {
    column c = column::allocate(type, rows, memory_kind::host, nullptr, chars);
    if (type == value_type::string) c.mutable_view().offsets[0] = 0;
    return c;
  }
};

class device_ops {
 public:
  using buffer = device_buffer;
  static constexpr memory_kind memory = memory_kind::device;

  device_ops(cudaStream_t stream, device_communicator& comm) : stream_(stream), comm_(&comm) {}

  cudaStream_t stream() const noexcept { return stream_; }
  /// Waits until this stream's work so far is done, bounded by the communicator's timeout;
  /// `what` names what the host waits for in the message when it passes.
  void synchronize(std::string_view what) const { comm_->synchronize(stream_, what); }

  /// From the pool, ordered on this stream; never empty (see host_ops::allocate).
  buffer allocate(std::uint64_t bytes) const { return device_buffer(std::max<std::uint64_t>(bytes, 1), stream_); }

  /// The first n values of type T in b, once this stream's work before the call is done.
  template <typename T>
  std::vector<T> read_array(const buffer& b, std::size_t n, std::string_view what) const {
    std::vector<T> out(n);
    if (n == 0) return out;
    copy_async(out.data(), b.data(), n * sizeof(T), stream_);
    synchronize(what);
    return out;
  }

  void prepare(const codec& c, const sample_batch& samples, std::byte* params,
               std::span<const std::uint64_t> offsets) const {
    c.prepare_async(samples, params, offsets, stream_);
  }
  /// Waits for this stream.
  std::vector<codec_estimate> estimate(const codec& c, const sample_batch& samples) const {
    return c.estimate(samples, stream_);
  }
  // The codecs' device scratch is freed on this stream after the batch that uses it.
  void encode(const codec& c, std::span<const encode_source> sources, std::byte* frames,
              std::span<const std::uint64_t> layout, std::uint64_t* frame_bytes) const {
    device_buffer temp(c.encode_temp_bytes(sources), stream_);
    c.encode_async({sources, frames, layout, frame_bytes}, temp.data(), temp.size(), stream_);
  }
  void decode(const codec& c, const std::byte* frames, std::span<const std::uint64_t> offsets,
              std::span<const decode_target> targets, frame_status* status) const {
    device_buffer temp(c.decode_temp_bytes(targets), stream_);
    c.decode_async({frames, offsets, targets, status}, temp.data(), temp.size(), stream_);
  }

  void pack(std::span<const frame_copy> copies) const { copy_batch(copies, stream_); }

  /// As host_ops::allocate_output, ordered on this stream.
  column allocate_output(value_type type, std::uint64_t rows, std::uint64_t chars) const {
    column c = column::allocate(type, rows, memory_kind::device, stream_, chars);
    if (type == value_type::string) {
      ZS_CUDA_TRY(cudaMemsetAsync(c.mutable_view().offsets, 0, sizeof(std::int64_t), stream_));
    }
    return c;
  }

 private:
  cudaStream_t stream_;
  device_communicator* comm_;
};

// Failures every rank agrees on (zs/comm/agreement.hpp), under the names the protocols use.
using failure = rank_failure;
using zs::agree;
using zs::attempt;

/// "column 2 (string)": how messages name a column.
inline std::string describe_column(std::size_t c, value_type type) {
  return "column " + std::to_string(c) + " (" + std::string(is_valid(type) ? to_string(type) : "invalid type") + ")";
}

/// The checks every compressed collective runs on a column it reads, before anything else:
/// throws invalid_argument naming the column (describe_column) and the problem. `data` false
/// checks the type only (a broadcast's receivers pass types, not data).
inline void check_column(std::size_t c, const column_view& v, memory_kind expected, bool data = true) {
  auto const fail = [&](const std::string& problem) {
    ZS_FAIL(error_code::invalid_argument, describe_column(c, v.type) + ": " + problem);
  };
  auto const name = [](memory_kind m) { return std::string(m == memory_kind::host ? "host" : "device"); };
  if (!is_valid(v.type)) fail("value type " + std::to_string(static_cast<int>(v.type)) + " is not one zshuffle knows");
  if (!data) return;
  if (v.memory != expected) fail("the column is in " + name(v.memory) + " memory, expected " + name(expected) + " memory");
  if (v.type == value_type::string && v.offsets == nullptr) fail("a string column without offsets");
  if (v.type != value_type::string && v.count > 0 && v.data == nullptr) fail(std::to_string(v.count) + " rows but no data");
}

/// The communicator's timeout for one call (options.timeout, when set), put back when the call
/// ends, however it ends.
class call_timeout {
 public:
  call_timeout(communicator& comm, std::optional<std::chrono::milliseconds> timeout)
      : comm_(comm), previous_(comm.timeout()) {
    if (timeout) comm_.set_timeout(*timeout);
  }
  ~call_timeout() { comm_.set_timeout(previous_); }
  call_timeout(const call_timeout&) = delete;
  call_timeout& operator=(const call_timeout&) = delete;

 private:
  communicator& comm_;
  std::chrono::milliseconds previous_;
};

/// Collective: every rank passes a description of what must be the same on every rank (column
/// count and types, codecs, options), written the same way on each. Costs one allgather of a
/// hash when all agree. Otherwise every rank throws invalid_argument listing the ranks whose
/// description differs from rank 0's, and both descriptions:
///   "shuffle: the ranks pass different columns or options: rank 0 passes <...>; rank 2 passes <...>"
inline void agree_on_shape(communicator& comm, std::string_view operation, const std::string& description) {
  auto const digest = hash::checksum(reinterpret_cast<const std::byte*>(description.data()), description.size());
  auto const digests = comm.allgather(digest);
  if (std::all_of(digests.begin(), digests.end(), [&](std::uint64_t d) { return d == digests[0]; })) return;

  // Rare: every rank learns every description (cut, so that no rank makes the others' message huge).
  constexpr std::size_t longest = 400;
  std::string const mine = description.substr(0, longest);
  auto const lengths = comm.allgather(mine.size());
  std::uint64_t total = 0;
  for (auto const n : lengths) total += n;
  std::string all(static_cast<std::size_t>(total), '\0');
  comm.allgatherv(std::as_bytes(std::span(mine.data(), mine.size())), std::as_writable_bytes(std::span(all)), lengths);

  constexpr int most_named = 4;
  std::string message = std::string(operation) + ": the ranks pass different columns or options: rank 0 passes " +
                        all.substr(0, static_cast<std::size_t>(lengths[0]));
  int named = 0, differing = 0;
  std::uint64_t at = lengths[0];
  for (std::size_t p = 1; p < digests.size(); at += lengths[p], ++p) {
    if (digests[p] == digests[0]) continue;
    if (++differing > most_named) continue;
    message += "; rank " + std::to_string(p) + " passes " +
               all.substr(static_cast<std::size_t>(at), static_cast<std::size_t>(lengths[p]));
    ++named;
  }
  if (differing > named) message += "; and " + std::to_string(differing - named) + " more rank(s) differ";
  ZS_FAIL(error_code::invalid_argument, message);
}

}  // namespace zs::detail
