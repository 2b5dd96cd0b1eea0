#include "sim_verbs/config.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/absl_compat.h"
#include "fabric/topology_check.h"

namespace weft::sim_verbs {
namespace {

constexpr uint32_t kDefaultRanks = 2;
constexpr uint32_t kDefaultCables = 1;

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr || value[0] == '\0' ? nullptr : value;
}

absl::Status bad(const char* name, std::string_view value,
                 std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s=%s: %s", name, value, why));
}

// Reads an unsigned variable into *out when set; [low, high] inclusive.
absl::Status read_number(const char* name, uint64_t low, uint64_t high,
                         uint64_t* out) {
  const char* value = env(name);
  if (value == nullptr) return absl::OkStatus();
  uint64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < low || parsed > high) {
    return bad(name, value,
               absl::StrFormat("expected a whole number in %u..%u", low, high));
  }
  *out = parsed;
  return absl::OkStatus();
}

absl::Status read_topology(Config* config) {
  if (const char* path = env("WEFT_SIM_VERBS_TOPOLOGY")) {
    absl::StatusOr<Topology> topology = Topology::load_json_file(path);
    if (!topology.ok()) {
      return bad("WEFT_SIM_VERBS_TOPOLOGY", path,
                 base::to_std(topology.status().message()));
    }
    // A one-way cable or a rank joined to none, in the words every reader
    // of a device file uses, before any rank opens a device.
    if (absl::Status s =
            check_topology(*topology, TopologyNeeds::kLinks, {.source = path});
        !s.ok()) {
      return bad("WEFT_SIM_VERBS_TOPOLOGY", path, base::to_std(s.message()));
    }
    config->topology = *std::move(topology);
  } else {
    uint64_t ranks = kDefaultRanks;
    uint64_t cables = kDefaultCables;
    if (absl::Status s =
            read_number("WEFT_SIM_VERBS_RANKS", 1, kMaxRanks, &ranks);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = read_number("WEFT_SIM_VERBS_CABLES", 1,
                                     Topology::kMaxCables, &cables);
        !s.ok()) {
      return s;
    }
    config->topology = *Topology::mesh(static_cast<uint32_t>(ranks),
                                       static_cast<uint32_t>(cables));
  }
  if (config->topology.ranks() > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the simulated provider supports at most %u ranks, the topology has "
        "%u",
        kMaxRanks, config->topology.ranks()));
  }
  return absl::OkStatus();
}

absl::Status read_gid_mode(Config* config) {
  const char* value = env("WEFT_SIM_VERBS_GID_MODE");
  if (value == nullptr) return absl::OkStatus();
  const std::string_view text = value;
  constexpr std::string_view kAt = "ipv4_at:";
  if (text == "link_local") {
    config->gid_mode = GidMode::kLinkLocal;
  } else if (text == "empty") {
    config->gid_mode = GidMode::kEmpty;
  } else if (text.substr(0, kAt.size()) == kAt &&
             absl::SimpleAtoi(base::to_absl(text.substr(kAt.size())),
                              &config->ipv4_gid_index) &&
             config->ipv4_gid_index <= kMaxGidIndex) {
    config->gid_mode = GidMode::kIpv4At;
  } else {
    return bad("WEFT_SIM_VERBS_GID_MODE", text,
               absl::StrFormat("expected ipv4_at:N (N in 0..%u), link_local "
                               "or empty",
                               kMaxGidIndex));
  }
  return absl::OkStatus();
}

absl::Status read_port(Config* config) {
  const char* value = env("WEFT_SIM_VERBS_PORT");
  if (value == nullptr) return absl::OkStatus();
  const std::string_view text = value;
  constexpr std::string_view kDownOn = "down:";
  if (text == "active") return absl::OkStatus();
  if (text == "down") {
    config->all_ports_down = true;
    return absl::OkStatus();
  }
  if (text.substr(0, kDownOn.size()) == kDownOn &&
      text.size() > kDownOn.size()) {
    config->down_devices = absl::StrSplit(
        base::to_absl(text.substr(kDownOn.size())), ',', absl::SkipEmpty());
    return absl::OkStatus();
  }
  return bad("WEFT_SIM_VERBS_PORT", text,
             "expected active, down, or down:<device>[,<device>...]");
}

absl::Status read_faults(Config* config) {
  std::string text;
  if (const char* inline_plan = env("WEFT_SIM_VERBS_FAULTS")) {
    text = absl::StrReplaceAll(inline_plan, {{";", "\n"}});
  }
  if (const char* path = env("WEFT_SIM_VERBS_FAULTS_FILE")) {
    absl::StatusOr<sim::FaultPlan> plan = sim::FaultPlan::load_file(path);
    if (!plan.ok()) {
      return bad("WEFT_SIM_VERBS_FAULTS_FILE", path,
                 base::to_std(plan.status().message()));
    }
    text += "\n" + plan->to_text();
  }
  absl::StatusOr<sim::FaultPlan> plan = sim::FaultPlan::parse(text);
  if (!plan.ok()) {
    return bad("WEFT_SIM_VERBS_FAULTS", text,
               base::to_std(plan.status().message()));
  }
  config->faults = *std::move(plan);
  return config->faults.check_world(config->topology);
}

absl::Status read_scalars(Config* config) {
  uint64_t rank = config->first_rank;
  if (absl::Status s = read_number("WEFT_SIM_VERBS_RANK", 0,
                                   config->topology.ranks() - 1, &rank);
      !s.ok()) {
    return s;
  }
  config->first_rank = static_cast<uint32_t>(rank);
  uint64_t step = static_cast<uint64_t>(config->poll_step_ns);
  uint64_t apple = 0;
  uint64_t depth = 0;
  for (absl::Status s :
       {read_number("WEFT_SIM_VERBS_SEED", 0, UINT64_MAX, &config->seed),
        read_number("WEFT_SIM_VERBS_POLL_STEP_NS", 0, kMaxPollStepNs, &step),
        read_number("WEFT_SIM_VERBS_APPLE_LIMITS", 0, 1, &apple),
        read_number("WEFT_SIM_VERBS_QUEUE_DEPTH", 1, kMaxQueueDepth, &depth)}) {
    if (!s.ok()) return s;
  }
  config->poll_step_ns = static_cast<TimeNs>(step);
  config->apple_limits = apple == 1;
  config->queue_depth = static_cast<uint32_t>(depth);
  if (config->apple_limits && config->queue_depth == 0) {
    config->queue_depth = kAppleQueueDepth;
  }
  if (const char* link = env("WEFT_SIM_VERBS_LINK")) {
    absl::StatusOr<sim::LinkModel> model = sim::LinkModel::parse(link);
    if (!model.ok()) {
      return bad("WEFT_SIM_VERBS_LINK", link,
                 base::to_std(model.status().message()));
    }
    config->link = *model;
  }
  return absl::OkStatus();
}

}  // namespace

bool Config::port_down(const std::string& device) const {
  return all_ports_down || std::find(down_devices.begin(), down_devices.end(),
                                     device) != down_devices.end();
}

absl::StatusOr<Config> config_from_environment() {
  Config config;
  for (auto read :
       {read_topology, read_scalars, read_gid_mode, read_port, read_faults}) {
    if (absl::Status s = read(&config); !s.ok()) return s;
  }
  return config;
}

}  // namespace weft::sim_verbs
