// The choice between the two string codecs, per column: fsst (the default_codec of strings) or
// fsst_dict, by their estimates on a sample of the column. fsst_dict wins where values repeat
// (deb_maintainers: 2,247 distinct values in 63,440 rows) and loses a little where most are
// distinct, so neither is right for every column. fsst_dict must save at least an eighth of the
// bytes: it costs more time than fsst (a sort of the rows on encode, a gather on decode), and
// estimates from a sample are not exact. deb_descriptions, whose repeated descriptions make
// fsst_dict 2% smaller, stays fsst. The shuffle and the spill call this where they take a string
// column's default codec.
#pragma once

#include <functional>

#include "zs/codec.hpp"

namespace zs::codecs {

/// fsst_dict must make at most this share of fsst's bytes to be chosen.
inline constexpr double fsst_dict_most_bytes = 7.0 / 8.0;

/// `chosen` when it is not fsst; else fsst_dict where ratio_of(fsst_dict) (its estimated ratio on
/// the column's sample: codec::estimate or estimate_host) is at least ratio_of(fsst) /
/// fsst_dict_most_bytes, else fsst. ratio_of is called for both codecs, on the same sample.
const codec& choose_string_mode(const codec& chosen, const std::function<double(const codec&)>& ratio_of);

/// The same from the frame bytes each codec is estimated to make of one sample: fsst_dict where
/// its bytes are at most fsst_dict_most_bytes of fsst's.
const codec& choose_string_mode(std::uint64_t fsst_frame_bytes, std::uint64_t fsst_dict_frame_bytes);

/// The codec whose column parameters codec `id` prepares: fsst for fsst_dict (both build the
/// symbol table of the same sample of the column, the same bytes), else `id`. Parameters
/// prepared for one serve the other.
codec_id params_owner(codec_id id) noexcept;

}  // namespace zs::codecs
