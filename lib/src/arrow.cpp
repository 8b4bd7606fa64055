#include "zs/arrow.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arrow/offset_kernels.hpp"
#include "zs/error.hpp"
#include "zs/memory.hpp"

namespace zs {
namespace {

constexpr const char* supported_formats =
    "i (int32), l (int64), I (uint32), L (uint64), f (float32), g (float64), u (utf8), U (large_utf8)";

const char* arrow_format(value_type type) {
  switch (type) {
    case value_type::int32: return "i";
    case value_type::int64: return "l";
    case value_type::uint32: return "I";
    case value_type::uint64: return "L";
    case value_type::float32: return "f";
    case value_type::float64: return "g";
    case value_type::string: return "U";
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

struct child_array_data {
  column values;
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
    for (const void* p : {v.data, static_cast<const void*>(v.offsets)}) {
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

// Builds the schema and array of `t` (already checked), then moves the columns in: nothing
// that can throw runs after the first column has moved, so a failure leaves `t` whole.
void export_checked(table&& t, std::uint64_t rows, memory_kind memory, ArrowSchema* schema, ArrowArray* array,
                    cudaEvent_t ready) {
  std::size_t const n = t.columns.size();

  auto schema_data = std::make_unique<struct_schema_data>();
  schema_data->children = std::make_unique<ArrowSchema[]>(n);
  std::vector<std::unique_ptr<child_schema_data>> child_schemas;
  auto array_data = std::make_unique<struct_array_data>();
  array_data->children = std::make_unique<ArrowArray[]>(n);
  std::vector<std::unique_ptr<child_array_data>> child_arrays;
  for (std::size_t i = 0; i < n; ++i) {
    child_schemas.push_back(std::make_unique<child_schema_data>());
    child_schemas.back()->name = t.names.empty() ? std::string() : t.names[i];
    child_arrays.push_back(std::make_unique<child_array_data>());
    schema_data->child_pointers.push_back(&schema_data->children[i]);
    array_data->child_pointers.push_back(&array_data->children[i]);
  }

  // From here on nothing throws.
  for (std::size_t i = 0; i < n; ++i) {
    column& c = t.columns[i];
    value_type const type = c.type();
    child_array_data& cd = *child_arrays[i];
    cd.values = std::move(c);
    column_view const v = cd.values.view();
    auto exported = [&](const void* p) -> const void* {
      return p == nullptr && memory == memory_kind::host ? empty_host_buffer : p;
    };
    cd.buffers[0] = nullptr;  // no validity buffer: no nulls
    if (type == value_type::string) {
      cd.buffers[1] = exported(v.offsets);
      cd.buffers[2] = exported(v.data);
    } else {
      cd.buffers[1] = exported(v.data);
    }

    ArrowSchema& cs = schema_data->children[i];
    cs = ArrowSchema{};
    cs.format = arrow_format(type);
    cs.name = child_schemas[i]->name.c_str();
    cs.flags = 0;  // not nullable: zshuffle columns hold no nulls
    cs.release = release_child_schema;
    cs.private_data = child_schemas[i].release();

    ArrowArray& ca = array_data->children[i];
    ca = ArrowArray{};
    ca.length = static_cast<std::int64_t>(rows);
    ca.n_buffers = type == value_type::string ? 3 : 2;
    ca.buffers = cd.buffers;
    ca.release = release_child_array;
    ca.private_data = child_arrays[i].release();
  }
  array_data->ready = ready;

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

enum class arrow_column_format { fixed_width, utf8, large_utf8 };

struct import_format {
  value_type type;
  arrow_column_format layout;
};

std::optional<import_format> parse_format(std::string_view format) {
  if (format == "i") return import_format{value_type::int32, arrow_column_format::fixed_width};
  if (format == "l") return import_format{value_type::int64, arrow_column_format::fixed_width};
  if (format == "I") return import_format{value_type::uint32, arrow_column_format::fixed_width};
  if (format == "L") return import_format{value_type::uint64, arrow_column_format::fixed_width};
  if (format == "f") return import_format{value_type::float32, arrow_column_format::fixed_width};
  if (format == "g") return import_format{value_type::float64, arrow_column_format::fixed_width};
  if (format == "u") return import_format{value_type::string, arrow_column_format::utf8};
  if (format == "U") return import_format{value_type::string, arrow_column_format::large_utf8};
  return std::nullopt;
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

// Refuses nulls in rows [begin, begin + rows) of `array` (`what` names it in the message).
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
                                         " null rows: null masks are not supported yet");
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

column import_column(const ArrowSchema& schema, const ArrowArray& array, std::uint64_t struct_offset,
                     std::uint64_t rows, const std::string& what, const import_place& place) {
  if (schema.release == nullptr) fail_argument("the schema of " + what + " was released");
  if (array.release == nullptr) fail_argument(what + " was released");
  if (schema.dictionary != nullptr || array.dictionary != nullptr) {
    ZS_FAIL(error_code::unsupported, what + " is dictionary-encoded; decode it first (supported formats: " +
                                         std::string(supported_formats) + ")");
  }
  std::string_view const format = schema.format == nullptr ? std::string_view() : schema.format;
  std::optional<import_format> const parsed = parse_format(format);
  if (!parsed) {
    ZS_FAIL(error_code::unsupported, what + " has Arrow format '" + std::string(format) +
                                         "', which zshuffle does not support (supported: " + supported_formats + ")");
  }
  std::int64_t const buffers = parsed->layout == arrow_column_format::fixed_width ? 2 : 3;
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
  if (!count_fits(parsed->type, begin + rows) || begin + rows >= static_cast<std::uint64_t>(INT64_MAX)) {
    fail_argument(what + " has offset " + std::to_string(begin) + " and " + std::to_string(rows) +
                  " rows, past any addressable buffer");
  }
  check_no_nulls(array, begin, rows, what, place);

  switch (parsed->layout) {
    case arrow_column_format::utf8: return import_strings<std::int32_t>(array, begin, rows, what, place);
    case arrow_column_format::large_utf8: return import_strings<std::int64_t>(array, begin, rows, what, place);
    case arrow_column_format::fixed_width: break;
  }
  std::size_t const width = value_width(parsed->type);
  const void* values = array.buffers[1];
  if (values == nullptr && rows != 0) fail_argument(what + " has no values buffer");
  column out = column::allocate(parsed->type, rows, place.memory, place.stream);
  if (rows != 0) copy_bytes(out.mutable_view().data, static_cast<const std::byte*>(values) + begin * width,
                            rows * width, place);
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
  export_checked(std::move(t), rows, memory_kind::host, schema, array, nullptr);
}

void export_to_arrow_device(table&& t, ArrowSchema* schema, ArrowDeviceArray* device_array,
                            std::optional<cudaStream_t> ready_on) {
  ZS_EXPECTS(schema != nullptr && device_array != nullptr, "an ArrowSchema and an ArrowDeviceArray to fill");
  std::uint64_t const rows = checked_row_count(t);
  check_memory(t, memory_kind::device, "export_to_arrow");
  int const device = device_of_columns(t);

  cudaEvent_t ready = nullptr;
  if (ready_on) {
    ZS_CUDA_TRY(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    cudaError_t const recorded = cudaEventRecord(ready, *ready_on);
    if (recorded != cudaSuccess) {
      ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(ready));
      ZS_CUDA_TRY(recorded);
    }
  }
  try {
    export_checked(std::move(t), rows, memory_kind::device, schema, &device_array->array, ready);
  } catch (...) {
    if (ready != nullptr) ZS_CUDA_TRY_NOTHROW(cudaEventDestroy(ready));
    throw;
  }
  // The array's private data owns the event; sync_event points into it, so it lives as long.
  device_array->device_id = device;
  device_array->device_type = ARROW_DEVICE_CUDA;
  device_array->sync_event =
      ready == nullptr ? nullptr : &static_cast<struct_array_data*>(device_array->array.private_data)->ready;
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
