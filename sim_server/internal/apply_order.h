// The order in which the simulation server applies one rank's queued
// requests at a barrier. Its threads' posts reach the server in whatever
// order the host ran them, so applying them as they came would make the
// world's trace depend on scheduling. Instead each thread's requests keep
// their order, and so do the requests on each object (a queue pair; the
// rank's memory regions are one object); among the requests both orders
// allow next, the one on the lowest object goes first. A program of one
// thread is applied exactly as it posted, and one whose threads post to
// queue pairs of their own in an order their own logic fixes is applied
// the same way on every run. (Two threads posting to one queue pair
// without ordering their posts themselves race, as they would on
// hardware.) Private to weft_sim_server.
#ifndef WEFT_SIM_SERVER_INTERNAL_APPLY_ORDER_H_
#define WEFT_SIM_SERVER_INTERNAL_APPLY_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace weft::sim_server::internal {

struct RequestKey {
  uint32_t thread = 0;  // who made it (protocol.h)
  uint64_t object = 0;  // what it acts on
};

// The positions of `requests` (in arrival order) in the order to apply
// them: a permutation that keeps every thread's and every object's
// requests in arrival order, and otherwise takes the lowest object first.
std::vector<size_t> apply_order(std::span<const RequestKey> requests);

}  // namespace weft::sim_server::internal

#endif  // WEFT_SIM_SERVER_INTERNAL_APPLY_ORDER_H_
