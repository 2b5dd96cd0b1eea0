// The simulated verbs provider's configuration, read from WEFT_SIM_VERBS_*
// environment variables (listed in sim_verbs.h) when its world is built.
#ifndef WEFT_SIM_VERBS_CONFIG_H_
#define WEFT_SIM_VERBS_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "sim/faults.h"
#include "sim/link_model.h"

namespace weft::sim_verbs {

// Apple's limits, applied with WEFT_SIM_VERBS_APPLE_LIMITS=1.
inline constexpr uint32_t kAppleQpsPerDevice = 10;
inline constexpr uint32_t kAppleMrsPerDevice = 100;
inline constexpr uint32_t kAppleQueueDepth = 63;
// Bounds of what the variables may ask for.
inline constexpr uint32_t kMaxRanks = 255;  // GIDs are 169.254.<rank>.<dev>
inline constexpr uint32_t kMaxDevicesPerRank = 254;
inline constexpr uint32_t kMaxGidIndex = 15;
inline constexpr uint32_t kMaxQueueDepth = 1024;
inline constexpr TimeNs kMaxPollStepNs = kNsPerS;

enum class GidMode : uint8_t {
  kIpv4At,     // link-local at the first other index, IPv4-mapped at N
  kLinkLocal,  // link-local only (interface without an IPv4 address)
  kEmpty,      // no GID at all
};

struct Config {
  Topology topology = *Topology::mesh(2);
  uint32_t first_rank = 0;
  uint64_t seed = 1;
  sim::LinkModel link = sim::LinkModel::tb5();
  sim::FaultPlan faults;
  TimeNs poll_step_ns = kNsPerUs;
  GidMode gid_mode = GidMode::kIpv4At;
  uint32_t ipv4_gid_index = 1;
  bool all_ports_down = false;
  std::vector<std::string> down_devices;
  bool apple_limits = false;
  // 0: only the queue pair's own capacity limits posting.
  uint32_t queue_depth = 0;

  bool port_down(const std::string& device) const;
};

// InvalidArgument naming the variable and what is wrong with it.
absl::StatusOr<Config> config_from_environment();

}  // namespace weft::sim_verbs

#endif  // WEFT_SIM_VERBS_CONFIG_H_
