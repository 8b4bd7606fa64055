#include "zs/column.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace zs {

column::storage column::make_storage(std::size_t bytes, memory_kind memory, cudaStream_t stream) {
  if (memory == memory_kind::device) return device_buffer(bytes, stream);
  return host_buffer(bytes);
}

void* column::data_of(storage& s) noexcept {
  if (auto* h = std::get_if<host_buffer>(&s)) return h->data();
  if (auto* d = std::get_if<device_buffer>(&s)) return d->data();
  return nullptr;
}

void column::set_stream(cudaStream_t stream) noexcept {
  for (storage* s : {&data_, &offsets_, &null_mask_}) {
    if (auto* d = std::get_if<device_buffer>(s)) d->set_stream(stream);
  }
}

column column::allocate(value_type type, std::uint64_t count, memory_kind memory,
                        cudaStream_t stream, std::uint64_t chars_bytes) {
  ZS_EXPECTS(is_valid(type), "a valid value type");
  ZS_EXPECTS(type == value_type::string || chars_bytes == 0,
             "chars_bytes is only for string columns");
  // Counts come from files, arguments and peers: one whose size does not fit in 64 bits would
  // wrap to a small allocation that later writes overrun.
  if (!count_fits(type, count)) {
    ZS_FAIL(error_code::out_of_memory, "a " + std::string(to_string(type)) + " column of " + std::to_string(count) +
                                           " values needs more than 2^64 bytes");
  }
  column c;
  c.type_ = type;
  c.count_ = count;
  c.memory_ = memory;
  if (type == value_type::string) {
    c.data_bytes_ = chars_bytes;
    c.offsets_ = make_storage((count + 1) * sizeof(std::int64_t), memory, stream);
  } else {
    c.data_bytes_ = count * value_width(type);
  }
  c.data_ = make_storage(c.data_bytes_, memory, stream);
  return c;
}

std::uint8_t* column::add_null_mask(cudaStream_t stream) {
  null_mask_ = make_storage(null_mask_bytes(count_), memory_, stream);
  return static_cast<std::uint8_t*>(data_of(null_mask_));
}

void column::set_logical(logical_type type) {
  check_logical_type(type, type_);
  logical_ = std::move(type);
}

column column::from_strings(std::span<const std::string> strings) {
  std::uint64_t chars = 0;
  for (auto const& s : strings) chars += s.size();
  column c = allocate(value_type::string, strings.size(), memory_kind::host, nullptr, chars);
  auto view = c.mutable_view();
  auto* out = static_cast<char*>(view.data);
  std::int64_t pos = 0;
  view.offsets[0] = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (!strings[i].empty()) std::memcpy(out + pos, strings[i].data(), strings[i].size());
    pos += static_cast<std::int64_t>(strings[i].size());
    view.offsets[i + 1] = pos;
  }
  return c;
}

column_view column::view() const noexcept {
  auto& self = const_cast<column&>(*this);
  return {type_, count_, memory_, data_of(self.data_), static_cast<const std::int64_t*>(data_of(self.offsets_)),
          static_cast<const std::uint8_t*>(data_of(self.null_mask_))};
}

mutable_column_view column::mutable_view() noexcept {
  return {type_,
          count_,
          memory_,
          data_of(data_),
          static_cast<std::int64_t*>(data_of(offsets_)),
          static_cast<std::uint8_t*>(data_of(null_mask_))};
}

column column::copy_to(memory_kind memory, cudaStream_t stream) const {
  column out = allocate(type_, count_, memory, stream, type_ == value_type::string ? data_bytes_ : 0);
  out.logical_ = logical_;
  auto src = view();
  auto dst = out.mutable_view();
  bool const both_host = memory == memory_kind::host && memory_ == memory_kind::host;
  auto copy = [&](void* d, const void* s, std::size_t bytes) {
    if (bytes == 0) return;
    if (both_host) {
      std::memcpy(d, s, bytes);
    } else {
      copy_async(d, s, bytes, stream);
    }
  };
  copy(dst.data, src.data, data_bytes_);
  if (type_ == value_type::string) copy(dst.offsets, src.offsets, (count_ + 1) * sizeof(std::int64_t));
  if (nullable()) copy(out.add_null_mask(stream), src.null_mask, null_mask_bytes(count_));
  if (memory == memory_kind::host && !both_host) ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

std::vector<std::string> column::strings() const {
  ZS_EXPECTS(type_ == value_type::string && memory_ == memory_kind::host, "a host string column");
  auto v = view();
  auto const* chars = static_cast<const char*>(v.data);
  std::vector<std::string> out;
  out.reserve(count_);
  for (std::uint64_t i = 0; i < count_; ++i) {
    out.emplace_back(chars + v.offsets[i], static_cast<std::size_t>(v.offsets[i + 1] - v.offsets[i]));
  }
  return out;
}

std::vector<bool> column::validity() const {
  ZS_EXPECTS(memory_ == memory_kind::host, "a host column");
  auto const* mask = view().null_mask;
  std::vector<bool> out(count_);
  for (std::uint64_t i = 0; i < count_; ++i) out[i] = row_is_valid(mask, i);
  return out;
}

}  // namespace zs
