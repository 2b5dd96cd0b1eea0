// Timeline: weft's Perfetto timeline, the Chrome trace JSON that
// ui.perfetto.dev and chrome://tracing open. One layout for every fabric:
// the simulator exports its trace with it (weft-sim-trace.json), and a
// hardware run writes one file per rank with it (WEFT_TRACE, see
// TimelineRecorder), so both read alike and the files of one run merge
// into one view (merge_timelines).
//
// Layout: process 1 "ranks" has one thread per rank (posts, completions,
// connects, faults as instants); process 2 "links" has threads per link
// direction and cable, each frame a slice from when it left to when it
// landed (or an instant). Slices on one thread must nest (Perfetto puts
// overlapping ones on overflow tracks with import errors), and frames in
// flight on one link overlap, so a link has one thread per frame in the air
// at once: "link 0->1 cable 0", then "link 0->1 cable 0 slot 1", ...; each
// frame takes the lowest slot free when it leaves. Tracks are numbered in
// sorted order, so the same events give the same bytes. Timestamps are in
// microseconds.
#ifndef WEFT_TIMELINE_TIMELINE_H_
#define WEFT_TIMELINE_TIMELINE_H_

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"

namespace weft::timeline {

// Frames from rank `from` to rank `to` over cable `cable` (the index into
// the device JSON's list for that pair).
struct TimelineLink {
  uint32_t from = 0;
  uint32_t to = 0;
  uint32_t cable = 0;
  auto operator<=>(const TimelineLink&) const = default;
};

// What an event shows when selected. Empty strings and a zero frame are
// left out.
struct TimelineArgs {
  uint32_t peer = 0;
  uint32_t cable = 0;
  uint32_t bytes = 0;
  std::string work;    // posts and completions: WorkId::to_string()
  uint64_t frame = 0;  // 1-based count of frames on the link
  bool has_sequence = true;
  uint32_t sequence = 0;  // the SEND's immediate
  std::string op;         // RDMA writes: what the message asks
  uint32_t rkey = 0;      // with `op`
};

struct TimelineEvent {
  std::string name;
  std::string category;
  TimelineArgs args;
  // On `link`'s track, else on `rank`'s.
  bool on_link = false;
  uint32_t rank = 0;
  TimelineLink link;
  TimeNs time_ns = 0;
  // On a link: a slice [start_ns, time_ns] when time_ns > start_ns.
  TimeNs start_ns = 0;
};

// The names both writers give the same kind of event.
std::string timeline_frame_name(uint64_t frame, uint32_t sequence);
std::string timeline_completion_name(WorkKind kind, WcStatus status);

// The whole document. `other_data` goes into "otherData" (strings).
std::string timeline_json(
    std::span<const TimelineEvent> events,
    std::span<const std::pair<std::string, std::string>> other_data);

// Writes `text` to `path`: PermissionDenied when it cannot be opened,
// DataLoss when writing fails; both name the path.
absl::Status write_timeline_file(const std::string& path,
                                 std::string_view text);

// otherData's key for a file's time base (TimelineRecorder): Unix time in
// ns, as a decimal string, that the file's timestamps are offsets from;
// absent means 0.
inline constexpr std::string_view kTimelineTimeBaseKey = "time_base_unix_ns";

// One timeline from several (a hardware run's per-rank files): rank
// tracks are kept, link tracks of the same name become one and are
// renumbered in sorted order, events keep their order file by file. Files
// with different time bases are put on the earliest one.
// `names` label the documents in errors. InvalidArgument when a document
// is not a timeline this writer made.
absl::StatusOr<std::string> merge_timelines(
    std::span<const std::string> names, std::span<const std::string> documents);

}  // namespace weft::timeline

#endif  // WEFT_TIMELINE_TIMELINE_H_
