// Wiring discovery in the simulator: every rank's DiscoverySession
// (wiring/discovery.h) stepped by the world's scheduler on one thread,
// their blobs exchanged in process between the steps (the side channel
// takes no virtual time here), as form_groups_in_process does for groups.
#ifndef WEFT_HARNESS_SIM_WIRING_H_
#define WEFT_HARNESS_SIM_WIRING_H_

#include <vector>

#include "absl/status/statusor.h"
#include "sim/world.h"
#include "wiring/discovery.h"

namespace weft::harness {

// Each rank's discovery over `world` with `options`, each rank probing
// the devices its fabric lists (Fabric::devices(): the world's true
// cabling's). The first rank's error when one fails; DeadlineExceeded
// with the world's report when probing does not end (a hang or the
// world's time limit).
absl::StatusOr<std::vector<wiring::Discovery>> discover_in_process(
    sim::World& world, const wiring::DiscoveryOptions& options);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_SIM_WIRING_H_
