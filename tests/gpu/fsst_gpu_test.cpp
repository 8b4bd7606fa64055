// The fsst codec on the GPU, white box: tables prepared on the GPU are the CPU's, frames the
// GPU encodes are the CPU's byte for byte (many frames, a 100 MB string), and frames that break
// the fsst rules get the CPU's statuses without their targets being written. The same for the
// fsst_dict codec's encoder (distinct values found on the GPU): its frames are the CPU's byte for
// byte on real columns and on inputs chosen to break it; its decoder's steps, run on the CPU and on
// the GPU, give the CPU reference's strings and statuses. Round trips of the
// adversarial inputs, cross decoding, truncation and bit flips are in the codec conformance suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fsst/fsst_dict_format.hpp"
#include "fsst/fsst_format.hpp"
#include "zs/codec.hpp"
#include "zs/device.hpp"
#include "zs/tuning.hpp"
#include "zs_test.hpp"

namespace {

using zs::test::partition_sources;
using zs::test::partition_targets;

const zs::codec& fsst() { return zs::get_codec(zs::codec_id::fsst); }
const zs::codec& fsst_dict() { return zs::get_codec(zs::codec_id::fsst_dict); }

using zs::test::to_host;

// A column in `parts` partitions, one table per partition (each its own column) or one for all.
std::vector<std::uint64_t> piece_begin_of(std::size_t parts, bool table_per_part) {
  std::vector<std::uint64_t> b;
  for (std::size_t k = 0; k <= (table_per_part ? parts : 1); ++k) b.push_back(table_per_part ? k : (k == 0 ? 0 : parts));
  return b;
}

struct frames_of {
  std::vector<std::byte> params;  // host copy of the tables
  std::vector<std::uint64_t> offsets;
  std::vector<std::byte> frames;  // host copy
  std::vector<std::uint64_t> sizes;
};

// Tables and frames on the CPU.
frames_of encode_on_cpu(const zs::column& c, std::size_t parts, bool table_per_part, const zs::codec& codec = fsst()) {
  frames_of r;
  auto sources = partition_sources(c.view(), c.view(), parts);
  auto const begin = piece_begin_of(parts, table_per_part);
  auto const po = zs::layout_params(codec, std::vector<zs::value_type>(begin.size() - 1, zs::value_type::string));
  r.params.assign(po.back(), std::byte{0});
  codec.prepare_host({sources, begin}, r.params.data(), po);
  for (std::size_t f = 0; f < parts; ++f) sources[f].params = r.params.data() + po[table_per_part ? f : 0];
  r.offsets = zs::layout_frames(codec, sources);
  r.frames.assign(r.offsets.back(), std::byte{0});
  r.sizes.assign(parts, 0);
  codec.encode_host({sources, r.frames.data(), r.offsets, r.sizes.data()});
  return r;
}

// The same on the GPU, from a device copy of the column.
frames_of encode_on_gpu(const zs::column& c, std::size_t parts, bool table_per_part, cudaStream_t stream,
                        const zs::codec& codec = fsst()) {
  frames_of r;
  zs::column const d = c.copy_to(zs::memory_kind::device, stream);
  auto sources = partition_sources(c.view(), d.view(), parts);
  auto const begin = piece_begin_of(parts, table_per_part);
  auto const po = zs::layout_params(codec, std::vector<zs::value_type>(begin.size() - 1, zs::value_type::string));
  zs::device_buffer params(po.back(), stream);
  codec.prepare_async({sources, begin}, params.as<std::byte>(), po, stream);
  for (std::size_t f = 0; f < parts; ++f) sources[f].params = params.as<std::byte>() + po[table_per_part ? f : 0];
  r.offsets = zs::layout_frames(codec, sources);
  zs::device_buffer frames(r.offsets.back(), stream);
  ZS_CUDA_TRY(cudaMemsetAsync(frames.data(), 0, r.offsets.back(), stream));
  zs::device_buffer sizes(parts * sizeof(std::uint64_t), stream);
  zs::device_buffer temp(codec.encode_temp_bytes(sources), stream);
  codec.encode_async({sources, frames.as<std::byte>(), r.offsets, sizes.as<std::uint64_t>()}, temp.data(), temp.size(),
                      stream);
  r.params = to_host<std::byte>(params.data(), po.back(), stream);
  r.frames = to_host<std::byte>(frames.data(), r.offsets.back(), stream);
  r.sizes = to_host<std::uint64_t>(sizes.data(), parts, stream);
  return r;
}

// Decodes host frames on the GPU into a column shaped like `c` whose characters start as 0x5A.
std::pair<std::vector<zs::frame_status>, zs::column> decode_on_gpu(const frames_of& e, const zs::column& c,
                                                                   std::size_t parts, cudaStream_t stream,
                                                                   const zs::codec& codec = fsst()) {
  zs::device_buffer in(e.frames.size(), stream);
  zs::copy_async(in.data(), e.frames.data(), e.frames.size(), stream);
  zs::column out = zs::test::empty_like(c, zs::memory_kind::device, stream);
  auto dv = out.mutable_view();
  if (c.data_bytes() != 0) ZS_CUDA_TRY(cudaMemsetAsync(dv.data, 0x5A, c.data_bytes(), stream));
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), dv);
  zs::device_buffer status(parts * sizeof(zs::frame_status), stream);
  zs::device_buffer temp(codec.decode_temp_bytes(targets), stream);
  codec.decode_async({in.as<std::byte>(), e.offsets, targets, status.as<zs::frame_status>()}, temp.data(), temp.size(),
                      stream);
  auto statuses = to_host<zs::frame_status>(status.data(), parts, stream);
  return {std::move(statuses), out.copy_to(zs::memory_kind::host, stream)};
}

void expect_gpu_as_cpu(const zs::column& c, std::size_t parts, bool table_per_part, cudaStream_t stream,
                       const zs::codec& codec = fsst()) {
  auto const cpu = encode_on_cpu(c, parts, table_per_part, codec);
  auto const gpu = encode_on_gpu(c, parts, table_per_part, stream, codec);
  ASSERT_EQ(gpu.params, cpu.params) << "tables";
  ASSERT_EQ(gpu.sizes, cpu.sizes);
  for (std::size_t f = 0; f < parts; ++f) {
    ASSERT_EQ(std::memcmp(gpu.frames.data() + gpu.offsets[f], cpu.frames.data() + cpu.offsets[f], cpu.sizes[f]), 0)
        << "frame " << f;
  }
  auto const [status, out] = decode_on_gpu(cpu, c, parts, stream, codec);
  for (auto s : status) ASSERT_EQ(s, zs::frame_status::ok);
  EXPECT_EQ(out.strings(), c.strings());
}

}  // namespace

TEST(FsstGpu, RealColumnsEncodeAsOnTheCpuAndDecode) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const char* file : {"deb_maintainers.txt", "deb_paths.txt", "osm_poi_names.txt"}) {
    SCOPED_TRACE(file);
    auto const c = zs::test::data_column(file);
    expect_gpu_as_cpu(c, 1, false, stream.get());
    expect_gpu_as_cpu(c, 37, false, stream.get());
    expect_gpu_as_cpu(c, 16, true, stream.get());
  }
}

TEST(FsstGpu, OneHundredMegabyteStringAndAllEmptyStrings) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::string one(100u << 20, 'a');
  std::mt19937_64 rng(9);
  for (std::size_t i = 0; i < one.size(); i += 7) one[i] = static_cast<char>(rng());
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>{one}), 1, false, stream.get());
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>(100000, "")), 5, false, stream.get());
}

// The split kernels take groups of splits (a warp a split, a block a contiguous range of groups),
// a block filling its tables again at each frame it moves to: every block size the tuning may
// choose, on a grid of one wave, gives the CPU's frames and strings.
TEST(FsstGpu, EveryBlockSizeEncodesAndDecodesAsTheCpu) {
  ZS_REQUIRE_GPU();
  // Puts the process-wide table back however the test ends.
  struct restore_tuning {
    zs::tuning_table saved = *zs::tuning();
    ~restore_tuning() { zs::set_tuning(saved); }
  } const restore;
  zs::cuda_stream stream;
  auto const c = zs::test::data_column("deb_paths.txt");
  zs::device_profile const& d = zs::current_device_profile();
  for (unsigned threads : {32U, 64U, 128U, 256U}) {
    SCOPED_TRACE(threads);
    zs::tuning_table forced;
    for (const char* kernel : {"fsst_encode", "fsst_decode"}) {
      for (auto size : {zs::size_class::small, zs::size_class::medium, zs::size_class::large}) {
        forced.set({{d.name, d.compute_major, d.compute_minor, kernel, zs::value_type::string, size},
                    zs::launch_params{threads, 1, 0}});
      }
    }
    zs::set_tuning(forced);
    expect_gpu_as_cpu(c, 37, true, stream.get());
    expect_gpu_as_cpu(c, 1, false, stream.get());
  }
}

// Frames that break the fsst rules behind valid checksums: the GPU gives the CPU's statuses and
// writes none of their characters (a frame whose lengths do not add up may have had offsets
// written: inside its target, all that a payload decoder must keep to, zs/codec.hpp).
TEST(FsstGpu, CorruptFramesGetTheCpuStatusesAndLeaveTheirTargets) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::vector<std::string> strings;
  for (int i = 0; i < 6000; ++i) strings.push_back("row " + std::to_string(i % 97) + " of a repetitive column");
  auto const c = zs::column::from_strings(strings);
  std::size_t const parts = 6;
  auto e = encode_on_cpu(c, parts, false);
  std::uint64_t const body_at = zs::params_section_bytes(fsst().params_bytes(zs::value_type::string));
  auto edit = [&](std::size_t f, auto change) {
    std::byte* frame = e.frames.data() + e.offsets[f];
    zs::frame_header h = zs::load_header(frame);
    change(h, frame + zs::frame_header_bytes);
    h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
    zs::store_header(h, frame);
  };
  edit(1, [](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data(), 4096, 8); });  // split size
  edit(2, [](zs::frame_header& h, std::byte*) { zs::detail::store_le(h.params.data() + 8, 80, 8); });  // lengths bytes
  edit(3, [&](zs::frame_header&, std::byte* payload) {
    // The first value (or reference) of the packed lengths off by one: they no longer add up.
    std::byte* lengths = payload + body_at;
    zs::frame_header const inner = zs::load_header(lengths);
    std::uint64_t const per_block = inner.codec == zs::codec_id::bitpack_rfor ? 512 : 128;
    std::uint64_t const starts = inner.codec == zs::codec_id::raw ? 0 : (inner.value_count + per_block - 1) / per_block;
    lengths[zs::frame_header_bytes + 4 * starts] ^= std::byte{1};
  });
  edit(4, [&](zs::frame_header&, std::byte* payload) { payload[zs::params_prefix_bytes + 4] = std::byte{0}; });  // table
  std::vector<zs::frame_status> expected(parts, zs::frame_status::not_decoded);
  zs::column host_out = zs::test::empty_like(c, zs::memory_kind::host);
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), host_out.mutable_view());
  fsst().decode_host({e.frames.data(), e.offsets, targets, expected.data()});
  EXPECT_EQ(expected[0], zs::frame_status::ok);
  for (std::size_t f = 1; f <= 4; ++f) EXPECT_EQ(expected[f], zs::frame_status::corrupt_payload) << "frame " << f;
  EXPECT_EQ(expected[5], zs::frame_status::ok);
  auto const [statuses, out] = decode_on_gpu(e, c, parts, stream.get());
  EXPECT_EQ(statuses, expected);
  auto const sources = partition_sources(c.view(), c.view(), parts);
  auto const* chars = static_cast<const std::uint8_t*>(out.view().data);
  for (std::size_t f = 1; f <= 4; ++f) {
    std::uint64_t const begin = static_cast<std::uint64_t>(sources[f].offsets[0]);
    for (std::uint64_t k = 0; k < sources[f].chars_bytes; ++k) {
      ASSERT_EQ(chars[begin + k], 0x5A) << "frame " << f << " wrote its target";
    }
  }
}

// --- fsst_dict ------------------------------------------------------------------------------

TEST(FsstDictGpu, RealColumnsEncodeAsOnTheCpuAndDecode) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  for (const char* file : {"deb_maintainers.txt", "deb_paths.txt", "osm_poi_names.txt"}) {
    SCOPED_TRACE(file);
    auto const c = zs::test::data_column(file);
    expect_gpu_as_cpu(c, 1, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 37, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 16, true, stream.get(), fsst_dict());
  }
}

TEST(FsstDictGpu, AdversarialColumnsEncodeAsOnTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  std::mt19937_64 rng(17);
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  cases.push_back({"all equal", std::vector<std::string>(50000, "the same value every row")});
  std::vector<std::string> distinct, bytes, few;
  for (int i = 0; i < 40000; ++i) distinct.push_back("value " + std::to_string(i * 7919));
  cases.push_back({"all distinct", distinct});
  cases.push_back({"all empty", std::vector<std::string>(30000, "")});
  // Values that differ only in zero bytes, 0xFF bytes and their lengths, and empty values among them.
  for (int i = 0; i < 30000; ++i) {
    std::string v(static_cast<std::size_t>(rng() % 12), '\0');
    for (auto& ch : v) ch = rng() % 2 == 0 ? '\0' : '\xff';
    bytes.push_back(v);
  }
  cases.push_back({"0x00 and 0xFF bytes", bytes});
  for (int i = 0; i < 60000; ++i) few.push_back(i % 5 == 0 ? std::string() : std::string("k").append(std::to_string(rng() % 300)));
  cases.push_back({"few values and empty ones", few});
  std::string one(20u << 20, 'a');
  for (std::size_t i = 0; i < one.size(); i += 5) one[i] = static_cast<char>(rng());
  cases.push_back({"one long string", {one}});
  cases.push_back({"one long string twice", {one, "x", one}});
  for (auto const& [what, values] : cases) {
    SCOPED_TRACE(what);
    auto const c = zs::column::from_strings(values);
    expect_gpu_as_cpu(c, 1, false, stream.get(), fsst_dict());
    expect_gpu_as_cpu(c, 7, true, stream.get(), fsst_dict());
  }
  // More frames than rows: empty frames among the others.
  expect_gpu_as_cpu(zs::column::from_strings(std::vector<std::string>{"a", "b", "a"}), 8, false, stream.get(),
                    fsst_dict());
}

// --- fsst_dict decoding ----------------------------------------------------------------------
//
// The GPU decoder's steps are fsst_dict_format.hpp's functions run by kernels; the first tests
// run the same functions on the CPU (they need no GPU), in the order the kernels do, and compare
// with the CPU reference: the index math of the recast dictionaries, the codes' places and the
// gathered windows is checked on every machine. The GPU tests then compare the kernels with the
// CPU reference on the same inputs.

namespace {

namespace dict = zs::fsst_dict;

const zs::codec& packer() { return zs::get_codec(zs::codec_id::bitpack_for); }

zs::column strings_column(const std::vector<std::string>& values) { return zs::column::from_strings(values); }

// The columns the decoder is tested on: low cardinality, empty, all empty strings, one value,
// zero and 0xFF bytes, invalid UTF-8, long strings repeated among short ones.
std::vector<std::pair<std::string, zs::column>> decode_cases() {
  std::mt19937_64 rng(23);
  std::vector<std::pair<std::string, zs::column>> cases;
  cases.emplace_back("empty column", strings_column({}));
  cases.emplace_back("all empty strings", strings_column(std::vector<std::string>(5000, "")));
  cases.emplace_back("one value repeated", strings_column(std::vector<std::string>(7000, "one value, every row")));
  std::vector<std::string> bytes, invalid, low, long_rows;
  for (int i = 0; i < 9000; ++i) {
    std::string v(static_cast<std::size_t>(rng() % 9), '\0');
    for (auto& ch : v) ch = rng() % 2 == 0 ? '\0' : '\xff';
    bytes.push_back(v);
  }
  cases.emplace_back("0x00 and 0xFF bytes", strings_column(bytes));
  // Lone continuation bytes, truncated sequences, overlong forms and surrogates.
  std::vector<std::string> const broken = {"\x80", "\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "ok\xfe\xff", "\xf8\x88\x80\x80\x80"};
  for (int i = 0; i < 8000; ++i) invalid.push_back(broken[rng() % broken.size()] + std::to_string(rng() % 40));
  cases.emplace_back("invalid UTF-8", strings_column(invalid));
  for (int i = 0; i < 20000; ++i) low.push_back(i % 7 == 0 ? std::string() : "name " + std::to_string(rng() % 150) + " <x@y.org>");
  cases.emplace_back("low cardinality with empty rows", strings_column(low));
  std::string one_mb(1u << 20, 'q');
  for (std::size_t i = 0; i < one_mb.size(); i += 3) one_mb[i] = static_cast<char>(rng());
  for (int i = 0; i < 24; ++i) long_rows.push_back(i % 3 == 1 ? std::string("short") : one_mb);
  cases.emplace_back("a 1 MB string repeated", strings_column(long_rows));
  return cases;
}

// The frames of `e` with frame f's bytes replaced by `bytes` (each frame at a frame_alignment
// multiple, its room its bytes rounded up).
frames_of with_frame(const frames_of& e, std::size_t f, const std::vector<std::byte>& bytes) {
  frames_of r;
  r.params = e.params;
  r.offsets.push_back(0);
  for (std::size_t k = 0; k + 1 < e.offsets.size(); ++k) {
    const std::byte* from = k == f ? bytes.data() : e.frames.data() + e.offsets[k];
    std::uint64_t const size = k == f ? bytes.size() : e.sizes[k];
    r.frames.resize(r.offsets.back() + zs::align_frame(size), std::byte{0});
    if (size != 0) std::memcpy(r.frames.data() + r.offsets.back(), from, size);
    r.offsets.push_back(r.frames.size());
    r.sizes.push_back(size);
  }
  return r;
}

// Frame f with its codes changed by `change` and packed again, checksums valid: the frame an
// encoder would write for rows with those codes, whatever they are.
template <typename Change>
frames_of with_codes(const frames_of& e, std::size_t f, Change change) {
  const std::byte* frame = e.frames.data() + e.offsets[f];
  zs::frame_header h = zs::load_header(frame);
  const std::byte* body = frame + zs::frame_header_bytes + dict::body_at;
  std::uint64_t const codes_bytes = zs::detail::load_le(body, 8);
  std::uint64_t const section_at = zs::align_frame(dict::dict_header_bytes + codes_bytes);
  std::uint64_t const section_bytes = h.payload_bytes - dict::body_at - section_at;
  std::vector<std::uint64_t> codes(h.value_count + 1);
  zs::decode_target const unpacked{zs::value_type::uint64, h.value_count, codes.data()};
  std::uint64_t const room[2] = {0, codes_bytes};
  zs::frame_status status = zs::frame_status::not_decoded;
  packer().decode_host({body + dict::dict_header_bytes, room, std::span(&unpacked, 1), &status, true});
  EXPECT_EQ(status, zs::frame_status::ok);
  codes.resize(h.value_count);
  change(codes);
  zs::encode_source const source{zs::value_type::uint64, h.value_count, codes.data()};
  std::uint64_t const most = packer().max_frame_bytes(source);
  std::vector<std::byte> packed(most);
  std::uint64_t const packed_room[2] = {0, most};
  std::uint64_t packed_bytes = 0;
  packer().encode_host({std::span(&source, 1), packed.data(), packed_room, &packed_bytes, true});
  std::uint64_t const new_section_at = zs::align_frame(dict::dict_header_bytes + packed_bytes);
  std::uint64_t const body_bytes = new_section_at + section_bytes;
  std::vector<std::byte> out(zs::frame_header_bytes + dict::body_at + body_bytes, std::byte{0});
  std::memcpy(out.data(), frame, zs::frame_header_bytes + dict::body_at);
  std::byte* new_body = out.data() + zs::frame_header_bytes + dict::body_at;
  std::memcpy(new_body, body, dict::dict_header_bytes);
  zs::detail::store_le(new_body, packed_bytes, 8);
  std::memcpy(new_body + dict::dict_header_bytes, packed.data(), packed_bytes);
  std::memcpy(new_body + new_section_at, body + section_at, section_bytes);
  h.payload_bytes = dict::body_at + body_bytes;
  zs::store_params_prefix(out.data() + zs::frame_header_bytes, zs::fsst::table_bytes, body_bytes);
  h.payload_checksum = zs::hash::checksum(out.data() + zs::frame_header_bytes, h.payload_bytes);
  zs::store_header(h, out.data());
  return with_frame(e, f, out);
}

// Frame f edited in place by `change(header, payload)`, its checksums made valid again.
template <typename Change>
void edit_frame(frames_of& e, std::size_t f, Change change) {
  std::byte* frame = e.frames.data() + e.offsets[f];
  zs::frame_header h = zs::load_header(frame);
  change(h, frame + zs::frame_header_bytes);
  h.payload_checksum = zs::hash::checksum(frame + zs::frame_header_bytes, h.payload_bytes);
  zs::store_header(h, frame);
}

// Frames of a low-cardinality column, each broken in its own way (frames 0 and last intact):
// what the decoders must refuse, with the CPU reference's statuses.
struct broken_batch {
  zs::column column;
  std::size_t parts;
  frames_of frames;
};

broken_batch broken_frames() {
  std::vector<std::string> values;
  for (int i = 0; i < 12000; ++i) values.push_back("maintainer " + std::to_string((i * 37) % 211) + " <m@example.org>");
  broken_batch b{strings_column(values), 12, {}};
  frames_of e = encode_on_cpu(b.column, b.parts, false, fsst_dict());
  std::uint64_t const body = dict::body_at;
  // 1: a code past the dictionary (d, the first value not an entry).
  e = with_codes(e, 1, [&](std::vector<std::uint64_t>& codes) {
    std::uint64_t const d = *std::max_element(codes.begin(), codes.end()) + 1;
    codes[codes.size() / 2] = d;
  });
  // 2: the codes frame claims a byte more than Lc.
  edit_frame(e, 2, [&](zs::frame_header&, std::byte* payload) {
    std::byte* codes = payload + body + dict::dict_header_bytes;
    zs::frame_header inner = zs::load_header(codes);
    inner.payload_bytes += 1;
    zs::store_header(inner, codes);
  });
  // 3: a nonzero word at body offset 24.
  edit_frame(e, 3, [&](zs::frame_header&, std::byte* payload) { payload[body + 24] = std::byte{1}; });
  // 4: Lc past the body.
  edit_frame(e, 4, [&](zs::frame_header& h, std::byte* payload) {
    zs::detail::store_le(payload + body, h.payload_bytes, 8);
  });
  // 5: one entry fewer in the header than in the dictionary section.
  edit_frame(e, 5, [&](zs::frame_header& h, std::byte*) {
    zs::detail::store_le(h.params.data() + 8, zs::detail::load_le(h.params.data() + 8, 8) - 1, 8);
  });
  // 6: the dictionary's last split offset one past its data.
  edit_frame(e, 6, [&](zs::frame_header&, std::byte* payload) {
    std::byte* b = payload + body;
    std::uint64_t const section_at = zs::align_frame(dict::dict_header_bytes + zs::detail::load_le(b, 8));
    std::uint64_t const lengths = zs::detail::load_le(b + 16, 8);
    std::uint64_t const splits = zs::fsst::split_count(zs::detail::load_le(b + 8, 8), zs::fsst::default_split_bytes);
    std::byte* last = b + section_at + zs::align_frame(lengths) + 8 * splits;
    zs::detail::store_le(last, zs::detail::load_le(last, 8) + 1, 8);
  });
  // 7: the dictionary's characters one more than its entries hold.
  edit_frame(e, 7, [&](zs::frame_header&, std::byte* payload) {
    std::byte* b = payload + body;
    zs::detail::store_le(b + 8, zs::detail::load_le(b + 8, 8) + 1, 8);
  });
  // 8: a damaged header (its checksum no longer matches).
  e.frames[e.offsets[8] + 9] ^= std::byte{0x40};
  // 9: a payload byte changed behind the checksum.
  e.frames[e.offsets[9] + zs::frame_header_bytes + body + 40] ^= std::byte{0x01};
  // 10: truncated: the frame's room ends before its payload does.
  std::vector<std::byte> cut(e.frames.begin() + static_cast<std::ptrdiff_t>(e.offsets[10]),
                             e.frames.begin() + static_cast<std::ptrdiff_t>(e.offsets[10] + e.sizes[10] / 2));
  b.frames = with_frame(e, 10, cut);
  return b;
}

// The statuses and column of the CPU reference's decode of `e` (characters start as 0x5A).
std::pair<std::vector<zs::frame_status>, zs::column> decode_on_cpu(const frames_of& e, const zs::column& c,
                                                                   std::size_t parts,
                                                                   const zs::codec& codec = fsst_dict()) {
  zs::column out = zs::test::empty_like(c, zs::memory_kind::host);
  auto mv = out.mutable_view();
  if (c.data_bytes() != 0) std::memset(mv.data, 0x5A, c.data_bytes());
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), mv);
  std::vector<zs::frame_status> statuses(parts, zs::frame_status::not_decoded);
  codec.decode_host({e.frames.data(), e.offsets, targets, statuses.data()});
  return {std::move(statuses), std::move(out)};
}

// One frame decoded by the GPU decoder's steps, run on the CPU: the framework's checks,
// read_body, the dictionary recast as an fsst frame and decoded by the fsst codec, the codes
// unpacked from their place, every code checked, the rows' offsets, then every gather unit.
zs::frame_status decode_frame_as_the_gpu(const frames_of& e, std::size_t f, const zs::decode_target& t) {
  const std::byte* frame = e.frames.data() + e.offsets[f];
  std::uint64_t const room = e.offsets[f + 1] - e.offsets[f];
  zs::frame_expectation const expected{fsst_dict().decodes(), zs::value_type::string, t.count, t.chars_bytes,
                                       fsst_dict().params_bytes(zs::value_type::string)};
  zs::frame_status const checked = zs::validate_frame_host(frame, room, expected);
  if (checked != zs::frame_status::ok) return checked;
  dict::dictionary_section s{};
  if (!dict::read_body(frame, s)) return zs::frame_status::corrupt_payload;
  EXPECT_EQ(s.ok, 1U);

  std::vector<std::byte> recast(dict::dictionary_frame_bytes(s.section_bytes), std::byte{0});
  dict::store_dictionary_frame_header(recast.data(), s);
  std::uint64_t const table_at = zs::frame_header_bytes + zs::params_prefix_bytes;
  std::memcpy(recast.data() + table_at, frame + table_at, zs::fsst::table_bytes);
  std::memcpy(recast.data() + zs::frame_header_bytes + dict::body_at, frame + s.section_at, s.section_bytes);
  std::vector<std::int64_t> entry_offsets(s.entries + 1);
  std::vector<std::uint8_t> entry_chars(std::max<std::uint64_t>(s.chars, 1));
  zs::decode_target const entries{zs::value_type::string, s.entries, entry_chars.data(), entry_offsets.data(), 0, s.chars};
  std::uint64_t const recast_offsets[2] = {0, recast.size()};
  zs::frame_status dict_status = zs::frame_status::not_decoded;
  fsst().decode_host({recast.data(), recast_offsets, std::span(&entries, 1), &dict_status, true});

  std::vector<std::uint64_t> codes(t.count + 1);
  zs::decode_target const unpacked{zs::value_type::uint64, t.count, codes.data()};
  std::uint64_t const codes_room[2] = {0, room - dict::codes_frame_at};
  zs::frame_status codes_status = zs::frame_status::not_decoded;
  packer().decode_host({frame + dict::codes_frame_at, codes_room, std::span(&unpacked, 1), &codes_status, true});
  if (dict_status != zs::frame_status::ok || codes_status != zs::frame_status::ok ||
      (t.count == 0 && t.chars_bytes != 0)) {
    return zs::frame_status::corrupt_payload;
  }

  std::vector<std::uint64_t> prefix(t.count + 1, 0);
  for (std::uint64_t r = 0; r < t.count; ++r) {
    if (codes[r] >= s.entries) return zs::frame_status::corrupt_payload;
    auto const length = static_cast<std::uint64_t>(entry_offsets[codes[r] + 1] - entry_offsets[codes[r]]);
    prefix[r + 1] = prefix[r] + length;
    if (prefix[r + 1] < prefix[r]) return zs::frame_status::corrupt_payload;
  }
  if (prefix[t.count] != t.chars_bytes) return zs::frame_status::corrupt_payload;
  for (std::uint64_t r = 0; r <= t.count; ++r) t.offsets[r] = static_cast<std::int64_t>(t.chars_begin + prefix[r]);
  auto* out = static_cast<std::uint8_t*>(t.values) + t.chars_begin;
  dict::gather_rows const rows{prefix.data(), codes.data(), entry_offsets.data(), entry_chars.data(), t.count, t.chars_bytes};
  for (std::uint64_t u = 0; u < dict::gather_units(out, t.chars_bytes); ++u) dict::gather_unit(out, rows, u);
  return zs::frame_status::ok;
}

// decode_frame_as_the_gpu over every frame, into a column shaped like `c` (characters at 0x5A).
std::pair<std::vector<zs::frame_status>, zs::column> decode_as_the_gpu_on_cpu(const frames_of& e, const zs::column& c,
                                                                              std::size_t parts) {
  zs::column out = zs::test::empty_like(c, zs::memory_kind::host);
  auto mv = out.mutable_view();
  if (c.data_bytes() != 0) std::memset(mv.data, 0x5A, c.data_bytes());
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), parts), mv);
  std::vector<zs::frame_status> statuses;
  for (std::size_t f = 0; f < parts; ++f) statuses.push_back(decode_frame_as_the_gpu(e, f, targets[f]));
  return {std::move(statuses), std::move(out)};
}

}  // namespace

// The gather's windows on the CPU: every start skew of the target, rows short and long, empty
// rows between them, whole and partial windows; the bytes and only they are written.
TEST(FsstDictDecodeSteps, GatherWritesEveryRowAndNothingElse) {
  std::vector<std::string> entries = {"", "a", "bc", std::string(200, 'L'), "0123456789abcdef", std::string(63, 'x'), "\xff"};
  std::vector<std::int64_t> entry_offsets = {0};
  std::string entry_chars;
  for (auto const& v : entries) {
    entry_chars += v;
    entry_offsets.push_back(static_cast<std::int64_t>(entry_chars.size()));
  }
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::uint64_t const rows = 1 + rng() % 40;
    std::vector<std::uint64_t> codes(rows), prefix(rows + 1, 0);
    std::string expected;
    for (std::uint64_t r = 0; r < rows; ++r) {
      codes[r] = rng() % entries.size();
      expected += entries[codes[r]];
      prefix[r + 1] = expected.size();
    }
    std::uint64_t const skew = rng() % 64, chars = expected.size();
    std::vector<std::uint8_t> buffer(chars + 256, 0xA5);
    // A target that starts `skew` bytes past a 64-byte boundary.
    std::uint8_t* base = buffer.data() + (64 - reinterpret_cast<std::uintptr_t>(buffer.data()) % 64) % 64 + 64;
    std::uint8_t* out = base + skew;
    dict::gather_rows const g{prefix.data(), codes.data(), entry_offsets.data(),
                              reinterpret_cast<const std::uint8_t*>(entry_chars.data()), rows, chars};
    std::uint64_t const units = dict::gather_units(out, chars);
    EXPECT_EQ(units, chars == 0 ? 0 : (skew + chars + 63) / 64);
    for (std::uint64_t u = 0; u < units; ++u) dict::gather_unit(out, g, u);
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(out), chars), expected) << "trial " << trial;
    for (std::uint8_t* p = buffer.data(); p < out; ++p) ASSERT_EQ(*p, 0xA5) << "before the target";
    for (std::uint8_t* p = out + chars; p < buffer.data() + buffer.size(); ++p) ASSERT_EQ(*p, 0xA5) << "after it";
  }
}

// The decoder's steps on the CPU give the CPU reference's strings on real and adversarial columns,
// in one frame and in many (empty frames among them).
TEST(FsstDictDecodeSteps, DecodeRealAndAdversarialColumnsAsTheReference) {
  auto cases = decode_cases();
  cases.emplace_back("deb_maintainers.txt", zs::test::data_column("deb_maintainers.txt"));
  for (auto const& [what, c] : cases) {
    SCOPED_TRACE(what);
    for (std::size_t parts : {std::size_t{1}, std::size_t{7}, std::size_t{40}}) {
      auto const e = encode_on_cpu(c, parts, false, fsst_dict());
      auto const [statuses, out] = decode_as_the_gpu_on_cpu(e, c, parts);
      for (auto s : statuses) ASSERT_EQ(s, zs::frame_status::ok);
      zs::test::expect_same_column(out, c);
    }
  }
}

// Broken frames: the decoder's steps on the CPU refuse each with the reference's status, and
// decode the intact ones.
TEST(FsstDictDecodeSteps, RefuseBrokenFramesAsTheReference) {
  auto const b = broken_frames();
  auto const [expected, reference] = decode_on_cpu(b.frames, b.column, b.parts);
  EXPECT_EQ(expected[0], zs::frame_status::ok);
  for (std::size_t f = 1; f <= 7; ++f) EXPECT_EQ(expected[f], zs::frame_status::corrupt_payload) << "frame " << f;
  EXPECT_EQ(expected[8], zs::frame_status::bad_header_checksum);
  EXPECT_EQ(expected[9], zs::frame_status::bad_payload_checksum);
  EXPECT_EQ(expected[10], zs::frame_status::truncated);
  EXPECT_EQ(expected[11], zs::frame_status::ok);
  auto const [statuses, out] = decode_as_the_gpu_on_cpu(b.frames, b.column, b.parts);
  EXPECT_EQ(statuses, expected);
  auto const sources = partition_sources(b.column.view(), b.column.view(), b.parts);
  for (std::size_t f : {std::size_t{0}, b.parts - 1}) {
    auto const begin = static_cast<std::uint64_t>(sources[f].offsets[0]);
    EXPECT_EQ(std::memcmp(static_cast<const std::byte*>(out.view().data) + begin,
                          static_cast<const std::byte*>(b.column.view().data) + begin, sources[f].chars_bytes),
              0)
        << "frame " << f;
  }
}

// The GPU decoder against the CPU reference: the same strings on real and adversarial columns, in
// one frame, in several, and in many frames per batch.
TEST(FsstDictGpu, DecodesRealAndAdversarialColumnsAsTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto cases = decode_cases();
  cases.emplace_back("deb_maintainers.txt", zs::test::data_column("deb_maintainers.txt"));
  cases.emplace_back("deb_paths.txt", zs::test::data_column("deb_paths.txt"));
  for (auto const& [what, c] : cases) {
    SCOPED_TRACE(what);
    for (std::size_t parts : {std::size_t{1}, std::size_t{7}, std::size_t{500}}) {
      SCOPED_TRACE(parts);
      auto const e = encode_on_cpu(c, parts, parts == 7, fsst_dict());
      auto const [expected, reference] = decode_on_cpu(e, c, parts);
      for (auto s : expected) ASSERT_EQ(s, zs::frame_status::ok);
      auto const [statuses, out] = decode_on_gpu(e, c, parts, stream.get(), fsst_dict());
      EXPECT_EQ(statuses, expected);
      zs::test::expect_same_column(out, reference);
      zs::test::expect_same_column(out, c);
    }
  }
}

// Frames the GPU encoded decode on the GPU to the original strings (both directions of the
// cross decoding are in the conformance suite; this one runs many frames per batch).
TEST(FsstDictGpu, GpuFramesDecodeOnTheGpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = zs::test::data_column("deb_maintainers.txt");
  for (std::size_t parts : {std::size_t{3}, std::size_t{333}}) {
    auto const e = encode_on_gpu(c, parts, false, stream.get(), fsst_dict());
    auto const [statuses, out] = decode_on_gpu(e, c, parts, stream.get(), fsst_dict());
    for (auto s : statuses) ASSERT_EQ(s, zs::frame_status::ok);
    EXPECT_EQ(out.strings(), c.strings());
  }
}

// Broken frames on the GPU: the CPU reference's statuses, and the intact frames decoded.
TEST(FsstDictGpu, RefusesBrokenFramesAsTheCpu) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const b = broken_frames();
  auto const [expected, reference] = decode_on_cpu(b.frames, b.column, b.parts);
  auto const [statuses, out] = decode_on_gpu(b.frames, b.column, b.parts, stream.get(), fsst_dict());
  EXPECT_EQ(statuses, expected);
  auto const sources = partition_sources(b.column.view(), b.column.view(), b.parts);
  for (std::size_t f = 0; f < b.parts; ++f) {
    if (expected[f] != zs::frame_status::ok) continue;
    auto const begin = static_cast<std::uint64_t>(sources[f].offsets[0]);
    EXPECT_EQ(std::memcmp(static_cast<const std::byte*>(out.view().data) + begin,
                          static_cast<const std::byte*>(b.column.view().data) + begin, sources[f].chars_bytes),
              0)
        << "frame " << f;
  }
}

// --- fsst split offsets ----------------------------------------------------------------------
//
// The GPU decoder checks a frame's split offsets in two places: their ends (0 and D) once per
// frame, and each split's own offsets (split_in_section) by the warp that checks its codes, all
// splits of a frame at once. So no warp may count on another split's offsets: a middle offset
// past the data section, or offsets out of order, must be caught by the warp of every split they
// bound, before it reads. The frames below break the offsets behind valid checksums; the
// decoder's checks run on the CPU (the format functions the kernels call, in the kernels' order)
// and on the GPU, against the CPU reference.

namespace {

namespace fsst_format = zs::fsst;

// Where a frame's strings section lies, as the decoder finds it from the header.
struct section_view {
  std::byte* body;
  fsst_format::body_layout layout;
};

section_view section_of(std::byte* frame) {
  zs::frame_header const h = zs::load_header(frame);
  std::uint64_t const body_at = zs::params_section_bytes(fsst_format::table_bytes);
  section_view v{frame + zs::frame_header_bytes + body_at, {}};
  EXPECT_TRUE(fsst_format::read_layout(h, h.payload_bytes - body_at, v.layout));
  return v;
}

std::uint64_t split_offset(const section_view& v, std::uint64_t i) {
  return zs::detail::load_le(v.body + v.layout.offsets_at + 8 * i, 8);
}
void set_split_offset(const section_view& v, std::uint64_t i, std::uint64_t offset) {
  zs::detail::store_le(v.body + v.layout.offsets_at + 8 * i, offset, 8);
}

// Rows of one frame: 16384 random characters first (split 0, which no table shortens, so stored
// raw), then repetitive text over four more splits (stored as codes).
constexpr std::size_t offset_frames = 6;  // frames 0 and 5 intact
constexpr int random_rows = 64, random_row_bytes = 256, text_rows = 2000;

zs::column offset_test_column() {
  std::mt19937_64 rng(31);
  std::vector<std::string> values;
  for (std::size_t f = 0; f < offset_frames; ++f) {
    for (int i = 0; i < random_rows; ++i) {
      std::string v(random_row_bytes, '\0');
      for (auto& ch : v) ch = static_cast<char>(rng());
      values.push_back(v);
    }
    for (int i = 0; i < text_rows; ++i) values.push_back("row " + std::to_string(i % 97) + " of a repetitive column");
  }
  return strings_column(values);
}

// What each broken frame is, by frame number.
const char* const offset_breaks[offset_frames] = {
    "intact",
    "the offset before the last split a little past the data section",
    "two middle offsets far past the data section (2^40 on)",
    "two middle offsets swapped (descending)",
    "the raw split 0 one byte longer than its characters",
    "intact"};

// The column's frames, frames 1 to 4 broken (offset_breaks), checksums valid.
frames_of offset_broken_frames(const zs::column& c) {
  frames_of e = encode_on_cpu(c, offset_frames, false, fsst());
  {
    section_view const v = section_of(e.frames.data() + e.offsets[0]);
    EXPECT_EQ(v.layout.splits, 5U);
    EXPECT_EQ(split_offset(v, 1), fsst_format::default_split_bytes) << "split 0 stored raw";
    EXPECT_LT(split_offset(v, 2) - split_offset(v, 1), fsst_format::default_split_bytes) << "split 1 stored as codes";
  }
  auto break_offsets = [&](std::size_t f, auto change) {
    edit_frame(e, f, [&](zs::frame_header&, std::byte* payload) { change(section_of(payload - zs::frame_header_bytes)); });
  };
  break_offsets(1, [](const section_view& v) {
    std::uint64_t const k = v.layout.splits;
    set_split_offset(v, k - 1, v.layout.data_bytes + 64);
  });
  break_offsets(2, [](const section_view& v) {
    set_split_offset(v, 2, std::uint64_t{1} << 40);
    set_split_offset(v, 3, (std::uint64_t{1} << 40) + 100);
  });
  break_offsets(3, [](const section_view& v) {
    std::uint64_t const second = split_offset(v, 2), third = split_offset(v, 3);
    set_split_offset(v, 2, third);
    set_split_offset(v, 3, second);
  });
  break_offsets(4, [](const section_view& v) { set_split_offset(v, 1, split_offset(v, 1) + 1); });
  return e;
}

// The fsst GPU decoder's checks on one frame, run on the CPU in the kernels' order: the
// framework's, decode_check_frames (table, layout, the lengths frame's place, the offsets'
// ends), the lengths frame, each split's offsets then codes (split_in_section, then the codes
// only where it holds), the lengths' sum. The frame is copied into a buffer of exactly its
// bytes, so that a sanitizer build catches any read past it.
zs::frame_status check_as_the_gpu(const frames_of& e, std::size_t f, const zs::decode_target& t) {
  std::vector<std::byte> const frame(e.frames.begin() + static_cast<std::ptrdiff_t>(e.offsets[f]),
                                     e.frames.begin() + static_cast<std::ptrdiff_t>(e.offsets[f] + e.sizes[f]));
  zs::frame_expectation const expected{fsst().decodes(), zs::value_type::string, t.count, t.chars_bytes,
                                       fsst().params_bytes(zs::value_type::string)};
  zs::frame_status const checked = zs::validate_frame_host(frame.data(), frame.size(), expected);
  if (checked != zs::frame_status::ok) return checked;
  zs::frame_header const h = zs::load_header(frame.data());
  std::uint64_t const body_at = zs::params_section_bytes(fsst_format::table_bytes);
  const std::byte* body = frame.data() + zs::frame_header_bytes + body_at;
  auto table = std::make_unique<fsst_format::decode_table>();
  fsst_format::body_layout l{};
  if (!fsst_format::load_decode_table(frame.data() + zs::frame_header_bytes + zs::params_prefix_bytes, *table) ||
      !fsst_format::read_layout(h, h.payload_bytes - body_at, l) ||
      l.splits != fsst_format::split_count(t.chars_bytes, fsst_format::default_split_bytes) ||
      zs::load_header(body).payload_bytes != l.lengths_bytes - zs::frame_header_bytes ||
      !fsst_format::check_split_offset_ends(body, l)) {
    return zs::frame_status::corrupt_payload;
  }
  std::vector<std::uint64_t> lengths(t.count + 1);
  zs::decode_target const unpacked{zs::value_type::uint64, t.count, lengths.data()};
  std::uint64_t const room[2] = {0, l.lengths_bytes};
  zs::frame_status lengths_status = zs::frame_status::not_decoded;
  packer().decode_host({body, room, std::span(&unpacked, 1), &lengths_status, true});
  if (lengths_status != zs::frame_status::ok) return zs::frame_status::corrupt_payload;
  auto const* data = reinterpret_cast<const std::uint8_t*>(body + l.data_at);
  bool splits_ok = true;
  for (std::uint64_t i = 0; i < l.splits; ++i) {
    std::uint64_t const begin = zs::detail::load_le(body + l.offsets_at + 8 * i, 8);
    std::uint64_t const end = zs::detail::load_le(body + l.offsets_at + 8 * (i + 1), 8);
    std::uint64_t const n = fsst_format::split_chars(t.chars_bytes, fsst_format::default_split_bytes, i);
    // Every split is checked, as the warps do, whatever the others' verdicts.
    if (!fsst_format::split_in_section(begin, end, l.data_bytes, n) ||
        !fsst_format::check_split(*table, data + begin, end - begin, n)) {
      splits_ok = false;
    }
  }
  if (!splits_ok) return zs::frame_status::corrupt_payload;
  std::uint64_t sum = 0;
  for (std::uint64_t r = 0; r < t.count; ++r) {
    if (sum + lengths[r] < sum) return zs::frame_status::corrupt_payload;
    sum += lengths[r];
  }
  return sum == t.chars_bytes ? zs::frame_status::ok : zs::frame_status::corrupt_payload;
}

}  // namespace

// The per-split rule at its edges, sizes near 2^64 included: nothing wraps.
TEST(FsstDecodeChecks, SplitInSectionAtItsEdges) {
  using fsst_format::split_in_section;
  constexpr std::uint64_t top = UINT64_MAX;
  EXPECT_TRUE(split_in_section(0, 100, 100, 100));    // the whole section, raw
  EXPECT_TRUE(split_in_section(40, 100, 100, 61));    // codes, ending at D
  EXPECT_TRUE(split_in_section(100, 100, 100, 5));    // empty at D (its codes then fail)
  EXPECT_FALSE(split_in_section(40, 101, 100, 100));  // one byte past D
  EXPECT_FALSE(split_in_section(101, 101, 100, 5));   // starts past D
  EXPECT_FALSE(split_in_section(60, 40, 100, 100));   // descending
  EXPECT_FALSE(split_in_section(0, 101, 200, 100));   // one byte more than its characters
  EXPECT_FALSE(split_in_section(top - 10, top, 100, 16384));
  EXPECT_FALSE(split_in_section(top, 5, top, 16384));
  EXPECT_FALSE(split_in_section(0, top, top, 16384));
}

// The broken frames really reach the gap: in frames 1 and 2 a split whose offsets are in order
// and no larger than its characters ends past the data section, so only the check of its end
// against D keeps its warp from reading there; in frame 4 split 0 is raw and one byte too long.
TEST(FsstDecodeChecks, BrokenOffsetFramesHaveSplitsThatOnlyTheSectionCheckRefuses) {
  auto const c = offset_test_column();
  frames_of e = offset_broken_frames(c);
  for (std::size_t f : {std::size_t{1}, std::size_t{2}}) {
    SCOPED_TRACE(offset_breaks[f]);
    section_view const v = section_of(e.frames.data() + e.offsets[f]);
    bool reaches_past = false;
    for (std::uint64_t i = 0; i < v.layout.splits; ++i) {
      std::uint64_t const begin = split_offset(v, i), end = split_offset(v, i + 1);
      std::uint64_t const n = fsst_format::split_chars(c.data_bytes() / offset_frames, v.layout.split_bytes, i);
      if (begin <= end && end - begin <= n && end > v.layout.data_bytes) {
        reaches_past = true;
        EXPECT_FALSE(fsst_format::split_in_section(begin, end, v.layout.data_bytes, n));
      }
    }
    EXPECT_TRUE(reaches_past);
    EXPECT_TRUE(fsst_format::check_split_offset_ends(v.body, v.layout)) << "the ends alone do not catch it";
  }
  section_view const raw = section_of(e.frames.data() + e.offsets[4]);
  EXPECT_EQ(split_offset(raw, 1), fsst_format::default_split_bytes + 1);
  EXPECT_FALSE(fsst_format::split_in_section(0, split_offset(raw, 1), raw.layout.data_bytes,
                                             fsst_format::default_split_bytes));
}

// The GPU decoder's checks, run on the CPU, give the reference's statuses: frames 1 to 4
// corrupt_payload, 0 and 5 ok.
TEST(FsstDecodeChecks, BrokenSplitOffsetsRefusedAsTheReference) {
  auto const c = offset_test_column();
  auto const e = offset_broken_frames(c);
  auto const [expected, reference] = decode_on_cpu(e, c, offset_frames, fsst());
  for (std::size_t f = 0; f < offset_frames; ++f) {
    SCOPED_TRACE(offset_breaks[f]);
    bool const intact = f == 0 || f + 1 == offset_frames;
    EXPECT_EQ(expected[f], intact ? zs::frame_status::ok : zs::frame_status::corrupt_payload);
  }
  zs::column out = zs::test::empty_like(c, zs::memory_kind::host);
  auto const targets = partition_targets(partition_sources(c.view(), c.view(), offset_frames), out.mutable_view());
  for (std::size_t f = 0; f < offset_frames; ++f) {
    EXPECT_EQ(check_as_the_gpu(e, f, targets[f]), expected[f]) << offset_breaks[f];
  }
}

// On the GPU: the reference's statuses and the intact frames decoded, next to the broken ones.
// The GPU decoder checks each split as it decodes it, so a broken frame's target holds
// unspecified bytes (zs/codec.hpp); its warps write only inside it, which the intact frames'
// characters show at frame 4's edge. Without the per-split section check, frame 2's warp would
// read 2^40 bytes past its data (an illegal address) and frame 1's past its frame; run under
// compute-sanitizer to see that no byte outside the frames is read.
TEST(FsstGpu, BrokenSplitOffsetsRefusedAsTheCpuWithoutWritingOrReadingOutside) {
  ZS_REQUIRE_GPU();
  zs::cuda_stream stream;
  auto const c = offset_test_column();
  auto const e = offset_broken_frames(c);
  auto const [expected, reference] = decode_on_cpu(e, c, offset_frames, fsst());
  auto const [statuses, out] = decode_on_gpu(e, c, offset_frames, stream.get());
  EXPECT_EQ(statuses, expected);
  auto const sources = partition_sources(c.view(), c.view(), offset_frames);
  auto const* chars = static_cast<const std::uint8_t*>(out.view().data);
  auto const* original = static_cast<const std::uint8_t*>(c.view().data);
  for (std::size_t f : {std::size_t{0}, offset_frames - 1}) {
    auto const begin = static_cast<std::uint64_t>(sources[f].offsets[0]);
    for (std::uint64_t k = 0; k < sources[f].chars_bytes; ++k) {
      ASSERT_EQ(chars[begin + k], original[begin + k]) << "frame " << f << ", character " << k;
    }
  }
}
