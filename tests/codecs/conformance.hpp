// The codec conformance harness: what every registered codec must do, on the CPU and on the GPU,
// for every value type it encodes. tests/codecs/conformance_test.cpp runs it over
// zs::all_codecs(), so a new codec gets the whole suite by registering itself.
//
// The pieces, in the order a test uses them:
//   test_column     host values of one column and how they are cut into frames;
//   staged_batch    columns in the memory of the side that runs (and on the host), as encode
//                   sources, one frame per piece;
//   encode          layout_frames, column parameters (layout_params, prepare_host or
//                   prepare_async, encode_source::params) and encode_host or encode_async;
//   frame_set       frames to decode, each with exactly the bytes it may read: whole batches,
//                   or cut and corrupted copies of frames;
//   decode          decode_host or decode_async into targets that sit between guard bytes
//                   (and, on the CPU, frames that end right before a page no one may touch);
//   decoded_as      whether a frame decoded to exactly the values it was encoded from.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "guarded_bytes.hpp"
#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/frame.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"

namespace zs::test::conformance {

// --- the cases ---------------------------------------------------------------------------------

enum class side : std::uint8_t { cpu, gpu };

inline std::string_view to_string(side where) noexcept { return where == side::cpu ? "cpu" : "gpu"; }

/// One instance of the suite: a codec, the side that runs it, and one value type it encodes.
struct suite_case {
  const codec* under_test = nullptr;
  side where = side::cpu;
  value_type type = value_type::int32;
};

inline constexpr value_type every_value_type[] = {
    value_type::int8,    value_type::int16,   value_type::uint8,   value_type::uint16, value_type::int32,
    value_type::int64,   value_type::uint32,  value_type::uint64,  value_type::float32, value_type::float64,
    value_type::string,  value_type::bool8,   value_type::int128};

/// Every registered codec, on each side, for each type it supports().
inline std::vector<suite_case> all_cases() {
  std::vector<suite_case> cases;
  for (const codec* c : all_codecs()) {
    for (side where : {side::cpu, side::gpu}) {
      for (value_type type : every_value_type) {
        if (c->supports(type)) cases.push_back({c, where, type});
      }
    }
  }
  return cases;
}

/// "bitpack_gpu_int64": the codec's name (letters, digits and underscores), the side, the type.
inline std::string case_name(const suite_case& c) {
  std::string name;
  for (char ch : c.under_test->name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name + "_" + std::string(to_string(c.where)) + "_" + std::string(zs::to_string(c.type));
}

// --- columns and how they are cut ---------------------------------------------------------------

/// One column of a batch: host values, and the rows of each of its frames (they add up to its
/// size).
struct test_column {
  std::string name;
  column values;
  std::vector<std::uint64_t> frame_rows;
};

/// Several frames of uneven sizes: a few short ones (empty included, and lengths on both sides of
/// the block sizes codecs use), then the rest as 40%, 10%, 30% and the remainder.
inline std::vector<std::uint64_t> uneven_frames(std::uint64_t rows) {
  std::vector<std::uint64_t> cuts;
  std::uint64_t left = rows;
  auto take = [&](std::uint64_t n) {
    n = std::min(n, left);
    cuts.push_back(n);
    left -= n;
  };
  for (std::uint64_t n : {1, 0, 3, 127, 129, 513, 4099}) take(n);
  std::uint64_t const rest = left;
  take(rest * 4 / 10);
  take(rest / 10);
  take(rest * 3 / 10);
  take(left);
  return cuts;
}

/// Three frames of uneven sizes: 5/8, 1/8 and the rest.
inline std::vector<std::uint64_t> three_uneven_frames(std::uint64_t rows) {
  return {rows * 5 / 8, rows / 8, rows - rows * 5 / 8 - rows / 8};
}

/// Rows [begin, begin + rows) of a host column (fewer where it ends), as a column of their own.
inline column slice(const column& c, std::uint64_t begin, std::uint64_t rows) {
  column_view const v = c.view();
  begin = std::min(begin, v.count);
  std::uint64_t const n = std::min(rows, v.count - begin);
  if (v.type != value_type::string) {
    std::size_t const width = value_width(v.type);
    column out = column::allocate(v.type, n, memory_kind::host);
    if (n != 0) std::memcpy(out.mutable_view().data, static_cast<const std::byte*>(v.data) + begin * width, n * width);
    return out;
  }
  auto const chars = static_cast<std::uint64_t>(v.offsets[begin + n] - v.offsets[begin]);
  column out = column::allocate(v.type, n, memory_kind::host, nullptr, chars);
  auto o = out.mutable_view();
  if (chars != 0) std::memcpy(o.data, static_cast<const char*>(v.data) + v.offsets[begin], chars);
  for (std::uint64_t i = 0; i <= n; ++i) o.offsets[i] = v.offsets[begin + i] - v.offsets[begin];
  return out;
}

/// The first `rows` rows of a host column, as a column of their own.
inline column head(const column& c, std::uint64_t rows) { return slice(c, 0, rows); }

/// A copy of a host column.
inline column copy_of(const column& c) { return c.copy_to(memory_kind::host, nullptr); }

// --- a batch of columns on the side that runs -------------------------------------------------------

/// The columns of one batch, on the host and, for the GPU side, in device memory, described as
/// encode sources: frame f encodes piece f, and column c's frames are
/// [piece_begin[c], piece_begin[c + 1]), its sample for column parameters.
class staged_batch {
 public:
  staged_batch(std::vector<test_column> columns, side where, cudaStream_t stream)
      : columns_(std::move(columns)), where_(where) {
    piece_begin_.push_back(0);
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      test_column const& col = columns_[c];
      column_view const h = col.values.view();
      std::uint64_t rows = 0;
      for (std::uint64_t r : col.frame_rows) rows += r;
      ZS_EXPECTS(rows == h.count, "frames of column '" + col.name + "' that add up to its rows");
      append_sources(h, h, col.frame_rows, host_sources_);
      if (where == side::gpu) {
        device_.push_back(col.values.copy_to(memory_kind::device, stream));
        append_sources(h, device_.back().view(), col.frame_rows, device_sources_);
      }
      column_of_.insert(column_of_.end(), col.frame_rows.size(), c);
      piece_begin_.push_back(host_sources_.size());
      types_.push_back(h.type);
    }
    if (where == side::gpu) ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }

  side where() const noexcept { return where_; }
  std::size_t columns() const noexcept { return columns_.size(); }
  std::size_t frames() const noexcept { return host_sources_.size(); }
  const test_column& column_at(std::size_t c) const { return columns_[c]; }
  std::size_t column_of(std::size_t frame) const { return column_of_[frame]; }
  std::span<const value_type> column_types() const noexcept { return types_; }
  std::span<const std::uint64_t> piece_begin() const noexcept { return piece_begin_; }
  /// The sources in host memory (always there), or in the memory of `memory`'s side.
  std::span<const encode_source> sources(side memory) const noexcept {
    return memory == side::cpu ? std::span<const encode_source>(host_sources_)
                               : std::span<const encode_source>(device_sources_);
  }
  std::span<const encode_source> host_sources() const noexcept { return host_sources_; }
  /// "column name, frame k": for failure messages.
  std::string describe(std::size_t frame) const {
    std::size_t const c = column_of_[frame];
    return "'" + columns_[c].name + "' frame " + std::to_string(frame - piece_begin_[c]) + " of " +
           std::to_string(piece_begin_[c + 1] - piece_begin_[c]) + " (" + std::to_string(host_sources_[frame].count) +
           " values)";
  }

 private:
  // Moving a column keeps its memory, so the pointers stay valid as the lists grow.
  static void append_sources(const column_view& h, const column_view& v, const std::vector<std::uint64_t>& rows,
                             std::vector<encode_source>& out) {
    std::uint64_t row = 0;
    for (std::uint64_t n : rows) {
      encode_source s{h.type, n, nullptr};
      if (h.type == value_type::string) {
        s.values = v.data;
        s.offsets = v.offsets + row;
        s.chars_bytes = static_cast<std::uint64_t>(h.offsets[row + n] - h.offsets[row]);
      } else if (v.data != nullptr) {
        s.values = static_cast<const std::byte*>(v.data) + row * value_width(h.type);
      }
      out.push_back(s);
      row += n;
    }
  }

  std::vector<test_column> columns_;
  side where_;
  std::vector<column> device_;
  std::vector<encode_source> host_sources_, device_sources_;
  std::vector<std::uint64_t> piece_begin_;
  std::vector<std::size_t> column_of_;
  std::vector<value_type> types_;
};

// --- encoding -------------------------------------------------------------------------------------

template <typename T>
std::vector<T> to_host(const void* device, std::size_t count, cudaStream_t stream) {
  std::vector<T> out(count);
  copy_async(out.data(), device, count * sizeof(T), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

/// A batch's frames, back in host memory.
struct encoded_frames {
  std::vector<std::uint64_t> offsets;  // layout_frames: frame i at offsets[i]
  std::vector<std::byte> bytes;        // the whole frames buffer
  std::vector<std::uint64_t> sizes;    // frame_bytes
  std::vector<std::byte> params;       // the column parameter blocks; empty for a codec without

  std::size_t frames() const noexcept { return sizes.size(); }
  std::span<const std::byte> frame(std::size_t i) const noexcept { return {bytes.data() + offsets[i], sizes[i]}; }
};

/// Whether `c` has column parameters for any column of `b`.
inline bool has_params(const codec& c, const staged_batch& b) {
  return std::any_of(b.column_types().begin(), b.column_types().end(),
                     [&](value_type t) { return c.params_bytes(t) != 0; });
}

/// Encodes every frame of `b` with `c` on `where` (the CPU may encode a GPU batch: its host
/// sources), into a buffer of stale bytes (0xEE), so that a header field or payload byte an
/// encoder fails to write shows as a difference between the sides or a refused frame. Codecs with
/// column parameters get one block per column, prepared on the same side from the column's frames.
inline encoded_frames encode(const codec& c, side where, const staged_batch& b, cudaStream_t stream) {
  ZS_EXPECTS(where == side::cpu || b.where() == side::gpu, "a batch staged on the GPU for a GPU encode");
  encoded_frames e;
  std::size_t const n = b.frames();
  e.offsets = layout_frames(c, b.host_sources());
  std::vector<encode_source> sources(b.sources(where).begin(), b.sources(where).end());
  std::vector<std::uint64_t> const params_offsets = layout_params(c, b.column_types());
  sample_batch const samples{b.sources(where), b.piece_begin()};
  auto point_at_params = [&](const std::byte* params) {
    for (std::size_t i = 0; i < n; ++i) {
      if (c.params_bytes(sources[i].type) != 0) sources[i].params = params + params_offsets[b.column_of(i)];
    }
  };
  if (where == side::cpu) {
    e.params.assign(params_offsets.back(), std::byte{0});
    if (has_params(c, b)) {
      c.prepare_host(samples, e.params.data(), params_offsets);
      point_at_params(e.params.data());
    }
    e.bytes.assign(e.offsets.back(), std::byte{0xEE});
    e.sizes.assign(n, 0);
    c.encode_host({sources, e.bytes.data(), e.offsets, e.sizes.data()});
    return e;
  }
  device_buffer params(params_offsets.back(), stream);
  if (has_params(c, b)) {
    ZS_CUDA_TRY(cudaMemsetAsync(params.data(), 0, params.size(), stream));
    c.prepare_async(samples, params.as<std::byte>(), params_offsets, stream);
    point_at_params(params.as<std::byte>());
  }
  device_buffer frames(e.offsets.back(), stream);
  if (!frames.empty()) ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0xEE, frames.size(), stream));
  device_buffer sizes(n * sizeof(std::uint64_t), stream);
  device_buffer temp(c.encode_temp_bytes(sources), stream);
  c.encode_async({sources, frames.as<std::byte>(), e.offsets, sizes.as<std::uint64_t>()}, temp.data(), temp.size(),
                 stream);
  e.params = to_host<std::byte>(params.data(), params.size(), stream);
  e.bytes = to_host<std::byte>(frames.data(), frames.size(), stream);
  e.sizes = to_host<std::uint64_t>(sizes.data(), n, stream);
  return e;
}

// --- frames to decode -------------------------------------------------------------------------------

/// Frames to decode, each at a 16-byte boundary of one buffer and given exactly the bytes it may
/// read. Frames whose bytes end where the next frame starts share a decode call (a batch gives a
/// frame everything up to the next one's start); a frame whose bytes end off a 16-byte boundary
/// ends its call, since the next frame of a batch cannot start there.
class frame_set {
 public:
  /// Every frame of a batch, laid out as the batch was: one decode call.
  static frame_set of_batch(const encoded_frames& e) {
    frame_set s;
    s.bytes_ = e.bytes;
    for (std::size_t i = 0; i < e.frames(); ++i) {
      s.starts_.push_back(e.offsets[i]);
      s.ends_.push_back(e.offsets[i + 1]);
    }
    return s;
  }

  /// Adds a frame whose decoder may read exactly `available` bytes: the first `available` bytes
  /// of `frame` (zeros past its end).
  void add(std::span<const std::byte> frame, std::uint64_t available) {
    std::uint64_t const start = align_frame(bytes_.size());
    bytes_.resize(start + available, std::byte{0});
    std::uint64_t const copied = std::min<std::uint64_t>(frame.size(), available);
    if (copied != 0) std::memcpy(bytes_.data() + start, frame.data(), copied);  // no null pointers to memcpy
    starts_.push_back(start);
    ends_.push_back(start + available);
  }
  /// Adds a frame with the zero bytes up to the next 16-byte boundary after it, as in a batch: it
  /// shares its decode call with the frames around it.
  void add_in_slot(std::span<const std::byte> frame) { add(frame, align_frame(frame.size())); }

  std::size_t size() const noexcept { return starts_.size(); }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  std::uint64_t start(std::size_t i) const noexcept { return starts_[i]; }
  std::uint64_t end(std::size_t i) const noexcept { return ends_[i]; }
  /// The decode calls: [first, last) frame ranges whose bytes follow one another.
  std::vector<std::pair<std::size_t, std::size_t>> calls() const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t i = 0; i < size();) {
      std::size_t j = i + 1;
      while (j < size() && ends_[j - 1] == starts_[j]) ++j;
      out.emplace_back(i, j);
      i = j;
    }
    return out;
  }
  /// frame_offsets of the call [first, last), relative to the start of its first frame.
  std::vector<std::uint64_t> call_offsets(std::size_t first, std::size_t last) const {
    std::vector<std::uint64_t> offsets;
    for (std::size_t i = first; i < last; ++i) offsets.push_back(starts_[i] - starts_[first]);
    offsets.push_back(ends_[last - 1] - starts_[first]);
    return offsets;
  }

 private:
  std::vector<std::byte> bytes_;
  std::vector<std::uint64_t> starts_, ends_;
};

// --- decoding -------------------------------------------------------------------------------------------

/// What one frame is decoded into: the expectation its target describes.
struct target_shape {
  value_type type = value_type::int32;
  std::uint64_t count = 0;
  std::uint64_t chars_bytes = 0;  // strings only

  static target_shape of(const encode_source& s) {
    return {s.type, s.count, s.type == value_type::string ? s.chars_bytes : 0};
  }
};

/// Every target byte starts as this, and so do the guard bytes around targets.
inline constexpr std::byte canary{0xA5};
/// Guard bytes before and after every target region. String characters start this far into
/// their buffer (decode_target::chars_begin), so a decoder that ignores chars_begin writes guards.
inline constexpr std::uint64_t guard_bytes = 64;

/// The statuses and targets of a decode, back in host memory.
class decoded_frames {
 public:
  std::vector<frame_status> status;

  /// A fixed-width frame's value bytes, or a string frame's characters.
  std::span<const std::byte> values(std::size_t f) const {
    region const& r = values_[f];
    return {arena_.data() + r.target_begin, r.target_end - r.target_begin};
  }
  /// A string frame's count + 1 offsets, less chars_begin: relative to its first character.
  std::vector<std::int64_t> string_offsets(std::size_t f) const {
    region const& r = offsets_[f];
    std::vector<std::int64_t> out((r.target_end - r.target_begin) / 8);
    if (!out.empty()) std::memcpy(out.data(), arena_.data() + r.target_begin, out.size() * 8);
    for (auto& o : out) o -= static_cast<std::int64_t>(guard_bytes);
    return out;
  }
  /// Whether nothing around frame f's target was written.
  bool guards_intact(std::size_t f) const { return outside_untouched(values_[f]) && outside_untouched(offsets_[f]); }
  /// Whether frame f's target is as it was before the decode.
  bool target_untouched(std::size_t f) const { return inside_untouched(values_[f]) && inside_untouched(offsets_[f]); }

 private:
  struct region {  // [begin, end) of the arena, the target [target_begin, target_end) inside it
    std::uint64_t begin = 0, target_begin = 0, target_end = 0, end = 0;
  };
  bool untouched(std::uint64_t from, std::uint64_t to) const {
    return std::all_of(arena_.begin() + static_cast<std::ptrdiff_t>(from),
                       arena_.begin() + static_cast<std::ptrdiff_t>(to), [](std::byte b) { return b == canary; });
  }
  bool outside_untouched(const region& r) const {
    return untouched(r.begin, r.target_begin) && untouched(r.target_end, r.end);
  }
  bool inside_untouched(const region& r) const { return untouched(r.target_begin, r.target_end); }

  std::vector<std::byte> arena_;
  std::vector<region> values_, offsets_;  // offsets_: empty regions for fixed-width frames

  friend decoded_frames decode(const codec&, side, const frame_set&, std::span<const target_shape>, cudaStream_t);
};

/// Decodes every frame of `frames` with `c` on `where`, frame i into a target of `shapes[i]`,
/// in frames.calls() decode calls. Targets lie in one arena between guard bytes, every byte of
/// it the canary first. On the CPU each call reads its frames from memory that ends right
/// before a page no one may touch, so a decoder that reads past its bytes faults; on the GPU
/// the calls follow one another on `stream` (compute-sanitizer sees reads past them).
inline decoded_frames decode(const codec& c, side where, const frame_set& frames, std::span<const target_shape> shapes,
                             cudaStream_t stream) {
  ZS_EXPECTS(shapes.size() == frames.size(), "one target shape per frame");
  std::size_t const n = frames.size();
  decoded_frames d;
  // The arena: per frame, [guard | values or characters | guard], then for strings
  // [guard | count + 1 offsets | guard]; every region a multiple of 16 bytes.
  std::uint64_t at = 0;
  auto place = [&](std::uint64_t bytes) {
    decoded_frames::region r;
    r.begin = at;
    r.target_begin = at + guard_bytes;
    r.target_end = r.target_begin + bytes;
    r.end = r.target_begin + align_frame(bytes) + guard_bytes;
    at = r.end;
    return r;
  };
  for (target_shape const& s : shapes) {
    bool const is_string = s.type == value_type::string;
    d.values_.push_back(place(is_string ? s.chars_bytes : s.count * value_width(s.type)));
    d.offsets_.push_back(is_string ? place((s.count + 1) * sizeof(std::int64_t)) : decoded_frames::region{at, at, at, at});
  }
  auto targets_in = [&](std::byte* arena) {
    std::vector<decode_target> targets;
    for (std::size_t f = 0; f < n; ++f) {
      target_shape const& s = shapes[f];
      decode_target t{s.type, s.count, arena + d.values_[f].target_begin};
      if (s.type == value_type::string) {
        t.values = arena + d.values_[f].begin;  // characters at chars_begin, after the guard
        t.chars_begin = guard_bytes;
        t.chars_bytes = s.chars_bytes;
        t.offsets = reinterpret_cast<std::int64_t*>(arena + d.offsets_[f].target_begin);
      }
      targets.push_back(t);
    }
    return targets;
  };
  auto const calls = frames.calls();
  std::vector<std::vector<std::uint64_t>> call_offsets;
  for (auto const& [first, last] : calls) call_offsets.push_back(frames.call_offsets(first, last));
  d.status.assign(n, frame_status::not_decoded);

  if (where == side::cpu) {
    d.arena_.assign(at, canary);
    auto const targets = targets_in(d.arena_.data());
    for (std::size_t k = 0; k < calls.size(); ++k) {
      auto const [first, last] = calls[k];
      std::uint64_t const bytes = call_offsets[k].back();
      guarded_bytes in(bytes);
      if (bytes != 0) std::memcpy(in.data(), frames.bytes().data() + frames.start(first), bytes);
      c.decode_host({in.data(), call_offsets[k], std::span(targets).subspan(first, last - first),
                     d.status.data() + first});
    }
    return d;
  }
  device_buffer arena(at, stream);
  if (at != 0) ZS_CUDA_TRY(cudaMemsetAsync(arena.data(), static_cast<int>(canary), at, stream));
  device_buffer in(frames.bytes().size(), stream);
  copy_async(in.data(), frames.bytes().data(), frames.bytes().size(), stream);
  device_buffer status(n * sizeof(frame_status), stream);
  copy_async(status.data(), d.status.data(), n * sizeof(frame_status), stream);
  auto const targets = targets_in(arena.as<std::byte>());
  std::size_t temp_bytes = 0;
  for (auto const& [first, last] : calls) {
    temp_bytes = std::max(temp_bytes, c.decode_temp_bytes(std::span(targets).subspan(first, last - first)));
  }
  device_buffer temp(temp_bytes, stream);
  for (std::size_t k = 0; k < calls.size(); ++k) {
    auto const [first, last] = calls[k];
    c.decode_async({in.as<std::byte>() + frames.start(first), call_offsets[k],
                    std::span(targets).subspan(first, last - first), status.as<frame_status>() + first},
                   temp.data(), temp.size(), stream);
  }
  d.status = to_host<frame_status>(status.data(), n, stream);
  d.arena_ = to_host<std::byte>(arena.data(), at, stream);
  return d;
}

/// Target shapes for the frames of `b`, each as its source.
inline std::vector<target_shape> shapes_of(std::span<const encode_source> sources) {
  std::vector<target_shape> shapes;
  for (auto const& s : sources) shapes.push_back(target_shape::of(s));
  return shapes;
}

/// Whether frame f of `d` decoded to exactly the values of host source `s` (bit for bit: NaN
/// payloads and -0.0 included), with nothing around its target written.
inline ::testing::AssertionResult decoded_as(const decoded_frames& d, std::size_t f, const encode_source& s) {
  if (d.status[f] != frame_status::ok) return ::testing::AssertionFailure() << "status " << zs::to_string(d.status[f]);
  if (!d.guards_intact(f)) return ::testing::AssertionFailure() << "bytes around the target were written";
  auto const got = d.values(f);
  if (s.type != value_type::string) {
    if (got.size() != s.raw_bytes() || (!got.empty() && std::memcmp(got.data(), s.values, got.size()) != 0)) {
      return ::testing::AssertionFailure() << "values differ";
    }
    return ::testing::AssertionSuccess();
  }
  auto const* chars = static_cast<const std::byte*>(s.values);
  if (got.size() != s.chars_bytes || (!got.empty() && std::memcmp(got.data(), chars + s.offsets[0], got.size()) != 0)) {
    return ::testing::AssertionFailure() << "characters differ";
  }
  auto const offsets = d.string_offsets(f);
  for (std::uint64_t i = 0; i <= s.count; ++i) {
    if (offsets[i] != s.offsets[i] - s.offsets[0]) {
      return ::testing::AssertionFailure() << "string offset " << i << " is " << offsets[i] << ", not "
                                           << s.offsets[i] - s.offsets[0];
    }
  }
  return ::testing::AssertionSuccess();
}

/// Whether frame f of `a` and of `b` decoded to the same bytes (for frames both decoders accept).
inline bool same_decoded(const decoded_frames& a, const decoded_frames& b, std::size_t f, value_type type) {
  auto const va = a.values(f), vb = b.values(f);
  bool const same_values = va.size() == vb.size() && (va.empty() || std::memcmp(va.data(), vb.data(), va.size()) == 0);
  return same_values && (type != value_type::string || a.string_offsets(f) == b.string_offsets(f));
}

// --- the checks every codec passes ----------------------------------------------------------------------

/// Encodes `b` on its side and decodes the frames there: every frame fits max_frame_bytes and its
/// slot, and decodes to its values. On the GPU also: the frames are the CPU's byte for byte, the
/// CPU decodes the GPU's frames and the GPU the CPU's. Returns the side's frames.
inline encoded_frames check_round_trip(const codec& c, const staged_batch& b, cudaStream_t stream) {
  side const where = b.where();
  encoded_frames const e = encode(c, where, b, stream);
  auto const host_sources = b.host_sources();
  for (std::size_t f = 0; f < e.frames(); ++f) {
    EXPECT_LE(e.sizes[f], c.max_frame_bytes(host_sources[f])) << b.describe(f) << ": larger than max_frame_bytes";
    EXPECT_GE(e.sizes[f], frame_header_bytes) << b.describe(f);
  }
  auto const shapes = shapes_of(host_sources);
  auto expect_decoded = [&](const decoded_frames& d, const char* who) {
    EXPECT_NO_THROW(throw_if_failed(d.status)) << who;
    for (std::size_t f = 0; f < e.frames(); ++f) {
      EXPECT_TRUE(decoded_as(d, f, host_sources[f])) << who << ", " << b.describe(f);
    }
  };
  expect_decoded(decode(c, where, frame_set::of_batch(e), shapes, stream),
                 where == side::cpu ? "CPU decoding CPU frames" : "GPU decoding GPU frames");
  if (where == side::gpu) {
    encoded_frames const cpu = encode(c, side::cpu, b, stream);
    EXPECT_EQ(e.params, cpu.params) << "column parameters differ between GPU and CPU";
    EXPECT_EQ(e.sizes, cpu.sizes) << "frame sizes differ between GPU and CPU";
    for (std::size_t f = 0; f < e.frames() && f < cpu.frames(); ++f) {
      auto const g = e.frame(f), h = cpu.frame(f);
      EXPECT_TRUE(g.size() == h.size() && std::memcmp(g.data(), h.data(), g.size()) == 0)
          << b.describe(f) << " differs between GPU and CPU";
    }
    expect_decoded(decode(c, side::cpu, frame_set::of_batch(e), shapes, stream), "CPU decoding GPU frames");
    expect_decoded(decode(c, side::gpu, frame_set::of_batch(cpu), shapes, stream), "GPU decoding CPU frames");
  }
  return e;
}

/// Up to `most` of `e`'s frames whose sizes lie in [min_bytes, max_bytes] and whose targets take
/// at most `max_target_bytes`, spread evenly over those sizes (smallest and largest included).
inline std::vector<std::size_t> pick_frames(const encoded_frames& e, std::span<const encode_source> sources,
                                            std::uint64_t max_bytes, std::uint64_t max_target_bytes,
                                            std::size_t most) {
  std::vector<std::size_t> fitting;
  for (std::size_t f = 0; f < e.frames(); ++f) {
    std::uint64_t const target = sources[f].raw_bytes() + (sources[f].type == value_type::string ? 8 * (sources[f].count + 1) : 0);
    if (e.sizes[f] <= max_bytes && target <= max_target_bytes) fitting.push_back(f);
  }
  std::stable_sort(fitting.begin(), fitting.end(), [&](std::size_t a, std::size_t b) { return e.sizes[a] < e.sizes[b]; });
  if (fitting.size() <= most) return fitting;
  std::vector<std::size_t> picked;
  for (std::size_t k = 0; k < most; ++k) picked.push_back(fitting[k * (fitting.size() - 1) / (most - 1)]);
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  return picked;
}

/// The frame with its payload checksum and header checksum recomputed (where the header's
/// payload size fits in the frame), as the decode fuzzer repairs inputs: an edit then reaches
/// the codec's own checks.
inline void reseal(std::span<std::byte> frame) {
  if (frame.size() < frame_header_bytes) return;
  frame_header h = load_header(frame.data());
  if (h.payload_bytes <= frame.size() - frame_header_bytes) {
    h.payload_checksum = hash::checksum(frame.data() + frame_header_bytes, h.payload_bytes);
  }
  store_header(h, frame.data());
}

// --- real columns ----------------------------------------------------------------------------------

/// A real column of the data folder, cut for the suite: its head for round trips, and the slices
/// the fuzz seed generator (fuzz/make_seeds.cpp) takes at its start and middle.
struct real_column {
  std::string name;
  column head;          // the first rows, at most head_bytes of values or characters
  column middle;        // rows from count / 2 on, as many as the seeds take
  std::uint64_t rows;   // of the whole column
};

/// Bytes of each real column the round trips take: the suite must run in seconds on a CI CPU.
inline constexpr std::uint64_t head_bytes = std::uint64_t{2} << 20;

/// The data folder ($ZS_DATA_DIR), or nullopt with the reason in `why`.
inline std::optional<std::filesystem::path> data_folder(std::string& why) {
  const char* dir = std::getenv("ZS_DATA_DIR");
  if (dir == nullptr || *dir == '\0') {
    why = "ZS_DATA_DIR is not set: no real columns (run scripts/prepare-data, then ctest)";
    return std::nullopt;
  }
  if (!std::filesystem::is_directory(dir)) {
    why = std::string("data folder ") + dir + " is missing (run scripts/prepare-data)";
    return std::nullopt;
  }
  return std::filesystem::path(dir);
}

/// Rows of a column whose values or characters take at most `bytes`.
inline std::uint64_t rows_within(const column& c, std::uint64_t bytes) {
  column_view const v = c.view();
  if (v.type != value_type::string) return std::min<std::uint64_t>(v.count, bytes / value_width(v.type));
  auto const* end = std::upper_bound(v.offsets, v.offsets + v.count + 1, static_cast<std::int64_t>(bytes));
  return static_cast<std::uint64_t>(end - v.offsets) - 1;
}

/// Every column file of `folder`, read once per process and cut.
inline const std::vector<real_column>& real_columns_of(const std::filesystem::path& folder) {
  static std::map<std::filesystem::path, std::vector<real_column>> cache;
  auto found = cache.find(folder);
  if (found != cache.end()) return found->second;
  std::vector<real_column> columns;
  for (auto const& file : io::list_columns(folder)) {
    column const whole = io::read_column(file);
    columns.push_back({file.filename().string(), head(whole, rows_within(whole, head_bytes)),
                       slice(whole, whole.size() / 2, 2000), whole.size()});
  }
  return cache.emplace(folder, std::move(columns)).first->second;
}

/// A fixed-width host column converted value by value to `To` (integers widened with their
/// sign, floats exactly).
template <typename From, typename To>
column widened(const column& c) {
  std::vector<To> out(c.size());
  auto const* in = c.view().values<From>();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<To>(in[i]);
  return column::from_values<To>(std::span<const To>(out));
}

/// A fixed-width host column converted value by value to the narrower integer `To`, wrapping
/// modulo 2^bits as `zshuffle bench codec --type` converts (apps/zshuffle/bench_inputs.cpp).
template <typename From, typename To>
column wrapped(const column& c) {
  return widened<From, To>(c);  // the same C++ conversion: it wraps where To is narrower
}

/// An int128 column of the values of a signed integer host column, sign-extended.
template <typename From>
column widened_to_int128(const column& c) {
  std::vector<int128_value> out(c.size());
  auto const* in = c.view().values<From>();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = int128_value::of(in[i]);
  return column::from_values<int128_value>(std::span<const int128_value>(out));
}

/// A bool8 column of the low bit of each value of a 32-bit host column.
inline column low_bits_as_bool8(const column& c) {
  column out = column::allocate(value_type::bool8, c.size(), memory_kind::host);
  auto const* in = c.view().values<std::uint32_t>();
  auto* bools = out.mutable_view().values<std::uint8_t>();
  for (std::size_t i = 0; i < c.size(); ++i) bools[i] = static_cast<std::uint8_t>(in[i] & 1U);
  return out;
}

/// The real columns of `type`. The data has no 64-bit integer column: for int64 and uint64 the
/// int32 and uint32 columns stand in, widened, so every type meets real value distributions. Nor
/// has it a narrow integer column: for int8, int16, uint8 and uint16 the int32 and uint32 columns
/// stand in, wrapped to the narrow type (their low bits: the values a narrowing cast gives); for
/// bool8, their lowest bit; for int128, the int32 columns sign-extended.
struct typed_real_column {
  std::string name;
  const real_column* source;
  column head, middle;  // in `type`
};
inline std::vector<typed_real_column> real_columns(const std::filesystem::path& folder, value_type type) {
  std::vector<typed_real_column> out;
  auto const& all = real_columns_of(folder);
  for (auto const& r : all) {
    if (r.head.type() == type) out.push_back({r.name, &r, copy_of(r.head), copy_of(r.middle)});
  }
  if (!out.empty()) return out;
  for (auto const& r : all) {
    if (type == value_type::int64 && r.head.type() == value_type::int32) {
      out.push_back({r.name + " widened to int64", &r, widened<std::int32_t, std::int64_t>(r.head),
                     widened<std::int32_t, std::int64_t>(r.middle)});
    } else if (type == value_type::uint64 && r.head.type() == value_type::uint32) {
      out.push_back({r.name + " widened to uint64", &r, widened<std::uint32_t, std::uint64_t>(r.head),
                     widened<std::uint32_t, std::uint64_t>(r.middle)});
    } else if (type == value_type::bool8 &&
               (r.head.type() == value_type::int32 || r.head.type() == value_type::uint32)) {
      out.push_back({r.name + " low bits as bool8", &r, low_bits_as_bool8(r.head), low_bits_as_bool8(r.middle)});
    } else if (is_integer(type) && value_width(type) < 4 &&
               (r.head.type() == value_type::int32 || r.head.type() == value_type::uint32)) {
      auto const to = [&]<typename To>(To) {
        std::string const name = r.name + " wrapped to " + std::string(zs::to_string(type));
        if (r.head.type() == value_type::int32) {
          out.push_back({name, &r, wrapped<std::int32_t, To>(r.head), wrapped<std::int32_t, To>(r.middle)});
        } else {
          out.push_back({name, &r, wrapped<std::uint32_t, To>(r.head), wrapped<std::uint32_t, To>(r.middle)});
        }
      };
      switch (type) {
        case value_type::int8: to(std::int8_t{}); break;
        case value_type::int16: to(std::int16_t{}); break;
        case value_type::uint8: to(std::uint8_t{}); break;
        default: to(std::uint16_t{}); break;
      }
    } else if (type == value_type::int128 && r.head.type() == value_type::int32) {
      out.push_back({r.name + " widened to int128", &r, widened_to_int128<std::int32_t>(r.head),
                     widened_to_int128<std::int32_t>(r.middle)});
    } else if (type == value_type::float64 && r.head.type() == value_type::float32) {
      out.push_back({r.name + " widened to float64", &r, widened<float, double>(r.head),
                     widened<float, double>(r.middle)});
    }
  }
  return out;
}

// --- the fuzz seeds -----------------------------------------------------------------------------------

/// The rows of the slices fuzz/make_seeds.cpp encodes for fuzz_decode_<codec> (slice_rows there):
/// none, one, a few, and lengths on both sides of 128- and 512-value blocks; fewer for strings.
inline std::vector<std::uint64_t> seed_slice_rows(value_type type) {
  if (type == value_type::string) return {0, 1, 3, 31, 200};
  return {0, 1, 3, 127, 129, 512, 700, 2000};
}

/// A raw frame whose header claims `count` values of `type` and `raw_bytes`, with a payload of
/// `payload_bytes` zero bytes and both checksums right: the crafted seeds of make_seeds.cpp.
inline std::vector<std::byte> crafted_raw_frame(value_type type, std::uint64_t count, std::uint64_t raw_bytes,
                                                std::uint64_t payload_bytes) {
  std::vector<std::byte> frame(frame_header_bytes + payload_bytes);
  frame_header h;
  h.codec = codec_id::raw;
  h.type = type;
  h.value_count = count;
  h.raw_bytes = raw_bytes;
  h.payload_bytes = payload_bytes;
  h.payload_checksum = hash::checksum(frame.data() + frame_header_bytes, payload_bytes);
  store_header(h, frame.data());
  return frame;
}

/// The target the decode fuzzer gives a frame (fuzz/decode_fuzzer.cpp, shape_for): what its
/// header claims, up to 2^16 values and 2^18 characters; 16 values (and 64 characters) beyond,
/// which the frame must then be refused for.
inline target_shape fuzz_target_shape(std::span<const std::byte> frame) {
  target_shape shape;
  if (frame.size() < frame_header_bytes) return shape;
  frame_header const h = load_header(frame.data());
  if (is_valid(h.type)) shape.type = h.type;
  bool const is_string = shape.type == value_type::string;
  if (h.value_count <= (std::uint64_t{1} << 16) && (!is_string || h.raw_bytes <= (std::uint64_t{1} << 18))) {
    shape.count = h.value_count;
    shape.chars_bytes = is_string ? h.raw_bytes : 0;
  } else {
    shape.count = 16;
    shape.chars_bytes = is_string ? 64 : 0;
  }
  return shape;
}

}  // namespace zs::test::conformance
