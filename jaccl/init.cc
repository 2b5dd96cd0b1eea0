// jaccl::init: JACCL's rules for when there is a group (nullptr or, strict,
// an exception otherwise), then the group itself from
// weft::ProcessGroup::start, with the Config turned into weft's.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/config.h"
#include "fabric/topology.h"
#include "jaccl/internal/all_gather_bootstrap.h"
#include "jaccl/internal/env.h"
#include "jaccl/internal/weft_group.h"
#include "jaccl/jaccl.h"
#include "nlohmann/json.hpp"
#include "startup/process_group.h"
#include "verbs/loader.h"

namespace jaccl {
namespace {

using Devices = std::vector<std::vector<std::vector<std::string>>>;

// Enough digits for any rank weft accepts; longer text is refused before it
// could overflow.
constexpr size_t kMaxRankDigits = 9;

uint32_t parse_rank(const std::optional<std::string>& text, int rank) {
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

// JACCL's devices[i][j] lists as a weft Topology, through the device JSON
// both read, so weft's checks (names, the diagonal) apply to them too.
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

[[noreturn]] void throw_status(const absl::Status& status) {
  throw std::runtime_error("[jaccl] " + std::string(status.message()));
}

std::shared_ptr<Group> start(weft::Config config, AllGatherFn all_gather) {
  weft::StartOptions options;
  options.getenv = internal::jaccl_env();
  if (all_gather) {
    options.make_bootstrap = [all_gather](const weft::Config& c)
        -> absl::StatusOr<std::unique_ptr<weft::Bootstrap>> {
      return std::make_unique<internal::AllGatherBootstrap>(c.rank, c.size,
                                                            all_gather);
    };
  }
  absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
      weft::ProcessGroup::start(config, options);
  if (!pg.ok()) throw_status(pg.status());
  return std::make_shared<internal::WeftGroup>(*std::move(pg));
}

}  // namespace

bool is_available() { return weft::verbs::VerbsLibrary::load().ok(); }

std::shared_ptr<Group> init(bool strict) { return init(strict, nullptr); }

std::shared_ptr<Group> init(bool strict,
                            std::function<AllGatherFn(int, int)> factory) {
  const weft::EnvLookup env = internal::jaccl_env();
  if (env("JACCL_RANK") == nullptr || env("JACCL_IBV_DEVICES") == nullptr ||
      env("JACCL_COORDINATOR") == nullptr) {
    if (!strict) return nullptr;
    throw std::runtime_error(
        "[jaccl] You need to provide via environment variables a rank "
        "(JACCL_RANK/MLX_RANK), a device file (JACCL_IBV_DEVICES/"
        "MLX_IBV_DEVICES) and a coordinator ip/port (JACCL_COORDINATOR/"
        "MLX_JACCL_COORDINATOR).");
  }
  Config cfg = Config::from_env();
  if (factory) cfg.set_all_gather_factory(std::move(factory));
  return init(cfg, strict);
}

std::shared_ptr<Group> init(const Config& cfg, bool strict) {
  if (!cfg.is_valid()) {
    if (!strict) return nullptr;
    throw std::runtime_error(
        "[jaccl] The configuration should define a valid mesh or a valid "
        "ring.");
  }
  weft::Config config;
  config.rank = parse_rank(cfg.rank_text_, cfg.rank_);
  config.size = static_cast<uint32_t>(cfg.size_);
  config.devices = to_topology(cfg.devices_);
  config.coordinator = cfg.coordinator_;
  // JACCL's choice: the ring when preferred and valid, else the mesh when
  // valid, else the ring.
  config.ring =
      (cfg.prefer_ring_ && cfg.is_valid_ring()) || !cfg.is_valid_mesh();
  if (config.rank >= config.size) {
    throw std::runtime_error(absl::StrFormat(
        "[jaccl] rank %u is not below the group's size %u (the device "
        "JSON's rows): set the rank to 0..%u",
        config.rank, config.size, config.size - 1));
  }
  AllGatherFn all_gather = cfg.all_gather_fn_;
  if (!all_gather && cfg.all_gather_factory_) {
    all_gather =
        cfg.all_gather_factory_(static_cast<int>(config.rank), cfg.size_);
  }
  return start(std::move(config), std::move(all_gather));
}

}  // namespace jaccl
