// Group::agree() and Group::shrink(): the agreement (engine/agreement.h)
// and what each makes of its decision.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/engine/agreement.h"
#include "collectives/engine/engine.h"
#include "collectives/group.h"
#include "collectives/internal/op_kind.h"
#include "fabric/errors.h"

namespace weft {

using collectives::internal::Agreement;
using collectives::internal::AgreementOutcome;
using collectives::internal::AgreementRun;
using collectives::internal::Engine;
using collectives::internal::kAgreeKind;
using collectives::internal::Lane;
using collectives::internal::OpIdentity;

Operation Group::start_agreement(
    uint32_t flags, CallOptions c,
    std::function<absl::Status(const std::vector<uint32_t>& members,
                               const std::vector<uint32_t>& failed,
                               uint32_t flags)>
        on_decided) {
  const uint32_t me = world_rank(rank_);
  std::vector<Lane*> lanes(size_, nullptr);
  std::vector<uint32_t> members(size_);
  for (uint32_t r = 0; r < size_; ++r) {
    members[r] = world_rank(r);
    if (r == rank_) continue;
    lanes[r] = engine_->lane(members[r], 0);
    if (lanes[r] == nullptr) {
      return Operation(
          Engine::finished(make_error(
              absl::StatusCode::kInvalidArgument,
              ErrorPlace{me, members[r], "", ErrorCause::kBadInput},
              absl::StrFormat(
                  "agree() and shrink() need every pair of the group's "
                  "ranks joined by a cable (a mesh), and group ranks %u "
                  "and %u are not (the survivors of a ring are not a ring)",
                  rank_, r))),
          engine_);
    }
  }
  if (epoch_ != engine_->epoch()) {
    return Operation(Engine::finished(make_error(
                         absl::StatusCode::kFailedPrecondition,
                         ErrorPlace{me, kNoPeer, "", ErrorCause::kGroupFailed},
                         "this group was shrunk and refuses new work; use the "
                         "group shrink() returned")),
                     engine_);
  }
  // What this rank knows failed already goes into its proposal.
  std::vector<uint32_t> known_failed;
  for (uint32_t dead : engine_->known_dead()) {
    auto at = std::find(members.begin(), members.end(), dead);
    if (at != members.end()) {
      known_failed.push_back(static_cast<uint32_t>(at - members.begin()));
    }
  }
  OpIdentity id;
  id.kind = kAgreeKind;
  id.group_id = group_id_;
  id.op_seq = agree_seq_++;
  Engine* engine = engine_.get();
  AgreementRun run;
  run.agreement = std::make_unique<Agreement>(
      id, rank_, flags, std::move(lanes), known_failed,
      [engine](const OpIdentity& op) { return engine->stale(op); });
  run.members = members;
  run.on_decided =
      [on_decided = std::move(on_decided)](const AgreementOutcome& outcome) {
        return on_decided(outcome.members, outcome.failed, outcome.flags);
      };
  const TimeNs timeout_ns =
      c.timeout_ns > 0 ? c.timeout_ns : options_.timeout_ns;
  return Operation(engine_->submit_agreement(std::move(run), timeout_ns),
                   engine_);
}

Operation Group::agree_async(uint32_t flags, Agreed* agreed, CallOptions c) {
  return start_agreement(
      flags, c,
      [agreed](const std::vector<uint32_t>&,
               const std::vector<uint32_t>& failed, uint32_t decided) {
        agreed->flags = decided;
        agreed->failed = failed;
        return absl::OkStatus();
      });
}

absl::StatusOr<Group::Agreed> Group::agree(uint32_t flags, CallOptions c) {
  Agreed agreed;
  absl::Status s = agree_async(flags, &agreed, c).wait();
  if (!s.ok()) return s;
  return agreed;
}

Operation Group::shrink_async(std::unique_ptr<Group>* shrunk, CallOptions c) {
  std::weak_ptr<Engine> weak = engine_;
  const std::shared_ptr<const Topology> topology = topology_;
  const GroupOptions options = options_;
  const uint32_t rank = rank_;
  std::vector<uint32_t> world(size_);
  for (uint32_t r = 0; r < size_; ++r) world[r] = world_rank(r);
  return start_agreement(
      ~0u, c,
      [weak, topology, options, rank, world, shrunk](
          const std::vector<uint32_t>& members, const std::vector<uint32_t>&,
          uint32_t) -> absl::Status {
        std::shared_ptr<Engine> engine = weak.lock();
        if (engine == nullptr) {  // the group went while it ran
          return make_error(
              absl::StatusCode::kCancelled,
              ErrorPlace{world[rank], kNoPeer, "", ErrorCause::kCancelled},
              "the group was destroyed while it shrank");
        }
        const auto at = std::find(members.begin(), members.end(), rank);
        if (at == members.end()) {
          return make_error(
              absl::StatusCode::kFailedPrecondition,
              ErrorPlace{world[rank], kNoPeer, "", ErrorCause::kExcluded},
              absl::StrFormat(
                  "the shrunk group leaves this rank out (it keeps group "
                  "ranks %s): a rank reported it failed, or its proposal "
                  "reached no member in time. This process must leave the "
                  "job",
                  absl::StrJoin(members, ", ")));
        }
        std::vector<uint32_t> kept;
        for (uint32_t m : members) kept.push_back(world[m]);
        engine->begin_epoch(kept);
        *shrunk = std::unique_ptr<Group>(
            new Group(std::move(engine), topology, std::move(kept),
                      static_cast<uint32_t>(at - members.begin()), options));
        return absl::OkStatus();
      });
}

absl::StatusOr<std::unique_ptr<Group>> Group::shrink(CallOptions c) {
  std::unique_ptr<Group> shrunk;
  absl::Status s = shrink_async(&shrunk, c).wait();
  if (!s.ok()) return s;
  return shrunk;
}

}  // namespace weft
