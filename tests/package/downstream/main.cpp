// Uses the installed zshuffle package from outside its source tree, through both of its
// libraries. Run under mpirun with any number of ranks:
//   - every rank encodes two columns of its own (int64 and strings) into frames with the raw
//     codec's CPU reference path;
//   - the ranks exchange their frame buffers with zs::mpi_communicator::allgatherv;
//   - every rank decodes every rank's frames and checks each value against what that rank
//     generated.
// Exits non-zero on every rank when any rank saw a difference or an error.
#include <zs/codec.hpp>
#include <zs/column.hpp>
#include <zs/comm/mpi_communicator.hpp>
#include <zs/comm/nccl.hpp>
#include <zs/error.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace {

// The columns rank `rank` contributes; any rank can regenerate any other rank's columns.
std::vector<std::int64_t> numbers_of(int rank) {
  std::vector<std::int64_t> v(1000 + 37 * static_cast<std::size_t>(rank));
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto const x = static_cast<std::int64_t>(i);
    v[i] = x * x * x - 700 * x + 1'000'003 * rank;  // negative and positive, distinct per rank
  }
  return v;
}

std::vector<std::string> words_of(int rank) {
  std::vector<std::string> w = {"zshuffle", "", "frame", "\xce\xb3\xce\xac\xce\xbc\xce\xbc\xce\xb1"};
  for (int i = 0; i <= rank; ++i) w.push_back("rank " + std::to_string(rank) + " word " + std::to_string(i));
  return w;
}

struct encoded {
  std::vector<std::uint64_t> offsets;  // frame offsets inside `frames`
  std::vector<std::byte> frames;
};

// Frames of rank `rank`'s columns. Only the layout is needed on the receiving side, so
// `with_payload` false skips the encoding.
encoded encode_columns(const zs::codec& raw, int rank, bool with_payload) {
  zs::column const ints = zs::column::from_values<std::int64_t>(numbers_of(rank));
  zs::column const strings = zs::column::from_strings(words_of(rank));
  std::array<zs::encode_source, 2> sources{};
  sources[0] = {ints.type(), ints.size(), ints.view().data, nullptr, 0};
  sources[1] = {strings.type(), strings.size(), strings.view().data, strings.view().offsets,
                strings.data_bytes()};
  encoded e{zs::layout_frames(raw, sources), {}};
  if (with_payload) {
    e.frames.resize(e.offsets.back());
    std::array<std::uint64_t, 2> frame_bytes{};
    raw.encode_host({sources, e.frames.data(), e.offsets, frame_bytes.data()});
  }
  return e;
}

// Decodes rank `rank`'s frames and compares them with that rank's columns; "" when they match.
std::string check_frames(const zs::codec& raw, int rank, std::span<const std::byte> frames,
                         std::span<const std::uint64_t> offsets) {
  auto const numbers = numbers_of(rank);
  auto const words = words_of(rank);
  std::uint64_t chars = 0;
  for (auto const& w : words) chars += w.size();
  zs::column ints = zs::column::allocate(zs::value_type::int64, numbers.size(), zs::memory_kind::host);
  zs::column strings = zs::column::allocate(zs::value_type::string, words.size(),
                                            zs::memory_kind::host, nullptr, chars);
  std::array<zs::decode_target, 2> targets{};
  targets[0] = {zs::value_type::int64, numbers.size(), ints.mutable_view().data, nullptr, 0, 0};
  targets[1] = {zs::value_type::string, words.size(), strings.mutable_view().data,
                strings.mutable_view().offsets, 0, chars};
  std::array<zs::frame_status, 2> status{};
  status.fill(zs::frame_status::not_decoded);
  raw.decode_host({frames.data(), offsets, targets, status.data()});
  zs::throw_if_failed(status);
  if (std::memcmp(ints.view().data, numbers.data(), numbers.size() * sizeof(std::int64_t)) != 0) {
    return "int64 values of rank " + std::to_string(rank) + " differ";
  }
  if (strings.strings() != words) return "strings of rank " + std::to_string(rank) + " differ";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    zs::mpi_environment env(&argc, &argv, MPI_THREAD_SERIALIZED);
    std::string problem;
    int exit_code = 0;
    {
      zs::mpi_communicator comm;
      int const me = comm.rank();
      if (me == 0) {
        std::printf("downstream: %d ranks; MPI: %s; NCCL %s\n", comm.size(),
                    zs::mpi_library_version().c_str(), zs::nccl_version().c_str());
      }
      const zs::codec& raw = zs::get_codec(zs::codec_id::raw);
      try {
        encoded const mine = encode_columns(raw, me, true);
        std::vector<std::uint64_t> const sizes = comm.allgather(mine.frames.size());
        std::vector<std::byte> all(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
        comm.allgatherv(mine.frames, all, sizes);

        std::uint64_t begin = 0;
        for (int r = 0; r < comm.size() && problem.empty(); ++r) {
          encoded const layout = encode_columns(raw, r, false);
          if (layout.offsets.back() != sizes[r]) {
            problem = "rank " + std::to_string(r) + " sent " + std::to_string(sizes[r]) +
                      " bytes, its layout needs " + std::to_string(layout.offsets.back());
          } else {
            problem = check_frames(raw, r, std::span(all).subspan(begin, sizes[r]), layout.offsets);
          }
          begin += sizes[r];
        }
      } catch (const zs::error& e) {
        problem = std::string(e.what()) + " at " + e.file() + ":" + std::to_string(e.line());
      }
      if (!problem.empty()) std::fprintf(stderr, "downstream: rank %d: %s\n", me, problem.c_str());
      bool const ok = comm.all_ok(problem.empty());
      if (me == 0 && ok) {
        std::printf("downstream: every rank decoded every rank's int64 and string frames "
                    "(codec '%s') exactly\n", std::string(raw.name()).c_str());
      }
      exit_code = ok ? 0 : 1;
    }
    return exit_code;
  } catch (const zs::error& e) {
    std::fprintf(stderr, "downstream: FAILED: %s at %s:%d\n", e.what(), e.file(), e.line());
    return 1;
  }
}
