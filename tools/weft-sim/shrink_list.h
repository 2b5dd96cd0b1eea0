// Delta debugging (Zeller's ddmin, complements only) over a list: finds a
// subset that still makes a run fail, from which no single item can be
// removed without the run passing. It first tries the empty list (a
// failure that needs none of the items), then removes halves, quarters,
// ... down to single items, keeping any removal after which the run still
// fails. `weft-sim shrink` runs it over a seed's operations and then over
// its injected faults.
#ifndef WEFT_TOOLS_WEFT_SIM_SHRINK_LIST_H_
#define WEFT_TOOLS_WEFT_SIM_SHRINK_LIST_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace weft::tools::weft_sim {

template <typename T>
struct Shrunk {
  std::vector<T> items;
  uint32_t runs = 0;    // calls to `fails`
  bool minimal = true;  // false when max_runs stopped it early
};

// REQUIRES: fails(items). Calls `fails` at most `max_runs` times; keeps
// the order of `items`.
template <typename T>
Shrunk<T> shrink_list(std::vector<T> items,
                      const std::function<bool(const std::vector<T>&)>& fails,
                      uint32_t max_runs) {
  Shrunk<T> out;
  const auto try_run = [&](const std::vector<T>& candidate) {
    if (out.runs >= max_runs) {
      out.minimal = false;
      return false;
    }
    ++out.runs;
    return fails(candidate);
  };
  // `items` without its chunk `index` of `chunks` nearly equal chunks.
  const auto without_chunk = [&](size_t chunks, size_t index) {
    const size_t n = items.size();
    std::vector<T> rest(items.begin(), items.begin() + n * index / chunks);
    rest.insert(rest.end(), items.begin() + n * (index + 1) / chunks,
                items.end());
    return rest;
  };
  if (!items.empty() && try_run({})) items.clear();
  size_t chunks = 2;
  while (items.size() >= 2 && out.minimal) {
    chunks = std::min(chunks, items.size());
    bool removed = false;
    for (size_t i = 0; i < chunks && !removed; ++i) {
      std::vector<T> candidate = without_chunk(chunks, i);
      if (try_run(candidate)) {
        items = std::move(candidate);
        chunks = std::max<size_t>(chunks - 1, 2);
        removed = true;
      }
    }
    if (removed) continue;
    if (chunks >= items.size()) break;  // no single item can go
    chunks = std::min(chunks * 2, items.size());
  }
  out.items = std::move(items);
  return out;
}

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SHRINK_LIST_H_
