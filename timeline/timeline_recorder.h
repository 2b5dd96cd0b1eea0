// TimelineRecorder: one rank's traffic on a hardware fabric, recorded for
// weft's Perfetto timeline (timeline/timeline.h) - the view the simulator
// gives, from a real run. A fabric makes one when WEFT_TRACE names a file
// and writes it when the fabric is destroyed; each rank (process) writes
// its own file, and `weft-sim trace-merge` joins them.
//
// What a rank can see of its traffic: its posts and completions and its
// connects (its rank track), each frame it sent as a slice on link
// rank->peer from the post to the send completion (when the frame left),
// and each frame it received as an instant on link peer->rank when its
// receive completed. Times are the fabric's clock plus `origin_ns`: Unix
// time on the wall clock, so files from different machines line up as
// well as their clocks agree. The file holds them less a time base, a
// multiple of kTimeBaseStepNs given in otherData "time_base_unix_ns":
// Unix time in microseconds (about 1.8e15) is too large for a double to
// keep nanoseconds apart, an offset from the base is not.
//
// At most kMaxEvents are kept (a limit on memory, about 64 MiB); later
// events are counted, not kept, and the file says how many were left out.
// Not thread-safe: the fabric's one thread records.
#ifndef WEFT_TIMELINE_TIMELINE_RECORDER_H_
#define WEFT_TIMELINE_TIMELINE_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fabric/clock.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "timeline/timeline.h"

namespace weft::timeline {

class TimelineRecorder {
 public:
  static constexpr size_t kMaxEvents = size_t{1} << 20;
  // 10^15 ns (about 11.6 days): offsets from the base stay under 2e12 us,
  // which a double holds to better than a nanosecond.
  static constexpr TimeNs kTimeBaseStepNs = 1'000'000'000'000'000;

  // Records rank `rank`'s events, timed by `clock` (which outlives the
  // recorder) plus `origin_ns`, for `path`.
  TimelineRecorder(std::string path, uint32_t rank, const Clock& clock,
                   TimeNs origin_ns);

  // WEFT_TRACE's rule: every "%r" in `pattern` becomes the rank; a pattern
  // without one gets ".<rank>" before its extension (trace.json ->
  // trace.3.json), so ranks never overwrite each other's file.
  static std::string path_for_rank(std::string_view pattern, uint32_t rank);
  // Unix time minus `clock`'s reading, now: the origin that turns a wall
  // clock's readings into Unix time.
  static TimeNs unix_origin_ns(const Clock& clock);

  const std::string& path() const { return path_; }
  uint32_t rank() const { return rank_; }
  // Events kept, and those past kMaxEvents that were not.
  size_t size() const { return records_.size(); }
  uint64_t left_out() const { return left_out_; }
  // The clock's reading now (for a post's time, given back to sent()).
  TimeNs now_ns() const { return clock_.now_ns(); }

  void connect(uint32_t peer, uint32_t cable);
  void post_send(uint32_t peer, uint32_t cable, WorkId work, uint32_t bytes,
                 uint32_t sequence);
  void post_recv(uint32_t peer, uint32_t cable, WorkId work, uint32_t bytes);
  void completion(uint32_t peer, uint32_t cable, WorkId work, WcStatus status,
                  uint32_t bytes, uint32_t sequence);
  // Frame `frame` (1-based on this link) left for `peer`: posted at
  // `posted_ns` (now_ns() then), its send completed now.
  void sent(uint32_t peer, uint32_t cable, TimeNs posted_ns, uint64_t frame,
            uint32_t sequence, uint32_t bytes);
  // Frame `frame` (1-based count of arrivals on this link) from `peer`
  // landed now.
  void arrived(uint32_t peer, uint32_t cable, uint64_t frame, uint32_t sequence,
               uint32_t bytes);

  // The timeline of everything recorded (timeline/timeline.h).
  std::string json() const;
  // Writes json() to path().
  absl::Status write() const;

 private:
  enum class Kind : uint8_t {
    kConnect,
    kPostSend,
    kPostRecv,
    kCompletion,
    kSent,
    kArrived
  };
  struct Record {
    TimeNs time_ns = 0;
    TimeNs start_ns = 0;
    Kind kind = Kind::kConnect;
    WcStatus status = WcStatus::kSuccess;
    uint32_t peer = 0;
    uint32_t cable = 0;
    uint32_t bytes = 0;
    uint32_t sequence = 0;
    uint64_t frame = 0;
    WorkId work;
  };
  void add(Record r);
  TimelineEvent to_event(const Record& r) const;

  std::string path_;
  uint32_t rank_;
  const Clock& clock_;
  TimeNs origin_ns_;
  TimeNs base_ns_;  // origin_ns_ rounded down to kTimeBaseStepNs
  std::vector<Record> records_;
  uint64_t left_out_ = 0;
};

}  // namespace weft::timeline

#endif  // WEFT_TIMELINE_TIMELINE_RECORDER_H_
