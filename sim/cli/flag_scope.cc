#include "sim/cli/flag_scope.h"

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/absl_compat.h"

namespace weft::sim::cli {

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

namespace {

bool defined_in(const absl::CommandLineFlag& flag,
                std::span<const std::string_view> files) {
  const std::string file = flag.Filename();
  for (std::string_view f : files) {
    if (absl::EndsWith(file, absl::StrCat("sim/cli/", to_absl(f)))) return true;
  }
  return false;
}

}  // namespace

absl::Status check_flag_scope(std::span<const std::string> args,
                              std::span<const std::string_view> files,
                              std::string_view command) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string name = flag_name(args[i]);
    if (name.empty()) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    // Unknown names were refused before parsing; absl's own flags live
    // outside sim/cli/.
    if (flag == nullptr || !absl::StrContains(flag->Filename(), "sim/cli/"))
      continue;
    if (defined_in(*flag, files)) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(args[i], " is not a flag of weft-sim ", to_absl(command),
                     " (it belongs to another command; see weft-sim --help)"));
  }
  return absl::OkStatus();
}

}  // namespace weft::sim::cli
