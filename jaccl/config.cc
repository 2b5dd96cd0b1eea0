// jaccl::Config: JACCL's builder, its validity rules (as JACCL states them,
// so the same device JSON picks the same topology) and its environment.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "fabric/topology_check.h"
#include "jaccl/internal/env.h"
#include "jaccl/jaccl.h"

namespace jaccl {

Config::Config() : rank_(0), size_(0), prefer_ring_(false) {}

Config& Config::set_rank(const char* rank_str) {
  // No text (an unset variable): no rank, so init() has no group to form.
  rank_missing_ = rank_str == nullptr;
  if (rank_str == nullptr) {
    rank_text_.reset();
    return *this;
  }
  // Kept as text for init() to check; get_rank() reads it already when it
  // is a plain number, and is -1 when it is not.
  rank_text_ = rank_str;
  int rank = 0;
  const char* end = rank_str + std::strlen(rank_str);
  const auto [last, error] = std::from_chars(rank_str, end, rank);
  rank_ = error == std::errc() && last == end && rank >= 0 ? rank : -1;
  return *this;
}

Config& Config::set_rank(int rank) {
  rank_ = rank;
  rank_missing_ = false;
  rank_text_.reset();
  return *this;
}

Config& Config::set_coordinator(const char* coordinator) {
  coordinator_ = coordinator == nullptr ? "" : coordinator;
  return *this;
}

Config& Config::set_coordinator(std::string coordinator) {
  coordinator_ = std::move(coordinator);
  return *this;
}

Config& Config::set_devices_from_file(const char* dev_file) {
  if (dev_file == nullptr) {
    throw std::runtime_error(
        "[jaccl] set_devices_from_file: no file given; pass the path of the "
        "device JSON");
  }
  // weft's loader: its messages name the file, the row and the column.
  absl::StatusOr<weft::Topology> topology =
      weft::Topology::load_json_file(dev_file);
  if (!topology.ok()) {
    throw std::runtime_error("[jaccl] " +
                             std::string(topology.status().message()));
  }
  // A pair with a different number of cables each way, in the words every
  // reader of a device file uses. A one-way cable or a rank joined to none
  // leaves the Config not valid, as JACCL does; init names the finding.
  for (const weft::TopologyFinding& f :
       weft::find_topology_problems(*topology, weft::TopologyNeeds::kLinks,
                                    {.source = dev_file})
           .findings) {
    if (f.problem == weft::TopologyProblem::kCableCounts) {
      throw std::runtime_error("[jaccl] " + f.text);
    }
  }
  devices_source_ = dev_file;
  const uint32_t n = topology->ranks();
  std::vector<std::vector<std::vector<std::string>>> devices(n);
  for (uint32_t i = 0; i < n; ++i) {
    devices[i].reserve(n);
    for (uint32_t j = 0; j < n; ++j)
      devices[i].push_back(topology->devices(i, j));
  }
  return set_devices(std::move(devices));
}

Config& Config::set_devices(
    std::vector<std::vector<std::vector<std::string>>> devices) {
  const size_t n = devices.size();
  for (size_t r = 0; r < n; ++r) {
    if (devices[r].size() != n) {
      std::ostringstream msg;
      msg << "[jaccl] The full connectivity matrix should be provided but we "
             "have "
          << n << " rows and row " << r << " has " << devices[r].size()
          << " columns.";
      throw std::invalid_argument(msg.str());
    }
  }
  devices_ = std::move(devices);
  size_ = static_cast<int>(n);
  return *this;
}

Config& Config::prefer_ring(bool prefer) {
  prefer_ring_ = prefer;
  return *this;
}

Config& Config::set_all_gather(AllGatherFn agf) {
  all_gather_fn_ = std::move(agf);
  return *this;
}

Config& Config::set_all_gather_factory(
    std::function<AllGatherFn(int, int)> factory) {
  all_gather_factory_ = std::move(factory);
  return *this;
}

bool Config::is_valid_mesh() const {
  if (size_ < 2) return false;
  for (int src = 0; src < size_; ++src) {
    for (int dst = 0; dst < size_; ++dst) {
      const bool joined = !devices_[src][dst].empty();
      if (joined == (src == dst)) return false;
    }
  }
  return true;
}

bool Config::is_valid_ring() const {
  if (size_ < 2) return false;
  // As JACCL: both neighbours by as many cables as rank 0 has to rank 1
  // (which may be none: weft then refuses the ring when the group starts).
  const size_t cables = devices_[0][1].size();
  for (int src = 0; src < size_; ++src) {
    const int left = (src + size_ - 1) % size_;
    const int right = (src + 1) % size_;
    if (devices_[src][left].size() != cables ||
        devices_[src][right].size() != cables) {
      return false;
    }
  }
  return true;
}

bool Config::is_valid() const { return is_valid_mesh() || is_valid_ring(); }

Config Config::from_env() {
  internal::warn_about_disagreements();
  const weft::EnvLookup env = internal::jaccl_env();
  Config cfg;
  if (const char* file = env("JACCL_IBV_DEVICES"); file != nullptr) {
    cfg.set_devices_from_file(file);
  }
  if (const char* coordinator = env("JACCL_COORDINATOR");
      coordinator != nullptr) {
    cfg.set_coordinator(coordinator);
  }
  cfg.set_rank(env("JACCL_RANK"));
  // As JACCL: set at all (to anything) means prefer the ring.
  cfg.prefer_ring(env("JACCL_RING") != nullptr);
  return cfg;
}

}  // namespace jaccl
