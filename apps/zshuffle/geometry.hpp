// Records which launch geometry each kernel ran with, for the benchmarks' output.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "zs/error.hpp"
#include "zs/launch.hpp"

namespace zs::cli {

// Where one tuned kernel covers several launches of a call (the sample pass and pass 1 share
// bitpack_analyze's launch choice), the one that does the most work: the geometry that matters.
// On a tie, the first.
inline const zs::launch_record& largest_launch(const std::vector<zs::launch_record>& records) {
  ZS_EXPECTS(!records.empty(), "a kernel's launches");
  return *std::max_element(records.begin(), records.end(),
                           [](auto const& a, auto const& b) { return a.work_units < b.work_units; });
}

// Keeps, of each kernel and type, the launch of a call that does the most work (the per-frame
// helpers aside), so the output says which geometry each kernel ran with.
class geometry_recorder final : public zs::launch_observer {
 public:
  void before_launch(const zs::launch_record&, cudaStream_t) override {}
  void after_launch(const zs::launch_record& r, cudaStream_t) override {
    if (r.choice.kernel == "frame_ops") return;
    for (auto& seen : records_) {
      if (seen.choice.kernel == r.choice.kernel && seen.choice.type == r.choice.type) {
        if (r.work_units > seen.work_units) seen = r;
        return;
      }
    }
    records_.push_back(r);
  }
  void append_to(std::vector<std::string>& out) const {
    for (auto const& r : records_) {
      std::string line = zs::describe(r);
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
    }
  }

 private:
  std::vector<zs::launch_record> records_;
};

// Runs `call` once more with a geometry_recorder installed and adds what it saw to `out`.
template <typename Call>
inline void record_geometry(std::vector<std::string>& out, cudaStream_t stream, Call call) {
  geometry_recorder recorder;
  {
    zs::scoped_launch_observer const observe(recorder);
    call();
  }
  ZS_CUDA_TRY(cudaStreamSynchronize(stream));
  recorder.append_to(out);
}

}  // namespace zs::cli
