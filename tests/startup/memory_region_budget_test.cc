// WEFT_MR_BUDGET's parsing: whole numbers of memory regions in 1..65536,
// anything else refused naming the variable, the text and the range.
#include "startup/internal/memory_region_budget.h"

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::startup::internal {
namespace {

using ::testing::HasSubstr;

TEST(MemoryRegionBudget, WholeNumbersInRange) {
  EXPECT_EQ(*parse_memory_region_budget("1"), 1u);
  EXPECT_EQ(*parse_memory_region_budget("12"), 12u);
  EXPECT_EQ(*parse_memory_region_budget("096"), 96u);
  EXPECT_EQ(*parse_memory_region_budget("65536"), 65536u);
}

TEST(MemoryRegionBudget, OtherTextNamesTheVariableValueAndRange) {
  for (const char* text : {"", "0", "65537", "-1", "+5", " 5", "5 ", "5.0",
                           "0x10", "ninety", "123456789012"}) {
    const absl::StatusOr<size_t> got = parse_memory_region_budget(text);
    ASSERT_FALSE(got.ok()) << "'" << text << "' gave " << *got;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr("WEFT_MR_BUDGET='" + std::string(text) +
                          "' is not a number of memory regions from 1 to "
                          "65536"));
  }
}

TEST(MemoryRegionBudget, UnsetIsTheDefault) {
  std::map<std::string, std::string> env;
  const EnvLookup getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(*read_memory_region_budget(getenv), 96u);
  env["WEFT_MR_BUDGET"] = "3";
  EXPECT_EQ(*read_memory_region_budget(getenv), 3u);
  env["WEFT_MR_BUDGET"] = "three";
  EXPECT_FALSE(read_memory_region_budget(getenv).ok());
}

}  // namespace
}  // namespace weft::startup::internal
