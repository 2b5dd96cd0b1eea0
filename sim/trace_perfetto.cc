// Trace export to Chrome trace JSON (the format ui.perfetto.dev and
// chrome://tracing open).
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "sim/trace.h"

namespace weft::sim {
namespace {

using nlohmann::json;

constexpr int kRanksPid = 1;
constexpr int kLinksPid = 2;
constexpr double kNsPerUsDouble = 1000.0;

using LinkKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // from, to, cable

double to_us(TimeNs ns) { return static_cast<double>(ns) / kNsPerUsDouble; }

json metadata(const char* what, int pid, int64_t tid, const std::string& name) {
  json m = {
      {"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

// The link track an event belongs on, if any.
bool link_of(const TraceEvent& e, LinkKey* key) {
  switch (e.kind) {
    case TraceKind::kDeliver:
      *key = {e.peer, e.rank, e.cable};
      return true;
    case TraceKind::kDrop:
      *key = {e.rank, e.peer, e.cable};
      return true;
    default:
      return false;
  }
}

std::string event_name(const TraceEvent& e) {
  switch (e.kind) {
    case TraceKind::kCompletion:
      return absl::StrFormat("%s completion %s", work_kind_name(e.work.kind),
                             wc_status_symbol(e.status));
    case TraceKind::kFault:
      return absl::StrFormat("fault %s", fault_kind_name(e.fault));
    case TraceKind::kDeliver:
      return e.op == MessageOp::kSend
                 ? absl::StrFormat("frame %u seq %u", e.frame, e.sequence)
                 : absl::StrFormat("%s frame %u seq %u", message_op_name(e.op),
                                   e.frame, e.sequence);
    case TraceKind::kDrop:
      return absl::StrFormat("dropped: %s", drop_reason_name(e.drop));
    default:
      return std::string(trace_kind_name(e.kind));
  }
}

json args_of(const TraceEvent& e) {
  json args = {{"peer", e.peer}, {"cable", e.cable}, {"bytes", e.bytes}};
  if (e.kind == TraceKind::kPostSend || e.kind == TraceKind::kPostRecv ||
      e.kind == TraceKind::kCompletion) {
    args["work"] = e.work.to_string();
  }
  if (e.frame != 0) args["frame"] = e.frame;
  if (e.kind != TraceKind::kPostRecv) args["sequence"] = e.sequence;
  if (e.op != MessageOp::kSend) {
    args["op"] = message_op_name(e.op);
    args["rkey"] = e.rkey;
  }
  return args;
}

json to_json(const TraceEvent& e, const std::map<LinkKey, int64_t>& links) {
  LinkKey key;
  json j = {{"name", event_name(e)},
            {"cat", trace_kind_name(e.kind)},
            {"args", args_of(e)}};
  if (link_of(e, &key)) {
    j["pid"] = kLinksPid;
    j["tid"] = links.at(key);
    if (e.time_ns > e.start_ns) {  // the frame's flight, departure to arrival
      j["ph"] = "X";
      j["ts"] = to_us(e.start_ns);
      j["dur"] = to_us(e.time_ns - e.start_ns);
      return j;
    }
  } else {
    j["pid"] = kRanksPid;
    j["tid"] = e.rank;
  }
  j["ph"] = "i";
  j["s"] = "t";
  j["ts"] = to_us(e.time_ns);
  return j;
}

}  // namespace

absl::StatusOr<std::string> Trace::perfetto_json() const {
  if (!keep_events_) {
    return absl::FailedPreconditionError(
        "the trace kept no events (keep_trace_events was off); rerun with it "
        "on to export a Perfetto trace");
  }
  // Tracks, numbered in sorted order so the file is deterministic.
  std::map<uint32_t, bool> ranks;
  std::map<LinkKey, int64_t> links;
  for (const TraceEvent& e : events_) {
    LinkKey key;
    if (link_of(e, &key)) {
      links.emplace(key, 0);
    } else if (e.kind != TraceKind::kDepart) {
      ranks.emplace(e.rank, true);
    }
  }
  json out = json::array();
  out.push_back(metadata("process_name", kRanksPid, -1, "ranks"));
  out.push_back(metadata("process_name", kLinksPid, -1, "links"));
  for (const auto& [rank, unused] : ranks) {
    out.push_back(
        metadata("thread_name", kRanksPid, rank, absl::StrCat("rank ", rank)));
  }
  int64_t tid = 0;
  for (auto& [key, id] : links) {
    id = tid++;
    const auto& [from, to, cable] = key;
    out.push_back(
        metadata("thread_name", kLinksPid, id,
                 absl::StrFormat("link %u->%u cable %u", from, to, cable)));
  }
  for (const TraceEvent& e : events_) {
    if (e.kind != TraceKind::kDepart) out.push_back(to_json(e, links));
  }
  json doc = {{"traceEvents", std::move(out)},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"trace_hash", hash_hex()}}}};
  return doc.dump();
}

absl::Status Trace::write_perfetto_json(const std::string& path) const {
  absl::StatusOr<std::string> text = perfetto_json();
  if (!text.ok()) return text.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "cannot write the trace to %s; check the directory exists and is "
        "writable",
        path));
  }
  out << *text;
  out.close();
  if (!out) {
    return absl::DataLossError(
        absl::StrFormat("writing the trace to %s failed (disk full?)", path));
  }
  return absl::OkStatus();
}

}  // namespace weft::sim
