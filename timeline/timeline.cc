#include "timeline/timeline.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <span>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace weft::timeline {
namespace {

using nlohmann::json;

constexpr int kRanksPid = 1;
constexpr int kLinksPid = 2;
constexpr double kNsPerUsDouble = 1000.0;

double to_us(TimeNs ns) { return static_cast<double>(ns) / kNsPerUsDouble; }

json metadata(const char* what, int pid, int64_t tid, const std::string& name) {
  json m = {
      {"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) m["tid"] = tid;
  return m;
}

// A link's track: frames in flight on one link overlap (the next leaves
// before the last lands), and slices on one track must nest, so a link has
// as many tracks as it ever has frames in flight at once, its slot 0 named
// for the link alone.
struct LinkTrack {
  TimelineLink link;
  uint32_t slot = 0;
  auto operator<=>(const LinkTrack&) const = default;
};

std::string track_name(const LinkTrack& t) {
  const TimelineLink& l = t.link;
  if (t.slot == 0) {
    return absl::StrFormat("link %u->%u cable %u", l.from, l.to, l.cable);
  }
  return absl::StrFormat("link %u->%u cable %u slot %u", l.from, l.to, l.cable,
                         t.slot);
}

json args_json(const TimelineArgs& a) {
  json args = {{"peer", a.peer}, {"cable", a.cable}, {"bytes", a.bytes}};
  if (!a.work.empty()) args["work"] = a.work;
  if (a.frame != 0) args["frame"] = a.frame;
  if (a.has_sequence) args["sequence"] = a.sequence;
  if (!a.op.empty()) {
    args["op"] = a.op;
    args["rkey"] = a.rkey;
  }
  return args;
}

bool is_flight(const TimelineEvent& e) {
  return e.on_link && e.time_ns > e.start_ns;
}

// Each flight's slot on its link, by index into `events` (instants: 0):
// flights in order of departure (then landing, then index) take the lowest
// slot whose last flight has landed, so no two on a slot overlap and the
// slots are as few as the most flights ever in the air at once.
std::vector<uint32_t> flight_slots(std::span<const TimelineEvent> events) {
  std::vector<size_t> order;
  for (size_t i = 0; i < events.size(); ++i) {
    if (is_flight(events[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TimelineEvent& x = events[a];
    const TimelineEvent& y = events[b];
    return std::tie(x.link, x.start_ns, x.time_ns, a) <
           std::tie(y.link, y.start_ns, y.time_ns, b);
  });
  std::vector<uint32_t> slots(events.size(), 0);
  std::map<TimelineLink, std::vector<TimeNs>> landed;  // per slot, its last
  for (size_t i : order) {
    std::vector<TimeNs>& ends = landed[events[i].link];
    uint32_t slot = 0;
    while (slot < ends.size() && ends[slot] > events[i].start_ns) ++slot;
    if (slot == ends.size()) ends.push_back(0);
    ends[slot] = events[i].time_ns;
    slots[i] = slot;
  }
  return slots;
}

json event_json(const TimelineEvent& e, uint32_t slot,
                const std::map<LinkTrack, int64_t>& tracks) {
  json j = {{"name", e.name}, {"cat", e.category}, {"args", args_json(e.args)}};
  if (e.on_link) {
    j["pid"] = kLinksPid;
    j["tid"] = tracks.at({e.link, slot});
    if (is_flight(e)) {
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

// The track metadata, ranks then links, each in sorted order; links get
// their numbers here.
json track_metadata(const std::map<uint32_t, bool>& ranks,
                    std::map<LinkTrack, int64_t>& links) {
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
    out.push_back(metadata("thread_name", kLinksPid, id, track_name(key)));
  }
  return out;
}

}  // namespace

std::string timeline_frame_name(uint64_t frame, uint32_t sequence) {
  return absl::StrFormat("frame %u seq %u", frame, sequence);
}

std::string timeline_completion_name(WorkKind kind, WcStatus status) {
  return absl::StrFormat("%s completion %s", work_kind_name(kind),
                         wc_status_symbol(status));
}

std::string timeline_json(
    std::span<const TimelineEvent> events,
    std::span<const std::pair<std::string, std::string>> other_data) {
  std::map<uint32_t, bool> ranks;
  std::map<LinkTrack, int64_t> tracks;
  const std::vector<uint32_t> slots = flight_slots(events);
  for (size_t i = 0; i < events.size(); ++i) {
    const TimelineEvent& e = events[i];
    if (e.on_link) {
      tracks.emplace(LinkTrack{e.link, slots[i]}, 0);
    } else {
      ranks.emplace(e.rank, true);
    }
  }
  json out = track_metadata(ranks, tracks);
  for (size_t i = 0; i < events.size(); ++i) {
    out.push_back(event_json(events[i], slots[i], tracks));
  }
  json other = json::object();
  for (const auto& [key, value] : other_data) other[key] = value;
  json doc = {{"traceEvents", std::move(out)},
              {"displayTimeUnit", "ns"},
              {"otherData", std::move(other)}};
  return doc.dump(-1, ' ', /*ensure_ascii=*/false,
                  json::error_handler_t::replace);
}

absl::Status write_timeline_file(const std::string& path,
                                 std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "cannot write the trace to %s; check the directory exists and is "
        "writable",
        path));
  }
  out << text;
  out.close();
  if (!out) {
    return absl::DataLossError(
        absl::StrFormat("writing the trace to %s failed (disk full?)", path));
  }
  return absl::OkStatus();
}

namespace {

// A document's link tracks: its tid -> the link and slot its name names.
absl::StatusOr<std::map<int64_t, LinkTrack>> links_of(const std::string& name,
                                                      const json& events) {
  std::map<int64_t, LinkTrack> out;
  for (const json& e : events) {
    if (e.value("ph", "") != "M" || e.value("name", "") != "thread_name" ||
        e.value("pid", 0) != kLinksPid) {
      continue;
    }
    const std::string track = e["args"].value("name", "");
    LinkTrack t;
    TimelineLink& l = t.link;
    char rest = 0;
    const int read =
        std::sscanf(track.c_str(), "link %u->%u cable %u slot %u%c", &l.from,
                    &l.to, &l.cable, &t.slot, &rest);
    if ((read != 3 && read != 4) || (read == 4 && t.slot == 0) ||
        track != track_name(t)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: link track \"%s\" is not named \"link A->B cable C\" or "
          "\"link A->B cable C slot S\"; is it a weft timeline?",
          name, track));
    }
    out[e.value("tid", int64_t{-1})] = t;
  }
  return out;
}

// What merging reads of an event, with the types it reads them as; "" when
// the event has them, else what is wrong. Checked before anything reads the
// event, so a damaged file is an error, never an exception.
std::string event_shape_error(const json& e) {
  if (!e.is_object()) return "is not an object";
  for (const char* key : {"ph", "name"}) {
    if (e.contains(key) && !e[key].is_string()) {
      return absl::StrFormat("has a \"%s\" that is not a string", key);
    }
  }
  for (const char* key : {"pid", "tid"}) {
    if (e.contains(key) && !e[key].is_number_integer()) {
      return absl::StrFormat("has a \"%s\" that is not an integer", key);
    }
  }
  // Merging shifts every timed event's ts to the common time base.
  if (e.contains("ts") && !e["ts"].is_number()) {
    return "has a \"ts\" that is not a number";
  }
  if (e.value("name", "") == "thread_name" &&
      (!e.contains("args") || !e["args"].is_object() ||
       !e["args"].contains("name") || !e["args"]["name"].is_string())) {
    return "names a track without args.name";
  }
  return "";
}

absl::StatusOr<json> parse_timeline(const std::string& name,
                                    const std::string& text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") ||
      !doc["traceEvents"].is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a weft timeline (Chrome trace JSON with a traceEvents "
        "array); pass the files WEFT_TRACE or weft-sim wrote",
        name));
  }
  const json& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string error = event_shape_error(events[i]);
    if (!error.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: traceEvents[%u] %s; is it a weft timeline, whole?", name, i,
          error));
    }
  }
  return doc;
}

// The document's time base (kTimelineTimeBaseKey), 0 when it has none.
absl::StatusOr<TimeNs> time_base_of(const std::string& name, const json& doc) {
  const std::string key(kTimelineTimeBaseKey);
  if (!doc.contains("otherData") || !doc["otherData"].is_object() ||
      !doc["otherData"].contains(key)) {
    return TimeNs{0};
  }
  const json& value = doc["otherData"][key];
  TimeNs base = 0;
  if (!value.is_string() ||
      !absl::SimpleAtoi(value.get<std::string>(), &base) || base < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: otherData.%s is not a time in ns; is it a weft timeline?", name,
        key));
  }
  return base;
}

}  // namespace

absl::StatusOr<std::string> merge_timelines(
    std::span<const std::string> names,
    std::span<const std::string> documents) {
  std::vector<json> docs;
  std::vector<TimeNs> bases;
  std::vector<std::map<int64_t, LinkTrack>> doc_links;
  std::map<uint32_t, bool> ranks;
  std::map<uint32_t, size_t> rank_file;  // which document declared the rank
  // A link's flights are the sender's (TimelineRecorder::sent), so its
  // slots come from one file and never overlap when merged.
  std::map<LinkTrack, int64_t> links;
  for (size_t i = 0; i < documents.size(); ++i) {
    const std::string& name = i < names.size() ? names[i] : documents[i];
    absl::StatusOr<json> doc = parse_timeline(name, documents[i]);
    if (!doc.ok()) return doc.status();
    absl::StatusOr<TimeNs> base = time_base_of(name, *doc);
    if (!base.ok()) return base.status();
    bases.push_back(*base);
    auto by_tid = links_of(name, (*doc)["traceEvents"]);
    if (!by_tid.ok()) return by_tid.status();
    for (const auto& [tid, link] : *by_tid) links.emplace(link, 0);
    for (const json& e : (*doc)["traceEvents"]) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" &&
          e.value("pid", 0) == kRanksPid) {
        const auto rank = e.value("tid", uint32_t{0});
        ranks.emplace(rank, true);
        const auto [it, first] = rank_file.emplace(rank, i);
        if (!first && it->second != i) {
          const size_t other = it->second;
          return absl::InvalidArgumentError(absl::StrFormat(
              "rank %u's track is in both %s and %s; pass each rank's "
              "timeline once",
              rank, other < names.size() ? names[other] : "an earlier file",
              name));
        }
      }
    }
    docs.push_back(*std::move(doc));
    doc_links.push_back(*std::move(by_tid));
  }
  json out = track_metadata(ranks, links);
  const TimeNs base =
      bases.empty() ? 0 : *std::min_element(bases.begin(), bases.end());
  for (size_t i = 0; i < docs.size(); ++i) {
    const double shift_us = to_us(bases[i] - base);
    for (json e : docs[i]["traceEvents"]) {
      if (e.value("ph", "") == "M") continue;
      if (shift_us != 0 && e.contains("ts") && e["ts"].is_number()) {
        e["ts"] = e["ts"].get<double>() + shift_us;
      }
      if (e.value("pid", 0) == kLinksPid) {
        auto it = doc_links[i].find(e.value("tid", int64_t{-1}));
        if (it == doc_links[i].end()) continue;  // no such track declared
        e["tid"] = links.at(it->second);
      }
      out.push_back(std::move(e));
    }
  }
  json doc = {{"traceEvents", std::move(out)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"merged_files", std::to_string(docs.size())},
                {std::string(kTimelineTimeBaseKey), std::to_string(base)}}}};
  return doc.dump(-1, ' ', /*ensure_ascii=*/false,
                  json::error_handler_t::replace);
}

}  // namespace weft::timeline
