// Compressed all-gather and broadcast of columns (column_collectives.hpp): one protocol, two
// engines, as in the shuffle, built on the primitives of collective_engines.hpp:
//   host_engine    host memory, CPU reference codecs, the host communicator;
//   device_engine  device memory, GPU codecs, a device communicator. With no rounds to overlap,
//                  everything runs on the caller's stream.
#include "zs/comm/column_collectives.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "codec_groups.hpp"
#include "codecs/fsst/fsst_mode.hpp"
#include "collective_engines.hpp"
#include "null_columns.hpp"
#include "shuffle_manifest.hpp"
#include "zs/error.hpp"
#include "zs/fault.hpp"
#include "zs/memory.hpp"
#include "zs/null_mask.hpp"

namespace zs {

namespace {

using clock_type = std::chrono::steady_clock;
using detail::add_counts;
using detail::attempt;
using detail::bytes_of;
using detail::describe_column;
using detail::failure;

// Only for sums the ranks have checked already (add_counts).
std::uint64_t sum(std::span<const std::uint64_t> values) {
  std::uint64_t total = 0;
  for (auto v : values) total += v;
  return total;
}

// ---------------------------------------------------------------------------------------------
// Engines: the shared primitives (collective_engines.hpp), the collectives that move the frames,
// and how this rank reads the ends of its string columns.

class host_engine : public detail::host_ops {
 public:
  explicit host_engine(communicator& comm) : comm_(comm) {}

  communicator& host() { return comm_; }

  static std::vector<std::int64_t> read(std::span<const std::int64_t* const> at) {
    std::vector<std::int64_t> out(at.size());
    for (std::size_t i = 0; i < at.size(); ++i) out[i] = *at[i];
    return out;
  }

  void allgatherv(buffer& send, std::uint64_t send_bytes, buffer& recv, std::span<const std::uint64_t> counts) {
    comm_.allgatherv(std::span(send.as<const std::byte>(), send_bytes), std::span(recv.as<std::byte>(), sum(counts)),
                     counts);
  }
  void bcast(buffer& frames, std::uint64_t bytes, int root) {
    comm_.bcast(std::span(frames.as<std::byte>(), bytes), root);
  }

 private:
  communicator& comm_;
};

class device_engine : public detail::device_ops {
 public:
  device_engine(device_communicator& comm, cudaStream_t stream) : device_ops(stream, comm), comm_(comm) {}

  communicator& host() { return comm_.host(); }

  std::vector<std::int64_t> read(std::span<const std::int64_t* const> at) const {
    std::vector<std::int64_t> out(at.size());
    if (at.empty()) return out;
    // Gathered on the device first, so one copy and one synchronisation serve every column.
    device_buffer gathered(at.size() * sizeof(std::int64_t), stream());
    for (std::size_t i = 0; i < at.size(); ++i) {
      copy_async(gathered.as<std::int64_t>() + i, at[i], sizeof(std::int64_t), stream());
    }
    copy_async(out.data(), gathered.data(), at.size() * sizeof(std::int64_t), stream());
    synchronize("the ends of the string columns");
    return out;
  }

  void allgatherv(buffer& send, std::uint64_t send_bytes, buffer& recv, std::span<const std::uint64_t> counts) {
    comm_.allgatherv(send.as<std::byte>(), send_bytes, recv.as<std::byte>(), counts, stream(),
                     device_communicator::sizes::agreed);
  }
  void bcast(buffer& frames, std::uint64_t bytes, int root) {
    comm_.bcast(frames.as<std::byte>(), bytes, root, stream(), device_communicator::sizes::agreed);
  }

 private:
  device_communicator& comm_;
};

// ---------------------------------------------------------------------------------------------
// What the contributing ranks publish before their frames move. Per contributor (every rank for
// an all-gather, the root for a broadcast): the rows, string characters and frame bytes of each
// column, then a seal (shuffle_manifest.hpp) that every receiver checks before it sizes anything
// from these counts. Receivers size their outputs and frame buffers from it, and find every
// frame in the gathered bytes.

class manifest {
 public:
  /// The name of a contributor's block in seals and messages.
  static constexpr std::string_view what = "column sizes";

  manifest() = default;
  manifest(std::size_t contributors, std::size_t columns)
      : columns_(columns), words_(contributors * stride(), 0) {}

  std::size_t stride() const { return 3 * columns_ + 1; }
  std::size_t contributors() const { return columns_ == 0 ? 0 : words_.size() / stride(); }
  std::span<std::uint64_t> words() { return words_; }
  std::span<std::uint64_t> of(std::size_t k) { return std::span(words_).subspan(k * stride(), stride()); }

  std::uint64_t rows(std::size_t k, std::size_t c) const { return words_[k * stride() + c]; }
  std::uint64_t chars(std::size_t k, std::size_t c) const { return words_[k * stride() + columns_ + c]; }
  std::uint64_t frame_bytes(std::size_t k, std::size_t c) const { return words_[k * stride() + 2 * columns_ + c]; }
  /// The bytes contributor k's frames take, each padded to frame_alignment.
  std::uint64_t block_bytes(std::size_t k) const {
    std::uint64_t total = 0;
    for (std::size_t c = 0; c < columns_; ++c) total += align_frame(frame_bytes(k, c));
    return total;
  }

 private:
  std::size_t columns_ = 0;
  std::vector<std::uint64_t> words_;
};

// ---------------------------------------------------------------------------------------------
// The protocol

template <typename Engine>
class column_collective {
 public:
  /// `codecs`: one per column (an empty entry: default_codec), or none for options.codec on
  /// every column.
  column_collective(Engine& engine, std::span<const column_view> columns, const shuffle_options& options,
                    std::vector<std::optional<codec_id>> codecs = {})
      : engine_(engine), comm_(engine.host()), columns_(columns), options_(options), codec_of_(std::move(codecs)) {
    if (codec_of_.empty()) codec_of_.assign(columns_.size(), options_.codec);
  }

  std::vector<column> allgather(shuffle_stats* stats) {
    auto const start = clock_type::now();
    detail::call_timeout const timeout(comm_, options_.timeout);
    name_ = "allgather";
    int const ranks = comm_.size();
    check_arguments(std::nullopt);
    if (columns_.empty()) return done(start, stats, 0);
    choose_codecs();
    choose_string_modes(true);

    for (int p = 0; p < ranks; ++p) contributor_rank_.push_back(p);
    manifest_ = manifest(static_cast<std::size_t>(ranks), columns_.size());
    std::vector<std::uint64_t> mine;
    agree(attempt([&] {
            fault::point("collective.encode");
            encode_mine();
            mine = my_manifest();
          }),
          "encoding");
    std::vector<std::uint64_t> const counts(static_cast<std::size_t>(ranks), mine.size() * sizeof(std::uint64_t));
    comm_.allgatherv(std::as_bytes(std::span(mine)), std::as_writable_bytes(manifest_.words()), counts);

    std::vector<std::uint64_t> blocks(static_cast<std::size_t>(ranks));
    buffer frames;
    agree(attempt([&] {
            check_manifest();
            std::uint64_t total = 0;
            for (std::size_t p = 0; p < blocks.size(); ++p) {
              blocks[p] = manifest_.block_bytes(p);
              total = add_counts(total, blocks[p], "the frame bytes of every rank");
            }
            allocate_outputs();
            frames = engine_.allocate(total);
          }),
          "allocating the outputs");
    engine_.allgatherv(packed_, packed_bytes_, frames, blocks);
    packed_ = buffer();
    decode(frames);
    return done(start, stats, static_cast<std::size_t>(comm_.rank()));
  }

  std::vector<column> broadcast(int root, shuffle_stats* stats) {
    auto const start = clock_type::now();
    detail::call_timeout const timeout(comm_, options_.timeout);
    name_ = "broadcast";
    check_arguments(root);
    if (columns_.empty()) return done(start, stats, 0);
    choose_codecs();
    bool const is_root = comm_.rank() == root;
    choose_string_modes(is_root);

    contributor_rank_.push_back(root);
    manifest_ = manifest(1, columns_.size());
    std::optional<failure> failed;
    if (is_root) {
      failed = attempt([&] {
        fault::point("collective.encode");
        encode_mine();
        auto const mine = my_manifest();
        std::copy(mine.begin(), mine.end(), manifest_.of(0).begin());
      });
    }
    agree(failed, "encoding");
    comm_.bcast(std::as_writable_bytes(manifest_.words()), root);

    buffer frames;
    agree(attempt([&] {
            check_manifest();
            allocate_outputs();
            if (!is_root) frames = engine_.allocate(manifest_.block_bytes(0));
          }),
          "allocating the outputs");
    // The root broadcasts straight from its packed frames and decodes them like the others.
    if (is_root) frames = std::move(packed_);
    engine_.bcast(frames, manifest_.block_bytes(0), root);
    decode(frames);
    return done(start, stats, 0);
  }

 private:
  using buffer = typename Engine::buffer;
  void agree(const std::optional<failure>& mine, std::string_view where) { detail::agree(comm_, mine, name_, where); }

  // Every rank checks its own arguments and all agree (one allreduce), so that every rank's
  // message names the rank, the column and the check; then the ranks compare what must be the
  // same everywhere: root, column count, types and codecs (one allgather).
  void check_arguments(std::optional<int> root) {
    agree(attempt([&] { check_my_arguments(root); }), "checking the arguments");
    std::string const root_text = root ? "root " + std::to_string(*root) + ", " : std::string();
    detail::agree_on_shape(comm_, name_, root_text + detail::codec_groups::describe(types(), codec_of_));
  }

  void check_my_arguments(std::optional<int> root) const {
    int const ranks = comm_.size();
    if (root && (*root < 0 || *root >= ranks)) {
      ZS_FAIL(error_code::invalid_argument, "root " + std::to_string(*root) + " is not a rank of " + std::to_string(ranks));
    }
    // Only a contributor's data is read: a broadcast's other ranks pass types only.
    bool const reads_data = !root || *root == comm_.rank();
    for (std::size_t c = 0; c < columns_.size(); ++c) detail::check_column(c, columns_[c], Engine::memory, reads_data);
  }

  std::vector<value_type> types() const {
    std::vector<value_type> out;
    for (auto const& v : columns_) out.push_back(v.type);
    return out;
  }

  // Codecs and their batches. The ranks agreed on types and codec ids, so a codec that cannot
  // encode a type throws here on every rank alike.
  void choose_codecs() { codecs_ = detail::codec_groups(types(), codec_of_, name_); }

  // A string column left to the default codec takes fsst_dict where its values repeat, as in the
  // shuffle, but one codec for every contributor's frame of the column: each contributor
  // estimates fsst and fsst_dict on its rows (one table for both), the ranks add the estimates
  // up (a broadcast's other ranks add nothing), and codecs::choose_string_mode decides from the
  // sums, the same on every rank. Columns of no characters here cost no estimate.
  void choose_string_modes(bool contributes) {
    std::vector<std::size_t> open;
    // (Integer columns keep bitpack: whether dict pays depends on the links, which
    // these collectives do not weigh.)
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (codecs_.alternative_by_size(c)) open.push_back(c);
    }
    if (open.empty()) return;
    std::vector<std::uint64_t> bytes(2 * open.size(), 0);
    agree(attempt([&] {
            if (!contributes) return;
            measure_mine();
            std::vector<encode_source> pieces;
            std::vector<std::uint64_t> piece_begin{0};
            std::vector<std::size_t> estimated;  // indices into open
            for (std::size_t i = 0; i < open.size(); ++i) {
              std::size_t const c = open[i];
              if (my_chars_[c] == 0) continue;
              pieces.push_back(detail::source_rows(columns_[c], 0, my_rows_[c], my_chars_[c]));
              piece_begin.push_back(pieces.size());
              estimated.push_back(i);
            }
            if (estimated.empty()) return;
            std::vector<value_type> const types(estimated.size(), value_type::string);
            auto const e = detail::estimate_batch(static_cast<const Engine&>(engine_), codecs_.of(open.front()),
                                                  codecs_.alternative(open.front()), pieces, piece_begin, types);
            for (std::size_t k = 0; k < estimated.size(); ++k) {
              bytes[2 * estimated[k]] = e.plain[k].frame_bytes;
              bytes[2 * estimated[k] + 1] = e.alternative[k].frame_bytes;
            }
          }),
          "choosing the string codecs");
    for (std::size_t i = 0; i < open.size(); ++i) {
      std::uint64_t const plain = comm_.allreduce_sum(bytes[2 * i]);
      std::uint64_t const dictionary = comm_.allreduce_sum(bytes[2 * i + 1]);
      if (plain > 0 && &codecs::choose_string_mode(plain, dictionary) == codecs_.alternative(open[i])) {
        codec_of_[open[i]] = codecs_.alternative(open[i])->id();
      }
    }
    choose_codecs();
  }

  // This rank's rows and string characters per column (a slice's offsets need not start at 0).
  void measure_mine() {
    std::size_t const C = columns_.size();
    my_rows_.assign(C, 0);
    my_chars_.assign(C, 0);
    std::vector<const std::int64_t*> ends;
    for (auto const& v : columns_) {
      if (v.type == value_type::string && v.count > 0) {
        ends.push_back(v.offsets);
        ends.push_back(v.offsets + v.count);
      }
    }
    auto const bounds = engine_.read(ends);
    std::size_t next = 0;
    for (std::size_t c = 0; c < C; ++c) {
      auto const& v = columns_[c];
      my_rows_[c] = v.count;
      if (v.type != value_type::string || v.count == 0) continue;
      std::int64_t const first = bounds[next], last = bounds[next + 1];
      next += 2;
      if (first < 0 || last < first) {
        ZS_FAIL(error_code::invalid_argument, describe_column(c, v.type) + ": string offsets run from " +
                                                  std::to_string(first) + " to " + std::to_string(last));
      }
      my_chars_[c] = static_cast<std::uint64_t>(last - first);
    }
  }

  // Encodes this rank's columns, one frame each, and packs the frames in column order at
  // frame_alignment multiples into packed_.
  void encode_mine() {
    std::size_t const C = columns_.size();
    if (my_rows_.size() != C) measure_mine();
    my_bytes_.assign(C, 0);

    // One batch per codec group, each frame with its worst-case room.
    auto const groups = codecs_.groups();
    std::vector<std::vector<encode_source>> sources(groups.size());
    std::vector<std::vector<std::size_t>> column_of(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t c : groups[g].columns) {
        sources[g].push_back(detail::source_rows(columns_[c], 0, columns_[c].count, my_chars_[c]));
        column_of[g].push_back(c);
      }
    }
    auto encoded = detail::encode_groups(static_cast<const Engine&>(engine_), codecs_.groups(), types(), sources, column_of);
    auto const in_group_order =
        engine_.template read_array<std::uint64_t>(encoded.frame_bytes, C, "the sizes of the encoded frames");

    // Pack back to back, in column order: the wire carries what the frames hold, not their
    // worst-case room.
    std::vector<std::uint64_t> encoded_at(C);  // in scratch
    std::size_t i = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t j = 0; j < groups[g].columns.size(); ++j, ++i) {
        std::size_t const c = groups[g].columns[j];
        my_bytes_[c] = in_group_order[i];
        encoded_at[c] = encoded.base[g] + encoded.layouts[g][j];
      }
    }
    packed_bytes_ = 0;
    for (std::size_t c = 0; c < C; ++c) packed_bytes_ += align_frame(my_bytes_[c]);
    packed_ = engine_.allocate(packed_bytes_);
    std::vector<detail::frame_copy> copies;
    std::uint64_t at = 0;
    for (std::size_t c = 0; c < C; ++c) {
      copies.push_back({bytes_of(encoded.scratch) + encoded_at[c], bytes_of(packed_) + at, my_bytes_[c]});
      at += align_frame(my_bytes_[c]);
    }
    engine_.pack(copies);
    // scratch is freed here: at once on the host, after the packing copies on the device stream.
  }

  // This rank's block of the manifest: rows, characters and frame bytes per column, sealed.
  std::vector<std::uint64_t> my_manifest() const {
    std::vector<std::uint64_t> words(my_rows_);
    words.insert(words.end(), my_chars_.begin(), my_chars_.end());
    words.insert(words.end(), my_bytes_.begin(), my_bytes_.end());
    return detail::sealed(std::move(words), {manifest::what, comm_.rank(), -1});
  }

  // Every contributor's block as it arrived: its seal, and counts that fit in memory and in
  // the frames they announce. Nothing is sized from a block before it passes.
  void check_manifest() {
    std::size_t const C = columns_.size();
    for (std::size_t k = 0; k < manifest_.contributors(); ++k) {
      int const source = contributor_rank_[k];
      detail::unseal(std::as_bytes(manifest_.of(k)), 3 * C, {manifest::what, source, -1});
      for (std::size_t c = 0; c < C; ++c) {
        value_type const type = columns_[c].type;
        std::uint64_t const rows = manifest_.rows(k, c), chars = manifest_.chars(k, c);
        std::string const which = "the " + std::string(manifest::what) + " from rank " + std::to_string(source) + ": " +
                                  describe_column(c, type);
        if (!detail::slice_fits(type, rows, chars)) {
          ZS_FAIL(error_code::corrupt_frame, which + " announces " + std::to_string(rows) + " rows and " +
                                                 std::to_string(chars) + " characters, which no column holds");
        }
        encode_source slice{type, rows, nullptr};
        slice.chars_bytes = chars;
        std::uint64_t const largest = codecs_.of(c).max_frame_bytes(slice);
        if (manifest_.frame_bytes(k, c) > largest) {
          ZS_FAIL(error_code::corrupt_frame, which + " claims a frame of " + std::to_string(manifest_.frame_bytes(k, c)) +
                                                 " bytes for " + std::to_string(rows) + " rows, more than the " +
                                                 std::to_string(largest) + " such a frame can take");
        }
      }
    }
  }

  // Outputs at their final size (every contributor's rows, in contributor order), and room for
  // one status per frame.
  void allocate_outputs() {
    std::size_t const K = manifest_.contributors();
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      value_type const type = columns_[c].type;
      std::string const what = "the rows " + describe_column(c, type) + " receives";
      std::uint64_t rows = 0, chars = 0, bytes = 0;
      for (std::size_t k = 0; k < K; ++k) {
        rows = add_counts(rows, manifest_.rows(k, c), what);
        chars = add_counts(chars, manifest_.chars(k, c), what);
        // The output's bytes must be countable too: each contributor's fit (check_manifest).
        bytes = add_counts(bytes, type == value_type::string ? manifest_.chars(k, c) + 8 * manifest_.rows(k, c)
                                                             : manifest_.rows(k, c) * value_width(type),
                           what);
      }
      outputs_.push_back(engine_.allocate_output(type, rows, type == value_type::string ? chars : 0));
    }
    statuses_ = engine_.allocate(K * columns_.size() * sizeof(frame_status));
  }

  // One batched decode per codec group of every received frame, then every rank checks its
  // statuses and all agree.
  void decode(buffer& frames) {
    std::size_t const C = columns_.size();
    std::size_t const K = manifest_.contributors();
    auto const failed = attempt([&] {
      // Where each frame starts in `frames` (contributor by contributor, columns in order) and
      // where its rows land in the output.
      std::vector<std::uint64_t> frame_at(K * C), out_row(K * C), out_char(K * C);
      std::vector<std::uint64_t> rows_so_far(C, 0), chars_so_far(C, 0);
      std::uint64_t at = 0;
      for (std::size_t k = 0; k < K; ++k) {
        for (std::size_t c = 0; c < C; ++c) {
          frame_at[k * C + c] = at;
          at += align_frame(manifest_.frame_bytes(k, c));
          out_row[k * C + c] = rows_so_far[c];
          out_char[k * C + c] = chars_so_far[c];
          rows_so_far[c] += manifest_.rows(k, c);
          chars_so_far[c] += manifest_.chars(k, c);
        }
      }
      auto* const status = reinterpret_cast<frame_status*>(bytes_of(statuses_));
      std::size_t status_at = 0;
      for (auto const& g : codecs_.groups()) {
        std::vector<decode_target> targets;
        std::vector<std::uint64_t> offsets;
        std::uint64_t last_end = 0;
        for (std::size_t k = 0; k < K; ++k) {
          for (std::size_t c : g.columns) {
            std::size_t const f = k * C + c;
            targets.push_back(
                detail::target_rows(outputs_[c], out_row[f], manifest_.rows(k, c), out_char[f], manifest_.chars(k, c)));
            offsets.push_back(frame_at[f]);
            last_end = frame_at[f] + manifest_.frame_bytes(k, c);
          }
        }
        // A frame's room runs to the next frame of its group (frames of other groups may sit in
        // between: an upper bound that stays inside the buffer); the last one's ends with it.
        offsets.push_back(last_end);
        engine_.decode(*g.c, bytes_of(frames), offsets, targets, status + status_at);
        status_at += targets.size();
      }
      throw_if_failed(engine_.template read_array<frame_status>(statuses_, K * C, "the statuses of the decoded frames"));
    });
    agree(failed, "decoding");
  }

  // stats describe contributor k's columns.
  std::vector<column> done(clock_type::time_point start, shuffle_stats* stats, std::size_t k) {
    if (stats != nullptr) {
      *stats = shuffle_stats{};
      if (!columns_.empty()) {
        for (std::size_t c = 0; c < columns_.size(); ++c) {
          std::uint64_t const rows = manifest_.rows(k, c);
          stats->raw_bytes += columns_[c].type == value_type::string ? manifest_.chars(k, c) + 8 * rows
                                                                     : rows * value_width(columns_[c].type);
        }
        stats->wire_bytes = manifest_.block_bytes(k);
        stats->rounds = 1;
        for (std::size_t c = 0; c < columns_.size(); ++c) stats->column_codecs.push_back(codecs_.of(c).id());
      }
      stats->seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    }
    return std::move(outputs_);
  }

  Engine& engine_;
  communicator& comm_;
  std::span<const column_view> columns_;
  shuffle_options options_;
  std::string name_;
  std::vector<std::optional<codec_id>> codec_of_;  // per column, as the caller (or the null masks) chose
  detail::codec_groups codecs_;                     // per column, and the batches they form

  // This rank's contribution (allgather; the root's for a broadcast), per column.
  std::vector<std::uint64_t> my_rows_, my_chars_, my_bytes_;
  buffer packed_;
  std::uint64_t packed_bytes_ = 0;

  manifest manifest_;
  std::vector<int> contributor_rank_;  // per manifest entry
  std::vector<column> outputs_;
  buffer statuses_;
};

// ---------------------------------------------------------------------------------------------
// Null masks, as in the shuffle (shuffle.cpp): a validity column of uint8 0/1 values after the
// caller's for each column with both valid and null rows, with the bitmap codec (raw when
// options.codec is raw), packed into the output column's mask on arrival; columns all valid or
// all null send none (null_columns.hpp).

struct columns_with_validity {
  std::vector<column_view> columns;  // the caller's, then the validity columns
  std::vector<column> validity;      // the validity columns' bytes (contributors only)
  std::vector<std::size_t> of;       // the caller's column of each validity column
  std::vector<detail::nulls_kind> nulls;  // per caller's column; empty when no column has a mask
  std::vector<std::optional<codec_id>> codecs;
};

columns_with_validity add_validity(communicator& comm, std::string_view name, std::span<const column_view> columns,
                                   const shuffle_options& options, std::optional<int> root, memory_kind memory,
                                   cudaStream_t stream) {
  columns_with_validity out;
  out.nulls = detail::column_nulls(comm, name, columns, root, memory, stream);
  if (std::all_of(out.nulls.begin(), out.nulls.end(), [](auto k) { return k == detail::nulls_kind::none; })) {
    out.nulls.clear();
    return out;
  }
  bool const reads_data = !root || *root == comm.rank();
  agree_on(comm, name, "expanding the null masks", [&] {
    out.codecs.assign(columns.size(), options.codec);
    // The masks stay on the views, for codecs that code null rows cheaply
    // (encode_source::null_mask); they travel as validity columns, or not at all.
    out.columns.assign(columns.begin(), columns.end());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (out.nulls[c] != detail::nulls_kind::mixed) continue;
      if (reads_data) {
        auto const& v = columns[c];
        column valid = column::allocate(value_type::uint8, v.count, memory, stream);
        expand_null_mask(v.null_mask, v.count, valid.mutable_view().values<std::uint8_t>(), memory, stream);
        out.columns.push_back(valid.view());
        out.validity.push_back(std::move(valid));
      } else {
        out.columns.push_back(column_view{value_type::uint8});
      }
      out.of.push_back(c);
      out.codecs.push_back(options.codec == codec_id::raw ? codec_id::raw : codec_id::bitmap);
    }
  });
  return out;
}

// Runs `run` (the protocol over columns and codecs) with the validity columns added, where there
// are any, and gives the outputs their masks.
template <typename Run>
std::vector<column> collective_with_nulls(communicator& comm, std::string_view name,
                                          std::span<const column_view> columns, const shuffle_options& options,
                                          std::optional<int> root, memory_kind memory, cudaStream_t stream,
                                          shuffle_stats* stats, Run run) {
  auto const start = clock_type::now();
  detail::call_timeout const timeout(comm, options.timeout);
  auto sent = add_validity(comm, name, columns, options, root, memory, stream);
  if (sent.nulls.empty()) return run(columns, std::vector<std::optional<codec_id>>{});
  auto outputs = run(std::span<const column_view>(sent.columns), sent.codecs);
  std::size_t const C = columns.size();
  agree_on(comm, name, "packing the null masks", [&] {
    for (std::size_t j = 0; j < sent.of.size(); ++j) {
      column const& valid = outputs[C + j];
      pack_null_mask(valid.view().values<std::uint8_t>(), valid.size(), outputs[sent.of[j]].add_null_mask(stream),
                     memory, stream);
    }
    for (std::size_t c = 0; c < C; ++c) {
      auto const kind = sent.nulls[c];
      if (kind == detail::nulls_kind::all_valid || kind == detail::nulls_kind::all_null) {
        detail::add_uniform_null_mask(outputs[c], kind, stream);
      }
    }
    // The outputs are ready when the call returns, masks included.
    if (memory == memory_kind::device) ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  });
  outputs.resize(C);
  if (stats != nullptr) stats->seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return outputs;
}

}  // namespace

std::vector<column> allgather(device_communicator& comm, std::span<const column_view> columns,
                              const shuffle_options& options, cudaStream_t stream, shuffle_stats* stats) {
  return collective_with_nulls(
      comm.host(), "allgather", columns, options, std::nullopt, memory_kind::device, stream, stats,
      [&](std::span<const column_view> all, std::vector<std::optional<codec_id>> codecs) {
        device_engine engine(comm, stream);
        return column_collective<device_engine>(engine, all, options, std::move(codecs)).allgather(stats);
      });
}

std::vector<column> allgather(communicator& comm, std::span<const column_view> columns,
                              const shuffle_options& options, shuffle_stats* stats) {
  return collective_with_nulls(
      comm, "allgather", columns, options, std::nullopt, memory_kind::host, nullptr, stats,
      [&](std::span<const column_view> all, std::vector<std::optional<codec_id>> codecs) {
        host_engine engine(comm);
        return column_collective<host_engine>(engine, all, options, std::move(codecs)).allgather(stats);
      });
}

std::vector<column> broadcast(device_communicator& comm, std::span<const column_view> columns, int root,
                              const shuffle_options& options, cudaStream_t stream, shuffle_stats* stats) {
  return collective_with_nulls(
      comm.host(), "broadcast", columns, options, root, memory_kind::device, stream, stats,
      [&](std::span<const column_view> all, std::vector<std::optional<codec_id>> codecs) {
        device_engine engine(comm, stream);
        return column_collective<device_engine>(engine, all, options, std::move(codecs)).broadcast(root, stats);
      });
}

std::vector<column> broadcast(communicator& comm, std::span<const column_view> columns, int root,
                              const shuffle_options& options, shuffle_stats* stats) {
  return collective_with_nulls(
      comm, "broadcast", columns, options, root, memory_kind::host, nullptr, stats,
      [&](std::span<const column_view> all, std::vector<std::optional<codec_id>> codecs) {
        host_engine engine(comm);
        return column_collective<host_engine>(engine, all, options, std::move(codecs)).broadcast(root, stats);
      });
}

}  // namespace zs
