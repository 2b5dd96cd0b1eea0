// The frame path of a simulated world: a posted send reserves its link
// direction (serialisation; a busy link queues), departs (its send
// completes, its bytes are copied, faults are decided), and arrives
// latency_ns later into the peer's oldest posted receive, or is dropped.
#include "sim/internal/transport.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "fabric/assert.h"
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

Transport::Transport(WorldCore& core, const WorldOptions& options)
    : core_(core),
      options_(options),
      prng_(options.seed),
      rates_any_(options.faults.rates.any()),
      faultless_(!rates_any_ && options.faults.script.empty()),
      serialisation_ns_(options.link.serialisation_ns(serialised_bytes_)) {}

uint32_t Transport::link_index(uint32_t rank, uint32_t peer, uint32_t cable) {
  const uint64_t key =
      (uint64_t{rank} * Topology::kMaxRanks + peer) * Topology::kMaxCables +
      cable;
  auto [it, inserted] =
      link_by_key_.try_emplace(key, static_cast<uint32_t>(links_.size()));
  if (inserted) {
    TimeNs down_at_ns = kNeverNs;
    for (const ScriptedFault& f : options_.faults.script) {
      if (f.takes_link(rank, peer, cable))
        down_at_ns = std::min(down_at_ns, f.at_ns);
    }
    links_.push_back(Link{0, cable, down_at_ns, prng_.fork(key), {}, {}});
  }
  check_sometimes();
  return it->second;
}

uint32_t Transport::pair_index(uint32_t rank, uint32_t peer) {
  const uint64_t key = uint64_t{rank} * Topology::kMaxRanks + peer;
  auto [it, inserted] =
      pair_by_key_.try_emplace(key, static_cast<uint32_t>(pairs_.size()));
  if (!inserted) return it->second;
  Pair pair;
  pair.rank = rank;
  pair.peer = peer;
  const std::vector<ScriptedFault>& script = options_.faults.script;
  for (uint32_t i = 0; i < script.size(); ++i) {
    const ScriptedFault& f = script[i];
    if (f.rank != rank || f.peer != peer) continue;
    if (f.is_frame_fault()) pair.script.push_back(i);
  }
  std::stable_sort(pair.script.begin(), pair.script.end(),
                   [&](uint32_t a, uint32_t b) {
                     return script[a].frame < script[b].frame;
                   });
  pairs_.push_back(std::move(pair));
  check_sometimes();
  return it->second;
}

void Transport::schedule_departure(const SimEndpoint& ep, uint64_t ticket,
                                   uint32_t length) {
  Link& link = links_[ep.link()];
  const TimeNs start = std::max(core_.now(), link.busy_until_ns);
  // Saturates: a hand-built model may serialise for kNeverNs.
  const TimeNs leave = deadline_after(start, serialisation_ns(length));
  link.busy_until_ns = leave;
  if (link.departures.empty())
    core_.schedule(leave, EventKind::kDepart, ep.link());
  link.departures.push_back(Departure{leave, ep.qp_num(), ticket});
  check_after(ep.link());
}

void Transport::on_depart(uint32_t link_index) {
  Link& link = links_[link_index];
  const Departure d = link.departures.front();
  link.departures.pop_front();
  if (!link.departures.empty()) {
    core_.schedule(link.departures.front().leave_ns, EventKind::kDepart,
                   link_index);
  }
  depart(d.qp_num, d.ticket);
  check_after(link_index);
}

void Transport::inject(const ScriptedFault& f, uint32_t cable) {
  core_.note_fault(f, cable);
}

void Transport::apply_script(const ScriptedFault& f, Fate* fate) {
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
void Transport::draw_rates(const SimEndpoint& ep, const Pair& pair,
                           Fate* fate) {
  const FaultRates& rates = options_.faults.rates;
  if (core_.now() >= rates.until_ns) return;  // the faults have stopped
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

Transport::Fate Transport::fate_of(const SimEndpoint& ep, Pair& pair) {
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

void Transport::depart(uint32_t qp_num, uint64_t ticket) {
  SimEndpoint* ep = core_.endpoint(qp_num);
  if (ep == nullptr || core_.crashed(ep->rank())) return;  // closed/NIC dead
  const SimEndpoint::PostedSend* send = ep->front_send();
  if (send == nullptr || send->ticket != ticket) return;  // flushed meanwhile
  Pair& pair = pairs_[ep->pair()];
  ++pair.frames;
  const TimeNs now = core_.now();
  InFlight m;
  m.dst_qp = ep->remote_qp();
  m.pair = ep->pair();
  m.link = ep->link();
  m.length = send->length;
  m.immediate = send->immediate;
  m.has_immediate = send->has_immediate;
  m.op = send->op;
  m.rkey = send->rkey;
  m.remote_address = send->remote_address;
  m.frame = pair.frames;
  m.depart_ns = now;
  // A dead link direction drops everything, before any fault is drawn.
  Fate fate;
  if (now >= links_[ep->link()].down_at_ns) {
    fate.drop_reason = DropReason::kLinkDown;
  } else if (!ep->cabled()) {
    fate.drop_reason = DropReason::kMiscabled;
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
  if (send->tail.slab() != nullptr) {
    m.tail = send->tail.data();
    m.head_length = send->head_length;
  }
  const internal::FrameLoan loan = launch(*ep, fate, m);
  // UC: the send succeeds even when the frame is lost or the link is down.
  ep->complete_front_send(WcStatus::kSuccess, loan);
}

// Puts a departing frame on the wire: traces the departure and schedules
// its arrival (twice when duplicated), unless it is dropped on the way out.
// Its bytes stay in the sender's frame, on loan (see FrameLoan).
internal::FrameLoan Transport::launch(const SimEndpoint& ep, const Fate& fate,
                                      InFlight m) {
  ++core_.counters().frames_sent;
  TraceEvent e =
      core_.trace_event(TraceKind::kDepart, ep.rank(), ep.peer(), ep.cable());
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  e.op = m.op;
  e.rkey = m.rkey;
  core_.record(e);
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
  const TimeNs arrival = core_.now() + options_.link.latency_ns + fate.delay_ns;
  for (uint32_t copy = 0; copy < m.refs; ++copy) {
    if (fate.delay_ns > 0) {
      core_.schedule(arrival, EventKind::kArrive, index);
    } else {
      schedule_arrival(ep.link(), arrival, index);
    }
  }
  return internal::FrameLoan{index, m.id};
}

void Transport::end_loan(const internal::FrameLoan& loan) {
  InFlight& m = in_flight_[loan.message];
  if (m.id != loan.id || m.refs == 0 || m.payload != kNoPayload ||
      m.placed_in != nullptr)
    return;
  if (!place_early(loan.message)) {
    const uint32_t head = m.tail != nullptr ? m.head_length : m.length;
    m.payload = payloads_.acquire({m.source, head}, {m.tail, m.length - head});
    core_.counters().payload_bytes_copied += m.length;
  }
  check_after(m.link);
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
// completion, so nobody sees them early. An RDMA WRITE is never placed
// early (its region is checked when it arrives), so no frame behind it on
// its link is either.
bool Transport::place_early(uint32_t message) {
  InFlight& m = in_flight_[message];
  if (!faultless_ || m.op != MessageOp::kSend) return false;
  Link& link = links_[m.link];
  const uint32_t ahead = link.placed;
  if (ahead >= link.arrivals.size() ||
      link.arrivals[ahead].message != message ||
      (ahead > 0 && link.placed_dst_qp != m.dst_qp)) {
    return false;
  }
  const SimEndpoint* dst = core_.endpoint(m.dst_qp);
  if (dst == nullptr || dst->state() != internal::QpState::kRts ||
      !dst->cabled()) {
    return false;
  }
  const SimEndpoint::PostedRecv* recv = dst->posted_recv(ahead);
  if (recv == nullptr || m.length > recv->capacity()) return false;
  copy_into(m, *recv);
  m.placed_in = recv->frame.data();
  link.placed_dst_qp = m.dst_qp;
  ++link.placed;
  return true;
}

void Transport::schedule_arrival(uint32_t link_index, TimeNs at_ns,
                                 uint32_t message) {
  Link& link = links_[link_index];
  if (link.arrivals.empty()) {
    core_.schedule(at_ns, EventKind::kArriveLink, link_index);
  } else {
    WEFT_ASSERT(link.arrivals.back().arrive_ns <= at_ns,
                "an undelayed frame would arrive before one that left earlier "
                "on its link");
  }
  link.arrivals.push_back(Arrival{at_ns, message});
}

void Transport::on_arrive_link(uint32_t link_index) {
  Link& link = links_[link_index];
  const Arrival a = link.arrivals.front();
  link.arrivals.pop_front();
  if (in_flight_[a.message].placed_in != nullptr) --link.placed;
  if (!link.arrivals.empty()) {
    core_.schedule(link.arrivals.front().arrive_ns, EventKind::kArriveLink,
                   link_index);
  }
  arrive(a.message);
  check_after(link_index);
}

void Transport::on_arrive(uint32_t message) {
  arrive(message);
  check_after(in_flight_[message].link);
}

void Transport::release(uint32_t message) {
  InFlight& m = in_flight_[message];
  WEFT_ASSERT(m.refs > 0, "a frame in flight released more often than sent");
  if (--m.refs > 0) return;
  if (m.payload != kNoPayload) payloads_.release(m.payload);
  free_in_flight_.push_back(message);
}

void Transport::drop(const InFlight& m, uint32_t sender, uint32_t receiver,
                     uint32_t cable, DropReason reason) {
  Counters& counters = core_.counters();
  ++counters.frames_dropped;
  switch (reason) {
    case DropReason::kNoReceive:
      ++counters.dropped_no_receive;
      break;
    case DropReason::kLoss:
      ++counters.dropped_loss;
      break;
    case DropReason::kLinkDown:
      ++counters.dropped_link_down;
      break;
    case DropReason::kPeerCrashed:
      ++counters.dropped_peer_crashed;
      break;
    case DropReason::kRemoteAccess:
      ++counters.dropped_remote_access;
      break;
    case DropReason::kMiscabled:
      ++counters.dropped_miscabled;
      break;
    default:
      ++counters.dropped_not_ready;
      break;
  }
  TraceEvent e = core_.trace_event(TraceKind::kDrop, sender, receiver, cable);
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  e.drop = reason;
  e.start_ns = m.depart_ns;
  e.op = m.op;
  e.rkey = m.rkey;
  core_.record(e);
}

void Transport::arrive(uint32_t message) {
  const InFlight& m = in_flight_[message];
  const Pair& pair = pairs_[m.pair];
  SimEndpoint* dst = core_.endpoint(m.dst_qp);
  DropReason reason = DropReason::kNone;
  if (core_.now() >= links_[m.link].down_at_ns) {
    reason = DropReason::kLinkDown;
  } else if (core_.crashed(pair.peer)) {
    reason = DropReason::kPeerCrashed;
  } else if (dst != nullptr && !dst->cabled()) {
    reason = DropReason::kMiscabled;
  } else if (dst == nullptr || dst->state() != internal::QpState::kRts) {
    reason = DropReason::kNotReady;
  } else if (m.op != MessageOp::kRdmaWrite && !dst->has_recv()) {
    reason = DropReason::kNoReceive;  // a plain RDMA WRITE needs none
  }
  if (reason != DropReason::kNone) {
    drop(m, pair.rank, pair.peer, links_[m.link].cable, reason);
  } else if (m.op == MessageOp::kSend) {
    deliver(*dst, m);
  } else {
    deliver_write(*dst, m);
  }
  release(message);
}

TraceEvent Transport::delivery_event(const SimEndpoint& dst, const InFlight& m,
                                     WorkId work) const {
  TraceEvent e = core_.trace_event(TraceKind::kDeliver, dst.rank(), dst.peer(),
                                   dst.cable());
  e.work = work;
  e.sequence = m.immediate;
  e.frame = m.frame;
  e.bytes = m.length;
  e.start_ns = m.depart_ns;
  return e;
}

void Transport::deliver(SimEndpoint& dst, const InFlight& m) {
  ++core_.counters().frames_delivered;
  const SimEndpoint::PostedRecv recv = dst.take_recv();
  core_.record(delivery_event(dst, m, recv.id));
  WcStatus status = m.recv_error;
  if (status == WcStatus::kSuccess && m.length > recv.capacity()) {
    status = WcStatus::kLocLenErr;
  }
  if (status != WcStatus::kSuccess) {
    dst.complete_recv(recv, status, 0, 0);
    dst.enter_error();
    return;
  }
  WEFT_ASSERT(m.placed_in == nullptr || m.placed_in == recv.frame.data(),
              "a frame placed early landed in another receive than the one "
              "it was placed in");
  if (m.length > 0 && m.placed_in == nullptr) copy_into(m, recv);
  dst.complete_recv(recv, WcStatus::kSuccess, m.length, m.immediate,
                    m.has_immediate);
}

const MemoryRegion* Transport::write_target(uint32_t rank,
                                            const InFlight& m) const {
  const MemoryRegion* region = core_.region(rank, m.rkey);
  if (region == nullptr || !region->remote_write ||
      m.remote_address < region->address || m.length > region->bytes ||
      m.remote_address - region->address > region->bytes - m.length) {
    return nullptr;
  }
  return region;
}

// The receiving side of an RDMA WRITE, in the order verbs UC checks it
// (rxe's responder): a receive for one with an immediate (arrive() dropped
// it already when none is posted), then the region. An injected receive
// error refuses the packet before either: the receive it would consume
// completes with the error, and the queue pair enters the error state. A
// zero-length write names no memory, so its key and address are not
// checked.
void Transport::deliver_write(SimEndpoint& dst, const InFlight& m) {
  const bool with_immediate = m.op == MessageOp::kRdmaWriteWithImmediate;
  const MemoryRegion* region = nullptr;
  if (m.recv_error == WcStatus::kSuccess && m.length > 0) {
    region = write_target(dst.rank(), m);
    if (region == nullptr) {
      const Pair& pair = pairs_[m.pair];
      drop(m, pair.rank, pair.peer, links_[m.link].cable,
           DropReason::kRemoteAccess);
      return;
    }
  }
  ++core_.counters().frames_delivered;
  SimEndpoint::PostedRecv recv;
  if (with_immediate) recv = dst.take_recv();
  TraceEvent e = delivery_event(dst, m, recv.id);
  e.op = m.op;
  e.rkey = m.rkey;
  e.status = m.recv_error;
  core_.record(e);
  if (m.recv_error != WcStatus::kSuccess) {
    if (with_immediate) {
      dst.complete_recv(recv, m.recv_error, 0, 0, true,
                        /*from_rdma_write=*/true);
    }
    dst.enter_error();
    return;
  }
  if (region != nullptr) {
    const uint64_t offset =
        region->offset + (m.remote_address - region->address);
    const Frame placed = *region->slab->frame(offset, m.length);
    std::memcpy(placed.data(), bytes_of(m).data(), m.length);
    core_.counters().payload_bytes_copied += m.length;
    core_.note_write(dst.rank(), m.rkey, m.remote_address, placed);
  }
  if (with_immediate) {
    dst.complete_recv(recv, WcStatus::kSuccess, m.length, m.immediate, true,
                      /*from_rdma_write=*/true);
  }
}

// The checks, in the order of the structures they walk.

void Transport::check_link_ends(const Link& link) const {
  if (!link.departures.empty()) {
    WEFT_ASSERT(link.departures.back().leave_ns == link.busy_until_ns,
                "a link's last queued departure does not leave when the link "
                "is reserved until");
    WEFT_ASSERT(link.departures.front().leave_ns >= core_.now(),
                "a link is reserved for a departure before now");
  }
  if (!link.arrivals.empty()) {
    WEFT_ASSERT(link.arrivals.front().arrive_ns >= core_.now(),
                "a frame on a link was due to arrive before now");
  }
  WEFT_ASSERT(link.placed <= link.arrivals.size(),
              "more frames placed early on a link than are in flight on it");
}

void Transport::check_link(uint32_t index) const {
  const Link& link = links_[index];
  check_link_ends(link);
  WEFT_ASSERT(link.cable < Topology::kMaxCables, "a link on no cable");
  for (size_t i = 1; i < link.departures.size(); ++i) {
    WEFT_ASSERT(link.departures[i - 1].leave_ns <= link.departures[i].leave_ns,
                "departures queued on a link out of order");
  }
  for (size_t i = 0; i < link.arrivals.size(); ++i) {
    const InFlight& m = in_flight_[link.arrivals[i].message];
    WEFT_ASSERT(m.refs > 0 && m.link == index,
                "a link's queued arrival is not a frame in flight on it");
    WEFT_ASSERT((m.placed_in != nullptr) == (i < link.placed),
                "the frames placed early on a link are not its first ones");
    WEFT_ASSERT(i >= link.placed || m.dst_qp == link.placed_dst_qp,
                "frames placed early on a link for different queue pairs");
    if (i == 0) continue;
    const Arrival& before = link.arrivals[i - 1];
    const InFlight& earlier = in_flight_[before.message];
    WEFT_ASSERT(before.arrive_ns <= link.arrivals[i].arrive_ns &&
                    earlier.depart_ns <= m.depart_ns &&
                    earlier.frame <= m.frame,
                "frames in flight on a link are not in departure order");
  }
}

void Transport::check_frames() const {
  std::vector<bool> free(in_flight_.size(), false);
  for (const uint32_t message : free_in_flight_) {
    WEFT_ASSERT(message < in_flight_.size() && !free[message],
                "the free list of frames in flight holds a slot twice");
    WEFT_ASSERT(in_flight_[message].refs == 0,
                "a free frame in flight slot still has arrivals to come");
    free[message] = true;
  }
  size_t with_payload = 0;
  for (size_t i = 0; i < in_flight_.size(); ++i) {
    const InFlight& m = in_flight_[i];
    WEFT_ASSERT(free[i] || m.refs > 0,
                "a frame in flight slot with no arrivals to come is not free");
    if (free[i]) continue;
    WEFT_ASSERT(m.refs <= 2, "a frame in flight arrives more than twice");
    WEFT_ASSERT(m.link < links_.size() && m.pair < pairs_.size(),
                "a frame in flight on no link or pair");
    if (m.payload == kNoPayload) continue;
    ++with_payload;
    WEFT_ASSERT(m.placed_in == nullptr,
                "a frame placed early also holds a payload buffer");
    WEFT_ASSERT(payloads_.bytes(m.payload).size() == m.length,
                "a frame's payload buffer holds another length than it");
  }
  // Each buffer in use belongs to exactly one frame in flight whose loan
  // ended before it was placed or delivered.
  WEFT_ASSERT(with_payload == payloads_.in_use(),
              "payload buffers in use differ from the frames in flight "
              "holding one");
}

void Transport::check_invariants() const {
  WEFT_ASSERT(link_by_key_.size() == links_.size() &&
                  pair_by_key_.size() == pairs_.size(),
              "the link or pair lookup disagrees with the links or pairs");
  for (const auto& [key, index] : link_by_key_) {
    WEFT_ASSERT(index < links_.size() &&
                    links_[index].cable == key % Topology::kMaxCables,
                "a link lookup entry names another link");
  }
  for (uint32_t i = 0; i < links_.size(); ++i) check_link(i);
  const std::vector<ScriptedFault>& script = options_.faults.script;
  for (const Pair& pair : pairs_) {
    WEFT_ASSERT(pair.script_cursor <= pair.script.size(),
                "a pair's fault script cursor is past its script");
    for (size_t i = 0; i < pair.script.size(); ++i) {
      const ScriptedFault& f = script[pair.script[i]];
      WEFT_ASSERT(f.rank == pair.rank && f.peer == pair.peer,
                  "a pair's fault script holds another pair's fault");
      WEFT_ASSERT(i == 0 || script[pair.script[i - 1]].frame <= f.frame,
                  "a pair's fault script is not in frame order");
      WEFT_ASSERT(i >= pair.script_cursor || f.frame <= pair.frames,
                  "a pair's fault script passed a frame not yet sent");
    }
  }
  check_frames();
  payloads_.check_invariants();
  WEFT_ASSERT(
      serialisation_ns_ == options_.link.serialisation_ns(serialised_bytes_),
      "the remembered serialisation time is for another length");
}

}  // namespace weft::sim
