#include "jaccl/internal/weft_config.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/topology_check.h"
#include "nlohmann/json.hpp"

namespace jaccl::internal {

namespace {

// Enough digits for any rank weft accepts; longer text is refused before it
// could overflow.
constexpr size_t kMaxRankDigits = 9;

}  // namespace

uint32_t checked_rank(const std::optional<std::string>& text, int rank) {
  if (!text.has_value()) {
    if (rank < 0) {
      throw std::runtime_error(absl::StrFormat(
          "[jaccl] rank %d is negative: set_rank() takes this process's "
          "rank, 0 to the group's size - 1",
          rank));
    }
    return static_cast<uint32_t>(rank);
  }
  uint32_t value = 0;
  bool ok = !text->empty() && text->size() <= kMaxRankDigits;
  for (char c : *text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (!ok) {
    throw std::runtime_error(absl::StrFormat(
        "[jaccl] rank '%s' (set_rank, JACCL_RANK or MLX_RANK) is not a "
        "whole number: set it to this process's rank, 0 to the group's "
        "size - 1",
        *text));
  }
  return value;
}

weft::Topology to_topology(const Devices& devices) {
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& row : devices) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& names : row) {
      cells.push_back(names.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json(names));
    }
    doc.push_back(std::move(cells));
  }
  absl::StatusOr<weft::Topology> topology =
      weft::Topology::parse_json(doc.dump());
  if (!topology.ok()) {
    throw std::runtime_error("[jaccl] the devices: " +
                             std::string(topology.status().message()));
  }
  return *std::move(topology);
}

std::string invalid_cabling(const Devices& devices, std::string_view source) {
  if (devices.size() >= 2) {
    const absl::Status s = weft::check_topology(
        to_topology(devices), weft::TopologyNeeds::kMeshOrRing,
        {.source = source, .use_ring = "set JACCL_RING=1"});
    if (!s.ok()) return "[jaccl] " + std::string(s.message());
  }
  return "[jaccl] The configuration should define a valid mesh or a valid "
         "ring.";
}

bool chooses_ring(const Config& cfg) {
  return (cfg.get_prefer_ring() && cfg.is_valid_ring()) || !cfg.is_valid_mesh();
}

}  // namespace jaccl::internal
