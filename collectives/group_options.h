// Options of a collectives Group and of single calls: which algorithm, how
// long an operation may take, and the engine's frame and pipelining limits.
// Every rank of a group must pass the same GroupOptions (except timeout_ns);
// group formation checks this.
#ifndef WEFT_COLLECTIVES_GROUP_OPTIONS_H_
#define WEFT_COLLECTIVES_GROUP_OPTIONS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "fabric/clock.h"

namespace weft {

enum class Algorithm : uint8_t {
  kAuto = 0,          // mesh on a fully connected group (exchange when small,
                      // scatter when large), ring otherwise
  kMeshExchange = 1,  // every rank sends its whole input to every peer and
                      // reduces in rank order (small messages)
  kMeshScatter = 2,   // reduce-scatter then all-gather over the mesh, each
                      // owner reducing in rank order (large messages)
  kRing = 3,          // neighbours only: one or both directions, every cable
};
inline constexpr int kAlgorithmCount = 4;

// "auto", "mesh_exchange", "mesh_scatter", "ring"; "unknown" otherwise.
std::string_view algorithm_name(Algorithm algorithm);
bool parse_algorithm(std::string_view text, Algorithm* out);

// Recovery from lost, duplicated and reordered frames (docs/faults.md,
// "Recovery"). Every data frame carries a
// per-cable sequence number; the receiver places frames by it (reordering
// inside the window is harmless), discards duplicates and acknowledges
// cumulatively, naming the frames it holds beyond a gap; the sender keeps
// each frame until it is acknowledged, resends a frame at once when later
// ones arrived without it, and resends everything unacknowledged when no
// acknowledgement came within the retransmission timeout: an estimate of
// the round trip within [min_rto_ns, max_rto_ns] (initial_rto_ns before the
// first estimate), doubling on each silent attempt.
//
// A peer is declared unreachable (Unavailable) after max_retries
// retransmissions in a row without any acknowledgement, or at the
// operation's deadline, whichever comes first. Off, any lost or duplicated
// frame ends the operation with a typed sequence error (level 1).
//
// Over a fabric that delivers every message once and in order (TCP;
// Fabric::delivers_reliably()) the engine resends nothing and runs no
// retransmission timer whether this is on or off: a frame can only go
// missing with its connection, which is an error completion. Frames are
// checked as with recovery off, and credit reports acknowledge.
struct RecoveryOptions {
  static constexpr TimeNs kMinRtoNs = 1000;  // 1 us
  static constexpr uint32_t kMaxRetries = 1000;

  bool enabled = true;
  // The retransmission timeout never goes below this.
  TimeNs min_rto_ns = 20 * kNsPerUs;
  // The timeout before the first round trip was measured.
  TimeNs initial_rto_ns = kNsPerMs;
  // The back-off stops doubling here.
  TimeNs max_rto_ns = 500 * kNsPerMs;
  // Retransmissions in a row without progress before the peer is declared
  // unreachable; the default outlasts the default deadline.
  uint32_t max_retries = 100;

  // InvalidArgument naming the first field out of range.
  absl::Status validate() const;
};

struct GroupOptions {
  static constexpr uint32_t kMinFrameBytes = 4 << 10;
  static constexpr uint32_t kMaxFrameBytes = 512 << 10;
  static constexpr uint32_t kMinDepth = 4;
  static constexpr uint32_t kMaxDepth = 28;  // + ack, abort, move sends <= 32
  static constexpr TimeNs kMaxTimeoutNs = 24 * 3600 * kNsPerS;
  static constexpr uint64_t kMaxSendQueueBytes = uint64_t{64} << 20;

  // Default deadline of one operation, from when it starts running.
  TimeNs timeout_ns = 30 * kNsPerS;
  // Algorithm for calls that do not choose one.
  Algorithm algorithm = Algorithm::kAuto;
  // kAuto on a mesh: messages up to this many bytes use kMeshExchange,
  // larger ones kMeshScatter. 0 (the default): where the two cross for the
  // group's size on a Thunderbolt 5 link (mesh_exchange_limit below).
  uint64_t mesh_exchange_max_bytes = 0;
  // kRing: 1 (clockwise) or 2 (half the data each way). Groups of two
  // ranks always use one.
  uint32_t ring_directions = 2;
  // Largest frame payload; a power of two in [kMinFrameBytes,
  // kMaxFrameBytes]. Each operation picks its frame size by message size
  // within [kMinFrameBytes, max_frame_bytes]; a frame's 64-byte header
  // goes beside its payload (apart from it over two-part endpoints), so
  // a 4 KiB item is one frame.
  uint32_t max_frame_bytes = kMaxFrameBytes;
  // Receives kept posted per cable, and data frames in flight per cable.
  uint32_t depth = 8;
  // Data bytes (headers included) a cable keeps posted and not yet sent;
  // the frames beyond wait in the engine. An acknowledgement or a resent
  // frame queues behind these, so a lower figure recovers losses sooner;
  // a higher one keeps the link busy even when this rank is slow to post
  // the next frame. The default holds two full frames. One frame
  // (max_frame_bytes) recovers fastest, at the cost of a gap on the wire
  // between frames on hardware (docs/benchmarking.md, "What recovery
  // costs"). In [kMinFrameBytes, kMaxSendQueueBytes]; local to this rank.
  uint64_t send_queue_bytes = uint64_t{1} << 20;
  // The group's one slab (all frames of all cables) may not exceed this;
  // max_frame_bytes shrinks to fit before formation fails.
  uint64_t max_slab_bytes = uint64_t{1} << 30;
  // Retransmission of lost frames; on by default.
  RecoveryOptions recovery;

  // InvalidArgument naming the first field out of range.
  absl::Status validate() const;
};

// The fixed cost of one message on a Thunderbolt 5 link in bytes of its
// wire time: alpha / beta of weft's tb5 link model (3,793 ns latency and
// 437 ns overhead at 0.1 ns a byte, 80 Gbit/s).
inline constexpr uint64_t kTb5MessageCostBytes = 42'300;

// The largest message kAuto runs as kMeshExchange on a mesh of `ranks`:
// options.mesh_exchange_max_bytes, or when that is 0, where the two mesh
// algorithms cost the same. On n ranks the exchange is one step of the
// whole message (alpha + S beta, every link at once), reduce-scatter and
// all-gather two of S / n (2 alpha + 2 S beta / n): they cross at
// S (n - 2) / n = alpha / beta, so S = kTb5MessageCostBytes n / (n - 2)
// (56,400 bytes on 8 ranks, 84,600 on 4); on two ranks the exchange moves
// no more bytes and takes one step fewer, so every size. Measured in
// docs/benchmarking.md.
uint64_t mesh_exchange_limit(const GroupOptions& options, uint32_t ranks);

struct CallOptions {
  // kAuto: the group's choice.
  Algorithm algorithm = Algorithm::kAuto;
  // 0: the group's timeout_ns.
  TimeNs timeout_ns = 0;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_GROUP_OPTIONS_H_
