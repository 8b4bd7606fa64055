#include "zs/arrow.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "arrow/bit_kernels.hpp"
#include "arrow/offset_kernels.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs {
namespace {

constexpr const char* supported_formats =
    "c, C, s, S, i, I, l, L (integers), f, g (floats), b (bool), u (utf8), U (large_utf8), tdD, tdm (dates), "
    "ts{s,m,u,n}:[zone] (timestamps), tD{s,m,u,n} (durations), tt{s,m,u,n} (times of day), "
    "d:P,S,32, d:P,S,64 and d:P,S or d:P,S,128 (decimals)";

char unit_letter(time_unit unit) {
  switch (unit) {
    case time_unit::second: return 's';
    case time_unit::millisecond: return 'm';
    case time_unit::microsecond: return 'u';
    case time_unit::nanosecond: return 'n';
  }
  return '?';
}

std::optional<time_unit> unit_of_letter(char letter) {
  switch (letter) {
    case 's': return time_unit::second;
    case 'm': return time_unit::millisecond;
    case 'u': return time_unit::microsecond;
    case 'n': return time_unit::nanosecond;
    default: return std::nullopt;
  }
}

// The Arrow format string of a column of `type` carrying `logical`.
std::string arrow_format(value_type type, const logical_type& logical) {
  switch (logical.kind) {
    case logical_kind::none: break;
    case logical_kind::date32: return "tdD";
    case logical_kind::date64: return "tdm";
    case logical_kind::timestamp: return std::string("ts") + unit_letter(logical.unit) + ":" + logical.timezone;
    case logical_kind::duration: return std::string("tD") + unit_letter(logical.unit);
    case logical_kind::time32:
    case logical_kind::time64: return std::string("tt") + unit_letter(logical.unit);
    case logical_kind::decimal32:
    case logical_kind::decimal64:
    case logical_kind::decimal128: {
      // 128 bits is Arrow's default width, which the format string leaves out.
      std::string_view const width = logical.kind == logical_kind::decimal32   ? ",32"
                                     : logical.kind == logical_kind::decimal64 ? ",64"
                                                                               : "";
      return "d:" + std::to_string(logical.precision) + "," + std::to_string(logical.scale) + std::string(width);
    }
  }
  switch (type) {
    case value_type::int8: return "c";
    case value_type::uint8: return "C";
    case value_type::int16: return "s";
    case value_type::uint16: return "S";
    case value_type::int32: return "i";
    case value_type::int64: return "l";
    case value_type::uint32: return "I";
    case value_type::uint64: return "L";
    case value_type::float32: return "f";
    case value_type::float64: return "g";
    case value_type::bool8: return "b";
    case value_type::string: return "U";
    case value_type::int128: break;  // Arrow has no 128-bit integer: only decimal128 over it
  }
  ZS_FAIL(error_code::internal, "no Arrow format for value type " + std::to_string(static_cast<int>(type)));
}

[[noreturn]] void fail_argument(const std::string& message) {
  ZS_FAIL(error_code::invalid_argument, message);
}

// ---------------------------------------------------------------------------------------------
// Export. Every schema and array node has its own private data and release callback: the
// specification lets a consumer move a child out and release it after (or before) its parent,
// so a parent releases only the children still marked unreleased. Each child array owns its
// column, so its buffers live exactly as long as the child does.

// Zero-sized host buffers are exported as a pointer to this rather than NULL: the specification
// allows NULL there, but consumers written before that was clarified read it as missing.
alignas(64) const std::int64_t empty_host_buffer[1] = {0};

struct child_schema_data {
  std::string name;
  std::string format;
};

struct struct_schema_data {
  std::unique_ptr<ArrowSchema[]> children;
  std::vector<ArrowSchema*> child_pointers;
};

void release_child_schema(ArrowSchema* schema) noexcept {
  delete static_cast<child_schema_data*>(schema->private_data);
  schema->private_data = nullptr;
  schema->release = nullptr;
}

void release_struct_schema(ArrowSchema* schema) noexcept {
  auto* data = static_cast<struct_schema_data*>(schema->private_data);
  for (ArrowSchema* child : data->child_pointers) {
    if (child->release != nullptr) child->release(child);
  }
  delete data;
  schema->private_data = nullptr;
  schema->release = nullptr;
}

using export_storage = std::variant<std::monostate, host_buffer, device_buffer>;

struct child_array_data {
  column values;
  export_storage bool_bits;  // a bool8 column's values as Arrow's bitmap
  const void* buffers[3] = {nullptr, nullptr, nullptr};
};

struct struct_array_data {
  std::unique_ptr<ArrowArray[]> children;
  std::vector<ArrowArray*> child_pointers;
  const void* buffers[1] = {nullptr};
  cudaEvent_t ready = nullptr;  // the device export's sync event, destroyed with the array
};

void release_child_array(ArrowArray* array) noexcept {
  delete static_cast<child_array_data*>(array->private_data);
  array->private_data = nullptr;
  array->release = nullptr;
}

void release_struct_array(ArrowArray* array) noexcept {
  auto* data = static_cast<struct_array_data*>(array->private_data);
  for (ArrowArray* child : data->child_pointers) {
    if (child->release != nullptr) child->release(child);
  }
  if (data->ready != nullptr) ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(data->ready));
  delete data;
  array->private_data = nullptr;
  array->release = nullptr;
}

// "column 'price' (child 1)"
std::string column_label(const std::string& name, std::size_t index) {
  return "column '" + name + "' (child " + std::to_string(index) + ")";
}

std::uint64_t checked_row_count(const table& t) {
  if (!t.names.empty() && t.names.size() != t.columns.size()) {
    fail_argument("cannot export a table with " + std::to_string(t.names.size()) + " names for " +
                  std::to_string(t.columns.size()) + " columns to Arrow");
  }
  std::uint64_t const rows = t.columns.empty() ? 0 : t.columns[0].size();
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    std::string const name = t.names.empty() ? std::string() : t.names[i];
    if (t.columns[i].size() != rows) {
      fail_argument("cannot export to Arrow: " + column_label(name, i) + " has " + std::to_string(t.columns[i].size()) +
                    " rows, column 0 has " + std::to_string(rows));
    }
    if (t.columns[i].size() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail_argument("cannot export to Arrow: " + column_label(name, i) + " has more than 2^63 - 1 rows");
    }
    if (t.columns[i].type() == value_type::int128 && t.columns[i].logical().is_none()) {
      ZS_FAIL(error_code::unsupported, "cannot export to Arrow: " + column_label(name, i) +
                                           " is int128 without a logical type, and Arrow has no 128-bit integer "
                                           "type; give it one (logical_type::decimal128(38, 0)) to export it as "
                                           "decimal128");
    }
  }
  return rows;
}

void check_memory(const table& t, memory_kind memory, const char* use_instead) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].memory() != memory) {
      std::string const name = t.names.empty() ? std::string() : t.names[i];
      fail_argument("cannot export to Arrow: " + column_label(name, i) + " lives in " +
                    (memory == memory_kind::host ? "device" : "host") + " memory; use " + use_instead);
    }
  }
}

// The GPU holding every device column of `t`; the current device when none holds memory.
int device_of_columns(const table& t) {
  std::optional<int> device;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    column_view const v = t.columns[i].view();
    for (const void* p : {v.data, static_cast<const void*>(v.offsets), static_cast<const void*>(v.null_mask)}) {
      if (p == nullptr) continue;
      cudaPointerAttributes attributes{};
      ZS_CUDA_TRY(cudaPointerGetAttributes(&attributes, p));
      if (device && *device != attributes.device) {
        std::string const name = t.names.empty() ? std::string() : t.names[i];
        fail_argument("cannot export to Arrow: " + column_label(name, i) + " is on GPU " +
                      std::to_string(attributes.device) + ", earlier columns on GPU " + std::to_string(*device));
      }
      device = attributes.device;
    }
  }
  if (!device) {
    int current = 0;
    ZS_CUDA_TRY(cudaGetDevice(&current));
    device = current;
  }
  return *device;
}

// Null rows of a host column's mask (0 without one).
std::int64_t count_host_nulls(const column& c) {
  column_view const v = c.view();
  if (v.null_mask == nullptr) return 0;
  std::uint64_t valid = 0;
  std::uint64_t const whole = v.count / 8;
  for (std::uint64_t b = 0; b < whole; ++b) valid += static_cast<std::uint64_t>(std::popcount(v.null_mask[b]));
  for (std::uint64_t row = whole * 8; row < v.count; ++row) valid += row_is_valid(v.null_mask, row) ? 1 : 0;
  return static_cast<std::int64_t>(v.count - valid);
}

// A bool8 column's values as Arrow's bitmap (bit i = value i != 0), in the column's memory; on
// the device, written on `stream`.
export_storage pack_bool_values(const column& c, cudaStream_t stream) {
  column_view const v = c.view();
  std::uint64_t const bytes = null_mask_bytes(v.count);
  const auto* values = static_cast<const std::uint8_t*>(v.data);
  if (v.memory == memory_kind::device) {
    device_buffer bits(bytes, stream);
    kernels::arrow::pack_bits(values, v.count, static_cast<std::uint8_t*>(bits.data()), stream);
    return bits;
  }
  host_buffer bits(bytes == 0 ? 1 : bytes);
  auto* out = static_cast<std::uint8_t*>(bits.data());
  std::fill(out, out + bytes, std::uint8_t{0});
  for (std::uint64_t i = 0; i < v.count; ++i) {
    if (values[i] != 0) out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1U << (i % 8)));
  }
  return bits;
}

const void* data_of(const export_storage& s) {
  if (auto const* h = std::get_if<host_buffer>(&s)) return h->data();
  if (auto const* d = std::get_if<device_buffer>(&s)) return d->data();
  return nullptr;
}

// An event recorded on a stream, destroyed unless handed over.
class recorded_event {
 public:
  explicit recorded_event(cudaStream_t stream) {
    ZS_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    cudaError_t const recorded = cudaEventRecord(event_, stream);
    if (recorded != cudaSuccess) {
      ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(event_));
      ZS_CUDA_TRY(recorded);
    }
  }
  ~recorded_event() {
    if (event_ != nullptr) ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(event_));
  }
  recorded_event(const recorded_event&) = delete;
  recorded_event& operator=(const recorded_event&) = delete;
  cudaEvent_t release() noexcept { return std::exchange(event_, nullptr); }

 private:
  cudaEvent_t event_ = nullptr;
};

// Builds the schema and array of `t` (already checked), then moves the columns in: nothing
// that can throw runs after the first column has moved, so a failure leaves `t` whole. Bool
// columns are packed into bitmaps first: for a device table on `ready_on`, before the event
// recorded there, or without it on the default stream, which is then synchronised.
void export_checked(table&& t, std::uint64_t rows, memory_kind memory, ArrowSchema* schema, ArrowArray* array,
                    std::optional<cudaStream_t> ready_on) {
  std::size_t const n = t.columns.size();
  cudaStream_t const stream = ready_on.value_or(nullptr);

  auto schema_data = std::make_unique<struct_schema_data>();
  schema_data->children = std::make_unique<ArrowSchema[]>(n);
  std::vector<std::unique_ptr<child_schema_data>> child_schemas;
  auto array_data = std::make_unique<struct_array_data>();
  array_data->children = std::make_unique<ArrowArray[]>(n);
  std::vector<std::unique_ptr<child_array_data>> child_arrays;
  std::vector<std::int64_t> null_counts;
  for (std::size_t i = 0; i < n; ++i) {
    column const& c = t.columns[i];
    child_schemas.push_back(std::make_unique<child_schema_data>());
    child_schemas.back()->name = t.names.empty() ? std::string() : t.names[i];
    child_schemas.back()->format = arrow_format(c.type(), c.logical());
    child_arrays.push_back(std::make_unique<child_array_data>());
    if (c.type() == value_type::bool8) child_arrays.back()->bool_bits = pack_bool_values(c, stream);
    // Counting a device mask's nulls would take a pass over it and a wait for the producer's
    // stream, which an export with ready_on must not do: the count is left unknown (-1), as the
    // specification allows.
    null_counts.push_back(!c.nullable() ? 0 : memory == memory_kind::host ? count_host_nulls(c) : -1);
    schema_data->child_pointers.push_back(&schema_data->children[i]);
    array_data->child_pointers.push_back(&array_data->children[i]);
  }
  std::optional<recorded_event> ready;
  if (ready_on) {
    ready.emplace(*ready_on);
  } else if (memory == memory_kind::device) {
    ZS_CUDA_TRY(cudaStreamSynchronize(stream));  // the bitmaps packed: the export is ready
  }

  // From here on nothing throws.
  for (std::size_t i = 0; i < n; ++i) {
    column& c = t.columns[i];
    value_type const type = c.type();
    bool const nullable = c.nullable();
    child_array_data& cd = *child_arrays[i];
    cd.values = std::move(c);
    column_view const v = cd.values.view();
    auto exported = [&](const void* p) -> const void* {
      return p == nullptr && memory == memory_kind::host ? empty_host_buffer : p;
    };
    cd.buffers[0] = v.null_mask;  // NULL without a mask: no nulls
    if (type == value_type::string) {
      cd.buffers[1] = exported(v.offsets);
      cd.buffers[2] = exported(v.data);
    } else if (type == value_type::bool8) {
      cd.buffers[1] = exported(data_of(cd.bool_bits));
    } else {
      cd.buffers[1] = exported(v.data);
    }

    ArrowSchema& cs = schema_data->children[i];
    cs = ArrowSchema{};
    cs.format = child_schemas[i]->format.c_str();
    cs.name = child_schemas[i]->name.c_str();
    cs.flags = nullable ? ARROW_FLAG_NULLABLE : 0;
    cs.release = release_child_schema;
    cs.private_data = child_schemas[i].release();

    ArrowArray& ca = array_data->children[i];
    ca = ArrowArray{};
    ca.length = static_cast<std::int64_t>(rows);
    ca.null_count = null_counts[i];
    ca.n_buffers = type == value_type::string ? 3 : 2;
    ca.buffers = cd.buffers;
    ca.release = release_child_array;
    ca.private_data = child_arrays[i].release();
  }
  array_data->ready = ready ? ready->release() : nullptr;

  *schema = ArrowSchema{};
  schema->format = "+s";
  schema->name = "";
  schema->n_children = static_cast<std::int64_t>(n);
  schema->children = schema_data->child_pointers.data();
  schema->release = release_struct_schema;
  schema->private_data = schema_data.release();

  *array = ArrowArray{};
  array->length = static_cast<std::int64_t>(rows);
  array->n_buffers = 1;
  array->n_children = static_cast<std::int64_t>(n);
  array->buffers = array_data->buffers;
  array->children = array_data->child_pointers.data();
  array->release = release_struct_array;
  array->private_data = array_data.release();

  t.columns.clear();
  t.names.clear();
}

// ---------------------------------------------------------------------------------------------
// Import.

// Releases what the consumer was handed, on every way out of an import. With a stream, it
// first waits for the copies on it, which read the producer's buffers.
class consumed_arrow_data {
 public:
  consumed_arrow_data(ArrowSchema* schema, ArrowArray* array) : schema_(schema), array_(array) {}
  ~consumed_arrow_data() {
    if (stream_) ZS_CUDA_TRY_NOTHROW(cudaStreamSynchronize(*stream_));
    if (array_ != nullptr && array_->release != nullptr) array_->release(array_);
    if (schema_ != nullptr && schema_->release != nullptr) schema_->release(schema_);
  }
  consumed_arrow_data(const consumed_arrow_data&) = delete;
  consumed_arrow_data& operator=(const consumed_arrow_data&) = delete;

  void copies_run_on(cudaStream_t stream) { stream_ = stream; }

 private:
  ArrowSchema* schema_;
  ArrowArray* array_;
  std::optional<cudaStream_t> stream_;
};

enum class arrow_column_format { fixed_width, bool_bits, utf8, large_utf8 };

struct import_format {
  value_type type = value_type::int32;
  arrow_column_format layout = arrow_column_format::fixed_width;
  logical_type logical;
};

[[noreturn]] void fail_format(const std::string& what, std::string_view format, const std::string& why) {
  ZS_FAIL(error_code::unsupported, what + " has Arrow format '" + std::string(format) + "', " + why +
                                       " (supported: " + supported_formats + ")");
}

// Splits "a,b[,c]" into integers; nullopt when any part is not one.
std::optional<std::vector<int>> parse_integers(std::string_view text) {
  std::vector<int> out;
  while (true) {
    std::size_t const comma = text.find(',');
    std::string_view const part = text.substr(0, comma);
    int value = 0;
    auto const [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) return std::nullopt;
    out.push_back(value);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

import_format fixed(value_type type, logical_type logical = {}) {
  return {type, arrow_column_format::fixed_width, std::move(logical)};
}

// "d:P,S" (128 bits), "d:P,S,W": decimal32, decimal64 and decimal128 map onto int32, int64 and
// int128; 256 bits have no zshuffle storage type.
import_format parse_decimal(std::string_view format, const std::string& what) {
  std::optional<std::vector<int>> const parts = parse_integers(format.substr(2));
  if (!parts || parts->size() < 2 || parts->size() > 3) fail_format(what, format, "which is no decimal format");
  int const precision = (*parts)[0], scale = (*parts)[1];
  int const bits = parts->size() == 3 ? (*parts)[2] : 128;
  if (bits != 32 && bits != 64 && bits != 128) {
    fail_format(what, format, "a " + std::to_string(bits) + "-bit decimal, which zshuffle cannot hold: it stores "
                                  "decimals of 32, 64 and 128 bits (cast to decimal128, precision up to 38, first)");
  }
  try {
    switch (bits) {
      case 32: return fixed(value_type::int32, logical_type::decimal32(precision, scale));
      case 64: return fixed(value_type::int64, logical_type::decimal64(precision, scale));
      default: return fixed(value_type::int128, logical_type::decimal128(precision, scale));
    }
  } catch (const error& e) {
    ZS_FAIL(error_code::invalid_argument, what + " has Arrow format '" + std::string(format) + "': " + e.message());
  }
}

// What an Arrow format means to zshuffle; throws unsupported, naming `what`, for the others.
import_format parse_format(std::string_view format, const std::string& what) {
  if (format.size() == 1) {
    switch (format[0]) {
      case 'c': return fixed(value_type::int8);
      case 'C': return fixed(value_type::uint8);
      case 's': return fixed(value_type::int16);
      case 'S': return fixed(value_type::uint16);
      case 'i': return fixed(value_type::int32);
      case 'I': return fixed(value_type::uint32);
      case 'l': return fixed(value_type::int64);
      case 'L': return fixed(value_type::uint64);
      case 'f': return fixed(value_type::float32);
      case 'g': return fixed(value_type::float64);
      case 'b': return {value_type::bool8, arrow_column_format::bool_bits, {}};
      case 'u': return {value_type::string, arrow_column_format::utf8, {}};
      case 'U': return {value_type::string, arrow_column_format::large_utf8, {}};
      default: break;
    }
  }
  if (format == "tdD") return fixed(value_type::int32, logical_type::date32());
  if (format == "tdm") return fixed(value_type::int64, logical_type::date64());
  if (format.size() >= 4 && format.substr(0, 2) == "ts" && format[3] == ':') {
    if (auto const unit = unit_of_letter(format[2])) {
      return fixed(value_type::int64, logical_type::timestamp(*unit, std::string(format.substr(4))));
    }
  }
  if (format.size() == 3 && format.substr(0, 2) == "tD") {
    if (auto const unit = unit_of_letter(format[2])) return fixed(value_type::int64, logical_type::duration(*unit));
  }
  if (format.size() == 3 && format.substr(0, 2) == "tt") {
    if (auto const unit = unit_of_letter(format[2])) {
      logical_type logical = logical_type::time_of_day(*unit);
      value_type const storage = storage_type(logical.kind);
      return fixed(storage, std::move(logical));
    }
  }
  if (format.substr(0, 2) == "d:") return parse_decimal(format, what);
  if (format.empty()) fail_format(what, format, "an empty format string");
  if (format[0] == '+') fail_format(what, format, "a nested type, which zshuffle does not support");
  fail_format(what, format, "which zshuffle does not support");
}

// Where an import reads its buffers from and writes its columns to.
struct import_place {
  memory_kind memory = memory_kind::host;
  cudaStream_t stream = nullptr;
};

void copy_bytes(void* dst, const void* src, std::size_t bytes, const import_place& place) {
  if (bytes == 0) return;
  if (place.memory == memory_kind::host) {
    std::memcpy(dst, src, bytes);
  } else {
    copy_async(dst, src, bytes, place.stream);
  }
}

// Host copies of `count` values of `T` at `src` (host or device memory).
template <typename T>
std::vector<T> read_values(const T* src, std::size_t count, const import_place& place) {
  std::vector<T> out(count);
  if (count == 0) return out;
  if (place.memory == memory_kind::host) {
    std::memcpy(out.data(), src, count * sizeof(T));
  } else {
    ZS_CUDA_TRY(cudaMemcpyAsync(out.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost, place.stream));
    ZS_CUDA_TRY(cudaStreamSynchronize(place.stream));
  }
  return out;
}

// Null slots in bits [begin, begin + rows) of an Arrow validity bitmap (bit i of byte i / 8,
// least significant first; 1 = valid).
std::uint64_t count_nulls(const void* validity, std::uint64_t begin, std::uint64_t rows, const import_place& place) {
  if (rows == 0) return 0;
  std::uint64_t const first_byte = begin / 8, end_bit = begin + rows;
  std::uint64_t const bytes = (end_bit + 7) / 8 - first_byte;
  std::vector<std::uint8_t> const bits =
      read_values(static_cast<const std::uint8_t*>(validity) + first_byte, bytes, place);
  std::uint64_t valid = 0;
  for (std::uint64_t bit = begin; bit < end_bit; ++bit) {
    valid += (bits[bit / 8 - first_byte] >> (bit % 8)) & 1u;
  }
  return rows - valid;
}

// Refuses nulls in rows [begin, begin + rows) of `array` (`what` names it in the message): the
// top-level struct's, which no zshuffle table can hold.
void check_no_nulls(const ArrowArray& array, std::uint64_t begin, std::uint64_t rows, const std::string& what,
                    const import_place& place) {
  if (array.null_count == 0) return;
  if (array.null_count < -1) fail_argument(what + " has null_count " + std::to_string(array.null_count));
  const void* validity = array.n_buffers > 0 ? array.buffers[0] : nullptr;
  if (validity == nullptr) {
    if (array.null_count == -1) return;  // unknown count, but no bitmap: every row is valid
    fail_argument(what + " has null_count " + std::to_string(array.null_count) + " but no validity buffer");
  }
  // The count covers the array's own range; the imported range may be a part of it.
  std::uint64_t const nulls = count_nulls(validity, begin, rows, place);
  if (nulls != 0) {
    ZS_FAIL(error_code::unsupported, what + " has " + std::to_string(nulls) +
                                         " null rows: nulls of whole rows are not supported (only columns carry "
                                         "null masks)");
  }
}

template <typename Offset>
column import_strings(const ArrowArray& array, std::uint64_t begin, std::uint64_t rows, const std::string& what,
                      const import_place& place) {
  const auto* offsets = static_cast<const Offset*>(array.buffers[1]);
  const auto* chars = static_cast<const char*>(array.buffers[2]);
  if (rows == 0) {
    // An empty slice needs no buffer at all (producers may pass NULL for them).
    column out = column::allocate(value_type::string, 0, place.memory, place.stream, 0);
    std::int64_t const zero = 0;
    copy_bytes(out.mutable_view().offsets, &zero, sizeof zero, place);
    return out;
  }
  if (offsets == nullptr) fail_argument(what + " has no offsets buffer");
  std::int64_t first = 0, last = 0;
  std::vector<Offset> host_offsets;  // the slice's rows + 1 offsets, for host arrays
  if (place.memory == memory_kind::host) {
    host_offsets.assign(offsets + begin, offsets + begin + rows + 1);
    for (std::uint64_t i = 0; i < rows; ++i) {
      if (host_offsets[i + 1] < host_offsets[i]) {
        fail_argument(what + " has decreasing string offsets at row " + std::to_string(i));
      }
    }
    first = host_offsets.front();
    last = host_offsets.back();
  } else {
    first = read_values(offsets + begin, 1, place)[0];
    last = read_values(offsets + begin + rows, 1, place)[0];
  }
  if (first < 0 || last < first) {
    fail_argument(what + " has string offsets from " + std::to_string(first) + " to " + std::to_string(last));
  }
  std::uint64_t const chars_bytes = static_cast<std::uint64_t>(last - first);
  if (chars == nullptr && chars_bytes != 0) fail_argument(what + " has no character buffer");

  column out = column::allocate(value_type::string, rows, place.memory, place.stream, chars_bytes);
  mutable_column_view const o = out.mutable_view();
  copy_bytes(o.data, chars + first, chars_bytes, place);
  if (place.memory == memory_kind::host) {
    for (std::uint64_t i = 0; i <= rows; ++i) o.offsets[i] = static_cast<std::int64_t>(host_offsets[i]) - first;
  } else if (sizeof(Offset) == sizeof(std::int64_t) && first == 0) {
    copy_bytes(o.offsets, offsets + begin, (rows + 1) * sizeof(std::int64_t), place);  // already an owning layout
  } else {
    kernels::arrow::rebase_offsets(offsets + begin, first, rows + 1, o.offsets, place.stream);
  }
  return out;
}

// Bits [begin, begin + rows) of the bitmap `bits` (host or device memory, as `place`) into
// `out` (null_mask_bytes(rows) bytes, same memory), starting at bit 0: a byte copy where `begin`
// is a multiple of 8, a shift of every byte otherwise.
void copy_bitmap(const std::uint8_t* bits, std::uint64_t begin, std::uint64_t rows, std::uint8_t* out,
                 const import_place& place) {
  if (rows == 0) return;
  if (begin % 8 == 0) {
    copy_bytes(out, bits + begin / 8, null_mask_bytes(rows), place);
    return;
  }
  if (place.memory == memory_kind::device) {
    kernels::arrow::copy_bits(bits, begin, rows, out, place.stream);
    return;
  }
  std::fill(out, out + null_mask_bytes(rows), std::uint8_t{0});
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (row_is_valid(bits, begin + i)) out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1U << (i % 8)));
  }
}

// Gives `out` the null mask of rows [begin, begin + rows) of `array` where it may hold nulls: a
// validity buffer and a null_count other than 0 (-1, unknown, included). Without a validity
// buffer every row is valid, and the column gets no mask.
void import_validity(const ArrowArray& array, std::uint64_t begin, std::uint64_t rows, const std::string& what,
                     const import_place& place, column& out) {
  if (array.null_count < -1) fail_argument(what + " has null_count " + std::to_string(array.null_count));
  if (array.null_count == 0) return;
  const auto* validity = static_cast<const std::uint8_t*>(array.buffers[0]);
  if (validity == nullptr) {
    if (array.null_count == -1) return;  // unknown count, but no bitmap: every row is valid
    fail_argument(what + " has null_count " + std::to_string(array.null_count) + " but no validity buffer");
  }
  std::uint8_t* mask = out.add_null_mask(place.stream);
  copy_bitmap(validity, begin, rows, mask, place);
}

column import_column(const ArrowSchema& schema, const ArrowArray& array, std::uint64_t struct_offset,
                     std::uint64_t rows, const std::string& what, const import_place& place) {
  if (schema.release == nullptr) fail_argument("the schema of " + what + " was released");
  if (array.release == nullptr) fail_argument(what + " was released");
  if (schema.dictionary != nullptr || array.dictionary != nullptr) {
    ZS_FAIL(error_code::unsupported, what + " is dictionary-encoded; decode it first (supported formats: " +
                                         std::string(supported_formats) + ")");
  }
  std::string_view const format = schema.format == nullptr ? std::string_view() : schema.format;
  import_format const parsed = parse_format(format, what);
  std::int64_t const buffers =
      parsed.layout == arrow_column_format::utf8 || parsed.layout == arrow_column_format::large_utf8 ? 3 : 2;
  if (array.n_buffers != buffers) {
    fail_argument(what + " (format '" + std::string(format) + "') has " + std::to_string(array.n_buffers) +
                  " buffers; that format has " + std::to_string(buffers));
  }
  if (array.buffers == nullptr) fail_argument(what + " has no buffers array");
  if (array.n_children != 0 || schema.n_children != 0) fail_argument(what + " has children; its format has none");
  if (array.length < 0 || array.offset < 0) {
    fail_argument(what + " has length " + std::to_string(array.length) + " and offset " + std::to_string(array.offset));
  }
  if (static_cast<std::uint64_t>(array.length) < struct_offset + rows) {
    fail_argument(what + " has " + std::to_string(array.length) + " rows, but the struct reads rows up to " +
                  std::to_string(struct_offset + rows) + ": children of unequal length");
  }
  std::uint64_t const begin = static_cast<std::uint64_t>(array.offset) + struct_offset;
  // Offsets and lengths come from outside: the slice's last value must be addressable.
  if (!count_fits(parsed.type, begin + rows) || begin + rows >= static_cast<std::uint64_t>(INT64_MAX)) {
    fail_argument(what + " has offset " + std::to_string(begin) + " and " + std::to_string(rows) +
                  " rows, past any addressable buffer");
  }

  column out;
  switch (parsed.layout) {
    case arrow_column_format::utf8: out = import_strings<std::int32_t>(array, begin, rows, what, place); break;
    case arrow_column_format::large_utf8: out = import_strings<std::int64_t>(array, begin, rows, what, place); break;
    case arrow_column_format::bool_bits: {
      const auto* bits = static_cast<const std::uint8_t*>(array.buffers[1]);
      if (bits == nullptr && rows != 0) fail_argument(what + " has no values buffer");
      out = column::allocate(value_type::bool8, rows, place.memory, place.stream);
      auto* values = static_cast<std::uint8_t*>(out.mutable_view().data);
      if (place.memory == memory_kind::device) {
        kernels::arrow::unpack_bits(bits, begin, rows, values, place.stream);
      } else {
        for (std::uint64_t i = 0; i < rows; ++i) values[i] = row_is_valid(bits, begin + i) ? 1 : 0;
      }
      break;
    }
    case arrow_column_format::fixed_width: {
      std::size_t const width = value_width(parsed.type);
      const void* values = array.buffers[1];
      if (values == nullptr && rows != 0) fail_argument(what + " has no values buffer");
      out = column::allocate(parsed.type, rows, place.memory, place.stream);
      if (rows != 0) {
        copy_bytes(out.mutable_view().data, static_cast<const std::byte*>(values) + begin * width, rows * width,
                   place);
      }
      break;
    }
  }
  out.set_logical(parsed.logical);
  import_validity(array, begin, rows, what, place, out);
  return out;
}

table import_struct(const ArrowSchema& schema, const ArrowArray& array, const import_place& place) {
  std::string_view const format = schema.format == nullptr ? std::string_view() : schema.format;
  if (format != "+s") {
    ZS_FAIL(error_code::unsupported, "the top-level Arrow array must be a struct (format \"+s\") with one child per "
                                     "column; got format '" + std::string(format) + "'");
  }
  if (schema.dictionary != nullptr || array.dictionary != nullptr) {
    ZS_FAIL(error_code::unsupported, "the top-level Arrow struct is dictionary-encoded");
  }
  if (array.n_buffers != 1) {
    fail_argument("the top-level Arrow struct has " + std::to_string(array.n_buffers) + " buffers; a struct has 1");
  }
  if (array.buffers == nullptr) fail_argument("the top-level Arrow struct has no buffers array");
  if (schema.n_children != array.n_children || schema.n_children < 0) {
    fail_argument("the Arrow schema has " + std::to_string(schema.n_children) + " children but the array has " +
                  std::to_string(array.n_children));
  }
  if (array.length < 0 || array.offset < 0) {
    fail_argument("the top-level Arrow struct has length " + std::to_string(array.length) + " and offset " +
                  std::to_string(array.offset));
  }
  std::uint64_t const rows = static_cast<std::uint64_t>(array.length);
  std::uint64_t const offset = static_cast<std::uint64_t>(array.offset);
  check_no_nulls(array, offset, rows, "the top-level Arrow struct", place);
  if (schema.n_children > 0 && (schema.children == nullptr || array.children == nullptr)) {
    fail_argument("the top-level Arrow struct has no children arrays");
  }

  table out;
  for (std::int64_t i = 0; i < schema.n_children; ++i) {
    const ArrowSchema* child_schema = schema.children[i];
    const ArrowArray* child_array = array.children[i];
    if (child_schema == nullptr || child_array == nullptr) fail_argument("child " + std::to_string(i) + " is null");
    std::string name = child_schema->name == nullptr ? std::string() : child_schema->name;
    std::string const what = column_label(name, static_cast<std::size_t>(i));
    out.columns.push_back(import_column(*child_schema, *child_array, offset, rows, what, place));
    out.names.push_back(std::move(name));
  }
  return out;
}

void check_handed(const ArrowSchema* schema, const ArrowArray* array) {
  if (schema == nullptr || array == nullptr) fail_argument("importing from Arrow needs a schema and an array, not null");
  if (schema->release == nullptr) fail_argument("the ArrowSchema was already released (release is NULL)");
  if (array->release == nullptr) fail_argument("the ArrowArray was already released (release is NULL)");
}

}  // namespace

void export_to_arrow(table&& t, ArrowSchema* schema, ArrowArray* array) {
  ZS_EXPECTS(schema != nullptr && array != nullptr, "an ArrowSchema and an ArrowArray to fill");
  std::uint64_t const rows = checked_row_count(t);
  check_memory(t, memory_kind::host, "export_to_arrow_device");
  export_checked(std::move(t), rows, memory_kind::host, schema, array, std::nullopt);
}

void export_to_arrow_device(table&& t, ArrowSchema* schema, ArrowDeviceArray* device_array,
                            std::optional<cudaStream_t> ready_on) {
  ZS_EXPECTS(schema != nullptr && device_array != nullptr, "an ArrowSchema and an ArrowDeviceArray to fill");
  std::uint64_t const rows = checked_row_count(t);
  check_memory(t, memory_kind::device, "export_to_arrow");
  int const device = device_of_columns(t);

  {
    // Bool columns are packed on the columns' GPU.
    int current = 0;
    ZS_CUDA_TRY(cudaGetDevice(&current));
    if (current != device) ZS_CUDA_TRY(cudaSetDevice(device));
    try {
      export_checked(std::move(t), rows, memory_kind::device, schema, &device_array->array, ready_on);
    } catch (...) {
      if (current != device) ZS_CUDA_TRY_NOTHROW(cudaSetDevice(current));
      throw;
    }
    if (current != device) ZS_CUDA_TRY(cudaSetDevice(current));
  }
  // The array's private data owns the event; sync_event points into it, so it lives as long.
  auto* data = static_cast<struct_array_data*>(device_array->array.private_data);
  device_array->device_id = device;
  device_array->device_type = ARROW_DEVICE_CUDA;
  device_array->sync_event = data->ready == nullptr ? nullptr : &data->ready;
  std::fill(std::begin(device_array->reserved), std::end(device_array->reserved), 0);
}

table import_from_arrow(ArrowSchema* schema, ArrowArray* array) {
  consumed_arrow_data consumed(schema, array);
  check_handed(schema, array);
  return import_struct(*schema, *array, import_place{memory_kind::host, nullptr});
}

table import_from_arrow_device(ArrowSchema* schema, ArrowDeviceArray* device_array, cudaStream_t stream) {
  consumed_arrow_data consumed(schema, device_array == nullptr ? nullptr : &device_array->array);
  if (device_array == nullptr) fail_argument("importing from Arrow needs a schema and a device array, not null");
  check_handed(schema, &device_array->array);
  switch (device_array->device_type) {
    case ARROW_DEVICE_CPU:
      return import_struct(*schema, device_array->array, import_place{memory_kind::host, nullptr});
    case ARROW_DEVICE_CUDA_HOST:
      if (device_array->sync_event != nullptr) {
        ZS_CUDA_TRY(cudaEventSynchronize(*static_cast<cudaEvent_t*>(device_array->sync_event)));
      }
      return import_struct(*schema, device_array->array, import_place{memory_kind::host, nullptr});
    case ARROW_DEVICE_CUDA: {
      int current = 0;
      ZS_CUDA_TRY(cudaGetDevice(&current));
      if (device_array->device_id != current) {
        fail_argument("the Arrow device array is on GPU " + std::to_string(device_array->device_id) + " but GPU " +
                      std::to_string(current) + " is current; make it current before importing");
      }
      consumed.copies_run_on(stream);
      if (device_array->sync_event != nullptr) {
        ZS_CUDA_TRY(cudaStreamWaitEvent(stream, *static_cast<cudaEvent_t*>(device_array->sync_event), 0));
      }
      table out = import_struct(*schema, device_array->array, import_place{memory_kind::device, stream});
      ZS_CUDA_TRY(cudaStreamSynchronize(stream));
      return out;
    }
    default:
      ZS_FAIL(error_code::unsupported, "Arrow device type " + std::to_string(device_array->device_type) +
                                           " is not supported (supported: ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA, "
                                           "ARROW_DEVICE_CUDA_HOST)");
  }
}

}  // namespace zs
