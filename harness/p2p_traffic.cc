#include "harness/p2p_traffic.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/checked_pair.h"

namespace weft::harness {

using sim::RankProgram;
using sim::World;
namespace {

constexpr uint32_t kSlotsPerSide = Endpoint::kMaxSends;  // == kMaxRecvs
constexpr uint32_t kSlotsPerStream = 2 * kSlotsPerSide;
constexpr uint32_t kSequenceBytes = 4;

// The byte every frame from `src` to `dst` with sequence `seq` is filled
// with after its sequence number.
std::byte fill_byte(uint32_t src, uint32_t dst, uint32_t cable, uint32_t seq) {
  return static_cast<std::byte>(
      (seq * 31u + src * 7u + dst * 13u + cable * 3u) & 0xffu);
}

void write_frame(const Frame& frame, uint32_t length, uint32_t src,
                 uint32_t dst, uint32_t cable, uint32_t seq) {
  std::byte* p = frame.data();
  for (uint32_t i = 0; i < kSequenceBytes && i < length; ++i) {
    p[i] = static_cast<std::byte>(seq >> (8 * (kSequenceBytes - 1 - i)));
  }
  if (length > kSequenceBytes) {
    std::memset(p + kSequenceBytes,
                static_cast<int>(fill_byte(src, dst, cable, seq)),
                length - kSequenceBytes);
  }
}

bool frame_matches(const Frame& frame, uint32_t length, uint32_t src,
                   uint32_t dst, uint32_t cable, uint32_t seq) {
  const std::byte* p = frame.data();
  for (uint32_t i = 0; i < kSequenceBytes && i < length; ++i) {
    if (p[i] != static_cast<std::byte>(seq >> (8 * (kSequenceBytes - 1 - i))))
      return false;
  }
  const std::byte fill = fill_byte(src, dst, cable, seq);
  for (uint32_t i = kSequenceBytes; i < length; ++i) {
    if (p[i] != fill) return false;
  }
  return true;
}

struct Stream {
  std::unique_ptr<Endpoint> endpoint;
  std::unique_ptr<CheckedPair> pair;
  uint32_t peer = 0;
  uint32_t cable = 0;
  uint64_t slab_offset = 0;
  std::vector<uint32_t> free_send_slots;
  uint32_t posted = 0;  // sends posted so far
  bool send_failed = false;
  bool recv_failed = false;
  bool recv_done = false;
  TimeNs last_recv_ns = 0;

  bool send_done(uint32_t frames) const {
    return send_failed ||
           (posted == frames && free_send_slots.size() == kSlotsPerSide);
  }
  bool done(uint32_t frames) const {
    return send_done(frames) && (recv_done || recv_failed);
  }
};

}  // namespace

class P2pTraffic::Rank : public RankProgram {
 public:
  Rank(World& world, uint32_t rank, const P2pConfig& config)
      : world_(world), rank_(rank), config_(config) {}

  absl::Status open_streams();
  Stream* stream(uint32_t peer, uint32_t cable);
  absl::Status start();

  Progress step() override;
  std::string outstanding() const override;
  const P2pStats& stats() const { return stats_; }

 private:
  Frame send_frame(const Stream& s, uint32_t slot) const {
    return *slab_->frame(s.slab_offset + uint64_t{slot} * config_.frame_bytes,
                         config_.frame_bytes);
  }
  Frame recv_frame(const Stream& s, uint32_t slot) const {
    return send_frame(s, kSlotsPerSide + slot);
  }
  bool step_stream(Stream& s);
  void on_send(Stream& s, const Completion& c);
  void on_recv(Stream& s, const Completion& c, ReceiveChecker before);
  void count_failure(const Completion& c);

  World& world_;
  uint32_t rank_;
  P2pConfig config_;
  Slab* slab_ = nullptr;
  std::vector<Stream> streams_;
  P2pStats stats_;
};

absl::Status P2pTraffic::Rank::open_streams() {
  const Topology& topo = world_.options().topology;
  for (uint32_t peer = 0; peer < topo.ranks(); ++peer) {
    const std::vector<std::string>& devices = topo.devices(rank_, peer);
    for (uint32_t cable = 0; cable < devices.size(); ++cable) {
      absl::StatusOr<std::unique_ptr<Endpoint>> ep =
          world_.fabric(rank_).open(devices[cable], peer);
      if (!ep.ok()) return ep.status();
      Stream s;
      s.endpoint = *std::move(ep);
      s.pair = std::make_unique<CheckedPair>(*s.endpoint);
      s.peer = peer;
      s.cable = cable;
      s.slab_offset =
          uint64_t{streams_.size()} * kSlotsPerStream * config_.frame_bytes;
      for (uint32_t slot = kSlotsPerSide; slot > 0; --slot)
        s.free_send_slots.push_back(slot - 1);
      streams_.push_back(std::move(s));
    }
  }
  stats_.streams = streams_.size();
  if (streams_.empty()) return absl::OkStatus();
  absl::StatusOr<Slab*> slab = world_.fabric(rank_).create_slab(
      uint64_t{streams_.size()} * kSlotsPerStream * config_.frame_bytes);
  if (!slab.ok()) return slab.status();
  slab_ = *slab;
  return absl::OkStatus();
}

Stream* P2pTraffic::Rank::stream(uint32_t peer, uint32_t cable) {
  for (Stream& s : streams_) {
    if (s.peer == peer && s.cable == cable) return &s;
  }
  return nullptr;
}

absl::Status P2pTraffic::Rank::start() {
  for (Stream& s : streams_) {
    s.last_recv_ns = world_.clock().now_ns();
    for (uint32_t slot = 0; slot < kSlotsPerSide; ++slot) {
      absl::Status st = s.pair->post_recv(WorkId{WorkKind::kRecv, s.peer, slot},
                                          recv_frame(s, slot));
      if (!st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

void P2pTraffic::Rank::count_failure(const Completion& c) {
  if (c.status == WcStatus::kWrFlushErr) {
    ++stats_.flushed;
  } else {
    ++stats_.error_completions;
  }
}

void P2pTraffic::Rank::on_send(Stream& s, const Completion& c) {
  s.free_send_slots.push_back(c.id.slot);
  if (c.ok()) {
    ++stats_.sends_completed;
    return;
  }
  count_failure(c);
  if (!s.send_failed) ++stats_.failed_streams;
  s.send_failed = true;
}

void P2pTraffic::Rank::on_recv(Stream& s, const Completion& c,
                               ReceiveChecker before) {
  if (s.recv_done) return;  // gave up on this stream already
  s.last_recv_ns = world_.clock().now_ns();
  if (!c.ok()) {
    count_failure(c);
    s.recv_failed = true;
    return;
  }
  const SequenceCheck check = before.check(c.immediate);
  switch (check.kind) {
    case SequenceClass::kGap:
      ++stats_.gaps;
      stats_.lost += check.lost;
      [[fallthrough]];
    case SequenceClass::kExpected:
      ++stats_.received;
      if (!frame_matches(recv_frame(s, c.id.slot), c.byte_len, s.peer, rank_,
                         s.cable, c.immediate) ||
          c.byte_len != config_.frame_bytes) {
        ++stats_.corrupt;
      }
      break;
    case SequenceClass::kReordered:
      ++stats_.reordered;
      break;
    case SequenceClass::kOld:
      ++stats_.duplicates;
      break;
  }
  if (s.pair->receive_checker().expected() == config_.frames_per_pair) {
    s.recv_done = true;
    return;
  }
  (void)s.pair->post_recv(c.id, recv_frame(s, c.id.slot));
}

bool P2pTraffic::Rank::step_stream(Stream& s) {
  bool advanced = false;
  while (true) {
    Completion c;
    size_t good = 0;
    const ReceiveChecker before = s.pair->receive_checker();
    absl::Status st = s.pair->poll(std::span<Completion>(&c, 1), &good);
    if (st.ok() && good == 0) break;
    advanced = true;
    if (c.id.kind == WorkKind::kSend) {
      on_send(s, c);
    } else {
      on_recv(s, c, before);
    }
  }
  while (!s.send_failed && s.posted < config_.frames_per_pair &&
         !s.free_send_slots.empty()) {
    const uint32_t slot = s.free_send_slots.back();
    const Frame frame = send_frame(s, slot);
    write_frame(frame, config_.frame_bytes, rank_, s.peer, s.cable,
                s.pair->send_sequence().peek());
    if (!s.pair
             ->post_send(WorkId{WorkKind::kSend, s.peer, slot}, frame,
                         config_.frame_bytes)
             .ok()) {
      break;
    }
    s.free_send_slots.pop_back();
    ++s.posted;
    advanced = true;
  }
  const TimeNs now = world_.clock().now_ns();
  if (!s.recv_done && !s.recv_failed &&
      now >= s.last_recv_ns + config_.idle_timeout_ns) {
    s.recv_done = true;
    stats_.missing +=
        config_.frames_per_pair - s.pair->receive_checker().expected();
    advanced = true;
  }
  return advanced;
}

Progress P2pTraffic::Rank::step() {
  bool advanced = false;
  bool all_done = true;
  TimeNs wake = kNeverNs;
  for (Stream& s : streams_) {
    if (s.done(config_.frames_per_pair)) continue;
    advanced |= step_stream(s);
    if (s.done(config_.frames_per_pair)) continue;
    all_done = false;
    if (!s.recv_done && !s.recv_failed) {
      wake = std::min(wake, s.last_recv_ns + config_.idle_timeout_ns);
    }
  }
  if (all_done) return Progress::done();
  return advanced ? Progress::advanced() : Progress::waiting(wake);
}

std::string P2pTraffic::Rank::outstanding() const {
  std::string out;
  for (const Stream& s : streams_) {
    if (s.done(config_.frames_per_pair)) continue;
    absl::StrAppendFormat(
        &out,
        "[stream to rank %u cable %u: %u of %u sends posted, %u "
        "slots busy; next expected sequence %u%s] ",
        s.peer, s.cable, s.posted, config_.frames_per_pair,
        kSlotsPerSide - s.free_send_slots.size(),
        s.pair->receive_checker().expected(),
        s.send_failed || s.recv_failed ? ", failed" : "");
  }
  return out;
}

absl::StatusOr<std::unique_ptr<P2pTraffic>> P2pTraffic::create(
    World& world, const P2pConfig& config) {
  auto traffic = std::unique_ptr<P2pTraffic>(new P2pTraffic());
  for (uint32_t r = 0; r < world.ranks(); ++r) {
    traffic->ranks_.push_back(std::make_unique<Rank>(world, r, config));
    if (absl::Status s = traffic->ranks_.back()->open_streams(); !s.ok())
      return s;
  }
  // The in-process bootstrap: hand each endpoint its counterpart's
  // destination.
  for (uint32_t r = 0; r < world.ranks(); ++r) {
    const Topology& topo = world.options().topology;
    for (uint32_t peer = 0; peer < topo.ranks(); ++peer) {
      for (uint32_t cable = 0; cable < topo.devices(r, peer).size(); ++cable) {
        Stream* mine = traffic->ranks_[r]->stream(peer, cable);
        Stream* theirs = traffic->ranks_[peer]->stream(r, cable);
        if (theirs == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrFormat("rank %u has cable %u to rank %u but rank %u has "
                              "no cable %u back; "
                              "the device JSON must be symmetric",
                              r, cable, peer, peer, cable));
        }
        absl::StatusOr<Destination> d = theirs->endpoint->destination();
        if (!d.ok()) return d.status();
        if (absl::Status s = mine->endpoint->connect(*d); !s.ok()) return s;
      }
    }
  }
  for (auto& rank : traffic->ranks_) {
    if (absl::Status s = rank->start(); !s.ok()) return s;
  }
  return traffic;
}

P2pTraffic::~P2pTraffic() = default;

std::vector<RankProgram*> P2pTraffic::programs() {
  std::vector<RankProgram*> out;
  for (auto& r : ranks_) out.push_back(r.get());
  return out;
}

P2pStats P2pTraffic::stats() const {
  P2pStats total;
  for (const auto& r : ranks_) {
    const P2pStats& s = r->stats();
    total.streams += s.streams;
    total.sends_completed += s.sends_completed;
    total.received += s.received;
    total.gaps += s.gaps;
    total.lost += s.lost;
    total.duplicates += s.duplicates;
    total.reordered += s.reordered;
    total.corrupt += s.corrupt;
    total.error_completions += s.error_completions;
    total.flushed += s.flushed;
    total.missing += s.missing;
    total.failed_streams += s.failed_streams;
  }
  return total;
}

}  // namespace weft::harness
