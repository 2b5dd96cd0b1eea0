// FabricServer, the world's side: the barrier. When every expected rank
// waits (or has gone), the queued requests are applied in rank order, the
// simulator's completions and writes are collected per rank, and virtual
// time moves to the next event or wake-up; waits are answered, with the
// departures of ranks that left; with nothing left in flight the deadlock
// report is written.
#include <signal.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "sim/faults.h"
#include "sim_server/departures.h"
#include "sim_server/fabric_server.h"
#include "sim_server/internal/apply_order.h"
#include "sim_server/internal/server_state.h"

namespace weft::sim_server {

// A rank's process has gone: its queue pairs go with it, as a process's do
// when it exits, and it has left the world now.
//
// Why "now" is the same virtual time on every run: time moves only when
// every connected rank waits (try_step). A rank that exits or breaks off
// on its own does so between waits, while it computes, and a computing
// rank holds the clock where its last answer left it; so the clock stands
// at that answer's time when its socket's end is read, however late the
// host delivers it. A rank the fault plan crashes never counts as waiting
// again (its waits are answered at once, or not made: handle_wait,
// RemoteWorld::wait). Killed (--on_crash=kill), it is answered in the
// step that noticed the crash, which then ends: the clock stands at the
// crash time until the kernel has closed its socket. Left to fail
// (--on_crash=error), it is answered when the crash is noticed, and the
// step goes on moving time while no other rank has anything (try_step
// does not look at the crashed rank again); where it stops depends on the
// world alone, and there the clock stands until the process has exited.
// (A process killed from outside while it waits, by launch's wall-clock
// timeout or a user, leaves when the host says: that is not the
// simulation's doing.)
void FabricServer::leave(uint32_t rank) {
  Rank& r = *ranks_[rank];
  r.client = nullptr;
  r.gone = true;
  r.waiting = false;
  departures_.record(rank, world_->clock().now_ns());
  for (auto& [num, qp] : qps_) {
    if (qp->rank != rank) continue;
    Action close;
    close.type = MsgType::kClose;
    close.thread = kServerThread;
    close.qp_num = num;
    r.actions.push_back(std::move(close));
  }
}

bool FabricServer::all_waiting() const {
  bool any = false;
  for (const auto& r : ranks_) {
    if (!r->expected || r->gone) continue;
    if (r->client == nullptr || !r->waiting) return false;
    any = true;
  }
  return any;
}

void FabricServer::try_step() {
  if (released_ || result_) return;
  // Ranks that left still have their queue pairs to close.
  if (!all_waiting()) return;
  for (auto& r : ranks_) {
    if (r->client != nullptr && !drain_ring(*r->client)) return;
  }
  if (!all_waiting()) return;
  for (;;) {
    apply_actions();
    harvest();
    // Work that waited for room in a queue pair went in as completions
    // freed it, at this same instant: let it move too before answering.
    while (world_->next_event_ns() == world_->clock().now_ns()) {
      world_->advance_to(world_->clock().now_ns());
      harvest();
    }
    notice_crashes();
    if (answer_waiters()) return;
    // Nothing for any waiting rank at this instant: move time.
    std::optional<TimeNs> next = world_->next_event_ns();
    for (const auto& r : ranks_) {
      // A stalled rank's wake-up waits for the stall's end, an event.
      if (world_->stalled(r->index)) continue;
      if (r->waiting && r->wake_at && (!next || *r->wake_at < *next)) {
        next = std::max(*r->wake_at, world_->clock().now_ns());
      }
    }
    if (!next) {
      deadlock("every rank waits on the fabric and nothing is in flight",
               ServeResult::Outcome::kDeadlock);
      return;
    }
    if (*next > world_->options().time_limit_ns) {
      deadlock(absl::StrFormat("virtual time would pass the time limit (%s)",
                               micros(world_->options().time_limit_ns)),
               ServeResult::Outcome::kTimeLimit);
      return;
    }
    world_->advance_to(*next);
  }
}

void FabricServer::apply_actions() {
  // Opens first, in rank order, so a connect finds its far end opened even
  // when that rank's open was queued in this same round.
  for (auto& r : ranks_) {
    for (Action& a : r->actions) {
      if (a.type == MsgType::kOpen) apply(r->index, a);
    }
  }
  // Then each rank's other requests, in an order that does not depend on
  // how the host ran its threads (internal/apply_order.h), and last what
  // the server queued itself when the rank left (kServerThread).
  std::vector<internal::RequestKey> keys;
  std::vector<Action*> asked;
  std::vector<Action*> left;
  for (auto& r : ranks_) {
    keys.clear();
    asked.clear();
    left.clear();
    for (Action& a : r->actions) {
      if (a.type == MsgType::kOpen) continue;
      if (a.thread == kServerThread) {
        left.push_back(&a);
        continue;
      }
      const bool region = a.type == MsgType::kRegisterRegion ||
                          a.type == MsgType::kUnregisterRegion;
      // Queue pair numbers start at kQpsPerRank: 0 is the regions'.
      keys.push_back({a.thread, region ? 0 : a.qp_num});
      asked.push_back(&a);
    }
    for (size_t i : internal::apply_order(keys)) apply(r->index, *asked[i]);
    for (Action* a : left) apply(r->index, *a);
    r->actions.clear();
  }
}

void FabricServer::apply(uint32_t rank, Action& a) {
  if (a.type == MsgType::kRegisterRegion) {
    sim::MemoryRegion region;
    region.slab = a.frame.slab();
    region.offset = a.frame.offset();
    region.bytes = a.frame.bytes();
    region.address = a.address;
    region.remote_write = a.remote_write;
    if (absl::Status s = world_->register_region(rank, a.rkey, region);
        !s.ok()) {
      std::fprintf(stderr, "weft-sim serve: rank %u: %s\n", rank,
                   std::string(s.message()).c_str());
    }
    return;
  }
  if (a.type == MsgType::kUnregisterRegion) {
    (void)world_->unregister_region(rank, a.rkey);
    return;
  }
  auto it = qps_.find(a.qp_num);
  if (it == qps_.end()) return;
  Qp& qp = *it->second;
  switch (a.type) {
    case MsgType::kOpen: {
      absl::StatusOr<std::unique_ptr<Endpoint>> ep =
          world_->fabric(rank).open(qp.device, qp.peer);
      if (ep.ok()) {
        qp.ep = *std::move(ep);
      } else {
        qp.open_failed = true;
        std::fprintf(stderr, "weft-sim serve: rank %u: %s\n", rank,
                     std::string(ep.status().message()).c_str());
      }
      return;
    }
    case MsgType::kConnect: {
      auto far = qps_.find(a.remote_qp_num);
      if (qp.ep == nullptr || qp.connected) return;
      qp.connected = true;
      if (far == qps_.end() || far->second->ep == nullptr ||
          far->second->rank != qp.peer) {
        qp.to_nowhere = true;  // UC does not check: frames go nowhere
        return;
      }
      absl::StatusOr<Destination> d = far->second->ep->destination();
      if (d.ok()) (void)qp.ep->connect(*d);
      return;
    }
    case MsgType::kPostSend:
      qp.sends_waiting.push_back(std::move(a));
      post_to_sim(qp);
      return;
    case MsgType::kPostRecv:
      qp.recvs_waiting.push_back(std::move(a));
      post_to_sim(qp);
      return;
    case MsgType::kClose:
      qp.ep.reset();
      qps_.erase(it);
      return;
    case MsgType::kMoveToError:
      if (qp.ep != nullptr) (void)qp.ep->move_to_error();
      return;
    default:
      return;
  }
}

// Posts what waits for room in the simulator's queue pair. Work the
// simulator cannot take at all (a queue pair that never opened, a send to
// nowhere) completes here as it would on hardware.
void FabricServer::post_to_sim(Qp& qp) {
  Rank& r = *ranks_[qp.rank];
  auto complete_here = [&](const Action& a, bool is_send, WcStatus status) {
    StepCompletion c;
    c.work_id = a.work_id;
    c.qp_num = qp.num;
    c.status = static_cast<int32_t>(status);
    c.byte_len = is_send ? a.length : 0;
    const auto bytes = bytes_of(c);
    r.outbox.insert(r.outbox.end(), bytes.begin(), bytes.end());
    ++r.outbox_count;
  };
  while (!qp.sends_waiting.empty() && (qp.ep == nullptr || qp.to_nowhere ||
                                       qp.sends_in_sim < Endpoint::kMaxSends)) {
    Action a = std::move(qp.sends_waiting.front());
    qp.sends_waiting.pop_front();
    if (qp.ep == nullptr) {
      complete_here(a, true, WcStatus::kWrFlushErr);
      continue;
    }
    if (qp.to_nowhere) {
      complete_here(a, true, WcStatus::kSuccess);
      continue;
    }
    const std::optional<WorkId> id = WorkId::decode(a.work_id);
    const std::optional<uint32_t> immediate =
        a.has_immediate ? std::optional<uint32_t>(a.immediate) : std::nullopt;
    absl::Status s =
        !id            ? absl::InvalidArgumentError("bad work id")
        : a.rdma_write ? qp.ep->post_rdma_write(*id, a.frame, a.length,
                                                a.address, a.rkey, immediate)
        : a.has_immediate
            ? qp.ep->post_send(*id, a.frame, a.length, a.immediate)
            : qp.ep->post_send_without_immediate(*id, a.frame, a.length);
    if (!s.ok()) {
      complete_here(a, true, WcStatus::kLocQpOpErr);
      continue;
    }
    ++qp.sends_in_sim;
    ++qp.sent;
    qp.last_sent =
        absl::StrFormat("%s, %u bytes, posted at %s", id->to_string(), a.length,
                        micros(world_->clock().now_ns()));
  }
  while (!qp.recvs_waiting.empty() &&
         (qp.ep == nullptr || qp.recvs_in_sim < Endpoint::kMaxRecvs)) {
    Action a = std::move(qp.recvs_waiting.front());
    qp.recvs_waiting.pop_front();
    if (qp.ep == nullptr) {
      complete_here(a, false, WcStatus::kWrFlushErr);
      continue;
    }
    const std::optional<WorkId> id = WorkId::decode(a.work_id);
    absl::Status s = id ? qp.ep->post_recv(*id, a.frame)
                        : absl::InvalidArgumentError("bad work id");
    if (!s.ok()) {
      complete_here(a, false, WcStatus::kLocQpOpErr);
      continue;
    }
    ++qp.recvs_in_sim;
  }
}

// Moves every completion the simulator queued into its rank's outbox (with
// the bytes of each receive), returns frames, and posts what waited for
// room.
void FabricServer::harvest() {
  std::array<Completion, Endpoint::kMaxPollBatch> batch;
  for (auto& [num, qp_ptr] : qps_) {
    Qp& qp = *qp_ptr;
    if (qp.ep == nullptr) continue;
    Rank& r = *ranks_[qp.rank];
    for (;;) {
      absl::StatusOr<size_t> n = qp.ep->poll(batch);
      if (!n.ok() || *n == 0) break;
      for (size_t i = 0; i < *n; ++i) {
        const Completion& done = batch[i];
        const bool is_send = done.id.kind == WorkKind::kSend;
        StepCompletion c;
        c.work_id = done.id.encode();
        c.qp_num = num;
        c.status = static_cast<int32_t>(done.status);
        c.byte_len = done.byte_len;
        c.immediate = done.immediate;
        c.has_immediate = done.has_immediate ? 1 : 0;
        c.from_rdma_write = done.from_rdma_write ? 1 : 0;
        if (!is_send && done.ok()) {
          ++qp.received;
          qp.last_received =
              absl::StrFormat("%s, %u bytes, at %s", done.id.to_string(),
                              done.byte_len, micros(world_->clock().now_ns()));
        }
        const auto head = bytes_of(c);
        r.outbox.insert(r.outbox.end(), head.begin(), head.end());
        ++r.outbox_count;
        --(is_send ? qp.sends_in_sim : qp.recvs_in_sim);
      }
    }
    post_to_sim(qp);
  }
  // What RDMA WRITEs put into each rank's regions (its shared slabs), for
  // its process to copy on.
  for (auto& r : ranks_) {
    if (r->client == nullptr) continue;
    for (const sim::WrittenRange& w : world_->take_writes(r->index)) {
      auto id = r->client->slab_ids.find(w.bytes.slab());
      if (id == r->client->slab_ids.end()) continue;
      StepWrite out;
      out.rkey = w.rkey;
      out.address = w.address;
      out.frame.slab = id->second;
      out.frame.offset = w.bytes.offset();
      out.frame.bytes = w.bytes.bytes();
      const auto bytes = bytes_of(out);
      r->writes.insert(r->writes.end(), bytes.begin(), bytes.end());
      ++r->writes_count;
    }
  }
}

void FabricServer::notice_crashes() {
  for (auto& r : ranks_) {
    if (r->crash_noticed || !world_->crashed(r->index)) continue;
    r->crash_noticed = true;
    std::fprintf(stderr, "weft-sim serve: rank %u crashed at %s (fault plan)\n",
                 r->index, micros(world_->clock().now_ns()).c_str());
    if (r->client == nullptr) continue;
    if (options_.on_crash == ServerOptions::OnCrash::kKill &&
        r->client->pid > 0) {
      ::kill(r->client->pid, SIGKILL);
    } else if (r->waiting) {
      answer(*r, kStepCrashed);
    }
  }
}

bool FabricServer::answer_waiters() {
  bool any = false;
  const TimeNs now = world_->clock().now_ns();
  for (auto& r : ranks_) {
    if (!r->waiting || r->client == nullptr) continue;
    const bool crashed = r->crash_noticed;
    // A stall holds the rank's waits until its end, an event time moves
    // to.
    if (!crashed && world_->stalled(r->index)) continue;
    if (r->outbox_count > 0 || r->writes_count > 0 ||
        (r->wake_at && *r->wake_at <= now) || crashed) {
      answer(*r, crashed ? kStepCrashed : 0);
      any = true;
    }
  }
  return any;
}

bool FabricServer::answer(Rank& r, uint32_t flags) {
  Step step;
  step.now_ns = world_->clock().now_ns();
  step.completions = r.outbox_count;
  step.writes = r.writes_count;
  step.flags = flags;
  // The departures visible at this answer's time that the rank has not
  // been sent yet (a departure recorded now is not visible until later).
  const std::span<const Departure> visible =
      departures_.visible_at(step.now_ns);
  std::vector<StepDeparture> departed;
  for (size_t i = r.departures_told; i < visible.size(); ++i) {
    departed.push_back({visible[i].rank, 0, visible[i].left_at_ns});
  }
  step.departures = static_cast<uint32_t>(departed.size());
  const std::array<std::span<const std::byte>, 4> parts = {
      bytes_of(step), std::span<const std::byte>(r.outbox),
      std::span<const std::byte>(r.writes),
      std::as_bytes(std::span<const StepDeparture>(departed))};
  r.departures_told = visible.size();
  r.waiting = false;
  r.since = SteadyClock::now();
  r.wake_at.reset();
  const bool sent = send_to(*r.client, MsgType::kStep, parts);
  // Only now: the parts pointed into them.
  r.outbox.clear();
  r.outbox_count = 0;
  r.writes.clear();
  r.writes_count = 0;
  return sent;
}

bool FabricServer::send_to(Client& client, MsgType type,
                           std::span<const std::span<const std::byte>> parts) {
  if (write_message(client.fd, type, parts, write_deadline()).ok()) {
    return true;
  }
  drop(client, "");  // it has gone, or stopped reading for 10 s
  return false;
}

std::string FabricServer::report(const std::string& why,
                                 ServeResult::Outcome outcome) const {
  std::string out =
      outcome == ServeResult::Outcome::kDeadlock
          ? absl::StrFormat(
                "weft-sim serve: deadlock at virtual time %s: %s; no program "
                "can progress.\n",
                micros(world_->clock().now_ns()), why)
          : absl::StrFormat("weft-sim serve: stopped at virtual time %s: %s.\n",
                            micros(world_->clock().now_ns()), why);
  for (const auto& r : ranks_) {
    if (!r->expected) continue;
    if (r->client == nullptr) {
      absl::StrAppend(
          &out, absl::StrFormat("rank %u: %s\n", r->index,
                                r->ever_connected ? "its process has ended"
                                                  : "never connected"));
      continue;
    }
    absl::StrAppend(
        &out,
        absl::StrFormat("rank %u (pid %d, %s): waits in %s\n", r->index,
                        r->client->pid, r->client->program,
                        r->waits_in.empty() ? "the fabric" : r->waits_in));
    for (const auto& [num, qp] : qps_) {
      if (qp->rank != r->index) continue;
      absl::StrAppend(
          &out, absl::StrFormat(
                    "  qp %u to rank %u on %s: %u receives and %u sends posted "
                    "(%u and %u more waiting for room), %u frames sent, %u "
                    "received%s\n    last sent: %s\n    last received: %s\n",
                    num, qp->peer, qp->device, qp->recvs_in_sim,
                    qp->sends_in_sim, qp->recvs_waiting.size(),
                    qp->sends_waiting.size(), qp->sent, qp->received,
                    qp->ep == nullptr ? ", never opened"
                    : qp->to_nowhere  ? ", connected to no queue pair"
                    : !qp->connected  ? ", not connected"
                                      : "",
                    qp->last_sent, qp->last_received));
    }
  }
  const std::vector<sim::ScriptedFault> faults = world_->injected_faults();
  absl::StrAppend(
      &out, absl::StrFormat("faults injected so far: %u\n", faults.size()));
  for (const sim::ScriptedFault& f : faults) {
    absl::StrAppend(&out, "  ", f.to_text(), "\n");
  }
  return out;
}

// Once per run, when ranks have waited on the fabric for hold_report while
// another rank held virtual time back: which rank, where the clock stands,
// and the last call seen from it (its post ring read first, so its latest
// posts count; reading the ring early changes nothing, as the order of a
// rank's requests is kept). Only prints: the run goes on as it would.
void FabricServer::report_holders() {
  if (holders_reported_ || options_.hold_report.count() <= 0 || released_ ||
      result_) {
    return;
  }
  const auto now = SteadyClock::now();
  const auto long_since = [&](const Rank& r) {
    return now - r.since >= options_.hold_report;
  };
  std::string waiters;
  bool holder = false;
  for (const auto& r : ranks_) {
    if (!r->expected || r->gone) continue;
    const bool waits = r->client != nullptr && r->waiting;
    if (waits && long_since(*r)) {
      absl::StrAppendFormat(&waiters, "%s%u", waiters.empty() ? "" : ", ",
                            r->index);
    }
    holder = holder || (!waits && long_since(*r));
  }
  if (waiters.empty() || !holder) return;
  holders_reported_ = true;
  const long long held_s =
      std::chrono::duration_cast<std::chrono::seconds>(options_.hold_report)
          .count();
  for (auto& r : ranks_) {
    if (!r->expected || r->gone || (r->client != nullptr && r->waiting) ||
        !long_since(*r)) {
      continue;
    }
    std::string who = absl::StrFormat("rank %u", r->index);
    std::string doing = "has not connected yet (made no verbs call)";
    if (r->client != nullptr) {
      (void)drain_ring(*r->client);  // may drop it: then say what is known
    }
    if (r->client != nullptr) {
      who = absl::StrFormat("rank %u (pid %d, %s)", r->index, r->client->pid,
                            r->client->program);
      doing = absl::StrCat("has not waited on the fabric since its last call, ",
                           r->last_call);
    }
    std::fprintf(stderr,
                 "weft-sim serve: %s has held virtual time at %s for %lld s "
                 "of wall time: it %s, while rank(s) %s wait on the fabric "
                 "(a rank that computes, sleeps or waits on anything else "
                 "holds the clock; the run goes on)\n",
                 who.c_str(), micros(world_->clock().now_ns()).c_str(), held_s,
                 doing.c_str(), waiters.c_str());
  }
  std::fflush(stderr);
}

void FabricServer::deadlock(const std::string& why,
                            ServeResult::Outcome outcome) {
  const std::string text = report(why, outcome);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  result_ = ServeResult{outcome, world_->clock().now_ns(), text};
  if (options_.on_deadlock == ServerOptions::OnDeadlock::kLeave) {
    released_ = true;
    for (auto& r : ranks_) {
      if (r->waiting && r->client != nullptr) answer(*r, kStepReleased);
    }
    // Serving goes on (answering at once) until the ranks have gone.
    released_result_ = *std::move(result_);
    result_.reset();
    return;
  }
  const std::string fatal = absl::StrCat(
      "weft-sim serve ended this rank: ",
      outcome == ServeResult::Outcome::kDeadlock ? "deadlock" : "time limit",
      " (the report is in the server's output)");
  for (auto& c : clients_) {
    const std::array<std::span<const std::byte>, 1> parts = {
        std::as_bytes(std::span(fatal))};
    (void)write_message(c->fd, MsgType::kFatal, parts, write_deadline());
  }
}

}  // namespace weft::sim_server
