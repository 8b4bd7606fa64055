// The codec setup the shuffle and the column collectives share: which codec encodes each
// column, the batches (groups) those choices form, the text ranks compare to agree on them, and
// the encoding of one batch per group with each column's parameters prepared first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zs/codec.hpp"
#include "zs/error.hpp"

namespace zs::detail {

class codec_groups {
 public:
  /// The columns one batched call encodes (and decodes), in order of first use.
  struct group {
    const codec* c;
    std::vector<std::size_t> columns;
  };

  codec_groups() = default;

  /// `forced` for every column, else default_codec(type). Throws unsupported, naming the
  /// column, where the codec does not encode the column's type. Types must be valid.
  codec_groups(std::span<const value_type> types, std::optional<codec_id> forced, std::string_view operation)
      : codec_groups(types, std::vector<std::optional<codec_id>>(types.size(), forced), operation) {}

  /// The same with a choice per column (`forced[c]`, else default_codec(type)).
  codec_groups(std::span<const value_type> types, std::span<const std::optional<codec_id>> forced,
               std::string_view operation) {
    for (std::size_t c = 0; c < types.size(); ++c) {
      const codec* chosen = forced[c] ? &get_codec(*forced[c]) : &default_codec(types[c]);
      if (!chosen->supports(types[c])) {
        ZS_FAIL(error_code::unsupported, std::string(operation) + ": codec '" + std::string(chosen->name()) +
                                             "' does not encode " + std::string(to_string(types[c])) + " (column " +
                                             std::to_string(c) + ")");
      }
      codec_of_.push_back(chosen);
      // A column left to the default may travel in the alternative codec of its type instead,
      // where its sender decides so; one named by the caller may not.
      const codec* alternative = nullptr;
      if (!forced[c] && chosen->id() == codec_id::fsst) alternative = &get_codec(codec_id::fsst_dict);
      if (!forced[c] && chosen->id() == codec_id::bitpack_for) alternative = &get_codec(codec_id::dict);
      alternative_of_.push_back(alternative);
      add(chosen, c);
    }
  }

  /// What every rank must pass alike, for agree_on_shape: "3 column(s) [int32 for, string raw,
  /// float64 raw]". Types must be valid; codec ids are named whether or not they are registered.
  static std::string describe(std::span<const value_type> types, std::optional<codec_id> forced) {
    return describe(types, std::vector<std::optional<codec_id>>(types.size(), forced));
  }
  static std::string describe(std::span<const value_type> types, std::span<const std::optional<codec_id>> forced) {
    std::string text = std::to_string(types.size()) + " column(s) [";
    for (std::size_t c = 0; c < types.size(); ++c) {
      codec_id const id = forced[c] ? *forced[c] : default_codec(types[c]).id();
      text += (c == 0 ? "" : ", ") + std::string(to_string(types[c])) + " " + std::string(to_string(id));
    }
    return text + "]";
  }

  /// Adds `column` to the group of `c` (a new group at the end if `c` has none yet).
  void add(const codec* c, std::size_t column) {
    std::size_t g = 0;
    while (g < groups_.size() && groups_[g].c != c) ++g;
    if (g == groups_.size()) groups_.push_back({c, {}});
    groups_[g].columns.push_back(column);
  }

  const codec& of(std::size_t column) const { return *codec_of_[column]; }
  /// The codec a sender may take instead of of(column), for a column left to default_codec:
  /// fsst_dict for strings (where the column's values repeat: codecs::choose_string_mode),
  /// dict for integers (a dictionary per frame where it is smaller, else bitpack_ext's frames:
  /// where those smaller frames save more link time than its slower kernels cost, which only the
  /// shuffle's planner weighs); else nullptr.
  const codec* alternative(std::size_t column) const { return alternative_of_[column]; }
  /// Whether alternative(column) is chosen by frame size alone (fsst_dict), which every caller
  /// can do from estimates, rather than by the links (dict), which only the planner weighs.
  bool alternative_by_size(std::size_t column) const {
    return alternative_of_[column] != nullptr && alternative_of_[column]->id() == codec_id::fsst_dict;
  }
  std::span<const group> groups() const noexcept { return groups_; }

 private:
  std::vector<const codec*> codec_of_, alternative_of_;
  std::vector<group> groups_;
};

/// What a batch of columns (samples of each, as codec::estimate takes them) is estimated to make
/// with codec `c`, and with `alternative` too where it is not null (codec_groups::alternative).
/// Both estimates encode with one set of column parameters, prepared here where `c` has any,
/// where each would otherwise prepare its own: an FSST table serves fsst and fsst_dict alike.
/// `pieces` are the samples' pieces, their params set here; `types` has one entry per column.
/// `Ops` is host_ops or device_ops (collective_engines.hpp).
struct batch_estimates {
  std::vector<codec_estimate> plain, alternative;  // per column; alternative empty without one
};
template <typename Ops>
batch_estimates estimate_batch(const Ops& ops, const codec& c, const codec* alternative,
                               std::vector<encode_source>& pieces, std::span<const std::uint64_t> piece_begin,
                               std::span<const value_type> types) {
  batch_estimates out;
  typename Ops::buffer params;
  auto const offsets = alternative != nullptr ? layout_params(c, types) : std::vector<std::uint64_t>{0};
  if (offsets.back() > 0) {
    params = ops.allocate(offsets.back());
    ops.prepare(c, sample_batch{pieces, piece_begin}, params.template as<std::byte>(), offsets);
    for (std::size_t i = 0; i + 1 < piece_begin.size(); ++i) {
      for (auto j = piece_begin[i]; j < piece_begin[i + 1]; ++j) pieces[j].params = params.template as<std::byte>() + offsets[i];
    }
  }
  sample_batch const samples{pieces, piece_begin};
  out.plain = ops.estimate(c, samples);
  if (alternative != nullptr) out.alternative = ops.estimate(*alternative, samples);
  return out;
}

/// Frames encoded group by group into one scratch buffer: frame j of group g at
/// scratch + base[g] + layouts[g][j], its size in frame_bytes (groups one after another).
template <typename Buffer>
struct encoded_groups {
  Buffer scratch, frame_bytes;
  std::vector<Buffer> params;  // column parameters of the groups that have them, kept until encoded
  std::vector<std::uint64_t> base;
  std::vector<std::vector<std::uint64_t>> layouts;
};

/// Encodes sources[g] with all[g].c for every group; column_of[g][j] is the column
/// of sources[g][j], column_types[c] the type of column c. A codec with column parameters first
/// prepares each column's from that column's frames in the batch (one call per group, batched
/// over its columns), and every frame of the column points at them. `Ops` is host_ops or
/// device_ops (collective_engines.hpp).
template <typename Ops>
encoded_groups<typename Ops::buffer> encode_groups(const Ops& ops, std::span<const codec_groups::group> all,
                                                   std::span<const value_type> column_types,
                                                   std::vector<std::vector<encode_source>>& sources,
                                                   const std::vector<std::vector<std::size_t>>& column_of) {
  encoded_groups<typename Ops::buffer> out;
  for (std::size_t g = 0; g < all.size(); ++g) {
    auto const& columns = all[g].columns;
    std::vector<value_type> types;
    for (std::size_t c : columns) types.push_back(column_types[c]);
    auto const offsets = layout_params(*all[g].c, types);
    if (offsets.back() == 0) continue;
    // Column i of the group: its frames are pieces [piece_begin[i], piece_begin[i + 1]).
    std::vector<encode_source> pieces;
    std::vector<std::uint64_t> piece_begin{0};
    for (std::size_t c : columns) {
      for (std::size_t j = 0; j < sources[g].size(); ++j) {
        if (column_of[g][j] == c) pieces.push_back(sources[g][j]);
      }
      piece_begin.push_back(pieces.size());
    }
    out.params.push_back(ops.allocate(offsets.back()));
    std::byte* const blocks = out.params.back().template as<std::byte>();
    ops.prepare(*all[g].c, sample_batch{pieces, piece_begin}, blocks, offsets);
    for (std::size_t j = 0; j < sources[g].size(); ++j) {
      auto const i = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), column_of[g][j]) - columns.begin());
      sources[g][j].params = blocks + offsets[i];
    }
  }
  std::uint64_t scratch_bytes = 0, frames = 0;
  for (std::size_t g = 0; g < all.size(); ++g) {
    out.layouts.push_back(layout_frames(*all[g].c, sources[g]));
    out.base.push_back(scratch_bytes);
    scratch_bytes += out.layouts.back().back();
    frames += sources[g].size();
  }
  out.scratch = ops.allocate(scratch_bytes);
  out.frame_bytes = ops.allocate(frames * sizeof(std::uint64_t));
  std::size_t first = 0;
  for (std::size_t g = 0; g < all.size(); ++g) {
    ops.encode(*all[g].c, sources[g], out.scratch.template as<std::byte>() + out.base[g], out.layouts[g],
               out.frame_bytes.template as<std::uint64_t>() + first);
    first += sources[g].size();
  }
  return out;
}

}  // namespace zs::detail
