// Every JSON document weft's tools write speaks one vocabulary
// (docs/json.md): `format_version` first, then `tool`; a quantity's key ends
// in its unit (`_bytes`, `_ns`, `_us`, `_s`, `_gb_per_s`); no key of the
// names the tools used before (`version`, `sweep_version`, `algbw_gbs`,
// `size`, `minbytes`, `active_mtu`, ...). Each tool is run as the built
// binary and its whole document walked, key by key.
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using Json = nlohmann::ordered_json;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Why `key` breaks the vocabulary ("" when it does not).
std::string key_problem(const std::string& key) {
  static const char* const kRetired[] = {
      "version",  "sweep_version", "size",       "time",      "minbytes",
      "maxbytes", "stepbytes",     "stepfactor", "active_mtu"};
  for (const char* old : kRetired) {
    if (key == old) return "a key of the old vocabulary";
  }
  if (ends_with(key, "_gbs") || ends_with(key, "gbps"))
    return "bandwidth is written _gb_per_s";
  if (contains(key, "bw") && !ends_with(key, "_gb_per_s"))
    return "a bandwidth without _gb_per_s";
  if (contains(key, "bytes") && key != "bytes" && !ends_with(key, "_bytes"))
    return "bytes are written _bytes (or bytes alone)";
  for (const char* word : {"time", "latency", "duration"}) {
    if (contains(key, word) && !ends_with(key, "_ns") &&
        !ends_with(key, "_us") && !ends_with(key, "_s")) {
      return "a time without _ns, _us or _s";
    }
  }
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') return "not snake case";
  }
  return "";
}

// Every key of `j` and what lies under it, named by its path.
void collect_problems(const Json& j, const std::string& path,
                      std::vector<std::string>* problems) {
  if (j.is_array()) {
    for (const Json& item : j) collect_problems(item, path + "[]", problems);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    // Maps whose keys are data (verdicts, fault kinds), not names.
    const bool data_keys = key == "outcome_counts" || key == "faults_by_kind";
    if (const std::string why = key_problem(key); !why.empty()) {
      problems->push_back(path + "." + key + ": " + why);
    }
    if (!data_keys) collect_problems(value, path + "." + key, problems);
  }
}

// The shared head and every key of the document in `text`.
void expect_vocabulary(const std::string& text, const std::string& tool,
                       int format_version) {
  const Json doc = Json::parse(text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << text;
  ASSERT_TRUE(doc.is_object());
  ASSERT_GE(doc.size(), 2u);
  auto it = doc.items().begin();
  EXPECT_EQ(it.key(), "format_version") << "the first key";
  EXPECT_EQ(doc.value("format_version", -1), format_version);
  ++it;
  EXPECT_EQ(it.key(), "tool") << "the second key";
  EXPECT_EQ(doc.value("tool", ""), tool);
  std::vector<std::string> problems;
  collect_problems(doc, "", &problems);
  EXPECT_THAT(problems, ::testing::IsEmpty()) << text;
}

// The checker itself: the old names fail it, the new ones pass.
TEST(JsonVocabulary, TheOldNamesFailAndTheNewOnesPass) {
  for (const char* old :
       {"version", "sweep_version", "algbw_gbs", "average_busbw_gbs", "size",
        "time", "minbytes", "stepfactor", "active_mtu", "busbw"}) {
    EXPECT_NE(key_problem(old), "") << old;
  }
  for (const char* now :
       {"format_version", "algbw_gb_per_s", "average_busbw_gb_per_s", "bytes",
        "min_bytes", "step_factor", "active_mtu_bytes", "time_us",
        "deadline_ns", "max_frame_bytes", "frames", "clock"}) {
    EXPECT_EQ(key_problem(now), "") << now;
  }
}

TEST(JsonVocabulary, WeftSimStudyRunAndSweep) {
  const std::string study = scratch_path("study.json");
  ASSERT_EQ(run_tool(WEFT_SIM_PATH,
                     "study --ranks=2 --max_bytes=4K --trace= "
                     "--json=" +
                         study)
                .code,
            0);
  expect_vocabulary(read_text(study), "weft-sim", 2);
  const std::string run = scratch_path("run.json");
  ASSERT_EQ(
      run_tool(WEFT_SIM_PATH, "run --ranks=2 --bytes=4K --json=" + run).code,
      0);
  expect_vocabulary(read_text(run), "weft-sim", 2);
  const std::string sweep = scratch_path("sweep.json");
  const ToolResult r =
      run_tool(WEFT_SIM_PATH, "sweep --seeds=3 --out=" + scratch_path("out") +
                                  " --json=" + sweep);
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
  expect_vocabulary(read_text(sweep), "weft-sim", 4);
}

TEST(JsonVocabulary, WeftBench) {
  const std::string path = scratch_path("bench.json");
  ASSERT_EQ(run_tool(WEFT_BENCH_PATH,
                     "--op=all_reduce,all_gather -b 4K -e 8K -f 2 -w 0 -n 1 "
                     "--model --json=" +
                         path)
                .code,
            0);
  expect_vocabulary(read_text(path), "weft-bench", 2);
}

#ifdef WEFT_SIM_VERBS_PATH
TEST(JsonVocabulary, WeftDevices) {
  const ToolResult r =
      run_tool(WEFT_DEVICES_PATH, "--json",
               std::string("env -u WEFT_SIM_VERBS_RANKS WEFT_VERBS_LIBRARY='") +
                   WEFT_SIM_VERBS_PATH + "' ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  expect_vocabulary(r.out, "weft-devices", 2);
}

TEST(JsonVocabulary, WeftDevicesDoctor) {
  const ToolResult r =
      run_tool(WEFT_DEVICES_PATH, "doctor --json",
               std::string("env -u WEFT_SIM_VERBS_RANKS WEFT_VERBS_LIBRARY='") +
                   WEFT_SIM_VERBS_PATH + "' ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  expect_vocabulary(r.out, "weft-devices", 1);
}
#endif

}  // namespace
}  // namespace weft::testing
