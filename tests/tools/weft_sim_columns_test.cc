// weft-sim's table keeps its columns in line whatever the op: the longest
// op names (reduce_scatter/prod, reduce_scatter/max) fit the op column, so
// the bytes, dtype and outcome of their row sit under their headings.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

// The column where `word` ends in `line` (npos + size if absent).
size_t end_of(const std::string& line, const std::string& word) {
  return line.find(word) + word.size();
}

TEST(WeftSimTable, LongOpNamesKeepTheColumnsInLine) {
  for (const std::string redop : {"prod", "max"}) {
    const ToolResult r =
        run_tool(WEFT_SIM_PATH, "run --op=reduce_scatter --redop=" + redop +
                                    " --bytes=4096 --ranks=4");
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const std::vector<std::string> lines = lines_of(r.out);
    ASSERT_GE(lines.size(), 4u) << r.out;
    const std::string& header = lines[1];
    const std::string& row = lines[3];
    ASSERT_THAT(row, ::testing::StartsWith("mesh     reduce_scatter/" + redop))
        << r.out;
    // bytes is right-aligned, dtype and outcome left-aligned.
    EXPECT_EQ(end_of(row, " 4096"), end_of(header, " bytes")) << r.out;
    EXPECT_EQ(row.find("float32"), header.find("dtype")) << r.out;
    EXPECT_EQ(row.find("correct"), header.find("outcome")) << r.out;
  }
}

}  // namespace
}  // namespace weft::testing
