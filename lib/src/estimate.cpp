// The default estimate (codec::estimate): encode a bounded share of each column's sample the
// way a shuffle would, parameters included, and count the frame bytes. Exact for the rows it
// reads, codec-neutral, and cheap beside the column: at most estimate_sample_bytes per column,
// in runs spread over each piece, one frame per run.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/batch_ops.hpp"
#include "zs/codec.hpp"
#include "zs/error.hpp"
#include "zs/frame.hpp"
#include "zs/memory.hpp"

namespace zs {

namespace {

std::uint64_t uncompressed(const encode_source& s) {
  return s.type == value_type::string ? s.chars_bytes + 8 * s.count : s.count * value_width(s.type);
}

// Runs of rows a piece larger than its share gives: up to this many, spread evenly over it, so
// that a column whose start is unlike the rest (sorted, or a flat stretch) is still seen whole;
// but none below min_run_bytes, since each run is a frame, and a frame's fixed bytes (header,
// an fsst frame's lengths and split offsets, a dictionary) weigh on a small one as they do not on
// the frames of a shuffle or spill. Sixteen runs of 2 KiB (a spill's sample of 8 frames)
// estimated deb_paths at 1.67 where its frames compress 1.98; runs of 16 KiB give 1.93.
constexpr std::uint64_t runs_per_piece = 16;
constexpr std::uint64_t min_run_bytes = std::uint64_t{16} << 10;

// The rows each column's sample gives: an equal share of the budget from each piece, as runs
// spread over the piece. `read_offsets` reads string offsets at the addresses it is given (device
// or host memory), all at once: a string run's characters are its last offset minus its first.
// Returns the runs, and per column the index of its first run (columns + 1 entries).
template <typename ReadOffsets>
std::vector<encode_source> cut_sample(const sample_batch& samples, std::vector<std::uint64_t>& begin,
                                      ReadOffsets read_offsets) {
  __extension__ typedef unsigned __int128 wide;
  std::vector<encode_source> cut;
  std::vector<std::size_t> string_runs;
  std::vector<const std::int64_t*> ends;  // a string run's first and last offsets
  begin.assign(1, 0);
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    auto const pieces = samples.of(c);
    std::uint64_t const share =
        pieces.empty() ? 0 : std::max<std::uint64_t>(1, codec::estimate_sample_bytes / pieces.size());
    for (encode_source const& piece : pieces) {
      std::uint64_t const bytes = uncompressed(piece);
      if (bytes <= share || piece.count <= 1) {
        cut.push_back(piece);
        continue;
      }
      // Rows in proportion to the share of the piece's bytes, at least one per run.
      auto const rows = static_cast<std::uint64_t>(std::max<wide>(1, static_cast<wide>(piece.count) * share / bytes));
      std::uint64_t const runs = std::min({runs_per_piece, rows, std::max<std::uint64_t>(1, share / min_run_bytes)});
      std::uint64_t const run_rows = rows / runs;
      for (std::uint64_t r = 0; r < runs; ++r) {
        auto const first = static_cast<std::uint64_t>(static_cast<wide>(piece.count - run_rows) * r / std::max<std::uint64_t>(1, runs - 1));
        encode_source run = piece;
        run.count = run_rows;
        if (piece.type == value_type::string) {
          run.offsets = piece.offsets + first;
          string_runs.push_back(cut.size());
          ends.push_back(run.offsets);
          ends.push_back(run.offsets + run.count);
        } else {
          run.values = static_cast<const std::byte*>(piece.values) + first * value_width(piece.type);
          run.null_mask_bit = piece.null_mask_bit + first;
        }
        cut.push_back(run);
      }
    }
    begin.push_back(cut.size());
  }
  if (string_runs.empty()) return cut;
  std::vector<std::int64_t> const offsets = read_offsets(ends);
  for (std::size_t r = 0; r < string_runs.size(); ++r) {
    if (offsets[2 * r + 1] < offsets[2 * r]) ZS_FAIL(error_code::invalid_argument, "a sample's string offsets decrease");
    cut[string_runs[r]].chars_bytes = static_cast<std::uint64_t>(offsets[2 * r + 1] - offsets[2 * r]);
  }
  return cut;
}

std::vector<value_type> column_types(const sample_batch& samples) {
  std::vector<value_type> types;
  for (std::size_t c = 0; c < samples.columns(); ++c) {
    auto const pieces = samples.of(c);
    types.push_back(pieces.empty() ? value_type::int32 : pieces.front().type);
  }
  return types;
}

// Per column: the raw bytes of its pieces in `cut` and the frame bytes they made, with the
// column's parameters counted once. Every frame carries them (an FSST symbol table: up to 2 KiB),
// but the sample's frames are a few KiB each where a shuffle's or a spill's are MiBs, so counted
// per sample frame they would halve the estimate of a string column that compresses 2x.
std::vector<codec_estimate> tally(const codec& c, const sample_batch& cut, const std::vector<std::uint64_t>& frame_bytes) {
  std::vector<codec_estimate> out(cut.columns());
  for (std::size_t col = 0; col < cut.columns(); ++col) {
    std::uint64_t const first = cut.piece_begin[col];
    for (std::uint64_t i = first; i < cut.piece_begin[col + 1]; ++i) {
      std::uint64_t const params = params_section_bytes(c.params_bytes(cut.pieces[i].type)) - params_section_bytes(0);
      out[col].raw_bytes += uncompressed(cut.pieces[i]);
      out[col].frame_bytes += i == first ? frame_bytes[i] : frame_bytes[i] - std::min(params, frame_bytes[i]);
    }
  }
  return out;
}

// Whether the caller prepared the parameters: every piece carries them (a sample's runs keep
// their piece's). Then the estimate encodes with the column's own parameters, and spares building
// them again (an FSST symbol table costs milliseconds of host time).
bool carries_params(const sample_batch& samples) {
  return !samples.pieces.empty() &&
         std::all_of(samples.pieces.begin(), samples.pieces.end(), [](const encode_source& s) { return s.params != nullptr; });
}

// Each piece's parameters point at its column's block.
void point_at_params(const sample_batch& cut, std::vector<encode_source>& pieces, std::byte* params,
                     const std::vector<std::uint64_t>& params_offsets) {
  for (std::size_t c = 0; c < cut.columns(); ++c) {
    for (std::uint64_t i = cut.piece_begin[c]; i < cut.piece_begin[c + 1]; ++i) {
      pieces[i].params = params + params_offsets[c];
    }
  }
}

// The device offsets at `at`, by one batched copy and one wait: a string sample has up to 16 runs
// a piece, and a read and a wait per run cost more than the estimate's encoding.
std::vector<std::int64_t> read_device_offsets(const std::vector<const std::int64_t*>& at, cudaStream_t stream) {
  std::size_t const n = at.size();
  device_buffer values(n * sizeof(std::int64_t), stream);
  std::vector<std::uint64_t> lists(3 * n);  // sources, destinations, sizes
  for (std::size_t i = 0; i < n; ++i) {
    lists[i] = reinterpret_cast<std::uintptr_t>(at[i]);
    lists[n + i] = reinterpret_cast<std::uintptr_t>(values.as<std::int64_t>() + i);
    lists[2 * n + i] = sizeof(std::int64_t);
  }
  device_buffer d_lists(lists.size() * 8, stream);
  copy_async(d_lists.data(), lists.data(), lists.size() * 8, stream);
  device_buffer temp(kernels::copy_buffers_temp_bytes(n), stream);
  auto* const words = d_lists.as<std::uint64_t>();
  kernels::copy_buffers(reinterpret_cast<const void* const*>(words), reinterpret_cast<void* const*>(words + n),
                        words + 2 * n, n, temp.data(), temp.size(), stream);
  std::vector<std::int64_t> out(n);
  copy_async(out.data(), values.data(), n * sizeof(std::int64_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace

std::vector<codec_estimate> codec::estimate_host(const sample_batch& samples) const {
  std::vector<std::uint64_t> params_offsets = layout_params(*this, column_types(samples));
  std::vector<std::uint64_t> begin;
  auto pieces = cut_sample(samples, begin, [](const std::vector<const std::int64_t*>& at) {
    std::vector<std::int64_t> values;
    for (const std::int64_t* a : at) values.push_back(*a);
    return values;
  });
  sample_batch const cut{pieces, begin};
  std::vector<std::byte> params(std::max<std::uint64_t>(params_offsets.back(), 1));
  if (!carries_params(samples)) {
    prepare_host(cut, params.data(), params_offsets);
    point_at_params(cut, pieces, params.data(), params_offsets);
  }
  auto const layout = layout_frames(*this, pieces);
  std::vector<std::byte> frames(std::max<std::uint64_t>(layout.back(), 1));
  std::vector<std::uint64_t> frame_bytes(pieces.size());
  encode_host({pieces, frames.data(), layout, frame_bytes.data()});
  return tally(*this, cut, frame_bytes);
}

std::vector<codec_estimate> codec::estimate(const sample_batch& samples, cudaStream_t stream) const {
  std::vector<std::uint64_t> const params_offsets = layout_params(*this, column_types(samples));
  std::vector<std::uint64_t> begin;
  auto pieces = cut_sample(samples, begin, [&](const std::vector<const std::int64_t*>& at) {
    return read_device_offsets(at, stream);
  });
  sample_batch const cut{pieces, begin};
  device_buffer params(std::max<std::uint64_t>(params_offsets.back(), 1), stream);
  if (!carries_params(samples)) {
    prepare_async(cut, params.as<std::byte>(), params_offsets, stream);
    point_at_params(cut, pieces, params.as<std::byte>(), params_offsets);
  }
  auto const layout = layout_frames(*this, pieces);
  device_buffer frames(std::max<std::uint64_t>(layout.back(), 1), stream);
  device_buffer written(std::max<std::size_t>(pieces.size(), 1) * sizeof(std::uint64_t), stream);
  device_buffer temp(encode_temp_bytes(pieces), stream);
  encode_async({pieces, frames.as<std::byte>(), layout, written.as<std::uint64_t>()}, temp.data(), temp.size(), stream);
  std::vector<std::uint64_t> frame_bytes(pieces.size());
  if (!pieces.empty()) copy_async(frame_bytes.data(), written.data(), pieces.size() * sizeof(std::uint64_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return tally(*this, cut, frame_bytes);
}

}  // namespace zs
