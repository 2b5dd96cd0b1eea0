// Three-valued #if evaluation under the Darwin model: what the model fixes
// is true or false, anything else is unknown.
#include "tools/include-check/pp_condition.h"

#include <string_view>

#include "gtest/gtest.h"
#include "tools/include-check/darwin_scan.h"

namespace weft::tools::include_check {
namespace {

Truth darwin(std::string_view condition) {
  return evaluate_condition(condition, darwin_model());
}

TEST(PpCondition, TheModelFixesPlatformMacros) {
  EXPECT_EQ(darwin("defined(__APPLE__) && !defined(__linux__)"), Truth::kTrue);
  EXPECT_EQ(darwin("defined __MACH__"), Truth::kTrue);
  EXPECT_EQ(darwin("__APPLE__ == 1"), Truth::kTrue);
  EXPECT_EQ(darwin("__linux__"), Truth::kFalse);
  EXPECT_EQ(
      darwin("__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 30)"),
      Truth::kFalse);
  EXPECT_EQ(darwin("defined(MADV_HUGEPAGE)"), Truth::kFalse);
  EXPECT_EQ(darwin("__has_include(<linux/if.h>)"), Truth::kFalse);
}

TEST(PpCondition, AKnownSideDecidesAndOrOr) {
  EXPECT_EQ(darwin("defined(__linux__) && WEFT_FAST"), Truth::kFalse);
  EXPECT_EQ(darwin("WEFT_FAST || defined(__APPLE__)"), Truth::kTrue);
  EXPECT_EQ(darwin("WEFT_FAST || defined(__linux__)"), Truth::kUnknown);
  EXPECT_EQ(darwin("WEFT_FAST && defined(__APPLE__)"), Truth::kUnknown);
}

TEST(PpCondition, WhatTheModelDoesNotFixIsUnknown) {
  EXPECT_EQ(darwin("defined(__x86_64__)"), Truth::kUnknown);
  EXPECT_EQ(darwin("__has_include(<sys/mman.h>)"), Truth::kUnknown);
  EXPECT_EQ(darwin("__has_builtin(__builtin_expect)"), Truth::kUnknown);
  EXPECT_EQ(darwin("(1 +"), Truth::kUnknown);  // unparsable
}

TEST(PpCondition, ArithmeticAndLiterals) {
  EXPECT_EQ(darwin("0"), Truth::kFalse);
  EXPECT_EQ(darwin("0x10 >> 4 == 1"), Truth::kTrue);
  EXPECT_EQ(darwin("1 ? 0 : 2"), Truth::kFalse);
  EXPECT_EQ(darwin("202002L <= 201703L"), Truth::kFalse);
  EXPECT_EQ(darwin("!(2 * 3 - 6)"), Truth::kTrue);
  EXPECT_EQ(darwin("1 / 0"), Truth::kUnknown);
}

}  // namespace
}  // namespace weft::tools::include_check
