// Compressed all-gather and broadcast of columns.
//
// The companions of the compressed shuffle (shuffle.hpp) for data every rank needs: a small
// dimension table broadcast before a join, or per-rank results gathered everywhere. Each column
// is encoded once into a frame (docs/FORMAT.md), the frames move, and every rank decodes them
// into freshly allocated columns:
//
//   allgather   rank p contributes columns[c]; on every rank, output c holds the rows of
//               columns[c] of rank 0, then rank 1, ... (rank order)
//   broadcast   the root's columns land on every rank, the root included
//
//   1. agree     every rank's arguments are valid (one word per rank), and every rank passes the
//                same number of columns, of the same types, with the same codec (and, for
//                broadcast, the same root): one more word per rank
//      strings   a string column left to default_codec (fsst) takes fsst_dict where the
//                contributors' estimates, added up over the ranks (two allreduces a column),
//                make it at most 7/8 of fsst's bytes: one codec a column, on every rank
//   2. encode    each contributed column into one frame: one batched encode per codec for all
//                columns, then the frames are packed back to back at frame_alignment multiples;
//                the ranks agree that every contributor encoded
//   3. metadata  rows, characters and frame bytes of every contributed column reach every rank
//                (over the host communicator) in a sealed block that each rank checks, so
//                outputs are allocated once, at their final size
//   4. frames    one allgatherv (or bcast) of the packed frames
//   5. decode    one batched decode per codec, straight into the outputs; every frame's status
//                is checked
//
// Contract shared by the four functions:
//   - Collective over `comm`: every rank calls the same function, in the same order as the
//     other collectives on `comm` (and on its host communicator).
//   - Every rank passes the same number of columns, of the same value types, and the same
//     options. Host versions take host columns (memory_kind::host) and run the CPU reference
//     codecs; device versions take device columns and run the GPU codecs.
//   - String columns may be slices: their offsets need not start at 0. Outputs are owning
//     columns whose string offsets start at 0.
//   - Codecs: options.codec for every column when set, otherwise default_codec(type) per
//     column, or fsst_dict for a string column as step 1 chooses (stats->column_codecs says
//     which). options.round_bytes is ignored: these collectives are not split into rounds.
//     options.timeout, when set, is the communicator's timeout for the call only.
//   - Memory: everything moves at once. Besides its outputs (all ranks' rows of every column,
//     uncompressed), a rank holds every contributor's frames (the compressed size of all
//     gathered data) while they decode, and, while it encodes, the encoder's worst-case room for
//     its own columns (about their uncompressed size). Data too large for that belongs in the
//     shuffle, whose rounds bound memory.
//   - Nulls: a column's null mask travels with it, as in the shuffle (shuffle.hpp, "Nulls"): its
//     validity as one byte per row beside it, compressed by bitpack (raw when options.codec is
//     codec_id::raw), packed back into the output's mask. A column nullable on some contributor
//     (allgather: any rank; broadcast: the root) is nullable on every rank's output, and a
//     contributor whose column has no mask sends every row as valid. Two small all-gathers per
//     call find the nullable columns; the validity's bytes are in the stats' totals.
//   - stats (optional): raw_bytes and wire_bytes are the uncompressed and the frame bytes
//     (headers and alignment included) that this rank contributes, counted once and not once
//     per receiver (allgather), or those of the root's columns, reported on every rank
//     (broadcast); rounds is 1, or 0 with no columns; seconds is this rank's wall time.
//
// Failures never hang and never return wrong data. When any rank passes a bad argument, runs
// out of memory, or receives column sizes or a frame that fail their checksum or checks, EVERY
// rank throws zs::error:
//   invalid_argument  a rank's column is malformed (bad type, wrong memory kind, null data for
//                     rows), or the ranks disagree on column count, types, codecs or root;
//   unsupported       the chosen codec does not encode a column's type (the same on every rank);
//   out_of_memory     some rank could not allocate its buffers or outputs;
//   corrupt_frame     a frame, or a rank's column sizes, failed validation on some rank;
//   cuda_error ...    what the failing rank saw.
// Ranks agree on these before every exchange that could otherwise wait forever; every rank's
// message names each failing rank and what failed there ("allgather: checking the arguments
// failed on rank 1: invalid argument: column 0 (int32): 4 rows but no data"). No output is
// returned and the communicator stays usable. Errors of the transport itself (mpi_error,
// nccl_error) are the exception: the collective may then have completed on some ranks only, as
// in communicator.hpp. A peer that stops answering is caught by the communicator's timeout
// (options.timeout for this call; see shuffle.hpp and docs/SHUFFLE.md, "Failure model").
#pragma once

#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/shuffle.hpp"

namespace zs {

/// GPU all-gather of columns. Each rank contributes `columns` (device memory); returns, on
/// every rank, one device column per input column holding every rank's rows in rank order.
///
/// Runs on `stream` after the work already enqueued there, and returns when the outputs are
/// decoded and every frame has been checked (so `stream` has been synchronised); the outputs are
/// allocated on `stream`. Frames move through comm.allgatherv with sizes that the ranks agreed
/// on beforehand.
std::vector<column> allgather(device_communicator& comm, std::span<const column_view> columns,
                              const shuffle_options& options, cudaStream_t stream,
                              shuffle_stats* stats = nullptr);

/// The same all-gather with the CPU reference codecs, over host memory.
std::vector<column> allgather(communicator& comm, std::span<const column_view> columns,
                              const shuffle_options& options, shuffle_stats* stats = nullptr);

/// GPU broadcast of columns: returns, on every rank, device copies of the columns that rank
/// `root` passed.
///
/// On the root, `columns` are the device columns to send. On the other ranks only each view's
/// `type` is read (count, memory, data and offsets are ignored), so they may pass views that
/// name types only, or the same kind of columns they would pass as root; the types must match
/// the root's, column by column. `root` must be the same on every rank, in [0, comm.size()).
///
/// The root's outputs are decoded from the frames it sent, like everyone else's, so every
/// rank's outputs come out of the same bytes. Stream behaviour as for allgather; frames move
/// through comm.bcast.
std::vector<column> broadcast(device_communicator& comm, std::span<const column_view> columns, int root,
                              const shuffle_options& options, cudaStream_t stream,
                              shuffle_stats* stats = nullptr);

/// The same broadcast with the CPU reference codecs, over host memory.
std::vector<column> broadcast(communicator& comm, std::span<const column_view> columns, int root,
                              const shuffle_options& options, shuffle_stats* stats = nullptr);

}  // namespace zs
