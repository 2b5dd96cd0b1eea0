// The check of a declared file against a wiring: each kind of wrong entry
// gets its line, and the corrected file is the wiring's matrix.
#include "wiring/check.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wiring/wiring.h"

namespace weft::wiring {
namespace {

using ::testing::HasSubstr;

// Three ranks, each pair joined by one cable, on Mac-like names:
// 0 rdma_en2 - 1 rdma_en2, 0 rdma_en3 - 2 rdma_en2, 1 rdma_en3 - 2 rdma_en3.
Wiring triangle() {
  absl::StatusOr<Wiring> w =
      Wiring::create({{"rdma_en2", "rdma_en3"},
                      {"rdma_en2", "rdma_en3"},
                      {"rdma_en2", "rdma_en3"}},
                     {{{0, "rdma_en2"}, {1, "rdma_en2"}},
                      {{0, "rdma_en3"}, {2, "rdma_en2"}},
                      {{1, "rdma_en3"}, {2, "rdma_en3"}}});
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

Topology file(const std::string& json) {
  absl::StatusOr<Topology> t = Topology::parse_json(json);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

std::vector<Problem> problems(const CheckReport& r) {
  std::vector<Problem> out;
  for (const Finding& f : r.findings) out.push_back(f.problem);
  return out;
}

TEST(CheckTest, TheRightFileHasNoFinding) {
  const Wiring w = triangle();
  const CheckReport r = check_wiring(w.topology(), w, "devices.json");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.corrected.to_json(), w.topology().to_json());
}

TEST(CheckTest, ACrossedCableNamesWhereTheDeviceReaches) {
  // Rank 0's two devices swapped: the file sends rdma_en3 to rank 1.
  const CheckReport r = check_wiring(file(R"([[null, "rdma_en3", "rdma_en2"],
               ["rdma_en2", null, "rdma_en3"],
               ["rdma_en2", "rdma_en3", null]])"),
                                     triangle(), "devices.json");
  ASSERT_EQ(problems(r),
            (std::vector<Problem>{Problem::kCrossed, Problem::kCrossed}));
  EXPECT_THAT(r.findings[0].text,
              HasSubstr("rank 0's rdma_en3 reaches rank 2, not rank 1 as "
                        "devices.json says"));
  EXPECT_THAT(r.findings[1].text,
              HasSubstr("rank 0's rdma_en2 reaches rank 1, not rank 2"));
  EXPECT_EQ(r.corrected.devices(0, 1), std::vector<std::string>{"rdma_en2"});
}

TEST(CheckTest, ADeclaredCableNobodyAnswersIsOneLine) {
  // Only 0-1 is cabled; the file also declares 1-2 (rdma_en3 both ends).
  absl::StatusOr<Wiring> w =
      Wiring::create({{"rdma_en2"}, {"rdma_en2", "rdma_en3"}, {"rdma_en3"}},
                     {{{0, "rdma_en2"}, {1, "rdma_en2"}}});
  ASSERT_TRUE(w.ok());
  const CheckReport r = check_wiring(file(R"([[null, "rdma_en2", null],
               ["rdma_en2", null, "rdma_en3"],
               [null, "rdma_en3", null]])"),
                                     *w, "devices.json");
  ASSERT_EQ(problems(r), std::vector<Problem>{Problem::kNoCable});
  EXPECT_THAT(r.findings[0].text,
              HasSubstr("rank 1 -> rank 2 is declared but no cable answers"));
}

TEST(CheckTest, DifferentCableCountsComeFromTheFileCheck) {
  absl::StatusOr<Wiring> w = Wiring::create(
      {{"rdma_en2", "rdma_en3"}, {}, {"rdma_en2", "rdma_en3"}},
      {{{0, "rdma_en2"}, {2, "rdma_en2"}}, {{0, "rdma_en3"}, {2, "rdma_en3"}}});
  ASSERT_TRUE(w.ok());
  const CheckReport r = check_wiring(file(R"([[null, null, "rdma_en2"],
               [null, null, null],
               [["rdma_en2", "rdma_en3"], null, null]])"),
                                     *w, "devices.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings[0].problem, Problem::kShape);
  EXPECT_THAT(r.findings[0].text,
              HasSubstr("rank 0 gives rank 2 one cable (cell [0][2]: "
                        "rdma_en2) but rank 2 gives rank 0 two"));
}

TEST(CheckTest, OneWayWrongEndUnknownAndUndeclared) {
  // 0 a - 1 a works one way (0 -> 1); 0 b - 1 c; 0 d - 1 e is not listed.
  absl::StatusOr<Wiring> w =
      Wiring::create({{"a", "b", "d"}, {"a", "b", "c", "e"}},
                     {{{0, "a"}, {1, "a"}, true, false},
                      {{0, "b"}, {1, "c"}},
                      {{0, "d"}, {1, "e"}}});
  ASSERT_TRUE(w.ok());
  const CheckReport r = check_wiring(
      file(R"([[null, ["a", "b", "zz"]], [["a", "b", "c"], null]])"), *w,
      "f.json");
  ASSERT_EQ(problems(r),
            (std::vector<Problem>{Problem::kOneWay, Problem::kWrongEnd,
                                  Problem::kNoSuchDevice, Problem::kNoCable,
                                  Problem::kWrongEnd, Problem::kUndeclared}));
  EXPECT_THAT(r.findings[0].text,
              HasSubstr("frames cross from rank 0 to rank 1 only"));
  EXPECT_THAT(r.findings[1].text,
              HasSubstr("rank 0's b reaches rank 1's c, but f.json pairs it "
                        "with rank 1's b"));
  EXPECT_THAT(r.findings[2].text, HasSubstr("rank 0 has no device zz"));
  EXPECT_THAT(r.findings[5].text,
              HasSubstr("rank 0's d reaches rank 1's e, which f.json does "
                        "not list"));
  EXPECT_EQ(r.corrected.devices(0, 1), (std::vector<std::string>{"b", "d"}));
}

TEST(CheckTest, ReportStatusNamesTheFirstFindingAndTheCount) {
  const CheckReport r = check_wiring(file(R"([[null, "rdma_en3", "rdma_en2"],
               ["rdma_en2", null, "rdma_en3"],
               ["rdma_en2", "rdma_en3", null]])"),
                                     triangle(), "devices.json");
  const absl::Status s = report_status(r, "devices.json");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("rank 0's rdma_en3 reaches rank 2"));
  EXPECT_THAT(s.message(), HasSubstr("(and 1 more)"));
}

}  // namespace
}  // namespace weft::wiring
