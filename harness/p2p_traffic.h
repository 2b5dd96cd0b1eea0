// Point-to-point traffic for weft-sim p2p: every endpoint (one per cabled
// pair and cable, each direction) sends a stream of frames carrying
// sequence numbers (fabric/checked_pair.h) and receives its peer's stream,
// checking sequence, status and content of everything that arrives. Each
// receive side waits at most idle_timeout_ns of virtual time for a frame
// that never comes, so lost frames end a run instead of hanging it.
#ifndef WEFT_HARNESS_P2P_TRAFFIC_H_
#define WEFT_HARNESS_P2P_TRAFFIC_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/world.h"

namespace weft::harness {

struct P2pConfig {
  static constexpr uint32_t kMaxFrames = 10'000'000;
  static constexpr uint32_t kMaxFrameBytes = 1 << 20;

  uint32_t frames_per_pair = 1000;
  uint32_t frame_bytes = 4096;
  TimeNs idle_timeout_ns = kNsPerMs;
};

// What the receivers saw, summed over every stream.
struct P2pStats {
  uint64_t streams = 0;
  uint64_t sends_completed = 0;
  uint64_t received = 0;    // in sequence or after a gap: used as data
  uint64_t gaps = 0;        // times a receiver saw a jump ahead
  uint64_t lost = 0;        // frames skipped over by those jumps
  uint64_t duplicates = 0;  // old sequence numbers seen again
  uint64_t reordered = 0;   // late frames from behind the window
  uint64_t corrupt = 0;     // content did not match its sequence number
  uint64_t error_completions = 0;
  uint64_t flushed = 0;
  uint64_t missing = 0;  // never arrived before the idle timeout
  uint64_t failed_streams = 0;
};

// One RankProgram per rank, wired up: endpoints opened, destinations
// exchanged and connected, receives posted.
class P2pTraffic {
 public:
  static absl::StatusOr<std::unique_ptr<P2pTraffic>> create(
      sim::World& world, const P2pConfig& config);
  ~P2pTraffic();

  std::vector<sim::RankProgram*> programs();
  P2pStats stats() const;

 private:
  class Rank;
  P2pTraffic() = default;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_P2P_TRAFFIC_H_
