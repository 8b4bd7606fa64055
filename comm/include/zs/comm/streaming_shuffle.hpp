// A streaming shuffle: partitions inserted piece by piece as they are produced, exchanged in
// batches while production goes on, and kept under a memory budget on arrival until extracted.
//
//   zs::streaming_shuffle s(nccl, {"key", "value"}, {int64, float64}, 64, {.budget_bytes = 8 << 30}, stream);
//   for (auto& chunk : produce())                  // any number of chunks per rank
//   {
//     for (auto& [p, piece] : split(chunk)) s.insert(p, std::move(piece));   // local, never waits
//     s.progress();                                // collective: exchanges when a rank's buffer is full
//   }
//   s.insert_finished();                           // collective: the last exchange
//   for (std::uint32_t p : s.owned_partitions()) consume(s.extract(p));       // local
//
// Partitions and ranks: P partitions (P may outnumber the ranks, or fall short of them), in
// contiguous blocks: rank r owns partitions [first_partition(r), first_partition(r + 1)) with
// first_partition(r) = ceil(r x P / R), so partition p lives on rank floor(p x R / P) (owner()).
// With P = R x k this is shuffle_table's map for k partitions per rank, so the same data gives
// the same rows.
//
// When ranks meet (the whole collective model; nothing else communicates):
//   insert           local: checks the piece and buffers it (send side, outside the budget).
//   progress()       collective, called by every rank at the same points (e.g. once per chunk
//                    produced, with ranks producing the same number of chunks, or at a fixed
//                    cadence): one small allreduce; when any rank has buffered at least
//                    options.batch_bytes, every rank exchanges its buffer (as flush()), by
//                    default on a thread of its own while the caller goes on inserting
//                    (options.overlap); the next collective call waits for it.
//   flush()          collective: every rank exchanges what it has buffered (maybe nothing).
//   insert_finished  collective: the last flush; afterwards every partition is complete.
//   extract          local, after insert_finished: every rank has finished, so nothing more can
//                    arrive. (So "wait and extract" is insert_finished followed by extract.)
// Every collective is one zs::shuffle (or none when no rank buffered anything) between small
// host collectives, entered by every rank in the same order, so the ranks cannot deadlock as
// long as they call the same collectives the same number of times.
//
// One exchange: the buffered pieces are concatenated in partition order (so the rows to rank r
// are contiguous), each rank tells each owner how many rows of each partition follow, and
// zs::shuffle moves the columns with options.shuffle (codecs, planner, rounds). On arrival the
// rows are cut into one piece per (source rank, partition) and put into a zs::partition_store
// with the budget options.budget_bytes: when keeping a piece would pass it, older pieces are
// spilled to host memory, compressed (zs/spill.hpp), and come back on extract. The budget holds
// the received data at rest (the store's resident bytes): it is never exceeded, and stats()
// reports the high-water mark. The exchange's own buffers (the shuffle's rounds and the batch
// it receives before cutting) are transient and bounded by batch_bytes x ranks and round_bytes.
//
// extract(p) returns the partition's rows as one table: ordered by source rank, and within one
// source as that rank inserted them (across batches too): exactly the rows, in the order, that
// shuffle_table would give that partition for the same per-rank inputs.
//
// Null masks: nullable columns keep their masks through the exchange (zs::shuffle carries them),
// the store (they count against the budget and are spilled with their columns) and extract; a
// piece without a mask in a column other pieces have one for counts as all valid.
//
// Paths: the GPU path (device_communicator; device columns, the GPU codecs) and the CPU
// reference path (communicator; host columns, the CPU codecs), as zs::shuffle. On the GPU path
// the caller's `stream` orders what insert reads and what extract returns; the exchanges and the
// store work on a stream the shuffle owns, ordered with the caller's by events, so that they run
// beside what the caller enqueues meanwhile.
//
// Failures are zs::error:
//   - local (this rank only, nothing changes): a partition out of range, a piece whose columns
//     do not match the declared names' count and types or are of unequal length or in the wrong
//     memory (invalid_argument), insert after insert_finished (invalid_argument), extract before
//     insert_finished, of a partition another rank owns, or of one already extracted
//     (invalid_argument, naming the partition and its owner).
//   - collective (every rank throws, the message naming the failing ranks and why): the
//     constructor when the ranks disagree on the partitions, column count or types; an exchange
//     that fails on any rank (out of memory, a damaged frame, a spill that finds no host
//     memory). A failure before the data moves keeps every buffered piece (flush may be called
//     again); a failure after it leaves the shuffle broken: later calls throw invalid_argument
//     saying so, since a rank may have lost received rows. An exchange that runs on its own
//     thread reports its failure at the next collective call, on every rank; pieces it gives
//     back go before those inserted since.
//
// Not thread safe: one caller at a time, like the communicators under it. While an exchange
// runs on its own thread, the caller may insert, but must not call the communicator itself
// (its collectives would interleave with the exchange's); stats() and spill_codec() wait for
// it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zs/column.hpp"
#include "zs/comm/communicator.hpp"
#include "zs/comm/device_communicator.hpp"
#include "zs/comm/shuffle.hpp"
#include "zs/partition.hpp"
#include "zs/partition_store.hpp"
#include "zs/types.hpp"

namespace zs {

struct streaming_shuffle_options {
  /// Bytes the received pieces at rest may hold on this rank (partition_store's budget), in the
  /// path's memory.
  std::uint64_t budget_bytes = std::uint64_t{1} << 30;
  /// progress() exchanges once any rank has buffered this many bytes (as partition_store counts).
  std::uint64_t batch_bytes = std::uint64_t{256} << 20;
  /// Which received pieces spill first, and how (codec chosen per column against PCIe unless
  /// forced).
  spill_policy policy = spill_policy::oldest_first;
  spill_options spill;
  /// Received device pieces are kept compressed on the device, and move to host memory as
  /// their frames (partition_store_options::keep_compressed).
  bool keep_compressed = false;
  /// How each exchange moves the columns (every rank the same, as zs::shuffle requires).
  shuffle_options shuffle;
  /// progress() runs the exchange it starts on a thread of its own and returns, so that the
  /// caller produces the next pieces while the batch moves; the next collective call (progress,
  /// flush, insert_finished) waits for it first. Only where the communicator may be called from
  /// another thread (communicator::callable_from_any_thread: MPI at MPI_THREAD_SERIALIZED or
  /// above); elsewhere, and with false, progress() exchanges before it returns. flush() and
  /// insert_finished() always do.
  bool overlap = true;
};

struct streaming_shuffle_stats {
  std::uint64_t exchanges = 0;           // zs::shuffle calls made
  std::uint64_t background_exchanges = 0;  // of which on a thread of their own (options.overlap)
  std::uint64_t inserted_bytes = 0;      // bytes this rank inserted
  std::uint64_t received_bytes = 0;      // bytes this rank received
  std::uint64_t buffered_bytes = 0;      // inserted here, not yet exchanged
  std::uint64_t sent_wire_bytes = 0;     // frame bytes sent (zs::shuffle's wire_bytes, summed)
  double exchange_seconds = 0;           // wall time of the exchanges on this rank, made of:
  double shuffle_seconds = 0;            //   in zs::shuffle (codecs and transfers)
  double store_seconds = 0;              //   cutting what arrived and storing it (spills included)
  double overlap_wait_seconds = 0;       // the caller's wait for exchanges run on their own thread
  double extract_seconds = 0;            // wall time of extract on this rank (restores included)
  partition_store_stats store;           // resident and spilled received data, high-water mark
};

class streaming_shuffle {
 public:
  /// GPU path. Collective over `comm` (checks that every rank declares the same partitions,
  /// column count and types). `names` and `types` describe the columns of every piece.
  streaming_shuffle(device_communicator& comm, std::vector<std::string> names, std::vector<value_type> types,
                    std::uint32_t partitions, streaming_shuffle_options options, cudaStream_t stream);
  /// CPU reference path over host columns. Collective over `comm`.
  streaming_shuffle(communicator& comm, std::vector<std::string> names, std::vector<value_type> types,
                    std::uint32_t partitions, streaming_shuffle_options options);
  ~streaming_shuffle();
  streaming_shuffle(streaming_shuffle&&) noexcept;
  streaming_shuffle& operator=(streaming_shuffle&&) noexcept;
  streaming_shuffle(const streaming_shuffle&) = delete;
  streaming_shuffle& operator=(const streaming_shuffle&) = delete;

  std::uint32_t partitions() const noexcept;
  /// The rank that owns partition p (see above).
  int owner(std::uint32_t partition) const;
  /// The partitions this rank owns, ascending.
  std::vector<std::uint32_t> owned_partitions() const;

  /// Local. Buffers `piece` (columns as declared; names ignored) for partition `partition`.
  /// An empty piece is accepted and ignored. On a failure `piece` stays with the caller.
  void insert(std::uint32_t partition, table&& piece);
  /// Local. Every partition's rows of a table in partition order (hash_partition or
  /// range_partition with partitions() partitions): one piece per non-empty partition, copied.
  /// On a failure nothing is buffered.
  void insert(const partitioned_table& parts);
  /// Local: whether this rank's buffer has reached batch_bytes.
  bool wants_exchange() const noexcept;
  /// Collective: exchanges when any rank wants_exchange(); returns whether it did.
  bool progress();
  /// Collective: exchanges every rank's buffer now.
  void flush();
  /// Collective: the last exchange; afterwards partitions can be extracted.
  void insert_finished();
  bool finished() const noexcept;

  /// Local, after insert_finished: the rows of a partition this rank owns (see above for their
  /// order), in the path's memory (device results ready on the stream). The partition then
  /// leaves the shuffle.
  table extract(std::uint32_t partition);

  const streaming_shuffle_stats& stats() const;
  /// The codec this rank's store spills column `column` with (partition_store::chosen_codec);
  /// unset while it has spilled none of it.
  std::optional<codec_id> spill_codec(std::size_t column) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace zs
