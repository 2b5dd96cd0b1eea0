#include "sim_server/internal/apply_order.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "fabric/assert.h"

namespace weft::sim_server::internal {
namespace {

// Positions in arrival order, per key, and how many of them have been
// taken.
struct Chain {
  std::vector<size_t> positions;
  size_t taken = 0;
  bool head_is(size_t position) const {
    return taken < positions.size() && positions[taken] == position;
  }
};

}  // namespace

std::vector<size_t> apply_order(std::span<const RequestKey> requests) {
  std::vector<size_t> order;
  order.reserve(requests.size());
  const bool one_thread = std::all_of(
      requests.begin(), requests.end(),
      [&](const RequestKey& r) { return r.thread == requests.front().thread; });
  if (one_thread) {
    // Its order is the only one allowed (and the common case: no maps).
    for (size_t i = 0; i < requests.size(); ++i) order.push_back(i);
    return order;
  }
  std::map<uint32_t, Chain> threads;
  std::map<uint64_t, Chain> objects;
  for (size_t i = 0; i < requests.size(); ++i) {
    threads[requests[i].thread].positions.push_back(i);
    objects[requests[i].object].positions.push_back(i);
  }
  // Requests first in both of their chains, lowest object first (object
  // heads are distinct, so the position only breaks no tie).
  using Ready = std::pair<uint64_t, size_t>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  auto offer = [&](size_t i) {
    if (threads[requests[i].thread].head_is(i) &&
        objects[requests[i].object].head_is(i)) {
      ready.emplace(requests[i].object, i);
    }
  };
  for (const auto& [thread, chain] : threads) offer(chain.positions.front());
  while (!ready.empty()) {
    const size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    Chain& thread = threads[requests[i].thread];
    Chain& object = objects[requests[i].object];
    ++thread.taken;
    ++object.taken;
    const bool thread_next = thread.taken < thread.positions.size();
    const bool object_next = object.taken < object.positions.size();
    if (thread_next) offer(thread.positions[thread.taken]);
    if (object_next && (!thread_next || object.positions[object.taken] !=
                                            thread.positions[thread.taken])) {
      offer(object.positions[object.taken]);
    }
  }
  // Both orders follow arrival, so their union has no cycle: every
  // request is taken.
  WEFT_ASSERT(order.size() == requests.size(),
              "a request left unapplied: the orders form a cycle");
  return order;
}

}  // namespace weft::sim_server::internal
