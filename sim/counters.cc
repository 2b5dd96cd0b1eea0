#include "sim/counters.h"

#include "absl/strings/str_format.h"

namespace weft::sim {

uint64_t Counters::faults_total() const {
  uint64_t total = 0;
  for (uint64_t n : faults) total += n;
  return total;
}

std::string Counters::to_string() const {
  std::string out = absl::StrFormat(
      "events %u\nposted sends %u\nposted receives %u\nframes sent %u\n"
      "frames delivered %u\nframes dropped %u (no receive %u, loss %u, link "
      "down %u, receiver crashed %u, not ready %u, remote access %u, miscabled "
      "%u)\n"
      "completions ok %u, error %u, flushed %u\nfaults injected %u",
      events, posted_sends, posted_recvs, frames_sent, frames_delivered,
      frames_dropped, dropped_no_receive, dropped_loss, dropped_link_down,
      dropped_peer_crashed, dropped_not_ready, dropped_remote_access,
      dropped_miscabled, completions_ok, completions_error, completions_flushed,
      faults_total());
  for (int k = 1; k < kFaultKindCount; ++k) {
    const uint64_t n = faults[static_cast<size_t>(k)];
    if (n > 0) {
      absl::StrAppendFormat(&out, " %s=%u",
                            fault_kind_name(static_cast<FaultKind>(k)), n);
    }
  }
  return out;
}

}  // namespace weft::sim
