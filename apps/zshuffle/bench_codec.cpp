// zshuffle bench codec: a codec's compression ratio and GPU encode and decode throughput on the
// real columns, and on inputs of other shapes derived from them, against the memory-bound limit
// measured in the same run.
//
// What runs: --codec names one registered codec; without it each column gets its type's default
// codec (zs::default_codec), and a string input fsst or fsst_dict as the shuffle and the spill
// choose (codecs::choose_string_mode, by the CPU reference's estimates on the untiled input).
// The columns are the files that --column / --columns name; without them, with --codec or
// --type, every column file of the data folder that the codec encodes and that reads as --type;
// with none of these, the three integer columns of the figures in bench/RESULTS.md (so
// `zshuffle bench codec` measures bitpack on them as it always has). --type reads every column as that type (integers as any integer type, floats as either float type).
// --shapes adds inputs derived from each column on the host (bench_inputs.hpp).
//
// Each input is tiled on the device to --bytes (its values, or the characters of strings, whose
// offsets follow the copies) and cut into --frames frames, encoded and decoded as one batch (one
// launch sequence for all frames). Times are CUDA events around encode_async and decode_async
// (the whole codec call: headers, checksums, validation), the median of --repeat runs after
// --warmup runs. Throughput is uncompressed bytes (the codec's raw bytes: values, or characters)
// per second. The limit is the bytes a pass must move at least (encode: read the input, that is
// the values, or the characters and offsets, and write the frames; decode: the reverse) at the
// device's measured copy bandwidth (bytes read + written). A codec with column parameters has
// them prepared from the batch's frames before the timed runs, as a shuffle prepares them from
// a round's partitions; the preparation is timed on its own ("prep ms", host time, as part of
// it runs on the host), and the JSON also gives encode throughput with it
// (encode_with_prepare_gbs). The CPU reference encodes the untiled input as one frame: its ratio
// is printed beside the GPU's, and the GPU's frame of the same untiled input must equal it byte for
// byte. Beside them, the ratio the codec itself estimates (codec::estimate on the untiled input).
// For alp, a line under the row counts that frame's vectors by the path they took (ALP, ALP_RD,
// raw; the fill value taken out), JSON alp_vectors_untiled.
// Ratios divide the bytes a raw shuffle would move (values, or characters + 8 per string) by the
// frame bytes, as shuffle statistics and estimates do.
//
// --cpu runs the same steps with the CPU reference codecs (encode_host, decode_host), without a
// GPU and without timings: ratios, estimates, frames per scheme and a verified round trip.
//
// --vs nvcomp (builds with nVIDIA nvCOMP, nvcomp_codecs.hpp) runs, after each input's row, nvCOMP's
// Cascaded, Bitcomp, ANS, LZ4 and Zstd on the same input in the same process, as the codecs
// nvcomp:NAME: one batched nvCOMP call over the 64 KiB chunks of all frames, timed, verified and
// printed the same way, so each row beside zshuffle's is measured alike (the framing, a chunk
// table and the frame checksums, included; it costs about what a copy of the frames costs).
// Codecs without a CPU reference (these) show n/a where the CPU reference's ratio goes. On string
// columns, whose frames cover characters and offsets, nvCOMP's LZ4, ANS (on bytes) and Zstd get the
// same bytes: each frame's characters as uint8 values and its offsets (relative to its first
// character, the count + 1 a raw frame carries) as int64 values, compressed in the same batched
// call; ratio and throughput count characters + 8 per string, as zshuffle's rows do.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "args.hpp"
#include "bench_inputs.hpp"
#include "codecs/alp/alp_codec.hpp"
#include "codecs/fsst/fsst_mode.hpp"
#include "commands.hpp"
#include "geometry.hpp"
#include "output_file.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/io.hpp"
#include "zs/memory.hpp"
#include "zs/tuning.hpp"

#ifdef ZS_HAVE_NVCOMP
#include "nvcomp_codecs.hpp"
#endif

namespace {

namespace fs = std::filesystem;

// The columns of the earlier figures, in their order: what runs when nothing picks columns.
const std::vector<std::string> integer_columns{"etopo5_elev_m.i32", "ncbi_tax_id.i32", "geoip4_lo.u32"};

constexpr std::uint64_t default_bytes = std::uint64_t{2} << 30;
constexpr std::uint64_t default_cpu_bytes = std::uint64_t{64} << 20;  // the CPU codecs take seconds a GiB

std::string type_name(zs::value_type type) { return std::string(zs::to_string(type)); }
std::string codec_name(const zs::codec& c) { return std::string(c.name()); }

[[noreturn]] void usage_error(const std::string& message) { ZS_FAIL(zs::error_code::invalid_argument, message); }

// --- what to run --------------------------------------------------------------------------------

struct settings {
  std::uint64_t bytes = default_bytes;
  std::uint64_t frames = 64;
  int repeat = 10, warmup = 2;
  bool cpu = false;
  bool vs_nvcomp = false;  // --vs nvcomp: nVIDIA nvCOMP's codecs after each input
  std::vector<zs::cli::input_shape> shapes;
};

struct planned_column {
  fs::path file;
  zs::value_type type = zs::value_type::int32;  // the type it is benchmarked as
  const zs::codec* codec = nullptr;
};

struct plan {
  std::vector<planned_column> columns;
  std::vector<std::string> skipped;  // a line for each column of the folder the codec does not encode
};

const zs::codec& codec_by_name(const std::string& name) {
  try {
    return zs::get_codec(std::string_view(name));
  } catch (const zs::error& e) {
    usage_error("--codec: " + e.message());
  }
}

zs::value_type type_by_name(const std::string& name) {
  try {
    return zs::parse_value_type(name);
  } catch (const zs::error&) {
    usage_error("--type: no value type is named '" + name +
                "' (types: int32, int64, uint32, uint64, float32, float64, string)");
  }
}

// The columns to run and the codec of each; throws a usage error for a pair that cannot run.
plan plan_columns(const fs::path& dir, std::vector<std::string> names, const zs::codec* named_codec,
                  std::optional<zs::value_type> named_type) {
  if (named_codec != nullptr && named_type && !named_codec->supports(*named_type)) {
    usage_error("codec '" + codec_name(*named_codec) + "' does not encode " + type_name(*named_type) +
                " values (--codec " + codec_name(*named_codec) + " --type " + type_name(*named_type) + ")");
  }
  plan p;
  if (names.empty() && named_codec == nullptr && !named_type) names = integer_columns;
  if (names.empty()) {
    // The default set: every column of the folder that fits; the codec's other types are noted.
    for (auto const& file : zs::io::list_columns(dir)) {
      zs::value_type const own = *zs::io::type_of_file(file);
      zs::value_type const type = named_type.value_or(own);
      if (!zs::cli::converts_to(own, type)) continue;  // --type picks the columns that read as it
      const zs::codec& c = named_codec != nullptr ? *named_codec : zs::default_codec(type);
      if (!c.supports(type)) {
        p.skipped.push_back("skipped " + file.filename().string() + ": codec '" + codec_name(c) +
                            "' does not encode " + type_name(type) + " values");
        continue;
      }
      p.columns.push_back({file, type, &c});
    }
    if (p.columns.empty()) {
      usage_error("no column file in '" + dir.string() + "'" +
                  (named_type ? " reads as " + type_name(*named_type) : std::string()) +
                  (named_codec != nullptr ? " for codec '" + codec_name(*named_codec) + "'" : std::string()));
    }
    return p;
  }
  for (auto const& name : names) {
    fs::path const file = dir / name;
    auto const own = zs::io::type_of_file(file);
    if (!own) {
      usage_error("--column '" + name + "' is no column file: its extension names no type (.i8, .u8, .i16, .u16, .i32, .u32, .i64, "
                  ".u64, .f32, .f64, or .txt for strings)");
    }
    zs::value_type const type = named_type.value_or(*own);
    if (!zs::cli::converts_to(*own, type)) {
      usage_error("--column '" + name + "' holds " + type_name(*own) + " values, which do not read as " +
                  type_name(type) + " (--type " + type_name(type) + ")");
    }
    const zs::codec& c = named_codec != nullptr ? *named_codec : zs::default_codec(type);
    if (!c.supports(type)) {
      usage_error("codec '" + codec_name(c) + "' does not encode " + type_name(type) + " values (--codec " +
                  codec_name(c) + " --column " + name + ")");
    }
    p.columns.push_back({file, type, &c});
  }
  return p;
}

// --- the tiled input ----------------------------------------------------------------------------

// The tiled input's layout, known on the host: whole copies of the column one after another, the
// last cut at --bytes (at a value, or at the end of a string).
struct tiling {
  zs::value_type type = zs::value_type::int32;
  std::uint64_t rows = 0;
  std::uint64_t data_bytes = 0;         // values, or the characters of strings: the codec's raw bytes
  std::vector<std::int64_t> offsets;    // strings: rows + 1 offsets into the tiled characters
  std::vector<std::uint8_t> mask;       // a nullable column's tiled null mask; empty for others

  bool strings() const noexcept { return type == zs::value_type::string; }
  // What a pass reads or writes besides the frames: values, or characters and offsets, and the
  // mask an encoder reads.
  std::uint64_t input_bytes() const noexcept { return data_bytes + offsets.size() * sizeof(std::int64_t) + mask.size(); }
};

// Row r of the tiled input is row r % n of the column: so is its bit of the mask.
std::vector<std::uint8_t> tile_mask(const zs::column& host, std::uint64_t rows) {
  if (!host.nullable()) return {};
  std::vector<std::uint8_t> mask(zs::null_mask_bytes(rows), 0);
  std::uint64_t const n = host.size();
  for (std::uint64_t r = 0, i = 0; r < rows; ++r, i = i + 1 == n ? 0 : i + 1) {
    if (zs::row_is_valid(host.view().null_mask, i)) mask[r / 8] = static_cast<std::uint8_t>(mask[r / 8] | (1U << (r % 8)));
  }
  return mask;
}

// Whether the decoded bytes `b` equal the input's `a`: every byte, or for a nullable fixed-width
// input the rows that hold a value (a codec may give other values back under null rows).
bool same_values(const tiling& t, const std::byte* a, const std::byte* b) {
  if (t.data_bytes == 0) return true;
  if (t.mask.empty() || t.strings()) return std::memcmp(a, b, t.data_bytes) == 0;
  std::size_t const width = zs::value_width(t.type);
  for (std::uint64_t r = 0; r < t.rows; ++r) {
    if (zs::row_is_valid(t.mask.data(), r) && std::memcmp(a + r * width, b + r * width, width) != 0) return false;
  }
  return true;
}

tiling plan_tiling(const zs::column& host, std::uint64_t bytes) {
  tiling t;
  t.type = host.type();
  if (!t.strings()) {
    std::size_t const width = zs::value_width(t.type);
    t.rows = bytes / width;
    if (t.rows == 0) {
      usage_error("--bytes " + zs::cli::format_size(bytes) + " holds no " + type_name(t.type) + " value");
    }
    t.data_bytes = t.rows * width;
    t.mask = tile_mask(host, t.rows);
    return t;
  }
  auto const v = host.view();
  std::uint64_t const n = host.size(), chars = host.data_bytes();
  std::uint64_t copies = 1, partial = 0;  // a column of empty strings is tiled once
  if (chars > 0) {
    copies = bytes / chars;
    // Of the next copy, the strings that end within --bytes.
    auto const* end = std::upper_bound(v.offsets, v.offsets + n + 1, static_cast<std::int64_t>(bytes % chars));
    partial = static_cast<std::uint64_t>(end - v.offsets) - 1;
  }
  t.rows = copies * n + partial;
  if (t.rows == 0) {
    usage_error("--bytes " + zs::cli::format_size(bytes) + " is less than the first string of the column (" +
                std::to_string(v.offsets[1]) + " bytes)");
  }
  t.offsets.resize(t.rows + 1);
  std::uint64_t row = 0;
  for (std::uint64_t copy = 0; row < t.rows; ++copy) {
    auto const base = static_cast<std::int64_t>(copy * chars);
    for (std::uint64_t i = 0; i < n && row < t.rows; ++i) t.offsets[row++] = base + v.offsets[i];
  }
  t.offsets[t.rows] = static_cast<std::int64_t>((t.rows / n) * chars) + v.offsets[t.rows % n];
  t.data_bytes = static_cast<std::uint64_t>(t.offsets[t.rows]);
  return t;
}

// The rows of frame f of `frames`: an even split.
std::pair<std::uint64_t, std::uint64_t> frame_rows(const tiling& t, std::uint64_t f, std::uint64_t frames) {
  return {t.rows * f / frames, t.rows * (f + 1) / frames};
}

// The frames' sources over the tiled input at `values` (and `offsets` for strings, `mask` for a
// nullable input), in the memory of the side that runs.
std::vector<zs::encode_source> cut_sources(const tiling& t, const void* values, const std::int64_t* offsets,
                                           const std::uint8_t* mask, std::uint64_t frames) {
  std::vector<zs::encode_source> sources;
  for (std::uint64_t f = 0; f < frames; ++f) {
    auto const [begin, end] = frame_rows(t, f, frames);
    zs::encode_source s{t.type, end - begin, values};
    s.null_mask = mask;
    s.null_mask_bit = begin;
    if (t.strings()) {
      s.offsets = offsets + begin;
      s.chars_bytes = static_cast<std::uint64_t>(t.offsets[end] - t.offsets[begin]);
    } else {
      s.values = static_cast<const std::byte*>(values) + begin * zs::value_width(t.type);
    }
    sources.push_back(s);
  }
  return sources;
}

// Where each frame decodes to: the same places in an output of the tiled input's layout. A string
// frame writes its offsets from its first row's to its last row's end (the next frame's first
// offset, the same value) and its characters where the input's were.
std::vector<zs::decode_target> cut_targets(const tiling& t, void* values, std::int64_t* offsets, std::uint64_t frames) {
  std::vector<zs::decode_target> targets;
  for (std::uint64_t f = 0; f < frames; ++f) {
    auto const [begin, end] = frame_rows(t, f, frames);
    zs::decode_target d{t.type, end - begin, values};
    if (t.strings()) {
      d.offsets = offsets + begin;
      d.chars_begin = static_cast<std::uint64_t>(t.offsets[begin]);
      d.chars_bytes = static_cast<std::uint64_t>(t.offsets[end] - t.offsets[begin]);
    } else {
      d.values = static_cast<std::byte*>(values) + begin * zs::value_width(t.type);
    }
    targets.push_back(d);
  }
  return targets;
}

// Fills total bytes at `to` with copies of the `from_bytes` bytes at `from`: one copy, then
// copies of what is already there, doubling. `copy(to, from, bytes)` copies on the side that runs.
template <typename FirstCopy, typename Copy>
void tile(std::byte* to, const void* from, std::uint64_t from_bytes, std::uint64_t total, FirstCopy first_copy,
          Copy copy) {
  std::uint64_t const first = std::min(from_bytes, total);
  if (first == 0) return;
  first_copy(to, from, first);
  for (std::uint64_t have = first; have < total;) {
    std::uint64_t const n = std::min(have, total - have);
    copy(to + have, to, n);
    have += n;
  }
}

// The whole of a column as one frame's source. `chars_bytes`: the characters of a string column
// (the caller knows them on the host, wherever the column is).
zs::encode_source whole(const zs::column_view& v, std::uint64_t chars_bytes) {
  zs::encode_source s{v.type, v.count, v.data, v.offsets};
  if (v.type == zs::value_type::string) s.chars_bytes = chars_bytes;
  s.null_mask = v.null_mask;
  return s;
}

// The codec of a string input when none is named: fsst, or fsst_dict where the two codecs'
// estimates say so (the CPU reference's, on the untiled host input), as the shuffle and the
// spill choose.
const zs::codec& string_mode_for(const zs::column& input) {
  std::vector<zs::encode_source> const sources{whole(input.view(), input.data_bytes())};
  std::vector<std::uint64_t> const piece_begin{0, 1};
  auto const bytes = [&](zs::codec_id id) {
    return zs::get_codec(id).estimate_host({sources, piece_begin}).front().frame_bytes;
  };
  return zs::codecs::choose_string_mode(bytes(zs::codec_id::fsst), bytes(zs::codec_id::fsst_dict));
}

// Column parameters, for a codec that has them: prepared once from every frame of the batch (one
// column) and handed to each. Their memory is returned, empty for codecs without.
zs::device_buffer attach_params_on_device(const zs::codec& c, std::vector<zs::encode_source>& sources,
                                          cudaStream_t stream) {
  if (sources.empty() || c.params_bytes(sources.front().type) == 0) return {};
  std::array<zs::value_type, 1> const types{sources.front().type};
  auto const offsets = zs::layout_params(c, types);
  std::array<std::uint64_t, 2> const piece_begin{0, sources.size()};
  zs::device_buffer params(offsets.back(), stream);
  c.prepare_async({sources, piece_begin}, params.as<std::byte>(), offsets, stream);
  for (auto& s : sources) s.params = params.as<std::byte>() + offsets[0];
  return params;
}

zs::host_buffer attach_params_on_host(const zs::codec& c, std::vector<zs::encode_source>& sources) {
  if (sources.empty() || c.params_bytes(sources.front().type) == 0) return {};
  std::array<zs::value_type, 1> const types{sources.front().type};
  auto const offsets = zs::layout_params(c, types);
  std::array<std::uint64_t, 2> const piece_begin{0, sources.size()};
  zs::host_buffer params(offsets.back());
  c.prepare_host({sources, piece_begin}, params.as<std::byte>(), offsets);
  for (auto& s : sources) s.params = params.as<std::byte>() + offsets[0];
  return params;
}

// The ratio the codec estimates for one column, or nothing where it gives none (a codec whose
// estimate is not there yet, or fails).
template <typename Estimate>
std::optional<double> estimated_ratio(Estimate estimate) {
  try {
    std::vector<zs::codec_estimate> const e = estimate();
    if (e.size() != 1) return std::nullopt;
    return e.front().ratio();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// --- one input ----------------------------------------------------------------------------------

// What ratios divide, as shuffle statistics and codec estimates count it: the values, or the
// characters and 8 bytes per string (its offset), the bytes a raw shuffle would move.
std::uint64_t uncompressed_bytes(zs::value_type type, std::uint64_t rows, std::uint64_t data_bytes) {
  return type == zs::value_type::string ? data_bytes + 8 * rows : data_bytes;
}
std::uint64_t uncompressed_bytes(const zs::encode_source& s) { return uncompressed_bytes(s.type, s.count, s.raw_bytes()); }

struct result {
  std::string name;   // "<file>" for the real column, "<file>:<shape>" for a derived input
  std::string file;
  std::string shape;
  std::string codec;
  std::string side = "zshuffle";      // whose codec: zshuffle, or nvcomp (--vs nvcomp)
  zs::value_type type = zs::value_type::int32;
  std::uint64_t rows = 0, raw_bytes = 0, input_bytes = 0, frame_bytes = 0;
  std::optional<double> cpu_ratio;    // CPU reference, untiled input, one frame (none: no CPU reference)
  std::string cpu_scheme;             // the codec id of that frame
  std::optional<bool> identical;      // the GPU's frame of the untiled input == the CPU's (GPU runs)
  std::optional<double> estimate;     // codec::estimate on the untiled input
  double ratio = 0;                   // tiled input, all frames
  std::vector<std::pair<std::string, std::uint64_t>> frames_by_scheme;  // frames per codec id in the headers
  std::optional<zs::codecs::alp_vector_mix> alp_vectors;  // alp: the CPU frame's vectors by mode (untiled input)
  bool timed = false;                 // GPU runs; CPU runs time nothing
  double encode_ms = 0, decode_ms = 0;
  double prepare_ms = 0;              // the column parameters' preparation (zshuffle's GPU runs)
  double encode_limit_ms = 0, decode_limit_ms = 0;
  bool verified = false;              // every status ok, and the input back as it was
  std::vector<std::string> geometry;  // launch geometry of each kernel (zs::describe)
};

// The first bytes of each frame: its header, and the header of a dict frame's plain frame.
using frame_head = std::array<std::byte, zs::frame_header_bytes + 8>;

// A frame's scheme: its codec id's name; for a dict frame, "dict" where it holds a dictionary,
// "dict-runs" where it holds runs, "dict-deltas" where it holds differences, and its plain
// frame's scheme where it holds none of them.
std::string scheme_of(const frame_head& head) {
  auto const id = static_cast<zs::codec_id>(head[6]);
  if (id == zs::codec_id::dict) {
    std::uint64_t const form = zs::detail::load_le(head.data() + 40, 8);
    if (form == 0) return std::string(zs::to_string(static_cast<zs::codec_id>(head[zs::frame_header_bytes + 6])));
    if ((form >> 63) != 0) return "dict-runs";  // docs/FORMAT.md, codec 12: the form field's top bit
    if (form == std::uint64_t{1} << 62) return "dict-deltas";  // and the bit below it, alone
  }
  std::string name(zs::to_string(id));
  return name == "unknown" ? "id " + std::to_string(static_cast<unsigned>(id)) : name;
}

// Frames per scheme: every id the codec's decoder accepts (0 where none; for dict, its plain
// frames' schemes too), and any other found.
void count_schemes(const zs::codec& c, const std::vector<frame_head>& heads, result& r) {
  std::uint32_t accepted = c.decodes();
  if (c.id() == zs::codec_id::dict) accepted |= zs::get_codec(zs::codec_id::bitpack_pfor).decodes();
  std::map<std::string, std::uint64_t> found;
  for (auto const& head : heads) ++found[scheme_of(head)];
  for (unsigned id = 0; id <= zs::max_codec_id; ++id) {
    if ((accepted & zs::codec_bit(static_cast<zs::codec_id>(id))) == 0) continue;
    std::string const name(zs::to_string(static_cast<zs::codec_id>(id)));
    r.frames_by_scheme.emplace_back(name, found[name]);
    found.erase(name);
  }
  for (auto const& [name, count] : found) r.frames_by_scheme.emplace_back(name, count);
}

// Whether `c` has a CPU reference: codecs that run on the GPU only (nVIDIA nvCOMP's) say they do
// not by throwing zs::error (unsupported) from the CPU hooks; an empty frame asks.
bool has_cpu_reference(const zs::codec& c, zs::value_type type) {
  if (c.params_bytes(type) != 0) return true;  // parameters need a sample: such codecs have a CPU side
  std::int64_t const offset = 0;
  std::vector<zs::encode_source> probe{zs::encode_source{type, 0, nullptr}};
  if (type == zs::value_type::string) probe.front().offsets = &offset;
  auto const offsets = zs::layout_frames(c, probe);
  zs::host_buffer frame(offsets.back());
  std::uint64_t bytes = 0;
  try {
    c.encode_host({probe, frame.as<std::byte>(), offsets, &bytes});
  } catch (const zs::error& e) {
    if (e.code() == zs::error_code::unsupported) return false;
    throw;
  }
  return true;
}

// Which paths an alp column takes (ALP, ALP_RD, raw vectors; the fill value taken out), from
// the CPU reference's frame of the untiled input, which the GPU's equals.
void note_alp_vectors(const zs::codec& c, std::span<const std::byte> frame, zs::value_type type, result& r) {
  if (c.id() == zs::codec_id::alp) r.alp_vectors = zs::codecs::vector_mix(frame, type);
}

void cpu_reference(const zs::codec& c, const zs::column& host, result& r) {
  std::vector<zs::encode_source> sources{whole(host.view(), host.data_bytes())};
  zs::host_buffer const params = attach_params_on_host(c, sources);
  auto const offsets = zs::layout_frames(c, sources);
  zs::host_buffer frame(offsets.back());
  std::uint64_t frame_bytes = 0;
  c.encode_host({sources, frame.as<std::byte>(), offsets, &frame_bytes});
  r.cpu_ratio = static_cast<double>(uncompressed_bytes(sources.front())) / static_cast<double>(frame_bytes);
  r.cpu_scheme = std::string(zs::to_string(static_cast<zs::codec_id>(frame.as<std::byte>()[6])));
  note_alp_vectors(c, {frame.as<std::byte>(), frame_bytes}, host.type(), r);
  std::array<std::uint64_t, 2> const piece_begin{0, 1};
  r.estimate = estimated_ratio([&] { return c.estimate_host({sources, piece_begin}); });
}

// The CPU reference frame of the untiled input, whether the GPU writes the same bytes, and the
// codec's estimate on the GPU.
void gpu_reference(const zs::codec& c, const zs::column& host, result& r, cudaStream_t stream) {
  std::array<std::uint64_t, 2> const piece_begin{0, 1};
  if (!has_cpu_reference(c, host.type())) {
    // Nothing to compare the GPU's frame with; the estimate alone.
    zs::column const device = host.copy_to(zs::memory_kind::device, stream);
    std::vector<zs::encode_source> const sample{whole(device.view(), host.data_bytes())};
    r.estimate = estimated_ratio([&] { return c.estimate({sample, piece_begin}, stream); });
    return;
  }
  std::vector<zs::encode_source> sources{whole(host.view(), host.data_bytes())};
  zs::host_buffer const cpu_params = attach_params_on_host(c, sources);
  auto const offsets = zs::layout_frames(c, sources);
  std::vector<std::byte> cpu(offsets.back());
  std::uint64_t cpu_bytes = 0;
  c.encode_host({sources, cpu.data(), offsets, &cpu_bytes});
  r.cpu_ratio = static_cast<double>(uncompressed_bytes(sources.front())) / static_cast<double>(cpu_bytes);
  r.cpu_scheme = std::string(zs::to_string(static_cast<zs::codec_id>(cpu[6])));
  note_alp_vectors(c, {cpu.data(), cpu_bytes}, host.type(), r);

  zs::column const device = host.copy_to(zs::memory_kind::device, stream);
  std::vector<zs::encode_source> dsources{whole(device.view(), host.data_bytes())};
  zs::device_buffer const gpu_params = attach_params_on_device(c, dsources, stream);
  auto const doffsets = zs::layout_frames(c, dsources);
  zs::device_buffer frames(doffsets.back(), stream), bytes(sizeof(std::uint64_t), stream);
  zs::device_buffer temp(c.encode_temp_bytes(dsources), stream);
  c.encode_async({dsources, frames.as<std::byte>(), doffsets, bytes.as<std::uint64_t>()}, temp.data(), temp.size(),
                 stream);
  std::vector<std::byte> gpu(doffsets.back());
  std::uint64_t gpu_bytes = 0;
  zs::copy_async(gpu.data(), frames.data(), gpu.size(), stream);
  zs::copy_async(&gpu_bytes, bytes.data(), sizeof gpu_bytes, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  r.identical = gpu_bytes == cpu_bytes && std::memcmp(gpu.data(), cpu.data(), cpu_bytes) == 0;

  std::vector<zs::encode_source> const sample{whole(device.view(), host.data_bytes())};
  r.estimate = estimated_ratio([&] { return c.estimate({sample, piece_begin}, stream); });
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Milliseconds of `run` (stream-ordered work on `stream`): median of `repeat` after `warmup`.
template <typename Run>
double time_ms(int warmup, int repeat, cudaStream_t stream, Run run) {
  for (int i = 0; i < warmup; ++i) run();
  zs::cuda_event start, stop;
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    start.record(stream);
    run();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  return median(ms);
}

// The same in host time, the stream synchronized after each run: for work that is partly on the
// host (preparing column parameters builds an FSST table there).
template <typename Run>
double wall_ms(int warmup, int repeat, cudaStream_t stream, Run run) {
  auto const once = [&] {
    auto const start = std::chrono::steady_clock::now();
    run();
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int i = 0; i < warmup; ++i) once();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) ms.push_back(once());
  return median(ms);
}

bool all_ok(const std::vector<zs::frame_status>& statuses) {
  return std::all_of(statuses.begin(), statuses.end(), [](auto s) { return s == zs::frame_status::ok; });
}

void measure_on_gpu(const zs::codec& c, const zs::column& host, const settings& s, double copy_bandwidth,
                    cudaStream_t stream, result& r) {
  gpu_reference(c, host, r, stream);
  tiling const t = plan_tiling(host, s.bytes);
  r.rows = t.rows;
  r.raw_bytes = t.data_bytes;
  r.input_bytes = t.input_bytes();

  // Tile on the device: one copy up, then doubling device-to-device copies; string offsets,
  // which differ from copy to copy, come up from the host.
  zs::device_buffer input(t.data_bytes, stream);
  tile(input.as<std::byte>(), host.view().data, host.data_bytes(), t.data_bytes,
       [&](std::byte* to, const void* from, std::uint64_t n) { zs::copy_async(to, from, n, stream); },
       [&](std::byte* to, const std::byte* from, std::uint64_t n) {
         ZS_CUDA_TRY(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, stream));
       });
  zs::device_buffer input_offsets(t.offsets.size() * sizeof(std::int64_t), stream);
  if (t.strings()) zs::copy_async(input_offsets.data(), t.offsets.data(), input_offsets.size(), stream);

  zs::device_buffer input_mask(t.mask.size(), stream);
  if (!t.mask.empty()) zs::copy_async(input_mask.data(), t.mask.data(), t.mask.size(), stream);
  auto sources = cut_sources(t, input.data(), input_offsets.as<std::int64_t>(),
                             t.mask.empty() ? nullptr : input_mask.as<std::uint8_t>(), s.frames);
  // Preparing the column parameters (an FSST table, ALP's exponents) is timed apart from the
  // encode: a shuffle pays it once a column and round, a spill once a column.
  r.prepare_ms = wall_ms(s.warmup, s.repeat, stream, [&] { attach_params_on_device(c, sources, stream); });
  zs::device_buffer const params = attach_params_on_device(c, sources, stream);
  auto const offsets = zs::layout_frames(c, sources);
  zs::device_buffer frames(offsets.back(), stream);
  zs::device_buffer frame_bytes(s.frames * sizeof(std::uint64_t), stream);
  zs::device_buffer encode_temp(c.encode_temp_bytes(sources), stream);
  zs::encode_batch const encode{sources, frames.as<std::byte>(), offsets, frame_bytes.as<std::uint64_t>()};
  r.encode_ms = time_ms(s.warmup, s.repeat, stream, [&] {
    c.encode_async(encode, encode_temp.data(), encode_temp.size(), stream);
  });
  zs::cli::record_geometry(r.geometry, stream, [&] {
    c.encode_async(encode, encode_temp.data(), encode_temp.size(), stream);
  });

  std::vector<std::uint64_t> sizes(s.frames);
  zs::copy_async(sizes.data(), frame_bytes.data(), s.frames * sizeof(std::uint64_t), stream);
  std::vector<frame_head> heads(s.frames);
  for (std::uint64_t f = 0; f < s.frames; ++f) {
    zs::copy_async(heads[f].data(), frames.as<std::byte>() + offsets[f],
                   std::min<std::uint64_t>(heads[f].size(), offsets[f + 1] - offsets[f]), stream);
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (auto const size : sizes) r.frame_bytes += size;
  count_schemes(c, heads, r);
  r.ratio = static_cast<double>(uncompressed_bytes(r.type, r.rows, r.raw_bytes)) / static_cast<double>(r.frame_bytes);

  zs::device_buffer output(t.data_bytes, stream);
  zs::device_buffer output_offsets(t.offsets.size() * sizeof(std::int64_t), stream);
  auto const targets = cut_targets(t, output.data(), output_offsets.as<std::int64_t>(), s.frames);
  zs::device_buffer status(s.frames * sizeof(zs::frame_status), stream);
  zs::device_buffer decode_temp(c.decode_temp_bytes(targets), stream);
  zs::decode_batch const decode{frames.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()};
  if (output.size() > 0) ZS_CUDA_TRY(cudaMemsetAsync(output.data(), 0, output.size(), stream));
  if (t.strings()) ZS_CUDA_TRY(cudaMemsetAsync(output_offsets.data(), 0, output_offsets.size(), stream));
  r.decode_ms = time_ms(s.warmup, s.repeat, stream, [&] {
    c.decode_async(decode, decode_temp.data(), decode_temp.size(), stream);
  });
  zs::cli::record_geometry(r.geometry, stream, [&] {
    c.decode_async(decode, decode_temp.data(), decode_temp.size(), stream);
  });
  r.timed = true;

  // Verify: every frame ok and the input back as it was: the values, or for strings every
  // offset and character (so every string, exactly).
  std::vector<zs::frame_status> statuses(s.frames);
  zs::copy_async(statuses.data(), status.data(), s.frames * sizeof(zs::frame_status), stream);
  std::vector<std::byte> a(t.data_bytes), b(t.data_bytes);
  zs::copy_async(a.data(), input.data(), t.data_bytes, stream);
  zs::copy_async(b.data(), output.data(), t.data_bytes, stream);
  std::vector<std::int64_t> decoded_offsets(t.offsets.size());
  zs::copy_async(decoded_offsets.data(), output_offsets.data(), output_offsets.size(), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  r.verified = all_ok(statuses) && same_values(t, a.data(), b.data()) && decoded_offsets == t.offsets;

  double const moved = static_cast<double>(r.input_bytes + r.frame_bytes);
  r.encode_limit_ms = moved / copy_bandwidth * 1e3;
  r.decode_limit_ms = moved / copy_bandwidth * 1e3;
}

// nvCOMP's codecs on a string input (--vs nvcomp): they encode fixed-width values, so each of the
// --frames frames becomes two, its characters (uint8) and its offsets relative to its first
// character (int64, count + 1), all in one batch: one encode and one decode call, timed as
// measure_on_gpu times a codec, and verified byte for byte.
void measure_strings_on_gpu(const zs::codec& c, const zs::column& host, const settings& s, double copy_bandwidth,
                            cudaStream_t stream, result& r) {
  tiling const t = plan_tiling(host, s.bytes);
  r.rows = t.rows;
  r.raw_bytes = t.data_bytes;
  r.input_bytes = t.input_bytes();
  zs::device_buffer input(t.data_bytes, stream);
  tile(input.as<std::byte>(), host.view().data, host.data_bytes(), t.data_bytes,
       [&](std::byte* to, const void* from, std::uint64_t n) { zs::copy_async(to, from, n, stream); },
       [&](std::byte* to, const std::byte* from, std::uint64_t n) {
         ZS_CUDA_TRY(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, stream));
       });
  // Each frame's offsets, relative: frame f's count + 1 at relative_at[f].
  std::vector<std::int64_t> relative;
  std::vector<std::uint64_t> relative_at;
  for (std::uint64_t f = 0; f < s.frames; ++f) {
    auto const [begin, end] = frame_rows(t, f, s.frames);
    relative_at.push_back(relative.size());
    for (std::uint64_t i = begin; i <= end; ++i) relative.push_back(t.offsets[i] - t.offsets[begin]);
  }
  std::uint64_t const offsets_bytes = relative.size() * sizeof(std::int64_t);
  zs::device_buffer input_offsets(offsets_bytes, stream), output(t.data_bytes, stream), output_offsets(offsets_bytes, stream);
  zs::copy_async(input_offsets.data(), relative.data(), offsets_bytes, stream);
  std::vector<zs::encode_source> sources;
  std::vector<zs::decode_target> targets;
  for (int part = 0; part < 2; ++part) {
    for (std::uint64_t f = 0; f < s.frames; ++f) {
      auto const [begin, end] = frame_rows(t, f, s.frames);
      if (part == 0) {
        auto const at = static_cast<std::uint64_t>(t.offsets[begin]);
        auto const chars = static_cast<std::uint64_t>(t.offsets[end]) - at;
        sources.push_back({zs::value_type::uint8, chars, input.as<std::byte>() + at});
        targets.push_back({zs::value_type::uint8, chars, output.as<std::byte>() + at});
      } else {
        sources.push_back({zs::value_type::int64, end - begin + 1, input_offsets.as<std::int64_t>() + relative_at[f]});
        targets.push_back({zs::value_type::int64, end - begin + 1, output_offsets.as<std::int64_t>() + relative_at[f]});
      }
    }
  }
  std::size_t const n = sources.size();
  auto const offsets = zs::layout_frames(c, sources);
  zs::device_buffer frames(offsets.back(), stream), frame_bytes(n * sizeof(std::uint64_t), stream);
  zs::device_buffer encode_temp(c.encode_temp_bytes(sources), stream);
  zs::encode_batch const encode{sources, frames.as<std::byte>(), offsets, frame_bytes.as<std::uint64_t>()};
  r.encode_ms = time_ms(s.warmup, s.repeat, stream, [&] {
    c.encode_async(encode, encode_temp.data(), encode_temp.size(), stream);
  });
  std::vector<std::uint64_t> sizes(n);
  zs::copy_async(sizes.data(), frame_bytes.data(), n * sizeof(std::uint64_t), stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  for (auto const size : sizes) r.frame_bytes += size;
  r.frames_by_scheme.push_back({codec_name(c), n});
  r.ratio = static_cast<double>(uncompressed_bytes(r.type, r.rows, r.raw_bytes)) / static_cast<double>(r.frame_bytes);

  zs::device_buffer status(n * sizeof(zs::frame_status), stream);
  zs::device_buffer decode_temp(c.decode_temp_bytes(targets), stream);
  zs::decode_batch const decode{frames.as<std::byte>(), offsets, targets, status.as<zs::frame_status>()};
  if (output.size() > 0) ZS_CUDA_TRY(cudaMemsetAsync(output.data(), 0, output.size(), stream));
  ZS_CUDA_TRY(cudaMemsetAsync(output_offsets.data(), 0, output_offsets.size(), stream));
  r.decode_ms = time_ms(s.warmup, s.repeat, stream, [&] {
    c.decode_async(decode, decode_temp.data(), decode_temp.size(), stream);
  });
  r.timed = true;

  std::vector<zs::frame_status> statuses(n);
  zs::copy_async(statuses.data(), status.data(), n * sizeof(zs::frame_status), stream);
  std::vector<std::byte> a(t.data_bytes), b(t.data_bytes);
  zs::copy_async(a.data(), input.data(), t.data_bytes, stream);
  zs::copy_async(b.data(), output.data(), t.data_bytes, stream);
  std::vector<std::int64_t> decoded(relative.size());
  zs::copy_async(decoded.data(), output_offsets.data(), offsets_bytes, stream);
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  r.verified = all_ok(statuses) && (t.data_bytes == 0 || std::memcmp(a.data(), b.data(), t.data_bytes) == 0) &&
               decoded == relative;
  double const moved = static_cast<double>(r.input_bytes + r.frame_bytes);
  r.encode_limit_ms = moved / copy_bandwidth * 1e3;
  r.decode_limit_ms = moved / copy_bandwidth * 1e3;
}

// nVIDIA nvCOMP's codecs that run on string inputs: those for bytes (Cascaded and Bitcomp are for
// numbers).
bool runs_on_strings(const zs::codec& c) {
  return c.name() == "nvcomp:lz4" || c.name() == "nvcomp:ans" || c.name() == "nvcomp:zstd";
}

void measure_on_cpu(const zs::codec& c, const zs::column& host, const settings& s, result& r) {
  cpu_reference(c, host, r);
  tiling const t = plan_tiling(host, s.bytes);
  r.rows = t.rows;
  r.raw_bytes = t.data_bytes;
  r.input_bytes = t.input_bytes();

  zs::host_buffer input(t.data_bytes);
  auto const host_copy = [](std::byte* to, const void* from, std::uint64_t n) { std::memcpy(to, from, n); };
  tile(input.as<std::byte>(), host.view().data, host.data_bytes(), t.data_bytes, host_copy, host_copy);
  auto sources = cut_sources(t, input.data(), t.offsets.data(), t.mask.empty() ? nullptr : t.mask.data(), s.frames);
  zs::host_buffer const params = attach_params_on_host(c, sources);
  auto const offsets = zs::layout_frames(c, sources);
  zs::host_buffer frames(offsets.back());
  std::vector<std::uint64_t> sizes(s.frames);
  c.encode_host({sources, frames.as<std::byte>(), offsets, sizes.data()});
  std::vector<frame_head> heads(s.frames);
  for (std::uint64_t f = 0; f < s.frames; ++f) {
    std::memcpy(heads[f].data(), frames.as<std::byte>() + offsets[f],
                std::min<std::uint64_t>(heads[f].size(), offsets[f + 1] - offsets[f]));
  }
  for (auto const size : sizes) r.frame_bytes += size;
  count_schemes(c, heads, r);
  r.ratio = static_cast<double>(uncompressed_bytes(r.type, r.rows, r.raw_bytes)) / static_cast<double>(r.frame_bytes);

  zs::host_buffer output(t.data_bytes);
  if (t.data_bytes > 0) std::memset(output.data(), 0, t.data_bytes);
  std::vector<std::int64_t> decoded_offsets(t.offsets.size(), 0);
  auto const targets = cut_targets(t, output.data(), decoded_offsets.data(), s.frames);
  std::vector<zs::frame_status> statuses(s.frames);
  c.decode_host({frames.as<std::byte>(), offsets, targets, statuses.data()});
  r.verified = all_ok(statuses) && same_values(t, input.as<std::byte>(), output.as<std::byte>()) &&
               decoded_offsets == t.offsets;
}

// --- output -------------------------------------------------------------------------------------

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

double gbs(std::uint64_t bytes, double ms) { return static_cast<double>(bytes) / ms / 1e6; }

std::string schemes_text(const result& r) {
  std::string text;
  for (auto const& [name, count] : r.frames_by_scheme) {
    if (count > 0) text += (text.empty() ? "" : " ") + name + ":" + std::to_string(count);
  }
  return text.empty() ? "-" : text;
}

void print_header(int name_width, int codec_width, bool timed) {
  std::printf("%-*s %-7s %-*s %7s %7s %7s %4s %-20s", name_width, "input", "type", codec_width, "codec", "ratio", "est",
              "cpu", "same", "frames by scheme");
  if (timed) {
    std::printf(" %8s %9s %9s %6s %9s %9s %6s", "prep ms", "enc ms", "enc GB/s", "% lim", "dec ms", "dec GB/s",
                "% lim");
  }
  std::printf(" %3s\n", "ok");
}

void print_row(const result& r, int name_width, int codec_width) {
  std::string const same = !r.identical ? "-" : *r.identical ? "yes" : "NO";
  std::printf("%-*s %-7s %-*s %7.3f %7s %7s %4s %-20s", name_width, r.name.c_str(), type_name(r.type).c_str(),
              codec_width, r.codec.c_str(), r.ratio, r.estimate ? fixed(*r.estimate, 3).c_str() : "n/a",
              r.cpu_ratio ? fixed(*r.cpu_ratio, 3).c_str() : "n/a", same.c_str(), schemes_text(r).c_str());
  if (r.timed) {
    std::printf(" %8.3f %9.3f %9.1f %6.1f %9.3f %9.1f %6.1f", r.prepare_ms, r.encode_ms, gbs(r.raw_bytes, r.encode_ms),
                100.0 * r.encode_limit_ms / r.encode_ms, r.decode_ms, gbs(r.raw_bytes, r.decode_ms),
                100.0 * r.decode_limit_ms / r.decode_ms);
  }
  std::printf(" %3s\n", r.verified ? "yes" : "NO");
  if (auto const& v = r.alp_vectors) {
    std::printf("    vectors of the untiled column: alp %llu, alp_rd %llu, raw %llu; fill value taken out of %llu\n",
                static_cast<unsigned long long>(v->alp), static_cast<unsigned long long>(v->alp_rd),
                static_cast<unsigned long long>(v->raw), static_cast<unsigned long long>(v->with_fill));
  }
  for (auto const& g : r.geometry) std::printf("    geometry: %s\n", g.c_str());
  std::fflush(stdout);
}

nlohmann::json result_json(const result& r) {
  nlohmann::json schemes = nlohmann::json::object();
  for (auto const& [name, count] : r.frames_by_scheme) schemes[name] = count;
  nlohmann::json j{{"column", r.name},
                   {"file", r.file},
                   {"shape", r.shape},
                   {"codec", r.codec},
                   {"side", r.side},
                   {"type", zs::to_string(r.type)},
                   {"rows", r.rows},
                   {"raw_bytes", r.raw_bytes},
                   {"input_bytes", r.input_bytes},
                   {"frame_bytes", r.frame_bytes},
                   {"ratio", r.ratio},
                   {"estimate_ratio", r.estimate ? nlohmann::json(*r.estimate) : nlohmann::json(nullptr)},
                   {"cpu_reference_ratio_untiled", r.cpu_ratio ? nlohmann::json(*r.cpu_ratio) : nlohmann::json(nullptr)},
                   {"cpu_reference_scheme", r.cpu_scheme},
                   {"gpu_equals_cpu_untiled", r.identical ? nlohmann::json(*r.identical) : nlohmann::json(nullptr)},
                   {"frames_by_scheme", std::move(schemes)},
                   {"verified", r.verified}};
  if (auto const& v = r.alp_vectors) {
    j["alp_vectors_untiled"] = {{"alp", v->alp}, {"alp_rd", v->alp_rd}, {"raw", v->raw}, {"with_fill", v->with_fill}};
  }
  if (r.timed) {
    j["encode_ms"] = r.encode_ms;
    j["encode_gbs"] = gbs(r.raw_bytes, r.encode_ms);
    j["prepare_ms"] = r.prepare_ms;
    j["encode_with_prepare_gbs"] = gbs(r.raw_bytes, r.encode_ms + r.prepare_ms);
    j["encode_limit_ms"] = r.encode_limit_ms;
    j["encode_pct_of_limit"] = 100.0 * r.encode_limit_ms / r.encode_ms;
    j["decode_ms"] = r.decode_ms;
    j["decode_gbs"] = gbs(r.raw_bytes, r.decode_ms);
    j["decode_limit_ms"] = r.decode_limit_ms;
    j["decode_pct_of_limit"] = 100.0 * r.decode_limit_ms / r.decode_ms;
    j["geometry"] = r.geometry;
  }
  return j;
}

// nVIDIA nvCOMP's codecs for --vs nvcomp (nvcomp_codecs.hpp), none in a build without nvCOMP.
std::vector<const zs::codec*> nvcomp_side() {
#ifdef ZS_HAVE_NVCOMP
  auto const all = zs::nvcomp::nvcomp_codecs();
  return {all.begin(), all.end()};
#else
  return {};
#endif
}

std::string nvcomp_version_text() {
#ifdef ZS_HAVE_NVCOMP
  return zs::nvcomp::nvcomp_version();
#else
  return "";
#endif
}

std::string registered_codecs() {
  std::string names;
  for (const zs::codec* c : zs::all_codecs()) names += (names.empty() ? "" : ", ") + codec_name(*c);
  return names;
}

}  // namespace

int run_bench_codec(int argc, char** argv) {
  std::string data, json_path, codec_option, type_option, vs_option;
  std::vector<std::string> column_list, column_files;
  std::vector<std::string> shape_names{"as-is"};
  settings s;
  CLI::App app{"A codec's compression ratio and GPU encode and decode throughput on the real columns (and on "
               "inputs of other shapes derived from them), against the memory-bound limit measured in the same run.",
               "zshuffle bench codec"};
  app.add_option("--data", data, "folder of the column files (default: $ZS_DATA_DIR)");
  app.add_option("--codec", codec_option,
                 "the codec, by name (registered: " + registered_codecs() +
                     "; default: each column's type's default codec)");
  app.add_option("--type", type_option,
                 "benchmark every column as this type: int32, int64, uint32, uint64 (integer columns), float32, "
                 "float64 (float columns) or string (default: each column's own type)");
  app.add_option("--column", column_files, "a column file of the folder; repeat for more")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--columns", column_list,
                 "column files, comma separated (default: with --codec or --type, every column file of the folder "
                 "that the codec encodes and that reads as --type; otherwise " +
                     integer_columns[0] + "," + integer_columns[1] + "," + integer_columns[2] + ")")
      ->delimiter(',');
  app.add_option("--shapes", shape_names, "input shapes, comma separated, or all (the list is below)")
      ->delimiter(',')
      ->capture_default_str();
  zs::cli::add_size_option(app, "--bytes", s.bytes,
                           "each input is tiled to this many uncompressed bytes (values, or characters of strings); "
                           "with --cpu the default is " + zs::cli::format_size(default_cpu_bytes),
                           1);
  app.add_option("--frames", s.frames, "frames the tiled input is cut into, coded as one batch")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--repeat", s.repeat, "timed runs; the median is reported")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", s.warmup, "untimed runs first")->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_flag("--cpu", s.cpu,
               "the CPU reference codecs instead, no GPU needed: ratios, estimates, frames and a verified round "
               "trip of every input, nothing timed");
  // Checked as the option is read, before --help: `bench codec --vs nvcomp --help` fails in a
  // build without nvCOMP, which is how scripts tell whether a build has it.
  app.add_option("--vs", vs_option,
                 "also run another library's codecs on every input, beside this one's: nvcomp (nVIDIA nvCOMP's "
                 "Cascaded, Bitcomp, ANS, LZ4 and Zstd, 64 KiB chunks; needs a build with nvCOMP)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (value != "nvcomp") return "the only library to compare with is nvcomp, not '" + value + "'";
            if (nvcomp_side().empty()) {
              return "this build has no nVIDIA nvCOMP (configure with -DZS_NVCOMP_ROOT=DIR; scripts/fetch-nvcomp "
                     "fetches it)";
            }
            return {};
          },
          "nvcomp"));
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.footer(zs::cli::describe_shapes());
  if (!zs::cli::parse(app, argc, argv)) return 0;
  if (s.cpu && app.count("--bytes") == 0) s.bytes = default_cpu_bytes;
  s.vs_nvcomp = vs_option == "nvcomp";
  if (s.vs_nvcomp && s.cpu) usage_error("--vs nvcomp needs a GPU (nVIDIA nvCOMP has no CPU codecs); drop --cpu");
  std::optional<zs::cli::output_file> json;
  if (!json_path.empty()) json.emplace("--json", json_path);
  fs::path const dir = zs::cli::data_folder(data);
  const zs::codec* named_codec = codec_option.empty() ? nullptr : &codec_by_name(codec_option);
  std::optional<zs::value_type> named_type;
  if (!type_option.empty()) named_type = type_by_name(type_option);
  s.shapes = zs::cli::parse_input_shapes(shape_names);
  std::vector<std::string> names = column_list;
  names.insert(names.end(), column_files.begin(), column_files.end());
  plan const p = plan_columns(dir, names, named_codec, named_type);
  if (s.cpu) {
    for (auto const& c : p.columns) {
      if (!has_cpu_reference(*c.codec, c.type)) {
        usage_error("codec '" + codec_name(*c.codec) + "' has no CPU reference codec, which --cpu runs; drop --cpu");
      }
    }
  }
  if (!s.cpu && !zs::cuda_device_available()) {
    return zs::cli::no_gpu("bench codec", "no CUDA device on this machine; the benchmark needs one");
  }

  // A string column without --codec takes fsst or fsst_dict by estimate (string_mode_for).
  auto const chooses_string_mode = [&](const auto& c) {
    return named_codec == nullptr && c.codec->id() == zs::codec_id::fsst;
  };
  // The codecs that run, each once, in order: one name for the usual run of one codec.
  std::vector<std::string> codecs;
  for (auto const& c : p.columns) {
    std::string const name = chooses_string_mode(c) ? "fsst or fsst_dict" : codec_name(*c.codec);
    if (std::find(codecs.begin(), codecs.end(), name) == codecs.end()) codecs.push_back(name);
  }
  std::string codecs_text;
  for (auto const& name : codecs) codecs_text += (codecs_text.empty() ? "" : ", ") + name;
  std::vector<const zs::codec*> const others = s.vs_nvcomp ? nvcomp_side() : std::vector<const zs::codec*>{};
  std::string others_text;
  for (const zs::codec* c : others) others_text += (others_text.empty() ? "" : ", ") + codec_name(*c);
  int codec_width = 7;
  for (auto const& c : p.columns) {
    std::string_view const widest =
        chooses_string_mode(c) ? zs::get_codec(zs::codec_id::fsst_dict).name() : c.codec->name();
    codec_width = std::max(codec_width, static_cast<int>(widest.size()));
  }
  for (const zs::codec* c : others) codec_width = std::max(codec_width, static_cast<int>(c->name().size()));
  int name_width = 20;
  for (auto const& c : p.columns) {
    for (auto const shape : s.shapes) {
      std::size_t const width = c.file.filename().string().size() +
                                (shape == zs::cli::input_shape::as_is ? 0 : 1 + zs::cli::to_string(shape).size());
      name_width = std::max(name_width, static_cast<int>(width));
    }
  }

  std::string device_name = "cpu";
  double copy_bandwidth = 0;
  std::optional<zs::cuda_stream> stream;
  if (s.cpu) {
    std::printf("zshuffle bench codec --cpu: %s, CPU reference codecs, inputs tiled to %s in %llu frames; nothing "
                "timed\n\n",
                codecs_text.c_str(), zs::cli::format_size(s.bytes).c_str(), static_cast<unsigned long long>(s.frames));
  } else {
    int device = 0;
    ZS_CUDA_TRY(cudaGetDevice(&device));
    stream.emplace();
    device_name = zs::query_device(device).name;
    copy_bandwidth =
        zs::measure_copy_bandwidth(std::min<std::uint64_t>(s.bytes, std::uint64_t{1} << 30), 10, stream->get());
    std::printf("zshuffle bench codec: %s on %s, inputs tiled to %.2f GiB in %llu frames, median of %d after "
                "%d warm-up runs\n",
                codecs_text.c_str(), device_name.c_str(), static_cast<double>(s.bytes) / (1 << 30),
                static_cast<unsigned long long>(s.frames), s.repeat, s.warmup);
    if (!others.empty()) {
      std::printf("beside each input: %s (%s), 64 KiB chunks, one batched call over all chunks of the frames\n",
                  others_text.c_str(), nvcomp_version_text().c_str());
      std::printf("strings: nvCOMP's LZ4, ANS and Zstd on each frame's characters (bytes) and its offsets relative "
                  "to its first character (int64), the bytes a raw frame carries\n");
    }
    std::printf("device copy bandwidth (read + write): %.1f GB/s; limit = (input + frame bytes) / that bandwidth\n\n",
                copy_bandwidth / 1e9);
  }
  for (auto const& line : p.skipped) std::printf("%s\n", line.c_str());
  print_header(name_width, codec_width, !s.cpu);

  std::vector<result> results;
  bool every_input_ok = true;
  for (auto const& c : p.columns) {
    zs::column const real = zs::cli::convert_column(zs::io::read_column(c.file), c.type);
    if (real.size() == 0) ZS_FAIL(zs::error_code::invalid_argument, "'" + c.file.string() + "' holds no rows");
    for (auto const shape : s.shapes) {
      result r;
      r.file = c.file.filename().string();
      r.shape = std::string(zs::cli::to_string(shape));
      r.name = shape == zs::cli::input_shape::as_is ? r.file : r.file + ":" + r.shape;
      r.type = c.type;
      zs::column const input = zs::cli::shape_column(real, shape);
      const zs::codec& codec = chooses_string_mode(c) ? string_mode_for(input) : *c.codec;
      r.codec = codec_name(codec);
      if (s.cpu) {
        measure_on_cpu(codec, input, s, r);
      } else {
        measure_on_gpu(codec, input, s, copy_bandwidth, stream->get(), r);
      }
      print_row(r, name_width, codec_width);
      every_input_ok = every_input_ok && r.identical.value_or(true) && r.verified;
      result same_input;
      same_input.name = r.name;
      same_input.file = r.file;
      same_input.shape = r.shape;
      results.push_back(std::move(r));
      // The other library's codecs on the same input, in the same way (--vs).
      for (const zs::codec* other : others) {
        if (c.type == zs::value_type::string && runs_on_strings(*other)) {
          result o = same_input;
          o.codec = codec_name(*other);
          o.side = "nvcomp";
          o.type = c.type;
          measure_strings_on_gpu(*other, input, s, copy_bandwidth, stream->get(), o);
          print_row(o, name_width, codec_width);
          every_input_ok = every_input_ok && o.verified;
          results.push_back(std::move(o));
          continue;
        }
        if (!other->supports(c.type)) {
          std::printf("    %s does not encode %s values\n", codec_name(*other).c_str(), type_name(c.type).c_str());
          continue;
        }
        result o = same_input;
        o.codec = codec_name(*other);
        o.side = "nvcomp";
        o.type = c.type;
        measure_on_gpu(*other, input, s, copy_bandwidth, stream->get(), o);
        print_row(o, name_width, codec_width);
        every_input_ok = every_input_ok && o.verified;
        results.push_back(std::move(o));
      }
    }
  }

  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (auto const& r : results) all.push_back(result_json(r));
    nlohmann::json shapes = nlohmann::json::array();
    for (auto const shape : s.shapes) shapes.push_back(zs::cli::to_string(shape));
    nlohmann::json out{{"benchmark", "codec"},
                       {"codec", codecs_text},
                       {"device", device_name},
                       {"cpu_only", s.cpu},
                       {"bytes_per_column", s.bytes},
                       {"frames", s.frames},
                       {"shapes", std::move(shapes)},
                       {"skipped", p.skipped},
                       {"results", std::move(all)}};
    if (!others.empty()) {
      out["vs"] = "nvcomp";
      out["vs_codecs"] = others_text;
      out["vs_version"] = nvcomp_version_text();
      out["vs_chunk_bytes"] = 65536;
      out["vs_strings"] = "nvcomp:lz4, nvcomp:ans and nvcomp:zstd on each frame's characters (uint8) and its offsets "
                          "relative to its first character (int64), in one batch";
    }
    if (!s.cpu) {
      out["copy_bandwidth_gbs"] = copy_bandwidth / 1e9;
      out["repeat"] = s.repeat;
      out["warmup"] = s.warmup;
    }
    json->write_json(out);
  }
  return every_input_ok ? 0 : 1;
}
