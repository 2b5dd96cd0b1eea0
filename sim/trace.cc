#include "sim/trace.h"

#include <string>
#include <string_view>

#include "absl/strings/str_format.h"

namespace weft::sim {
std::string_view trace_kind_name(TraceKind kind) {
  switch (kind) {
    case TraceKind::kPostSend:
      return "post_send";
    case TraceKind::kPostRecv:
      return "post_recv";
    case TraceKind::kDepart:
      return "depart";
    case TraceKind::kDeliver:
      return "deliver";
    case TraceKind::kDrop:
      return "drop";
    case TraceKind::kCompletion:
      return "completion";
    case TraceKind::kFault:
      return "fault";
    case TraceKind::kConnect:
      return "connect";
  }
  return "unknown";
}

std::string_view drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::kNone:
      return "none";
    case DropReason::kNoReceive:
      return "no receive posted";
    case DropReason::kLoss:
      return "lost";
    case DropReason::kLinkDown:
      return "link down";
    case DropReason::kPeerCrashed:
      return "receiver crashed";
    case DropReason::kNotReady:
      return "queue pair not ready";
    case DropReason::kSendError:
      return "send error";
    case DropReason::kRemoteAccess:
      return "remote access refused";
    case DropReason::kMiscabled:
      return "port cabled elsewhere";
  }
  return "unknown";
}

std::string_view message_op_name(MessageOp op) {
  switch (op) {
    case MessageOp::kSend:
      return "send";
    case MessageOp::kRdmaWrite:
      return "rdma write";
    case MessageOp::kRdmaWriteWithImmediate:
      return "rdma write with immediate";
  }
  return "unknown";
}

std::string TraceEvent::to_string() const {
  std::string out = absl::StrFormat(
      "%d ns %s rank %u peer %u cable %u %s seq %u frame %u bytes %u status %s "
      "fault %s drop %s start %d",
      time_ns, trace_kind_name(kind), rank, peer, cable, work.to_string(),
      sequence, frame, bytes, wc_status_symbol(status), fault_kind_name(fault),
      drop_reason_name(drop), start_ns);
  if (op != MessageOp::kSend) {
    absl::StrAppendFormat(&out, " op %s rkey %u", message_op_name(op), rkey);
  }
  return out;
}

std::string Trace::hash_hex() const { return absl::StrFormat("%016x", hash_); }

}  // namespace weft::sim
