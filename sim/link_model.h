// LinkModel: how long a frame takes on one direction of one simulated cable.
// A SEND of n bytes occupies its link direction for
//   per_message_ns + ceil(n * 1e9 / bandwidth_bytes_per_s)
// (serialisation; a busy link queues frames behind each other), leaves the
// sender at the end of that, and arrives latency_ns later.
//
// The tb5 preset reproduces published figures for Apple's UC verbs over one
// Thunderbolt 5 cable (hellas-ai/thunderbolt-ibverbs PR #27): ib_send_lat
// 4.64 us one way at 4 KiB, ib_send_bw 75 Gbit/s at 64 KiB. With the wire
// rate set to Thunderbolt 5's 80 Gbit/s (1e10 bytes/s):
//   per_message_ns = 65536 B / 75 Gbit/s - 65536 B / 80 Gbit/s
//                  = 6990.5 ns - 6553.6 ns = 437 ns (rounded)
//   latency_ns     = 4640 - 437 - ceil(4096 B / 80 Gbit/s = 409.6 ns)
//                  = 3793 ns
// so a 4 KiB message arrives exactly 4640 ns after it is posted on an idle
// link, and back-to-back 64 KiB messages stream at 65536 B / 6991 ns
// = 74.996 Gbit/s. docs/simulator.md repeats the derivation.
#ifndef WEFT_SIM_LINK_MODEL_H_
#define WEFT_SIM_LINK_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fabric/clock.h"

namespace weft::sim {

struct LinkModel {
  // Largest figures parse() accepts (one second of latency or overhead;
  // 100 Tbit/s), so a typo is an error rather than a run that never ends.
  static constexpr TimeNs kMaxLatencyNs = kNsPerS;
  static constexpr TimeNs kMaxOverheadNs = kNsPerS;
  static constexpr double kMaxBandwidthGbps = 100'000;
  // Slowest link (besides 0 = infinite): 1 Mbit/s keeps any frame's
  // serialisation time far inside TimeNs.
  static constexpr double kMinBandwidthGbps = 0.001;

  TimeNs latency_ns = 0;
  // 0 means infinite: serialisation takes no time beyond per_message_ns.
  double bandwidth_bytes_per_s = 0;
  TimeNs per_message_ns = 0;

  // One Thunderbolt 5 cable under Apple's UC verbs (derivation above).
  static LinkModel tb5();
  // Zero latency, infinite bandwidth, no overhead: measures the CPU cost of
  // the code above the fabric.
  static LinkModel ideal();

  // "tb5", "ideal", or comma-separated figures
  // "latency_ns=N,bandwidth_gbps=X,overhead_ns=M" (any subset; missing
  // figures are ideal's). A preset may come first and the figures after it
  // override it: "tb5,latency_ns=10000". bandwidth_gbps is in 1e9 bit/s,
  // 0 = infinite. InvalidArgument names the offending item.
  static absl::StatusOr<LinkModel> parse(std::string_view spec);

  // Time the link direction is busy with a message of `bytes`.
  TimeNs serialisation_ns(uint64_t bytes) const;

  // "latency_ns=3793,bandwidth_gbps=80,overhead_ns=437" (parse()'s input).
  std::string to_string() const;

  friend bool operator==(const LinkModel&, const LinkModel&) = default;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_LINK_MODEL_H_
