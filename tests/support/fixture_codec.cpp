#include "fixture_codec.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "temp_layout.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs::test {
namespace {

// Parameter block: byte 0 the inner codec's id (raw or bitpack_for), the rest zero.
constexpr std::uint64_t block_bytes = 16;

const codec& raw() { return get_codec(codec_id::raw); }
const codec& bitpack() { return get_codec(codec_id::bitpack_for); }

// The inner codec a parameter block names, or nullptr when it names none this fixture uses.
const codec* inner_of(const std::byte* block) {
  for (std::size_t k = 1; k < block_bytes; ++k) {
    if (block[k] != std::byte{0}) return nullptr;
  }
  auto const id = static_cast<codec_id>(block[0]);
  if (id == codec_id::raw) return &raw();
  if (id == codec_id::bitpack_for) return &bitpack();
  return nullptr;
}

encode_source plain(encode_source s) {
  s.params = nullptr;
  s.params_bytes = 0;
  return s;
}
decode_target plain(decode_target t) {
  t.params_bytes = 0;
  return t;
}

class choose_codec final : public codec {
 public:
  codec_id id() const noexcept override { return fixture_codec_id; }
  std::string_view name() const noexcept override { return "fixture_choose"; }
  bool supports(value_type type) const noexcept override { return is_valid(type); }
  int preference() const noexcept override { return -1; }  // never a default
  std::uint64_t params_bytes(value_type) const noexcept override { return block_bytes; }
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override {
    // bitpack frames are never larger than raw ones.
    return frame_header_bytes + params_section_bytes(block_bytes) + raw().max_frame_bytes(plain(source));
  }

 protected:
  static constexpr std::uint64_t body_at = frame_header_bytes + params_section_bytes(block_bytes);

  std::vector<std::byte> choose(const sample_batch& samples, std::span<const std::uint64_t> offsets,
                                const std::vector<codec_estimate>& by_raw,
                                const std::vector<codec_estimate>& by_bitpack) const {
    std::vector<std::byte> blocks(offsets.back(), std::byte{0});
    for (std::size_t c = 0; c < samples.columns(); ++c) {
      bool const packs = !by_bitpack.empty() && by_bitpack[c].frame_bytes < by_raw[c].frame_bytes;
      blocks[offsets[c]] = static_cast<std::byte>(packs ? codec_id::bitpack_for : codec_id::raw);
    }
    return blocks;
  }
  // bitpack's estimates, for samples of types it encodes (an empty vector otherwise).
  static bool all_integer(const sample_batch& samples) {
    return std::all_of(samples.pieces.begin(), samples.pieces.end(), [](auto const& p) { return is_integer(p.type); });
  }

  void prepare_params_host(const sample_batch& samples, std::byte* params,
                           std::span<const std::uint64_t> offsets) const override {
    auto const blocks = choose(samples, offsets, raw().estimate_host(samples),
                               all_integer(samples) ? bitpack().estimate_host(samples) : std::vector<codec_estimate>{});
    if (!blocks.empty()) std::memcpy(params, blocks.data(), blocks.size());
  }
  void prepare_params_async(const sample_batch& samples, std::byte* params, std::span<const std::uint64_t> offsets,
                            cudaStream_t stream) const override {
    auto const blocks =
        choose(samples, offsets, raw().estimate(samples, stream),
               all_integer(samples) ? bitpack().estimate(samples, stream) : std::vector<codec_estimate>{});
    copy_async(params, blocks.data(), blocks.size(), stream);
  }

  void encode_payload_host(const encode_source& source, std::byte* frame, std::uint64_t capacity) const override {
    const codec* inner = inner_of(source.params);
    ZS_EXPECTS(inner != nullptr && inner->supports(source.type), "parameters prepared by this codec");
    encode_source const s = plain(source);
    std::uint64_t const room[2] = {0, capacity - body_at};
    std::uint64_t bytes = 0;
    inner->encode_host({std::span(&s, 1), frame + body_at, room, &bytes, true});
    store_encoder_fields(frame, id(), bytes);
  }

  frame_status decode_payload_host(const frame_header& header, const std::byte* payload,
                                   const decode_target& target) const override {
    const codec* inner = inner_of(payload + params_prefix_bytes);
    if (inner == nullptr || !inner->supports(target.type)) return frame_status::corrupt_payload;
    std::uint64_t const body = header.payload_bytes - params_section_bytes(block_bytes);
    if (body < frame_header_bytes || load_header(payload + params_section_bytes(block_bytes)).payload_bytes !=
                                         body - frame_header_bytes) {
      return frame_status::corrupt_payload;
    }
    decode_target const t = plain(target);
    std::uint64_t const room[2] = {0, body};
    frame_status status = frame_status::not_decoded;
    inner->decode_host({payload + params_section_bytes(block_bytes), room, std::span(&t, 1), &status, true});
    return status == frame_status::ok ? status : frame_status::corrupt_payload;
  }

  // GPU: frames grouped by inner codec, each group one embedded batch of that codec.
  void encode_payloads_async(const device_encode_batch&, const encode_batch& host, void*, std::size_t,
                             detail::upload_image& uploads, cudaStream_t stream) const override {
    uploads.send(stream);
    std::size_t const n = host.sources.size();
    std::map<const std::byte*, std::byte> chosen;
    for (auto const& s : host.sources) chosen[s.params] = std::byte{0};
    for (auto& [block, id] : chosen) copy_async(&id, block, 1, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    std::map<const codec*, std::vector<std::size_t>> groups;
    for (std::size_t f = 0; f < n; ++f) {
      std::byte block[block_bytes] = {chosen[host.sources[f].params]};
      groups[inner_of(block)].push_back(f);
    }
    for (auto const& [inner, frames] : groups) {
      ZS_EXPECTS(inner != nullptr, "parameters prepared by this codec");
      std::vector<encode_source> sources;
      std::vector<std::uint64_t> offsets;
      for (std::size_t f : frames) {
        sources.push_back(plain(host.sources[f]));
        offsets.push_back(host.frame_offsets[f] + body_at);
      }
      offsets.push_back(host.frame_offsets[frames.back() + 1]);
      std::vector<std::uint64_t> inner_offsets(offsets.size());
      for (std::size_t i = 0; i < offsets.size(); ++i) inner_offsets[i] = offsets[i] - offsets[0];
      device_buffer sizes(frames.size() * sizeof(std::uint64_t), stream);
      device_buffer temp(inner->encode_temp_bytes(sources), stream);
      inner->encode_async({sources, host.frames + offsets[0], inner_offsets, sizes.as<std::uint64_t>(), true},
                          temp.data(), temp.size(), stream);
      std::vector<std::uint64_t> body_bytes(frames.size());
      copy_async(body_bytes.data(), sizes.data(), frames.size() * sizeof(std::uint64_t), stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
      for (std::size_t i = 0; i < frames.size(); ++i) {
        std::byte fields[8];
        detail::store_le(fields, body_bytes[i], 8);
        std::byte* frame = host.frames + host.frame_offsets[frames[i]];
        std::byte const id_byte = static_cast<std::byte>(id());
        copy_async(frame + 6, &id_byte, 1, stream);
        copy_async(frame + 24, fields, 8, stream);
        std::byte const zeros[codec_params_bytes] = {};
        copy_async(frame + 40, zeros, codec_params_bytes, stream);
      }
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    }
  }

  void decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void*, std::size_t,
                             detail::upload_image& uploads, cudaStream_t stream) const override {
    uploads.send(stream);
    std::size_t const n = host.targets.size();
    // The statuses so far and, for frames still ok, each one's choice and body size.
    std::vector<frame_status> status(n);
    copy_async(status.data(), batch.status, n * sizeof(frame_status), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    // Each frame still ok: its header, parameter section and the inner frame's header.
    constexpr std::uint64_t head_bytes = body_at + frame_header_bytes;
    std::vector<std::byte> heads(n * head_bytes);
    for (std::size_t f = 0; f < n; ++f) {
      std::uint64_t const room = host.frame_offsets[f + 1] - host.frame_offsets[f];
      if (status[f] == frame_status::ok && room < head_bytes) status[f] = frame_status::corrupt_payload;
      if (status[f] != frame_status::ok) continue;
      copy_async(heads.data() + f * head_bytes, host.frames + host.frame_offsets[f], head_bytes, stream);
    }
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    std::map<const codec*, std::vector<std::size_t>> groups;
    for (std::size_t f = 0; f < n; ++f) {
      if (status[f] != frame_status::ok) continue;
      const std::byte* head = heads.data() + f * head_bytes;
      const codec* inner = inner_of(head + frame_header_bytes + params_prefix_bytes);
      std::uint64_t const body = load_header(head).payload_bytes - params_section_bytes(block_bytes);
      // The inner frame must fill the body exactly: its decoder then reads nothing outside it.
      if (inner == nullptr || !inner->supports(host.targets[f].type) || body < frame_header_bytes ||
          load_header(head + body_at).payload_bytes != body - frame_header_bytes) {
        status[f] = frame_status::corrupt_payload;
        continue;
      }
      groups[inner].push_back(f);
    }
    for (auto const& [inner, frames] : groups) {
      std::vector<decode_target> targets;
      std::vector<std::uint64_t> offsets;
      for (std::size_t f : frames) {
        targets.push_back(plain(host.targets[f]));
        offsets.push_back(host.frame_offsets[f] + body_at);
      }
      // Each inner frame's room ends where its outer payload does.
      std::uint64_t const last = frames.back();
      frame_header const h = load_header(heads.data() + last * head_bytes);
      offsets.push_back(host.frame_offsets[last] + frame_header_bytes + h.payload_bytes);
      std::vector<std::uint64_t> inner_offsets(offsets.size());
      for (std::size_t i = 0; i < offsets.size(); ++i) inner_offsets[i] = offsets[i] - offsets[0];
      device_buffer inner_status(frames.size() * sizeof(frame_status), stream);
      device_buffer temp(inner->decode_temp_bytes(targets), stream);
      inner->decode_async({host.frames + offsets[0], inner_offsets, targets, inner_status.as<frame_status>(), true},
                          temp.data(), temp.size(), stream);
      std::vector<frame_status> got(frames.size());
      copy_async(got.data(), inner_status.data(), got.size() * sizeof(frame_status), stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (got[i] != frame_status::ok) status[frames[i]] = frame_status::corrupt_payload;
      }
    }
    copy_async(batch.status, status.data(), n * sizeof(frame_status), stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  }
};

}  // namespace

const codec& register_fixture_codec() {
  static const choose_codec instance;
  static const bool registered = (register_codec(instance), true);
  (void)registered;
  return instance;
}

}  // namespace zs::test
