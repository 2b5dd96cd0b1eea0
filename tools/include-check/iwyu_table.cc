// The table of names and headers, and the other spellings of a header.
#include "tools/include-check/iwyu_table.h"

#include <array>
#include <cctype>
#include <map>
#include <utility>

namespace weft::tools::include_check {
namespace {

struct Entry {
  std::string_view qualifier;
  std::string_view name;
  std::string_view header;
};

constexpr std::string_view kStrCat = "absl/strings/str_cat.h";
constexpr std::string_view kStrFormat = "absl/strings/str_format.h";
constexpr std::string_view kMatch = "absl/strings/match.h";
constexpr std::string_view kNumbers = "absl/strings/numbers.h";
constexpr std::string_view kStrip = "absl/strings/strip.h";
constexpr std::string_view kAscii = "absl/strings/ascii.h";
constexpr std::string_view kStatus = "absl/status/status.h";
constexpr std::string_view kFlag = "absl/flags/flag.h";
constexpr std::string_view kTime = "absl/time/time.h";

// StripAsciiWhitespace and friends are declared in ascii.h (strip.h
// includes it today, by accident).
constexpr std::array kAbsl = std::to_array<Entry>({
    {"absl", "StrCat", kStrCat},
    {"absl", "StrAppend", kStrCat},
    {"absl", "StrFormat", kStrFormat},
    {"absl", "StrAppendFormat", kStrFormat},
    {"absl", "PrintF", kStrFormat},
    {"absl", "FPrintF", kStrFormat},
    {"absl", "SNPrintF", kStrFormat},
    {"absl", "StrJoin", "absl/strings/str_join.h"},
    {"absl", "StrSplit", "absl/strings/str_split.h"},
    {"absl", "StartsWith", kMatch},
    {"absl", "EndsWith", kMatch},
    {"absl", "StrContains", kMatch},
    {"absl", "EqualsIgnoreCase", kMatch},
    {"absl", "SimpleAtoi", kNumbers},
    {"absl", "SimpleAtod", kNumbers},
    {"absl", "SimpleAtof", kNumbers},
    {"absl", "SimpleAtob", kNumbers},
    {"absl", "StripAsciiWhitespace", kAscii},
    {"absl", "StripLeadingAsciiWhitespace", kAscii},
    {"absl", "StripTrailingAsciiWhitespace", kAscii},
    {"absl", "RemoveExtraAsciiWhitespace", kAscii},
    {"absl", "ConsumePrefix", kStrip},
    {"absl", "ConsumeSuffix", kStrip},
    {"absl", "StripPrefix", kStrip},
    {"absl", "StripSuffix", kStrip},
    {"absl", "AsciiStrToLower", kAscii},
    {"absl", "AsciiStrToUpper", kAscii},
    {"absl", "StrReplaceAll", "absl/strings/str_replace.h"},
    {"absl", "flat_hash_map", "absl/container/flat_hash_map.h"},
    {"absl", "flat_hash_set", "absl/container/flat_hash_set.h"},
    {"absl", "StatusOr", "absl/status/statusor.h"},
    {"absl", "Status", kStatus},
    {"absl", "OkStatus", kStatus},
    {"absl", "StatusCode", kStatus},
    {"absl", "string_view", "absl/strings/string_view.h"},
    {"absl", "Span", "absl/types/span.h"},
    {"absl", "GetFlag", kFlag},
    {"absl", "SetFlag", kFlag},
    {"", "ABSL_FLAG", kFlag},
    {"absl", "Mutex", "absl/synchronization/mutex.h"},
    {"absl", "Time", kTime},
    {"absl", "Duration", kTime},
    {"absl", "Now", "absl/time/clock.h"},
});

// std::move is not here: which header it needs depends on its arguments.
// std::errc is declared in <system_error> (<cerrno> has only the macros).
constexpr std::array kStd = std::to_array<Entry>({
    {"std", "string", "string"},
    {"std", "string_view", "string_view"},
    {"std", "vector", "vector"},
    {"std", "unique_ptr", "memory"},
    {"std", "make_unique", "memory"},
    {"std", "shared_ptr", "memory"},
    {"std", "make_shared", "memory"},
    {"std", "optional", "optional"},
    {"std", "nullopt", "optional"},
    {"std", "span", "span"},
    {"std", "function", "functional"},
    {"std", "array", "array"},
    {"std", "map", "map"},
    {"std", "set", "set"},
    {"std", "unordered_map", "unordered_map"},
    {"std", "pair", "utility"},
    {"std", "forward", "utility"},
    {"std", "swap", "utility"},
    {"std", "exchange", "utility"},
    {"std", "min", "algorithm"},
    {"std", "max", "algorithm"},
    {"std", "sort", "algorithm"},
    {"std", "find", "algorithm"},
    {"std", "fill", "algorithm"},
    {"std", "copy", "algorithm"},
    {"std", "clamp", "algorithm"},
    {"std", "reverse", "algorithm"},
    {"std", "any_of", "algorithm"},
    {"std", "all_of", "algorithm"},
    {"std", "lower_bound", "algorithm"},
    {"std", "memcpy", "cstring"},
    {"std", "memset", "cstring"},
    {"std", "memcmp", "cstring"},
    {"std", "strlen", "cstring"},
    {"std", "strcmp", "cstring"},
    {"std", "atomic", "atomic"},
    {"std", "thread", "thread"},
    {"std", "mutex", "mutex"},
    {"std", "lock_guard", "mutex"},
    {"std", "unique_lock", "mutex"},
    {"std", "scoped_lock", "mutex"},
    {"std", "chrono", "chrono"},
    {"std", "ostream", "ostream"},
    {"std", "ifstream", "fstream"},
    {"std", "ofstream", "fstream"},
    {"std", "ostringstream", "sstream"},
    {"std", "istringstream", "sstream"},
    {"std", "stringstream", "sstream"},
    {"std", "deque", "deque"},
    {"std", "variant", "variant"},
    {"std", "visit", "variant"},
    {"std", "tuple", "tuple"},
    {"std", "tie", "tuple"},
    {"std", "numeric_limits", "limits"},
    {"std", "bit_cast", "bit"},
    {"std", "popcount", "bit"},
    {"std", "countl_zero", "bit"},
    {"std", "countr_zero", "bit"},
    {"std", "has_single_bit", "bit"},
    {"std", "bit_ceil", "bit"},
    {"std", "errc", "system_error"},
    {"", "errno", "cerrno"},
    {"std", "abort", "cstdlib"},
    {"std", "exit", "cstdlib"},
    {"std", "getenv", "cstdlib"},
    {"std", "aligned_alloc", "cstdlib"},
    {"std", "free", "cstdlib"},
    {"std", "malloc", "cstdlib"},
    {"std", "printf", "cstdio"},
    {"std", "fprintf", "cstdio"},
    {"std", "fputs", "cstdio"},
    {"std", "snprintf", "cstdio"},
    {"std", "FILE", "cstdio"},
    {"std", "accumulate", "numeric"},
    {"std", "iota", "numeric"},
    {"std", "byte", "cstddef"},
    {"std", "ptrdiff_t", "cstddef"},
    {"", "offsetof", "cstddef"},
});

// Other headers that provide what a header declares: C forms, and headers
// the standard makes declare it too.
constexpr std::array kAlternatives =
    std::to_array<std::pair<std::string_view, std::string_view>>({
        {"cstdint", "stdint.h"},
        {"cstdint", "cinttypes"},
        {"cstdint", "inttypes.h"},
        {"cstring", "string.h"},
        {"cstdlib", "stdlib.h"},
        {"cstdio", "stdio.h"},
        {"cerrno", "errno.h"},
        {"cstddef", "stddef.h"},
        {"ostream", "iostream"},
        {"ostream", "iosfwd"},
    });

using Key = std::pair<std::string_view, std::string_view>;

const std::map<Key, std::string_view>& table() {
  static const auto* entries = [] {
    auto* map = new std::map<Key, std::string_view>;
    for (const Entry& entry : kAbsl) {
      map->emplace(Key{entry.qualifier, entry.name}, entry.header);
    }
    for (const Entry& entry : kStd) {
      map->emplace(Key{entry.qualifier, entry.name}, entry.header);
    }
    return map;
  }();
  return *entries;
}

bool is_upper(char c) {
  return std::isupper(static_cast<unsigned char>(c)) != 0;
}

// int8_t ... uint64_t, intptr_t, intmax_t, int_fast16_t, uint_least8_t, ...
bool is_fixed_int_type(std::string_view name) {
  if (name.size() < 6 || !name.ends_with("_t")) return false;
  if (name.front() == 'u') name.remove_prefix(1);
  if (!name.starts_with("int")) return false;
  name = name.substr(3, name.size() - 5);
  if (name == "ptr" || name == "max") return true;
  if (name.starts_with("_fast")) name.remove_prefix(5);
  if (name.starts_with("_least")) name.remove_prefix(6);
  return name == "8" || name == "16" || name == "32" || name == "64";
}

bool is_bare(std::string_view qualifier) {
  return qualifier.empty() || qualifier == "::";
}

// Names matched by shape rather than listed one by one.
std::string_view header_by_shape(const NameUse& use) {
  if (is_fixed_int_type(use.name) &&
      (is_bare(use.qualifier) || use.qualifier == "std")) {
    return "cstdint";
  }
  if (use.qualifier == "std" && use.name == "move") {
    if (use.arguments == 1) return "utility";
    if (use.arguments >= 3) return "algorithm";
    return "";
  }
  if (use.qualifier != "absl") return "";
  if (use.name.starts_with("ascii_")) return kAscii;
  if (use.name.size() > 5 && use.name.ends_with("Error") &&
      is_upper(use.name.front())) {
    return kStatus;
  }
  if (use.call && use.name.size() > 2 && use.name.starts_with("Is") &&
      is_upper(use.name[2])) {
    return kStatus;
  }
  return "";
}

}  // namespace

std::string_view header_for(const NameUse& use) {
  std::string_view qualifier = use.qualifier == "::" ? "" : use.qualifier;
  auto it = table().find(Key{qualifier, use.name});
  if (it != table().end()) return it->second;
  return header_by_shape(use);
}

bool provides(std::string_view included, std::string_view header) {
  if (included == header) return true;
  for (const auto& [wanted, other] : kAlternatives) {
    if (wanted == header && other == included) return true;
  }
  return false;
}

std::string spelled_include(std::string_view header) {
  if (header.find('/') != std::string_view::npos) {
    return "\"" + std::string(header) + "\"";
  }
  return "<" + std::string(header) + ">";
}

std::string spelled_name(const NameUse& use) {
  if (use.qualifier == "std" || use.qualifier == "absl") {
    return std::string(use.qualifier) + "::" + std::string(use.name);
  }
  return std::string(use.name);
}

}  // namespace weft::tools::include_check
