// The frame path of a simulated world: a posted send reserves its link
// direction (serialisation; a busy link queues), departs (its send
// completes, its bytes are copied, faults are decided), and arrives
// latency_ns later into the peer's oldest posted receive, or is dropped.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "sim/internal/world_core.h"

namespace weft::sim {
namespace {

// Error statuses a rate-injected error completion picks from, per side:
// what a UC queue pair reports when its own work request or the arriving
// packet is refused.
constexpr WcStatus kSendSideErrors[] = {WcStatus::kLocQpOpErr,
                                        WcStatus::kLocProtErr};
constexpr WcStatus kRecvSideErrors[] = {
    WcStatus::kLocProtErr, WcStatus::kLocQpOpErr, WcStatus::kRemOpErr};

}  // namespace

using internal::EventKind;
using internal::SimEndpoint;

void WorldCore::schedule_departure(const SimEndpoint& ep, uint64_t ticket,
                                   uint32_t length) {
  Link& link = links_[ep.link()];
  const TimeNs start = std::max(now(), link.busy_until_ns);
  // Saturates: a hand-built model may serialise for kNeverNs.
  const TimeNs leave = deadline_after(start, serialisation_ns(length));
  link.busy_until_ns = leave;
  if (link.departures.empty())
    events_.push(leave, EventKind::kDepart, ep.link());
  link.departures.push_back(Departure{leave, ep.qp_num(), ticket});
}

void WorldCore::depart_next(uint32_t link_index) {
  Link& link = links_[link_index];
  const Departure d = link.departures.front();
  link.departures.pop_front();
  if (!link.departures.empty()) {
    events_.push(link.departures.front().leave_ns, EventKind::kDepart,
                 link_index);
  }
  depart(d.qp_num, d.ticket);
}

void WorldCore::inject(const ScriptedFault& f, uint32_t cable) {
  ++counters_.faults[static_cast<size_t>(f.kind)];
  injected_.push_back(f);
  TraceEvent e = trace_event(TraceKind::kFault, f.rank, f.peer, cable);
  e.frame = f.frame;
  e.status = f.status;
  e.fault = f.kind;
  e.start_ns = f.duration_ns;
  record(e);
}

void WorldCore::apply_script(const ScriptedFault& f, Fate* fate) {
  switch (f.kind) {
    case FaultKind::kDrop:
      fate->drop_reason = DropReason::kLoss;
      break;
    case FaultKind::kDuplicate:
      fate->duplicate = true;
      break;
    case FaultKind::kDelay:
      fate->delay_ns += f.duration_ns;
      break;
    case FaultKind::kError:
      (f.side == FaultSide::kSend ? fate->send_error : fate->recv_error) =
          f.status;
      break;
    default:
      break;
  }
}

// Draws this frame's rate faults from its link's own generator. Draws happen
// in a fixed order and only for non-zero rates.
void WorldCore::draw_rates(const SimEndpoint& ep, const Pair& pair,
                           Fate* fate) {
  const FaultRates& rates = options_.faults.rates;
  Link& link = links_[ep.link()];
  ScriptedFault f;
  f.rank = pair.rank;
  f.peer = pair.peer;
  f.frame = pair.frames;
  auto add = [&](FaultKind kind) {
    f.kind = kind;
    apply_script(f, fate);
    inject(f, ep.cable());
  };
  if (link.prng.chance(rates.loss)) add(FaultKind::kDrop);
  if (link.prng.chance(rates.error_completion)) {
    f.side = link.prng.below(2) == 0 ? FaultSide::kSend : FaultSide::kRecv;
    f.status =
        f.side == FaultSide::kSend
            ? kSendSideErrors[link.prng.below(std::size(kSendSideErrors))]
            : kRecvSideErrors[link.prng.below(std::size(kRecvSideErrors))];
    add(FaultKind::kError);
    f.status = WcStatus::kSuccess;
    f.side = FaultSide::kRecv;
  }
  if (link.prng.chance(rates.duplicate)) add(FaultKind::kDuplicate);
  if (link.prng.chance(rates.reorder)) {
    f.duration_ns =
        1 + static_cast<TimeNs>(link.prng.below(kMaxReorderDelayNs));
    add(FaultKind::kDelay);
  }
}

WorldCore::Fate WorldCore::fate_of(const SimEndpoint& ep, Pair& pair) {
  Fate fate;
  const std::vector<ScriptedFault>& script = options_.faults.script;
  while (pair.script_cursor < pair.script.size()) {
    const ScriptedFault& f = script[pair.script[pair.script_cursor]];
    if (f.frame > pair.frames) break;
    ++pair.script_cursor;
    if (f.frame < pair.frames) continue;
    apply_script(f, &fate);
    inject(f, ep.cable());
  }
  if (rates_any_) draw_rates(ep, pair, &fate);
  return fate;
}

void WorldCore::depart(uint32_t qp_num, uint64_t ticket) {
  SimEndpoint* ep = endpoint(qp_num);
  if (ep == nullptr || crashed_[ep->rank()]) return;  // closed, or NIC dead
  const SimEndpoint::PostedSend* send = ep->front_send();
  if (send == nullptr || send->ticket != ticket) return;  // flushed meanwhile
  Pair& pair = pairs_[ep->pair()];
  ++pair.frames;
  InFlight m;
  m.dst_qp = ep->remote_qp();
  m.pair = ep->pair();
  m.link = ep->link();
  m.length = send->length;
  m.immediate = send->immediate;
  m.frame = pair.frames;
  m.depart_ns = now();
  // A dead link direction drops everything, before any fault is drawn.
  Fate fate;
  if (now() >= pair.down_at_ns) {
    fate.drop_reason = DropReason::kLinkDown;
  } else if (rates_any_ || pair.script_cursor < pair.script.size()) {
    fate = fate_of(*ep, pair);
  }
  if (fate.send_error != WcStatus::kSuccess) {
    ep->complete_front_send(fate.send_error);
    ep->enter_error();
    return;
  }
  m.recv_error = fate.recv_error;
  m.source = send->frame.data();
  const internal::FrameLoan loan = launch(*ep, fate, m);
  // UC: the send succeeds even when the frame is lost or the link is down.
  ep->complete_front_send(WcStatus::kSuccess, loan);
}

// Puts a departing frame on the wire: traces the departure and schedules
// its arrival (twice when duplicated), unless it is dropped on the way out.
// Its bytes stay in the sender's frame, on loan (see FrameLoan).
internal::FrameLoan WorldCore::launch(const SimEndpoint& ep, const Fate& fate,
                                      InFlight m) {
  ++counters_.frames_sent;
  TraceEvent e =
      trace_event(TraceKind::kDepart, ep.rank(), ep.peer(), ep.cable());
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  record(e);
  if (fate.drop_reason != DropReason::kNone) {
    drop(m, ep.rank(), ep.peer(), ep.cable(), fate.drop_reason);
    return {};
  }
  m.refs = fate.duplicate ? 2 : 1;
  m.id = static_cast<uint32_t>(next_message_id_++);
  uint32_t index;
  if (free_in_flight_.empty()) {
    index = static_cast<uint32_t>(in_flight_.size());
    in_flight_.push_back(m);
  } else {
    index = free_in_flight_.back();
    free_in_flight_.pop_back();
    in_flight_[index] = m;
  }
  const TimeNs arrival = now() + options_.link.latency_ns + fate.delay_ns;
  for (uint32_t copy = 0; copy < m.refs; ++copy) {
    if (fate.delay_ns > 0) {
      events_.push(arrival, EventKind::kArrive, index);
    } else {
      schedule_arrival(ep.link(), arrival, index);
    }
  }
  return internal::FrameLoan{index, m.id};
}

void WorldCore::end_loan(const internal::FrameLoan& loan) {
  InFlight& m = in_flight_[loan.message];
  if (m.id != loan.id || m.refs == 0 || m.payload != kNoPayload ||
      m.placed_in != nullptr)
    return;
  if (place_early(loan.message)) return;
  m.payload = payloads_.acquire({m.source, m.length});
}

// In a world without faults a frame's receive is known before it arrives:
// frames to one queue pair all cross the same link direction (connect()
// pairs endpoints on one cable), arrive in the order they left, and each
// takes the oldest posted receive. Receives are only added behind, and only
// taken by those arrivals or flushed by an error, which without faults only
// a frame too long for its receive causes. So once every frame ahead of
// this one on its link is placed (each fitting its receive, all for the
// same queue pair), this one's receive is the one as many places further
// back, and if it is posted and fits, the bytes go there now: one copy
// instead of two. A posted receive's frame belongs to the fabric until its
// completion, so nobody sees them early.
bool WorldCore::place_early(uint32_t message) {
  InFlight& m = in_flight_[message];
  if (!faultless_) return false;
  Link& link = links_[m.link];
  const uint32_t ahead = link.placed;
  if (ahead >= link.arrivals.size() ||
      link.arrivals[ahead].message != message ||
      (ahead > 0 && link.placed_dst_qp != m.dst_qp)) {
    return false;
  }
  const SimEndpoint* dst = endpoint(m.dst_qp);
  if (dst == nullptr || dst->state() != internal::QpState::kRts) return false;
  const Frame* recv = dst->posted_recv_frame(ahead);
  if (recv == nullptr || m.length > recv->bytes()) return false;
  if (m.length > 0) std::memcpy(recv->data(), m.source, m.length);
  m.placed_in = recv->data();
  link.placed_dst_qp = m.dst_qp;
  ++link.placed;
  return true;
}

std::span<const std::byte> WorldCore::bytes_of(const InFlight& m) const {
  return m.payload != kNoPayload
             ? payloads_.bytes(m.payload)
             : std::span<const std::byte>(m.source, m.length);
}

void WorldCore::schedule_arrival(uint32_t link_index, TimeNs at_ns,
                                 uint32_t message) {
  Link& link = links_[link_index];
  if (link.arrivals.empty()) {
    events_.push(at_ns, EventKind::kArriveLink, link_index);
  }
  link.arrivals.push_back(Arrival{at_ns, message});
}

void WorldCore::arrive_next(uint32_t link_index) {
  Link& link = links_[link_index];
  const Arrival a = link.arrivals.front();
  link.arrivals.pop_front();
  if (in_flight_[a.message].placed_in != nullptr) --link.placed;
  if (!link.arrivals.empty()) {
    events_.push(link.arrivals.front().arrive_ns, EventKind::kArriveLink,
                 link_index);
  }
  arrive(a.message);
}

void WorldCore::release(uint32_t message) {
  InFlight& m = in_flight_[message];
  if (--m.refs > 0) return;
  if (m.payload != kNoPayload) payloads_.release(m.payload);
  free_in_flight_.push_back(message);
}

void WorldCore::drop(const InFlight& m, uint32_t sender, uint32_t receiver,
                     uint32_t cable, DropReason reason) {
  ++counters_.frames_dropped;
  switch (reason) {
    case DropReason::kNoReceive:
      ++counters_.dropped_no_receive;
      break;
    case DropReason::kLoss:
      ++counters_.dropped_loss;
      break;
    case DropReason::kLinkDown:
      ++counters_.dropped_link_down;
      break;
    case DropReason::kPeerCrashed:
      ++counters_.dropped_peer_crashed;
      break;
    default:
      ++counters_.dropped_not_ready;
      break;
  }
  TraceEvent e = trace_event(TraceKind::kDrop, sender, receiver, cable);
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  e.drop = reason;
  e.start_ns = m.depart_ns;
  record(e);
}

void WorldCore::arrive(uint32_t message) {
  const InFlight& m = in_flight_[message];
  const Pair& pair = pairs_[m.pair];
  SimEndpoint* dst = endpoint(m.dst_qp);
  DropReason reason = DropReason::kNone;
  if (now() >= pair.down_at_ns) {
    reason = DropReason::kLinkDown;
  } else if (crashed_[pair.peer]) {
    reason = DropReason::kPeerCrashed;
  } else if (dst == nullptr || dst->state() != internal::QpState::kRts) {
    reason = DropReason::kNotReady;
  } else if (!dst->has_recv()) {
    reason = DropReason::kNoReceive;
  }
  if (reason != DropReason::kNone) {
    drop(m, pair.rank, pair.peer, links_[m.link].cable, reason);
  } else {
    deliver(*dst, m);
  }
  release(message);
}

void WorldCore::deliver(SimEndpoint& dst, const InFlight& m) {
  ++counters_.frames_delivered;
  const SimEndpoint::PostedRecv recv = dst.take_recv();
  TraceEvent e =
      trace_event(TraceKind::kDeliver, dst.rank(), dst.peer(), dst.cable());
  e.work = recv.id;
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  e.start_ns = m.depart_ns;
  record(e);
  WcStatus status = m.recv_error;
  if (status == WcStatus::kSuccess && m.length > recv.frame.bytes()) {
    status = WcStatus::kLocLenErr;
  }
  if (status != WcStatus::kSuccess) {
    dst.complete_recv(recv, status, 0, 0);
    dst.enter_error();
    return;
  }
  assert(m.placed_in == nullptr || m.placed_in == recv.frame.data());
  if (m.length > 0 && m.placed_in == nullptr) {
    std::memcpy(recv.frame.data(), bytes_of(m).data(), m.length);
  }
  dst.complete_recv(recv, WcStatus::kSuccess, m.length, m.immediate);
}

}  // namespace weft::sim
