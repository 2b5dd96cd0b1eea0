#include "fabric/wc_status.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(WcStatus, NamesMatchVerbsWording) {
  EXPECT_EQ(wc_status_name(WcStatus::kSuccess), "success");
  EXPECT_EQ(wc_status_name(WcStatus::kLocLenErr), "local length error");
  EXPECT_EQ(wc_status_name(WcStatus::kWrFlushErr),
            "Work Request Flushed Error");
  EXPECT_EQ(wc_status_name(999), "unknown");
  EXPECT_EQ(wc_status_name(-1), "unknown");
}

TEST(WcStatus, SymbolsParseBack) {
  for (int32_t code = 0; code < kWcStatusCount; ++code) {
    const auto status = static_cast<WcStatus>(code);
    WcStatus back{};
    ASSERT_TRUE(parse_wc_status(wc_status_symbol(status), &back)) << code;
    EXPECT_EQ(back, status);
  }
  WcStatus s{};
  EXPECT_TRUE(parse_wc_status("loc_len_err", &s));
  EXPECT_EQ(s, WcStatus::kLocLenErr);
  EXPECT_FALSE(parse_wc_status("IBV_WC_NOPE", &s));
}

}  // namespace
}  // namespace weft
