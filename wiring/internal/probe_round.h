// ProbeRound: one rank's queue pairs of one discovery round and the probes
// it sends and hears on them. Each pair is one of this rank's devices
// toward one device of a peer; both ends send probes every
// `interval_ns`, each saying whether its sender has heard the other end
// yet. An end stops when the other end said it heard it and it has told
// the other end that it heard it back, or after `attempts` probes. The
// round ends `settle_ns` after this rank's last probe, when every send has
// left.
#ifndef WEFT_WIRING_INTERNAL_PROBE_ROUND_H_
#define WEFT_WIRING_INTERNAL_PROBE_ROUND_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/destination.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"
#include "fabric/slab.h"

namespace weft::wiring::internal {

struct ProbeTiming {
  uint32_t attempts = 16;
  TimeNs interval_ns = 0;
  TimeNs settle_ns = 0;
};

// One queue pair of the round: this rank's device `mine` (global id, named
// `device`) toward device `theirs` of rank `peer`.
struct ProbeSpec {
  uint32_t mine = 0;
  uint32_t theirs = 0;
  uint32_t peer = 0;
  std::string device;
};

class ProbeRound {
 public:
  // Receives and sends a probe takes in the slab.
  static constexpr uint32_t kRecvs = 4;
  static constexpr uint32_t kSendSlots = 2;
  static constexpr uint32_t kFrameBytes = 64;
  static constexpr uint64_t kBytesPerProbe =
      uint64_t{kRecvs + kSendSlots} * kFrameBytes;

  // Opens a queue pair per spec and posts its receives. The fabric's error
  // (naming the device) when one cannot be opened. REQUIRES: `slab` holds
  // specs.size() * kBytesPerProbe bytes; fabric and slab outlive the round.
  static absl::StatusOr<std::unique_ptr<ProbeRound>> open(
      Fabric& fabric, Slab& slab, uint32_t round, uint32_t rank,
      std::vector<ProbeSpec> specs, ProbeTiming timing);
  ~ProbeRound();

  // The destinations of the queue pairs, in spec order.
  absl::StatusOr<std::vector<Destination>> destinations() const;
  // Connects queue pair k to peers[k]. One that will not connect (a GID
  // the port cannot reach) is counted and sends nothing.
  void connect(std::span<const Destination> peers);

  // Polls, sends what is due; done when the round's probing ended.
  Progress step();
  // After step() is done: whether pair k heard its far end.
  bool heard(size_t k) const { return probes_[k].heard; }
  size_t size() const { return probes_.size(); }
  uint64_t probes_sent() const { return probes_sent_; }
  uint64_t connect_failures() const { return connect_failures_; }
  std::string outstanding() const;

 private:
  struct Probe {
    ProbeSpec spec;
    std::unique_ptr<Endpoint> endpoint;
    uint32_t first_frame = 0;  // its frames' index in the slab
    bool connected = false;
    bool failed = false;      // an error completion: nothing more moves
    bool heard = false;       // a probe from the far end arrived
    bool heard_back = false;  // one said the far end heard this end
    bool told = false;        // a probe saying `heard` left
    uint32_t sent = 0;
    uint32_t in_flight = 0;
    TimeNs next_send_ns = 0;

    bool finished_sending(uint32_t attempts) const;
  };

  ProbeRound(Fabric& fabric, Slab& slab, uint32_t round, uint32_t rank,
             ProbeTiming timing)
      : fabric_(fabric),
        slab_(slab),
        round_(round),
        rank_(rank),
        timing_(timing) {}
  absl::Status post_recv(Probe& p, uint32_t slot);
  absl::Status poll(Probe& p);
  void take(Probe& p, const Completion& c);
  absl::Status send(Probe& p, TimeNs now);
  Frame frame(const Probe& p, uint32_t index) const;

  Fabric& fabric_;
  Slab& slab_;
  uint32_t round_;
  uint32_t rank_;
  ProbeTiming timing_;
  std::vector<Probe> probes_;
  TimeNs last_send_ns_ = 0;
  uint64_t probes_sent_ = 0;
  uint64_t connect_failures_ = 0;
};

}  // namespace weft::wiring::internal

#endif  // WEFT_WIRING_INTERNAL_PROBE_ROUND_H_
