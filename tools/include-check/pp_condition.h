// Evaluation of #if / #elif conditions under a partial model of the
// platform's macros: a condition is true, false, or unknown when it depends
// on something the model does not fix (an unknown macro, __x86_64__, a
// __has_include of an ordinary header). Unknown keeps both branches.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_PP_CONDITION_H_
#define WEFT_TOOLS_INCLUDE_CHECK_PP_CONDITION_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace weft::tools::include_check {

enum class Truth { kFalse, kTrue, kUnknown };

struct MacroModel {
  // Macros known to be defined, with their values.
  std::map<std::string, long long, std::less<>> defined;
  // Whether a macro is known to be undefined.
  std::function<bool(std::string_view)> undefined;
  // Whether __has_include(<header>) is known to be false.
  std::function<bool(std::string_view)> header_absent;
};

// The truth of `condition` (the text after #if or #elif; comments and
// literals already blanked) under `model`. Unparsable text is kUnknown.
Truth evaluate_condition(std::string_view condition, const MacroModel& model);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_PP_CONDITION_H_
