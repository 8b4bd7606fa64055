// The fsst codec on the GPU: plans a batch on the host from sizes it knows (strings, characters,
// splits per frame), then runs kernels/fsst and the bitpack codec's kernels for the lengths.
//
// Tables: the sample of each column is gathered on the device (its chunks planned on the host
// from the pieces' character counts), copied down once for the whole batch of columns, built on
// the host with the CPU's builder, and copied up: one round trip per prepare, never one per
// partition, and the same tables as prepare_host.
#include <algorithm>
#include <vector>

#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/fsst/fsst_table_builder.hpp"
#include "codecs/fsst/fsst_tuning.hpp"
#include "common/work_map.hpp"
#include "fsst/fsst_format.hpp"
#include "fsst/fsst_kernels.hpp"
#include "temp_layout.hpp"
#include "zs/device.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {

using namespace fsst_detail;

void fsst_codec::prepare_params_async(const sample_batch& samples, std::byte* params,
                                      std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const {
  std::vector<kernels::fsst::sample_copy> copies;
  std::vector<std::vector<fsst_tables::sample_chunk>> chunks(samples.columns());
  std::vector<std::uint64_t> sample_begin(samples.columns() + 1, 0);
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    auto const pieces = samples.of(c);
    chunks[c] = fsst_tables::plan_sample(pieces);
    std::uint64_t at = sample_begin[c];
    for (auto const& chunk : chunks[c]) {
      auto const& piece = pieces[chunk.piece];
      copies.push_back({piece.offsets, static_cast<const std::uint8_t*>(piece.values), chunk.offset, chunk.length, at});
      at += chunk.length;
    }
    sample_begin[c + 1] = at;
  }
  std::vector<std::uint8_t> sample(sample_begin.back());
  if (!copies.empty()) {
    device_buffer copy_list(copies.size() * sizeof(copies[0]), stream);
    device_buffer gathered(sample.size(), stream);
    copy_async(copy_list.data(), copies.data(), copies.size() * sizeof(copies[0]), stream);
    kernels::fsst::gather_sample(copy_list.as<kernels::fsst::sample_copy>(), copies.size(), gathered.as<std::uint8_t>(),
                                 stream);
    copy_async(sample.data(), gathered.data(), sample.size(), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  std::vector<std::byte> tables(params_offsets.back(), std::byte{0});
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    std::span<const std::uint8_t> const column_sample(sample.data() + sample_begin[c], sample_begin[c + 1] - sample_begin[c]);
    fsst_tables::build_table(column_sample, chunks[c], tables.data() + params_offsets[c]);
    copy_async(params + params_offsets[c], tables.data() + params_offsets[c], fsst::table_bytes, stream);
  }
  // The host image must live until its copies have run.
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
}

namespace {

// What the host knows of a batch: per frame its strings, characters and splits, as prefixes.
struct host_plan {
  std::vector<std::uint64_t> string_begin, split_begin, group_begin;
  unsigned group_splits = 0;
};

template <typename Descriptor>
host_plan plan_batch(std::span<const Descriptor> frames, unsigned group_splits) {
  host_plan p;
  p.group_splits = group_splits;
  std::size_t const n = frames.size();
  p.string_begin.assign(n + 1, 0);
  p.split_begin.assign(n + 1, 0);
  p.group_begin.assign(n + 1, 0);
  for (std::size_t f = 0; f < n; ++f) {
    std::uint64_t const splits = fsst::split_count(frames[f].chars_bytes, fsst::default_split_bytes);
    p.string_begin[f + 1] = p.string_begin[f] + frames[f].count;
    p.split_begin[f + 1] = p.split_begin[f] + splits;
    p.group_begin[f + 1] = p.group_begin[f] + (splits + group_splits - 1) / group_splits;
  }
  return p;
}

std::uint64_t batch_bytes(std::span<const encode_source> s) {
  std::uint64_t b = 0;
  for (auto const& x : s) b += x.chars_bytes;
  return b;
}
std::uint64_t batch_bytes(std::span<const decode_target> s) {
  std::uint64_t b = 0;
  for (auto const& x : s) b += x.chars_bytes;
  return b;
}

// The encoder's block size for a batch when no tuning table chose one: the default, halved
// down to a warp while the batch's groups of splits (a warp each) would leave SMs without a
// block. A batch of a few hundred splits otherwise runs on part of the GPU.
unsigned fitted_group_threads(std::span<const encode_source> sources, unsigned threads) {
  std::uint64_t splits = 0;
  for (auto const& s : sources) splits += fsst::split_count(s.chars_bytes, fsst::default_split_bytes);
  auto const sms = static_cast<std::uint64_t>(std::max(1, current_device_profile().sm_count));
  while (threads > 32 && (splits + threads / 32 - 1) / (threads / 32) < sms) threads /= 2;
  return threads;
}

// Splits a block of the split kernels takes: a warp each.
unsigned group_splits_of(unsigned threads) { return std::max(1U, threads / 32); }

// The lengths frames' sources: a uint64 per string, at `lengths` + the frame's first string.
std::vector<encode_source> length_sources(std::span<const encode_source> sources, const host_plan& p,
                                          const std::uint64_t* lengths) {
  std::vector<encode_source> out;
  for (std::size_t f = 0; f < sources.size(); ++f) {
    out.push_back(lengths_source(sources[f].count, lengths == nullptr ? nullptr : lengths + p.string_begin[f]));
  }
  return out;
}

struct encode_carve {
  kernels::fsst::batch_plan plan{};
  kernels::fsst::encode_scratch s{};
  std::uint64_t* string_begin;
  std::uint64_t* split_begin;
  std::uint64_t* group_begin;
  std::uint64_t* lengths_frame_at;
  std::uint64_t* lengths_frame_bytes;
  std::byte* lengths_frames;
  void* cub_temp;
  std::size_t cub_bytes;
  void* inner_temp;
  std::size_t inner_bytes;
};

encode_carve carve_encode(detail::temp_layout& layout, std::span<const encode_source> sources, const host_plan& p,
                          const std::vector<std::uint64_t>& lengths_offsets) {
  std::size_t const n = sources.size();
  encode_carve c{};
  std::uint64_t const strings = p.string_begin.back(), splits = p.split_begin.back();
  c.string_begin = layout.take<std::uint64_t>(n + 1);
  c.split_begin = layout.take<std::uint64_t>(n + 1);
  c.group_begin = layout.take<std::uint64_t>(n + 1);
  c.lengths_frame_at = layout.take<std::uint64_t>(n);
  c.lengths_frame_bytes = layout.take<std::uint64_t>(n);
  c.plan = {c.string_begin, c.split_begin, c.group_begin, strings, splits, p.group_begin.back(), p.group_splits,
            layout.take<std::uint64_t>(strings + 1), nullptr};
  c.lengths_frames = layout.take<std::byte>(lengths_offsets.back());
  c.s.split_data = layout.take<std::uint8_t>(splits * fsst::default_split_bytes);
  c.s.split_sizes = layout.take<std::uint64_t>(splits + 1);
  c.s.split_prefix = layout.take<std::uint64_t>(splits + 1);
  c.s.lengths_frames = c.lengths_frames;
  c.s.lengths_frame_at = c.lengths_frame_at;
  c.s.lengths_frame_bytes = c.lengths_frame_bytes;
  c.s.copy_src = layout.take<const void*>(n + splits);
  c.s.copy_dst = layout.take<void*>(n + splits);
  c.s.copy_size = layout.take<std::uint64_t>(n + splits);
  c.cub_bytes = kernels::fsst::cub_temp_bytes(strings, splits, n);
  c.cub_temp = layout.take<std::byte>(c.cub_bytes);
  c.inner_bytes = lengths_codec().encode_temp_bytes(length_sources(sources, p, nullptr));
  c.inner_temp = layout.take<std::byte>(c.inner_bytes);
  return c;
}

}  // namespace

std::size_t fsst_codec::encode_payloads_temp_bytes(std::span<const encode_source> sources) const {
  host_plan const p = plan_batch(sources, group_splits_of(fsst_encode_spec.defaults.threads));
  auto const inner = length_sources(sources, p, nullptr);
  detail::temp_layout layout;
  carve_encode(layout, sources, p, layout_frames(lengths_codec(), inner));
  return layout.bytes();
}

void fsst_codec::encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                                       std::size_t temp_bytes, detail::upload_image& uploads,
                                       cudaStream_t stream) const {
  launch_choice choice = choose_launch(fsst_encode_spec, value_type::string, batch_bytes(host.sources));
  if (!choice.from_table) choice.params.threads = fitted_group_threads(host.sources, choice.params.threads);
  // The temp size was computed for the default group size; split groups follow the choice.
  host_plan const p = plan_batch(host.sources, group_splits_of(choice.params.threads));
  host_plan const sized = plan_batch(host.sources, group_splits_of(fsst_encode_spec.defaults.threads));
  auto const inner_offsets = layout_frames(lengths_codec(), length_sources(host.sources, sized, nullptr));
  detail::temp_layout layout(temp, temp_bytes);
  encode_carve c = carve_encode(layout, host.sources, sized, inner_offsets);
  c.plan.group_begin = c.group_begin;
  c.plan.num_groups = p.group_begin.back();
  c.plan.group_splits = p.group_splits;
  std::vector<std::uint64_t> frame_at(inner_offsets.begin(), inner_offsets.end() - 1);
  uploads.put<std::uint64_t>(c.string_begin, p.string_begin);
  uploads.put<std::uint64_t>(c.split_begin, p.split_begin);
  uploads.put<std::uint64_t>(c.group_begin, p.group_begin);
  uploads.put<std::uint64_t>(c.lengths_frame_at, frame_at);
  uploads.send(stream);

  kernels::fsst::encode_lengths(batch, c.plan, stream);
  auto const inner = length_sources(host.sources, p, c.plan.lengths);
  lengths_codec().encode_async({inner, c.lengths_frames, inner_offsets, c.lengths_frame_bytes, true}, c.inner_temp,
                               c.inner_bytes, stream);
  kernels::fsst::encode_splits(batch, c.plan, c.s, choice, c.cub_temp, c.cub_bytes, stream);
}

namespace {

struct decode_carve {
  kernels::fsst::batch_plan plan{};
  std::uint64_t* string_begin;
  std::uint64_t* split_begin;
  std::uint64_t* group_begin;
  frame_status* lengths_status;
  void* cub_temp;
  std::size_t cub_bytes;
  void* inner_temp;
  std::size_t inner_bytes;
};

std::vector<decode_target> length_targets(std::span<const decode_target> targets, const host_plan& p,
                                          std::uint64_t* lengths) {
  std::vector<decode_target> out;
  for (std::size_t f = 0; f < targets.size(); ++f) {
    out.push_back({value_type::uint64, targets[f].count, lengths == nullptr ? nullptr : lengths + p.string_begin[f]});
  }
  return out;
}

decode_carve carve_decode(detail::temp_layout& layout, std::span<const decode_target> targets, const host_plan& p) {
  std::size_t const n = targets.size();
  decode_carve c{};
  std::uint64_t const strings = p.string_begin.back(), splits = p.split_begin.back();
  c.string_begin = layout.take<std::uint64_t>(n + 1);
  c.split_begin = layout.take<std::uint64_t>(n + 1);
  c.group_begin = layout.take<std::uint64_t>(n + 1);
  c.lengths_status = layout.take<frame_status>(n);
  c.plan = {c.string_begin, c.split_begin, c.group_begin, strings, splits, p.group_begin.back(), p.group_splits,
            layout.take<std::uint64_t>(strings + 1), layout.take<std::uint64_t>(strings + 1)};
  c.cub_bytes = kernels::fsst::cub_temp_bytes(strings, splits, n);
  c.cub_temp = layout.take<std::byte>(c.cub_bytes);
  c.inner_bytes = lengths_codec().decode_temp_bytes(length_targets(targets, p, nullptr));
  c.inner_temp = layout.take<std::byte>(c.inner_bytes);
  return c;
}

}  // namespace

std::size_t fsst_codec::decode_payloads_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  carve_decode(layout, targets, plan_batch(targets, group_splits_of(fsst_decode_spec.defaults.threads)));
  return layout.bytes();
}

void fsst_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                                       std::size_t temp_bytes, detail::upload_image& uploads,
                                       cudaStream_t stream) const {
  launch_choice const choice = choose_launch(fsst_decode_spec, value_type::string, batch_bytes(host.targets));
  // A warp per split: a group is a block's warps.
  host_plan const p = plan_batch(host.targets, group_splits_of(choice.params.threads));
  detail::temp_layout layout(temp, temp_bytes);
  decode_carve c =
      carve_decode(layout, host.targets, plan_batch(host.targets, group_splits_of(fsst_decode_spec.defaults.threads)));
  c.plan.num_groups = p.group_begin.back();
  c.plan.group_splits = p.group_splits;
  uploads.put<std::uint64_t>(c.string_begin, p.string_begin);
  uploads.put<std::uint64_t>(c.split_begin, p.split_begin);
  uploads.put<std::uint64_t>(c.group_begin, p.group_begin);
  uploads.send(stream);

  kernels::fsst::decode_check_frames(batch, c.plan, stream);
  // The lengths frames start each body. Each one's room ends where the next begins (a frame
  // refused above may claim bytes past its own; its lengths are then ignored): the frames were
  // checked to hold their lengths frame exactly before anything is written from it.
  std::size_t const n = host.targets.size();
  std::vector<std::uint64_t> inner_offsets(n + 1);
  std::uint64_t const body_at = frame_header_bytes + body_offset();
  for (std::size_t f = 0; f < n; ++f) {
    // A truncated frame may end off the alignment; its lengths frame then starts at the last
    // aligned byte it has, and is refused as truncated.
    std::uint64_t const room_end = host.frame_offsets[f + 1] / frame_alignment * frame_alignment;
    inner_offsets[f] = std::min(host.frame_offsets[f] + body_at, std::max(room_end, host.frame_offsets[f]));
  }
  inner_offsets[n] = host.frame_offsets[n];
  auto const inner = length_targets(host.targets, p, c.plan.lengths);
  if (n != 0) {
    lengths_codec().decode_async({host.frames, inner_offsets, inner, c.lengths_status, true}, c.inner_temp,
                                 c.inner_bytes, stream);
  }
  kernels::fsst::decode_splits(batch, c.plan, c.lengths_status, choice, c.cub_temp, c.cub_bytes, stream);
}

}  // namespace zs::codecs
