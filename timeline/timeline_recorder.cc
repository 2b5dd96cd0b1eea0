#include "timeline/timeline_recorder.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace weft::timeline {

TimelineRecorder::TimelineRecorder(std::string path, uint32_t rank,
                                   const Clock& clock, TimeNs origin_ns)
    : path_(std::move(path)),
      rank_(rank),
      clock_(clock),
      origin_ns_(origin_ns),
      base_ns_(origin_ns / kTimeBaseStepNs * kTimeBaseStepNs) {}

std::string TimelineRecorder::path_for_rank(std::string_view pattern_view,
                                            uint32_t rank) {
  // std::string throughout: older Abseil's string_view is not std's.
  const std::string pattern(pattern_view);
  const std::string r = std::to_string(rank);
  if (pattern.find("%r") != std::string::npos) {
    return absl::StrReplaceAll(pattern, {{"%r", r}});
  }
  const size_t slash = pattern.rfind('/');
  const size_t dot = pattern.rfind('.');
  const bool has_extension = dot != std::string::npos && dot > 0 &&
                             (slash == std::string::npos || dot > slash + 1);
  if (!has_extension) return pattern + "." + r;
  return pattern.substr(0, dot) + "." + r + pattern.substr(dot);
}

TimeNs TimelineRecorder::unix_origin_ns(const Clock& clock) {
  // The one place a wall time of day is read: to place a hardware run's
  // timeline on a shared time axis, never to decide anything.
  const TimeNs unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  return unix_ns - clock.now_ns();
}

void TimelineRecorder::add(Record r) {
  if (records_.size() == kMaxEvents) {
    ++left_out_;
    return;
  }
  r.time_ns = clock_.now_ns();
  records_.push_back(r);
}

void TimelineRecorder::connect(uint32_t peer, uint32_t cable) {
  add({.kind = Kind::kConnect, .peer = peer, .cable = cable});
}

void TimelineRecorder::post_send(uint32_t peer, uint32_t cable, WorkId work,
                                 uint32_t bytes, uint32_t sequence) {
  add({.kind = Kind::kPostSend,
       .peer = peer,
       .cable = cable,
       .bytes = bytes,
       .sequence = sequence,
       .work = work});
}

void TimelineRecorder::post_recv(uint32_t peer, uint32_t cable, WorkId work,
                                 uint32_t bytes) {
  add({.kind = Kind::kPostRecv,
       .peer = peer,
       .cable = cable,
       .bytes = bytes,
       .work = work});
}

void TimelineRecorder::completion(uint32_t peer, uint32_t cable, WorkId work,
                                  WcStatus status, uint32_t bytes,
                                  uint32_t sequence) {
  add({.kind = Kind::kCompletion,
       .status = status,
       .peer = peer,
       .cable = cable,
       .bytes = bytes,
       .sequence = sequence,
       .work = work});
}

void TimelineRecorder::sent(uint32_t peer, uint32_t cable, TimeNs posted_ns,
                            uint64_t frame, uint32_t sequence, uint32_t bytes) {
  add({.start_ns = posted_ns,
       .kind = Kind::kSent,
       .peer = peer,
       .cable = cable,
       .bytes = bytes,
       .sequence = sequence,
       .frame = frame});
}

void TimelineRecorder::arrived(uint32_t peer, uint32_t cable, uint64_t frame,
                               uint32_t sequence, uint32_t bytes) {
  add({.kind = Kind::kArrived,
       .peer = peer,
       .cable = cable,
       .bytes = bytes,
       .sequence = sequence,
       .frame = frame});
}

TimelineEvent TimelineRecorder::to_event(const Record& r) const {
  TimelineEvent e;
  e.rank = rank_;
  e.time_ns = r.time_ns + (origin_ns_ - base_ns_);
  e.args = TimelineArgs{.peer = r.peer, .cable = r.cable, .bytes = r.bytes};
  e.args.sequence = r.sequence;
  switch (r.kind) {
    case Kind::kConnect:
      e.name = e.category = "connect";
      break;
    case Kind::kPostSend:
      e.name = e.category = "post_send";
      e.args.work = r.work.to_string();
      break;
    case Kind::kPostRecv:
      e.name = e.category = "post_recv";
      e.args.work = r.work.to_string();
      e.args.has_sequence = false;
      break;
    case Kind::kCompletion:
      e.name = timeline_completion_name(r.work.kind, r.status);
      e.category = "completion";
      e.args.work = r.work.to_string();
      break;
    case Kind::kSent:
      e.name = timeline_frame_name(r.frame, r.sequence);
      e.category = "sent";
      e.on_link = true;
      e.link = {rank_, r.peer, r.cable};
      // Never an instant: a send completes after it was posted.
      e.start_ns =
          std::min(r.start_ns, r.time_ns - 1) + (origin_ns_ - base_ns_);
      e.args.frame = r.frame;
      break;
    case Kind::kArrived:
      e.name = timeline_frame_name(r.frame, r.sequence);
      e.category = "arrived";
      e.on_link = true;
      e.link = {r.peer, rank_, r.cable};
      e.start_ns = e.time_ns;
      e.args.frame = r.frame;
      break;
  }
  return e;
}

std::string TimelineRecorder::json() const {
  std::vector<TimelineEvent> events;
  events.reserve(records_.size());
  for (const Record& r : records_) events.push_back(to_event(r));
  const std::pair<std::string, std::string> other[] = {
      {"rank", absl::StrCat(rank_)},
      {"events_left_out", absl::StrCat(left_out_)},
      {std::string(kTimelineTimeBaseKey), absl::StrCat(base_ns_)}};
  return timeline_json(events, other);
}

absl::Status TimelineRecorder::write() const {
  return write_timeline_file(path_, json());
}

}  // namespace weft::timeline
