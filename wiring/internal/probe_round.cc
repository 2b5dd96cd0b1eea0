#include "wiring/internal/probe_round.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "fabric/completion.h"
#include "fabric/work_id.h"

namespace weft::wiring::internal {
namespace {

constexpr uint32_t kProbeMagic = 0x50524f42;  // "PROB"

// A probe's payload: seven big-endian words.
struct ProbeWords {
  uint32_t magic = kProbeMagic;
  uint32_t round = 0;
  uint32_t from_rank = 0;
  uint32_t from_device = 0;
  uint32_t to_rank = 0;
  uint32_t to_device = 0;
  uint32_t heard = 0;
};
constexpr uint32_t kProbeBytes = 7 * 4;

void write_probe(const ProbeWords& w, std::byte* out) {
  const std::array<uint32_t, 7> words = {w.magic,       w.round,   w.from_rank,
                                         w.from_device, w.to_rank, w.to_device,
                                         w.heard};
  for (size_t k = 0; k < words.size(); ++k) {
    for (size_t b = 0; b < 4; ++b) {
      out[k * 4 + b] = static_cast<std::byte>(words[k] >> (24 - 8 * b));
    }
  }
}

ProbeWords read_probe(const std::byte* in) {
  std::array<uint32_t, 7> words{};
  for (size_t k = 0; k < words.size(); ++k) {
    for (size_t b = 0; b < 4; ++b) {
      words[k] = (words[k] << 8) | std::to_integer<uint32_t>(in[k * 4 + b]);
    }
  }
  return {words[0], words[1], words[2], words[3], words[4], words[5], words[6]};
}

}  // namespace

bool ProbeRound::Probe::finished_sending(uint32_t attempts) const {
  if (!connected || failed) return true;
  return sent >= attempts || (heard_back && told);
}

absl::StatusOr<std::unique_ptr<ProbeRound>> ProbeRound::open(
    Fabric& fabric, Slab& slab, uint32_t round, uint32_t rank,
    std::vector<ProbeSpec> specs, ProbeTiming timing) {
  WEFT_ASSERT(specs.size() * kBytesPerProbe <= slab.bytes(),
              "the slab holds every probe's frames");
  std::unique_ptr<ProbeRound> r(
      new ProbeRound(fabric, slab, round, rank, timing));
  r->probes_.resize(specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    Probe& p = r->probes_[k];
    p.spec = std::move(specs[k]);
    p.first_frame = static_cast<uint32_t>(k * (kRecvs + kSendSlots));
    absl::StatusOr<std::unique_ptr<Endpoint>> ep =
        fabric.open(p.spec.device, p.spec.peer);
    if (!ep.ok()) return ep.status();
    p.endpoint = *std::move(ep);
    for (uint32_t slot = 0; slot < kRecvs; ++slot) {
      if (absl::Status s = r->post_recv(p, slot); !s.ok()) return s;
    }
  }
  return r;
}

ProbeRound::~ProbeRound() = default;

Frame ProbeRound::frame(const Probe& p, uint32_t index) const {
  absl::StatusOr<Frame> f =
      slab_.frame(uint64_t{p.first_frame + index} * kFrameBytes, kFrameBytes);
  WEFT_ASSERT(f.ok(), "a probe's frame lies in the slab");
  return *f;
}

absl::Status ProbeRound::post_recv(Probe& p, uint32_t slot) {
  return p.endpoint->post_recv(WorkId{WorkKind::kRecv, p.spec.peer, slot},
                               frame(p, slot));
}

absl::StatusOr<std::vector<Destination>> ProbeRound::destinations() const {
  std::vector<Destination> out;
  out.reserve(probes_.size());
  for (const Probe& p : probes_) {
    absl::StatusOr<Destination> d = p.endpoint->destination();
    if (!d.ok()) return d.status();
    out.push_back(*d);
  }
  return out;
}

void ProbeRound::connect(std::span<const Destination> peers) {
  WEFT_ASSERT(peers.size() == probes_.size(), "a destination per probe");
  const TimeNs now = fabric_.clock().now_ns();
  for (size_t k = 0; k < probes_.size(); ++k) {
    Probe& p = probes_[k];
    p.connected = p.endpoint->connect(peers[k]).ok();
    if (!p.connected) ++connect_failures_;
    p.next_send_ns = now;
  }
  last_send_ns_ = now;
}

void ProbeRound::take(Probe& p, const Completion& c) {
  if (c.id.kind == WorkKind::kSend) {
    WEFT_ASSERT(p.in_flight > 0, "a send completes that was posted");
    --p.in_flight;
    if (!c.ok()) p.failed = true;
    return;
  }
  if (!c.ok()) {
    p.failed = true;
    return;
  }
  const Frame f = frame(p, c.id.slot);
  if (c.byte_len == kProbeBytes) {
    const ProbeWords w = read_probe(f.data());
    // Only a probe from the far end of this pair counts: one addressed to
    // another device that arrived here proves nothing about this pair.
    if (w.magic == kProbeMagic && w.round == round_ &&
        w.from_rank == p.spec.peer && w.from_device == p.spec.theirs &&
        w.to_rank == rank_ && w.to_device == p.spec.mine) {
      p.heard = true;
      if (w.heard != 0) p.heard_back = true;
    }
  }
  if (!post_recv(p, c.id.slot).ok()) p.failed = true;
}

absl::Status ProbeRound::poll(Probe& p) {
  std::array<Completion, 8> done;
  for (;;) {
    absl::StatusOr<size_t> n = p.endpoint->poll(done);
    if (!n.ok()) return n.status();
    for (size_t k = 0; k < *n; ++k) take(p, done[k]);
    if (*n < done.size()) return absl::OkStatus();
  }
}

absl::Status ProbeRound::send(Probe& p, TimeNs now) {
  const uint32_t slot = kRecvs + p.sent % kSendSlots;
  const Frame f = frame(p, slot);
  write_probe({kProbeMagic, round_, rank_, p.spec.mine, p.spec.peer,
               p.spec.theirs, p.heard ? 1u : 0u},
              f.data());
  absl::Status s = p.endpoint->post_send(
      WorkId{WorkKind::kSend, p.spec.peer, slot}, f, kProbeBytes, round_);
  if (!s.ok()) return s;
  ++p.in_flight;
  ++p.sent;
  ++probes_sent_;
  if (p.heard) p.told = true;
  p.next_send_ns = deadline_after(now, timing_.interval_ns);
  last_send_ns_ = now;
  return absl::OkStatus();
}

Progress ProbeRound::step() {
  const TimeNs now = fabric_.clock().now_ns();
  TimeNs wake = kNeverNs;
  bool sending = false;
  for (Probe& p : probes_) {
    if (!p.failed && !poll(p).ok()) p.failed = true;
    if (p.finished_sending(timing_.attempts)) continue;
    sending = true;
    // A probe that has heard its far end but not said so goes at once.
    const bool due = now >= p.next_send_ns || (p.heard && !p.told);
    if (due && p.in_flight < kSendSlots) {
      if (!send(p, now).ok()) p.failed = true;
    }
    if (!p.finished_sending(timing_.attempts)) {
      wake =
          std::min(wake, p.in_flight < kSendSlots ? p.next_send_ns : kNeverNs);
    }
  }
  bool in_flight = false;
  for (const Probe& p : probes_) in_flight |= !p.failed && p.in_flight > 0;
  const TimeNs settled_ns = deadline_after(last_send_ns_, timing_.settle_ns);
  if (!sending && !in_flight && now >= settled_ns) return Progress::done();
  if (!sending) wake = std::min(wake, settled_ns);
  return Progress::waiting(wake);
}

std::string ProbeRound::outstanding() const {
  size_t sending = 0;
  size_t heard = 0;
  for (const Probe& p : probes_) {
    sending += p.finished_sending(timing_.attempts) ? 0 : 1;
    heard += p.heard ? 1 : 0;
  }
  return absl::StrFormat(
      "probing round %u: %u queue pairs, %u still sending, %u heard their far "
      "end, %u probes sent",
      round_, probes_.size(), sending, heard, probes_sent_);
}

}  // namespace weft::wiring::internal
