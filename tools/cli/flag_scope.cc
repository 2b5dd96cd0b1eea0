#include "tools/cli/flag_scope.h"

#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"

namespace weft::tools::cli {
namespace {

// absl's help layout: the flag's first line indented 4, the lines it wraps
// onto 6, none longer than 80 columns.
constexpr size_t kHelpWidth = 80;
constexpr std::string_view kFirstIndent = "    ";
constexpr std::string_view kWrapIndent = "      ";

bool in_any(FlagSets sets, const absl::CommandLineFlag& flag) {
  for (const FlagSet* set : sets) {
    if (set->contains(flag)) return true;
  }
  return false;
}

// The set before `sets[index]` that lists `flag` first, or nullptr.
const FlagSet* listed_before(FlagSets sets, size_t index,
                             const absl::CommandLineFlag& flag) {
  for (size_t i = 0; i < index; ++i) {
    if (sets[i]->contains(flag)) return sets[i];
  }
  return nullptr;
}

}  // namespace

bool FlagSet::contains(const absl::CommandLineFlag& flag) const {
  for (const absl::CommandLineFlag* f : flags()) {
    if (f == &flag) return true;
  }
  return false;
}

FlagSet FlagSet::without(std::string_view name) const {
  FlagSet out = *this;
  out.size_ = 0;
  for (const absl::CommandLineFlag* f : flags()) {
    if (base::to_std(f->Name()) != name) out.flags_[out.size_++] = f;
  }
  return out;
}

std::string flag_name(const std::string& arg) {
  if (arg.rfind("--", 0) != 0) return "";
  const size_t eq = arg.find('=');
  std::string name =
      arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  if (absl::FindCommandLineFlag(name) == nullptr && name.rfind("no", 0) == 0) {
    name = name.substr(2);  // --nofoo for a boolean --foo
  }
  return name;
}

bool is_builtin_flag(std::string_view name) {
  constexpr std::string_view kBuiltin[] = {
      "help",     "helpfull",  "helpshort",  "helppackage",
      "helpon",   "helpmatch", "version",    "only_check_args",
      "flagfile", "fromenv",   "tryfromenv", "undefok"};
  for (std::string_view b : kBuiltin) {
    if (name == b) return true;
  }
  return false;
}

absl::Status check_flag_scope(std::span<const std::string> args,
                              const FlagScope& scope) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string name = flag_name(args[i]);
    if (name.empty()) continue;
    // Unknown names were refused before parsing; a flag in none of the
    // tool's sets is absl's own.
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr || !in_any(scope.all, *flag)) continue;
    if (in_any(scope.accepted, *flag)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        args[i], " is not a flag of ", base::to_absl(scope.program), " ",
        base::to_absl(scope.command), " (it belongs to another command; see ",
        base::to_absl(scope.program), " --help)"));
  }
  return absl::OkStatus();
}

bool wants_version(std::span<const std::string> args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--version" || args[i] == "-version") return true;
  }
  return false;
}

std::string version_line(std::string_view tool) {
#if defined(__clang__)
  const std::string compiler = absl::StrCat("clang ", __clang_version__);
#elif defined(__GNUC__)
  const std::string compiler = absl::StrCat("GCC ", __VERSION__);
#else
  const std::string compiler = "an unknown compiler";
#endif
  return absl::StrCat(base::to_absl(tool), " ", WEFT_VERSION, " (",
                      WEFT_BUILD_TYPE, " build, ", compiler, ")");
}

bool wants_help(std::span<const std::string> args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "--helpshort") return true;
  }
  return false;
}

std::string flag_help(const absl::CommandLineFlag& flag) {
  std::vector<std::string> words = {absl::StrCat("--", flag.Name())};
  for (absl::string_view w : absl::StrSplit(
           absl::StrCat("(", flag.Help(), ");"), ' ', absl::SkipEmpty())) {
    words.emplace_back(w);
  }
  const std::string value = flag.DefaultValue();
  words.push_back(absl::StrCat(
      "default: ",
      flag.IsOfType<std::string>() ? absl::StrCat("\"", value, "\"") : value,
      ";"));
  std::string out(kFirstIndent);
  size_t line = out.size();
  bool line_empty = true;
  for (const std::string& w : words) {
    if (!line_empty && line + 1 + w.size() > kHelpWidth) {
      absl::StrAppend(&out, "\n", base::to_absl(kWrapIndent));
      line = kWrapIndent.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++line;
    }
    out += w;
    line += w.size();
    line_empty = false;
  }
  return out + "\n";
}

std::string flags_help(FlagSets sets, std::span<const std::string> used_by) {
  std::string out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const FlagSet& set = *sets[i];
    absl::StrAppend(&out, out.empty() ? "" : "\n", "  ",
                    base::to_absl(set.name()),
                    " flags: ", base::to_absl(set.about()));
    if (i < used_by.size()) absl::StrAppend(&out, " (", used_by[i], ")");
    out += ":\n";
    for (const absl::CommandLineFlag* flag : set.flags()) {
      if (const FlagSet* first = listed_before(sets, i, *flag)) {
        absl::StrAppend(&out, base::to_absl(kFirstIndent), "--", flag->Name(),
                        " (see ", base::to_absl(first->name()), " flags)\n");
      } else {
        out += flag_help(*flag);
      }
    }
  }
  return out;
}

}  // namespace weft::tools::cli
