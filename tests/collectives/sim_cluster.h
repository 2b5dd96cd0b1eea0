// Test harness: a simulated world with one Group per rank, and rank programs
// that run a script of operations one after another (all ranks in the
// simulator's one thread, each driving its operations with progress()).
// The shared collectives suite runs on it through SimTestCluster
// (group_suite_test.cc); tests of the simulator alone use it directly.
#ifndef WEFT_TESTS_COLLECTIVES_SIM_CLUSTER_H_
#define WEFT_TESTS_COLLECTIVES_SIM_CLUSTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "sim/world.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/script_program.h"

namespace weft::testing {

struct SimCluster {
  std::unique_ptr<sim::World> world;
  std::vector<std::unique_ptr<Group>> groups;  // destroyed before the world

  uint32_t size() const { return static_cast<uint32_t>(groups.size()); }
};

inline absl::StatusOr<SimCluster> make_cluster(sim::WorldOptions world_options,
                                               GroupOptions options = {}) {
  SimCluster c;
  const Topology topology = world_options.topology;
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(std::move(world_options));
  if (!world.ok()) return world.status();
  c.world = *std::move(world);
  std::vector<Fabric*> fabrics;
  for (uint32_t r = 0; r < c.world->ranks(); ++r)
    fabrics.push_back(&c.world->fabric(r));
  absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
      form_groups_in_process(fabrics, topology, options);
  if (!groups.ok()) return groups.status();
  c.groups = *std::move(groups);
  return c;
}

// scripts[r] runs on rank r (groups[r] unless `groups` is given).
inline ScriptRun run_scripts(SimCluster& c,
                             std::vector<std::vector<Starter>> scripts,
                             std::vector<Group*> groups = {}) {
  std::vector<std::unique_ptr<ScriptProgram>> programs;
  std::vector<sim::RankProgram*> raw;
  for (uint32_t r = 0; r < scripts.size(); ++r) {
    Group* g = groups.empty() ? c.groups[r].get() : groups[r];
    if (g == nullptr) {
      raw.push_back(nullptr);
      programs.push_back(nullptr);
      continue;
    }
    programs.push_back(
        std::make_unique<ScriptProgram>(*g, std::move(scripts[r])));
    raw.push_back(programs.back().get());
  }
  ScriptRun out;
  out.run = c.world->run(raw);
  for (const auto& p : programs) {
    out.results.push_back(p ? p->results() : std::vector<absl::Status>{});
  }
  return out;
}

// Runs `cases` one after another on every rank (cases.h's run_cases).
inline ScriptRun run_cases(SimCluster& c, std::vector<PreparedCase>& cases) {
  return run_scripts(c, scripts_of(cases, c.size()));
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_SIM_CLUSTER_H_
