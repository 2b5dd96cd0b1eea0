#include "tools/weft-sim/shrink_faults.h"

#include <algorithm>
#include <utility>

namespace weft::sim::cli {
namespace {

// `faults` without its chunk `index` of `chunks` nearly equal chunks.
std::vector<ScriptedFault> without_chunk(
    const std::vector<ScriptedFault>& faults, size_t chunks, size_t index) {
  const size_t n = faults.size();
  const size_t begin = n * index / chunks;
  const size_t end = n * (index + 1) / chunks;
  std::vector<ScriptedFault> out(faults.begin(), faults.begin() + begin);
  out.insert(out.end(), faults.begin() + end, faults.end());
  return out;
}

}  // namespace

ShrinkResult shrink_faults(std::vector<ScriptedFault> faults,
                           const FailsWith& fails, uint32_t max_runs) {
  ShrinkResult out;
  const auto try_run = [&](const std::vector<ScriptedFault>& candidate) {
    if (out.runs >= max_runs) {
      out.minimal = false;
      return false;
    }
    ++out.runs;
    return fails(candidate);
  };
  if (!faults.empty() && try_run({})) faults.clear();
  size_t chunks = 2;
  while (faults.size() >= 2 && out.minimal) {
    chunks = std::min(chunks, faults.size());
    bool removed = false;
    for (size_t i = 0; i < chunks && !removed; ++i) {
      std::vector<ScriptedFault> candidate = without_chunk(faults, chunks, i);
      if (try_run(candidate)) {
        faults = std::move(candidate);
        chunks = std::max<size_t>(chunks - 1, 2);
        removed = true;
      }
    }
    if (removed) continue;
    if (chunks >= faults.size()) break;  // no single fault can go
    chunks = std::min(chunks * 2, faults.size());
  }
  out.faults = std::move(faults);
  return out;
}

}  // namespace weft::sim::cli
