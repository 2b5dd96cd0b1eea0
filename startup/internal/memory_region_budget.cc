#include "startup/internal/memory_region_budget.h"

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "verbs/verbs_fabric.h"

namespace weft::startup::internal {

absl::StatusOr<size_t> parse_memory_region_budget(std::string_view text) {
  // Digits only (no sign, space or exponent), and few enough that the
  // value cannot overflow before the range check.
  constexpr size_t kMaxDigits = 9;
  size_t budget = 0;
  bool digits = !text.empty() && text.size() <= kMaxDigits;
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    if (digits) budget = budget * 10 + static_cast<size_t>(c - '0');
  }
  if (!digits || budget < 1 || budget > verbs::kMaxMemoryRegionBudget) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a number of memory regions from 1 to %u: set it to "
        "how many regions weft may keep registered on each RDMA device, "
        "its slabs included (Apple allows about 100 per device), or unset "
        "it for the default %u",
        kMemoryRegionBudgetEnv, text, verbs::kMaxMemoryRegionBudget,
        verbs::kDefaultMemoryRegionBudget));
  }
  return budget;
}

absl::StatusOr<size_t> read_memory_region_budget(const EnvLookup& getenv) {
  const char* text = getenv(kMemoryRegionBudgetEnv);
  if (text == nullptr) return verbs::kDefaultMemoryRegionBudget;
  return parse_memory_region_budget(text);
}

}  // namespace weft::startup::internal
