// Trace: the simulator's record of everything that happened, one TraceEvent
// per post, departure, delivery, drop, completion and fault, in the order
// the single-threaded scheduler produced them. Its 64-bit hash is the
// fingerprint of a run: the same options and seed give the same hash on
// every platform, compiler and build type. Exports to Chrome trace JSON that
// ui.perfetto.dev opens (one track per rank, one per link direction).
#ifndef WEFT_SIM_TRACE_H_
#define WEFT_SIM_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "sim/faults.h"

namespace weft::sim {

enum class TraceKind : uint8_t {
  kPostSend = 1,  // rank posted a send towards peer
  kPostRecv,      // rank posted a receive for peer
  kDepart,        // a frame left rank for peer (end of serialisation)
  kDeliver,       // a frame from peer landed in one of rank's receives
  kDrop,          // a frame was lost (reason in `drop`)
  kCompletion,    // a completion was queued on rank's endpoint
  kFault,         // a fault was injected (kind in `fault`)
  kConnect,       // rank's endpoint to peer reached ready-to-send
};
std::string_view trace_kind_name(TraceKind kind);

enum class DropReason : uint8_t {
  kNone = 0,
  kNoReceive,    // arrived with no receive posted (UC drops silently)
  kLoss,         // a loss fault
  kLinkDown,     // the link direction was down
  kPeerCrashed,  // the receiving rank had crashed
  kNotReady,     // the receiving queue pair was not ready, failed or closed
  kSendError,    // the send failed with an error completion and never left
  // An RDMA WRITE the receiver refused: no memory region of the receiving
  // rank under its key, the region not open to remote writes, or the
  // written range outside it (UC drops it silently, as rxe's class E).
  kRemoteAccess,
  // Sent or addressed to a queue pair on a port cabled to another rank
  // than its peer (a wrong device file): lost on the wire.
  kMiscabled,
};
std::string_view drop_reason_name(DropReason reason);

// What a message asks of its receiver: a SEND lands in a posted receive;
// an RDMA WRITE lands in a memory region of the receiving rank (one with an
// immediate also consumes a receive, whose frame it leaves untouched).
enum class MessageOp : uint8_t {
  kSend = 0,
  kRdmaWrite,
  kRdmaWriteWithImmediate,
};
std::string_view message_op_name(MessageOp op);

struct TraceEvent {
  TimeNs time_ns = 0;
  TraceKind kind = TraceKind::kPostSend;
  // Where it happened and the other end: the receiver and the sender for
  // deliveries; the sender and the receiver (the link direction) for
  // departures and drops; the rank with the endpoint otherwise.
  uint32_t rank = 0;
  uint32_t peer = 0;
  uint32_t cable = 0;     // index into topology.devices(rank, peer)
  WorkId work;            // posts and completions
  uint32_t sequence = 0;  // the SEND's immediate (its sequence number)
  // Posts, departures, deliveries and drops of messages, and receive
  // completions (kRdmaWriteWithImmediate when a write consumed the
  // receive): what the message asks. Writes also carry their region's key
  // (never the address: a process's addresses differ from run to run).
  MessageOp op = MessageOp::kSend;
  uint32_t rkey = 0;
  uint64_t frame = 0;  // frames: 1-based count from sender to receiver
  uint32_t bytes = 0;
  WcStatus status = WcStatus::kSuccess;  // completions
  FaultKind fault = FaultKind::kNone;    // faults
  DropReason drop = DropReason::kNone;   // drops
  // A frame's departure time (deliveries and arrival drops); a fault's
  // duration (delay, stall).
  TimeNs start_ns = 0;

  std::string to_string() const;
};

class Trace {
 public:
  explicit Trace(bool keep_events = true) : keep_events_(keep_events) {}

  // Folds `event` into the hash and, when keeping events, stores it.
  // Inline: the simulator records several events per frame, and with
  // keep_events off this is the whole cost of tracing.
  void add(const TraceEvent& event) {
    fold(event);
    ++size_;
    if (keep_events_) events_.push_back(event);
  }

  // FNV-1a over each event's fields, taken as little-endian 64-bit words in
  // a fixed order (never raw struct bytes). Stable across platforms.
  uint64_t hash() const { return hash_; }
  // 16 lowercase hex digits.
  std::string hash_hex() const;
  uint64_t size() const { return size_; }
  bool keeps_events() const { return keep_events_; }
  const std::vector<TraceEvent>& events() const { return events_; }

  // Chrome trace JSON: pid 1 holds one thread per rank (posts, completions,
  // faults as instants), pid 2 one thread per link direction and cable
  // (each frame a slice from departure to arrival), with name metadata;
  // timestamps in microseconds. FailedPrecondition when events were not
  // kept.
  absl::StatusOr<std::string> perfetto_json() const;
  absl::Status write_perfetto_json(const std::string& path) const;

 private:
  static constexpr uint64_t kFnvPrime = 0x100000001b3ull;

  // Word-wise FNV-1a: each field widened to 64 bits, in this fixed order;
  // an RDMA WRITE's op and key are one more word (a SEND has none, so
  // traces of SENDs hash as they did before writes existed).
  void fold(const TraceEvent& e) {
    const uint64_t words[] = {
        static_cast<uint64_t>(e.time_ns),
        (uint64_t{static_cast<uint8_t>(e.kind)} << 56) |
            (uint64_t{static_cast<uint8_t>(e.fault)} << 48) |
            (uint64_t{static_cast<uint8_t>(e.drop)} << 40) |
            (uint64_t{static_cast<uint8_t>(e.work.kind)} << 32) |
            static_cast<uint32_t>(e.status),
        (uint64_t{e.rank} << 32) | e.peer,
        (uint64_t{e.cable} << 32) | e.bytes,
        (uint64_t{e.work.peer} << 32) | e.work.slot,
        (uint64_t{e.sequence} << 32),
        e.frame,
        static_cast<uint64_t>(e.start_ns)};
    for (uint64_t w : words) hash_ = (hash_ ^ w) * kFnvPrime;
    if (e.op != MessageOp::kSend) {
      const uint64_t write =
          (uint64_t{static_cast<uint8_t>(e.op)} << 32) | e.rkey;
      hash_ = (hash_ ^ write) * kFnvPrime;
    }
  }

  bool keep_events_;
  uint64_t hash_ = 0xcbf29ce484222325ull;  // FNV-1a offset basis
  uint64_t size_ = 0;
  std::vector<TraceEvent> events_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_TRACE_H_
