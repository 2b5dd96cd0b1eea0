// weft-sim trace-merge, run as the built binary: two ranks' timelines
// (written out here, as WEFT_TRACE lays them out: each file numbers its own
// link tracks from 0) become one file with each rank and each link
// direction once, every event on the track its file put it on; bad input
// exits 2 with one line.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// Rank 0 sent frame 1 to rank 1 (a slice on 0->1); rank 1 saw it arrive
// (an instant on 0->1) and sent one back (a slice on 1->0). Track numbers
// are each file's own: 0->1 is tid 0 in rank 0's file and tid 1 in rank
// 1's.
constexpr char kRank0[] = R"({"traceEvents":[
 {"ph":"M","name":"process_name","pid":1,"args":{"name":"ranks"}},
 {"ph":"M","name":"process_name","pid":2,"args":{"name":"links"}},
 {"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"rank 0"}},
 {"ph":"M","name":"thread_name","pid":2,"tid":0,
  "args":{"name":"link 0->1 cable 0"}},
 {"ph":"X","name":"frame 1 seq 0","cat":"sent","pid":2,"tid":0,"ts":1,"dur":2,
  "args":{}}]})";
constexpr char kRank1[] = R"({"traceEvents":[
 {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"rank 1"}},
 {"ph":"M","name":"thread_name","pid":2,"tid":0,
  "args":{"name":"link 1->0 cable 0"}},
 {"ph":"M","name":"thread_name","pid":2,"tid":1,
  "args":{"name":"link 0->1 cable 0"}},
 {"ph":"i","s":"t","name":"frame 1 seq 0","cat":"arrived","pid":2,"tid":1,
  "ts":4,"args":{}},
 {"ph":"X","name":"frame 1 seq 0","cat":"sent","pid":2,"tid":0,"ts":5,
  "dur":1,"args":{}}]})";

ToolResult merge(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, "trace-merge " + args);
}

TEST(WeftSimTraceMerge, JoinsRanksAndLinksOnce) {
  const std::string a = write_scratch("rank0.json", kRank0);
  const std::string b = write_scratch("rank1.json", kRank1);
  const ToolResult r = merge(a + " " + b);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  std::map<int64_t, std::string> ranks, links;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      (e["pid"] == 1 ? ranks : links)[e["tid"]] = e["args"]["name"];
    }
  }
  EXPECT_EQ(ranks,
            (std::map<int64_t, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  ASSERT_EQ(links.size(), 2u) << r.out;
  // Each event is on the link its own file named.
  std::map<std::string, std::string> on;  // category@ts -> link
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    on[std::string(e["cat"]) + "@" + std::to_string(e["ts"].get<int>())] =
        links.at(e["tid"]);
  }
  EXPECT_EQ(on["sent@1"], "link 0->1 cable 0");
  EXPECT_EQ(on["arrived@4"], "link 0->1 cable 0");
  EXPECT_EQ(on["sent@5"], "link 1->0 cable 0");
}

// The same rank's file twice would double its events: refused, naming
// both files.
TEST(WeftSimTraceMerge, ARanksFileGivenTwiceIsRefused) {
  const std::string a = write_scratch("rank0.json", kRank0);
  const std::string again = write_scratch("rank0-again.json", kRank0);
  const ToolResult r = merge(a + " " + again);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("rank 0's track is in both " + a + " and " + again));
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(WeftSimTraceMerge, BadInputExits2WithOneLine) {
  const ToolResult none = merge("");
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, HasSubstr("needs the timeline files"));
  const ToolResult missing = merge(scratch_path("missing.json"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("cannot be opened"));
  // A directory opens but cannot be read.
  const ToolResult directory = merge("/tmp");
  EXPECT_EQ(directory.code, 2);
  EXPECT_THAT(directory.err, HasSubstr("/tmp cannot be read"));
  const ToolResult bad = merge(write_scratch("bad.json", "{\"x\": 1}"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("is not a weft timeline"));
  EXPECT_EQ(lines_of(bad.err).size(), 1u);
}

// Files on different time bases (hardware ranks whose clocks' origins
// fall either side of a 10^15 ns step) are put on the earliest base: an
// event 1 us after base B + 10^15 ns lands at 10^12 + 1 us from B.
TEST(WeftSimTraceMerge, FilesOnDifferentTimeBasesShareTheEarliest) {
  const std::string early = write_scratch(
      "early.json",
      R"({"otherData":{"time_base_unix_ns":"1000000000000000000"},)"
      R"("traceEvents":[{"ph":"i","s":"t","name":"a","cat":"connect",)"
      R"("pid":1,"tid":0,"ts":2}]})");
  const std::string late = write_scratch(
      "late.json",
      R"({"otherData":{"time_base_unix_ns":"1001000000000000000"},)"
      R"("traceEvents":[{"ph":"i","s":"t","name":"b","cat":"connect",)"
      R"("pid":1,"tid":1,"ts":1}]})");
  const ToolResult r = merge(late + " " + early);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["otherData"]["time_base_unix_ns"], "1000000000000000000");
  std::map<std::string, double> ts;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M") ts[e["name"]] = e["ts"].get<double>();
  }
  EXPECT_EQ(ts["a"], 2.0);
  EXPECT_EQ(ts["b"], 1e12 + 1.0);
  const ToolResult bad = merge(write_scratch(
      "badbase.json",
      R"({"otherData":{"time_base_unix_ns":"soon"},"traceEvents":[]})"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("time_base_unix_ns is not a time in ns"));
}

// A damaged file (an event that is not an object, a field of another type,
// a track without its name) is bad input like any other: one line, exit 2,
// never an abort.
TEST(WeftSimTraceMerge, DamagedEventsExit2WithOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"traceEvents":[1]})", "traceEvents[0] is not an object"},
      {R"({"traceEvents":[{"ph":"X","pid":"one"}]})",
       "traceEvents[0] has a \"pid\" that is not an integer"},
      {R"({"traceEvents":[{"ph":"X"},{"ph":7}]})",
       "traceEvents[1] has a \"ph\" that is not a string"},
      {R"({"traceEvents":[{"ph":"M","name":"thread_name","pid":2,"tid":0}]})",
       "traceEvents[0] names a track without args.name"},
      {R"({"traceEvents":[{"ph":"X","ts":"abc"}]})",
       "traceEvents[0] has a \"ts\" that is not a number"},
  };
  int k = 0;
  for (const auto& [text, what] : cases) {
    const ToolResult r =
        merge(write_scratch(absl::StrCat("damaged", k++, ".json"), text));
    EXPECT_EQ(r.code, 2) << text << r.err;
    EXPECT_THAT(r.err, HasSubstr(what)) << text;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace weft::testing
