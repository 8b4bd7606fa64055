// Compressed spill (zs/spill.hpp): the handle, the plan of frames, the choice of codec, the host
// side (CPU reference codecs) and the file tier. The device side is in spill_gpu.cpp.
#include "zs/spill.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <utility>

#include "codecs/bitpack/bitpack_codec.hpp"
#include "codecs/fsst/fsst_mode.hpp"
#include "files.hpp"
#include "measured_speeds.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs/fault.hpp"
#include "zs/hash.hpp"
#include "zs/log.hpp"
#include "zs/overflow.hpp"
#include "spill_state.hpp"

namespace zs {

namespace detail {

// ---------------------------------------------------------------------------------------------
// Host blocks and the cache of pinned ones

namespace {

}  // namespace

// Small blocks are parts of shared pinned slabs, handed out in order; a slab is used again once
// every block in it has been given back. Pinning a block per small column (a piece of a
// partition store holds a few hundred KiB a column) cost more than copying it.
struct pinned_slab {
  static constexpr std::uint64_t bytes = std::uint64_t{64} << 20;
  static constexpr std::uint64_t largest_block = bytes / 8;
  static constexpr std::uint64_t alignment = 256;
  pinned_buffer memory{bytes};
  std::uint64_t used = 0;  // bytes handed out since it was last empty
  std::uint64_t live = 0;  // blocks not given back
};

namespace {

// Pinned blocks dropped by handles, kept for the next spill: pinning memory runs at a few GB/s,
// slower than the link the spill saves time on, and freeing it waits for the device.
struct pinned_cache {
  static constexpr std::uint64_t limit_bytes = std::uint64_t{8} << 30;
  std::mutex lock;
  std::multimap<std::uint64_t, pinned_buffer> blocks;  // by size
  std::uint64_t bytes = 0;
  std::vector<std::unique_ptr<pinned_slab>> slabs;
  pinned_slab* current = nullptr;  // where the next small block is cut from

  // `wanted` bytes (at most pinned_slab::largest_block) of a slab: the current one while it has
  // room, else an empty one, else a new one.
  std::pair<pinned_slab*, std::byte*> carve(std::uint64_t wanted) {
    std::uint64_t const size = (wanted + pinned_slab::alignment - 1) / pinned_slab::alignment * pinned_slab::alignment;
    std::lock_guard<std::mutex> const hold(lock);
    if (current == nullptr || current->used + size > pinned_slab::bytes) {
      current = nullptr;
      for (auto const& s : slabs) {
        if (s->live == 0) {
          current = s.get();
          current->used = 0;
          break;
        }
      }
      if (current == nullptr) {
        auto const start = std::chrono::steady_clock::now();
        slabs.push_back(std::make_unique<pinned_slab>());
        current = slabs.back().get();
        if (log::enabled(log::level::debug)) {
          log::debug("spill: pinned a slab of " + std::to_string(pinned_slab::bytes >> 20) + " MiB in " +
                     std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() *
                                    1e3) +
                     " ms");
        }
      }
    }
    std::byte* const at = current->memory.as<std::byte>() + current->used;
    current->used += size;
    ++current->live;
    return {current, at};
  }
  // Pins empty slabs until at least `wanted` bytes of slabs are empty.
  void reserve(std::uint64_t wanted) {
    std::lock_guard<std::mutex> const hold(lock);
    std::uint64_t empty = 0;
    for (auto const& s : slabs) {
      if (s->live == 0 && s.get() != current) empty += pinned_slab::bytes;
    }
    for (; empty < wanted; empty += pinned_slab::bytes) slabs.push_back(std::make_unique<pinned_slab>());
  }
  void release(pinned_slab* slab) noexcept {
    std::lock_guard<std::mutex> const hold(lock);
    if (--slab->live == 0 && slab != current) slab->used = 0;
  }

  static pinned_cache& get() {
    static pinned_cache* cache = new pinned_cache;  // never destroyed: blocks may be dropped at exit
    return *cache;
  }
  // A cached block of at least `wanted` bytes and at most twice `rounded` (wanted rounded up to
  // the granule blocks are allocated in), or none.
  pinned_buffer take(std::uint64_t wanted, std::uint64_t rounded) {
    std::lock_guard<std::mutex> const hold(lock);
    auto const it = blocks.lower_bound(wanted);
    if (it == blocks.end() || it->first > 2 * rounded) return {};
    pinned_buffer out = std::move(it->second);
    bytes -= it->first;
    blocks.erase(it);
    return out;
  }
  void put(pinned_buffer&& b) noexcept {
    std::uint64_t const size = b.size();
    std::lock_guard<std::mutex> const hold(lock);
    if (bytes + size > limit_bytes) return;  // `b` is freed by its owner
    try {
      blocks.emplace(size, std::move(b));
      bytes += size;
    } catch (...) {  // no room for the entry: the block is freed instead
    }
  }
  void clear() noexcept {
    std::multimap<std::uint64_t, pinned_buffer> dropped;
    std::vector<std::unique_ptr<pinned_slab>> empty;
    {
      std::lock_guard<std::mutex> const hold(lock);
      dropped.swap(blocks);
      bytes = 0;
      // Slabs with blocks in use stay.
      auto const in_use = std::partition(slabs.begin(), slabs.end(), [](auto const& s) { return s->live > 0; });
      for (auto it = in_use; it != slabs.end(); ++it) {
        if (it->get() == current) current = nullptr;
        empty.push_back(std::move(*it));
      }
      slabs.erase(in_use, slabs.end());
    }
  }
};

// Pinned sizes are rounded up so that blocks of nearly equal batches can be reused.
constexpr std::uint64_t pinned_granule = std::uint64_t{1} << 20;

}  // namespace

spill_block::spill_block(std::uint64_t bytes, bool pinned, const std::string& column) : bytes_(bytes) {
  if (bytes == 0) return;
  try {
    fault::point("spill.host_allocation");
    if (pinned && bytes <= pinned_slab::largest_block) {
      std::tie(slab_, slab_data_) = pinned_cache::get().carve(bytes);
    } else if (pinned) {
      std::uint64_t const rounded = (bytes + pinned_granule - 1) / pinned_granule * pinned_granule;
      pinned_ = pinned_cache::get().take(bytes, rounded);
      if (pinned_.size() == 0) pinned_ = pinned_buffer(rounded);
    } else {
      plain_ = host_buffer(bytes);
    }
  } catch (const std::bad_alloc&) {
    ZS_FAIL(error_code::out_of_memory, "spilling " + column + ": a host allocation of " + std::to_string(bytes) +
                                           " bytes failed (nothing of the spill is kept)");
  } catch (const error& e) {
    if (e.code() != error_code::out_of_memory) throw;
    ZS_FAIL(error_code::out_of_memory, "spilling " + column + ": " + e.message() + " (nothing of the spill is kept)");
  }
}

spill_block::spill_block(device_buffer&& frames, std::uint64_t bytes) : device_(std::move(frames)), bytes_(bytes) {}

spill_block::~spill_block() { give_back(); }

spill_block::spill_block(spill_block&& other) noexcept
    : device_(std::move(other.device_)),
      pinned_(std::move(other.pinned_)),
      slab_(std::exchange(other.slab_, nullptr)),
      slab_data_(std::exchange(other.slab_data_, nullptr)),
      plain_(std::move(other.plain_)),
      bytes_(std::exchange(other.bytes_, 0)) {}

spill_block& spill_block::operator=(spill_block&& other) noexcept {
  if (this != &other) {
    give_back();
    device_ = std::move(other.device_);
    pinned_ = std::move(other.pinned_);
    slab_ = std::exchange(other.slab_, nullptr);
    slab_data_ = std::exchange(other.slab_data_, nullptr);
    plain_ = std::move(other.plain_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void spill_block::give_back() noexcept {
  if (pinned_.size() != 0) pinned_cache::get().put(std::move(pinned_));
  if (slab_ != nullptr) pinned_cache::get().release(std::exchange(slab_, nullptr));
  slab_data_ = nullptr;
}

std::byte* spill_block::data() noexcept {
  if (on_device()) return device_.as<std::byte>();
  if (slab_ != nullptr) return slab_data_;
  return pinned_.size() != 0 ? pinned_.as<std::byte>() : plain_.as<std::byte>();
}
const std::byte* spill_block::data() const noexcept {
  if (on_device()) return device_.as<std::byte>();
  if (slab_ != nullptr) return slab_data_;
  return pinned_.size() != 0 ? pinned_.as<std::byte>() : plain_.as<std::byte>();
}

// ---------------------------------------------------------------------------------------------
// Frames

std::uint64_t uncompressed_bytes(value_type type, std::uint64_t count, std::uint64_t chars) {
  return type == value_type::string ? chars + 8 * count : count * value_width(type);
}

std::vector<std::uint64_t> frame_boundaries(std::uint64_t count, std::uint64_t raw_bytes, std::uint64_t frame_bytes) {
  if (count == 0) return {0};
  std::uint64_t const frames = std::clamp<std::uint64_t>((raw_bytes + frame_bytes - 1) / frame_bytes, 1, count);
  std::vector<std::uint64_t> rows(frames + 1);
  __extension__ typedef unsigned __int128 wide;  // count x f may pass 64 bits
  for (std::uint64_t f = 0; f <= frames; ++f) {
    rows[f] = static_cast<std::uint64_t>(static_cast<wide>(count) * f / frames);
  }
  return rows;
}

frame_plan plan_frames(value_type type, std::span<const std::uint64_t> rows, std::span<const std::int64_t> ends,
                       std::uint64_t batch_bytes, bool short_ends) {
  frame_plan p;
  std::vector<spilled_frame> frames;
  std::uint64_t total = 0;
  for (std::size_t f = 0; f + 1 < rows.size(); ++f) {
    spilled_frame fr;
    fr.row = rows[f];
    fr.rows = rows[f + 1] - rows[f];
    if (type == value_type::string) {
      fr.chars_begin = static_cast<std::uint64_t>(ends[f]);
      fr.chars = static_cast<std::uint64_t>(ends[f + 1] - ends[f]);
    }
    total += uncompressed_bytes(type, fr.rows, fr.chars);
    frames.push_back(fr);
  }
  short_ends = short_ends && total > 2 * batch_bytes;
  std::uint64_t const end_bytes = std::max<std::uint64_t>(batch_bytes / 8, 1);
  std::uint64_t in_batch = 0, left = total;
  bool in_last = false;
  p.batch_begin.push_back(0);
  for (spilled_frame& fr : frames) {
    std::uint64_t const bytes = uncompressed_bytes(type, fr.rows, fr.chars);
    bool const starts_last = short_ends && !in_last && left <= end_bytes;
    std::uint64_t const limit = short_ends && p.batch_begin.size() == 1 ? end_bytes : batch_bytes;
    if (in_batch > 0 && (starts_last || in_batch + bytes > limit)) {
      p.batch_begin.push_back(p.frames.size());
      in_batch = 0;
    }
    in_last = in_last || starts_last;
    fr.block = p.batch_begin.size() - 1;
    in_batch += bytes;
    left -= bytes;
    p.frames.push_back(fr);
  }
  if (!p.frames.empty()) p.batch_begin.push_back(p.frames.size());
  return p;
}

encode_source frame_source(const column_view& v, const spilled_frame& f) {
  encode_source s{v.type, f.rows, nullptr};
  if (v.type == value_type::string) {
    s.values = v.data;
    s.offsets = v.offsets + f.row;
    s.chars_bytes = f.chars;
  } else {
    s.values = static_cast<const std::byte*>(v.data) + f.row * value_width(v.type);
    s.null_mask = v.null_mask;
    s.null_mask_bit = f.row;
  }
  return s;
}

decode_target frame_target(const mutable_column_view& out, const spilled_frame& f) {
  decode_target t{out.type, f.rows, nullptr};
  if (out.type == value_type::string) {
    t.values = out.data;
    t.offsets = out.offsets + f.row;
    t.chars_begin = f.chars_begin;
    t.chars_bytes = f.chars;
  } else {
    t.values = static_cast<std::byte*>(out.data) + f.row * value_width(out.type);
  }
  return t;
}

std::string describe(const std::string& name, value_type type) {
  return "column '" + name + "' (" + std::string(is_valid(type) ? to_string(type) : "invalid type") + ")";
}

void throw_if_bad_frames(const spill_state& s, std::span<const frame_status> statuses, std::size_t first_frame) {
  std::size_t bad = 0, first = statuses.size();
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i] != frame_status::ok && bad++ == 0) first = i;
  }
  if (bad == 0) return;
  auto const& f = s.frames[first_frame + first];
  ZS_FAIL(error_code::corrupt_frame,
          "restoring " + describe(s.name, s.type) + ": " + std::to_string(bad) +
              " frame(s) failed their checks; first: frame " +
              std::to_string(first_frame + first) + " of " + std::to_string(s.frames.size()) + " (rows " +
              std::to_string(f.row) + " to " + std::to_string(f.row + f.rows) + "): " +
              std::string(to_string(statuses[first])) + ". The spilled frames are kept");
}

// ---------------------------------------------------------------------------------------------
// The choice of codec

double predicted_compressed_seconds(double raw_bytes, double ratio, codec_speed speed, double pcie_bps) {
  double const spilled = raw_bytes / std::max(ratio, 1e-9);
  // Batches overlap encoding with copying (and copying with decoding): each direction takes
  // about as long as the slower of the two.
  return std::max(raw_bytes / speed.encode_bps, spilled / pcie_bps) +
         std::max(spilled / pcie_bps, raw_bytes / speed.decode_bps);
}

bool prefers_extended(double raw_bytes, double classic_ratio, codec_speed classic_speed, double extended_ratio,
                      codec_speed extended_speed, double pcie_bps) {
  return predicted_compressed_seconds(raw_bytes, extended_ratio, extended_speed, pcie_bps) <
         predicted_compressed_seconds(raw_bytes, classic_ratio, classic_speed, pcie_bps);
}

void decide_codec(spill_report& r, const codec& candidate, double ratio, codec_speed speed, double pcie_bps) {
  double const raw = static_cast<double>(r.raw_bytes);
  r.estimated_ratio = ratio;
  r.encode_bps = speed.encode_bps;
  r.decode_bps = speed.decode_bps;
  r.pcie_bps = pcie_bps;
  r.predicted_raw_seconds = 2 * raw / pcie_bps;
  r.predicted_compressed_seconds = predicted_compressed_seconds(raw, ratio, speed, pcie_bps);
  bool const pays = r.predicted_compressed_seconds < r.predicted_raw_seconds;
  if (!r.forced) {
    r.codec = pays ? candidate.id() : codec_id::raw;
    r.codec_name = pays ? std::string(candidate.name()) : "raw";
  }
}

std::vector<encode_source> spread_sample(const column_view& v, const frame_plan& p, std::size_t most) {
  std::vector<encode_source> out;
  std::size_t const n = p.frames.size();
  std::size_t const take = std::min(n, most);
  for (std::size_t i = 0; i < take; ++i) out.push_back(frame_source(v, p.frames[i * n / take]));
  return out;
}

std::vector<spilled_frame> leading_frames(const frame_plan& p, value_type type, std::uint64_t bytes) {
  std::vector<spilled_frame> out;
  std::uint64_t sum = 0;
  for (auto const& f : p.frames) {
    if (!out.empty() && sum + uncompressed_bytes(type, f.rows, f.chars) > bytes) break;
    sum += uncompressed_bytes(type, f.rows, f.chars);
    out.push_back(f);
  }
  return out;
}

void choose_codec(spill_state& s, const spill_options& options, const column_view& v, const frame_plan& p,
                  spill_side& side) {
  spill_report& r = s.report;
  r.raw_bytes = uncompressed_bytes(s.type, s.count, s.chars_bytes);
  r.frames = p.frames.size();
  const codec* candidate = &default_codec(s.type);
  if (options.codec) {
    candidate = &get_codec(*options.codec);
    if (!candidate->supports(s.type)) {
      ZS_FAIL(error_code::unsupported, "spilling " + describe(s.name, s.type) + ": codec '" +
                                           std::string(candidate->name()) + "' does not encode " +
                                           std::string(to_string(s.type)) + " values");
    }
    r.forced = true;
    r.codec = candidate->id();
    r.codec_name = std::string(candidate->name());
  }
  if (!r.forced && options.chosen_before && r.raw_bytes > 0) {
    candidate = &get_codec(*options.chosen_before);
    if (!candidate->supports(s.type)) {
      ZS_FAIL(error_code::invalid_argument, "spilling " + describe(s.name, s.type) + ": the earlier choice, codec '" +
                                                std::string(candidate->name()) + "', does not encode " +
                                                std::string(to_string(s.type)) + " values");
    }
    r.codec = candidate->id();
    r.codec_name = std::string(candidate->name());
    return;
  }
  // Raw needs no figures; an empty column moves nothing either way.
  if (candidate->id() == codec_id::raw || r.raw_bytes == 0) return;
  double const pcie = options.pcie_bandwidth > 0 ? options.pcie_bandwidth : side.pcie_bps();
  std::vector<encode_source> const sample = spread_sample(v, p, 8);
  std::map<const codec*, double> ratios;
  auto const ratio_of = [&](const codec& c) {
    auto const known = ratios.find(&c);
    return known != ratios.end() ? known->second : (ratios[&c] = side.ratio(c, sample));
  };
  // Strings: fsst, or fsst_dict where the sample says it is smaller.
  if (!r.forced) candidate = &codecs::choose_string_mode(*candidate, ratio_of);
  if (options.frames_in == memory_kind::device) {
    // Kept on the device: compressed where that saves enough memory, PCIe being no part of it.
    r.estimated_ratio = ratio_of(*candidate);
    bool const saves = r.estimated_ratio > 0 && 1.0 / r.estimated_ratio <= 1.0 - device_frames_min_saving;
    if (!r.forced) {
      r.codec = saves ? candidate->id() : codec_id::raw;
      r.codec_name = saves ? std::string(candidate->name()) : "raw";
    }
    return;
  }
  codec_speed speed = side.speed(*candidate, s.name);
  // Integers: bitpack_ext, then dict (its dictionaries, or bitpack_ext's frames), each where its
  // smaller frames save more link time than its slower kernels cost. A codec's speed is measured
  // only where its frames are clearly smaller than those of the codec chosen so far.
  if (!r.forced && candidate->id() == codec_id::bitpack_for) {
    for (codec_id const next : {codec_id::bitpack_pfor, codec_id::dict}) {
      const codec& slower = get_codec(next);
      double const chosen_ratio = ratio_of(*candidate), slower_ratio = ratio_of(slower);
      if (!(slower_ratio > codecs::extended_min_gain * chosen_ratio)) continue;
      codec_speed const slower_speed = side.speed(slower, s.name);
      if (prefers_extended(static_cast<double>(r.raw_bytes), chosen_ratio, speed, slower_ratio, slower_speed, pcie)) {
        candidate = &slower;
        speed = slower_speed;
      }
    }
  }
  decide_codec(r, *candidate, ratio_of(*candidate), speed, pcie);
}

// ---------------------------------------------------------------------------------------------
// The host side

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The column parameters of `c` for the column whose frames are `sources`, prepared on the host
// from them; every source points at them. Empty for a codec without parameters.
host_buffer attach_params_host(const codec& c, std::vector<encode_source>& sources) {
  if (sources.empty() || c.params_bytes(sources.front().type) == 0) return {};
  value_type const type = sources.front().type;
  auto const offsets = layout_params(c, std::span<const value_type>(&type, 1));
  host_buffer params(offsets.back());
  std::vector<std::uint64_t> const piece_begin{0, sources.size()};
  c.prepare_host(sample_batch{sources, piece_begin}, params.as<std::byte>(), offsets);
  for (auto& s : sources) s.params = params.as<std::byte>();
  return params;
}

struct host_side final : spill_side {
  host_side(const column_view& v, const frame_plan& p) : v_(v), p_(p) {}

  double ratio(const codec& c, std::span<const encode_source> sample) override {
    std::vector<std::uint64_t> const piece_begin{0, sample.size()};
    auto const e = c.estimate_host(sample_batch{sample, piece_begin});
    return e.front().raw_bytes == 0 ? 1.0 : e.front().ratio();
  }
  // Measured on the column's first 4 MiB the first time the process meets the codec, type and
  // column name, then remembered for samples up to twice as large (detail::measured_speeds).
  codec_speed speed(const codec& c, const std::string& column_name) override {
    static detail::measured_speeds<std::tuple<codec_id, value_type, std::string>, codec_speed> measured;
    auto const key = std::make_tuple(c.id(), v_.type, column_name);
    constexpr std::uint64_t sample_bytes = std::uint64_t{4} << 20;
    auto const frames = leading_frames(p_, v_.type, sample_bytes);
    std::uint64_t const rows = frames.back().row + frames.back().rows;
    std::uint64_t const chars = frames.back().chars_begin + frames.back().chars;
    std::uint64_t const bytes = uncompressed_bytes(v_.type, rows, chars);
    if (auto const known = measured.find(key, bytes)) return *known;
    std::vector<encode_source> sources;
    for (auto const& f : frames) sources.push_back(frame_source(v_, f));
    host_buffer const params = attach_params_host(c, sources);
    auto const layout = layout_frames(c, sources);
    host_buffer scratch(layout.back());
    std::vector<std::uint64_t> sizes(sources.size());
    auto start = clock_type::now();
    c.encode_host({sources, scratch.as<std::byte>(), layout, sizes.data()});
    double const encode_s = seconds_since(start);
    column out = column::allocate(v_.type, rows, memory_kind::host, nullptr, chars);
    std::vector<decode_target> targets;
    for (auto const& f : frames) targets.push_back(frame_target(out.mutable_view(), f));
    std::vector<frame_status> statuses(sources.size());
    start = clock_type::now();
    c.decode_host({scratch.as<std::byte>(), layout, targets, statuses.data()});
    double const decode_s = seconds_since(start);
    throw_if_failed(statuses);
    codec_speed const speed{static_cast<double>(bytes) / std::max(encode_s, 1e-9),
                            static_cast<double>(bytes) / std::max(decode_s, 1e-9)};
    measured.remember(key, bytes, speed);
    return speed;
  }
  double pcie_bps() override {
    // A host column crosses no link here; the choice assumes the one it would cross on a GPU.
    return cuda_device_available() ? measured_pcie_bandwidth() : 25e9;
  }

  const column_view& v_;
  const frame_plan& p_;
};

void check_view(const column_view& v, const std::string& name) {
  auto const fail = [&](const std::string& problem) {
    ZS_FAIL(error_code::invalid_argument, "spilling " + describe(name, v.type) + ": " + problem);
  };
  if (!is_valid(v.type)) fail("value type " + std::to_string(static_cast<int>(v.type)) + " is not one zshuffle knows");
  if (!count_fits(v.type, v.count)) fail(std::to_string(v.count) + " values do not fit in 64-bit sizes");
  if (v.type == value_type::string && v.offsets == nullptr) fail("a string column without offsets");
  if (v.type != value_type::string && v.count > 0 && v.data == nullptr) {
    fail(std::to_string(v.count) + " rows but no data");
  }
  if (v.memory == memory_kind::device && !cuda_device_available()) fail("a device column, and no CUDA device here");
}

void check_options(const spill_options& o, const std::string& name, value_type type, memory_kind column) {
  if (o.frame_bytes == 0 || o.batch_bytes == 0 || o.pcie_bandwidth < 0) {
    ZS_FAIL(error_code::invalid_argument, "spilling " + describe(name, type) +
                                              ": spill_options needs frame_bytes and batch_bytes above 0 and a "
                                              "pcie_bandwidth of 0 (measure) or more");
  }
  if (o.prepared && o.prepared->type != type) {
    ZS_FAIL(error_code::invalid_argument, "spilling " + describe(name, type) +
                                              ": spill_options::prepared was made for a column of " +
                                              std::string(to_string(o.prepared->type)) + " values");
  }
  if (o.frames_in == memory_kind::device && column != memory_kind::device) {
    ZS_FAIL(error_code::invalid_argument, "spilling " + describe(name, type) +
                                              ": frames_in device takes a device column; this one is in host memory");
  }
}

void spill_on_host(spill_state& s, const column_view& v, const spill_options& options) {
  auto const start = clock_type::now();
  bool const strings = v.type == value_type::string;
  std::uint64_t const first = strings && v.count > 0 ? static_cast<std::uint64_t>(v.offsets[0]) : 0;
  if (strings) s.chars_bytes = static_cast<std::uint64_t>(v.offsets[v.count]) - first;
  auto const rows = frame_boundaries(v.count, uncompressed_bytes(v.type, v.count, s.chars_bytes), options.frame_bytes);
  std::vector<std::int64_t> ends;
  if (v.type == value_type::string) {
    for (auto const row : rows) ends.push_back(v.offsets[row] - static_cast<std::int64_t>(first));
  }
  frame_plan const p = plan_frames(v.type, rows, ends, options.batch_bytes);
  host_side side(v, p);
  choose_codec(s, options, v, p, side);
  const codec& c = get_codec(s.report.codec);

  std::vector<encode_source> all;
  for (auto const& f : p.frames) all.push_back(frame_source(v, f));
  host_buffer const params = attach_params_host(c, all);
  bool const pinned = cuda_device_available();
  for (std::size_t b = 0; b + 1 < p.batch_begin.size(); ++b) {
    std::size_t const begin = p.batch_begin[b], end = p.batch_begin[b + 1];
    std::span<const encode_source> const sources(all.data() + begin, end - begin);
    auto const layout = layout_frames(c, sources);
    host_buffer scratch(layout.back());
    std::vector<std::uint64_t> sizes(sources.size());
    c.encode_host({sources, scratch.as<std::byte>(), layout, sizes.data()});
    std::uint64_t total = 0;
    for (auto const size : sizes) total += align_frame(size);
    spill_block block(total, pinned, describe(s.name, s.type));
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      spilled_frame f = p.frames[p.batch_begin[b] + i];
      std::memcpy(block.data() + at, scratch.as<std::byte>() + layout[i], sizes[i]);
      f.block = s.blocks.size();
      f.offset = at;
      f.bytes = sizes[i];
      s.frames.push_back(f);
      s.report.spilled_bytes += sizes[i];
      at += align_frame(sizes[i]);
    }
    s.blocks.push_back(std::move(block));
  }
  s.spill_host_seconds = seconds_since(start);
}

}  // namespace

std::pair<std::size_t, std::size_t> frames_of_block(const spill_state& s, std::size_t b, std::size_t from) {
  std::size_t last = from;
  while (last < s.frames.size() && s.frames[last].block == b) ++last;
  return {from, last};
}

namespace {

// The column an unframed spill holds (spill_state::unframed), in host memory.
column unframed_on_host(const spill_state& s) {
  column out = column::allocate(s.type, s.count, memory_kind::host, nullptr, s.chars_bytes);
  mutable_column_view const to = out.mutable_view();
  std::byte const* const from = s.blocks.empty() ? nullptr : s.blocks[0].data();
  if (s.type == value_type::string) {
    auto const* const offsets = reinterpret_cast<const std::int64_t*>(from);
    for (std::uint64_t i = 0; i <= s.count; ++i) to.offsets[i] = offsets[i] - s.first_offset;
    if (s.chars_bytes > 0) std::memcpy(to.data, from + 8 * (s.count + 1), s.chars_bytes);
  } else if (s.count > 0) {
    std::memcpy(to.data, from, s.count * value_width(s.type));
  }
  return out;
}

column restore_on_host(spill_state& s) {
  auto const start = clock_type::now();
  if (s.unframed) {  // the raw fast path's plain copy of the values
    column out = unframed_on_host(s);
    s.restore_seconds = seconds_since(start);
    return out;
  }
  column out = column::allocate(s.type, s.count, memory_kind::host, nullptr, s.chars_bytes);
  if (s.type == value_type::string) out.mutable_view().offsets[0] = 0;
  const codec& c = get_codec(s.report.codec);
  std::size_t next = 0;
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    auto const [first, last] = frames_of_block(s, b, next);
    next = last;
    std::vector<std::uint64_t> offsets;
    std::vector<decode_target> targets;
    for (std::size_t i = first; i < last; ++i) {
      offsets.push_back(s.frames[i].offset);
      targets.push_back(frame_target(out.mutable_view(), s.frames[i]));
    }
    offsets.push_back(last > first ? s.frames[last - 1].offset + s.frames[last - 1].bytes : 0);
    std::vector<frame_status> statuses(targets.size(), frame_status::not_decoded);
    c.decode_host({s.blocks[b].data(), offsets, targets, statuses.data()});
    throw_if_bad_frames(s, statuses, first);
  }
  s.restore_seconds = seconds_since(start);
  return out;
}

}  // namespace

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The handle

spilled_column::spilled_column() = default;
spilled_column::~spilled_column() = default;
spilled_column::spilled_column(spilled_column&& other) noexcept = default;
spilled_column& spilled_column::operator=(spilled_column&& other) noexcept = default;
spilled_column::spilled_column(std::unique_ptr<detail::spill_state> state) noexcept : state_(std::move(state)) {}

detail::spill_state& spilled_column::state() const {
  if (state_ == nullptr) {
    ZS_FAIL(error_code::invalid_argument,
            "a spilled column that holds nothing (moved from, or default constructed): nothing to restore or read");
  }
  return *state_;
}

const std::string& spilled_column::name() const { return state().name; }
value_type spilled_column::type() const { return state().type; }
std::uint64_t spilled_column::size() const { return state().count; }
std::uint64_t spilled_column::chars_bytes() const { return state().chars_bytes; }
bool spilled_column::nullable() const { return state().null_mask != nullptr; }
memory_kind spilled_column::origin() const { return state().origin; }
memory_kind spilled_column::frames_memory() const { return state().frames_memory; }
const spill_report& spilled_column::report() const { return state().report; }

double spilled_column::spill_seconds() const {
  auto& s = state();
  if (!s.spill_stop) return s.spill_host_seconds;
  s.wait_for_spill();
  return static_cast<double>(s.spill_stop->elapsed_ms_since(*s.spill_start)) / 1e3;
}
double spilled_column::restore_seconds() const { return state().restore_seconds; }
std::shared_ptr<const spill_preparation> spilled_column::preparation() const {
  return state_ == nullptr ? nullptr : state_->preparation;
}

// ---------------------------------------------------------------------------------------------
// Spill and restore

namespace {

std::unique_ptr<detail::spill_state> spill_values(const column_view& column, cudaStream_t stream,
                                                  const spill_options& options) {
  auto s = std::make_unique<detail::spill_state>();
  s->name = options.name.empty() ? "column" : options.name;
  detail::check_view(column, s->name);
  detail::check_options(options, s->name, column.type, column.memory);
  s->type = column.type;
  s->count = column.count;
  s->origin = column.memory;
  // A preparation given carries its codec as a choice made before.
  spill_options taken = options;
  if (taken.prepared) taken.chosen_before = taken.prepared->codec;
  if (column.memory == memory_kind::device) {
    detail::spill_on_device(*s, column, stream, taken);
  } else {
    detail::spill_on_host(*s, column, taken);
  }
  return s;
}

// Gives `out` the mask restored from `mask` (a uint8 column of its bytes), in out's memory.
void attach_null_mask(column& out, detail::spill_state& mask, memory_kind memory, cudaStream_t stream);

}  // namespace

spilled_column spill(const column_view& column, cudaStream_t stream, const spill_options& options) {
  auto s = spill_values(column, stream, options);
  if (column.null_mask != nullptr) {
    // The mask as a column of its bytes: raw frames, which the restore checks like any other.
    spill_options mask_options = options;
    mask_options.codec = codec_id::raw;
    mask_options.prepared = nullptr;  // the values' choice, not the mask's
    mask_options.name = s->name + " (null mask)";
    s->null_mask = spill_values(column_view{value_type::uint8, null_mask_bytes(column.count), column.memory,
                                            column.null_mask, nullptr},
                                stream, mask_options);
    s->report.null_mask_bytes = null_mask_bytes(column.count);
    s->report.null_mask_spilled_bytes = s->null_mask->report.spilled_bytes;
  }
  return spilled_column(std::move(s));
}

spilled_column spill(const void* data, value_type type, std::uint64_t count, memory_kind memory, cudaStream_t stream,
                     const spill_options& options) {
  if (type == value_type::string) {
    ZS_FAIL(error_code::invalid_argument,
            "spilling a typed buffer: strings need offsets; spill a column_view of the string column instead");
  }
  return spill(column_view{type, count, memory, data, nullptr}, stream, options);
}

spilled_table spill(const table& t, cudaStream_t stream, const spill_options& options) {
  ZS_EXPECTS(t.names.size() == t.columns.size(), "one name per column of the table");
  spilled_table out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    spill_options named = options;
    named.name = t.names[c];
    out.columns.push_back(spill(t.columns[c].view(), stream, named));
    out.names.push_back(t.names[c]);
    out.logical_types.push_back(t.columns[c].logical());
  }
  return out;
}

column restore(spilled_column& handle, cudaStream_t stream) { return restore(handle, handle.origin(), stream); }

namespace {

// Frames kept on the device to pinned host memory (frames_in device; see move_to_host).
void move_frames_to_host(detail::spill_state& s, cudaStream_t stream) {
  if (s.frames_memory == memory_kind::host) return;
  std::vector<detail::spill_block> moved;
  for (auto& block : s.blocks) {
    moved.emplace_back(block.size(), true, detail::describe(s.name, s.type));
    if (block.size() > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(moved.back().data(), block.data(), block.size(), cudaMemcpyDeviceToHost, stream));
    }
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  s.blocks = std::move(moved);  // the device blocks go back on the stream they were made on
  s.frames_memory = memory_kind::host;
}

column restore_values(detail::spill_state& s, memory_kind memory, cudaStream_t stream) {
  if (memory == memory_kind::host) {
    // The frames of a device spill are complete once its copies are.
    s.wait_for_spill();
    move_frames_to_host(s, stream);
    return detail::restore_on_host(s);
  }
  if (!cuda_device_available()) {
    ZS_FAIL(error_code::invalid_argument,
            "restoring " + detail::describe(s.name, s.type) +
                " to device memory: no CUDA device here (restore it to host memory)");
  }
  return detail::restore_on_device(s, stream);
}

void attach_null_mask(column& out, detail::spill_state& mask, memory_kind memory, cudaStream_t stream) {
  column const bytes = restore_values(mask, memory, stream);
  std::uint8_t* const to = out.add_null_mask(stream);
  if (bytes.size() == 0) return;
  if (memory == memory_kind::host) {
    std::memcpy(to, bytes.view().data, bytes.size());
  } else {
    ZS_CUDA_TRY(cudaMemcpyAsync(to, bytes.view().data, bytes.size(), cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

column restore(spilled_column& handle, memory_kind memory, cudaStream_t stream) {
  auto& s = handle.state();
  column out = restore_values(s, memory, stream);
  if (s.null_mask) attach_null_mask(out, *s.null_mask, memory, stream);
  return out;
}

table restore(spilled_table& t, cudaStream_t stream) {
  table out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    out.columns.push_back(restore(t.columns[c], stream));
    if (c < t.logical_types.size()) out.columns.back().set_logical(t.logical_types[c]);
    out.names.push_back(c < t.names.size() ? t.names[c] : t.columns[c].name());
  }
  return out;
}

void move_to_host(spilled_column& handle, cudaStream_t stream) {
  auto& s = handle.state();
  move_frames_to_host(s, stream);
  if (s.null_mask) move_frames_to_host(*s.null_mask, stream);
}

void move_to_host(spilled_table& t, cudaStream_t stream) {
  for (auto& c : t.columns) move_to_host(c, stream);
}

void release_spill_host_cache() noexcept { detail::pinned_cache::get().clear(); }

double reserve_spill_host_memory(std::uint64_t bytes) {
  auto const start = std::chrono::steady_clock::now();
  detail::pinned_cache::get().reserve(bytes);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// The file tier (docs/SPILL.md, "File layout")

namespace {

constexpr char file_magic[8] = {'Z', 'S', 'S', 'P', 'I', 'L', 'L', '1'};
// Version 1 files hold one section, the values'; version 2 adds a word of flags after the
// version and, where the column has a null mask, the mask's section after the values' frames.
constexpr std::uint64_t file_version = 2;
constexpr std::uint64_t flag_null_mask = 1;
constexpr std::uint64_t section_header_words = 8;
constexpr std::uint64_t words_per_frame = 7;

void put(std::string& out, std::uint64_t v) {
  std::byte b[8];
  detail::store_le(b, v, 8);
  out.append(reinterpret_cast<const char*>(b), 8);
}

// The frames of `s` as a file holds them: the raw fast path kept none, so its values are
// framed here (into `framed`) as a raw spill would have framed them.
const detail::spill_state& with_frames(const detail::spill_state& s, detail::spill_state& framed) {
  if (!s.unframed) return s;
  framed.name = s.name;
  framed.type = s.type;
  framed.count = s.count;
  framed.origin = s.origin;
  spill_options raw;
  raw.codec = codec_id::raw;
  column const values = detail::unframed_on_host(s);
  detail::spill_on_host(framed, values.view(), raw);
  return framed;
}

// Appends a section's header, name and frame table to `head`, then their checksum over `head`
// from `checked_from` on (for the values' section, the file's header too).
void put_section_head(std::string& head, std::size_t checked_from, const detail::spill_state& s) {
  for (std::uint64_t v : {static_cast<std::uint64_t>(s.type), static_cast<std::uint64_t>(s.origin),
                          static_cast<std::uint64_t>(s.report.codec), s.count, s.chars_bytes,
                          static_cast<std::uint64_t>(s.frames.size()), static_cast<std::uint64_t>(s.blocks.size()),
                          static_cast<std::uint64_t>(s.name.size())}) {
    put(head, v);
  }
  head += s.name;
  std::uint64_t at = 0;
  for (auto const& f : s.frames) {
    for (std::uint64_t v : {f.row, f.rows, f.chars_begin, f.chars, f.block, at, f.bytes}) put(head, v);
    at += align_frame(f.bytes);
  }
  put(head, hash::checksum(reinterpret_cast<const std::byte*>(head.data()) + checked_from, head.size() - checked_from));
}

// Writes a section's head, then its frames straight from their blocks, each padded.
void write_section(std::ofstream& file, const std::string& head, const detail::spill_state& s) {
  static constexpr char zeros[frame_alignment] = {};
  file.write(head.data(), static_cast<std::streamsize>(head.size()));
  for (auto const& f : s.frames) {
    file.write(reinterpret_cast<const char*>(s.blocks[f.block].data() + f.offset), static_cast<std::streamsize>(f.bytes));
    file.write(zeros, static_cast<std::streamsize>(align_frame(f.bytes) - f.bytes));
  }
}

// The file's 64-bit word at `at`, which moves past it; `fail` throws where the file ends first
// (`what`: the part of the file being read).
template <class Fail>
std::uint64_t read_word(const std::string& bytes, std::uint64_t& at, const char* what, const Fail& fail) {
  if (bytes.size() - at < 8) fail(std::string("truncated: it ends in its ") + what);
  std::uint64_t const v = detail::load_le(reinterpret_cast<const std::byte*>(bytes.data()) + at, 8);
  at += 8;
  return v;
}

// Reads the section at `at` (its checksum covers the bytes from `checked_from`) into a state
// whose blocks hold its frames, each frame checked; `at` moves past its frames. `fail` throws.
template <class Fail>
std::unique_ptr<detail::spill_state> read_section(const std::string& bytes, std::uint64_t& at,
                                                  std::uint64_t checked_from, const Fail& fail) {
  auto const* data = reinterpret_cast<const std::byte*>(bytes.data());
  std::uint64_t const size = bytes.size();
  auto const word = [&](const char* what) { return read_word(bytes, at, what, fail); };
  std::uint64_t head[section_header_words];
  for (auto& v : head) v = word("header");
  auto s = std::make_unique<detail::spill_state>();
  s->type = static_cast<value_type>(head[0]);
  if (head[0] > 255 || !is_valid(s->type)) fail("an unknown value type");
  if (head[1] > 1) fail("an unknown memory kind");
  s->origin = static_cast<memory_kind>(head[1]);
  if (head[2] > max_codec_id) fail("an unknown codec id");
  s->report.codec = static_cast<codec_id>(head[2]);
  s->count = head[3];
  s->chars_bytes = head[4];
  std::uint64_t const frames = head[5], blocks = head[6], name_bytes = head[7];
  if (!count_fits(s->type, s->count)) fail("a value count whose sizes do not fit in 64 bits");
  if (name_bytes > size - at) fail("truncated: it ends in the column's name");
  s->name.assign(bytes.data() + at, name_bytes);
  at += name_bytes;
  if (frames > (size - at) / (words_per_frame * 8) || blocks > frames) fail("truncated: it ends in its frame table");
  std::uint64_t expected_at = 0, row = 0, chars = 0;
  std::vector<std::uint64_t> block_bytes(blocks, 0);
  for (std::uint64_t i = 0; i < frames; ++i) {
    detail::spilled_frame f;
    f.row = word("frame table");
    f.rows = word("frame table");
    f.chars_begin = word("frame table");
    f.chars = word("frame table");
    f.block = word("frame table");
    f.offset = word("frame table");
    f.bytes = word("frame table");
    // Frames cover the rows in order, in blocks in order, one after another in the file.
    bool const in_order = f.row == row && f.chars_begin == chars && f.offset == expected_at && f.block < blocks &&
                          (i == 0 ? f.block == 0
                                  : f.block == s->frames.back().block || f.block == s->frames.back().block + 1);
    if (!in_order || f.bytes > size || add_overflows(row, f.rows) || add_overflows(chars, f.chars)) {
      fail("its frame table is inconsistent at frame " + std::to_string(i));
    }
    row += f.rows;
    chars += f.chars;
    expected_at += align_frame(f.bytes);
    s->frames.push_back(f);
  }
  if (frames == 0 ? blocks != 0 : s->frames.back().block + 1 != blocks) fail("its frame table is inconsistent: blocks");
  std::uint64_t const table_end = at;
  std::uint64_t const checksum = word("header checksum");
  if (checksum != hash::checksum(data + checked_from, table_end - checked_from)) {
    fail("its header checksum does not match (the header is corrupted)");
  }
  if (row != s->count || (s->type == value_type::string && chars != s->chars_bytes)) {
    fail("its frames do not cover the column's " + std::to_string(s->count) + " rows");
  }
  if (size - at < expected_at) {
    fail("truncated: " + std::to_string(size - at) + " bytes of frames, the table lists " +
         std::to_string(expected_at));
  }

  // Blocks as the spill had them, so that restore batches alike; each frame checked as it lands.
  const codec& c = get_codec(s->report.codec);
  bool const pinned = cuda_device_available();
  std::uint64_t const frames_at = at;
  for (auto& f : s->frames) block_bytes[f.block] += align_frame(f.bytes);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    s->blocks.emplace_back(block_bytes[b], pinned, detail::describe(s->name, s->type));
  }
  std::uint64_t block_at = 0, previous_block = 0;
  for (std::size_t i = 0; i < s->frames.size(); ++i) {
    auto& f = s->frames[i];
    if (f.block != previous_block) block_at = 0, previous_block = f.block;
    const std::byte* frame = data + frames_at + f.offset;
    frame_expectation const expect{c.decodes(), s->type, f.rows,
                                   s->type == value_type::string ? f.chars : f.rows * value_width(s->type),
                                   c.params_bytes(s->type)};
    frame_status const status = validate_frame_host(frame, f.bytes, expect);
    if (status != frame_status::ok) {
      fail("frame " + std::to_string(i) + " of " + std::to_string(frames) + ": " + std::string(to_string(status)));
    }
    for (std::uint64_t k = f.bytes; k < align_frame(f.bytes); ++k) {
      if (frame[k] != std::byte{0}) fail("the padding after frame " + std::to_string(i) + " is not zero (corrupted)");
    }
    std::memcpy(s->blocks[f.block].data() + block_at, frame, f.bytes);
    f.offset = block_at;
    block_at += align_frame(f.bytes);
    s->report.spilled_bytes += f.bytes;
  }
  at = frames_at + expected_at;
  s->report.codec_name = std::string(c.name());
  s->report.raw_bytes = detail::uncompressed_bytes(s->type, s->count, s->chars_bytes);
  s->report.frames = frames;
  return s;
}

}  // namespace

void spill_to_file(const spilled_column& handle, const std::filesystem::path& path) {
  detail::spill_state& values = handle.state();
  if (values.frames_memory == memory_kind::device) {
    ZS_FAIL(error_code::invalid_argument, "writing " + detail::describe(values.name, values.type) + " to " +
                                              path.string() + ": its frames are in device memory (move_to_host first)");
  }
  values.wait_for_spill();
  if (values.null_mask) values.null_mask->wait_for_spill();
  detail::spill_state framed_values, framed_mask;
  const detail::spill_state& written = with_frames(values, framed_values);
  std::string head(file_magic, sizeof file_magic);
  put(head, file_version);
  put(head, values.null_mask ? flag_null_mask : 0);
  put_section_head(head, 0, written);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  auto const fail = [&](const std::string& problem) {
    ZS_FAIL(error_code::io_error,
            "spilling " + detail::describe(values.name, values.type) + " to '" + path.string() + "': " + problem);
  };
  if (!file) fail("cannot open the file for writing");
  write_section(file, head, written);
  if (values.null_mask) {
    const detail::spill_state& mask = with_frames(*values.null_mask, framed_mask);
    std::string mask_head;
    put_section_head(mask_head, 0, mask);
    write_section(file, mask_head, mask);
  }
  file.flush();
  if (!file) fail("not every byte reached the file (is the disk full?)");
}

spilled_column restore_from_file(const std::filesystem::path& path) {
  std::string const bytes = detail::read_regular_file(path, "spill file");
  std::string part;  // which section the reader is in, for the message
  auto const fail = [&](const std::string& problem) {
    ZS_FAIL(error_code::corrupt_frame, "spill file '" + path.string() + "': " + part + problem);
  };
  std::uint64_t const size = bytes.size();
  if (size < sizeof file_magic || std::memcmp(bytes.data(), file_magic, sizeof file_magic) != 0) {
    fail("not a spill file (no ZSSPILL1 at its start)");
  }
  std::uint64_t at = sizeof file_magic;
  auto const word = [&](const char* what) { return read_word(bytes, at, what, fail); };
  std::uint64_t const version = word("header");
  if (version != 1 && version != file_version) {
    fail("version " + std::to_string(version) + ", expected 1 or " + std::to_string(file_version));
  }
  std::uint64_t const flags = version == 1 ? 0 : word("header");
  if ((flags & ~flag_null_mask) != 0) fail("unknown flags in its header");
  auto s = read_section(bytes, at, 0, fail);
  if ((flags & flag_null_mask) != 0) {
    part = "its null mask section: ";
    std::uint64_t const mask_at = at;
    s->null_mask = read_section(bytes, at, mask_at, fail);
    auto const& mask = *s->null_mask;
    if (mask.type != value_type::uint8 || mask.count != null_mask_bytes(s->count)) {
      fail("not the " + std::to_string(null_mask_bytes(s->count)) + " bytes of a mask of " + std::to_string(s->count) +
           " rows");
    }
    s->report.null_mask_bytes = mask.count;
    s->report.null_mask_spilled_bytes = mask.report.spilled_bytes;
    part.clear();
  }
  if (at != size) fail(std::to_string(size - at) + " bytes after the last frame");
  return spilled_column(std::move(s));
}

}  // namespace zs
