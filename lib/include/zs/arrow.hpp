// Arrow interop: zshuffle tables to and from the Arrow C Data Interface (ArrowSchema +
// ArrowArray, host memory) and the C Device Data Interface (ArrowDeviceArray, CUDA memory).
//
// A table travels as one struct array (format "+s") with one child per column, named by
// table.names. Column types (value type and logical type, zs/types.hpp) map onto Arrow formats
// as follows; every one is exported and imported:
//
//   zshuffle column                     Arrow format             Arrow type
//   int8, int16, int32, int64           "c", "s", "i", "l"       int8 ... int64
//   uint8, uint16, uint32, uint64       "C", "S", "I", "L"       uint8 ... uint64
//   float32, float64                    "f", "g"                 float32, float64
//   bool8                               "b"                      bool (a bitmap: converted)
//   string                              "U"                      large_utf8 (int64 offsets)
//   string (import only)                "u"                      utf8, widened to int64 offsets
//   int32 + date32                      "tdD"                    date32 (days)
//   int64 + date64                      "tdm"                    date64 (milliseconds)
//   int64 + timestamp[unit, zone]       "tss:zone" ... "tsn:zone" timestamp (zone may be empty)
//   int64 + duration[unit]              "tDs" ... "tDn"          duration
//   int32 + time32[s or ms]             "tts", "ttm"             time32
//   int64 + time64[us or ns]            "ttu", "ttn"             time64
//   int32 + decimal32(P, S)             "d:P,S,32"               decimal32
//   int64 + decimal64(P, S)             "d:P,S,64"               decimal64
//   int128 + decimal128(P, S)           "d:P,S" ("d:P,S,128" too) decimal128 (Arrow's default width)
//
// Refused on import with error_code::unsupported naming the column and its format: 256-bit
// decimals ("d:P,S,256": no zshuffle storage type), nested types
// (lists, structs, maps, unions: "+..."), dictionary-encoded columns, views ("vu", "vz"),
// binary, half floats, intervals and the null type.
//
// Nulls: a column's null mask is its child's validity buffer (buffer 0), and the child's flags
// say ARROW_FLAG_NULLABLE; a column without one exports a NULL validity buffer and null_count
// 0. Host exports count the nulls; device exports give null_count -1 (unknown), since counting
// would take a pass over device memory and a wait for the producer's stream. Imports take the
// validity buffer of the imported rows into the column's null mask (a byte copy where the
// slice starts at a multiple of 8 rows, a bit shift otherwise, on the GPU for CUDA arrays); a
// child with null_count 0 or without a validity buffer gets no mask. Nulls of the top-level
// struct (whole rows) are refused. The C structs are declared in zs/arrow_c_interface.h without
// any Arrow library; Arrow's or nanoarrow's own declarations can be included beside it.
//
// Export is zero-copy but for bool columns: the table is moved into the exported array, whose
// buffers ARE the columns' buffers (values, offsets, characters, null masks), and the array's
// release callback frees them. A bool8 column (a byte per value) is exported as Arrow's bitmap
// of values, written into a new buffer that the array owns. Import copies: zs::column owns its
// memory, so the imported table holds copies of the Arrow buffers (in host memory for host
// arrays, in device memory for CUDA arrays), taken from the array's offset and length (slices
// are honoured; string offsets are rebased to start at 0; bool bitmaps are expanded to a byte
// per value).
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
/// sharing their buffers. Each child is named by t.names (empty names when t.names is empty)
/// and typed by its column's value and logical types (the table above); its buffers are
/// {validity, values} or {validity, int64 offsets, characters}, the validity buffer being the
/// column's null mask (NULL without one, and the flags not nullable). Bool8 values are packed
/// into a bitmap the array owns. The release callbacks (one per schema and array
/// node, as the specification requires, so a consumer may move children out and release them
/// alone) free the columns; the consumer must call them exactly once.
///
/// Throws zs::error (invalid_argument) and leaves `t` untouched when schema or array is null,
/// t.names is neither empty nor one name per column, the columns have different lengths, or a
/// column lives in device memory (use export_to_arrow_device); unsupported, leaving `t`
/// untouched too, for an int128 column without a logical type (Arrow has no 128-bit integer:
/// give it decimal128(38, 0) to export it as a decimal128).
void export_to_arrow(table&& t, ArrowSchema* schema, ArrowArray* array);

/// Moves `t` (device columns only, all on one GPU) into `schema` and `device_array`: as
/// export_to_arrow, with device_type ARROW_DEVICE_CUDA and device_id the GPU that holds the
/// columns (the current device when the table holds no device memory).
///
/// With `ready_on`, the columns are still being written on that stream: an event is recorded
/// on it and sync_event points to its cudaEvent_t, which the consumer waits for before reading;
/// the array's release destroys it. Without, the data is ready and sync_event is NULL.
///
/// Bool8 columns are packed into bitmaps on the columns' GPU, on `ready_on` before its event
/// is recorded, or without it on the default stream, which is synchronised before return.
/// Null counts are -1 (unknown) for nullable columns.
///
/// Releasing frees the columns' device memory as zs::column does, on the stream each column was
/// allocated on (that stream must still exist); the packed bool bitmaps are freed on the stream
/// they were written on. The consumer's work on the buffers must be ordered before it.
///
/// Throws zs::error (invalid_argument) and leaves `t` untouched for the reasons of
/// export_to_arrow, or when a column lives in host memory or the columns are on different GPUs.
void export_to_arrow_device(table&& t, ArrowSchema* schema, ArrowDeviceArray* device_array,
                            std::optional<cudaStream_t> ready_on = std::nullopt);

/// A host table holding a copy of `array` (host memory), a struct array described by `schema`.
/// Columns are named by the children's schema names (NULL names become empty), typed by their
/// formats (the table above: a logical type where the format has one), and carry a null mask
/// where the child has a validity buffer and a null_count other than 0.
///
/// Takes ownership as a consumer of the C Data Interface does: schema and array are released
/// (their release callbacks called once, leaving release NULL) before this returns, whether it
/// succeeds or throws; a caller that needs them afterwards passes copies it made by moving
/// (the specification's "move": copy the struct, set the source's release to NULL).
///
/// Throws zs::error naming the offending column:
/// - invalid_argument: schema or array is null or already released (release NULL), the array
///   does not match the schema (child counts, buffer counts: 1 for the struct, 2 for
///   fixed-width and bool columns, 3 for strings), negative lengths or offsets, a null_count
///   below -1 or above 0 without a validity buffer, a child shorter than the struct's offset +
///   length, a missing buffer, string offsets that decrease or start below zero, or a decimal
///   whose precision its width cannot hold (decimal32 above 9 digits, decimal64 above 18,
///   decimal128 above 38).
/// - unsupported: a top level that is not a struct ("+s"), a format other than those above
///   (the message names the format and lists the supported ones), a dictionary-encoded column,
///   nulls in the top-level struct.
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
/// are checked. Validity bitmaps of slices not starting at a multiple of 8 rows are shifted,
/// and bool values expanded, by kernels on `stream`.
///
/// Ownership and errors are those of import_from_arrow; other device types are unsupported.
table import_from_arrow_device(ArrowSchema* schema, ArrowDeviceArray* device_array, cudaStream_t stream);

}  // namespace zs
