// WorldCore: construction, the queue pair registry, scripted timed faults and
// the event dispatch. The frame path (departure, faults, arrival) is
// Transport's, in transport.cc.
#include "sim/internal/world_core.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"

namespace weft::sim {

using internal::EventKind;
using internal::SimEndpoint;

absl::StatusOr<std::unique_ptr<WorldCore>> WorldCore::create(
    WorldOptions options) {
  const uint32_t ranks = options.topology.ranks();
  if (ranks == 0) {
    return absl::InvalidArgumentError("a world needs at least one rank");
  }
  if (options.link.latency_ns < 0 || options.link.per_message_ns < 0 ||
      !(options.link.bandwidth_bytes_per_s >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link model ", options.link.to_string(),
        " has a negative figure; latency, overhead and bandwidth are >= 0"));
  }
  if (absl::Status s = options.faults.rates.validate(); !s.ok()) return s;
  if (absl::Status s = options.faults.check_world(options.topology); !s.ok()) {
    return s;
  }
  if (options.time_limit_ns <= 0) {
    return absl::InvalidArgumentError("time_limit_ns must be positive");
  }
  auto core = std::unique_ptr<WorldCore>(new WorldCore(std::move(options)));
  core->schedule_script();
  return core;
}

WorldCore::WorldCore(WorldOptions options)
    : options_(std::move(options)),
      trace_(options_.keep_trace_events),
      ready_(options_.topology.ranks()),
      transport_(*this, options_) {
  const uint32_t n = ranks();
  crashed_.assign(n, false);
  regions_.resize(n);
  writes_.resize(n);
  prefetch_lines_.resize(n);
  stalls_.resize(n);
  fabrics_.reserve(n);
  for (uint32_t r = 0; r < n; ++r)
    fabrics_.push_back(std::make_unique<SimFabric>(*this, r));
}

void WorldCore::schedule_script() {
  const std::vector<ScriptedFault>& script = options_.faults.script;
  for (uint32_t i = 0; i < script.size(); ++i) {
    const ScriptedFault& f = script[i];
    if (!f.is_timed_fault()) continue;
    events_.push(f.at_ns, EventKind::kFaultStart, i);
    if (f.kind == FaultKind::kStall) {
      stalls_[f.rank].emplace_back(f.at_ns,
                                   deadline_after(f.at_ns, f.duration_ns));
      events_.push(deadline_after(f.at_ns, f.duration_ns), EventKind::kFaultEnd,
                   i);
    }
  }
}

bool WorldCore::stalled(uint32_t rank) const {
  const TimeNs t = now();
  for (const auto& [start, end] : stalls_[rank]) {
    if (t >= start && t < end) return true;
  }
  return false;
}

uint32_t WorldCore::next_qp_num() const {
  return kFirstQpNum + static_cast<uint32_t>(endpoints_.size());
}

uint32_t WorldCore::register_endpoint(SimEndpoint* endpoint) {
  const uint32_t qp_num = next_qp_num();
  WEFT_ASSERT(endpoint->qp_num() == qp_num,
              "an endpoint registered under another queue pair number than "
              "its own");
  endpoints_.push_back(endpoint);
  check_sometimes();
  return qp_num;
}

void WorldCore::unregister_endpoint(uint32_t qp_num) {
  WEFT_ASSERT(
      endpoint(qp_num) != nullptr && endpoint(qp_num)->qp_num() == qp_num,
      "a queue pair unregistered that is not registered");
  endpoints_[qp_num - kFirstQpNum] = nullptr;
  check_sometimes();
}

uint64_t WorldCore::process_due() {
  uint64_t n = 0;
  while (!events_.empty() && events_.next_time_ns() <= now()) {
    handle(events_.pop());
    ++n;
  }
  counters_.events += n;
  check_sometimes();
  return n;
}

void WorldCore::handle(const internal::Event& e) {
  switch (e.kind) {
    case EventKind::kDepart:
      transport_.on_depart(e.index);
      break;
    case EventKind::kArrive:
      transport_.on_arrive(e.index);
      break;
    case EventKind::kArriveLink:
      transport_.on_arrive_link(e.index);
      break;
    case EventKind::kFaultStart:
      scripted(e.index, false);
      break;
    case EventKind::kFaultEnd:
      scripted(e.index, true);
      break;
  }
}

void WorldCore::scripted(uint32_t index, bool end) {
  const ScriptedFault& f = options_.faults.script[index];
  // A link_down of one cable names it; every other fault traces cable 0.
  TraceEvent e = trace_event(TraceKind::kFault, f.rank, f.peer,
                             f.cable == kAllCables ? 0 : f.cable);
  e.fault = f.kind;
  e.start_ns = f.duration_ns;
  if (end) {
    // A stall's end: traced (with start_ns = -1) so the trace shows it.
    e.start_ns = -1;
    record(e);
    ready_.mark(f.rank);
    return;
  }
  ++counters_.faults[static_cast<size_t>(f.kind)];
  injected_.push_back(f);
  record(e);
  if (f.kind == FaultKind::kCrash) {
    if (!crashed_[f.rank]) departures_.push_back(Departure{f.rank, now()});
    crashed_[f.rank] = true;
    ready_.mark(f.rank);  // so the scheduler sees it finished
  }
  if (f.kind == FaultKind::kQpError) {
    for (SimEndpoint* ep : endpoints_) {
      if (ep != nullptr && ep->rank() == f.rank && ep->peer() == f.peer &&
          ep->state() != internal::QpState::kError && !crashed_[f.rank]) {
        ep->enter_error();
      }
    }
  }
}

bool WorldCore::cable_up(uint32_t rank, uint32_t peer, uint32_t cable) const {
  for (const ScriptedFault& f : options_.faults.script) {
    if (f.takes_link(rank, peer, cable) && f.at_ns <= now()) return false;
  }
  return true;
}

bool WorldCore::delivers(uint32_t rank, uint32_t peer) const {
  if (rank >= ranks() || peer >= ranks() || crashed_[rank] || crashed_[peer]) {
    return false;
  }
  auto ready = [&](uint32_t from, uint32_t to, uint32_t cable) {
    for (const internal::SimEndpoint* ep : endpoints_) {
      if (ep != nullptr && ep->rank() == from && ep->peer() == to &&
          ep->cabled() && ep->cable() == cable &&
          ep->state() == internal::QpState::kRts) {
        return true;
      }
    }
    return false;
  };
  // Some cable whose direction rank -> peer is up, with a ready queue pair
  // at both ends.
  for (const internal::SimEndpoint* ep : endpoints_) {
    if (ep != nullptr && ep->rank() == rank && ep->peer() == peer &&
        ep->cabled() && ep->state() == internal::QpState::kRts &&
        cable_up(rank, peer, ep->cable()) && ready(peer, rank, ep->cable())) {
      return true;
    }
  }
  return false;
}

absl::Status WorldCore::register_region(uint32_t rank, uint32_t rkey,
                                        const MemoryRegion& region) {
  if (rank >= ranks()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot register a memory region for rank %u: the "
                        "world has ranks 0..%u",
                        rank, ranks() - 1));
  }
  const Slab* slab = region.slab;
  if (slab == nullptr || region.bytes == 0 || region.offset > slab->bytes() ||
      region.bytes > slab->bytes() - region.offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "memory region %u of rank %u: %u bytes at offset %u do not fit in "
        "its slab (%u bytes); a region is a non-empty part of one slab",
        rkey, rank, region.bytes, region.offset,
        slab == nullptr ? 0 : slab->bytes()));
  }
  absl::StatusOr<Frame> start = slab->frame(region.offset, 0);
  if (!start.ok() || !fabrics_[rank]->owns(*start)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "memory region %u of rank %u lies in a slab rank %u's fabric did not "
        "create; register the rank's own slabs",
        rkey, rank, rank));
  }
  if (region.address > ~uint64_t{0} - (region.bytes - 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "memory region %u of rank %u: %u bytes from address %#x wrap past "
        "the end of the address space",
        rkey, rank, region.bytes, region.address));
  }
  if (!regions_[rank].try_emplace(rkey, region).second) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "rank %u already has a memory region with key %u; unregister it "
        "first or use another key",
        rank, rkey));
  }
  return absl::OkStatus();
}

absl::Status WorldCore::unregister_region(uint32_t rank, uint32_t rkey) {
  if (rank >= ranks() || regions_[rank].erase(rkey) == 0) {
    return absl::NotFoundError(absl::StrFormat(
        "rank %u has no memory region with key %u to unregister", rank, rkey));
  }
  std::erase_if(writes_[rank],
                [&](const WrittenRange& w) { return w.rkey == rkey; });
  return absl::OkStatus();
}

// Consecutive writes to one region that continue each other (a stream of
// writes to a ring, say) are kept as one range, and a write repeated at
// once (a duplicated frame) as one, so a rank that is not drained for a
// while holds few entries.
void WorldCore::note_write(uint32_t rank, uint32_t rkey, uint64_t address,
                           const Frame& bytes) {
  std::vector<WrittenRange>& log = writes_[rank];
  if (!log.empty()) {
    WrittenRange& last = log.back();
    if (last.rkey == rkey && last.bytes == bytes) return;
    const uint64_t joined = uint64_t{last.bytes.bytes()} + bytes.bytes();
    if (last.rkey == rkey && last.bytes.slab() == bytes.slab() &&
        last.bytes.offset() + last.bytes.bytes() == bytes.offset() &&
        joined <= ~uint32_t{0}) {
      last.bytes = *bytes.slab()->frame(last.bytes.offset(),
                                        static_cast<uint32_t>(joined));
      return;
    }
  }
  log.push_back(WrittenRange{rkey, address, bytes});
}

std::vector<WrittenRange> WorldCore::take_writes(uint32_t rank) {
  WEFT_ASSERT(rank < ranks(), "writes taken for a rank the world lacks");
  std::vector<WrittenRange> out;
  out.swap(writes_[rank]);
  return out;
}

void WorldCore::note_fault(const ScriptedFault& f, uint32_t cable) {
  ++counters_.faults[static_cast<size_t>(f.kind)];
  injected_.push_back(f);
  TraceEvent e = trace_event(TraceKind::kFault, f.rank, f.peer, cable);
  e.frame = f.frame;
  e.status = f.status;
  e.fault = f.kind;
  e.start_ns = f.duration_ns;
  record(e);
}

void WorldCore::note_completion(const SimEndpoint& ep, const Completion& c) {
  ready_.mark(ep.rank());
  if (c.status == WcStatus::kSuccess) {
    ++counters_.completions_ok;
  } else if (c.status == WcStatus::kWrFlushErr) {
    ++counters_.completions_flushed;
  } else {
    ++counters_.completions_error;
  }
  TraceEvent e =
      trace_event(TraceKind::kCompletion, ep.rank(), ep.peer(), ep.cable());
  e.work = c.id;
  e.sequence = c.immediate;
  e.bytes = c.byte_len;
  e.status = c.status;
  if (c.from_rdma_write) e.op = MessageOp::kRdmaWriteWithImmediate;
  record(e);
}

void WorldCore::set_prefetch_lines(uint32_t rank,
                                   std::span<SimEndpoint* const> endpoints) {
  PrefetchLines& out = prefetch_lines_[rank];
  out.lines.fill(nullptr);
  // First lines first (every poll reads them), then the completion
  // queues' first slots while room is left (where they lie now: a queue
  // whose storage grows later moves, and is then merely not prefetched).
  size_t n = 0;
  for (size_t line = 0; line < 2; ++line) {
    for (const SimEndpoint* ep : endpoints) {
      if (n == out.lines.size()) return;
      out.lines[n++] =
          line == 0 ? static_cast<const void*>(ep) : ep->completion_slots();
    }
  }
}

void WorldCore::check_invariants() const {
  const uint32_t n = ranks();
  WEFT_ASSERT(fabrics_.size() == n && prefetch_lines_.size() == n &&
                  crashed_.size() == n && stalls_.size() == n &&
                  regions_.size() == n && writes_.size() == n,
              "the world keeps per-rank state for another number of ranks");
  for (uint32_t r = 0; r < n; ++r) {
    WEFT_ASSERT(fabrics_[r]->rank() == r, "a rank's fabric is another's");
    for (const WrittenRange& w : writes_[r]) {
      const MemoryRegion* target = region(r, w.rkey);
      WEFT_ASSERT(target != nullptr && w.bytes.slab() == target->slab &&
                      w.bytes.offset() >= target->offset &&
                      w.bytes.offset() + w.bytes.bytes() <=
                          target->offset + target->bytes,
                  "a write not yet taken lies outside every region of its "
                  "rank");
    }
  }
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    WEFT_ASSERT(
        endpoints_[i] == nullptr || endpoints_[i]->qp_num() == kFirstQpNum + i,
        "a registry slot holds another queue pair's endpoint");
  }
  // Every fault counted is kept, and every one kept was counted.
  const uint64_t counted = std::accumulate(counters_.faults.begin(),
                                           counters_.faults.end(), uint64_t{0});
  WEFT_ASSERT(counted == injected_.size(),
              "the faults counted differ from the faults injected");
  events_.check_invariants();
  ready_.check_invariants();
  transport_.check_invariants();
}

std::string WorldCore::describe_endpoints(uint32_t rank) const {
  std::string out;
  for (const SimEndpoint* ep : endpoints_) {
    if (ep != nullptr && ep->rank() == rank)
      absl::StrAppend(&out, "    ", ep->describe(), "\n");
  }
  return out;
}

}  // namespace weft::sim
