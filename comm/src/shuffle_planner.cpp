#include "zs/comm/shuffle_planner.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "zs/error.hpp"

namespace zs {

namespace {

void check_inputs(const planner_inputs& in) {
  auto const fail = [](const std::string& what) { ZS_FAIL(error_code::invalid_argument, "shuffle planner: " + what); };
  std::size_t const ranks = in.link_bps.size();
  if (ranks == 0 || in.rank < 0 || static_cast<std::size_t>(in.rank) >= ranks) {
    fail("rank " + std::to_string(in.rank) + " is not one of the " + std::to_string(ranks) + " links' ranks");
  }
  if (in.rounds == 0) fail("rounds is 0");
  if (!(in.overlap >= 0 && in.overlap <= 1)) fail("overlap " + std::to_string(in.overlap) + " is outside [0, 1]");
  if (!(in.min_gain >= 0 && in.min_gain <= 1)) fail("min_gain " + std::to_string(in.min_gain) + " is outside [0, 1]");
  for (std::size_t p = 0; p < ranks; ++p) {
    if (!(in.link_bps[p] > 0) || !std::isfinite(in.link_bps[p])) {
      fail("the bandwidth to rank " + std::to_string(p) + " is " + std::to_string(in.link_bps[p]) +
           " bytes/s; it must be positive and finite");
    }
  }
  for (auto const& c : in.columns) {
    if (c.bytes.size() != ranks) {
      fail(c.name + " has bytes for " + std::to_string(c.bytes.size()) + " ranks, expected " + std::to_string(ranks));
    }
    if (!(c.ratio > 0) || !(c.encode_bps > 0) || !(c.decode_bps > 0) || c.raw_encode_bps < 0 || c.raw_decode_bps < 0) {
      fail(c.name + ": ratio and codec speeds must be positive (raw speeds positive, or 0 for free)");
    }
  }
}

// Seconds to push `bytes` through a stage of `bps` bytes per second; 0 bps means free.
double cost(double bytes, double bps) { return bps > 0 ? bytes / bps : 0.0; }

}  // namespace

stage_seconds predict(const planner_inputs& in, const std::vector<carriage>& choice) {
  std::size_t const ranks = in.link_bps.size();
  stage_seconds s;
  std::vector<double> link_bytes(ranks, 0.0);
  for (std::size_t c = 0; c < in.columns.size(); ++c) {
    auto const& col = in.columns[c];
    for (std::size_t p = 0; p < ranks; ++p) {
      auto const x = static_cast<double>(col.bytes[p]);
      if (choice[c * ranks + p] == carriage::compressed) {
        s.encode += cost(x, col.encode_bps);
        s.decode += cost(x, col.decode_bps);
        link_bytes[p] += x / col.ratio;
      } else {
        s.encode += cost(x, col.raw_encode_bps);
        s.decode += cost(x, col.raw_decode_bps);
        link_bytes[p] += x;
      }
    }
  }
  // The local copy runs beside the transfers to the peers, which share this rank's links.
  auto const me = static_cast<std::size_t>(in.rank);
  for (std::size_t p = 0; p < ranks; ++p) {
    if (p != me) s.wire += link_bytes[p] / in.link_bps[p];
  }
  s.wire = std::max(s.wire, link_bytes[me] / in.link_bps[me]);
  auto const rounds = static_cast<double>(in.rounds);
  double const slowest = std::max({s.encode, s.wire, s.decode});
  double const serial = s.encode + s.wire + s.decode;
  double const piped = serial / rounds + (rounds - 1) / rounds * slowest;
  s.total = in.overlap * piped + (1 - in.overlap) * serial;
  return s;
}

transfer_plan plan_transfers(planner_inputs in) {
  check_inputs(in);
  std::size_t const ranks = in.link_bps.size();
  std::size_t const columns = in.columns.size();
  transfer_plan plan;
  std::vector<carriage> start(columns * ranks, carriage::raw), every(columns * ranks, carriage::raw);
  // The partitions the planner may choose for, with how much wire time compressing each saves
  // per second of compute it adds.
  struct candidate {
    std::size_t index;
    double merit;
  };
  std::vector<candidate> candidates;
  for (std::size_t c = 0; c < columns; ++c) {
    auto const& col = in.columns[c];
    for (std::size_t p = 0; p < ranks; ++p) {
      std::size_t const i = c * ranks + p;
      if (col.forced) {
        start[i] = every[i] = *col.forced;
        continue;
      }
      every[i] = carriage::compressed;
      auto const x = static_cast<double>(col.bytes[p]);
      if (x == 0) continue;
      double const saved = x * (1 - 1 / col.ratio) / in.link_bps[p];
      double const added = cost(x, col.encode_bps) + cost(x, col.decode_bps) - cost(x, col.raw_encode_bps) -
                           cost(x, col.raw_decode_bps);
      candidates.push_back({i, added > 0 ? saved / added : saved * 1e30});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const candidate& a, const candidate& b) { return a.merit > b.merit; });
  std::vector<carriage> choice = start;
  double best = predict(in, choice).total;
  for (auto const& cand : candidates) {
    choice[cand.index] = carriage::compressed;
    double const t = predict(in, choice).total;
    if (t < best) {
      best = t;
    } else {
      choice[cand.index] = carriage::raw;
    }
  }
  if (predict(in, every).total < best) choice = every;
  plan.all_raw = predict(in, start);
  if (predict(in, choice).total > (1 - in.min_gain) * plan.all_raw.total) choice = start;
  plan.predicted = predict(in, choice);
  plan.choice = std::move(choice);
  plan.inputs = std::move(in);
  return plan;
}

std::string transfer_plan::explain() const {
  std::size_t const ranks = inputs.link_bps.size();
  std::string text;
  char line[256];
  auto const ms = [](double s) { return s * 1e3; };
  std::snprintf(line, sizeof line, "plan of rank %d, %" PRIu64 " round(s), overlap %.2f, min_gain %.2f:\n",
                inputs.rank, inputs.rounds, inputs.overlap, inputs.min_gain);
  text += line;
  std::snprintf(line, sizeof line, "  %-22s %-8s %4s %10s %9s %7s %9s %9s %9s %9s  %s\n", "column", "codec", "to",
                "MiB", "link GB/s", "ratio", "enc GB/s", "dec GB/s", "raw ms", "codec ms", "choice");
  text += line;
  for (std::size_t c = 0; c < inputs.columns.size(); ++c) {
    auto const& col = inputs.columns[c];
    for (std::size_t p = 0; p < ranks; ++p) {
      auto const x = static_cast<double>(col.bytes[p]);
      double const raw_s = x / inputs.link_bps[p] + cost(x, col.raw_encode_bps) + cost(x, col.raw_decode_bps);
      double const codec_s = x / col.ratio / inputs.link_bps[p] + cost(x, col.encode_bps) + cost(x, col.decode_bps);
      char const* what = at(c, static_cast<int>(p)) == carriage::compressed ? "compressed" : "raw";
      if (col.forced == carriage::raw) {  // nothing measured of its codec
        std::snprintf(line, sizeof line, "  %-22s %-8s %4zu %10.2f %9.1f %7s %9s %9s %9.3f %9s  raw (forced)\n",
                      col.name.c_str(), col.codec.c_str(), p, x / (1 << 20), inputs.link_bps[p] / 1e9, "-", "-", "-",
                      ms(raw_s), "-");
        text += line;
        continue;
      }
      std::snprintf(line, sizeof line, "  %-22s %-8s %4zu %10.2f %9.1f %7.2f %9.1f %9.1f %9.3f %9.3f  %s%s\n",
                    col.name.c_str(), col.codec.c_str(), p, x / (1 << 20), inputs.link_bps[p] / 1e9, col.ratio,
                    col.encode_bps / 1e9, col.decode_bps / 1e9, ms(raw_s), ms(codec_s), what,
                    col.forced ? " (forced)" : "");
      text += line;
    }
  }
  auto const stages = [&](const char* name, const stage_seconds& s) {
    std::snprintf(line, sizeof line, "  %-9s encode %8.3f ms, wire %8.3f ms, decode %8.3f ms: predicted %8.3f ms\n",
                  name, ms(s.encode), ms(s.wire), ms(s.decode), ms(s.total));
    text += line;
  };
  stages("all raw", all_raw);
  stages("this plan", predicted);
  return text;
}

}  // namespace zs
