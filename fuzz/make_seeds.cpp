// Writes the fuzz targets' seed inputs: frames of the real columns, tuning tables, and a few
// crafted inputs at the edges of the format.
//
// Usage: fuzz_seeds DATA_DIR OUT_DIR
//
// OUT_DIR gets one folder per fuzz target, named as the target, holding one file per input:
//   fuzz_decode_<codec>  frames of slices of every column whose type the codec takes, cut at
//                        lengths around the codecs' block and segment sizes;
//   fuzz_frame_header    the same frames, once each, and crafted headers whose sizes wrap;
//   fuzz_tuning_table    tables of the shipped tuning entries, and an empty one;
//   fuzz_shuffle_manifest  manifests and frame-size blocks of shuffles of the real columns, as
//                        the shuffle seals them, behind the target's setting bytes;
//   fuzz_spill_file      spill files of slices of the real columns, with and without a null
//                        mask, each in a few frames.
// Files already there are replaced; others are kept (a corpus grows in the same folders).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "shuffle_manifest.hpp"
#include "zs/codec.hpp"
#include "zs/column.hpp"
#include "zs/error.hpp"
#include "zs/frame.hpp"
#include "zs/hash.hpp"
#include "zs/io.hpp"
#include "zs/spill.hpp"
#include "zs/tuning.hpp"

namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) ZS_FAIL(zs::error_code::io_error, "cannot write " + path.string());
}

/// Rows of a slice: none, one, a few, and lengths on both sides of the bitpack codec's 128-value
/// blocks and 512-value segments. Strings stay shorter: their frames grow with the characters.
std::vector<std::uint64_t> slice_rows(zs::value_type type) {
  if (type == zs::value_type::string) return {0, 1, 3, 31, 200};
  return {0, 1, 3, 127, 129, 512, 700, 2000};
}

/// One frame of `source` encoded by `c`, exactly as long as the encoder made it; a codec with
/// column parameters prepares them from the source first.
std::vector<std::byte> encode_one(const zs::codec& c, zs::encode_source source) {
  zs::value_type const types[] = {source.type};
  std::vector<std::uint64_t> const params_at = zs::layout_params(c, types);
  std::vector<std::byte> params(params_at.back());
  if (!params.empty()) {
    std::uint64_t const piece_begin[] = {0, 1};
    c.prepare_host(zs::sample_batch{std::span(&source, 1), piece_begin}, params.data(), params_at);
    source.params = params.data();
  }
  std::vector<std::uint64_t> const offsets = zs::layout_frames(c, std::span(&source, 1));
  std::vector<std::byte> frame(offsets.back());
  std::uint64_t bytes = 0;
  c.encode_host({std::span(&source, 1), frame.data(), offsets, &bytes});
  frame.resize(bytes);
  return frame;
}

/// The values of an integer slice, each replaced by one of the slice's first distinct values
/// (as many as one per 32 rows, at most 8), picked by the value: equal values stay equal.
std::vector<std::byte> on_few_values(const zs::encode_source& source) {
  std::size_t const width = zs::value_width(source.type);
  auto const* in = static_cast<const std::byte*>(source.values);
  std::vector<std::uint64_t> kept;
  std::uint64_t const most = std::max<std::uint64_t>(1, std::min<std::uint64_t>(8, source.count / 32));
  for (std::uint64_t i = 0; i < source.count && kept.size() < most; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, in + i * width, width);
    if (std::find(kept.begin(), kept.end(), v) == kept.end()) kept.push_back(v);
  }
  std::vector<std::byte> out(source.count * width);
  for (std::uint64_t i = 0; i < source.count; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, in + i * width, width);
    std::memcpy(out.data() + i * width, &kept[v % kept.size()], width);
  }
  return out;
}

/// The rows of a source in runs of 8: row i takes row i / 8's value (frames of dict's runs form).
std::vector<std::byte> in_runs(const zs::encode_source& source) {
  std::size_t const width = zs::value_width(source.type);
  auto const* in = static_cast<const std::byte*>(source.values);
  std::vector<std::byte> out(source.count * width);
  for (std::uint64_t i = 0; i < source.count; ++i) std::memcpy(out.data() + i * width, in + i / 8 * width, width);
  return out;
}

/// Writes frames of slices of every column (at its start and in its middle) for every codec
/// that takes its type. Returns how many frames were written.
std::size_t write_column_frames(const fs::path& data_dir, const fs::path& out) {
  std::size_t written = 0;
  for (fs::path const& file : zs::io::list_columns(data_dir)) {
    zs::column const column = zs::io::read_column(file);
    zs::column_view const v = column.view();
    for (std::uint64_t rows : slice_rows(v.type)) {
      for (std::uint64_t begin : {std::uint64_t{0}, v.count / 2}) {
        if (begin + rows > v.count) continue;
        zs::encode_source source{v.type, rows, nullptr};
        if (v.type == zs::value_type::string) {
          source.values = v.data;
          source.offsets = v.offsets + begin;
          source.chars_bytes = static_cast<std::uint64_t>(v.offsets[begin + rows] - v.offsets[begin]);
        } else {
          source.values = static_cast<const std::byte*>(v.data) + begin * zs::value_width(v.type);
        }
        std::string const name = file.filename().string() + "-" + std::to_string(begin) + "-" + std::to_string(rows);
        // The slice of an integer column on its first few values, and in runs, as well: frames
        // with a dictionary and with runs (codec dict), which slices as they come are too short
        // to take (those take its differences form where their values change smoothly).
        std::vector<std::pair<std::string, std::vector<std::byte>>> derived;
        if (zs::is_integer(v.type) && rows >= 16) {
          derived.emplace_back("-few", on_few_values(source));
          derived.emplace_back("-runs", in_runs(source));
        }
        for (const zs::codec* c : zs::all_codecs()) {
          if (!c->supports(v.type)) continue;
          std::vector<std::byte> const frame = encode_one(*c, source);
          write_file(out / ("fuzz_decode_" + std::string(c->name())) / name, frame.data(), frame.size());
          for (auto const& [suffix, values] : derived) {
            zs::encode_source shaped = source;
            shaped.values = values.data();
            std::vector<std::byte> const shaped_frame = encode_one(*c, shaped);
            write_file(out / ("fuzz_decode_" + std::string(c->name())) / (name + suffix), shaped_frame.data(),
                       shaped_frame.size());
          }
          // The frame parser sees every codec's frames; small ones suffice there.
          if (rows <= 200) {
            write_file(out / "fuzz_frame_header" / (std::string(c->name()) + "-" + name), frame.data(), frame.size());
          }
          ++written;
        }
      }
    }
  }
  return written;
}

/// A raw frame whose header claims `count` values of `type` and `raw_bytes`, with a payload of
/// `payload_bytes` zero bytes, both checksums right: sizes at the edge of wrapping.
std::vector<std::byte> crafted_frame(zs::value_type type, std::uint64_t count, std::uint64_t raw_bytes,
                                     std::uint64_t payload_bytes) {
  std::vector<std::byte> frame(zs::frame_header_bytes + payload_bytes);
  zs::frame_header h;
  h.codec = zs::codec_id::raw;
  h.type = type;
  h.value_count = count;
  h.raw_bytes = raw_bytes;
  h.payload_bytes = payload_bytes;
  h.payload_checksum = zs::hash::checksum(frame.data() + zs::frame_header_bytes, payload_bytes);
  zs::store_header(h, frame.data());
  return frame;
}

void write_crafted_frames(const fs::path& out) {
  struct crafted {
    const char* name;
    std::vector<std::byte> frame;
  };
  // (count + 1) x 8 offsets wrap to 0 for 2^61 - 1 strings: a raw payload of 8 characters then
  // "holds" them. count x 8 wraps for 2^61 + 1 int64 values.
  crafted const frames[] = {
      {"strings-offsets-wrap", crafted_frame(zs::value_type::string, (std::uint64_t{1} << 61) - 1, 8, 8)},
      {"int64-count-wraps", crafted_frame(zs::value_type::int64, (std::uint64_t{1} << 61) + 1, 8, 8)},
      {"strings-empty", crafted_frame(zs::value_type::string, 0, 0, 8)},
  };
  for (auto const& c : frames) {
    write_file(out / "fuzz_frame_header" / c.name, c.frame.data(), c.frame.size());
    write_file(out / "fuzz_decode_raw" / c.name, c.frame.data(), c.frame.size());
  }
  // Version 2 (column parameters): 16 bytes of parameters and a body of 24, with the prefix that
  // accounts for them, so that mutations start from a frame the parameter checks accept.
  std::uint64_t const params = 16, body = 24, payload = zs::params_section_bytes(params) + body;
  std::vector<std::byte> v2(zs::frame_header_bytes + payload, std::byte{0x11});
  zs::store_params_prefix(v2.data() + zs::frame_header_bytes, params, body);
  zs::frame_header h;
  h.version = zs::frame_version_params;
  h.codec = static_cast<zs::codec_id>(zs::first_private_codec_id);
  h.type = zs::value_type::int64;
  h.value_count = 3;
  h.raw_bytes = 24;
  h.payload_bytes = payload;
  h.payload_checksum = zs::hash::checksum(v2.data() + zs::frame_header_bytes, payload);
  zs::store_header(h, v2.data());
  write_file(out / "fuzz_frame_header" / "version-2-parameters", v2.data(), v2.size());
}

/// Tables of the shipped entries: each alone, and eight together (a table of several kernels,
/// sorted by key). The whole shipped table (28 KB) would slow every run of the target down; its
/// entries are all here.
void write_tuning_tables(const fs::path& out) {
  fs::path const dir = out / "fuzz_tuning_table";
  zs::tuning_table several;
  std::size_t index = 0;
  for (zs::tuning_entry const& e : zs::shipped_tuning().entries()) {
    zs::tuning_table one;
    one.set(e);
    std::string const text = one.to_json();
    write_file(dir / ("entry-" + std::to_string(index)), text.data(), text.size());
    if (index++ % 8 == 0 && several.size() < 8) several.set(e);
  }
  for (zs::tuning_table const& t : {several, zs::tuning_table{}}) {
    std::string const text = t.to_json();
    write_file(dir / (t.empty() ? "empty" : "several"), text.data(), text.size());
  }
}

/// One fuzz_shuffle_manifest input: the setting bytes the target reads (columns, rounds, source,
/// destination, a byte per column type), then the block.
void write_manifest_input(const fs::path& path, std::span<const zs::value_type> types, std::uint64_t rounds,
                          int source, int destination, const std::vector<std::uint64_t>& block) {
  std::vector<std::uint8_t> bytes{static_cast<std::uint8_t>(types.size() - 1), static_cast<std::uint8_t>(rounds),
                                  static_cast<std::uint8_t>(source), static_cast<std::uint8_t>(destination)};
  for (zs::value_type t : types) bytes.push_back(static_cast<std::uint8_t>(static_cast<int>(t) - 1));
  auto const* words = reinterpret_cast<const std::uint8_t*>(block.data());
  bytes.insert(bytes.end(), words, words + block.size() * 8);
  write_file(path, bytes.data(), bytes.size());
}

/// Manifests and frame-size blocks of shuffles of the first `columns` real columns over
/// `rounds` rounds from rank 1 to rank 0, each destination getting a quarter of every column.
void write_manifests(const fs::path& data_dir, const fs::path& out) {
  fs::path const dir = out / "fuzz_shuffle_manifest";
  std::vector<zs::value_type> types;
  std::vector<zs::detail::slice_counts> totals;  // one quarter of each column
  for (fs::path const& file : zs::io::list_columns(data_dir)) {
    zs::column const column = zs::io::read_column(file);
    std::uint64_t const rows = column.size() / 4;
    std::uint64_t const chars =
        column.type() == zs::value_type::string ? static_cast<std::uint64_t>(column.view().offsets[rows]) : 0;
    types.push_back(column.type());
    totals.push_back({rows, chars});
  }
  for (std::size_t columns = 1; columns <= std::min<std::size_t>(types.size(), 8); columns += 3) {
    for (std::uint64_t rounds : {1, 2, 5}) {
      std::vector<zs::detail::slice_counts> slices;
      for (std::size_t c = 0; c < columns; ++c) {
        for (std::uint64_t k = 0; k < rounds; ++k) {
          slices.push_back({totals[c].rows * (k + 1) / rounds - totals[c].rows * k / rounds,
                            totals[c].chars * (k + 1) / rounds - totals[c].chars * k / rounds});
        }
      }
      std::span<const zs::value_type> const first(types.data(), columns);
      std::string const name = std::to_string(columns) + "-columns-" + std::to_string(rounds) + "-rounds";
      write_manifest_input(dir / ("manifest-" + name), first, rounds, 1, 0, zs::detail::seal_manifest(slices, 1, 0));
      std::vector<std::uint64_t> sizes;
      for (std::size_t c = 0; c < columns; ++c) sizes.push_back(zs::frame_header_bytes + slices[c * rounds].rows * 8);
      write_manifest_input(dir / ("frame-sizes-" + name), first, rounds, 1, 0,
                           zs::detail::seal_frame_sizes(sizes, 1, 0, rounds));
    }
  }
}

/// Spill files of a slice of each column: its default codec, frames of 2 KiB (a few per file),
/// once as it is and once with a null mask of every third row null.
void write_spill_files(const fs::path& data_dir, const fs::path& out) {
  fs::path const dir = out / "fuzz_spill_file";
  zs::spill_options options;
  options.frame_bytes = 2048;
  options.name = "seed";
  for (fs::path const& file : zs::io::list_columns(data_dir)) {
    zs::column const column = zs::io::read_column(file);
    zs::column_view slice = column.view();  // its first rows
    slice.count = std::min<std::uint64_t>(slice.count, slice.type == zs::value_type::string ? 60 : 1500);
    std::string const name = file.filename().string();
    zs::spill_to_file(zs::spill(slice, nullptr, options), dir / name);
    std::vector<std::uint8_t> mask(zs::null_mask_bytes(slice.count), 0xff);
    for (std::uint64_t r = 0; r < slice.count; r += 3) mask[r / 8] = static_cast<std::uint8_t>(mask[r / 8] & ~(1U << (r % 8)));
    slice.null_mask = mask.data();
    zs::spill_to_file(zs::spill(slice, nullptr, options), dir / (name + "-nullable"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATA_DIR OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    fs::path const data_dir = argv[1], out = argv[2];
    fs::create_directories(out / "fuzz_frame_header");
    fs::create_directories(out / "fuzz_tuning_table");
    fs::create_directories(out / "fuzz_shuffle_manifest");
    fs::create_directories(out / "fuzz_spill_file");
    for (const zs::codec* c : zs::all_codecs()) {
      fs::create_directories(out / ("fuzz_decode_" + std::string(c->name())));
    }
    std::size_t const frames = write_column_frames(data_dir, out);
    write_crafted_frames(out);
    write_tuning_tables(out);
    write_manifests(data_dir, out);
    write_spill_files(data_dir, out);
    std::printf("fuzz_seeds: %zu frames of %s, crafted frames, tuning tables, manifests and spill files in %s\n", frames,
                argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
