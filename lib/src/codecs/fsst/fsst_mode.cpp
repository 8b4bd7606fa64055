#include "codecs/fsst/fsst_mode.hpp"

namespace zs::codecs {

const codec& choose_string_mode(const codec& chosen, const std::function<double(const codec&)>& ratio_of) {
  if (chosen.id() != codec_id::fsst) return chosen;
  const codec& dict = get_codec(codec_id::fsst_dict);
  return ratio_of(dict) * fsst_dict_most_bytes >= ratio_of(chosen) ? dict : chosen;
}

const codec& choose_string_mode(std::uint64_t fsst_frame_bytes, std::uint64_t fsst_dict_frame_bytes) {
  bool const saves = static_cast<double>(fsst_dict_frame_bytes) <= fsst_dict_most_bytes * static_cast<double>(fsst_frame_bytes);
  return get_codec(saves ? codec_id::fsst_dict : codec_id::fsst);
}

codec_id params_owner(codec_id id) noexcept { return id == codec_id::fsst_dict ? codec_id::fsst : id; }

}  // namespace zs::codecs
