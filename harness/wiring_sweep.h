// The wiring sweep: per seed, a world whose true cabling the simulator
// keeps to itself and a device file that differs from it, then discovery
// and the check over the world (sim_wiring.h), judged against what was
// drawn. A seed draws 2-16 ranks, 1-4 cables per pair with each rank's
// devices named as a Mac names them (rdma_en2, rdma_en3, ...) in a shuffled
// order, so nothing can be read from a name, a loss rate, and one to three
// differences on separate cables:
//
//   crossed  two of a rank's cables to different peers swapped in the file
//   missing  a cable the file leaves out
//   one-way  a cable that carries frames one way only (link_down, one
//            direction), listed in the file as usual
//   extra    a cable the file lists that carries nothing (link_down, both
//            directions)
//
// A seed passes when every rank's discovery equals the truth (every
// cable, its directions, every device), with no file and with the file
// probed first, the check names each difference
// (the kind of finding it calls for, at the device concerned) and finds
// nothing wrong in the true file.
#ifndef WEFT_HARNESS_WIRING_SWEEP_H_
#define WEFT_HARNESS_WIRING_SWEEP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "sim/faults.h"
#include "wiring/check.h"
#include "wiring/discovery.h"
#include "wiring/wiring.h"

namespace weft::harness {

enum class WiringDifference : uint8_t { kCrossed, kMissing, kOneWay, kExtra };
inline constexpr size_t kWiringDifferenceKinds = 4;
const char* wiring_difference_name(WiringDifference kind);

// One difference drawn, and the finding it calls for: `problem` at rank
// `rank`'s `device` (for a cable, either end: `other` is the far end).
struct InjectedDifference {
  WiringDifference kind = WiringDifference::kCrossed;
  wiring::Problem problem = wiring::Problem::kCrossed;
  wiring::Port port;
  std::optional<wiring::Port> other;
};

struct WiringCase {
  uint64_t seed = 0;
  uint32_t ranks = 0;
  uint32_t max_cables = 0;  // per pair
  double loss = 0;
  // The world's cabling and faults: what the simulator knows.
  Topology truth = *Topology::mesh(1);
  sim::FaultPlan faults;
  // What discovery must find, and the file the ranks are given.
  wiring::Wiring expected;
  Topology declared = *Topology::mesh(1);
  std::vector<InjectedDifference> injected;
};

// Limits of a draw: the ranks, and each pair's cables between min_cables
// and the seed's own most (drawn between min_cables and max_cables).
struct WiringDraw {
  uint32_t min_ranks = 2;
  uint32_t max_ranks = 16;
  uint32_t min_cables = 1;
  uint32_t max_cables = 4;
  double max_loss = 0.1;
};

// The case of `seed` (the same on every platform).
WiringCase draw_wiring_case(uint64_t seed, const WiringDraw& draw = {});

struct WiringVerdict {
  bool discovery_right = false;  // every rank found the truth
  std::array<uint32_t, kWiringDifferenceKinds> injected{};
  std::array<uint32_t, kWiringDifferenceKinds> named{};
  bool true_file_clean = false;  // no finding against the true file
  // Rank 0's (every rank's alike): discovery with no file, and the
  // check's (the file's cables first, then every other pair).
  wiring::DiscoveryStats stats;
  wiring::DiscoveryStats check_stats;
  // What went wrong, one line each; empty when the seed passes.
  std::vector<std::string> failures;

  bool passed() const { return failures.empty(); }
};

// Runs discovery over a world of the case with no file, then the check
// (DiscoveryOptions::declared, probe_all) over another, and judges both.
// An error when a world or a discovery fails outright.
absl::StatusOr<WiringVerdict> run_wiring_case(
    const WiringCase& c, const wiring::DiscoveryOptions& options = {});

}  // namespace weft::harness

#endif  // WEFT_HARNESS_WIRING_SWEEP_H_
