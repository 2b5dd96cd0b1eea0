// Built with `pkg-config --cflags --libs weft` alone (no CMake): touches
// each of weft's libraries, so a library or dependency missing from weft.pc
// fails to link.
#include <cstdio>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "jaccl/jaccl.h"
#include "rendezvous/config.h"
#include "sim/world.h"
#include "startup/process_group.h"
#include "verbs/verbs_fabric.h"

int main() {
  weft::sim::WorldOptions options;
  options.topology = *weft::Topology::mesh(2);
  absl::StatusOr<std::unique_ptr<weft::sim::World>> world =
      weft::sim::World::create(options);
  if (!world.ok() || (*world)->ranks() != 2) {
    std::puts("pkg_config_consumer: no simulated world of 2");
    return 1;
  }
  if (!weft::Config{}.validate().ok()) {
    std::puts("pkg_config_consumer: the default Config is refused");
    return 1;
  }
  // A library that is not there is an error saying so, not a crash.
  weft::verbs::VerbsFabricOptions verbs;
  verbs.library = "/nonexistent/libibverbs.so.1";
  absl::StatusOr<std::unique_ptr<weft::verbs::VerbsFabric>> fabric =
      weft::verbs::VerbsFabric::open(0, verbs);
  if (fabric.ok()) {
    std::puts("pkg_config_consumer: a missing verbs library was loaded");
    return 1;
  }
  // weft::startup and weft::jaccl: a one-rank JACCL world is refused, and a
  // ProcessGroup with a bad deadline is refused before anything opens.
  jaccl::Config one;
  one.set_devices({{{}}});
  if (jaccl::init(one, false) != nullptr) {
    std::puts("pkg_config_consumer: jaccl::init took a one-rank world");
    return 1;
  }
  weft::StartOptions start;
  start.getenv = [](const char* name) -> const char* {
    return std::string_view(name) == "WEFT_TIMEOUT_S" ? "soon" : nullptr;
  };
  if (weft::ProcessGroup::start(weft::Config{}, start).ok()) {
    std::puts("pkg_config_consumer: WEFT_TIMEOUT_S=soon was taken");
    return 1;
  }
  std::puts("pkg_config_consumer: ok");
  return 0;
}
