// jaccl::init: JACCL's rules for when there is a group (nullptr or, strict,
// an exception otherwise), then the group itself from
// weft::ProcessGroup::start, with the Config turned into weft's; or, with
// WEFT_FABRIC=tcp (weft-sim launch --fabric=tcp), a group over TCP from
// the ring hostfile, as weft::ProcessGroup::from_environment forms it; and
// with JACCL_IBV_DEVICES=auto, over verbs on the cabling the ranks find.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "jaccl/internal/all_gather_bootstrap.h"
#include "jaccl/internal/env.h"
#include "jaccl/internal/weft_config.h"
#include "jaccl/internal/weft_group.h"
#include "jaccl/jaccl.h"
#include "rendezvous/config.h"
#include "startup/process_group.h"
#include "verbs/loader.h"

namespace jaccl {
namespace {

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

// WEFT_FABRIC, which `weft-sim launch` sets for every rank: "tcp" asks
// for a group over weft's TCP fabric (MLX's ring hostfile), "verbs" or
// unset for JACCL's RDMA devices. Text naming neither is refused rather
// than read as either.
bool launched_on_tcp(const weft::EnvLookup& env) {
  const char* fabric = env("WEFT_FABRIC");
  if (fabric == nullptr || *fabric == '\0' ||
      std::string_view(fabric) == "verbs") {
    return false;
  }
  if (std::string_view(fabric) == "tcp") return true;
  throw std::runtime_error(absl::StrFormat(
      "[jaccl] WEFT_FABRIC=%s names no fabric jaccl runs on: set it to tcp "
      "(a group over TCP from MLX_HOSTFILE and MLX_RANK, as weft-sim launch "
      "--fabric=tcp sets them) or verbs (RDMA from JACCL_IBV_DEVICES), or "
      "unset it",
      fabric));
}

// The device variable says `auto`: the ranks find their cabling as the
// group forms (weft's, not JACCL's; docs/jaccl.md). Only then.
bool devices_auto(const weft::EnvLookup& env) {
  const char* devices = env("JACCL_IBV_DEVICES");
  return devices != nullptr && std::string_view(devices) == "auto";
}

// The group formed as weft::ProcessGroup::from_environment forms it: over
// TCP (the hostfile, the rank, WEFT_COORDINATOR, WEFT_SECRET, JACCL_RING),
// or over verbs with the cabling found (WEFT_SIZE ranks).
std::shared_ptr<Group> init_from_environment(
    const weft::EnvLookup& env,
    const std::function<AllGatherFn(int, int)>& factory) {
  absl::StatusOr<weft::Config> config = weft::Config::from_environment(env);
  if (!config.ok()) throw_status(config.status());
  AllGatherFn all_gather;
  if (factory) {
    all_gather =
        factory(static_cast<int>(config->rank), static_cast<int>(config->size));
  }
  return start(*std::move(config), std::move(all_gather));
}

}  // namespace

bool is_available() {
  // Over TCP no library is needed; a WEFT_FABRIC naming no fabric is
  // available too, so that init() says what is wrong with it.
  const char* fabric = internal::jaccl_env()("WEFT_FABRIC");
  if (fabric != nullptr && *fabric != '\0' &&
      std::string_view(fabric) != "verbs") {
    return true;
  }
  return weft::verbs::VerbsLibrary::load().ok();
}

std::shared_ptr<Group> init(bool strict) { return init(strict, nullptr); }

std::shared_ptr<Group> init(bool strict,
                            std::function<AllGatherFn(int, int)> factory) {
  const weft::EnvLookup env = internal::jaccl_env();
  if (launched_on_tcp(env)) return init_from_environment(env, factory);
  if (env("JACCL_RANK") == nullptr || env("JACCL_IBV_DEVICES") == nullptr ||
      env("JACCL_COORDINATOR") == nullptr) {
    if (!strict) return nullptr;
    throw std::runtime_error(
        "[jaccl] You need to provide via environment variables a rank "
        "(JACCL_RANK/MLX_RANK), a device file (JACCL_IBV_DEVICES/"
        "MLX_IBV_DEVICES) and a coordinator ip/port (JACCL_COORDINATOR/"
        "MLX_JACCL_COORDINATOR).");
  }
  if (devices_auto(env)) return init_from_environment(env, factory);
  Config cfg = Config::from_env();
  if (factory) cfg.set_all_gather_factory(std::move(factory));
  return init(cfg, strict);
}

std::shared_ptr<Group> init(const Config& cfg, bool strict) {
  // JACCL would start such a Config as rank 0 (its default), so that every
  // process of the job believes it is rank 0.
  if (cfg.rank_missing_) {
    if (!strict) return nullptr;
    throw std::runtime_error(
        "[jaccl] The configuration has no rank: set JACCL_RANK or MLX_RANK "
        "(or call Config::set_rank).");
  }
  if (!cfg.is_valid()) {
    const std::string why =
        internal::invalid_cabling(cfg.devices_, cfg.devices_source_);
    if (strict) throw std::runtime_error(why);
    // JACCL returns no group here, and MLX then picks another backend; a
    // file the user did give is worth one line saying why it was not used.
    if (!cfg.devices_.empty()) std::fprintf(stderr, "%s\n", why.c_str());
    return nullptr;
  }
  weft::Config config;
  config.rank = internal::checked_rank(cfg.rank_text_, cfg.rank_);
  config.size = static_cast<uint32_t>(cfg.size_);
  config.devices = internal::to_topology(cfg.devices_);
  config.coordinator = cfg.coordinator_;
  config.ring = internal::chooses_ring(cfg);
  // weft's own: the side channel's shared secret (docs/tcp.md).
  if (const char* secret = internal::jaccl_env()("WEFT_SECRET");
      secret != nullptr) {
    config.secret = secret;
  }
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
