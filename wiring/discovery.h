// Discovery: the ranks of a group find their own wiring through the fabric.
//
//   1. Every rank lists its devices (Fabric::devices()) and the ranks
//      exchange the lists over the side channel.
//   2. In rounds, each rank opens a queue pair on its devices toward
//      peers' devices, the pairs every rank computes alike from the lists
//      and the results so far (internal/plan.h). A round takes at most
//      `qps_per_device` queue pairs on any device (Apple's budget is 10):
//      the ranks exchange the queue pairs' destinations, connect them,
//      exchange once more so that no probe is sent before its receiver is
//      ready, and then each end sends probes, spaced, until it has heard
//      the other end and told it so, or `attempts` probes went unanswered
//      (a lost probe is retried, and a pair is judged only on all of
//      them). A probe names its sender's and its receiver's devices, so
//      one that arrives anywhere else is not counted.
//   3. The ranks exchange what each end heard, so both learn both
//      directions (a cable that carries frames one way only is found as
//      such). A device at one end of a found cable is not probed again: a
//      cable is one port at each end.
//
// Every step is a non-blocking state machine (DiscoverySession), so the
// simulator steps all ranks on one thread and exchanges their blobs
// itself; discover() drives one rank through a Bootstrap on hardware. Every
// wait has a deadline: the exchanges the bootstrap's, a round's probing
// `attempts` probes and `settle_ns`.
//
// Checking a declared file (check.h) runs the same session with the file's
// pairs probed first.
#ifndef WEFT_WIRING_DISCOVERY_H_
#define WEFT_WIRING_DISCOVERY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"
#include "fabric/topology.h"
#include "wiring/wiring.h"

namespace weft::wiring {

// Apple's queue pairs per device (MLX #4209), the default budget.
inline constexpr uint32_t kAppleQpsPerDevice = 10;
// Most devices of all ranks together one discovery takes.
inline constexpr uint32_t kMaxDevices = 4096;
// Longest device name or address a rank may list.
inline constexpr uint32_t kMaxNameBytes = 256;
// Most addresses a rank may give for the TCP hostfile.
inline constexpr uint32_t kMaxAddresses = 8;

struct DiscoveryOptions {
  // Queue pairs a round opens on one device at most.
  uint32_t qps_per_device = kAppleQpsPerDevice;
  // Probes an end sends toward a device that does not answer before the
  // pair is judged unjoined: at a loss rate p per frame, a cable is missed
  // with probability p^attempts.
  uint32_t attempts = 16;
  // Time between one end's probes of a pair.
  TimeNs probe_interval_ns = 20 * kNsPerUs;
  // How long a rank keeps listening after its last probe of a round, for
  // probes still on the wire.
  TimeNs settle_ns = 200 * kNsPerUs;
  // Checking a file: its cables (entry c of cell [i][j] with entry c of
  // cell [j][i]) are probed first.
  std::optional<Topology> declared;
  // With `declared`: whether every other pair of devices is probed too
  // (a full discovery) even when every declared cable answered both ways.
  // False: the rest is probed only when something declared was wrong, so
  // a right file costs one round or a few.
  bool probe_all = true;
  // This rank's IP addresses (numeric), for the TCP ring hostfile of the
  // same machines; none: the discovery gives no hostfile.
  std::vector<std::string> addresses;
};

// InvalidArgument naming the option when `options` cannot run.
absl::Status validate(const DiscoveryOptions& options);

struct DiscoveryStats {
  uint32_t rounds = 0;
  // Pairs of devices probed (each a queue pair at both ends).
  uint64_t pairs_probed = 0;
  // Probe frames every rank sent together.
  uint64_t probes_sent = 0;
  // Queue pairs that would not connect (counted as no cable), all ranks.
  uint64_t connect_failures = 0;
  // Side-channel exchanges (all-gathers).
  uint32_t exchanges = 0;
  // From the first step to the end, on the fabric's clock (virtual time in
  // the simulator; the exchanges take none there).
  TimeNs elapsed_ns = 0;
};

struct Discovery {
  Wiring wiring;
  // The TCP ring hostfile's rows (rank r's "ip:port" list, ports from
  // 32323 in order, as mlx.launch numbers them); empty when a rank gave no
  // address.
  std::vector<std::vector<std::string>> tcp_hosts;
  // False when a check stopped after the declared cables (probe_all false,
  // all of them right): `wiring` then holds those cables only.
  bool complete = true;
  DiscoveryStats stats;
};

// One rank's discovery, stepped by a driver.
class DiscoverySession {
 public:
  enum class Need {
    kExchange,  // all-gather blob() with every rank, then exchanged()
    kStep,      // call step()
    kDone,      // result() is ready (or the error)
  };

  // `devices`: this rank's (Fabric::devices()); `ranks`: the group's size.
  // InvalidArgument for bad options, a rank outside `ranks`, a declared
  // file of another size, or devices named twice, empty or too long.
  // REQUIRES: `fabric` outlives the session.
  static absl::StatusOr<std::unique_ptr<DiscoverySession>> start(
      Fabric& fabric, uint32_t ranks, std::vector<std::string> devices,
      DiscoveryOptions options);
  virtual ~DiscoverySession() = default;

  virtual uint32_t rank() const = 0;
  virtual Need need() const = 0;
  // With kExchange: what this rank contributes.
  virtual const std::vector<uint8_t>& blob() const = 0;
  // With kExchange: every rank's blob, by rank. An error (also kept for
  // result()) when a blob is malformed or out of step, or the fabric fails.
  virtual absl::Status exchanged(
      std::span<const std::vector<uint8_t>> blobs) = 0;
  // With kStep: probes. kDone when the round's probing ended (need() is
  // then kExchange); kWaiting with the time to be stepped again.
  virtual Progress step() = 0;
  // What this rank is doing, for hang reports.
  virtual std::string outstanding() const = 0;
  // With kDone: the wiring, or why it could not be found.
  virtual absl::StatusOr<Discovery> result() const = 0;
};

// One rank's discovery through `bootstrap` (every rank of the group calls
// it at once), each exchange within `exchange_timeout_ns`, the whole within
// `deadline_ns` (DeadlineExceeded naming this rank and the round).
absl::StatusOr<Discovery> discover(Fabric& fabric, Bootstrap& bootstrap,
                                   std::vector<std::string> devices,
                                   const DiscoveryOptions& options,
                                   TimeNs exchange_timeout_ns = 60 * kNsPerS,
                                   TimeNs deadline_ns = 600 * kNsPerS);

}  // namespace weft::wiring

#endif  // WEFT_WIRING_DISCOVERY_H_
