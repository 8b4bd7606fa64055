// The alp codec's warp coders (kernels/alp/alp_warp.hpp), which the GPU kernels run, on the warp
// emulator against the one-worker reference of alp_format.hpp: the same choice and bytes for
// every vector, the reference's vectors decoded to the same bits, and the same verdict on
// damaged vectors. CI has no GPU: this is where the kernels' per-vector logic is checked.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "alp/alp_format.hpp"
#include "alp/alp_warp.hpp"
#include "warp_emulator.hpp"
#include "zs_test.hpp"

namespace {

namespace fmt = zs::alp;
namespace ka = zs::kernels::alp;
using emu = zs::test::warp_emulator;

// Decimals, fill runs, decimals that need corrections, NaN payloads, -0.0, infinities,
// denormals, extremes, random bit patterns, and whole vectors of fill cells.
template <typename T>
std::vector<T> awkward_values(std::size_t n, std::uint64_t seed) {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  T const specials[] = {T(-0.0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), L::max(), L::lowest()};
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const kind = (i / 700) % 6;
    if (kind == 0) v[i] = static_cast<T>(static_cast<double>(rng() % 100000) / 1000.0);
    if (kind == 1) v[i] = (i / 37) % 2 == 0 ? T(-1e34) : static_cast<T>(static_cast<double>(rng() % 500) / 10.0);
    if (kind == 2) v[i] = i % 3 == 0 ? specials[rng() % 7] : std::bit_cast<T>(static_cast<bits>(rng()));
    if (kind == 3) v[i] = static_cast<T>(1.0 + static_cast<double>(rng() % 1000000007) / 1000000007.0);
    if (kind == 4) v[i] = rng() % 50 == 0 ? specials[rng() % 7] : static_cast<T>(static_cast<double>(rng() % 2000) / 100.0 - 10.0);
    if (kind == 5) v[i] = (i / 1024) % 2 == 0 ? T(-1e34) : static_cast<T>(static_cast<double>(rng() % 90) * 0.25);
  }
  return v;
}

template <typename T>
fmt::column_params prepared(const std::vector<T>& values) {
  zs::encode_source piece{zs::value_type_of<T>::value, values.size(), values.data()};
  auto sample = std::make_unique<fmt::column_sample<T>>();
  std::vector<std::uint32_t> counts(fmt::sample_values);
  std::vector<std::uint64_t> costs(fmt::sample_vectors * fmt::combinations<T>());
  return fmt::prepare_column(&piece, 1, *sample, counts.data(), costs.data());
}

// What the reference chose for a column's vectors, so a test can show it covered every path.
struct chosen_paths {
  int alp = 0, rd = 0, raw = 0, fill = 0, corrections = 0, stored = 0;
  int rd_exceptions = 0, rd_fill = 0, rd_wide_dict = 0;
};

template <typename T>
chosen_paths check_column(const std::vector<T>& values, const fmt::column_params& p) {
  chosen_paths paths;
  std::uint64_t const vectors = fmt::vector_count(values.size());
  std::uint64_t const slot = fmt::max_vector_bytes<T>(fmt::vector_values) + fmt::fill_map_bytes;
  // The reference's vectors, each in a slot of its own.
  std::vector<std::uint64_t> ref_bytes(vectors);
  std::vector<fmt::vector_fields> ref_fields(vectors);
  std::vector<std::uint64_t> ref_out(vectors * slot / 8, 0);
  auto* ref = reinterpret_cast<std::byte*>(ref_out.data());
  auto scratch = std::make_unique<fmt::vector_scratch>();
  for (std::uint64_t v = 0; v < vectors; ++v) {
    std::uint32_t const count = fmt::values_in_vector(values.size(), v);
    const T* first = values.data() + v * fmt::vector_values;
    ref_fields[v] = fmt::choose_vector(first, count, p, *scratch, ref_bytes[v]);
    EXPECT_EQ(fmt::write_vector(first, count, ref_fields[v], scratch->is_fill, ref + v * slot), ref_bytes[v]);
    fmt::vector_fields const& f = ref_fields[v];
    paths.alp += f.mode == fmt::mode_alp ? 1 : 0;
    paths.rd += f.mode == fmt::mode_rd ? 1 : 0;
    paths.raw += f.mode == fmt::mode_raw ? 1 : 0;
    paths.fill += f.fill ? 1 : 0;
    paths.corrections += f.mode == fmt::mode_alp && f.corrections != 0 ? 1 : 0;
    paths.stored += f.mode == fmt::mode_alp && f.exceptions > f.corrections ? 1 : 0;
    paths.rd_exceptions += f.mode == fmt::mode_rd && f.exceptions != 0 ? 1 : 0;
    paths.rd_fill += f.mode == fmt::mode_rd && f.fill ? 1 : 0;
    paths.rd_wide_dict += f.mode == fmt::mode_rd && f.dict_size > 4 ? 1 : 0;
  }

  // The warp's choice as the size kernels make it: the ALP pass over every vector, the ALP_RD
  // pass over the vectors it flags only, each keeping the ALP choice unless ALP_RD undercuts.
  std::vector<std::uint64_t> got_bytes(vectors);
  std::vector<fmt::vector_fields> got_fields(vectors);
  std::vector<ka::alp_outcome> outcomes(vectors);
  std::vector<std::uint64_t> flagged;
  emu::run(
      vectors, 0,
      [&](emu::warp& w, std::uint64_t v, std::byte*) {
        std::uint32_t const count = fmt::values_in_vector(values.size(), v);
        fmt::vector_fields fields;
        std::uint64_t bytes = 0;
        ka::alp_outcome const alp = ka::choose_alp_warp(w, values.data() + v * fmt::vector_values, count, p, fields, bytes);
        if (w.lane == 0) {  // lane 0 holds the choice, as the size kernel stores it
          got_fields[v] = fields;
          got_bytes[v] = bytes;
          outcomes[v] = alp;
          if (ka::rd_may_undercut<T>(count, alp)) flagged.push_back(v);
        }
      },
      [](emu::warp&) {});
  emu::run(
      flagged.size(), 0,
      [&](emu::warp& w, std::uint64_t i, std::byte*) {
        std::uint64_t const v = flagged[i];
        std::uint32_t const count = fmt::values_in_vector(values.size(), v);
        fmt::vector_fields fields;
        std::uint64_t bytes = 0;
        bool const replaced =
            ka::choose_rd_warp(w, values.data() + v * fmt::vector_values, count, p.fill, outcomes[v], fields, bytes);
        if (replaced && w.lane == 0) {
          got_fields[v] = fields;
          got_bytes[v] = bytes;
        }
      },
      [](emu::warp&) {});
  // The warp's bytes, over garbage, so that a byte the warp leaves unwritten shows.
  std::vector<std::uint64_t> got_out(vectors * slot / 8, 0xCDCDCDCDCDCDCDCDULL);
  auto* got = reinterpret_cast<std::byte*>(got_out.data());
  emu::run(
      vectors, ka::stage_bytes_per_warp,
      [&](emu::warp& w, std::uint64_t v, std::byte* smem) {
        std::uint32_t const count = fmt::values_in_vector(values.size(), v);
        const T* first = values.data() + v * fmt::vector_values;
        ka::write_vector_warp(w, first, count, p.fill, got_fields[v], got + v * slot, reinterpret_cast<std::uint64_t*>(smem));
      },
      [](emu::warp&) {});
  // choose_vector_warp, both steps in one: the same choice.
  std::vector<std::uint64_t> whole_bytes(vectors);
  emu::run(
      vectors, 0,
      [&](emu::warp& w, std::uint64_t v, std::byte*) {
        fmt::vector_fields fields;
        std::uint64_t bytes = 0;
        ka::choose_vector_warp(w, values.data() + v * fmt::vector_values, fmt::values_in_vector(values.size(), v), p,
                               fields, bytes);
        if (w.lane == 0) whole_bytes[v] = bytes;
      },
      [](emu::warp&) {});
  for (std::uint64_t v = 0; v < vectors; ++v) EXPECT_EQ(whole_bytes[v], ref_bytes[v]) << "vector " << v;
  for (std::uint64_t v = 0; v < vectors; ++v) {
    EXPECT_EQ(got_bytes[v], ref_bytes[v]) << "vector " << v << " (reference mode " << int(ref_fields[v].mode) << ")";
    EXPECT_EQ(std::memcmp(got + v * slot, ref + v * slot, ref_bytes[v]), 0)
        << "vector " << v << " (mode " << int(ref_fields[v].mode) << ", fill " << ref_fields[v].fill << ", exceptions "
        << ref_fields[v].exceptions << ") differs from the reference";
  }

  // The reference's vectors decoded by the warp, staged whole (as the GPU decoder stages every
  // vector that fits) and read in place (the main section staged alone): every value's bits
  // come back both ways.
  for (bool const whole : {true, false}) {
    std::vector<T> decoded(vectors * fmt::vector_values);
    std::memset(decoded.data(), 0xAB, decoded.size() * sizeof(T));
    std::vector<int> accepted(vectors, 0);
    emu::run(
        vectors, ka::decode_stage_bytes_per_warp,
        [&](emu::warp& w, std::uint64_t v, std::byte* smem) {
          auto* stage = reinterpret_cast<std::uint64_t*>(smem);
          std::uint32_t const count = fmt::values_in_vector(values.size(), v);
          const std::byte* vector = ref + v * slot;
          bool const staged = whole && ka::stage_vector_warp(w, vector, ref_bytes[v], stage);
          if (staged) vector = smem;
          fmt::vector_fields fields;
          if (!ka::check_vector_warp<emu::warp, T>(w, vector, ref_bytes[v], count, p, fields)) return;
          ka::decode_vector_warp(w, vector, staged, count, p, fields, decoded.data() + v * fmt::vector_values, stage);
          if (w.lane == 0) accepted[v] = 1;
        },
        [](emu::warp&) {});
    for (std::uint64_t v = 0; v < vectors; ++v) EXPECT_EQ(accepted[v], 1) << "vector " << v << " rejected";
    EXPECT_EQ(std::memcmp(decoded.data(), values.data(), values.size() * sizeof(T)), 0)
        << "decoded bits differ (" << (whole ? "staged whole" : "in place") << ")";
  }

  // Damaged vectors: the warp's verdict is the reference's.
  std::mt19937_64 rng(5);
  std::uint64_t const trials = vectors * 8;
  std::vector<std::uint64_t> damaged(ref_out.size());
  std::vector<int> warp_verdict(trials, -1);
  std::vector<int> ref_verdict(trials, -1);
  std::vector<std::vector<std::uint64_t>> copies(trials);
  for (std::uint64_t t = 0; t < trials; ++t) {
    std::uint64_t const v = t / 8;
    copies[t].assign(ref_out.begin() + static_cast<std::ptrdiff_t>(v * slot / 8),
                     ref_out.begin() + static_cast<std::ptrdiff_t>((v + 1) * slot / 8));
    auto* bytes = reinterpret_cast<std::byte*>(copies[t].data());
    std::uint64_t at = rng() % ref_bytes[v];
    fmt::vector_fields fields;
    std::uint32_t const count = fmt::values_in_vector(values.size(), v);
    if (t % 8 >= 6 && fmt::check_vector<T>(bytes, ref_bytes[v], count, p, fields) && fields.mode == fmt::mode_alp &&
        fields.exceptions != 0) {
      // Two of a vector's eight damages hit its lane counts, where it has them: a flipped bit,
      // and an exception moved to the next lane's count (the same sum).
      constexpr std::uint32_t lanes = fmt::float_traits<T>::lanes;
      auto const first_count = static_cast<std::uint64_t>(fmt::sections_of<T>(bytes, count, fields).lane_counts - bytes);
      std::uint32_t lane = static_cast<std::uint32_t>(rng() % lanes);
      at = first_count + lane;
      if (t % 8 == 7) {
        while (bytes[first_count + lane] == std::byte{0}) lane = (lane + 1) % lanes;
        std::byte* from = bytes + first_count + lane;
        std::byte* to = bytes + first_count + (lane + 1) % lanes;
        *from = static_cast<std::byte>(static_cast<unsigned>(*from) - 1);
        *to = static_cast<std::byte>(static_cast<unsigned>(*to) + 1);
      }
      fields = {};
    }
    if (t % 8 != 7) bytes[at] ^= static_cast<std::byte>(1U << (rng() % 8));
    ref_verdict[t] = fmt::check_vector<T>(bytes, ref_bytes[v], count, p, fields) ? 1 : 0;
  }
  emu::run(
      trials, 0,
      [&](emu::warp& w, std::uint64_t t, std::byte*) {
        fmt::vector_fields fields;
        bool const ok = ka::check_vector_warp<emu::warp, T>(w, reinterpret_cast<std::byte*>(copies[t].data()),
                                                            ref_bytes[t / 8], fmt::values_in_vector(values.size(), t / 8), p,
                                                            fields);
        if (w.lane == 0) warp_verdict[t] = ok ? 1 : 0;
      },
      [](emu::warp&) {});
  for (std::uint64_t t = 0; t < trials; ++t) EXPECT_EQ(warp_verdict[t], ref_verdict[t]) << "damaged vector " << t / 8;
  return paths;
}

template <typename T>
void check_awkward(std::size_t n, std::uint64_t seed) {
  std::vector<T> const values = awkward_values<T>(n, seed);
  fmt::column_params const p = prepared(values);
  chosen_paths const first = check_column(values, p);
  // Several candidates and a fill value, whatever the sample says.
  fmt::column_params q;
  q.candidates = 3;
  q.exponent[0] = 3;
  q.factor[0] = 0;
  q.exponent[1] = 2;
  q.factor[1] = 0;
  q.exponent[2] = 1;
  q.factor[2] = 1;
  q.has_fill = true;
  q.fill = static_cast<std::uint64_t>(fmt::bits_of(T(-1e34)));
  chosen_paths const second = check_column(values, q);
  if (n > 6 * 700) {  // the long columns hold every kind of vector
    for (chosen_paths const& c : {first, second}) {
      EXPECT_GT(c.alp, 0);
      EXPECT_GT(c.raw + c.rd, 0);
      EXPECT_GT(c.corrections, 0);
      EXPECT_GT(c.stored, 0);
    }
    EXPECT_GT(second.fill, 0);
    EXPECT_GT(first.rd + second.rd, 0);
    // The vectors' samples pick other candidates than the first.
    int later = 0;
    for (std::uint64_t v = 0; v < fmt::vector_count(n); ++v) {
      later += fmt::vector_candidate(values.data() + v * fmt::vector_values, fmt::values_in_vector(n, v), q) > 0 ? 1 : 0;
    }
    EXPECT_GT(later, 0);
  }
}

TEST(AlpWarp, Float32VectorsMatchTheReference) { check_awkward<float>(6 * 700 * 3 + 517, 1); }
TEST(AlpWarp, Float64VectorsMatchTheReference) { check_awkward<double>(6 * 700 * 3 + 517, 2); }
// Values that are not decimal, as ALP_RD codes them: a vector per kind of left parts. Few
// distinct (narrow ranges), many (wide ranges: exceptions), many of equal counts (the
// dictionary's ties go to the smaller left part), a fill value among them, and every split
// (left parts of one to sixteen bits that differ), a few rare left parts among common ones
// (exceptions).
template <typename T>
std::vector<T> rd_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t const kind = (i / 1024) % 6;
    double const noise = unit(rng);
    if (kind == 0) v[i] = static_cast<T>(3.7 + std::sqrt(2.0) * noise);
    if (kind == 1) v[i] = static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(rng() % 40) - 20) * (rng() % 2 == 0 ? 1 : -1));
    if (kind == 2) v[i] = static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(i % 16) - 8));
    if (kind == 3) v[i] = i % 5 == 0 ? T(-1e34) : static_cast<T>(std::ldexp(1.0 + noise, static_cast<int>(i % 11) - 3));
    if (kind == 4) {
      int const e = i % 40 == 7 ? static_cast<int>(rng() % 60) - 30 : static_cast<int>(rng() % 3);
      v[i] = static_cast<T>(std::ldexp(1.0 + noise, e));
    }
    if (kind == 5) v[i] = static_cast<T>(-std::exp(noise * 30.0 - 15.0));
  }
  return v;
}

template <typename T>
void check_rd(std::size_t n, std::uint64_t seed) {
  std::vector<T> const values = rd_values<T>(n, seed);
  fmt::column_params q = prepared(values);
  chosen_paths const first = check_column(values, q);
  q.has_fill = true;
  q.fill = static_cast<std::uint64_t>(fmt::bits_of(T(-1e34)));
  chosen_paths const second = check_column(values, q);
  EXPECT_GT(first.rd, 2);
  EXPECT_GT(first.rd_exceptions + second.rd_exceptions, 0);
  EXPECT_GT(second.rd_fill, 0);
  EXPECT_GT(first.rd_wide_dict + second.rd_wide_dict, 0);
}

TEST(AlpWarp, Float32RdVectorsMatchTheReference) { check_rd<float>(6 * 1024 * 2 + 77, 3); }
TEST(AlpWarp, Float64RdVectorsMatchTheReference) { check_rd<double>(6 * 1024 * 2 + 77, 4); }

TEST(AlpWarp, ShortColumns) {
  for (std::size_t n : {1, 2, 31, 33, 1023, 1025}) {
    check_awkward<float>(n, n);
    check_awkward<double>(n, n + 1);
  }
}

// Both views of a vector (fill cells kept, fill cells taken out) from one sort: the view
// without the fill cells has the runs of the view with them, the fill's run shortened by the
// fill count. Vectors where that matters, each against the reference's two sorts, with a fill
// value of chosen top bits and other values' left parts placed around it.
template <typename T>
std::vector<T> fill_view_vectors(std::uint64_t fill_bits, std::uint64_t seed) {
  using bits_t = typename fmt::float_traits<T>::bits_t;
  constexpr int width = fmt::float_traits<T>::width;
  constexpr int low_bits = width - fmt::max_left_bits;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  T const fill = fmt::from_bits<T>(static_cast<bits_t>(fill_bits));
  std::uint64_t const fill_top = fill_bits >> low_bits;
  std::uint64_t const low_mask = (std::uint64_t{1} << low_bits) - 1;
  // A value of left part `top` (its top 16 bits) and random low bits, never the fill's bits.
  auto with_top = [&](std::uint64_t top) {
    for (;;) {
      auto const b = static_cast<bits_t>((top << low_bits) | (rng() & low_mask));
      if (b != static_cast<bits_t>(fill_bits)) return fmt::from_bits<T>(b);
    }
  };
  auto not_decimal = [&] { return static_cast<T>(3.7 + std::sqrt(2.0) * unit(rng)); };
  std::vector<T> v;
  auto vector_of = [&](auto cell) {
    for (std::uint32_t i = 0; i < fmt::vector_values; ++i) v.push_back(cell(i));
  };
  // All fill; no fill; one cell not fill (not decimal; of the fill's left part); one fill cell.
  vector_of([&](std::uint32_t) { return fill; });
  vector_of([&](std::uint32_t) { return not_decimal(); });
  vector_of([&](std::uint32_t i) { return i == 517 ? not_decimal() : fill; });
  vector_of([&](std::uint32_t i) { return i == 3 ? with_top(fill_top) : fill; });
  vector_of([&](std::uint32_t i) { return i == 700 ? fill : not_decimal(); });
  // Fill cells among values of the fill's left part: the fill's run shortened, not gone.
  vector_of([&](std::uint32_t i) { return i % 10 < 3 ? fill : i % 10 == 3 ? with_top(fill_top) : not_decimal(); });
  // Values that share only the fill's top 12 bits: they join its run at the wider splits.
  vector_of([&](std::uint32_t i) {
    return i % 2 == 0 ? fill : with_top((fill_top & ~std::uint64_t{0xf}) | ((fill_top + 1 + rng() % 7) & 0xf));
  });
  // Ties: 7 left parts of 100 cells each around the fill's, whose run is 150 fill cells and
  // 100 others (100 without the fill cells: it ties the others, and the smaller left part goes
  // first); the rest of one more left part.
  vector_of([&](std::uint32_t i) {
    if (i < 150) return fill;
    if (i < 250) return with_top(fill_top);
    std::uint32_t const group = (i - 250) / 100;
    if (group < 7) return with_top(fill_top - 3 + group + (group >= 3 ? 1 : 0));
    return with_top(fill_top + 9);
  });
  // Many left parts, few of each, and a third fill: ALP_RD with exceptions or raw.
  vector_of([&](std::uint32_t i) { return i % 3 == 0 ? fill : with_top(fill_top - 20 + rng() % 41); });
  // A short last vector, fill cells among values of the fill's left part.
  for (std::uint32_t i = 0; i < 517; ++i) v.push_back(i % 5 < 2 ? fill : i % 5 == 2 ? with_top(fill_top) : not_decimal());
  return v;
}

template <typename T>
void check_fill_views(std::uint64_t fill_bits, std::uint64_t seed) {
  std::vector<T> const values = fill_view_vectors<T>(fill_bits, seed);
  fmt::column_params q = prepared(values);
  q.has_fill = true;
  q.fill = fill_bits;
  chosen_paths const paths = check_column(values, q);
  EXPECT_GT(paths.rd_fill, 0);
  EXPECT_GT(paths.rd, paths.rd_fill);
}

TEST(AlpWarp, Float32BothViewsFromOneSortMatchTheReference) {
  check_fill_views<float>(fmt::bits_of(-1e34F), 6);
  check_fill_views<float>(fmt::bits_of(3.9F), 7);  // a fill value among the others' left parts
}
TEST(AlpWarp, Float64BothViewsFromOneSortMatchTheReference) {
  check_fill_views<double>(fmt::bits_of(-1e34), 8);
  check_fill_views<double>(fmt::bits_of(4.2), 9);
}

// Vectors of the real float columns (a spread of them: the emulator is slow), as the column's
// own parameters code them, against the reference: fill values, ALP_RD and ALP as they come.
template <typename T>
void check_real_vectors(const zs::column& col, std::uint64_t picks) {
  const T* data = col.view().values<T>();
  std::uint64_t const vectors = fmt::vector_count(col.size());
  fmt::column_params const p = prepared(std::vector<T>(data, data + col.size()));
  std::vector<T> picked;
  for (std::uint64_t i = 0; i < picks; ++i) {
    std::uint64_t const v = vectors * i / picks;
    std::uint32_t const count = fmt::values_in_vector(col.size(), v);
    if (count != fmt::vector_values) continue;  // only the last vector may be short
    picked.insert(picked.end(), data + v * fmt::vector_values, data + v * fmt::vector_values + count);
  }
  chosen_paths const paths = check_column(picked, p);
  std::printf("%llu vectors: ALP %d, ALP_RD %d (without fill cells %d), raw %d, fill path %d\n",
              static_cast<unsigned long long>(picked.size() / fmt::vector_values), paths.alp, paths.rd, paths.rd_fill,
              paths.raw, paths.fill);
}

TEST(AlpWarp, RealColumnsMatchTheReference) {
  if (std::getenv("ZS_DATA_DIR") == nullptr) GTEST_SKIP() << "ZS_DATA_DIR is not set: no real columns";
  for (char const* file : {"airport_lat.f64", "levitus_temp.f32", "navy_wind_u.f32"}) {
    SCOPED_TRACE(file);
    zs::column const col = zs::test::data_column(file);
    if (col.type() == zs::value_type::float64) {
      check_real_vectors<double>(col, 48);
    } else {
      check_real_vectors<float>(col, 48);
    }
  }
}

}  // namespace
