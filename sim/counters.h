// Counters: what a simulated world did, in totals (frames sent, delivered,
// dropped and why, completions by outcome, faults injected by kind). Cheap
// to keep, always on, and part of every tool's summary.
#ifndef WEFT_SIM_COUNTERS_H_
#define WEFT_SIM_COUNTERS_H_

#include <array>
#include <cstdint>
#include <string>

#include "sim/faults.h"

namespace weft::sim {

struct Counters {
  uint64_t events = 0;  // scheduler events processed
  uint64_t posted_sends = 0;
  uint64_t posted_recvs = 0;
  uint64_t frames_sent = 0;  // left a sender (send completed successfully)
  // Landed in a posted receive (any status) or, an RDMA WRITE, in its
  // memory region.
  uint64_t frames_delivered = 0;
  uint64_t frames_dropped = 0;  // sum of the dropped_* below
  uint64_t dropped_no_receive = 0;
  uint64_t dropped_loss = 0;
  uint64_t dropped_link_down = 0;
  uint64_t dropped_peer_crashed = 0;
  uint64_t dropped_not_ready = 0;
  uint64_t dropped_remote_access = 0;  // RDMA WRITEs the receiver refused
  // On or to a queue pair whose port is cabled to another rank than its
  // peer's (SimFabric::open).
  uint64_t dropped_miscabled = 0;
  uint64_t completions_ok = 0;
  uint64_t completions_error = 0;    // error statuses other than flush
  uint64_t completions_flushed = 0;  // IBV_WC_WR_FLUSH_ERR
  std::array<uint64_t, kFaultKindCount> faults{};  // by FaultKind
  // Payload bytes the simulator itself copied (into receives, regions and
  // buffers of frames in flight): the wire's share of a run's copying,
  // for benchmarks that tell it from weft's. Not in to_string().
  uint64_t payload_bytes_copied = 0;

  uint64_t faults_of(FaultKind kind) const {
    return faults[static_cast<size_t>(kind)];
  }
  uint64_t faults_total() const;
  // Multi-line "name value" summary.
  std::string to_string() const;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_COUNTERS_H_
