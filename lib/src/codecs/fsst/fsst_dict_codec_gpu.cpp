// The fsst_dict codec on the GPU, for now through host memory: each batch is copied down, coded
// by the CPU reference, and its frames or values copied up, so that it gives the CPU's bytes on
// either side. Finding the distinct values on the GPU (hashing each row, keeping each value's
// first row) is what would make it fast.
#include <vector>

#include "codecs/fsst/fsst_codec.hpp"
#include "codecs/fsst/fsst_dict_codec.hpp"
#include "fsst/fsst_format.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs::codecs {

void fsst_dict_codec::prepare_params_async(const sample_batch& samples, std::byte* params,
                                           std::span<const std::uint64_t> params_offsets, cudaStream_t stream) const {
  // The fsst codec's tables: the same preparation, sample gathered on the GPU.
  get_codec(codec_id::fsst).prepare_async(samples, params, params_offsets, stream);
}

void fsst_dict_codec::encode_payloads_async(const device_encode_batch&, const encode_batch& host, void*, std::size_t,
                                            detail::upload_image& uploads, cudaStream_t stream) const {
  uploads.send(stream);
  std::size_t const n = host.sources.size();
  std::vector<std::vector<std::int64_t>> offsets(n);
  for (std::size_t f = 0; f < n; ++f) {
    offsets[f].resize(host.sources[f].count + 1);
    copy_async(offsets[f].data(), host.sources[f].offsets, offsets[f].size() * sizeof(std::int64_t), stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<std::vector<std::byte>> chars(n), tables(n);
  for (std::size_t f = 0; f < n; ++f) {
    auto const& s = host.sources[f];
    chars[f].resize(s.chars_bytes);
    copy_async(chars[f].data(), static_cast<const std::byte*>(s.values) + offsets[f][0], s.chars_bytes, stream);
    tables[f].resize(fsst::table_bytes);
    copy_async(tables[f].data(), s.params, fsst::table_bytes, stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::uint64_t const body_at = frame_header_bytes + fsst_detail::body_offset();
  std::vector<std::vector<std::byte>> frames(n);
  for (std::size_t f = 0; f < n; ++f) {
    std::int64_t const first = offsets[f][0];
    for (auto& o : offsets[f]) o -= first;
    encode_source s = host.sources[f];
    s.values = chars[f].data();
    s.offsets = offsets[f].data();
    s.params = tables[f].data();
    std::uint64_t const capacity = host.frame_offsets[f + 1] - host.frame_offsets[f];
    frames[f].assign(capacity, std::byte{0});
    encode_payload_host(s, frames[f].data(), capacity);
    // The fields the encoder owns (the base class completes the header on the device) and the body.
    std::byte* frame = host.frames + host.frame_offsets[f];
    copy_async(frame, frames[f].data(), frame_header_bytes, stream);
    std::uint64_t const body = load_header(frames[f].data()).payload_bytes;
    copy_async(frame + body_at, frames[f].data() + body_at, body, stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
}

void fsst_dict_codec::decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void*,
                                            std::size_t, detail::upload_image& uploads, cudaStream_t stream) const {
  uploads.send(stream);
  std::size_t const n = host.targets.size();
  std::vector<frame_status> status(n);
  if (n != 0) copy_async(status.data(), batch.status, n * sizeof(frame_status), stream);
  std::vector<std::byte> headers(n * frame_header_bytes);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    copy_async(headers.data() + f * frame_header_bytes, host.frames + host.frame_offsets[f], frame_header_bytes, stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  // Frames that passed validation: their payloads lie inside their rooms.
  std::vector<std::vector<std::byte>> payloads(n);
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    payloads[f].resize(load_header(headers.data() + f * frame_header_bytes).payload_bytes);
    copy_async(payloads[f].data(), host.frames + host.frame_offsets[f] + frame_header_bytes, payloads[f].size(), stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<std::vector<std::int64_t>> offsets(n);
  std::vector<std::vector<std::byte>> chars(n);
  for (std::size_t f = 0; f < n; ++f) {
    if (status[f] != frame_status::ok) continue;
    decode_target const& t = host.targets[f];
    offsets[f].resize(t.count + 1);
    chars[f].resize(t.chars_bytes);
    decode_target local = t;
    local.values = chars[f].data();
    local.offsets = offsets[f].data();
    local.chars_begin = 0;
    status[f] = decode_payload_host(load_header(headers.data() + f * frame_header_bytes), payloads[f].data(), local);
    if (status[f] != frame_status::ok) continue;
    for (auto& o : offsets[f]) o += static_cast<std::int64_t>(t.chars_begin);
    copy_async(t.offsets, offsets[f].data(), offsets[f].size() * sizeof(std::int64_t), stream);
    copy_async(static_cast<std::byte*>(t.values) + t.chars_begin, chars[f].data(), chars[f].size(), stream);
  }
  if (n != 0) copy_async(batch.status, status.data(), n * sizeof(frame_status), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
}

}  // namespace zs::codecs
