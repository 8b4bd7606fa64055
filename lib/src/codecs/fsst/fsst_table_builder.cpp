#include "codecs/fsst/fsst_table_builder.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>
#include <utility>

#include "fsst/fsst_format.hpp"

namespace zs::codecs::fsst_tables {

std::vector<sample_chunk> plan_sample(std::span<const encode_source> pieces) {
  std::uint64_t total = 0;
  for (auto const& p : pieces) total += p.chars_bytes;
  std::vector<sample_chunk> chunks;
  if (total == 0) return chunks;
  // Chunk starts every `stride` characters of the column, pieces back to back; a chunk stops at
  // its piece's end.
  std::uint64_t const wanted = std::min<std::uint64_t>((total + chunk_bytes - 1) / chunk_bytes, sample_bytes / chunk_bytes);
  std::uint64_t const stride = total / wanted;
  std::uint64_t piece = 0, piece_start = 0;
  for (std::uint64_t j = 0; j < wanted; ++j) {
    std::uint64_t const at = j * stride;
    while (at >= piece_start + pieces[piece].chars_bytes) piece_start += pieces[piece++].chars_bytes;
    std::uint64_t const offset = at - piece_start;
    std::uint64_t const length = std::min(chunk_bytes, pieces[piece].chars_bytes - offset);
    chunks.push_back({piece, offset, length});
  }
  return chunks;
}

namespace {

struct symbol {
  std::uint64_t bytes = 0;
  std::uint32_t length = 0;
};

symbol concat(symbol a, symbol b) {
  std::uint32_t const length = std::min<std::uint32_t>(fsst::max_symbol_bytes, a.length + b.length);
  std::uint64_t const bytes = (a.bytes | (a.length >= 8 ? 0 : b.bytes << (8 * a.length))) & fsst::symbol_mask(length);
  return {bytes, length};
}

// A table under construction: its symbols (code = index) and the encoder's structures for them.
struct table {
  std::vector<symbol> symbols;
  std::unique_ptr<fsst::encode_table> lookup = std::make_unique<fsst::encode_table>();
  table() { fsst::clear(*lookup); }
  bool add(symbol s) {
    if (symbols.size() >= fsst::max_symbols) return false;
    if (!fsst::insert(*lookup, s.bytes, s.length, static_cast<std::uint32_t>(symbols.size()))) return false;
    symbols.push_back(s);
    return true;
  }
};

// Tokens while counting: 0..255 a single byte (a 1-byte symbol or an escaped byte alike, so
// that escaped bytes can become symbols), 256 + code a longer symbol.
constexpr std::uint32_t token_space = 256 + fsst::max_symbols + 1;

struct counts {
  std::vector<std::uint32_t> single = std::vector<std::uint32_t>(token_space, 0);
  std::vector<std::uint32_t> pair = std::vector<std::uint32_t>(token_space * token_space, 0);
};

symbol token_symbol(const table& t, std::uint32_t token) {
  return token < 256 ? symbol{token, 1} : t.symbols[token - 256];
}

// Chunk j takes part in a round over `fraction`/128 of the sample: a fixed pseudo-random subset.
bool in_round(std::size_t j, std::uint32_t fraction) {
  return fraction >= 128 || ((static_cast<std::uint64_t>(j) * 2654435761ULL) >> 7) % 128 < fraction;
}

void count(const table& t, std::span<const std::uint8_t> sample, std::span<const sample_chunk> chunks,
           std::uint32_t fraction, counts& c) {
  std::fill(c.single.begin(), c.single.end(), 0);
  std::fill(c.pair.begin(), c.pair.end(), 0);
  std::uint64_t at = 0;
  for (std::size_t j = 0; j < chunks.size(); at += chunks[j].length, ++j) {
    if (!in_round(j, fraction)) continue;
    const std::uint8_t* in = sample.data() + at;
    std::uint64_t const n = chunks[j].length;
    std::uint32_t previous = token_space;
    for (std::uint64_t p = 0; p < n;) {
      std::uint32_t const m = fsst::match(*t.lookup, in + p, n - p);
      std::uint32_t const length = m == fsst::escape_match ? 1 : m >> 8;
      std::uint32_t const token = length == 1 ? in[p] : 256 + (m & 0xff);
      ++c.single[token];
      // The first byte alone is a candidate too: a longer symbol may lose its place.
      if (length > 1) ++c.single[in[p]];
      if (previous != token_space) ++c.pair[previous * token_space + token];
      previous = token;
      p += length;
    }
  }
}

// Gains of candidate symbols by their bytes and length: open addressing over a power-of-two
// array, grown at half full (a few hundred thousand candidates a round; an ordered map of them
// took most of the table's building time).
class gain_map {
 public:
  struct entry {
    std::uint64_t bytes = 0;
    std::uint32_t length = 0;  // 0: an empty slot
    std::uint64_t gain = 0;
  };

  void add(symbol s, std::uint64_t gain) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    entry& e = find(s);
    if (e.length == 0) {
      e.bytes = s.bytes;
      e.length = s.length;
      ++used_;
    }
    e.gain += gain;
  }
  /// Empties the map but keeps its room (the rounds of one build reuse it).
  void clear() {
    std::fill(slots_.begin(), slots_.end(), entry{});
    used_ = 0;
  }
  const std::vector<entry>& slots() const { return slots_; }
  std::size_t size() const { return used_; }

 private:
  entry& find(symbol s) {
    std::size_t const mask = slots_.size() - 1;
    std::uint64_t const h = (s.bytes ^ (std::uint64_t{s.length} << 59)) * 0x9E3779B97F4A7C15ULL;
    for (std::size_t i = static_cast<std::size_t>(h >> 40) & mask;; i = (i + 1) & mask) {
      entry& e = slots_[i];
      if (e.length == 0 || (e.length == s.length && e.bytes == s.bytes)) return e;
    }
  }
  void grow() {
    std::vector<entry> old = std::move(slots_);
    slots_.assign(old.empty() ? 4096 : 2 * old.size(), entry{});
    for (auto const& e : old) {
      if (e.length != 0) find({e.bytes, e.length}) = e;
    }
  }

  std::vector<entry> slots_;
  std::size_t used_ = 0;
};

// The next table: the 255 candidates of highest gain that find a place in the lookup.
table make_table(const table& t, const counts& c, bool extend, gain_map& gains) {
  gains.clear();
  std::uint32_t const tokens = 256 + static_cast<std::uint32_t>(t.symbols.size());
  for (std::uint32_t a = 0; a < tokens; ++a) {
    if (c.single[a] == 0) continue;
    symbol const s = token_symbol(t, a);
    gains.add(s, std::uint64_t{c.single[a]} * s.length * (s.length == 1 ? 8 : 1));
    if (!extend || s.length == fsst::max_symbol_bytes) continue;
    const std::uint32_t* row = c.pair.data() + std::size_t{a} * token_space;
    for (std::uint32_t b = 0; b < tokens; ++b) {
      std::uint32_t const n = row[b];
      if (n == 0) continue;
      symbol const joined = concat(s, token_symbol(t, b));
      gains.add(joined, std::uint64_t{n} * joined.length);
    }
  }
  struct candidate {
    std::uint64_t gain;
    symbol s;
  };
  std::vector<candidate> ranked;
  ranked.reserve(gains.size());
  for (auto const& e : gains.slots()) {
    if (e.length != 0) ranked.push_back({e.gain, {e.bytes, e.length}});
  }
  // Highest gain first; ties to the longer symbol, then the smaller bytes, so the order is total
  // (and the table does not depend on the order the candidates were gathered in).
  auto const better = [](const candidate& x, const candidate& y) {
    if (x.gain != y.gain) return x.gain > y.gain;
    if (x.s.length != y.s.length) return x.s.length > y.s.length;
    return x.s.bytes < y.s.bytes;
  };
  // Only the head of the ranking is ever looked at: candidates that lose their place are rare,
  // so sort a prefix first (selected in linear time) and the rest only if the table is not full
  // by then.
  std::size_t const head = std::min<std::size_t>(ranked.size(), 4 * fsst::max_symbols);
  auto const head_end = ranked.begin() + static_cast<std::ptrdiff_t>(head);
  if (head < ranked.size()) std::nth_element(ranked.begin(), head_end, ranked.end(), better);
  std::sort(ranked.begin(), head_end, better);
  table next;
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    if (next.symbols.size() == fsst::max_symbols) break;
    if (k == head) std::sort(ranked.begin() + static_cast<std::ptrdiff_t>(head), ranked.end(), better);
    next.add(ranked[k].s);
  }
  return next;
}

std::uint64_t compressed_bytes(const table& t, std::span<const std::uint8_t> sample) {
  // The chunks compress alike back to back or one by one but for matches across their seams,
  // which only shift the measure of every table alike.
  std::uint64_t bytes = 0;
  for (std::uint64_t p = 0; p < sample.size();) {
    std::uint32_t const m = fsst::match(*t.lookup, sample.data() + p, sample.size() - p);
    bytes += m == fsst::escape_match ? 2 : 1;
    p += m == fsst::escape_match ? 1 : m >> 8;
  }
  return bytes;
}

// Reference code order: 2-byte symbols (those that no longer symbol extends first), then 3..8
// bytes, then 1 byte; within a group by bytes.
void serialize(const table& t, std::byte* block) {
  auto group = [](std::uint32_t length) { return length == 1 ? 8U : length - 1; };
  std::vector<symbol> order = t.symbols;
  auto extended = [&](const symbol& two) {
    return std::any_of(order.begin(), order.end(),
                       [&](const symbol& s) { return s.length > 2 && (s.bytes & 0xffff) == two.bytes; });
  };
  std::vector<std::pair<std::uint32_t, symbol>> keyed;  // (rank, symbol)
  std::uint32_t suffix_limit = 0;
  for (auto const& s : order) {
    std::uint32_t rank = group(s.length) * 2;
    if (s.length == 2 && !extended(s)) {
      ++suffix_limit;
    } else if (s.length == 2) {
      rank += 1;
    }
    keyed.push_back({rank, s});
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second.bytes < y.second.bytes;
  });
  std::memset(block, 0, fsst::table_bytes);
  std::uint8_t per_length[8] = {};
  for (auto const& s : order) ++per_length[s.length - 1];
  std::uint64_t const version = fsst::reference_version << 32 | std::uint64_t{suffix_limit} << 24 |
                                std::uint64_t{static_cast<std::uint32_t>(order.size())} << 8 | 1;
  detail::store_le(block, version, 8);
  for (std::uint32_t l = 0; l < 8; ++l) block[9 + l] = static_cast<std::byte>(per_length[l]);
  std::uint64_t at = fsst::table_header_bytes;
  for (auto const& [rank, s] : keyed) {
    for (std::uint32_t k = 0; k < s.length; ++k) block[at++] = static_cast<std::byte>((s.bytes >> (8 * k)) & 0xff);
  }
}

}  // namespace

void build_table(std::span<const std::uint8_t> sample, std::span<const sample_chunk> chunks, std::byte* block) {
  constexpr std::uint32_t fractions[] = {8, 38, 68, 98, 128};
  // Each round's table is measured on the whole sample while the next rounds count and rank:
  // the measures are half of a build's time and nothing but the final pick waits for them. The
  // pick is the same as measuring in turn: the first table smaller than every one before it,
  // starting from no table, which escapes every byte.
  std::vector<std::shared_ptr<const table>> tables;
  std::vector<std::future<std::uint64_t>> measures;
  auto current = std::make_shared<const table>();
  counts c;
  gain_map gains;
  for (std::uint32_t fraction : fractions) {
    count(*current, sample, chunks, fraction, c);
    // The last round only re-ranks what the table has, on the whole sample.
    current = std::make_shared<const table>(make_table(*current, c, fraction < 128, gains));
    tables.push_back(current);
    // Deferred where no thread can be started: measured below, in turn.
    measures.push_back(std::async(std::launch::async | std::launch::deferred,
                                  [t = current, sample] { return compressed_bytes(*t, sample); }));
  }
  std::uint64_t best_bytes = 2 * sample.size();
  auto best = std::make_shared<const table>();
  for (std::size_t k = 0; k < tables.size(); ++k) {
    std::uint64_t const bytes = measures[k].get();
    if (bytes < best_bytes) {
      best_bytes = bytes;
      best = tables[k];
    }
  }
  serialize(*best, block);
}

}  // namespace zs::codecs::fsst_tables
