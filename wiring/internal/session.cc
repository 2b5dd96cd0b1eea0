#include "wiring/internal/session.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "fabric/destination.h"
#include "wiring/internal/blob.h"

namespace weft::wiring::internal {
namespace {

// mlx.launch's first ring port (--starting-port).
constexpr uint32_t kFirstTcpPort = 32323;

}  // namespace

Session::Session(Fabric& fabric, uint32_t ranks,
                 std::vector<std::string> devices, DiscoveryOptions options)
    : fabric_(fabric),
      ranks_(ranks),
      rank_(fabric.rank()),
      devices_(std::move(devices)),
      options_(std::move(options)),
      started_ns_(fabric.clock().now_ns()) {
  BlobWriter w(BlobKind::kDevices, 0);
  w.u32(static_cast<uint32_t>(devices_.size()));
  for (const std::string& d : devices_) w.text(d);
  w.u32(static_cast<uint32_t>(options_.addresses.size()));
  for (const std::string& a : options_.addresses) w.text(a);
  blob_ = w.take();
}

Session::~Session() = default;

DiscoverySession::Need Session::need() const {
  switch (stage_) {
    case Stage::kProbe:
      return Need::kStep;
    case Stage::kDone:
      return Need::kDone;
    default:
      return Need::kExchange;
  }
}

absl::Status Session::fail(absl::Status status) {
  WEFT_ASSERT(!status.ok(), "a failure has an error");
  error_ = status;
  stage_ = Stage::kDone;
  round_.reset();
  return status;
}

absl::Status Session::exchanged(std::span<const std::vector<uint8_t>> blobs) {
  WEFT_ASSERT(need() == Need::kExchange, "exchanged() follows kExchange");
  if (blobs.size() != ranks_) {
    return fail(absl::InvalidArgumentError(absl::StrFormat(
        "wiring discovery: %u blobs for %u ranks", blobs.size(), ranks_)));
  }
  ++stats_.exchanges;
  absl::Status s;
  switch (stage_) {
    case Stage::kDevices:
      s = take_devices(blobs);
      if (s.ok()) s = start_round();
      break;
    case Stage::kDestinations:
      s = take_destinations(blobs);
      break;
    case Stage::kReady:
      for (uint32_t r = 0; r < ranks_ && s.ok(); ++r) {
        s = BlobReader(blobs[r], BlobKind::kReady, round_number_, r).status();
      }
      if (s.ok()) stage_ = Stage::kProbe;
      break;
    case Stage::kHeard:
      s = take_heard(blobs);
      if (s.ok() && stage_ != Stage::kDone) s = start_round();
      break;
    default:
      WEFT_ASSERT(false, "no exchange at this stage");
  }
  return s.ok() ? s : fail(s);
}

absl::Status Session::take_destinations(
    std::span<const std::vector<uint8_t>> blobs) {
  // Queue pair k's far end is the far rank's far_index_[k]-th of the round.
  std::vector<Destination> peers;
  for (size_t k = 0; k < round_specs_.size(); ++k) {
    const uint32_t peer = round_specs_[k].peer;
    BlobReader in(blobs[peer], BlobKind::kDestinations, round_number_, peer);
    (void)in.bytes(size_t{far_index_[k]} * Destination::kWireBytes);
    std::span<const uint8_t> bytes = in.bytes(Destination::kWireBytes);
    if (absl::Status s = in.status(/*whole=*/false); !s.ok()) return s;
    absl::StatusOr<Destination> d = Destination::decode(bytes);
    if (!d.ok()) return d.status();
    peers.push_back(*d);
  }
  round_->connect(peers);
  blob_ = BlobWriter(BlobKind::kReady, round_number_).take();
  stage_ = Stage::kReady;
  return absl::OkStatus();
}

absl::Status Session::take_devices(
    std::span<const std::vector<uint8_t>> blobs) {
  uint64_t total = 0;
  all_devices_.resize(ranks_);
  addresses_.resize(ranks_);
  for (uint32_t r = 0; r < ranks_; ++r) {
    BlobReader in(blobs[r], BlobKind::kDevices, 0, r);
    const uint32_t n = in.u32();
    total += n;
    if (total > kMaxDevices) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "wiring discovery: the ranks list more than %u devices together; "
          "probe fewer ranks at once",
          kMaxDevices));
    }
    for (uint32_t k = 0; k < n && in.status(false).ok(); ++k) {
      all_devices_[r].push_back(in.text(kMaxNameBytes));
    }
    const uint32_t m = std::min(in.u32(), kMaxAddresses + 1);
    for (uint32_t k = 0; k < m && in.status(false).ok(); ++k) {
      addresses_[r].push_back(in.text(kMaxNameBytes));
    }
    if (absl::Status s = in.status(); !s.ok()) return s;
  }
  std::vector<uint32_t> device_rank;
  first_device_.assign(ranks_ + 1, 0);
  for (uint32_t r = 0; r < ranks_; ++r) {
    first_device_[r] = static_cast<uint32_t>(device_rank.size());
    device_rank.insert(device_rank.end(), all_devices_[r].size(), r);
  }
  first_device_[ranks_] = static_cast<uint32_t>(device_rank.size());
  plan_ = std::make_unique<internal::Plan>(std::move(device_rank),
                                           options_.qps_per_device);
  const uint64_t slab_bytes = uint64_t{options_.qps_per_device} *
                              std::max<size_t>(devices_.size(), 1) *
                              internal::ProbeRound::kBytesPerProbe;
  absl::StatusOr<Slab*> slab = fabric_.create_slab(slab_bytes);
  if (!slab.ok()) return slab.status();
  slab_ = *slab;
  if (options_.declared.has_value()) plan_->probe_first(declared_pairs());
  return absl::OkStatus();
}

std::optional<uint32_t> Session::device_id(uint32_t rank,
                                           const std::string& name) const {
  const std::vector<std::string>& list = all_devices_[rank];
  auto it = std::find(list.begin(), list.end(), name);
  if (it == list.end()) return std::nullopt;
  return first_device_[rank] + static_cast<uint32_t>(it - list.begin());
}

std::vector<ProbePair> Session::declared_pairs() {
  const Topology& t = *options_.declared;
  std::vector<ProbePair> pairs;
  for (uint32_t i = 0; i < ranks_; ++i) {
    for (uint32_t j = 0; j < ranks_; ++j) {
      const std::vector<std::string>& there = t.devices(i, j);
      const std::vector<std::string>& back = t.devices(j, i);
      if (there.size() != back.size()) declared_entries_paired_ = false;
      if (i > j) continue;
      for (size_t c = 0; c < std::min(there.size(), back.size()); ++c) {
        std::optional<uint32_t> a = device_id(i, there[c]);
        std::optional<uint32_t> b = device_id(j, back[c]);
        if (!a.has_value() || !b.has_value()) {
          declared_entries_paired_ = false;
          continue;
        }
        pairs.push_back({*a, *b});
      }
    }
  }
  declared_ports_.clear();
  for (const ProbePair& p : pairs) {
    declared_ports_.emplace_back(port_of(p.a), port_of(p.b));
  }
  return pairs;
}

absl::Status Session::start_round() {
  round_.reset();
  if (options_.declared.has_value() && plan_->first_done() &&
      !options_.probe_all && declared_all_right()) {
    return finish(/*complete=*/false);
  }
  if (plan_->done()) return finish(/*complete=*/true);
  ++round_number_;
  ++stats_.rounds;
  round_pairs_ = plan_->next_round();
  WEFT_ASSERT(!round_pairs_.empty(), "a round that is not done has pairs");
  stats_.pairs_probed += round_pairs_.size();
  // Each pair's index among the pairs of each of its two ranks.
  std::vector<uint32_t> count(ranks_, 0);
  round_specs_.clear();
  far_index_.clear();
  std::vector<uint32_t> index_a(round_pairs_.size());
  std::vector<uint32_t> index_b(round_pairs_.size());
  for (size_t k = 0; k < round_pairs_.size(); ++k) {
    index_a[k] = count[plan_->rank_of(round_pairs_[k].a)]++;
    index_b[k] = count[plan_->rank_of(round_pairs_[k].b)]++;
  }
  for (size_t k = 0; k < round_pairs_.size(); ++k) {
    const ProbePair& p = round_pairs_[k];
    for (bool mine_is_a : {true, false}) {
      const uint32_t mine = mine_is_a ? p.a : p.b;
      const uint32_t theirs = mine_is_a ? p.b : p.a;
      if (plan_->rank_of(mine) != rank_) continue;
      const uint32_t peer = plan_->rank_of(theirs);
      round_specs_.push_back(
          {mine, theirs, peer,
           all_devices_[rank_][mine - first_device_[rank_]]});
      far_index_.push_back(mine_is_a ? index_b[k] : index_a[k]);
    }
  }
  absl::StatusOr<std::unique_ptr<internal::ProbeRound>> round =
      internal::ProbeRound::open(
          fabric_, *slab_, round_number_, rank_, round_specs_,
          {options_.attempts, options_.probe_interval_ns, options_.settle_ns});
  if (!round.ok()) return round.status();
  round_ = *std::move(round);
  absl::StatusOr<std::vector<Destination>> mine = round_->destinations();
  if (!mine.ok()) return mine.status();
  BlobWriter w(BlobKind::kDestinations, round_number_);
  for (const Destination& d : *mine) w.bytes(d.encode());
  blob_ = w.take();
  stage_ = Stage::kDestinations;
  return absl::OkStatus();
}

Progress Session::step() {
  WEFT_ASSERT(need() == Need::kStep, "step() follows kStep");
  Progress p = round_->step();
  if (!p.is_done()) return p;
  BlobWriter w(BlobKind::kHeard, round_number_);
  for (size_t k = 0; k < round_->size(); ++k) w.u8(round_->heard(k) ? 1 : 0);
  w.u32(static_cast<uint32_t>(round_->probes_sent()));
  w.u32(static_cast<uint32_t>(round_->connect_failures()));
  blob_ = w.take();
  stage_ = Stage::kHeard;
  return Progress::done();
}

absl::Status Session::take_heard(std::span<const std::vector<uint8_t>> blobs) {
  // heard[r]: rank r's bytes, one per pair of the round touching rank r.
  std::vector<std::vector<uint8_t>> heard(ranks_);
  std::vector<uint32_t> count(ranks_, 0);
  for (const ProbePair& p : round_pairs_) {
    ++count[plan_->rank_of(p.a)];
    ++count[plan_->rank_of(p.b)];
  }
  for (uint32_t r = 0; r < ranks_; ++r) {
    BlobReader in(blobs[r], BlobKind::kHeard, round_number_, r);
    std::span<const uint8_t> bits = in.bytes(count[r]);
    heard[r].assign(bits.begin(), bits.end());
    stats_.probes_sent += in.u32();
    stats_.connect_failures += in.u32();
    if (absl::Status s = in.status(); !s.ok()) return s;
  }
  std::fill(count.begin(), count.end(), 0);
  std::vector<PairResult> results(round_pairs_.size());
  for (size_t k = 0; k < round_pairs_.size(); ++k) {
    const ProbePair& p = round_pairs_[k];
    const uint32_t ra = plan_->rank_of(p.a);
    const uint32_t rb = plan_->rank_of(p.b);
    results[k].a_heard_b = heard[ra][count[ra]++] != 0;
    results[k].b_heard_a = heard[rb][count[rb]++] != 0;
  }
  for (size_t k = 0; k < round_pairs_.size(); ++k) {
    const PairResult& r = results[k];
    if (!r.a_heard_b && !r.b_heard_a) continue;
    const ProbePair& p = round_pairs_[k];
    if (at_a_cable(p.a) || at_a_cable(p.b)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "wiring discovery: rank %u's %s or rank %u's %s answered probes "
          "from two devices; a device is one port with one cable, so "
          "something between them forwards frames (a Thunderbolt Bridge that "
          "holds the RDMA ports?); run weft-devices doctor",
          plan_->rank_of(p.a), name_of(p.a), plan_->rank_of(p.b),
          name_of(p.b)));
    }
    cables_.push_back({port_of(p.a), port_of(p.b), r.b_heard_a, r.a_heard_b});
  }
  plan_->record(round_pairs_, results);
  return absl::OkStatus();
}

bool Session::at_a_cable(uint32_t device) const {
  const Port port = port_of(device);
  for (const Cable& c : cables_) {
    if (c.a == port || c.b == port) return true;
  }
  return false;
}

Port Session::port_of(uint32_t device) const {
  return Port{plan_->rank_of(device), name_of(device)};
}

const std::string& Session::name_of(uint32_t device) const {
  const uint32_t r = plan_->rank_of(device);
  return all_devices_[r][device - first_device_[r]];
}

bool Session::declared_all_right() const {
  if (!declared_entries_paired_) return false;
  // Every cable found so far is a declared one, working both ways, and
  // every declared one was found (as many cables as declared pairs, not
  // just as many: a crossed file has its count right).
  if (cables_.size() != declared_ports_.size()) return false;
  return std::all_of(
      declared_ports_.begin(), declared_ports_.end(), [&](const auto& d) {
        return std::any_of(cables_.begin(), cables_.end(), [&](const Cable& c) {
          return c.two_way() && ((c.a == d.first && c.b == d.second) ||
                                 (c.a == d.second && c.b == d.first));
        });
      });
}

absl::Status Session::finish(bool complete) {
  absl::StatusOr<Wiring> wiring = Wiring::create(all_devices_, cables_);
  if (!wiring.ok()) return wiring.status();
  Discovery d{*std::move(wiring), {}, complete, stats_};
  d.stats.elapsed_ns = fabric_.clock().now_ns() - started_ns_;
  bool every_rank_has_one = true;
  for (const auto& a : addresses_) every_rank_has_one &= !a.empty();
  uint32_t port = kFirstTcpPort;
  for (uint32_t r = 0; r < ranks_ && every_rank_has_one; ++r) {
    std::vector<std::string> row;
    for (const std::string& ip : addresses_[r]) {
      const bool v6 = ip.find(':') != std::string::npos;
      row.push_back(v6 ? absl::StrFormat("[%s]:%u", ip, port)
                       : absl::StrFormat("%s:%u", ip, port));
      ++port;
    }
    d.tcp_hosts.push_back(std::move(row));
  }
  result_ = std::move(d);
  stage_ = Stage::kDone;
  return absl::OkStatus();
}

absl::StatusOr<Discovery> Session::result() const {
  WEFT_ASSERT(need() == Need::kDone, "result() follows kDone");
  if (!error_.ok()) return error_;
  return *result_;
}

std::string Session::outstanding() const {
  switch (stage_) {
    case Stage::kProbe:
      return round_->outstanding();
    case Stage::kDone:
      return "done";
    default:
      return absl::StrFormat(
          "waiting for the side channel's exchange (round "
          "%u)",
          round_number_);
  }
}

}  // namespace weft::wiring::internal
