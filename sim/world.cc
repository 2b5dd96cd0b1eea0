#include "sim/world.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/internal/wake_queue.h"
#include "sim/internal/world_core.h"

namespace weft::sim {
namespace {

// One call of World::run(): steps the programs and moves virtual time.
//
// Only ranks with something to do are stepped: a rank that returned
// kWaiting is stepped again when a completion is queued on one of its
// endpoints, when its wake-up comes, or when its stall ends (Progress's
// contract: kWaiting means nothing to do until then). Ready ranks are
// stepped in rank order, round after round, until an instant is quiet.
class Runner {
 public:
  // Rounds of at least this many ranks load each next rank's state while
  // stepping the current one (WorldCore::prefetch_rank). Fewer ranks than
  // this leave their state in cache between rounds, and the prefetches
  // would be instructions for nothing.
  static constexpr size_t kPrefetchRound = 16;

  Runner(WorldCore& core, std::span<RankProgram* const> programs)
      : core_(core),
        programs_(core.ranks(), nullptr),
        done_(core.ranks(), false),
        wakes_(core.ranks()) {
    std::copy_n(programs.begin(),
                std::min<size_t>(programs.size(), core.ranks()),
                programs_.begin());
    core_.ready().take(&batch_);  // forget marks from before this run
    for (uint32_t r = 0; r < programs_.size(); ++r) {
      if (programs_[r] == nullptr || core_.crashed(r)) {
        done_[r] = true;
      } else {
        ++remaining_;
        core_.ready().mark(r);
      }
    }
  }

  RunResult run() {
    return run_for(core_.options().time_limit_ns, /*settle=*/false);
  }

  // Every program counts as done: serves them until nothing is in flight.
  TimeNs settle(TimeNs limit_ns) {
    for (uint32_t r = 0; r < programs_.size(); ++r) {
      if (!done_[r]) finish_rank(r);
    }
    return run_for(limit_ns, /*settle=*/true).end_ns;
  }

 private:
  RunResult run_for(TimeNs limit_ns, bool settle) {
    const TimeNs deadline = deadline_after(core_.now(), limit_ns);
    while (true) {
      if (!run_instant()) return finish(RunResult::Outcome::kLivelock);
      if (remaining_ == 0 && !settle) {
        return finish(RunResult::Outcome::kCompleted);
      }
      const TimeNs next = next_time_ns();
      if (next == kNeverNs) {
        return finish(settle ? RunResult::Outcome::kCompleted
                             : RunResult::Outcome::kHang);
      }
      if (next > deadline) {
        core_.advance_to(std::max(core_.now(), deadline));
        return finish(RunResult::Outcome::kTimeLimit);
      }
      core_.advance_to(next);
      while (wakes_.next_ns() <= next) core_.ready().mark(wakes_.pop());
    }
  }

  // Processes events and steps ready ranks until nothing more happens at
  // this instant. false: the round limit was hit (livelock).
  bool run_instant() {
    for (uint64_t round = 0;; ++round) {
      const uint64_t processed = core_.process_due();
      if (round > 0 && processed == 0 && core_.ready().empty()) return true;
      if (round >= core_.options().max_rounds_per_instant) return false;
      step_ready();
    }
  }

  // Steps each ready rank once, in rank order (a finished rank is served
  // instead). A stalled rank is left out: its stall's end makes it ready
  // again.
  void step_ready() {
    core_.ready().take(&batch_);
    const bool prefetch = batch_.size() >= kPrefetchRound;
    for (size_t i = 0; i < batch_.size(); ++i) {
      const uint32_t r = batch_[i];
      if (prefetch && i + 1 < batch_.size()) {
        __builtin_prefetch(programs_[batch_[i + 1]]);
        core_.prefetch_rank(batch_[i + 1]);
      }
      if (programs_[r] == nullptr || core_.stalled(r)) continue;
      if (core_.crashed(r)) {
        if (!done_[r]) finish_rank(r);
        continue;
      }
      const Progress p =
          done_[r] ? programs_[r]->serve() : programs_[r]->step();
      switch (p.state) {
        case Progress::State::kDone:
          if (!done_[r]) {
            finish_rank(r);
            // Served once more at once: serve() reports the finished
            // rank's own wake-up (a frame to resend at a timer, say).
            core_.ready().mark(r);
          }
          break;
        case Progress::State::kAdvanced:
          core_.ready().mark(r);
          break;
        case Progress::State::kWaiting:
          if (p.wake_at_ns <= core_.now()) {
            core_.ready().mark(r);
          } else {
            wakes_.set(r, p.wake_at_ns);
          }
          break;
      }
    }
  }

  void finish_rank(uint32_t r) {
    done_[r] = true;
    --remaining_;
    wakes_.clear(r);
  }

  // The next event or wake-up. A stalled rank's wake-up is dropped: the
  // stall's end, itself an event, makes the rank ready again.
  TimeNs next_time_ns() {
    while (wakes_.next_ns() != kNeverNs && core_.stalled(wakes_.next_rank())) {
      wakes_.pop();
    }
    const TimeNs next = core_.has_events() ? core_.next_event_ns() : kNeverNs;
    return std::min(next, wakes_.next_ns());
  }

  RunResult finish(RunResult::Outcome outcome) {
    RunResult result;
    result.outcome = outcome;
    result.end_ns = core_.now();
    for (uint32_t r = 0; r < core_.ranks(); ++r) {
      if (core_.crashed(r)) result.crashed_ranks.push_back(r);
    }
    if (outcome != RunResult::Outcome::kCompleted)
      result.report = report(outcome);
    return result;
  }

  std::string report(RunResult::Outcome outcome) const {
    std::string out;
    switch (outcome) {
      case RunResult::Outcome::kHang:
        out = absl::StrFormat(
            "hang at %d ns: no events and no wake-ups left, "
            "every unfinished rank will wait forever\n",
            core_.now());
        break;
      case RunResult::Outcome::kTimeLimit:
        out = absl::StrFormat(
            "time limit: %d ns of virtual time passed "
            "without every rank finishing\n",
            core_.options().time_limit_ns);
        break;
      case RunResult::Outcome::kLivelock:
        out = absl::StrFormat(
            "livelock at %d ns: %u rounds of steps without "
            "virtual time moving\n",
            core_.now(), core_.options().max_rounds_per_instant);
        break;
      case RunResult::Outcome::kCompleted:
        break;
    }
    for (uint32_t r = 0; r < programs_.size(); ++r) {
      if (done_[r]) continue;
      absl::StrAppendFormat(&out, "  rank %u%s: %s\n", r,
                            core_.stalled(r) ? " (stalled)" : "",
                            programs_[r]->outstanding());
      absl::StrAppend(&out, core_.describe_endpoints(r));
    }
    return out;
  }

  WorldCore& core_;
  std::vector<RankProgram*> programs_;
  std::vector<bool> done_;
  uint32_t remaining_ = 0;  // ranks not done
  internal::WakeQueue wakes_;
  std::vector<uint32_t> batch_;  // the ranks of the current round
};

}  // namespace

std::string_view outcome_name(RunResult::Outcome outcome) {
  switch (outcome) {
    case RunResult::Outcome::kCompleted:
      return "completed";
    case RunResult::Outcome::kHang:
      return "hang";
    case RunResult::Outcome::kTimeLimit:
      return "time limit";
    case RunResult::Outcome::kLivelock:
      return "livelock";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<World>> World::create(WorldOptions options) {
  absl::StatusOr<std::unique_ptr<WorldCore>> core =
      WorldCore::create(std::move(options));
  if (!core.ok()) return core.status();
  return std::unique_ptr<World>(new World(*std::move(core)));
}

World::World(std::unique_ptr<WorldCore> core) : core_(std::move(core)) {}
World::~World() = default;

uint32_t World::ranks() const { return core_->ranks(); }
const WorldOptions& World::options() const { return core_->options(); }
Fabric& World::fabric(uint32_t rank) { return core_->fabric(rank); }
const Clock& World::clock() const { return core_->clock(); }

Slab* World::adopt_slab(uint32_t rank, std::unique_ptr<Slab> slab) {
  return core_->fabric(rank).adopt_slab(std::move(slab));
}

bool World::crashed(uint32_t rank) const { return core_->crashed(rank); }
bool World::delivers(uint32_t rank, uint32_t peer) const {
  return core_->delivers(rank, peer);
}
bool World::cable_up(uint32_t rank, uint32_t peer, uint32_t cable) const {
  return core_->cable_up(rank, peer, cable);
}
bool World::stalled(uint32_t rank) const { return core_->stalled(rank); }
const Trace& World::trace() const { return core_->trace(); }
const Counters& World::counters() const { return core_->counters(); }
std::vector<ScriptedFault> World::injected_faults() const {
  return core_->injected();
}

RunResult World::run(std::span<RankProgram* const> programs) {
  return Runner(*core_, programs).run();
}

TimeNs World::settle(std::span<RankProgram* const> programs, TimeNs limit_ns) {
  return Runner(*core_, programs).settle(limit_ns);
}

void World::advance_to(TimeNs t_ns) {
  core_->process_due();
  while (core_->has_events() && core_->next_event_ns() <= t_ns) {
    core_->advance_to(core_->next_event_ns());
    core_->process_due();
  }
  if (t_ns > core_->now()) core_->advance_to(t_ns);
}

std::optional<TimeNs> World::next_event_ns() const {
  if (!core_->has_events()) return std::nullopt;
  return core_->next_event_ns();
}

std::string World::describe_endpoints(uint32_t rank) const {
  return core_->describe_endpoints(rank);
}

absl::Status World::register_region(uint32_t rank, uint32_t rkey,
                                    const MemoryRegion& region) {
  return core_->register_region(rank, rkey, region);
}

absl::Status World::unregister_region(uint32_t rank, uint32_t rkey) {
  return core_->unregister_region(rank, rkey);
}

std::vector<WrittenRange> World::take_writes(uint32_t rank) {
  return core_->take_writes(rank);
}

TimeNs World::run_until_idle() {
  core_->process_due();
  while (core_->has_events()) {
    core_->advance_to(core_->next_event_ns());
    core_->process_due();
  }
  return core_->now();
}

}  // namespace weft::sim
