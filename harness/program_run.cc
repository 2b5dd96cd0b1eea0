#include "harness/program_run.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/registered_memory.h"
#include "harness/rank_call.h"
#include "harness/reference.h"

namespace weft::harness {
namespace {

// What every rank shares about one operation of the program.
struct OpPlan {
  std::vector<uint32_t> members;     // world ranks in group-rank order
  std::vector<uint32_t> group_rank;  // per world rank; size(): not a member
  CollectiveShape shape;
  CallOptions call;
  std::unique_ptr<Reference> reference;  // while a member still runs it
  uint32_t members_left = 0;
  bool all_correct = true;
};

class ProgramState {
 public:
  ProgramState(const Program& program, const Topology& topology,
               const GroupOptions& group, const ProgramRunOptions& options)
      : program_(program), options_(options) {
    const uint32_t n = topology.ranks();
    for (const ProgramOp& op : program.ops) {
      OpPlan plan;
      plan.members = group_members(program, op.group, n);
      plan.group_rank.assign(n, n);
      for (uint32_t i = 0; i < plan.members.size(); ++i) {
        plan.group_rank[plan.members[i]] = i;
      }
      const auto ranks = static_cast<uint32_t>(plan.members.size());
      plan.shape = *shape_of(op.spec, ranks);
      const bool mesh = sub_topology(topology, plan.members)->is_full_mesh();
      plan.call = {resolve_algorithm(op.spec, plan.shape, mesh, group),
                   options.timeout_ns};
      plan.members_left = ranks;
      plans_.push_back(std::move(plan));
    }
  }

  const Program& program() const { return program_; }
  OpPlan& plan(uint32_t op) { return plans_[op]; }
  Reference& reference(uint32_t op) {
    OpPlan& p = plans_[op];
    if (p.reference == nullptr) {
      p.reference = std::make_unique<Reference>(
          program_.ops[op].spec, p.shape,
          static_cast<uint32_t>(p.members.size()), options_.data_seed + op);
    }
    return *p.reference;
  }
  // A member is done with `op`; the last one frees the reference.
  void retired(uint32_t op, bool correct) {
    OpPlan& p = plans_[op];
    p.all_correct &= correct;
    if (--p.members_left == 0) p.reference.reset();
  }
  uint32_t ops_correct() const {
    uint32_t n = 0;
    for (const OpPlan& p : plans_) n += p.members_left == 0 && p.all_correct;
    return n;
  }

 private:
  const Program& program_;
  const ProgramRunOptions& options_;
  std::vector<OpPlan> plans_;
};

// One world rank's part of the program.
class ProgramRank final : public sim::RankProgram {
 public:
  // groups[g]: this rank's group g, nullptr where it is no member.
  ProgramRank(ProgramState& state, SimCluster& cluster, uint32_t rank,
              std::vector<Group*> groups)
      : state_(state),
        cluster_(cluster),
        rank_(rank),
        groups_(std::move(groups)),
        statuses_(state.program().ops.size()) {}

  Progress step() override {
    for (;;) {
      while (!in_flight_.empty() && ended(in_flight_.front())) retire();
      const size_t total = state_.program().ops.size();
      const bool may_start = in_flight_.empty() ||
                             (last_async_ && in_flight_.size() < kMaxInFlight);
      if (next_ < total && may_start) {
        start(next_++);
        continue;
      }
      if (in_flight_.empty()) return Progress::done();
      for (Operation& op : in_flight_.front().ops) {
        if (op.done()) continue;
        const Progress p = op.progress();
        if (!op.done()) return p;
        break;
      }
    }
  }
  Progress serve() override { return groups_[0]->progress(); }
  std::string outstanding() const override {
    return absl::StrFormat(
        "rank %u: %u operation(s) in flight, the oldest program operation "
        "%u; %u of %u started",
        rank_, in_flight_.size(),
        in_flight_.empty() ? 0 : in_flight_.front().op + 1, next_,
        state_.program().ops.size());
  }

  bool finished() const {
    return in_flight_.empty() && next_ == state_.program().ops.size();
  }
  bool running() const { return !in_flight_.empty(); }
  // The run ended with operations in flight (cancelled): their registered
  // buffers may still have receives posted into them, so they go to the
  // cluster with their registrations, as a failed operation's do.
  void keep_registered_in_flight() {
    for (InFlight& f : in_flight_) {
      if (!f.registrations.empty()) keep(f);
    }
  }
  uint64_t wrong_elements() const { return wrong_elements_; }
  // The rank's first error in program order, or OK.
  absl::Status first_error() const {
    for (const absl::Status& s : statuses_) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  bool checked() const { return checked_; }

 private:
  struct InFlight {
    uint32_t op = 0;
    std::unique_ptr<RankCall> call;
    // Released before the buffers they name (declared after `call`).
    std::vector<RegisteredMemory> registrations;
    // Why the buffers could not be registered (the operation then did not
    // start here), or OK.
    absl::Status refused;
    std::vector<Operation> ops;
  };

  // What a rank writes over a registered operation's buffers once it
  // ended OK: a resend read from there would carry it.
  static constexpr std::byte kOverwritten{0xA5};

  static bool ended(const InFlight& f) {
    for (const Operation& op : f.ops) {
      if (!op.done()) return false;
    }
    return true;
  }

  void start(uint32_t op) {
    OpPlan& plan = state_.plan(op);
    const uint32_t g = state_.program().ops[op].group;
    if (plan.group_rank[rank_] == plan.group_rank.size()) return;
    InFlight f;
    f.op = op;
    f.call = std::make_unique<RankCall>(state_.reference(op),
                                        plan.group_rank[rank_]);
    if (state_.program().ops[op].registered) {
      f.refused = f.call->register_with(*groups_[g], &f.registrations);
    }
    if (f.refused.ok()) {
      for (const Starter& s : f.call->starters(plan.call)) {
        f.ops.push_back(s(*groups_[g]));
      }
    }
    last_async_ = state_.program().ops[op].async;
    in_flight_.push_back(std::move(f));
  }

  void retire() {
    InFlight& f = in_flight_.front();
    absl::Status status = f.refused;
    for (const Operation& op : f.ops) {
      if (status.ok()) status = op.status();
    }
    uint64_t wrong = 0;
    if (status.ok()) {
      const OpPlan& plan = state_.plan(f.op);
      wrong = state_.reference(f.op).wrong_elements(plan.group_rank[rank_],
                                                    f.call->output());
      checked_ = true;
      wrong_elements_ += wrong;
    }
    statuses_[f.op] = status;
    state_.retired(f.op, status.ok() && wrong == 0);
    if (!f.registrations.empty() && status.ok()) {
      for (std::span<std::byte> buffer : f.call->buffers()) {
        std::fill(buffer.begin(), buffer.end(), kOverwritten);
      }
    } else if (!f.registrations.empty()) {
      keep(f);
    }
    in_flight_.pop_front();
  }

  // A receive posted into a failed operation's output may still land: its
  // buffers stay until the groups close (docs/collectives.md).
  void keep(InFlight& f) {
    auto kept = std::make_shared<RegisteredCalls>();
    kept->calls.push_back(std::move(f.call));
    kept->registrations = std::move(f.registrations);
    cluster_.keep_until_closed(std::move(kept));
  }

  ProgramState& state_;
  SimCluster& cluster_;
  uint32_t rank_;
  std::vector<Group*> groups_;
  std::vector<absl::Status> statuses_;  // per program operation
  std::deque<InFlight> in_flight_;
  uint32_t next_ = 0;
  bool last_async_ = false;
  bool checked_ = false;
  uint64_t wrong_elements_ = 0;
};

// Every rank's groups: the world's and the sub-groups it belongs to.
absl::Status split_groups(SimCluster& cluster, const Program& program,
                          std::vector<std::unique_ptr<Group>>* owned,
                          std::vector<std::vector<Group*>>* groups) {
  for (uint32_t r = 0; r < cluster.ranks(); ++r) {
    std::vector<Group*> mine = {&cluster.group(r)};
    for (const std::vector<uint32_t>& members : program.subgroups) {
      bool member = false;
      for (uint32_t m : members) member |= m == r;
      if (!member) {
        mine.push_back(nullptr);
        continue;
      }
      absl::StatusOr<std::unique_ptr<Group>> g =
          cluster.group(r).split(members);
      if (!g.ok()) return g.status();
      owned->push_back(*std::move(g));
      mine.push_back(owned->back().get());
    }
    groups->push_back(std::move(mine));
  }
  return absl::OkStatus();
}

RankOutcome outcome_of(const ProgramRank& p, bool crashed, const Group& world) {
  RankOutcome out;
  out.finished = crashed || p.finished();
  out.told_of_failure = !crashed && !world.health().ok();
  if (p.wrong_elements() > 0) {  // an operation that ended OK was wrong
    out.checked = true;
    out.wrong_elements = p.wrong_elements();
    return out;
  }
  out.first_error = p.first_error();
  out.checked = p.checked() && p.finished() && !crashed;
  return out;
}

}  // namespace

absl::StatusOr<ProgramRun> run_program(SimCluster& cluster,
                                       const Program& program,
                                       const ProgramRunOptions& options) {
  sim::World& world = cluster.world();
  const Topology& topology = world.options().topology;
  if (absl::Status s =
          check_program(program, topology, cluster.group_options());
      !s.ok()) {
    return s;
  }
  std::vector<std::unique_ptr<Group>> owned;
  std::vector<std::vector<Group*>> groups;
  if (absl::Status s = split_groups(cluster, program, &owned, &groups);
      !s.ok()) {
    return s;
  }
  ProgramState state(program, topology, cluster.group_options(), options);
  std::vector<std::unique_ptr<ProgramRank>> ranks;
  std::vector<sim::RankProgram*> raw;
  for (uint32_t r = 0; r < cluster.ranks(); ++r) {
    ranks.push_back(
        std::make_unique<ProgramRank>(state, cluster, r, groups[r]));
    raw.push_back(ranks.back().get());
  }
  ProgramRun out;
  out.run = world.run(raw);
  out.end_ns = out.run.end_ns;
  if (out.run.completed()) world.settle(raw, options.linger_ns);
  for (uint32_t r = 0; r < cluster.ranks(); ++r) {
    out.ranks.push_back(
        outcome_of(*ranks[r], cluster.crashed(r), cluster.group(r)));
    out.wrong_elements += ranks[r]->wrong_elements();
  }
  out.ops_correct = state.ops_correct();
  out.outcome = classify(out.run, out.ranks);
  // An operation still queued holds pointers into buffers about to be
  // freed: cancel it now, so no later step writes into them.
  for (uint32_t r = 0; r < cluster.ranks(); ++r) {
    if (!ranks[r]->running()) continue;
    cluster.group(r).abort();
    cluster.group(r).progress();
    ranks[r]->keep_registered_in_flight();
  }
  return out;
}

}  // namespace weft::harness
