// weft-sim's --json=FILE, run as the built binary: the file holds what the
// command printed. Each row of study and run is read back against the
// printed table cell by cell (the bandwidths null exactly where the table
// shows "-"), the counts against the footer, the hash against the trace
// hash line; sweep's cases against its tally, FAIL lines and replay lines.
// An unwritable path is bad input before anything runs.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

ToolResult sim(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, args);
}

// A number as the table prints it.
std::string cell(const Json& value) {
  if (value.is_null()) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f", value.get<double>());
  return text;
}

// The printed table's rows: the lines after the header that start with a
// topology name, up to the first that does not, each split at whitespace.
std::vector<std::vector<std::string>> table_rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  const std::vector<std::string> lines = lines_of(out);
  for (size_t i = 3; i < lines.size(); ++i) {
    const bool row =
        lines[i].rfind("mesh ", 0) == 0 || lines[i].rfind("ring ", 0) == 0;
    if (row) {
      rows.push_back(fields_of(lines[i]));
    } else if (!rows.empty()) {
      break;  // a hang's report, the summary: the table has ended
    }
  }
  return rows;
}

// The text after "<prefix>" on the first line that starts with it.
std::string line_after(const std::string& out, const std::string& prefix) {
  for (const std::string& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

void expect_row_matches(const Json& row, const std::vector<std::string>& f) {
  ASSERT_GE(f.size(), 12u);
  EXPECT_EQ(row["topology"], f[0]);
  EXPECT_EQ(row["op"], f[1]);
  EXPECT_EQ(std::to_string(row["bytes"].get<uint64_t>()), f[2]);
  EXPECT_EQ(row["dtype"], f[3]);
  EXPECT_EQ(row["algorithm"], f[4]);
  EXPECT_EQ(cell(row["time_us"]), f[5]);
  EXPECT_EQ(cell(row["algbw_gb_per_s"]), f[6]);
  EXPECT_EQ(cell(row["busbw_gb_per_s"]), f[7]);
  EXPECT_EQ(std::to_string(row["frames"].get<uint64_t>()), f[8]);
  EXPECT_EQ(std::to_string(row["faults_injected"].get<uint64_t>()), f[9]);
  EXPECT_EQ(std::to_string(row["detected"].get<uint64_t>()), f[10]);
  std::string outcome;
  for (size_t i = 11; i < f.size(); ++i) outcome += (i > 11 ? " " : "") + f[i];
  const Json& o = row["outcome"];
  EXPECT_EQ(o["summary"], outcome);
  EXPECT_EQ(outcome.rfind(o["verdict"].get<std::string>(), 0), 0u) << outcome;
  if (o["verdict"] == "typed error") {
    // "typed error (completion error: rank 3, peer 0)"
    const std::string place = o["cause"].get<std::string>() + ": rank " +
                              std::to_string(o["rank"].get<int>());
    EXPECT_NE(outcome.find(place), std::string::npos) << outcome;
  } else {
    EXPECT_TRUE(o["cause"].is_null()) << outcome;
  }
}

// "32 runs: 20 correct, 12 typed error, ..." against outcome_counts.
void expect_counts_match(const Json& counts, const std::string& out) {
  uint64_t total = 0;
  std::string listed;
  for (const auto& [verdict, n] : counts.items()) {
    total += n.get<uint64_t>();
    listed += (listed.empty() ? "" : ", ") + std::to_string(n.get<uint64_t>()) +
              " " + verdict;
  }
  EXPECT_THAT(out, ::testing::HasSubstr(std::to_string(total) +
                                        " runs: " + listed + "\n"));
}

TEST(WeftSimJson, StudyJsonHoldsThePrintedTable) {
  const std::string path = scratch_path("study.json");
  // Error completions give typed errors, so some bandwidths are "-".
  const ToolResult r =
      sim("--max_bytes=64K --error=0.002 --trace= --json=" + path);
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
  const Json doc = Json::parse(read_text(path));
  EXPECT_EQ(doc["format_version"], 2);
  EXPECT_EQ(doc["tool"], "weft-sim");
  EXPECT_EQ(doc["command"], "study");
  const auto rows = table_rows(r.out);
  ASSERT_EQ(doc["rows"].size(), rows.size());
  ASSERT_GT(rows.size(), 10u);
  bool saw_dash = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    expect_row_matches(doc["rows"][i], rows[i]);
    saw_dash |= doc["rows"][i]["algbw_gb_per_s"].is_null();
  }
  EXPECT_TRUE(saw_dash) << "no row shows \"-\"; raise --error";
  expect_counts_match(doc["outcome_counts"], r.out);
  EXPECT_EQ(doc["trace_hash"], line_after(r.out, "trace hash: "));
  EXPECT_EQ(doc["ranks"], 8);
}

TEST(WeftSimJson, RunJsonHoldsItsRowAndReproduceLine) {
  const std::string path = scratch_path("run.json");
  // A rank stalled past the time limit: the verdict "time limit", which is
  // not allowed but no defect either, so the run exits 5 (not 1) and
  // prints a reproduce line.
  const std::string plan =
      write_scratch("stall.txt", "stall rank=1 at_ns=0 for_ns=100000000000\n");
  const ToolResult r =
      sim("run --ranks=4 --bytes=64K --time_limit_ms=10 "
          "--faults=" +
          plan + " --json=" + path);
  EXPECT_EQ(r.code, 5) << r.out << r.err;
  const Json doc = Json::parse(read_text(path));
  EXPECT_EQ(doc["command"], "run");
  const auto rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  ASSERT_EQ(doc["rows"].size(), 1u);
  expect_row_matches(doc["rows"][0], rows[0]);
  EXPECT_EQ(doc["rows"][0]["outcome"]["verdict"], "time limit");
  EXPECT_EQ(doc["outcome_counts"]["time limit"], 1);
  EXPECT_EQ(doc["outcome_counts"]["hang"], 0);
  EXPECT_EQ(doc["trace_hash"], line_after(r.out, "trace hash: "));
  const std::string reproduce = line_after(r.out, "reproduce: ");
  ASSERT_FALSE(reproduce.empty()) << r.out;
  ASSERT_EQ(doc["reproduce"].size(), 1u);
  EXPECT_EQ(doc["reproduce"][0], reproduce);
}

// A path that is not UTF-8 (the reproduce line names the fault plan) is
// written with U+FFFD in its place: the file stays JSON, the tool does not
// abort.
TEST(WeftSimJson, ANameThatIsNotUtf8IsReplacedNotFatal) {
  const std::string path = scratch_path("latin1.json");
  const std::string plan = write_scratch(
      "stall\xff.txt", "stall rank=1 at_ns=0 for_ns=100000000000\n");
  const ToolResult r =
      sim("run --ranks=2 --bytes=4K --time_limit_ms=10 "
          "--faults=" +
          plan + " --json=" + path);
  EXPECT_EQ(r.code, 5) << r.out << r.err;  // the time limit
  const Json doc = Json::parse(read_text(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_text(path);
  ASSERT_EQ(doc["reproduce"].size(), 1u);
  EXPECT_THAT(doc["reproduce"][0].get<std::string>(),
              HasSubstr("stall\xef\xbf\xbd.txt"));
}

// The count in a sweep table row: "typed error    3   15.00%".
uint64_t table_count(const std::string& out, const std::string& name) {
  const std::string rest = line_after(out, name + " ");
  return std::stoull(fields_of(rest).at(0));
}

TEST(WeftSimJson, SweepJsonHoldsEverySeedAndTheTally) {
  const std::string path = scratch_path("sweep.json");
  const std::string out_dir = scratch_path("sweep-out");
  const ToolResult r =
      sim("sweep --seeds=20 --recovery=off --require-correct --out=" + out_dir +
          " --json=" + path);
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
  const Json doc = Json::parse(read_text(path));
  EXPECT_EQ(doc["command"], "sweep");
  EXPECT_EQ(doc["format_version"], 4);
  EXPECT_FALSE(doc.contains("sweep_version"));
  ASSERT_EQ(doc["cases"].size(), 20u);
  std::map<std::string, uint64_t> verdicts;
  std::vector<std::string> replays;
  uint64_t failed = 0;
  uint64_t registered = 0;  // operations on registered buffers
  for (size_t i = 0; i < doc["cases"].size(); ++i) {
    const Json& c = doc["cases"][i];
    EXPECT_EQ(c["seed"], 1 + i);
    EXPECT_GE(c["case"]["ranks"].get<int>(), 2);
    EXPECT_FALSE(c["case"]["ops"].empty());
    for (const Json& op : c["case"]["ops"]) {
      registered += op["registered"].get<bool>();
    }
    ++verdicts[c["outcome"]["verdict"].get<std::string>()];
    if (!c["failure"].is_null()) {
      ++failed;
      replays.push_back(c["replay"].get<std::string>());
      EXPECT_THAT(r.out, ::testing::HasSubstr(
                             "FAIL seed " + std::to_string(1 + i) + ": " +
                             c["failure"].get<std::string>() + "\n"));
    }
  }
  for (const auto& [verdict, n] : doc["outcome_counts"].items()) {
    EXPECT_EQ(n.get<uint64_t>(), verdicts[verdict]) << verdict;
    EXPECT_EQ(n.get<uint64_t>(), table_count(r.out, verdict)) << verdict;
  }
  EXPECT_EQ(doc["failed"], failed);
  EXPECT_EQ(line_after(r.out, "failed an oracle: "),
            std::to_string(failed) + " seeds");
  EXPECT_GT(failed, 0u) << "no failing seed: the replay lines go untested";
  EXPECT_GT(registered, 0u);
  std::vector<std::string> printed;
  for (const std::string& line : lines_of(r.out)) {
    if (line.rfind("  replay: ", 0) == 0) printed.push_back(line.substr(10));
  }
  EXPECT_EQ(printed, replays);
  EXPECT_EQ(doc["ranks_disagree"], table_count(r.out, "ranks disagree"));
  EXPECT_TRUE(doc["nondeterministic"].is_null());
  EXPECT_EQ(doc["trace_hash"], line_after(r.out, "trace hash: "));
}

TEST(WeftSimJson, UnwritablePathIsBadInputBeforeRunning) {
  for (const char* command : {"run", "study", "sweep --seeds=1"}) {
    expect_bad_input(WEFT_SIM_PATH, "weft-sim",
                     std::string(command) + " --json=/no/such/dir/r.json",
                     "--json=/no/such/dir/r.json");
    EXPECT_EQ(sim(std::string(command) + " --json=/no/such/dir/r.json").out,
              "");
    // A directory that exists but takes no new file, whoever runs it
    // (root passes access() there).
    expect_bad_input(WEFT_SIM_PATH, "weft-sim",
                     std::string(command) + " --json=/proc/weft-r.json",
                     "cannot write there");
  }
}

}  // namespace
}  // namespace weft::testing
