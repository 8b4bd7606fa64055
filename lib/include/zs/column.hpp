// Columns and tables, on the host or on the device.
//
// Fixed-width columns hold `count` values. String columns use the Arrow large-string layout:
// count + 1 int64 offsets (offsets[0] == 0 for an owning column) into a character buffer.
//
// Nulls: a column may carry a null mask, an Arrow validity bitmap in the column's memory: bit
// (i % 8) of byte i / 8 is 1 where row i holds a value and 0 where it is null. A column without
// one has no nulls. The values under a null row are unspecified (they may be anything, and
// operations need not keep them); string offsets stay non-decreasing (a null string may hold
// characters or none).
//
// Logical types: a column may carry a logical type over its storage type (zs/types.hpp: a date
// over int32, a timestamp or decimal64 over int64 ...). It is metadata: views do not carry it,
// codecs and collectives move the storage, and copy_to keeps it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zs/error.hpp"
#include "zs/memory.hpp"
#include "zs/types.hpp"

namespace zs {

enum class memory_kind : std::uint8_t { host, device };

/// Bytes of the null mask of `count` rows: one bit per row, rounded up to whole bytes.
ZS_HD constexpr std::uint64_t null_mask_bytes(std::uint64_t count) noexcept { return count / 8 + (count % 8 != 0); }

/// Whether row `row` of the validity bitmap `mask` holds a value (nullptr: every row does).
/// Host memory only.
inline bool row_is_valid(const std::uint8_t* mask, std::uint64_t row) noexcept {
  return mask == nullptr || ((mask[row / 8] >> (row % 8)) & 1U) != 0;
}

/// A non-owning view of a column.
struct column_view {
  value_type type = value_type::int32;
  std::uint64_t count = 0;
  memory_kind memory = memory_kind::host;
  const void* data = nullptr;             // values; for strings, the character buffer
  const std::int64_t* offsets = nullptr;  // strings only: count + 1 offsets into `data`
  const std::uint8_t* null_mask = nullptr;  // validity bitmap (see above); nullptr: no nulls

  template <typename T> const T* values() const noexcept { return static_cast<const T*>(data); }
  bool nullable() const noexcept { return null_mask != nullptr; }
};

/// A non-owning, writable view of a column.
struct mutable_column_view {
  value_type type = value_type::int32;
  std::uint64_t count = 0;
  memory_kind memory = memory_kind::host;
  void* data = nullptr;
  std::int64_t* offsets = nullptr;
  std::uint8_t* null_mask = nullptr;

  template <typename T> T* values() const noexcept { return static_cast<T*>(data); }
  operator column_view() const noexcept { return {type, count, memory, data, offsets, null_mask}; }
};

/// An owning column. Move-only; device memory is freed on the stream it was allocated on.
class column {
 public:
  column() = default;

  /// An uninitialised column of `count` values (and `chars_bytes` characters for strings).
  static column allocate(value_type type, std::uint64_t count, memory_kind memory,
                         cudaStream_t stream = nullptr, std::uint64_t chars_bytes = 0);

  /// A host column holding a copy of `values`.
  template <typename T>
  static column from_values(std::span<const T> values) {
    column c = allocate(value_type_of<T>::value, values.size(), memory_kind::host);
    if (!values.empty()) std::copy(values.begin(), values.end(), c.mutable_view().values<T>());
    return c;
  }
  /// A host string column holding a copy of `strings`.
  static column from_strings(std::span<const std::string> strings);

  value_type type() const noexcept { return type_; }
  std::uint64_t size() const noexcept { return count_; }
  memory_kind memory() const noexcept { return memory_; }
  /// Character bytes of a string column; count x width for fixed-width columns.
  std::uint64_t data_bytes() const noexcept { return data_bytes_; }
  /// Whether the column carries a null mask (it may still have no null rows).
  bool nullable() const noexcept { return !std::holds_alternative<std::monostate>(null_mask_); }

  /// Gives the column a null mask of null_mask_bytes(size()) bytes in its memory, ordered on
  /// `stream`, and returns it. Its content is uninitialised: the caller writes every byte (bits
  /// past the last row are ignored). Replaces a mask the column had.
  std::uint8_t* add_null_mask(cudaStream_t stream = nullptr);
  /// Removes the null mask: every row holds a value again.
  void drop_null_mask() noexcept { null_mask_ = std::monostate{}; }
  /// Device columns: the stream their memory is freed on (the one it was allocated on until
  /// this is called), for a column handed to work on another stream. The caller orders `stream`
  /// after every use of the column.
  void set_stream(cudaStream_t stream) noexcept;

  /// The logical type over the storage type (kind none unless set).
  const logical_type& logical() const noexcept { return logical_; }
  /// Sets the logical type. Throws zs::error (invalid_argument) when it does not lie over the
  /// column's storage type (check_logical_type), leaving the column as it was.
  void set_logical(logical_type type);

  column_view view() const noexcept;
  mutable_column_view mutable_view() noexcept;

  /// A copy in `memory`, ordered on `stream` (synchronised before return when it lands on the
  /// host, so the result is ready to read).
  column copy_to(memory_kind memory, cudaStream_t stream) const;

  /// The strings of a host string column, for tests and tools (null rows as they are stored).
  std::vector<std::string> strings() const;
  /// Row i's validity, of a host column (true for every row of a column without a mask).
  std::vector<bool> validity() const;

 private:
  using storage = std::variant<std::monostate, host_buffer, device_buffer>;
  static storage make_storage(std::size_t bytes, memory_kind memory, cudaStream_t stream);
  static void* data_of(storage& s) noexcept;

  value_type type_ = value_type::int32;
  std::uint64_t count_ = 0;
  std::uint64_t data_bytes_ = 0;
  memory_kind memory_ = memory_kind::host;
  logical_type logical_;
  storage data_;
  storage offsets_;
  storage null_mask_;
};

/// Named columns of equal length.
struct table {
  std::vector<std::string> names;
  std::vector<column> columns;
};

}  // namespace zs
