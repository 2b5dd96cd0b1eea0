// Trace export to weft's Perfetto timeline (timeline/timeline.h), the
// layout hardware runs write too.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "sim/trace.h"
#include "timeline/timeline.h"

namespace weft::sim {
namespace {

// The link track an event belongs on, if any.
bool link_of(const TraceEvent& e, timeline::TimelineLink* link) {
  switch (e.kind) {
    case TraceKind::kDeliver:
      *link = {e.peer, e.rank, e.cable};
      return true;
    case TraceKind::kDrop:
      *link = {e.rank, e.peer, e.cable};
      return true;
    default:
      return false;
  }
}

std::string event_name(const TraceEvent& e) {
  switch (e.kind) {
    case TraceKind::kCompletion:
      return timeline::timeline_completion_name(e.work.kind, e.status);
    case TraceKind::kFault:
      return absl::StrFormat("fault %s", fault_kind_name(e.fault));
    case TraceKind::kDeliver:
      return e.op == MessageOp::kSend
                 ? timeline::timeline_frame_name(e.frame, e.sequence)
                 : absl::StrFormat("%s frame %u seq %u", message_op_name(e.op),
                                   e.frame, e.sequence);
    case TraceKind::kDrop:
      return absl::StrFormat("dropped: %s", drop_reason_name(e.drop));
    default:
      return std::string(trace_kind_name(e.kind));
  }
}

timeline::TimelineArgs args_of(const TraceEvent& e) {
  timeline::TimelineArgs args{
      .peer = e.peer, .cable = e.cable, .bytes = e.bytes};
  if (e.kind == TraceKind::kPostSend || e.kind == TraceKind::kPostRecv ||
      e.kind == TraceKind::kCompletion) {
    args.work = e.work.to_string();
  }
  args.frame = e.frame;
  args.has_sequence = e.kind != TraceKind::kPostRecv;
  args.sequence = e.sequence;
  if (e.op != MessageOp::kSend) {
    args.op = std::string(message_op_name(e.op));
    args.rkey = e.rkey;
  }
  return args;
}

timeline::TimelineEvent to_timeline(const TraceEvent& e) {
  timeline::TimelineEvent t;
  t.name = event_name(e);
  t.category = std::string(trace_kind_name(e.kind));
  t.args = args_of(e);
  t.on_link = link_of(e, &t.link);
  t.rank = e.rank;
  t.time_ns = e.time_ns;
  t.start_ns = e.start_ns;
  return t;
}

}  // namespace

absl::StatusOr<std::string> Trace::perfetto_json() const {
  if (!keep_events_) {
    return absl::FailedPreconditionError(
        "the trace kept no events (keep_trace_events was off); rerun with it "
        "on to export a Perfetto trace");
  }
  // Departures are implied by the deliveries' slices.
  std::vector<timeline::TimelineEvent> events;
  events.reserve(events_.size());
  for (const TraceEvent& e : events_) {
    if (e.kind != TraceKind::kDepart) events.push_back(to_timeline(e));
  }
  const std::pair<std::string, std::string> other[] = {
      {"trace_hash", hash_hex()}};
  return timeline::timeline_json(events, other);
}

absl::Status Trace::write_perfetto_json(const std::string& path) const {
  absl::StatusOr<std::string> text = perfetto_json();
  if (!text.ok()) return text.status();
  return timeline::write_timeline_file(path, *text);
}

}  // namespace weft::sim
