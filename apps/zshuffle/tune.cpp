// zshuffle tune: measures the launch tunables of every swept kernel on this GPU, on real data,
// and writes the best ones to a tuning table (docs/TUNING.md).
//
// For each size class, kernel and value type the kernel runs inside the codec calls that its
// spec's workload names (kernel_spec::tune: which codec, encode and/or decode, which types), on
// the data directory's columns tiled on the device to the class's batch size and cut into
// --frames frames. Each candidate is put in force through the process-wide table, its output is compared
// byte for byte with the defaults' output (a geometry must never change results), and only the
// kernel under tuning is timed: CUDA events around its launches, reported by a launch observer,
// the median of --repeat runs after --warmup runs. The sweep has two stages: block shapes
// (threads x items) at the default waves, then waves for the best shape. A candidate replaces
// the defaults only when it is at least --min-gain faster.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "geometry.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace {

namespace fs = std::filesystem;
using zs::launch_params;
using zs::size_class;
using zs::value_type;

constexpr std::uint64_t small_tune_bytes = std::uint64_t{4} << 20;
constexpr std::uint64_t medium_tune_bytes = std::uint64_t{64} << 20;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// --- timing one kernel inside a codec call ---------------------------------------------------

// Records an event pair around every launch of one kernel; the launches' time is the sum of
// their pairs, and their work the sum of their batch bytes.
class kernel_timer final : public zs::launch_observer {
 public:
  explicit kernel_timer(std::string kernel) : kernel_(std::move(kernel)) {}

  void before_launch(const zs::launch_record& r, cudaStream_t stream) override {
    if (r.choice.kernel != kernel_) return;
    if (used_ == events_.size()) events_.emplace_back();
    events_[used_].first.record(stream);
  }
  void after_launch(const zs::launch_record& r, cudaStream_t stream) override {
    if (r.choice.kernel != kernel_) return;
    events_[used_].second.record(stream);
    ++used_;
    records_.push_back(r);
  }

  void reset() {
    used_ = 0;
    records_.clear();
  }
  /// Milliseconds of the recorded launches; their events must have completed.
  double elapsed_ms() const {
    double ms = 0;
    for (std::size_t i = 0; i < used_; ++i) ms += events_[i].second.elapsed_ms_since(events_[i].first);
    return ms;
  }
  std::uint64_t work_bytes() const {
    std::uint64_t bytes = 0;
    for (auto const& r : records_) bytes += r.choice.batch_bytes;
    return bytes;
  }
  const std::vector<zs::launch_record>& records() const { return records_; }

 private:
  std::string kernel_;
  std::vector<std::pair<zs::cuda_event, zs::cuda_event>> events_;
  std::size_t used_ = 0;
  std::vector<zs::launch_record> records_;
};

// --- data ------------------------------------------------------------------------------------

// Copies `first` bytes of `src` to the start of `dst`, then doubles them on the device to `total`.
void tile(zs::device_buffer& dst, const void* src, std::uint64_t first, std::uint64_t total, cudaStream_t stream) {
  first = std::min(first, total);
  zs::copy_async(dst.data(), src, first, stream);
  for (std::uint64_t have = first; have < total;) {
    std::uint64_t const n = std::min(have, total - have);
    ZS_CUDA_TRY(cudaMemcpyAsync(dst.as<std::byte>() + have, dst.data(), n, cudaMemcpyDeviceToDevice, stream));
    have += n;
  }
}

// The integer columns of the data directory, concatenated per value type on the host; the
// 64-bit types also take the 32-bit columns widened (real values at a wider type), since
// the data directory holds few 64-bit integer columns.
std::map<value_type, std::vector<std::byte>> integer_data(const std::vector<zs::column>& columns) {
  std::map<value_type, std::vector<std::byte>> data;
  auto append = [&](value_type type, const void* p, std::size_t bytes) {
    auto& v = data[type];
    auto const* b = static_cast<const std::byte*>(p);
    v.insert(v.end(), b, b + bytes);
  };
  for (auto const& c : columns) {
    if (!zs::is_integer(c.type())) continue;
    append(c.type(), c.view().data, c.data_bytes());
    if (c.type() == value_type::int32) {
      auto const* v = c.view().values<std::int32_t>();
      std::vector<std::int64_t> wide(v, v + c.size());
      append(value_type::int64, wide.data(), wide.size() * 8);
    } else if (c.type() == value_type::uint32) {
      auto const* v = c.view().values<std::uint32_t>();
      std::vector<std::uint64_t> wide(v, v + c.size());
      append(value_type::uint64, wide.data(), wide.size() * 8);
    }
  }
  return data;
}

// A tiled integer column on the device, `bytes` long; smaller classes use a prefix of it.
struct device_values {
  value_type type = value_type::int32;
  zs::device_buffer values;
  std::uint64_t count = 0;
};

device_values tile_values(value_type type, const std::vector<std::byte>& host, std::uint64_t bytes,
                          cudaStream_t stream) {
  device_values d;
  d.type = type;
  d.count = bytes / zs::value_width(type);
  d.values = zs::device_buffer(d.count * zs::value_width(type), stream);
  tile(d.values, host.data(), host.size(), d.values.size(), stream);
  return d;
}

// The string columns, concatenated, tiled by rows on the device: `rows` strings, whose offsets
// repeat the real columns' with the characters of each repetition after the previous one's.
struct device_strings {
  zs::device_buffer chars;
  zs::device_buffer offsets;  // rows + 1
  std::uint64_t rows = 0;
  std::vector<std::int64_t> host_offsets;
};

device_strings tile_strings(const std::vector<zs::column>& columns, std::uint64_t rows, cudaStream_t stream) {
  std::vector<std::byte> chars;
  std::vector<std::int64_t> lengths;
  for (auto const& c : columns) {
    if (c.type() != value_type::string) continue;
    auto const* off = c.view().offsets;
    auto const* base = static_cast<const std::byte*>(c.view().data);
    chars.insert(chars.end(), base + off[0], base + off[c.size()]);
    for (std::uint64_t i = 0; i < c.size(); ++i) lengths.push_back(off[i + 1] - off[i]);
  }
  ZS_EXPECTS(!lengths.empty(), "string columns (*.txt) in the data directory");
  device_strings s;
  s.rows = rows;
  s.host_offsets.resize(rows + 1);
  s.host_offsets[0] = 0;
  for (std::uint64_t i = 0; i < rows; ++i) s.host_offsets[i + 1] = s.host_offsets[i] + lengths[i % lengths.size()];
  std::uint64_t const total = static_cast<std::uint64_t>(s.host_offsets[rows]);
  s.chars = zs::device_buffer(std::max<std::uint64_t>(total, 1), stream);
  tile(s.chars, chars.data(), chars.size(), total, stream);
  s.offsets = zs::device_buffer((rows + 1) * 8, stream);
  zs::copy_async(s.offsets.data(), s.host_offsets.data(), (rows + 1) * 8, stream);
  return s;
}

// --- workloads: one codec call around the kernel being tuned ---------------------------------

class workload {
 public:
  // Frames of `sources` are encoded with `codec` (when `calls` encode) and decoded (when they
  // decode); a decode-only workload decodes frames encoded once here, under the table then in
  // force. `what` is compared between candidates: the outputs the kernel under tuning decides.
  workload(const zs::codec& codec, std::vector<zs::encode_source> sources, zs::tune_calls calls,
           zs::tune_outputs what, cudaStream_t stream)
      : codec_(codec),
        sources_(std::move(sources)),
        encode_(calls != zs::tune_calls::decode),
        decode_(calls != zs::tune_calls::encode),
        what_(what),
        stream_(stream) {
    offsets_ = zs::layout_frames(codec_, sources_);
    frames_ = zs::device_buffer(offsets_.back(), stream_);
    ZS_CUDA_TRY(cudaMemsetAsync(frames_.data(), 0, frames_.size(), stream_));
    frame_bytes_ = zs::device_buffer(sources_.size() * 8, stream_);
    for (auto const& s : sources_) {
      if (!decode_) break;
      zs::decode_target t{s.type, s.count};
      std::uint64_t const bytes = s.raw_bytes();
      outputs_.emplace_back(std::max<std::uint64_t>(bytes, 1), stream_);
      ZS_CUDA_TRY(cudaMemsetAsync(outputs_.back().data(), 0, outputs_.back().size(), stream_));
      t.values = outputs_.back().data();
      if (s.type == value_type::string) {
        string_offsets_.emplace_back((s.count + 1) * 8, stream_);
        ZS_CUDA_TRY(cudaMemsetAsync(string_offsets_.back().data(), 0, string_offsets_.back().size(), stream_));
        t.offsets = string_offsets_.back().as<std::int64_t>();
        t.chars_bytes = s.chars_bytes;
      }
      targets_.push_back(t);
    }
    status_ = zs::device_buffer(sources_.size() * sizeof(zs::frame_status), stream_);
    if (!encode_) {
      encode_temp_ = zs::device_buffer(std::max<std::size_t>(codec_.encode_temp_bytes(sources_), 1), stream_);
      run_encode();
      ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
      encode_temp_ = zs::device_buffer();
    }
  }

  // Scratch sizes depend on the table in force (the decoder's D): ask again after a change.
  void prepare() {
    if (encode_) {
      encode_temp_ = zs::device_buffer(std::max<std::size_t>(codec_.encode_temp_bytes(sources_), 1), stream_);
    }
    if (decode_) {
      decode_temp_ = zs::device_buffer(std::max<std::size_t>(codec_.decode_temp_bytes(targets_), 1), stream_);
    }
  }

  void run() {
    if (encode_) run_encode();
    if (decode_) {
      codec_.decode_async({frames_.as<std::byte>(), offsets_, targets_, status_.as<zs::frame_status>()},
                          decode_temp_.data(), decode_temp_.size(), stream_);
    }
  }

  // Puts what the kernel under tuning decided into `out` (synchronises).
  void capture(std::vector<std::byte>& out) const {
    out.clear();
    // Each piece lands before `out` grows again, since growing may move it.
    auto grab = [&](const void* device, std::size_t bytes) {
      std::size_t const at = out.size();
      out.resize(at + bytes);
      if (bytes == 0) return;
      zs::copy_async(out.data() + at, device, bytes, stream_);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
    };
    std::size_t const n = sources_.size();
    if (what_.frames) {
      grab(frame_bytes_.data(), n * 8);
      grab(frames_.data(), frames_.size());
    }
    if (what_.headers) {
      for (std::size_t f = 0; f < n; ++f) grab(frames_.as<std::byte>() + offsets_[f], zs::frame_header_bytes);
    }
    if (decode_) grab(status_.data(), n * sizeof(zs::frame_status));
    if (what_.decoded_values) {
      for (std::size_t f = 0; f < n; ++f) {
        if (sources_[f].type != value_type::string) grab(outputs_[f].data(), sources_[f].raw_bytes());
      }
    }
    if (what_.decoded_offsets) {
      for (auto const& o : string_offsets_) grab(o.data(), o.size());
    }
    ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
  }

  /// Whether every frame decoded (after a run that decodes).
  bool all_ok(const std::vector<std::byte>& captured) const {
    if (!decode_) return true;
    std::size_t at = 0;
    if (what_.frames) at += sources_.size() * 8 + frames_.size();
    if (what_.headers) at += sources_.size() * zs::frame_header_bytes;
    for (std::size_t f = 0; f < sources_.size(); ++f) {
      zs::frame_status status{};
      std::memcpy(&status, captured.data() + at + f * sizeof status, sizeof status);
      if (status != zs::frame_status::ok) return false;
    }
    return true;
  }

 private:
  void run_encode() {
    codec_.encode_async({sources_, frames_.as<std::byte>(), offsets_, frame_bytes_.as<std::uint64_t>()},
                        encode_temp_.data(), encode_temp_.size(), stream_);
  }

  const zs::codec& codec_;
  std::vector<zs::encode_source> sources_;
  bool encode_, decode_;
  zs::tune_outputs what_;
  cudaStream_t stream_;
  std::vector<std::uint64_t> offsets_;
  zs::device_buffer frames_, frame_bytes_, status_, encode_temp_, decode_temp_;
  std::vector<zs::device_buffer> outputs_, string_offsets_;
  std::vector<zs::decode_target> targets_;
};

std::vector<zs::encode_source> cut_values(const device_values& d, std::uint64_t count, std::uint64_t frames) {
  std::size_t const width = zs::value_width(d.type);
  std::vector<zs::encode_source> sources;
  for (std::uint64_t f = 0; f < frames; ++f) {
    std::uint64_t const begin = count * f / frames, end = count * (f + 1) / frames;
    sources.push_back({d.type, end - begin, d.values.as<std::byte>() + begin * width});
  }
  return sources;
}

std::vector<zs::encode_source> cut_strings(const device_strings& s, std::uint64_t rows, std::uint64_t frames) {
  std::vector<zs::encode_source> sources;
  for (std::uint64_t f = 0; f < frames; ++f) {
    std::uint64_t const begin = rows * f / frames, end = rows * (f + 1) / frames;
    auto const chars = static_cast<std::uint64_t>(s.host_offsets[end] - s.host_offsets[begin]);
    sources.push_back({value_type::string, end - begin, s.chars.data(), s.offsets.as<std::int64_t>() + begin, chars});
  }
  return sources;
}

// --- the batches a workload runs on ----------------------------------------------------------

// The data directory's columns on the device, tiled to the large class's batch size when first
// asked for; the smaller classes take a prefix.
class batch_maker {
 public:
  batch_maker(const std::vector<zs::column>& columns, std::uint64_t large_bytes, cudaStream_t stream)
      : columns_(columns), host_ints_(integer_data(columns)), large_bytes_(large_bytes), stream_(stream) {}

  // Whether the data directory has columns to make batches of `type` from.
  bool has(value_type type) const {
    if (type == value_type::string) {
      return std::any_of(columns_.begin(), columns_.end(),
                         [](const zs::column& c) { return c.type() == value_type::string; });
    }
    auto const h = host_ints_.find(type);
    return h != host_ints_.end() && !h->second.empty();
  }

  // `type`, or where the data directory has none of it, a type of the same width and kind that
  // it has; nullopt when there is neither.
  std::optional<value_type> same_width_as(value_type type) const {
    if (has(type)) return type;
    for (auto const& [other, host] : host_ints_) {
      bool const same_kind =
          (zs::is_integer(other) && zs::is_integer(type)) || (zs::is_float(other) && zs::is_float(type));
      if (same_kind && zs::value_width(other) == zs::value_width(type) && !host.empty()) return other;
    }
    return std::nullopt;
  }

  // A batch of `frames` frames of `type` for a size class of `bytes`: bytes / width values, or
  // for strings bytes / 8 rows (their offsets fill the class; the characters come on top).
  std::vector<zs::encode_source> batch(value_type type, std::uint64_t bytes, std::uint64_t frames) {
    if (type == value_type::string) {
      if (!strings_) strings_ = tile_strings(columns_, large_bytes_ / 8, stream_);
      return cut_strings(*strings_, bytes / 8, frames);
    }
    ZS_EXPECTS(has(type), "columns of " + std::string(zs::to_string(type)) + " in the data directory");
    auto it = values_.find(type);
    if (it == values_.end()) {
      it = values_.emplace(type, tile_values(type, host_ints_.at(type), large_bytes_, stream_)).first;
    }
    return cut_values(it->second, bytes / zs::value_width(type), frames);
  }

 private:
  const std::vector<zs::column>& columns_;
  std::map<value_type, std::vector<std::byte>> host_ints_;
  std::uint64_t large_bytes_;
  cudaStream_t stream_;
  std::map<value_type, device_values> values_;
  std::optional<device_strings> strings_;
};

// The value types tune makes batches of: the integer columns, and the strings.
bool tune_has_batches_of(value_type type) { return zs::is_integer(type) || type == value_type::string; }

// --- each swept kernel's workload, as its spec describes it ----------------------------------

// One table entry a workload makes per size class: the key's type (empty: any type) and the
// type of the batches it is measured on.
struct planned_entry {
  std::optional<value_type> key_type;
  value_type data_type = value_type::int32;
};

// A swept kernel, the codec whose calls run it, and its entries per size class in this run.
struct kernel_plan {
  const zs::kernel_spec* kernel = nullptr;
  const zs::codec* codec = nullptr;
  std::vector<planned_entry> entries;
};

// The plan of a swept kernel for `types` (--types), from its spec's workload. Throws zs::error
// (unsupported), naming the kernel, when the spec names no workload, its codec is not
// registered, or the codec does not support the type the workload names: before the sweep.
kernel_plan plan_of(const zs::kernel_spec& kernel, const std::vector<value_type>& types) {
  std::string const name(kernel.name);
  zs::tune_workload const& w = kernel.tune;
  if (w.codec.empty()) {
    ZS_FAIL(zs::error_code::unsupported,
            "zshuffle tune has no workload for the swept kernel '" + name + "' (its spec names no codec)");
  }
  kernel_plan plan;
  plan.kernel = &kernel;
  try {
    plan.codec = &zs::get_codec(w.codec);
  } catch (const zs::error& e) {
    ZS_FAIL(zs::error_code::unsupported, "zshuffle tune cannot run the swept kernel '" + name + "': " + e.message());
  }
  if (w.types == zs::tuned_types::each) {
    for (value_type type : types) {
      if (plan.codec->supports(type)) plan.entries.push_back({type, type});
    }
    return plan;
  }
  if (!plan.codec->supports(w.type) || !tune_has_batches_of(w.type)) {
    ZS_FAIL(zs::error_code::unsupported, "zshuffle tune cannot run the swept kernel '" + name + "' on " +
                                             std::string(zs::to_string(w.type)) + " values through the codec '" +
                                             std::string(w.codec) + "'");
  }
  std::optional<value_type> const key = w.types == zs::tuned_types::any ? std::nullopt : std::optional(w.type);
  plan.entries.push_back({key, w.type});
  return plan;
}

// --- the sweep -------------------------------------------------------------------------------

struct measurement {
  launch_params params;
  double gbs = 0;
  std::string geometry;  // as launched: threads x grid ...
  bool valid = false;    // ran, and gave the defaults' output
  std::string problem;
};

std::string short_geometry(const zs::kernel_spec& kernel, const launch_params& p,
                           const std::vector<zs::launch_record>& records) {
  const zs::launch_record* launched = records.empty() ? nullptr : &zs::cli::largest_launch(records);
  std::string s = std::to_string(p.threads) + "t";
  if (launched != nullptr) s += " x " + std::to_string(launched->geometry.grid);
  s += p.waves == 0 ? std::string(" (no cap") : " (w" + std::to_string(p.waves);
  if (launched != nullptr) s += ", " + std::to_string(launched->geometry.blocks_per_sm) + "/SM";
  s += ")";
  if (!kernel.items.empty()) s += " i" + std::to_string(p.items);
  return s;
}

struct sweep_options {
  int warmup = 1;
  int repeat = 5;
  double min_gain = 0.02;
};

class tuner {
 public:
  tuner(const zs::device_profile& device, sweep_options options, cudaStream_t stream,
        zs::cli::progress_display& progress)
      : device_(device), options_(options), stream_(stream), progress_(progress) {}

  // The key of the entry a workload's launches of `kernel` look up.
  zs::tuning_key key(const zs::kernel_spec& kernel, std::optional<value_type> type, size_class size) const {
    return {device_.name, device_.compute_major, device_.compute_minor, std::string(kernel.name), type, size};
  }

  measurement measure(workload& w, const zs::tuning_key& k, const launch_params& params,
                      std::vector<std::byte>* reference) {
    measurement m;
    m.params = params;
    zs::tuning_table table;
    table.set({k, params});
    zs::set_tuning(table);
    kernel_timer timer(k.kernel);
    zs::scoped_launch_observer const observe(timer);
    try {
      w.prepare();
      w.run();
      w.capture(scratch_);
      if (!w.all_ok(scratch_)) {
        m.problem = "a frame did not decode";
        return m;
      }
      if (reference != nullptr && reference->empty()) {
        *reference = scratch_;
      } else if (reference != nullptr && *reference != scratch_) {
        m.problem = "output differs from the defaults'";
        return m;
      }
      for (int i = 0; i < options_.warmup; ++i) w.run();
      std::vector<double> ms;
      std::uint64_t bytes = 0;
      for (int i = 0; i < options_.repeat; ++i) {
        timer.reset();
        w.run();
        ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
        ms.push_back(timer.elapsed_ms());
        bytes = timer.work_bytes();
      }
      auto const& records = timer.records();
      if (records.empty()) {
        m.problem = "the kernel did not run";
        return m;
      }
      for (auto const& r : records) {
        if (!r.choice.from_table || r.choice.params != params) {
          ZS_FAIL(zs::error_code::internal,
                  "a launch of " + k.kernel + " did not take the table's params: " + zs::describe(r));
        }
      }
      double const t = median(ms);
      m.gbs = t > 0 ? static_cast<double>(bytes) / t / 1e6 : 0;
      m.geometry = short_geometry(zs::get_kernel_spec(k.kernel), params, records);
      m.valid = true;
    } catch (const zs::error& e) {
      if (e.code() != zs::error_code::cuda_error && e.code() != zs::error_code::out_of_memory) throw;
      m.problem = e.what();
    }
    return m;
  }

  // Both stages for one key; returns the defaults' and the chosen measurement.
  std::pair<measurement, measurement> sweep(workload& w, const zs::tuning_key& k, bool& mismatch) {
    zs::kernel_spec const& spec = zs::get_kernel_spec(k.kernel);
    launch_params const defaults = zs::default_params(spec, device_);
    std::vector<std::byte> reference;
    measurement const base = measure(w, k, defaults, &reference);
    if (!base.valid) ZS_FAIL(zs::error_code::internal, "the defaults of " + k.kernel + " failed: " + base.problem);
    measurement best = base;
    std::vector<launch_params> tried{defaults};
    auto consider = [&](const launch_params& p) {
      if (std::find(tried.begin(), tried.end(), p) != tried.end() || !zs::valid_params(spec, p)) return;
      tried.push_back(p);
      if (device_.max_threads_per_block > 0 && p.threads > static_cast<unsigned>(device_.max_threads_per_block)) return;
      measurement const m = measure(w, k, p, &reference);
      if (!m.valid) {
        progress_.clear();
        std::printf("    note: %s: %s\n", zs::to_string(spec, p).c_str(), m.problem.c_str());
        if (m.problem.find("differs") != std::string::npos) mismatch = true;
        return;
      }
      if (m.gbs > best.gbs) best = m;
    };
    // Stage 1: block shapes at the default waves.
    std::vector<unsigned> items = spec.items.empty() ? std::vector<unsigned>{0}
                                                     : std::vector<unsigned>(spec.items.begin(), spec.items.end());
    for (unsigned t : spec.threads) {
      for (unsigned i : items) consider({t, defaults.waves, i});
    }
    // Stage 2: waves for the best shape.
    launch_params const shape = best.params;
    for (unsigned waves : {1U, 2U, 4U, 8U, 16U, 0U}) consider({shape.threads, waves, shape.items});
    if (best.gbs < base.gbs * (1 + options_.min_gain)) best = base;
    zs::set_tuning({});  // defaults again for whatever runs next
    return {base, best};
  }

 private:
  const zs::device_profile& device_;
  sweep_options options_;
  cudaStream_t stream_;
  zs::cli::progress_display& progress_;
  std::vector<std::byte> scratch_;
};

}  // namespace

int run_tune(int argc, char** argv) {
  std::string data, out_path, markdown_path;
  std::uint64_t large_bytes = std::uint64_t{512} << 20;
  std::vector<std::string> class_names{"small", "medium", "large"};
  std::vector<std::string> kernel_names;
  for (const zs::kernel_spec* s : zs::kernel_specs()) {
    if (s->swept) kernel_names.emplace_back(s->name);
  }
  std::vector<std::string> type_names{"int32", "uint32", "int64", "uint64"};
  std::uint64_t frames = 64;
  sweep_options options;
  double min_gain_pct = options.min_gain * 100;
  bool fresh = false, dry_run = false;
  zs::cli::progress_flags progress_flags;
  CLI::App app{"Measures the launch tunables of every swept kernel on this GPU, on real data, and writes the best "
               "ones to a tuning table (docs/TUNING.md).",
               "zshuffle tune"};
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  zs::cli::add_size_option(app, "--bytes", large_bytes, "batch size of the large class (medium 64M, small 4M)",
                           zs::medium_batch_bytes);
  app.add_option("--classes", class_names, "size classes to tune, comma separated")->delimiter(',')->capture_default_str();
  app.add_option("--kernels", kernel_names, "kernels to tune, comma separated (default: every swept kernel)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--types", type_names,
                 "value types for the kernels tuned per type (those their codec supports), comma separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--frames", frames, "frames per batch")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--repeat", options.repeat, "timed runs per candidate; the median counts")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", options.warmup, "untimed runs first")->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("--min-gain", min_gain_pct, "a candidate replaces the defaults only when this many percent faster")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  app.add_option("--out", out_path,
                 "the table to write (default: the user's tuning file, see docs/TUNING.md); its entries for other "
                 "keys are kept unless --fresh");
  app.add_flag("--fresh", fresh, "write only the entries measured now");
  app.add_option("--markdown", markdown_path, "also write the default-vs-tuned table as Markdown to this file");
  app.add_flag("--dry-run", dry_run, "measure and print, write no tuning table");
  zs::cli::add_progress_options(app, progress_flags);
  if (!zs::cli::parse(app, argc, argv)) return 0;
  options.min_gain = min_gain_pct / 100.0;

  std::vector<size_class> classes;
  for (auto const& name : class_names) {
    auto const c = zs::parse_size_class(name);
    ZS_EXPECTS(c.has_value(), "a size class (small, medium, large), not '" + name + "'");
    classes.push_back(*c);
  }
  std::vector<value_type> types;
  for (auto const& name : type_names) {
    value_type const t = zs::parse_value_type(name);
    ZS_EXPECTS(tune_has_batches_of(t),
               "types tune has data for in --types (integer types, string), not '" + name + "'");
    types.push_back(t);
  }
  // A kernel whose workload cannot run fails here, before the sweep.
  std::vector<kernel_plan> plans;
  for (auto const& name : kernel_names) {
    const zs::kernel_spec* k = zs::find_kernel_spec(name);
    ZS_EXPECTS(k != nullptr && k->swept, "a swept kernel, not '" + name + "'");
    plans.push_back(plan_of(*k, types));
  }

  // Where the results go, checked before the sweep so that a bad path costs nothing.
  std::optional<fs::path> out = out_path.empty() ? zs::tuning_file_path() : std::optional<fs::path>(out_path);
  zs::tuning_table table;
  if (!dry_run) {
    ZS_EXPECTS(out.has_value(), "--out PATH (neither ZS_TUNING_FILE, XDG_CACHE_HOME nor HOME is set)");
    if (!fresh && fs::exists(*out)) table = zs::tuning_table::load(*out);
  }
  std::optional<zs::cli::output_file> markdown_file;
  if (!markdown_path.empty()) markdown_file.emplace("--markdown", markdown_path);
  fs::path const dir = zs::cli::data_folder(data);
  if (!zs::cuda_device_available()) return zs::cli::no_gpu("tune", "no CUDA device on this machine; tuning needs one");
  auto const started = std::chrono::steady_clock::now();

  int ordinal = 0;
  ZS_CUDA_TRY(cudaGetDevice(&ordinal));
  zs::device_profile const& device = zs::cached_device_profile(ordinal);
  zs::cuda_stream stream;

  std::vector<zs::column> columns;
  for (auto const& file : zs::io::list_columns(dir)) columns.push_back(zs::io::read_column(file));

  std::printf("zshuffle tune: %s (compute capability %d.%d, %d SMs), batches of %llu frames, median of %d after %d "
              "warm-up runs\n",
              device.name.c_str(), device.compute_major, device.compute_minor, device.sm_count,
              static_cast<unsigned long long>(frames), options.repeat, options.warmup);
  std::printf("geometry: threads x blocks (waves of the occupancy, resident blocks per SM) items; GB/s of the "
              "kernel's work\n\n");
  std::printf("%-17s %-7s %-7s %-34s %9s %-34s %9s %7s\n", "kernel", "type", "class", "default", "GB/s", "tuned",
              "GB/s", "gain");

  // Nothing else may see the table while candidates are in force; defaults for everything
  // that is not being measured.
  zs::set_tuning({});
  zs::cli::progress_display progress(progress_flags, -1);
  tuner t(device, options, stream, progress);
  zs::tuning_table measured;
  bool mismatch = false;
  std::string markdown = "| kernel | type | class | default geometry | default GB/s | tuned geometry | tuned GB/s | gain |\n"
                         "|---|---|---|---|---:|---|---:|---:|\n";

  // Large data is made once; the smaller classes take a prefix of it.
  batch_maker batches(columns, large_bytes, stream);

  // Progress counts table entries: per class, each kernel's planned ones.
  std::uint64_t entries = 0, entries_done = 0;
  for (auto const& plan : plans) entries += classes.size() * plan.entries.size();
  progress.begin("tune", "entry");
  auto next_entry = [&](const zs::kernel_spec& kernel, std::string_view type, size_class cls) {
    progress.update(entries_done + 1, entries, 0,
                    std::string(kernel.name) + " " + std::string(type) + " " + std::string(zs::to_string(cls)));
  };

  auto report = [&](const zs::tuning_key& k, const measurement& base, const measurement& best) {
    progress.clear();
    ++entries_done;
    std::printf("%-17s %-7s %-7s %-34s %9.1f %-34s %9.1f %+6.1f%%\n", k.kernel.c_str(),
                k.type ? std::string(zs::to_string(*k.type)).c_str() : "any",
                std::string(zs::to_string(k.size)).c_str(), base.geometry.c_str(), base.gbs, best.geometry.c_str(),
                best.gbs, 100.0 * (best.gbs / base.gbs - 1));
    std::fflush(stdout);
    measured.set({k, best.params, best.gbs, base.gbs});
    char row[512];
    std::snprintf(row, sizeof row, "| %s | %s | %s | %s | %.1f | %s | %.1f | %+.1f%% |\n", k.kernel.c_str(),
                  k.type ? std::string(zs::to_string(*k.type)).c_str() : "any",
                  std::string(zs::to_string(k.size)).c_str(), base.geometry.c_str(), base.gbs, best.geometry.c_str(),
                  best.gbs, 100.0 * (best.gbs / base.gbs - 1));
    markdown += row;
  };

  for (size_class cls : classes) {
    std::uint64_t const bytes = cls == size_class::small    ? small_tune_bytes
                                : cls == size_class::medium ? medium_tune_bytes
                                                            : large_bytes;
    for (auto const& plan : plans) {
      zs::kernel_spec const& kernel = *plan.kernel;
      zs::tune_workload const& how = kernel.tune;
      for (auto const& planned : plan.entries) {
        std::string const label = planned.key_type ? std::string(zs::to_string(*planned.key_type)) : "any";
        next_entry(kernel, label, cls);
        // An entry for any type may be measured on a type of the same width and kind; a type of
        // --types without columns is skipped; the one type a workload names must have columns.
        std::optional<value_type> data_type;
        if (how.types == zs::tuned_types::any) {
          data_type = batches.same_width_as(planned.data_type);
        } else if (batches.has(planned.data_type)) {
          data_type = planned.data_type;
        }
        if (!data_type && how.types == zs::tuned_types::each) {
          progress.clear();
          ++entries_done;
          std::printf("    note: no %s data for %s; skipped\n", label.c_str(), std::string(kernel.name).c_str());
          continue;
        }
        ZS_EXPECTS(data_type.has_value(),
                   std::string(zs::to_string(planned.data_type)) + " columns" +
                       (how.types == zs::tuned_types::any ? " (or of another type of its width)" : "") + " in " +
                       dir.string() + " for the kernel " + std::string(kernel.name));
        workload w(*plan.codec, batches.batch(*data_type, bytes, frames), how.calls, how.compares, stream);
        auto const k = t.key(kernel, planned.key_type, cls);
        auto const [base, best] = t.sweep(w, k, mismatch);
        report(k, base, best);
      }
    }
  }

  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("\n%zu entries measured in %.1f s\n", measured.size(), seconds);
  if (mismatch) {
    std::fputs("zshuffle tune: a geometry changed a kernel's output (see the notes above): a bug; nothing written\n",
               stderr);
    return 1;
  }
  if (markdown_file) {
    char intro[256];
    std::snprintf(intro, sizeof intro,
                  "Launch tuning on %s (compute capability %d.%d, %d SMs), `zshuffle tune`, median of %d runs; GB/s of "
                  "the kernel's work.\n\n",
                  device.name.c_str(), device.compute_major, device.compute_minor, device.sm_count, options.repeat);
    markdown_file->write_text(intro + markdown);
  }
  if (!dry_run) {
    table.merge(measured);
    table.save(*out);
    std::printf("wrote %zu entries to %s\n", table.size(), out->string().c_str());
  }
  return 0;
}
