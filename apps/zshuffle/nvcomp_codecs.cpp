// The nvcomp:NAME codecs (nvcomp_codecs.hpp): one codec class over nVIDIA nvCOMP's batched
// low-level C API, and one small adapter per nvCOMP algorithm (its options and functions).
#include "nvcomp_codecs.hpp"

#include <nvcomp.h>
#include <nvcomp/ans.h>
#include <nvcomp/bitcomp.h>
#include <nvcomp/cascaded.h>
#include <nvcomp/lz4.h>
#include <nvcomp/zstd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nvcomp_format.hpp"
#include "nvcomp_kernels.hpp"
#include "temp_layout.hpp"
#include "zs/error.hpp"

namespace zs::nvcomp {
namespace {

std::string_view status_name(nvcompStatus_t status) noexcept {
  switch (status) {
    case nvcompSuccess: return "nvcompSuccess";
    case nvcompErrorInvalidValue: return "nvcompErrorInvalidValue";
    case nvcompErrorNotSupported: return "nvcompErrorNotSupported";
    case nvcompErrorCannotDecompress: return "nvcompErrorCannotDecompress";
    case nvcompErrorBadChecksum: return "nvcompErrorBadChecksum";
    case nvcompErrorCannotVerifyChecksums: return "nvcompErrorCannotVerifyChecksums";
    case nvcompErrorOutputBufferTooSmall: return "nvcompErrorOutputBufferTooSmall";
    case nvcompErrorWrongHeaderLength: return "nvcompErrorWrongHeaderLength";
    case nvcompErrorAlignment: return "nvcompErrorAlignment";
    case nvcompErrorChunkSizeTooLarge: return "nvcompErrorChunkSizeTooLarge";
    case nvcompErrorCannotCompress: return "nvcompErrorCannotCompress";
    case nvcompErrorWrongInputLength: return "nvcompErrorWrongInputLength";
    case nvcompErrorBatchSizeTooLarge: return "nvcompErrorBatchSizeTooLarge";
    case nvcompErrorSubChunkCountTooLarge: return "nvcompErrorSubChunkCountTooLarge";
    case nvcompErrorSubChunkCountTooSmall: return "nvcompErrorSubChunkCountTooSmall";
    case nvcompErrorOutputBufferAlignmentTooSmall: return "nvcompErrorOutputBufferAlignmentTooSmall";
    case nvcompErrorCudaError: return "nvcompErrorCudaError";
    case nvcompErrorInternal: return "nvcompErrorInternal";
  }
  return "an unknown nvcompStatus_t";
}

[[noreturn]] void throw_nvcomp_error(nvcompStatus_t status, const char* call, const char* file, int line) {
  error_code const code = status == nvcompErrorCudaError      ? error_code::cuda_error
                          : status == nvcompErrorNotSupported ? error_code::unsupported
                                                              : error_code::internal;
  detail::throw_error(code, "nVIDIA nvCOMP call failed with " + std::string(status_name(status)) + " (" +
                                nvcompGetStatusString(status) + "): " + call,
                      file, line);
}

}  // namespace
}  // namespace zs::nvcomp

/// Runs an nvCOMP call; throws zs::error naming its nvcompStatus_t, the call, file and line
/// when it does not return nvcompSuccess.
#define ZS_NVCOMP_TRY(call)                                                                     \
  do {                                                                                          \
    nvcompStatus_t const zs_nvcomp_status_ = (call);                                            \
    if (zs_nvcomp_status_ != nvcompSuccess) {                                                   \
      ::zs::nvcomp::throw_nvcomp_error(zs_nvcomp_status_, #call, __FILE__, __LINE__);           \
    }                                                                                           \
  } while (0)

namespace zs::nvcomp {
namespace {

constexpr std::array<value_type, 10> fixed_width_types{value_type::int8,    value_type::int16,
                                                       value_type::uint8,   value_type::uint16,
                                                       value_type::int32,   value_type::int64,
                                                       value_type::uint32,  value_type::uint64,
                                                       value_type::float32, value_type::float64};

// The integer type of the same width and signedness, the way Cascaded reads values (floats as
// their bit patterns).
nvcompType_t integer_type(value_type type) {
  switch (type) {
    case value_type::int8: return NVCOMP_TYPE_CHAR;
    case value_type::uint8: return NVCOMP_TYPE_UCHAR;
    case value_type::int16: return NVCOMP_TYPE_SHORT;
    case value_type::uint16: return NVCOMP_TYPE_USHORT;
    case value_type::int32: return NVCOMP_TYPE_INT;
    case value_type::uint32:
    case value_type::float32: return NVCOMP_TYPE_UINT;
    case value_type::int64: return NVCOMP_TYPE_LONGLONG;
    default: return NVCOMP_TYPE_ULONGLONG;
  }
}

// --- one adapter per nvCOMP algorithm -------------------------------------------------------------

// What the codec needs of an algorithm. The compression options depend on the frame's value
// type (the data type), so frames compress in groups of one data type; decompression reads the
// type from each chunk and takes every chunk of a batch in one call.
class algorithm {
 public:
  virtual ~algorithm() = default;
  /// Frames whose types have the same key compress in one call (with the options of either).
  virtual int compress_key(value_type type) const = 0;
  virtual nvcompAlignmentRequirements_t compress_alignment(value_type type) const = 0;
  /// The most bytes a chunk of `uncompressed_bytes` compresses to.
  virtual std::size_t max_compressed_chunk(value_type type, std::size_t uncompressed_bytes) const = 0;
  virtual std::size_t compress_temp_bytes(value_type type, std::size_t chunks, std::size_t total_bytes) const = 0;
  virtual void compress(value_type type, const void* const* in, const std::size_t* in_bytes, std::size_t chunks,
                        void* temp, std::size_t temp_bytes, void* const* out, std::size_t* out_bytes,
                        nvcompStatus_t* statuses, cudaStream_t stream) const = 0;
  virtual nvcompAlignmentRequirements_t decompress_alignment() const = 0;
  /// Whether decompression must first read the sizes the chunks announce (announced_sizes) and
  /// refuse chunks that do not announce their expected bytes: for the decompressors that nVIDIA
  /// nvCOMP documents as validating their input only in part, which read past a chunk or its
  /// output on garbage. False where the decompressor checks its bounds itself and a chunk's size
  /// is known only by parsing all of it (LZ4).
  virtual bool checks_sizes_first() const = 0;
  /// The uncompressed bytes each chunk's own header announces (nvCOMP's GetDecompressSize).
  virtual void announced_sizes(const void* const* in, const std::size_t* in_bytes, std::size_t* out_bytes,
                               std::size_t chunks, cudaStream_t stream) const = 0;
  virtual std::size_t decompress_temp_bytes(std::size_t chunks, std::size_t total_bytes) const = 0;
  /// False when nvCOMP refuses the whole batch as undecodable (a damaged chunk), in which case
  /// it may have written neither statuses nor sizes.
  virtual bool decompress(const void* const* in, const std::size_t* in_bytes, const std::size_t* out_buffer_bytes,
                          std::size_t* out_bytes, std::size_t chunks, void* temp, std::size_t temp_bytes,
                          void* const* out, nvcompStatus_t* statuses, cudaStream_t stream) const = 0;
};

// Every nvCOMP algorithm has the same batched functions under its own name; Traits names them
// and builds the options.
template <typename Traits>
class algorithm_of final : public algorithm {
 public:
  int compress_key(value_type type) const override { return Traits::compress_key(type); }
  nvcompAlignmentRequirements_t compress_alignment(value_type type) const override {
    nvcompAlignmentRequirements_t a{};
    ZS_NVCOMP_TRY(Traits::compress_alignments(Traits::compress_opts(type), &a));
    return a;
  }
  std::size_t max_compressed_chunk(value_type type, std::size_t uncompressed_bytes) const override {
    std::size_t bytes = 0;
    ZS_NVCOMP_TRY(Traits::max_output_chunk(uncompressed_bytes, Traits::compress_opts(type), &bytes));
    return bytes;
  }
  std::size_t compress_temp_bytes(value_type type, std::size_t chunks, std::size_t total_bytes) const override {
    std::size_t bytes = 0;
    ZS_NVCOMP_TRY(Traits::compress_temp(chunks, chunk_bytes, Traits::compress_opts(type), &bytes, total_bytes, nullptr));
    return bytes;
  }
  void compress(value_type type, const void* const* in, const std::size_t* in_bytes, std::size_t chunks, void* temp,
                std::size_t temp_bytes, void* const* out, std::size_t* out_bytes, nvcompStatus_t* statuses,
                cudaStream_t stream) const override {
    ZS_NVCOMP_TRY(Traits::compress(in, in_bytes, chunk_bytes, chunks, temp, temp_bytes, out, out_bytes,
                                   Traits::compress_opts(type), statuses, stream));
  }
  nvcompAlignmentRequirements_t decompress_alignment() const override {
    nvcompAlignmentRequirements_t a{};
    ZS_NVCOMP_TRY(Traits::decompress_alignments(Traits::decompress_opts(), &a));
    return a;
  }
  bool checks_sizes_first() const override { return Traits::checks_sizes_first; }
  void announced_sizes(const void* const* in, const std::size_t* in_bytes, std::size_t* out_bytes,
                       std::size_t chunks, cudaStream_t stream) const override {
    ZS_NVCOMP_TRY(Traits::decompress_size(in, in_bytes, out_bytes, chunks, stream));
  }
  std::size_t decompress_temp_bytes(std::size_t chunks, std::size_t total_bytes) const override {
    std::size_t bytes = 0;
    ZS_NVCOMP_TRY(Traits::decompress_temp(chunks, chunk_bytes, Traits::decompress_opts(), &bytes, total_bytes, nullptr));
    return bytes;
  }
  bool decompress(const void* const* in, const std::size_t* in_bytes, const std::size_t* out_buffer_bytes,
                  std::size_t* out_bytes, std::size_t chunks, void* temp, std::size_t temp_bytes, void* const* out,
                  nvcompStatus_t* statuses, cudaStream_t stream) const override {
    nvcompStatus_t const result = Traits::decompress(in, in_bytes, out_buffer_bytes, out_bytes, chunks, temp,
                                                     temp_bytes, out, Traits::decompress_opts(), statuses, stream);
    if (result == nvcompErrorCannotDecompress) return false;
    ZS_NVCOMP_TRY(result);
    return true;
  }
};

// The batched functions of nvCOMP algorithm NAME, as Traits members.
#define ZS_NVCOMP_FUNCTIONS(NAME)                                                                \
  static constexpr auto compress_alignments = &nvcompBatched##NAME##CompressGetRequiredAlignments;     \
  static constexpr auto max_output_chunk = &nvcompBatched##NAME##CompressGetMaxOutputChunkSize;        \
  static constexpr auto compress_temp = &nvcompBatched##NAME##CompressGetTempSize;                     \
  static constexpr auto compress = &nvcompBatched##NAME##CompressAsync;                                \
  static constexpr auto decompress_alignments = &nvcompBatched##NAME##DecompressGetRequiredAlignments; \
  static constexpr auto decompress_temp = &nvcompBatched##NAME##DecompressGetTempSize;                 \
  static constexpr auto decompress = &nvcompBatched##NAME##DecompressAsync;                              \
  static constexpr auto decompress_size = &nvcompBatched##NAME##GetDecompressSizeAsync;

struct cascaded_traits {
  ZS_NVCOMP_FUNCTIONS(Cascaded)
  static constexpr bool checks_sizes_first = true;
  static int compress_key(value_type type) { return integer_type(type); }
  static nvcompBatchedCascadedCompressOpts_t compress_opts(value_type type) {
    nvcompBatchedCascadedCompressOpts_t opts = nvcompBatchedCascadedCompressDefaultOpts;
    opts.common_opts.data_type = integer_type(type);
    return opts;
  }
  static nvcompBatchedCascadedDecompressOpts_t decompress_opts() { return nvcompBatchedCascadedDecompressDefaultOpts; }
};

struct bitcomp_traits {
  ZS_NVCOMP_FUNCTIONS(Bitcomp)
  static constexpr bool checks_sizes_first = true;
  static int compress_key(value_type type) { return data_type(type); }
  static nvcompType_t data_type(value_type type) {
    if (type == value_type::float32) return NVCOMP_TYPE_FLOAT32;
    if (type == value_type::float64) return NVCOMP_TYPE_FLOAT64;
    return integer_type(type);
  }
  static nvcompBatchedBitcompCompressOpts_t compress_opts(value_type type) {
    nvcompBatchedBitcompCompressOpts_t opts = nvcompBatchedBitcompCompressDefaultOpts;  // lossless
    opts.data_type = data_type(type);
    return opts;
  }
  static nvcompBatchedBitcompDecompressOpts_t decompress_opts() { return nvcompBatchedBitcompDecompressDefaultOpts; }
};

struct ans_traits {
  ZS_NVCOMP_FUNCTIONS(ANS)
  static constexpr bool checks_sizes_first = true;
  // ANS models float32 values as such; every other type as bytes.
  static int compress_key(value_type type) { return type == value_type::float32 ? NVCOMP_TYPE_FLOAT32 : NVCOMP_TYPE_CHAR; }
  static nvcompBatchedANSCompressOpts_t compress_opts(value_type type) {
    nvcompBatchedANSCompressOpts_t opts = nvcompBatchedANSCompressDefaultOpts;
    opts.data_type = static_cast<nvcompType_t>(compress_key(type));
    return opts;
  }
  // The CUDA backend with its per-chunk validation on: what nvCOMP documents as reporting a
  // corrupt chunk in its status (nvcomp_codecs.hpp, "Trust").
  static nvcompBatchedANSDecompressOpts_t decompress_opts() {
    nvcompBatchedANSDecompressOpts_t opts = nvcompBatchedANSDecompressDefaultOpts;
    opts.backend = NVCOMP_DECOMPRESS_BACKEND_CUDA;
    opts.skip_validate = 0;
    return opts;
  }
};

struct lz4_traits {
  ZS_NVCOMP_FUNCTIONS(LZ4)
  static constexpr bool checks_sizes_first = false;  // bounds-checked; sizes cost a full parse
  static int compress_key(value_type) { return 0; }
  static nvcompBatchedLZ4CompressOpts_t compress_opts(value_type) { return nvcompBatchedLZ4CompressDefaultOpts; }
  // The CUDA backend: nvCOMP documents its LZ4 decompressor as reporting corrupt input in the
  // chunk's status, and the hardware engine's (which the default may choose) as undefined on it.
  static nvcompBatchedLZ4DecompressOpts_t decompress_opts() {
    nvcompBatchedLZ4DecompressOpts_t opts = nvcompBatchedLZ4DecompressDefaultOpts;
    opts.backend = NVCOMP_DECOMPRESS_BACKEND_CUDA;
    return opts;
  }
};

struct zstd_traits {
  ZS_NVCOMP_FUNCTIONS(Zstd)
  static constexpr bool checks_sizes_first = true;
  static int compress_key(value_type) { return 0; }
  static nvcompBatchedZstdCompressOpts_t compress_opts(value_type) { return nvcompBatchedZstdCompressDefaultOpts; }
  static nvcompBatchedZstdDecompressOpts_t decompress_opts() { return nvcompBatchedZstdDecompressDefaultOpts; }
};

#undef ZS_NVCOMP_FUNCTIONS

// --- the codec ------------------------------------------------------------------------------------

bool misaligned(const void* p, std::size_t alignment) {
  return alignment > 1 && reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
}

// What the host knows of an encode batch before anything runs: the chunks, in groups of one
// data type (a group's chunks are consecutive; within it frame by frame), the frames whose
// values nvCOMP cannot read where they are (staged), and the scratch each part needs.
struct encode_plan {
  struct group {
    value_type type;  // a type of the group's frames: the options of its compress call
    std::size_t first_chunk = 0, chunks = 0, raw_bytes = 0;
  };
  std::vector<group> groups;
  std::vector<std::uint64_t> chunk_first;   // per frame
  std::vector<std::uint64_t> staged_at;     // per frame: offset in the input staging, or UINT64_MAX
  std::uint64_t chunks = 0;
  std::uint64_t staged_bytes = 0;
  std::size_t slot_bytes = 0;               // a compressed chunk's room in the output staging
  std::size_t max_chunk = 0;                // the most bytes nvCOMP writes for a chunk of this batch
  std::size_t nvcomp_temp_bytes = 0;        // the most any group's call needs
  std::uint64_t copies = 0;                 // chunks of staged frames
};

struct encode_scratch {
  const void** in_ptrs;
  std::size_t* in_bytes;
  void** out_ptrs;
  std::size_t* out_bytes;
  nvcompStatus_t* statuses;
  std::uint64_t* chunk_first;
  std::byte** chunk_dst;
  byte_copy* copies;
  std::byte* staged_in;
  std::byte* staged_out;
  void* nvcomp_temp;
};

encode_scratch carve(detail::temp_layout& layout, const encode_plan& p, std::size_t frames) {
  encode_scratch s{};
  s.in_ptrs = layout.take<const void*>(p.chunks);
  s.in_bytes = layout.take<std::size_t>(p.chunks);
  s.chunk_first = layout.take<std::uint64_t>(frames);
  s.copies = layout.take<byte_copy>(p.copies);
  s.out_ptrs = layout.take<void*>(p.chunks);
  s.out_bytes = layout.take<std::size_t>(p.chunks);
  s.statuses = layout.take<nvcompStatus_t>(p.chunks);
  s.chunk_dst = layout.take<std::byte*>(p.chunks);
  s.staged_in = layout.take<std::byte>(p.staged_bytes);
  s.staged_out = layout.take<std::byte>(p.chunks * p.slot_bytes);
  s.nvcomp_temp = layout.take<std::byte>(p.nvcomp_temp_bytes);
  return s;
}

// What the host knows of a decode batch: chunks frame by frame, the frames whose targets nvCOMP
// cannot write where they are (staged), and the scratch.
struct decode_plan {
  std::vector<std::uint64_t> chunk_first;  // per frame
  std::vector<std::uint64_t> staged_at;    // per frame: offset in the output staging, or UINT64_MAX
  std::uint64_t chunks = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t staged_bytes = 0;
  std::uint64_t copies = 0;
  std::size_t nvcomp_temp_bytes = 0;
  std::size_t parking_in_bytes = 0;     // room for the parking chunk: the most it compresses to
  std::size_t parking_slot_bytes = 0;   // a parked chunk's output slot
};

// The parking chunk (nvcomp_format.hpp): this many zero bytes, compressed by the codec's own
// algorithm. Small, as every chunk of the batch gets an output slot of this size in scratch.
constexpr std::size_t parking_raw_bytes = 64;
// Its type, for the algorithms whose options take one: bytes suit every algorithm.
constexpr value_type parking_type = value_type::uint8;

struct decode_scratch {
  std::byte** out_base;
  std::uint64_t* chunk_first;
  byte_copy* copies;
  std::byte* parking_in;
  std::uint64_t* chunk_frame;
  chunk_arguments args;
  std::size_t* actual_bytes;
  nvcompStatus_t* statuses;
  std::byte* parking_out;
  std::byte* staged_out;
  void* nvcomp_temp;
};

decode_scratch carve(detail::temp_layout& layout, const decode_plan& p, std::size_t frames) {
  decode_scratch s{};
  // What the host uploads, side by side, so that it goes up in one copy.
  s.out_base = layout.take<std::byte*>(frames);
  s.chunk_first = layout.take<std::uint64_t>(frames);
  s.copies = layout.take<byte_copy>(p.copies);
  s.parking_in = layout.take<std::byte>(p.parking_in_bytes);
  s.chunk_frame = layout.take<std::uint64_t>(p.chunks);
  s.args.in = layout.take<const void*>(p.chunks);
  s.args.in_bytes = layout.take<std::size_t>(p.chunks);
  s.args.out = layout.take<void*>(p.chunks);
  s.args.out_bytes = layout.take<std::size_t>(p.chunks);
  s.actual_bytes = layout.take<std::size_t>(p.chunks);
  s.statuses = layout.take<nvcompStatus_t>(p.chunks);
  s.parking_out = layout.take<std::byte>(p.chunks * p.parking_slot_bytes);
  s.staged_out = layout.take<std::byte>(p.staged_bytes);
  s.nvcomp_temp = layout.take<std::byte>(p.nvcomp_temp_bytes);
  return s;
}

class nvcomp_codec final : public codec {
 public:
  nvcomp_codec(codec_id id, std::string_view name, const algorithm& algo) : id_(id), name_(name), algo_(algo) {
    for (value_type const type : fixed_width_types) {
      auto const t = static_cast<std::size_t>(type);
      max_chunk_[t] = algo.max_compressed_chunk(type, chunk_bytes);
      input_alignment_[t] = algo.compress_alignment(type).input;
      ZS_EXPECTS(algo.compress_alignment(type).output <= chunk_alignment,
                 "nvCOMP's compressed chunks aligned to at most 16 bytes (" + std::string(name) + ")");
    }
    nvcompAlignmentRequirements_t const d = algo.decompress_alignment();
    ZS_EXPECTS(d.input <= chunk_alignment, "nvCOMP's compressed chunks read at 16-byte alignment (" + std::string(name) + ")");
    output_alignment_ = d.output;
    parking_in_bytes_ = algo.max_compressed_chunk(parking_type, parking_raw_bytes);
    // Each parked chunk's slot starts where nvCOMP may write (scratch arrays start 256-aligned).
    std::size_t const slot_alignment = std::max<std::size_t>(output_alignment_, chunk_alignment);
    ZS_EXPECTS(slot_alignment <= detail::temp_layout::alignment && (slot_alignment & (slot_alignment - 1)) == 0,
               "nvCOMP's decompressed chunks aligned to a power of two of at most 256 bytes (" + std::string(name) +
                   ")");
    parking_slot_bytes_ = (parking_raw_bytes + slot_alignment - 1) / slot_alignment * slot_alignment;
  }

  codec_id id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return name_; }
  bool supports(value_type type) const noexcept override { return is_valid(type) && type != value_type::string; }
  int preference() const noexcept override { return -1; }  // never a type's default codec
  std::uint64_t max_frame_bytes(const encode_source& source) const noexcept override {
    // No column is 2^50 bytes; above that the bound below could wrap, and no caller has the room.
    std::uint64_t const raw = source.raw_bytes();
    if (!supports(source.type) || raw > (std::uint64_t{1} << 50)) return UINT64_MAX;
    return frame_header_bytes + max_body_bytes(raw, max_chunk_[static_cast<std::size_t>(source.type)]);
  }

  std::vector<codec_estimate> estimate_host(const sample_batch&) const override { no_cpu_reference(); }

 protected:
  [[noreturn]] void no_cpu_reference() const {
    ZS_FAIL(error_code::unsupported, "codec '" + name_ +
                                         "' has no CPU reference: nVIDIA nvCOMP's compressors run on the GPU only "
                                         "(encode_async, decode_async)");
  }
  void encode_payload_host(const encode_source&, std::byte*, std::uint64_t) const override { no_cpu_reference(); }
  frame_status decode_payload_host(const frame_header&, const std::byte*, const decode_target&) const override {
    no_cpu_reference();
  }

  encode_plan plan_encode(std::span<const encode_source> sources) const {
    encode_plan p;
    std::size_t const n = sources.size();
    p.chunk_first.assign(n, 0);
    p.staged_at.assign(n, UINT64_MAX);
    // Groups in the order of their first frame; chunks numbered group by group.
    std::vector<int> keys;
    std::map<int, std::vector<std::size_t>> frames_of;
    for (std::size_t f = 0; f < n; ++f) {
      int const key = algo_.compress_key(sources[f].type);
      if (frames_of.find(key) == frames_of.end()) keys.push_back(key);
      frames_of[key].push_back(f);
    }
    for (int const key : keys) {
      encode_plan::group g{sources[frames_of[key].front()].type};
      g.first_chunk = p.chunks;
      for (std::size_t const f : frames_of[key]) {
        auto const& s = sources[f];
        std::uint64_t const raw = s.raw_bytes();
        std::uint64_t const chunks = chunk_count(raw);
        auto const t = static_cast<std::size_t>(s.type);
        p.chunk_first[f] = p.chunks;
        p.chunks += chunks;
        g.chunks += chunks;
        g.raw_bytes += raw;
        p.max_chunk = std::max(p.max_chunk, max_chunk_[t]);
        if (chunks > 0 && misaligned(s.values, input_alignment_[t])) {
          p.staged_at[f] = p.staged_bytes;
          p.staged_bytes += align16(raw);
          p.copies += chunks;
        }
      }
      if (g.chunks > 0) p.nvcomp_temp_bytes = std::max(p.nvcomp_temp_bytes, algo_.compress_temp_bytes(g.type, g.chunks, g.raw_bytes));
      p.groups.push_back(g);
    }
    p.slot_bytes = align16(p.max_chunk);
    return p;
  }

  std::size_t encode_payloads_temp_bytes(std::span<const encode_source> sources) const override {
    detail::temp_layout layout;
    carve(layout, plan_encode(sources), sources.size());
    return layout.bytes();
  }

  void encode_payloads_async(const device_encode_batch& batch, const encode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads, cudaStream_t stream) const override {
    // The packing kernel writes chunks in 16-byte words, at 16-byte offsets from the buffer.
    ZS_EXPECTS(reinterpret_cast<std::uintptr_t>(host.frames) % frame_alignment == 0,
               "a frames buffer on a frame_alignment (16-byte) boundary");
    std::span<const encode_source> const sources = host.sources;
    encode_plan const p = plan_encode(sources);
    detail::temp_layout layout(temp, temp_bytes);
    encode_scratch const s = carve(layout, p, sources.size());

    // Every chunk's input (in place, or in the staging its frame is copied to), size and slot.
    std::vector<const void*> in_ptrs(p.chunks);
    std::vector<std::size_t> in_bytes(p.chunks);
    std::vector<void*> out_ptrs(p.chunks);
    std::vector<byte_copy> copies;
    copies.reserve(p.copies);
    for (std::size_t f = 0; f < sources.size(); ++f) {
      auto const* values = static_cast<const std::byte*>(sources[f].values);
      std::uint64_t const raw = sources[f].raw_bytes();
      bool const staged = p.staged_at[f] != UINT64_MAX;
      for (std::uint64_t k = 0; k < chunk_count(raw); ++k) {
        std::uint64_t const c = p.chunk_first[f] + k;
        const std::byte* from = values + k * chunk_bytes;
        in_bytes[c] = chunk_raw_bytes(raw, k);
        in_ptrs[c] = from;
        if (staged) {
          std::byte* to = s.staged_in + p.staged_at[f] + k * chunk_bytes;
          copies.push_back({from, to, in_bytes[c], f});
          in_ptrs[c] = to;
        }
        out_ptrs[c] = s.staged_out + c * p.slot_bytes;
      }
    }
    uploads.put<const void*>(s.in_ptrs, in_ptrs);
    uploads.put<std::size_t>(s.in_bytes, in_bytes);
    uploads.put<std::uint64_t>(s.chunk_first, p.chunk_first);
    uploads.put<byte_copy>(s.copies, copies);
    uploads.put<void*>(s.out_ptrs, out_ptrs);
    uploads.send(stream);

    copy_bytes(s.copies, copies.size(), nullptr, stream);
    for (auto const& g : p.groups) {
      if (g.chunks == 0) continue;
      algo_.compress(g.type, s.in_ptrs + g.first_chunk, s.in_bytes + g.first_chunk, g.chunks, s.nvcomp_temp,
                     p.nvcomp_temp_bytes, s.out_ptrs + g.first_chunk, s.out_bytes + g.first_chunk,
                     s.statuses + g.first_chunk, stream);
    }
    pack_frames(batch, s.chunk_first, s.out_bytes, s.statuses, p.max_chunk, id_, s.chunk_dst, stream);
    copy_chunks(s.out_ptrs, s.out_bytes, s.chunk_dst, p.chunks, stream);
  }

  decode_plan plan_decode(std::span<const decode_target> targets) const {
    decode_plan p;
    std::size_t const n = targets.size();
    p.chunk_first.assign(n, 0);
    p.staged_at.assign(n, UINT64_MAX);
    for (std::size_t f = 0; f < n; ++f) {
      std::uint64_t const raw = targets[f].raw_bytes();
      std::uint64_t const chunks = chunk_count(raw);
      p.chunk_first[f] = p.chunks;
      p.chunks += chunks;
      p.raw_bytes += raw;
      if (chunks > 0 && misaligned(targets[f].values, output_alignment_)) {
        p.staged_at[f] = p.staged_bytes;
        p.staged_bytes += align16(raw);
        p.copies += chunks;
      }
    }
    if (p.chunks > 0) {
      // Any chunk may be parked instead: room for the parking chunk's uncompressed bytes too.
      p.nvcomp_temp_bytes = algo_.decompress_temp_bytes(p.chunks, p.raw_bytes + p.chunks * parking_raw_bytes);
      p.parking_in_bytes = parking_in_bytes_;
      p.parking_slot_bytes = parking_slot_bytes_;
    }
    return p;
  }

  std::size_t decode_payloads_temp_bytes(std::span<const decode_target> targets) const override {
    detail::temp_layout layout;
    carve(layout, plan_decode(targets), targets.size());
    return layout.bytes();
  }

  void decode_payloads_async(const device_decode_batch& batch, const decode_batch& host, void* temp,
                             std::size_t temp_bytes, detail::upload_image& uploads, cudaStream_t stream) const override {
    std::span<const decode_target> const targets = host.targets;
    decode_plan const p = plan_decode(targets);
    detail::temp_layout layout(temp, temp_bytes);
    decode_scratch const s = carve(layout, p, targets.size());

    // Where each frame's raw bytes go: its target, or staging where nvCOMP cannot write the
    // target at its alignment (then copied over, for the frames that decode).
    std::vector<std::byte*> out_base(targets.size());
    std::vector<byte_copy> copies;
    copies.reserve(p.copies);
    for (std::size_t f = 0; f < targets.size(); ++f) {
      auto* values = static_cast<std::byte*>(targets[f].values);
      std::uint64_t const raw = targets[f].raw_bytes();
      out_base[f] = values;
      if (p.staged_at[f] == UINT64_MAX) continue;
      out_base[f] = s.staged_out + p.staged_at[f];
      for (std::uint64_t k = 0; k < chunk_count(raw); ++k) {
        copies.push_back({out_base[f] + k * chunk_bytes, values + k * chunk_bytes, chunk_raw_bytes(raw, k), f});
      }
    }
    // A batch of empty frames parks nothing (and has no room for the parking chunk).
    std::span<const std::byte> const parking =
        p.chunks > 0 ? parking_chunk_bytes(stream) : std::span<const std::byte>{};
    uploads.put<std::byte*>(s.out_base, out_base);
    uploads.put<std::uint64_t>(s.chunk_first, p.chunk_first);
    uploads.put<byte_copy>(s.copies, copies);
    uploads.put<std::byte>(s.parking_in, parking);
    uploads.send(stream);
    parking_chunk const parked{s.parking_in, parking.size(), parking_raw_bytes, s.parking_out, parking_slot_bytes_};

    // Every chunk table is checked whole before nvCOMP is given a chunk (empty frames' too: a
    // table of no chunks must still be exactly that); refused frames' chunks are parked.
    plan_chunks(batch, s.chunk_first, s.out_base, s.chunk_frame, s.args, parked, stream);
    if (p.chunks == 0) return;
    if (algo_.checks_sizes_first()) {
      // A table can hold while its chunks are garbage (a damaged frame whose checksum was made
      // right again, an embedded frame, or a frame of another program): the chunks' own headers
      // must announce the sizes the frame expects before a decompressor that trusts them reads
      // the chunk. nvCOMP reads only the headers here (actual_bytes serves as scratch;
      // decompression rewrites it).
      algo_.announced_sizes(s.args.in, s.args.in_bytes, s.actual_bytes, p.chunks, stream);
      check_chunks(s.chunk_frame, p.chunks, nullptr, s.actual_bytes, s.args.out_bytes, batch.status, stream);
      park_refused_chunks(s.chunk_frame, p.chunks, batch.status, s.args, parked, stream);
    }
    if (!algo_.decompress(s.args.in, s.args.in_bytes, s.args.out_bytes, s.actual_bytes, p.chunks, s.nvcomp_temp,
                          p.nvcomp_temp_bytes, s.args.out, s.statuses, stream)) {
      // Nothing says which frame holds the damage: every frame of the batch is refused, and no
      // chunk is read back.
      std::vector<frame_status> const refused(host.targets.size(), frame_status::corrupt_payload);
      copy_async(batch.status, refused.data(), refused.size() * sizeof(frame_status), stream);
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
      return;
    }
    // Each chunk's own status and size: a chunk nvCOMP could not decompress, or that came out
    // at another size than its room, refuses its frame.
    check_chunks(s.chunk_frame, p.chunks, s.statuses, s.actual_bytes, s.args.out_bytes, batch.status, stream);
    copy_bytes(s.copies, copies.size(), batch.status, stream);
  }

  // The parking chunk's compressed bytes: made on the GPU on the first call (on `stream`, which
  // it waits for), kept on the host after. nvCOMP's output does not depend on the device.
  std::span<const std::byte> parking_chunk_bytes(cudaStream_t stream) const {
    std::call_once(parking_made_, [&] { parking_bytes_ = compress_parking_chunk(stream); });
    return parking_bytes_;
  }

  std::vector<std::byte> compress_parking_chunk(cudaStream_t stream) const {
    std::size_t const temp_bytes = algo_.compress_temp_bytes(parking_type, 1, parking_raw_bytes);
    detail::temp_layout sizing;
    auto take_all = [&](detail::temp_layout& layout) {
      struct {
        std::byte* in;
        const void** in_ptr;
        std::size_t* in_bytes;
        std::byte* out;
        void** out_ptr;
        std::size_t* out_bytes;
        nvcompStatus_t* status;
        void* temp;
      } b{};
      b.in = layout.take<std::byte>(parking_raw_bytes);
      b.in_ptr = layout.take<const void*>(1);
      b.in_bytes = layout.take<std::size_t>(1);
      b.out = layout.take<std::byte>(parking_in_bytes_);
      b.out_ptr = layout.take<void*>(1);
      b.out_bytes = layout.take<std::size_t>(1);
      b.status = layout.take<nvcompStatus_t>(1);
      b.temp = layout.take<std::byte>(temp_bytes);
      return b;
    };
    take_all(sizing);
    device_buffer memory(sizing.bytes(), stream);
    detail::temp_layout layout(memory.data(), memory.size());
    auto const b = take_all(layout);

    std::vector<std::byte> const zeros(parking_raw_bytes);
    const void* const in_ptr = b.in;
    std::size_t const in_bytes = parking_raw_bytes;
    void* const out_ptr = b.out;
    copy_async(b.in, zeros.data(), zeros.size(), stream);
    copy_async(b.in_ptr, &in_ptr, sizeof in_ptr, stream);
    copy_async(b.in_bytes, &in_bytes, sizeof in_bytes, stream);
    copy_async(b.out_ptr, &out_ptr, sizeof out_ptr, stream);
    algo_.compress(parking_type, b.in_ptr, b.in_bytes, 1, b.temp, temp_bytes, b.out_ptr, b.out_bytes, b.status, stream);
    std::size_t out_bytes = 0;
    nvcompStatus_t status = nvcompErrorInternal;
    copy_async(&out_bytes, b.out_bytes, sizeof out_bytes, stream);
    copy_async(&status, b.status, sizeof status, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    if (status != nvcompSuccess || out_bytes == 0 || out_bytes > parking_in_bytes_) {
      ZS_FAIL(error_code::internal, "codec '" + name_ + "': nVIDIA nvCOMP did not compress " +
                                        std::to_string(parking_raw_bytes) + " zero bytes (" +
                                        std::string(status_name(status)) + ", " + std::to_string(out_bytes) +
                                        " bytes, at most " + std::to_string(parking_in_bytes_) + " expected)");
    }
    std::vector<std::byte> bytes(out_bytes);
    copy_async(bytes.data(), b.out, out_bytes, stream);
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));
    return bytes;
  }

 private:
  codec_id id_;
  std::string name_;
  const algorithm& algo_;
  // Per value type (indexed by its value): the most compressed bytes of a 64 KiB chunk, and the
  // alignment nvCOMP needs of a chunk's input.
  // Indexed by value type id.
  std::array<std::size_t, std::size_t{last_value_type_id} + 1> max_chunk_{};
  std::array<std::size_t, std::size_t{last_value_type_id} + 1> input_alignment_{};
  std::size_t output_alignment_ = 1;
  std::size_t parking_in_bytes_ = 0;    // the most the parking chunk compresses to
  std::size_t parking_slot_bytes_ = 0;  // a parked chunk's output slot
  mutable std::once_flag parking_made_;
  mutable std::vector<std::byte> parking_bytes_;
};

constexpr std::uint8_t first_id = first_private_codec_id;

}  // namespace

std::span<const codec* const> nvcomp_codecs() {
  static const algorithm_of<cascaded_traits> cascaded;
  static const algorithm_of<bitcomp_traits> bitcomp;
  static const algorithm_of<ans_traits> ans;
  static const algorithm_of<lz4_traits> lz4;
  static const algorithm_of<zstd_traits> zstd;
  static const nvcomp_codec codecs[] = {
      {static_cast<codec_id>(first_id + 0), "nvcomp:cascaded", cascaded},
      {static_cast<codec_id>(first_id + 1), "nvcomp:bitcomp", bitcomp},
      {static_cast<codec_id>(first_id + 2), "nvcomp:ans", ans},
      {static_cast<codec_id>(first_id + 3), "nvcomp:lz4", lz4},
      {static_cast<codec_id>(first_id + 4), "nvcomp:zstd", zstd},
  };
  static const std::array<const codec*, 5> all{&codecs[0], &codecs[1], &codecs[2], &codecs[3], &codecs[4]};
  return all;
}

void register_nvcomp_codecs() {
  static const bool registered = [] {
    for (const codec* c : nvcomp_codecs()) register_codec(*c);
    return true;
  }();
  (void)registered;
}

std::string nvcomp_version() {
  nvcompProperties_t properties{};
  ZS_NVCOMP_TRY(nvcompGetProperties(&properties));
  std::uint32_t const v = properties.version;
  return "nvCOMP " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." + std::to_string(v % 100);
}

}  // namespace zs::nvcomp
