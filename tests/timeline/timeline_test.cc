// The timeline writer's link tracks: frames in flight at once on one link
// go to tracks of their own ("slots"), so every track's slices nest as
// Perfetto requires; merging per-rank files keeps the slots apart. And the
// suite's nesting check itself, on planted overlaps.
#include "timeline/timeline.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/trace_nesting.h"

namespace weft::timeline {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using nlohmann::json;

TimelineEvent flight(uint32_t frame, TimeNs start_ns, TimeNs end_ns) {
  TimelineEvent e;
  e.name = timeline_frame_name(frame, frame);
  e.category = "deliver";
  e.on_link = true;
  e.link = {0, 1, 0};
  e.start_ns = start_ns;
  e.time_ns = end_ns;
  e.args.frame = frame;
  return e;
}

json parse(const std::string& text) {
  json doc = json::parse(text, nullptr, false);
  EXPECT_FALSE(doc.is_discarded());
  return doc;
}

// The link tracks' names by tid, and each slice's track by frame.
std::vector<std::string> link_track_names(const json& doc) {
  std::vector<std::string> names;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2) {
      names.push_back(e["args"]["name"]);
    }
  }
  return names;
}

int64_t tid_of_frame(const json& doc, uint64_t frame) {
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["args"].value("frame", uint64_t{0}) == frame) {
      return e["tid"];
    }
  }
  return -1;
}

TEST(TimelineLinks, FramesInFlightAtOnceTakeSlotsOfTheirOwn) {
  // Frames 1-3 leave 1 us apart and fly 3.5 us: at most three in the air.
  // Frame 4 leaves when frame 1 has landed and reuses its slot.
  const std::vector<TimelineEvent> events = {
      flight(1, 0, 3500), flight(2, 1000, 4500), flight(3, 2000, 5500),
      flight(4, 3500, 7000)};
  const json doc = parse(timeline_json(events, {}));
  EXPECT_THAT(link_track_names(doc),
              ElementsAre("link 0->1 cable 0", "link 0->1 cable 0 slot 1",
                          "link 0->1 cable 0 slot 2"));
  EXPECT_EQ(tid_of_frame(doc, 1), tid_of_frame(doc, 4));
  EXPECT_NE(tid_of_frame(doc, 1), tid_of_frame(doc, 2));
  EXPECT_NE(tid_of_frame(doc, 2), tid_of_frame(doc, 3));
  EXPECT_THAT(weft::testing::nesting_violations(doc), IsEmpty());
}

TEST(TimelineLinks, OneFrameAtATimeKeepsOneTrack) {
  const std::vector<TimelineEvent> events = {flight(1, 0, 1000),
                                             flight(2, 1000, 2000)};
  EXPECT_THAT(link_track_names(parse(timeline_json(events, {}))),
              ElementsAre("link 0->1 cable 0"));
}

TEST(TimelineLinks, MergingKeepsEachFilesSlots) {
  // Rank 0's file: two sends in flight at once on 0->1; rank 1's file: an
  // arrival (an instant) on the same link.
  const std::string sender =
      timeline_json(std::vector<TimelineEvent>{flight(1, 0, 3500),
                                               flight(2, 1000, 4500)},
                    {});
  TimelineEvent arrival = flight(1, 3500, 3500);
  arrival.category = "arrived";
  arrival.rank = 1;
  const std::string receiver =
      timeline_json(std::vector<TimelineEvent>{arrival}, {});
  const std::vector<std::string> names = {"rank0.json", "rank1.json"};
  const std::vector<std::string> docs = {sender, receiver};
  absl::StatusOr<std::string> merged = merge_timelines(names, docs);
  ASSERT_TRUE(merged.ok()) << merged.status();
  const json doc = parse(*merged);
  EXPECT_THAT(link_track_names(doc),
              ElementsAre("link 0->1 cable 0", "link 0->1 cable 0 slot 1"));
  EXPECT_THAT(weft::testing::nesting_violations(doc), IsEmpty());
}

TEST(TimelineLinks, AMalformedSlotNameIsRefused) {
  json doc = parse(timeline_json(
      std::vector<TimelineEvent>{flight(1, 0, 3500), flight(2, 1000, 4500)},
      {}));
  for (json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["args"].value("name", "") ==
                              "link 0->1 cable 0 slot 1") {
      e["args"]["name"] = "link 0->1 cable 0 slot 0";
    }
  }
  const std::vector<std::string> names = {"bad.json"};
  const std::vector<std::string> docs = {doc.dump()};
  absl::StatusOr<std::string> merged = merge_timelines(names, docs);
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(merged.status().message()),
              ::testing::HasSubstr("bad.json: link track \"link 0->1 cable 0 "
                                   "slot 0\" is not named"));
}

json slices(std::vector<std::vector<double>> ts_dur_tid) {
  json events = json::array();
  for (const auto& s : ts_dur_tid) {
    events.push_back({{"ph", "X"}, {"name", "s"}, {"pid", 2},
                      {"tid", static_cast<int>(s[2])}, {"ts", s[0]},
                      {"dur", s[1]}});
  }
  return {{"traceEvents", events}};
}

TEST(NestingCheck, APlantedOverlapIsFound) {
  // [0, 3.5] and [1, 4.5] on one track: the second starts inside the first
  // and ends after it.
  EXPECT_THAT(weft::testing::nesting_violations(
                  slices({{0, 3.5, 0}, {1, 3.5, 0}})),
              ElementsAre("pid 2 tid 0: \"s\" [1000, 4500] overlaps \"s\" "
                          "[0, 3500] without nesting"));
}

// 196.318 + 3.793 is 200.11100000000002 in doubles: the slices touch in
// whole nanoseconds, as the importer reads them.
TEST(NestingCheck, SlicesThatTouchInNanosecondsPass) {
  EXPECT_THAT(weft::testing::nesting_violations(
                  slices({{196.318, 3.793, 0}, {200.111, 3.793, 0}})),
              IsEmpty());
}

TEST(NestingCheck, NestedTouchingAndSeparateTracksPass) {
  EXPECT_THAT(weft::testing::nesting_violations(slices(
                  {{0, 4, 0}, {1, 2, 0}, {4, 1, 0}, {1, 3.5, 1}, {0, 3.5, 2}})),
              IsEmpty());
}

TEST(NestingCheck, BeginEndPairsCountToo) {
  json events = json::array();
  for (const auto& [ph, ts] : std::vector<std::pair<std::string, double>>{
           {"B", 0}, {"B", 1}, {"E", 2}, {"E", 3}}) {
    events.push_back({{"ph", ph}, {"name", "b"}, {"pid", 1}, {"tid", 0},
                      {"ts", ts}});
  }
  EXPECT_THAT(weft::testing::nesting_violations({{"traceEvents", events}}),
              IsEmpty());
  // An X slice across the end of a B/E pair.
  events.push_back({{"ph", "X"}, {"name", "x"}, {"pid", 1}, {"tid", 0},
                    {"ts", 2.5}, {"dur", 2}});
  EXPECT_THAT(weft::testing::nesting_violations({{"traceEvents", events}}),
              SizeIs(1));
}

}  // namespace
}  // namespace weft::timeline
