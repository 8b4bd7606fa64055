// Compressed spill, the device side (zs/spill.hpp): device columns encoded by the GPU codecs in
// batches whose copies to pinned host memory overlap the next batch's encoding, and restored by
// copies to the device that overlap the previous batch's decoding.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "arrow/offset_kernels.hpp"
#include "codecs/fsst/fsst_mode.hpp"
#include "common/batch_ops.hpp"
#include "measured_speeds.hpp"
#include "spill_state.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs/log.hpp"
#include "zs/spill.hpp"

namespace zs {

double measured_pcie_bandwidth() {
  static std::mutex lock;
  static std::map<int, double> measured;
  int device = 0;
  ZS_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> const hold(lock);
  if (auto const it = measured.find(device); it != measured.end()) return it->second;
  constexpr std::size_t bytes = std::size_t{64} << 20;
  cuda_stream stream;
  pinned_buffer host(bytes);
  device_buffer dev(bytes, stream);
  ZS_CUDA_TRY(cudaMemsetAsync(dev.data(), 0x5a, bytes, stream));
  // The median of 5 copies each way after a warm-up; the slower direction bounds a round trip.
  auto const time_copy = [&](void* to, const void* from) {
    ZS_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream));
    std::vector<float> ms;
    cuda_event start, stop;
    for (int r = 0; r < 5; ++r) {
      start.record(stream);
      ZS_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream));
      stop.record(stream);
      stop.synchronize();
      ms.push_back(stop.elapsed_ms_since(start));
    }
    std::nth_element(ms.begin(), ms.begin() + 2, ms.end());
    return static_cast<double>(bytes) / (static_cast<double>(ms[2]) / 1e3);
  };
  double const to_host = time_copy(host.data(), dev.data());
  double const to_device = time_copy(dev.data(), host.data());
  stream.synchronize();
  double const bps = std::min(to_host, to_device);
  measured.emplace(device, bps);
  return bps;
}

namespace detail {

std::vector<std::int64_t> device_offsets_at(const column_view& v, std::span<const std::uint64_t> rows,
                                            cudaStream_t stream) {
  // Row 0's offset too, which the others are made relative to: one gather, one copy back.
  std::vector<std::uint64_t> index(rows.begin(), rows.end());
  index.push_back(0);
  device_buffer d_index(index.size() * 8, stream), d_values(index.size() * 8, stream);
  copy_async(d_index.data(), index.data(), index.size() * 8, stream);
  kernels::gather_i64(v.offsets, d_index.as<std::uint64_t>(), d_values.as<std::int64_t>(), index.size(), stream);
  std::vector<std::int64_t> values(index.size());
  copy_async(values.data(), d_values.data(), values.size() * 8, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::int64_t const first = values.back();
  values.pop_back();
  for (auto& x : values) x -= first;
  return values;
}

namespace {

// The column parameters of `c` for the column whose frames are `sources`, prepared on the device
// from them; every source points at them. Empty for a codec without parameters.
device_buffer attach_params_device(const codec& c, std::vector<encode_source>& sources, cudaStream_t stream) {
  if (sources.empty() || c.params_bytes(sources.front().type) == 0) return {};
  value_type const type = sources.front().type;
  auto const offsets = layout_params(c, std::span<const value_type>(&type, 1));
  device_buffer params(offsets.back(), stream);
  std::vector<std::uint64_t> const piece_begin{0, sources.size()};
  c.prepare_async(sample_batch{sources, piece_begin}, params.as<std::byte>(), offsets, stream);
  for (auto& s : sources) s.params = params.as<std::byte>();
  return params;
}

// Milliseconds of the work `run` enqueues on `stream`.
template <typename Run>
double seconds_of(cudaStream_t stream, Run run) {
  cuda_event start, stop;
  start.record(stream);
  run();
  stop.record(stream);
  stop.synchronize();
  return static_cast<double>(stop.elapsed_ms_since(start)) / 1e3;
}

// Where a spill or restore spends its time, for ZS_LOG_LEVEL=trace: each mark waits for the
// stream (which changes the overlap it measures, so only when tracing) and logs the milliseconds
// since the previous mark, one line per call.
class phase_trace {
 public:
  phase_trace(std::string what, cudaStream_t stream)
      : on_(log::enabled(log::level::trace)), what_(std::move(what)), stream_(stream), last_(clock::now()) {}
  ~phase_trace() {
    if (on_ && !line_.empty()) log::trace(what_ + ":" + line_);
  }
  phase_trace(const phase_trace&) = delete;
  phase_trace& operator=(const phase_trace&) = delete;
  void mark(const char* phase) {
    if (!on_) return;
    ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
    auto const now = clock::now();
    char text[64];
    std::snprintf(text, sizeof(text), " %s %.2f ms", phase, std::chrono::duration<double, std::milli>(now - last_).count());
    line_ += text;
    last_ = now;
  }

 private:
  using clock = std::chrono::steady_clock;
  bool on_;
  std::string what_, line_;
  cudaStream_t stream_;
  clock::time_point last_;
};

struct device_side final : spill_side {
  device_side(const column_view& v, const frame_plan& p, cudaStream_t stream) : v_(v), p_(p), stream_(stream) {}

  // Estimated with the column's own parameters, which the encoding then takes over: one FSST
  // table build per spill rather than one per string codec estimated and one more to encode.
  double ratio(const codec& c, std::span<const encode_source> sample) override {
    std::vector<encode_source> runs(sample.begin(), sample.end());
    if (const std::byte* params = column_params(c)) {
      for (auto& r : runs) r.params = params;
    }
    std::vector<std::uint64_t> const piece_begin{0, runs.size()};
    phase_trace trace("estimate " + std::string(c.name()), stream_);
    auto const e = c.estimate(sample_batch{runs, piece_begin}, stream_);
    trace.mark("ms");
    return e.front().raw_bytes == 0 ? 1.0 : e.front().ratio();
  }
  // Measured on the column's first 64 MiB the first time the process meets the codec, type and
  // column name on this device (a warm-up, then one timed batch each way), then remembered for
  // samples up to twice as large (detail::measured_speeds).
  codec_speed speed(const codec& c, const std::string& column_name) override {
    static detail::measured_speeds<std::tuple<int, codec_id, value_type, std::string>, codec_speed> measured;
    int device = 0;
    ZS_CUDA_TRY(cudaGetDevice(&device));
    auto const key = std::make_tuple(device, c.id(), v_.type, column_name);
    constexpr std::uint64_t sample_bytes = std::uint64_t{64} << 20;
    auto const frames = leading_frames(p_, v_.type, sample_bytes);
    std::uint64_t const rows = frames.back().row + frames.back().rows;
    std::uint64_t const chars = frames.back().chars_begin + frames.back().chars;
    std::uint64_t const bytes = uncompressed_bytes(v_.type, rows, chars);
    if (auto const known = measured.find(key, bytes)) return *known;
    std::vector<encode_source> sources;
    for (auto const& f : frames) sources.push_back(frame_source(v_, f));
    device_buffer const params = attach_params_device(c, sources, stream_);
    auto const layout = layout_frames(c, sources);
    device_buffer scratch(layout.back(), stream_), sizes(sources.size() * 8, stream_);
    device_buffer encode_temp(c.encode_temp_bytes(sources), stream_);
    encode_batch const encode{sources, scratch.as<std::byte>(), layout, sizes.as<std::uint64_t>()};
    auto const run_encode = [&] { c.encode_async(encode, encode_temp.data(), encode_temp.size(), stream_); };
    run_encode();
    double const encode_s = seconds_of(stream_, run_encode);
    column out = column::allocate(v_.type, rows, memory_kind::device, stream_, chars);
    std::vector<decode_target> targets;
    for (auto const& f : frames) targets.push_back(frame_target(out.mutable_view(), f));
    device_buffer status(targets.size() * sizeof(frame_status), stream_);
    device_buffer decode_temp(c.decode_temp_bytes(targets), stream_);
    decode_batch const decode{scratch.as<std::byte>(), layout, targets, status.as<frame_status>()};
    auto const run_decode = [&] { c.decode_async(decode, decode_temp.data(), decode_temp.size(), stream_); };
    run_decode();
    double const decode_s = seconds_of(stream_, run_decode);
    std::vector<frame_status> statuses(targets.size());
    copy_async(statuses.data(), status.data(), statuses.size() * sizeof(frame_status), stream_);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream_));
    throw_if_failed(statuses);
    codec_speed const speed{static_cast<double>(bytes) / std::max(encode_s, 1e-9),
                            static_cast<double>(bytes) / std::max(decode_s, 1e-9)};
    measured.remember(key, bytes, speed);
    return speed;
  }
  double pcie_bps() override { return measured_pcie_bandwidth(); }

  /// The parameters of `c` for the whole column (device memory), prepared the first time a
  /// codec with the same parameters asks; null for a codec without parameters.
  const std::byte* column_params(const codec& c) {
    if (c.params_bytes(v_.type) == 0) return nullptr;
    codec_id const owner = codecs::params_owner(c.id());
    auto it = params_.find(owner);
    if (it == params_.end()) {
      std::vector<encode_source> all;
      for (auto const& f : p_.frames) all.push_back(frame_source(v_, f));
      it = params_.emplace(owner, attach_params_device(c, all, stream_)).first;
    }
    return it->second.as<std::byte>();
  }
  /// Gives up the parameters prepared for `c`, to whoever encodes with them.
  device_buffer take_params(const codec& c) {
    column_params(c);
    auto const it = params_.find(codecs::params_owner(c.id()));
    if (it == params_.end()) return {};
    device_buffer out = std::move(it->second);
    params_.erase(it);
    return out;
  }

  const column_view& v_;
  const frame_plan& p_;
  cudaStream_t stream_;
  std::map<codec_id, device_buffer> params_;
};

// A batch whose encoding is enqueued: its frames in device scratch at `layout`, their sizes on
// their way to pinned memory.
struct encoding_batch {
  std::size_t first = 0, frames = 0;
  std::vector<std::uint64_t> layout;
  device_buffer scratch;
  cuda_event sized;   // its sizes are in pinned memory
  cuda_event packed;  // its frames are packed for the copy to the host
};

// The raw fast path: where raw was chosen, framing would only add an encode (a device copy
// with a checksum) and a pack to the copy over PCIe. One copy of the values into pinned memory
// instead (a string column's offsets as they are, then its characters); the restore copies them
// back. What is given up: the payload checksum of raw frames (a raw spill in host memory has no
// check on restore, as a plain cudaMemcpy has none).
void spill_unframed(spill_state& s, const column_view& v, cudaStream_t stream) {
  std::uint64_t bytes = v.count * value_width(v.type);
  std::int64_t first_char = 0;
  if (v.type == value_type::string) {
    std::int64_t ends[2] = {0, 0};
    ZS_CUDA_TRY(cudaMemcpyAsync(&ends[0], v.offsets, 8, cudaMemcpyDeviceToHost, stream));
    ZS_CUDA_TRY(cudaMemcpyAsync(&ends[1], v.offsets + v.count, 8, cudaMemcpyDeviceToHost, stream));
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    if (ends[1] < ends[0]) {
      ZS_FAIL(error_code::invalid_argument, "spilling " + describe(s.name, s.type) + ": its offsets end at " +
                                                std::to_string(ends[1]) + ", before they begin (" +
                                                std::to_string(ends[0]) + ")");
    }
    first_char = ends[0];
    s.chars_bytes = static_cast<std::uint64_t>(ends[1] - ends[0]);
    s.first_offset = ends[0];
    bytes = 8 * (v.count + 1) + s.chars_bytes;
  }
  spill_block block = s.frames_memory == memory_kind::device ? spill_block(device_buffer(bytes, stream), bytes)
                                                               : spill_block(bytes, true, describe(s.name, s.type));
  if (v.type == value_type::string) {
    ZS_CUDA_TRY(cudaMemcpyAsync(block.data(), v.offsets, 8 * (v.count + 1), cudaMemcpyDefault, stream));
    if (s.chars_bytes > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(block.data() + 8 * (v.count + 1), static_cast<const std::byte*>(v.data) + first_char,
                                  s.chars_bytes, cudaMemcpyDefault, stream));
    }
  } else if (bytes > 0) {
    ZS_CUDA_TRY(cudaMemcpyAsync(block.data(), v.data, bytes, cudaMemcpyDefault, stream));
  }
  s.blocks.push_back(std::move(block));
  s.unframed = true;
  s.report.raw_bytes = uncompressed_bytes(s.type, s.count, s.chars_bytes);
  s.report.spilled_bytes = bytes;
  s.report.frames = 0;
  s.spill_stop.emplace();
  s.spill_stop->record(stream);
}

}  // namespace

void spill_on_device(spill_state& s, const column_view& v, cudaStream_t stream, const spill_options& options) {
  s.frames_memory = options.frames_in;
  s.spill_start.emplace();
  s.spill_start->record(stream);
  phase_trace trace("spill " + describe(s.name, s.type), stream);
  // What later spills of this column may take again (spill_options::prepared).
  auto const prepared = [&](device_buffer params) {
    if (options.prepared && options.prepared->codec == s.report.codec) return options.prepared;
    params.set_stream(nullptr);  // see spill_preparation::params
    return std::shared_ptr<const spill_preparation>(
        new spill_preparation{s.report.codec, s.type, std::move(params)});
  };
  // Raw chosen before: the fast path at once, without planning frames it will not make.
  if (!options.codec && options.chosen_before == codec_id::raw) {
    spill_unframed(s, v, stream);
    if (s.report.raw_bytes > 0) s.preparation = prepared({});
    return;
  }
  if (v.type == value_type::string) {
    std::uint64_t const ends[] = {v.count};
    s.chars_bytes = static_cast<std::uint64_t>(device_offsets_at(v, ends, stream)[0]);
  }
  auto const rows = frame_boundaries(v.count, uncompressed_bytes(v.type, v.count, s.chars_bytes), options.frame_bytes);
  std::vector<std::int64_t> ends;
  if (v.type == value_type::string) ends = device_offsets_at(v, rows, stream);
  frame_plan p = plan_frames(v.type, rows, ends, options.batch_bytes);
  trace.mark("plan");
  device_side side(v, p, stream);
  choose_codec(s, options, v, p, side);
  // Where the codec outruns the link, the copies bound the pipeline: short first and last batches.
  spill_report const& r = s.report;
  if (r.encode_bps > 0 && r.estimated_ratio * r.pcie_bps < r.encode_bps) {
    p = plan_frames(v.type, rows, ends, options.batch_bytes, true);
  }
  trace.mark(("choose " + s.report.codec_name).c_str());
  if (s.report.codec == codec_id::raw && !s.report.forced) {
    spill_unframed(s, v, stream);
    if (s.report.raw_bytes > 0) s.preparation = prepared({});
    trace.mark("copy");
    return;
  }
  const codec& c = get_codec(s.report.codec);

  // The parameters given (a preparation of the same codec), else prepared here (or during the
  // choice, for its estimates).
  bool const given = options.prepared && options.prepared->codec == c.id();
  device_buffer params = given ? device_buffer() : side.take_params(c);
  const std::byte* const params_at = given ? options.prepared->params.as<std::byte>() : params.as<std::byte>();
  std::vector<encode_source> all;
  for (auto const& f : p.frames) {
    all.push_back(frame_source(v, f));
    all.back().params = params_at;
  }
  trace.mark("params");
  std::string const column = describe(s.name, s.type);
  // Frame sizes come to the host through pinned memory from the cache: freeing pinned memory
  // waits for the whole device.
  spill_block sizes_block(std::max<std::size_t>(all.size(), 1) * 8, true, column);
  auto* const sizes = reinterpret_cast<std::uint64_t*>(sizes_block.data());
  // The lists of the batched copy that packs each batch's frames (sources, destinations, sizes),
  // in pinned memory too, a region per batch: an upload from pageable memory would wait for the
  // copy stream's earlier work.
  spill_block lists_block(std::max<std::size_t>(all.size(), 1) * 3 * 8, true, column);
  auto* const lists = reinterpret_cast<std::uint64_t*>(lists_block.data());
  device_buffer d_sizes(std::max<std::size_t>(all.size(), 1) * 8, stream);
  cuda_stream packer, copier;

  auto const enqueue = [&](std::size_t b) {
    encoding_batch e;
    e.first = p.batch_begin[b];
    e.frames = p.batch_begin[b + 1] - e.first;
    std::span<const encode_source> const sources(all.data() + e.first, e.frames);
    e.layout = layout_frames(c, sources);
    e.scratch = device_buffer(e.layout.back(), stream);
    device_buffer temp(c.encode_temp_bytes(sources), stream);
    c.encode_async({sources, e.scratch.as<std::byte>(), e.layout, d_sizes.as<std::uint64_t>() + e.first}, temp.data(),
                   temp.size(), stream);
    // By a kernel: a copy of the sizes would wait in the copy engine behind the previous
    // batch's copy to the host, and the packing of this batch for the sizes.
    kernels::store_words(d_sizes.as<std::uint64_t>() + e.first, sizes + e.first, e.frames, stream);
    e.sized.record(stream);
    return e;
  };
  // Once a batch's sizes are known: its host block, and on a packing stream one batched device
  // copy that packs its frames without the gaps of their worst-case layout, then on the copy
  // stream one copy of them all to the host block. Many small copies to the host would each pay
  // the copy engine's fixed cost. Packing on a stream of its own keeps it off the path of both
  // the encoding (which bounds string columns) and the copies (which bound fast codecs).
  auto const drain = [&](encoding_batch& e) {
    e.sized.synchronize();
    const std::uint64_t* size = sizes + e.first;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < e.frames; ++i) total += align_frame(size[i]);
    bool const keep_on_device = s.frames_memory == memory_kind::device;
    spill_block block = keep_on_device ? spill_block() : spill_block(total, true, column);
    ZS_CUDA_TRY(cudaStreamWaitEvent(packer, e.sized.get(), 0));
    device_buffer packed(total, packer);
    std::uint64_t* const list = lists + 3 * e.first;
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < e.frames; ++i) {
      spilled_frame f = p.frames[e.first + i];
      list[i] = reinterpret_cast<std::uintptr_t>(e.scratch.as<std::byte>() + e.layout[i]);
      list[e.frames + i] = reinterpret_cast<std::uintptr_t>(packed.as<std::byte>() + at);
      list[2 * e.frames + i] = size[i];
      f.block = s.blocks.size();
      f.offset = at;
      f.bytes = size[i];
      s.frames.push_back(f);
      s.report.spilled_bytes += size[i];
      at += align_frame(size[i]);
    }
    device_buffer d_lists(3 * e.frames * 8, packer);
    copy_async(d_lists.data(), list, 3 * e.frames * 8, packer);
    device_buffer temp(kernels::copy_buffers_temp_bytes(e.frames), packer);
    auto* const words = d_lists.as<std::uint64_t>();
    kernels::copy_buffers(reinterpret_cast<const void* const*>(words), reinterpret_cast<void* const*>(words + e.frames),
                          words + 2 * e.frames, e.frames, temp.data(), temp.size(), packer);
    e.scratch.set_stream(packer);  // freed once its frames are packed
    if (keep_on_device) {
      // The packed frames are the block; freed on `stream`, which waits for the packer below.
      packed.set_stream(stream);
      block = spill_block(std::move(packed), total);
    } else {
      e.packed.record(packer);
      ZS_CUDA_TRY(cudaStreamWaitEvent(copier, e.packed.get(), 0));
      ZS_CUDA_TRY(cudaMemcpyAsync(block.data(), packed.data(), total, cudaMemcpyDeviceToHost, copier));
      packed.set_stream(copier);  // freed once copied
    }
    s.blocks.push_back(std::move(block));
  };

  std::size_t const batches = p.batch_begin.empty() ? 0 : p.batch_begin.size() - 1;
  try {
    std::vector<encoding_batch> in_flight;
    if (batches > 0) in_flight.push_back(enqueue(0));
    for (std::size_t b = 0; b < batches; ++b) {
      if (b + 1 < batches) in_flight.push_back(enqueue(b + 1));
      drain(in_flight[b]);
      in_flight[b].scratch = device_buffer();
    }
  } catch (...) {
    // Host blocks that copies may still write go back to the cache as the state unwinds.
    ZS_CUDA_TRY_NOTHROW(cudaStreamSynchronize(packer));
    ZS_CUDA_TRY_NOTHROW(cudaStreamSynchronize(copier));
    throw;
  }
  cuda_event packed, copied;
  packed.record(packer);
  copied.record(copier);
  ZS_CUDA_TRY(cudaStreamWaitEvent(stream, packed.get(), 0));
  ZS_CUDA_TRY(cudaStreamWaitEvent(stream, copied.get(), 0));
  // Every batch's sizes were awaited: the encodes that read the parameters are done.
  if (s.report.raw_bytes > 0) s.preparation = prepared(std::move(params));
  d_sizes.set_stream(stream);
  s.spill_stop.emplace();
  s.spill_stop->record(stream);
  s.staging.push_back(std::move(lists_block));
  trace.mark("encode+copy");
}

column restore_on_device(spill_state& s, cudaStream_t stream) {
  std::string const column_name = describe(s.name, s.type);
  auto const out_of_memory = [&](const error& e) {
    ZS_FAIL(error_code::out_of_memory,
            "restoring " + column_name + ": " + e.message() + " (the spilled frames are kept; restore again later)");
  };
  cuda_event start;
  start.record(stream);
  phase_trace trace("restore " + column_name, stream);
  if (s.spill_stop) ZS_CUDA_TRY(cudaStreamWaitEvent(stream, s.spill_stop->get(), 0));
  if (!s.staging.empty()) s.wait_for_spill();  // once, on the first restore
  trace.mark("wait for spill");
  column out;
  try {
    out = column::allocate(s.type, s.count, memory_kind::device, stream, s.chars_bytes);
  } catch (const error& e) {
    if (e.code() != error_code::out_of_memory) throw;
    out_of_memory(e);
  }
  if (s.unframed) {
    mutable_column_view const to = out.mutable_view();
    if (s.type == value_type::string) {
      ZS_CUDA_TRY(cudaMemcpyAsync(to.offsets, s.blocks[0].data(), 8 * (s.count + 1), cudaMemcpyDefault, stream));
      if (s.first_offset != 0) kernels::arrow::rebase_offsets(to.offsets, s.first_offset, s.count + 1, to.offsets, stream);
      if (s.chars_bytes > 0) {
        ZS_CUDA_TRY(cudaMemcpyAsync(to.data, s.blocks[0].data() + 8 * (s.count + 1), s.chars_bytes, cudaMemcpyDefault,
                                    stream));
      }
    } else if (s.count > 0) {
      ZS_CUDA_TRY(cudaMemcpyAsync(to.data, s.blocks[0].data(), s.count * value_width(s.type), cudaMemcpyDefault,
                                  stream));
    }
    trace.mark("copy");
    cuda_event stop;
    stop.record(stream);
    stop.synchronize();
    s.restore_seconds = static_cast<double>(stop.elapsed_ms_since(start)) / 1e3;
    return out;
  }
  trace.mark("allocate");
  if (s.type == value_type::string) {
    ZS_CUDA_TRY(cudaMemsetAsync(out.mutable_view().offsets, 0, sizeof(std::int64_t), stream));
  }
  const codec& c = get_codec(s.report.codec);
  device_buffer status(std::max<std::size_t>(s.frames.size(), 1) * sizeof(frame_status), stream);
  cuda_stream copier;
  cuda_event ready;
  ready.record(stream);
  ZS_CUDA_TRY(cudaStreamWaitEvent(copier, ready.get(), 0));

  // Block b's copy to the device overlaps block b - 1's decoding; two blocks of frames at most
  // are on the device at once.
  std::vector<cuda_event> decoded(s.blocks.size());
  std::size_t next = 0;
  try {
    for (std::size_t b = 0; b < s.blocks.size(); ++b) {
      auto const [first, last] = frames_of_block(s, b, next);
      next = last;
      if (first == last) continue;
      std::uint64_t const bytes = s.frames[last - 1].offset + s.frames[last - 1].bytes;
      // Frames kept on the device decode where they are; host ones are copied over first.
      device_buffer frames;
      std::byte* on_device = s.blocks[b].data();
      if (!s.blocks[b].on_device()) {
        if (b >= 2) ZS_CUDA_TRY(cudaStreamWaitEvent(copier, decoded[b - 2].get(), 0));
        try {
          frames = device_buffer(bytes, copier);
        } catch (const error& e) {
          if (e.code() != error_code::out_of_memory) throw;
          out_of_memory(e);
        }
        ZS_CUDA_TRY(cudaMemcpyAsync(frames.data(), s.blocks[b].data(), bytes, cudaMemcpyHostToDevice, copier));
        cuda_event landed;
        landed.record(copier);
        ZS_CUDA_TRY(cudaStreamWaitEvent(stream, landed.get(), 0));
        on_device = frames.as<std::byte>();
      }
      std::vector<std::uint64_t> offsets;
      std::vector<decode_target> targets;
      for (std::size_t i = first; i < last; ++i) {
        offsets.push_back(s.frames[i].offset);
        targets.push_back(frame_target(out.mutable_view(), s.frames[i]));
      }
      offsets.push_back(bytes);
      device_buffer temp(c.decode_temp_bytes(targets), stream);
      c.decode_async({on_device, offsets, targets, status.as<frame_status>() + first}, temp.data(), temp.size(),
                     stream);
      frames.set_stream(stream);  // freed after its decoding
      decoded[b].record(stream);
    }
  } catch (...) {
    ZS_CUDA_TRY_NOTHROW(cudaStreamSynchronize(copier));
    throw;
  }
  trace.mark("copy+decode");
  // The checksums' verdict: the caller learns of a bad frame before using the column.
  std::vector<frame_status> statuses(s.frames.size());
  if (!statuses.empty()) copy_async(statuses.data(), status.data(), statuses.size() * sizeof(frame_status), stream);
  cuda_event stop;
  stop.record(stream);
  stop.synchronize();
  throw_if_bad_frames(s, statuses, 0);
  s.restore_seconds = static_cast<double>(stop.elapsed_ms_since(start)) / 1e3;
  return out;
}

}  // namespace detail
}  // namespace zs
