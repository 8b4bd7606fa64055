// The part of a shuffle that does not depend on where the bytes live: who sends how many rows
// in which round, where each frame goes in the send and receive buffers, and where each decoded
// frame lands in the outputs. Shared by the host and device engines (shuffle.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "codec_groups.hpp"
#include "zs/codec.hpp"
#include "zs/comm/shuffle.hpp"

namespace zs::detail {

struct shuffle_plan {
  int ranks = 0;
  std::size_t columns = 0;
  std::uint64_t rounds = 0;
  std::vector<value_type> types;  // per column
  codec_groups codecs;            // the codec that compresses each column

  // How each partition travels: a carriage (0 raw, 1 compressed), or `by_alternative`.
  // Sender side per (column c, destination d), receiver side per (column c, source s); index
  // c * ranks + rank.
  std::vector<std::uint8_t> out_carriage, in_carriage;
  // Compressed by codecs.alternative(c) rather than codecs.of(c): where this rank chose fsst_dict
  // for a string column or dict for an integer one (`alternative`, per column).
  static constexpr std::uint8_t by_alternative = 2;
  std::vector<bool> alternative;
  // The frames this rank encodes, and those it decodes, batched by codec: a string column sent
  // raw travels in raw frames, so its frames may belong to two batches.
  std::vector<codec_groups::group> out_groups, in_groups;
  std::uint64_t frames_in_per_round = 0;  // frames this rank decodes each round

  // The codec whose frames carry column c when it travels `how`; nullptr when its rows travel
  // as they are (raw fixed-width partitions).
  const codec* frame_codec(std::size_t c, std::uint8_t how) const {
    if (how == by_alternative) return codecs.alternative(c);
    if (how != 0) return &codecs.of(c);
    return types[c] == value_type::string ? &get_codec(codec_id::raw) : nullptr;
  }
  std::size_t link(std::size_t c, int rank) const { return c * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(rank); }

  // Sender side: first row of (column c, destination d, round k) for k = 0..rounds, and for
  // strings the absolute character position of that row. Index: (c * ranks + d) * (rounds + 1) + k.
  std::vector<std::uint64_t> row_at;
  std::vector<std::int64_t> char_at;
  std::size_t boundary(std::size_t c, int d, std::uint64_t k) const {
    return (c * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(d)) * (rounds + 1) + k;
  }

  // Receiver side: rows and characters that (column c, source s, round k) brings, and where they
  // land in output column c. Index: (c * ranks + s) * rounds + k.
  std::vector<std::uint64_t> in_rows, in_chars, out_row, out_char;
  std::vector<std::uint64_t> out_rows_total, out_chars_total;  // per column
  std::size_t incoming(std::size_t c, int s, std::uint64_t k) const {
    return (c * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(s)) * rounds + k;
  }
};

}  // namespace zs::detail
