// The codec base class on the GPU: descriptor upload, headers, checksums, validation.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/frame_kernels.hpp"
#include "common/work_map.hpp"
#include "temp_layout.hpp"
#include "zs/codec.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

namespace zs {

namespace detail {
void check_encode_batch(const codec& c, const encode_batch& batch);
void check_decode_batch(const decode_batch& batch);
void check_sample_batch(const codec& c, const sample_batch& samples, std::span<const std::uint64_t> params_offsets);
std::vector<encode_source> with_params_sizes(const codec& c, std::span<const encode_source> sources);
std::vector<decode_target> with_params_sizes(const codec& c, std::span<const decode_target> targets);
}  // namespace detail

namespace {

// The checksum launch for a batch, and its chunk map: payload words per frame that the kernel
// must cover, from the room each frame has, in chunks of the launch's words per chunk.
struct checksum_plan {
  launch_choice choice;
  std::vector<std::uint64_t> chunk_begin;
};

checksum_plan plan_checksums(std::span<const std::uint64_t> offsets) {
  std::vector<std::uint64_t> words(offsets.size() - 1);
  std::uint64_t room_bytes = 0;
  for (std::size_t f = 0; f + 1 < offsets.size(); ++f) {
    std::uint64_t const room = offsets[f + 1] - offsets[f];
    words[f] = room > frame_header_bytes ? (room - frame_header_bytes + 7) / 8 : 0;
    room_bytes += words[f] * 8;
  }
  checksum_plan p;
  p.choice = choose_launch(checksum_spec, std::nullopt, room_bytes);
  p.chunk_begin = kernels::chunk_prefix(words, p.choice.params.items);
  return p;
}

// The base class's part of a batch's scratch: the descriptors (encode sources or decode
// targets), frame offsets and checksum chunks uploaded for the kernels, the per-frame checksum
// sums, then what the codec's own payload hook asked for.
template <typename Descriptor>
struct scratch {
  Descriptor* descriptors;
  std::uint64_t* offsets;
  std::uint64_t* chunk_begin;
  std::uint64_t* sums;
  void* payload;
  std::size_t payload_bytes;
};

template <typename Descriptor>
scratch<Descriptor> carve(detail::temp_layout& layout, std::size_t n, std::size_t payload_bytes) {
  scratch<Descriptor> s{};
  s.descriptors = layout.take<Descriptor>(n);
  s.offsets = layout.take<std::uint64_t>(n + 1);
  s.chunk_begin = layout.take<std::uint64_t>(n + 1);
  s.sums = layout.take<std::uint64_t>(n);
  s.payload = layout.take<std::byte>(payload_bytes);
  s.payload_bytes = payload_bytes;
  return s;
}

// The scratch's uploads from the descriptors on: the descriptors and frame offsets, and the sums
// at zero (the three lie side by side, so they go up in one copy).
template <typename Descriptor>
detail::upload_image stage(const scratch<Descriptor>& s, std::span<const Descriptor> descriptors,
                           std::span<const std::uint64_t> offsets) {
  detail::upload_image image(s.descriptors);
  image.put(s.descriptors, descriptors);
  image.put(s.offsets, offsets);
  image.zero(s.sums, descriptors.size() * sizeof(std::uint64_t));
  return image;
}

// The base class's own checksum pass, for codecs whose payload kernels do not sum: the chunk
// map goes up, then every payload's terms are added into s.sums.
template <typename Descriptor>
void add_checksums(const std::byte* frames, std::span<const std::uint64_t> offsets, const scratch<Descriptor>& s,
                   const frame_status* status, detail::upload_image& uploads, cudaStream_t stream) {
  checksum_plan const checksums = plan_checksums(offsets);
  uploads.put<std::uint64_t>(s.chunk_begin, checksums.chunk_begin);
  uploads.send(stream);
  kernels::add_checksums(frames, s.offsets, offsets.size() - 1, checksums.choice, s.chunk_begin,
                         checksums.chunk_begin.back(), status, s.sums, stream);
}

}  // namespace

std::size_t codec::encode_temp_bytes(std::span<const encode_source> sources) const {
  detail::temp_layout layout;
  carve<encode_source>(layout, sources.size(), encode_payloads_temp_bytes(sources));
  return layout.bytes();
}

void codec::encode_async(const encode_batch& batch, void* temp, std::size_t temp_bytes,
                         cudaStream_t stream) const {
  detail::check_encode_batch(*this, batch);
  std::size_t const n = batch.sources.size();
  if (n == 0) return;
  detail::temp_layout layout(temp, temp_bytes);
  auto const s = carve<encode_source>(layout, n, encode_payloads_temp_bytes(batch.sources));
  auto const sources = detail::with_params_sizes(*this, batch.sources);
  bool const params = std::any_of(sources.begin(), sources.end(), [](auto const& x) { return x.params_bytes != 0; });
  ZS_EXPECTS(!(params && sums_payloads()), "a codec with column parameters that leaves checksums to the base class");

  // Nothing goes to the GPU before the payload hook: it sends the descriptors, offsets and
  // zeroed sums with its own data in one copy, and the base class's header fields are written
  // after the payload, so the first payload kernel is the batch's first work on the GPU. Only
  // column parameters go in before it, for the body encoders to read.
  detail::upload_image uploads = stage<encode_source>(s, sources, batch.frame_offsets);
  if (params) {
    uploads.send(stream);
    kernels::copy_params(s.descriptors, batch.frames, s.offsets, n, stream);
  }
  encode_batch host = batch;
  host.sources = sources;
  encode_payloads_async(device_encode_batch{s.descriptors, batch.frames, s.offsets, n, s.sums}, host, s.payload,
                        s.payload_bytes, uploads, stream);
  if (params) kernels::seal_params(s.descriptors, batch.frames, s.offsets, n, stream);
  // Embedded frames are summed with the frame that holds them, not on their own.
  if (!sums_payloads() && !batch.embedded) add_checksums(batch.frames, batch.frame_offsets, s, nullptr, uploads, stream);
  uploads.send(stream);
  kernels::finish_headers(s.descriptors, batch.frames, s.offsets, n, s.sums, batch.embedded, batch.frame_bytes,
                          stream);
}

std::size_t codec::decode_temp_bytes(std::span<const decode_target> targets) const {
  detail::temp_layout layout;
  carve<decode_target>(layout, targets.size(), decode_payloads_temp_bytes(targets));
  return layout.bytes();
}

void codec::decode_async(const decode_batch& batch, void* temp, std::size_t temp_bytes,
                         cudaStream_t stream) const {
  detail::check_decode_batch(batch);
  // The GPU decoders copy payloads in 16-byte chunks (cp.async), which fault off a 16-byte
  // boundary: say so here instead.
  ZS_EXPECTS(reinterpret_cast<std::uintptr_t>(batch.frames) % frame_alignment == 0,
             "a frames buffer on a frame_alignment (16-byte) boundary");
  std::size_t const n = batch.targets.size();
  if (n == 0) return;
  detail::temp_layout layout(temp, temp_bytes);
  auto const s = carve<decode_target>(layout, n, decode_payloads_temp_bytes(batch.targets));

  // A codec that validates headers itself (as it sums payloads) gets the uploads unsent, and
  // sends them with its own.
  auto const targets = detail::with_params_sizes(*this, batch.targets);
  detail::upload_image uploads = stage<decode_target>(s, targets, batch.frame_offsets);
  if (!(validates_headers() && sums_payloads())) {
    uploads.send(stream);
    kernels::validate_headers(batch.frames, s.offsets, s.descriptors, n, decodes(), batch.status, stream);
  }
  // Payload checksums are compared before the payload decoders run, unless the codec sums
  // them as it decodes; then after. Embedded frames were covered by their enclosing frame's.
  bool const verify = !batch.embedded;
  if (!sums_payloads() && verify) {
    add_checksums(batch.frames, batch.frame_offsets, s, batch.status, uploads, stream);
    kernels::compare_checksums(batch.frames, s.offsets, n, s.sums, batch.status, stream);
  }
  decode_batch host = batch;
  host.targets = targets;
  decode_payloads_async(device_decode_batch{batch.frames, s.offsets, s.descriptors, batch.status, n, s.sums}, host,
                        s.payload, s.payload_bytes, uploads, stream);
  if (sums_payloads() && verify) kernels::compare_checksums(batch.frames, s.offsets, n, s.sums, batch.status, stream);
}

void codec::prepare_async(const sample_batch& samples, std::byte* params,
                          std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const {
  detail::check_sample_batch(*this, samples, params_offsets);
  bool const any = std::any_of(samples.pieces.begin(), samples.pieces.end(),
                               [&](auto const& piece) { return params_bytes(piece.type) != 0; });
  if (any) prepare_params_async(samples, params, params_offsets, stream);
}

}  // namespace zs
