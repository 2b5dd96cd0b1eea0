#include "harness/sim_wiring.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/absl_compat.h"
#include "fabric/progress.h"
#include "sim/world.h"
#include "wiring/discovery.h"

namespace weft::harness {
namespace {

// Steps one rank's session until it needs an exchange or is done.
class SessionProgram final : public sim::RankProgram {
 public:
  explicit SessionProgram(wiring::DiscoverySession& session)
      : session_(session) {}
  Progress step() override {
    if (session_.need() != wiring::DiscoverySession::Need::kStep) {
      return Progress::done();
    }
    return session_.step();
  }
  std::string outstanding() const override { return session_.outstanding(); }

 private:
  wiring::DiscoverySession& session_;
};

}  // namespace

absl::StatusOr<std::vector<wiring::Discovery>> discover_in_process(
    sim::World& world, const wiring::DiscoveryOptions& options) {
  const uint32_t n = world.ranks();
  std::vector<std::unique_ptr<wiring::DiscoverySession>> sessions;
  std::vector<std::unique_ptr<SessionProgram>> programs;
  std::vector<sim::RankProgram*> pointers;
  for (uint32_t r = 0; r < n; ++r) {
    absl::StatusOr<std::unique_ptr<wiring::DiscoverySession>> s =
        wiring::DiscoverySession::start(world.fabric(r), n,
                                        world.fabric(r).devices(), options);
    if (!s.ok()) return s.status();
    sessions.push_back(*std::move(s));
    programs.push_back(std::make_unique<SessionProgram>(*sessions.back()));
    pointers.push_back(programs.back().get());
  }
  using Need = wiring::DiscoverySession::Need;
  for (;;) {
    // Every rank runs in step: all need the same thing at once.
    const Need need = sessions.front()->need();
    if (need == Need::kDone) break;
    if (need == Need::kStep) {
      const sim::RunResult run = world.run(pointers);
      if (!run.completed()) {
        return absl::DeadlineExceededError(absl::StrCat(
            "wiring discovery in the simulator did not end (",
            base::to_absl(sim::outcome_name(run.outcome)), "): ", run.report));
      }
      continue;
    }
    std::vector<std::vector<uint8_t>> blobs;
    for (const auto& s : sessions) blobs.push_back(s->blob());
    for (const auto& s : sessions) {
      if (absl::Status st = s->exchanged(blobs); !st.ok()) return st;
    }
  }
  std::vector<wiring::Discovery> out;
  for (const auto& s : sessions) {
    absl::StatusOr<wiring::Discovery> d = s->result();
    if (!d.ok()) return d.status();
    out.push_back(*std::move(d));
  }
  return out;
}

}  // namespace weft::harness
