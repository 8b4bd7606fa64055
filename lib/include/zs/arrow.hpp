// Arrow interop: zshuffle tables to and from the Arrow C Data Interface (ArrowSchema +
// ArrowArray, host memory) and the C Device Data Interface (ArrowDeviceArray, CUDA memory).
//
// A table travels as one struct array (format "+s") with one child per column, named by
// table.names. Column types map onto Arrow formats as follows:
//
//   zshuffle   Arrow format                          export   import
//   int32      "i"                                   yes      yes
//   int64      "l"                                   yes      yes
//   uint32     "I"                                   yes      yes
//   uint64     "L"                                   yes      yes
//   float32    "f"                                   yes      yes
//   float64    "g"                                   yes      yes
//   string     "U" large_utf8 (int64 offsets)        yes      yes
//   string     "u" utf8 (int32 offsets)              -        yes, widened to int64 offsets
//
// Any other format (bool, int8/16, decimals, dates, nested types ...) is refused on import with
// error_code::unsupported naming the column. Columns carry no null masks yet: exports have no
// validity buffer (null_count 0), and imports refuse a column with nulls (a validity buffer is
// fine when it marks every row of the imported range valid). The C structs are declared in
// zs/arrow_c_interface.h without any Arrow library; Arrow's or nanoarrow's own declarations
// can be included beside it.
//
// Export is zero-copy: the table is moved into the exported array, whose buffers ARE the
// columns' buffers, and the array's release callback frees them. Import copies: zs::column
// owns its memory, so the imported table holds copies of the Arrow buffers (in host memory for
// host arrays, in device memory for CUDA arrays), taken from the array's offset and length
// (slices are honoured; string offsets are rebased to start at 0).
//
// Example: a table to a library that speaks the C Data Interface, and back.
//
//   ArrowSchema schema;
//   ArrowArray array;
//   zs::export_to_arrow(std::move(table), &schema, &array);   // table's columns now owned by array
//   consumer_takes(&schema, &array);                           // the consumer calls release
//
//   zs::table copy = zs::import_from_arrow(&schema, &array);  // releases schema and array
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "zs/arrow_c_interface.h"
#include "zs/column.hpp"

namespace zs {

/// Moves `t` (host columns only) into `schema` and `array`: a struct array of t's columns,
/// sharing their buffers. Each child is named by t.names (empty names when t.names is empty);
/// a child's flags say it is not nullable, its buffers are {NULL validity, values} or
/// {NULL validity, int64 offsets, characters}. The release callbacks (one per schema and array
/// node, as the specification requires, so a consumer may move children out and release them
/// alone) free the columns; the consumer must call them exactly once.
///
/// Throws zs::error (invalid_argument) and leaves `t` untouched when schema or array is null,
/// t.names is neither empty nor one name per column, the columns have different lengths, or a
/// column lives in device memory (use export_to_arrow_device).
void export_to_arrow(table&& t, ArrowSchema* schema, ArrowArray* array);

/// Moves `t` (device columns only, all on one GPU) into `schema` and `device_array`: as
/// export_to_arrow, with device_type ARROW_DEVICE_CUDA and device_id the GPU that holds the
/// columns (the current device when the table holds no device memory).
///
/// With `ready_on`, the columns are still being written on that stream: an event is recorded
/// on it and sync_event points to its cudaEvent_t, which the consumer waits for before reading;
/// the array's release destroys it. Without, the data is ready and sync_event is NULL.
///
/// Releasing frees the columns' device memory as zs::column does, on the stream each column was
/// allocated on (that stream must still exist); the consumer's work on the buffers must be
/// ordered before it.
///
/// Throws zs::error (invalid_argument) and leaves `t` untouched for the reasons of
/// export_to_arrow, or when a column lives in host memory or the columns are on different GPUs.
void export_to_arrow_device(table&& t, ArrowSchema* schema, ArrowDeviceArray* device_array,
                            std::optional<cudaStream_t> ready_on = std::nullopt);

/// A host table holding a copy of `array` (host memory), a struct array described by `schema`.
/// Columns are named by the children's schema names (NULL names become empty).
///
/// Takes ownership as a consumer of the C Data Interface does: schema and array are released
/// (their release callbacks called once, leaving release NULL) before this returns, whether it
/// succeeds or throws; a caller that needs them afterwards passes copies it made by moving
/// (the specification's "move": copy the struct, set the source's release to NULL).
///
/// Throws zs::error naming the offending column:
/// - invalid_argument: schema or array is null or already released (release NULL), the array
///   does not match the schema (child counts, buffer counts: 1 for the struct, 2 for
///   fixed-width columns, 3 for strings), negative lengths or offsets, a child shorter than the
///   struct's offset + length, a missing buffer, or string offsets that decrease or start below
///   zero.
/// - unsupported: a top level that is not a struct ("+s"), a format other than those above
///   (the message lists the supported ones), a dictionary-encoded column, a column or struct with
///   nulls ("null masks are not supported yet").
/// Children longer than the struct needs are read over the struct's rows only, as Arrow does.
table import_from_arrow(ArrowSchema* schema, ArrowArray* array);

/// A table holding a copy of `device_array`, described by `schema`: device columns when its
/// device_type is ARROW_DEVICE_CUDA, host columns for ARROW_DEVICE_CPU and
/// ARROW_DEVICE_CUDA_HOST (pinned host memory). For CUDA, device_id must be the current device,
/// `stream` must belong to it, the copies wait on the sync event (when not NULL) and run on
/// `stream`; utf8 offsets are widened and string offsets rebased there. This synchronises
/// `stream` before it releases the array, so the producer's buffers outlive the copies and the
/// returned columns are ready to use; for CUDA_HOST it waits for the sync event on the host.
/// String offsets in device memory are trusted: only the first and the last offset of the range
/// are checked.
///
/// Ownership and errors are those of import_from_arrow; other device types are unsupported.
table import_from_arrow_device(ArrowSchema* schema, ArrowDeviceArray* device_array, cudaStream_t stream);

}  // namespace zs
