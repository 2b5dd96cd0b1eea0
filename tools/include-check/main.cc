// weft-include-check: holds the source tree to the include graph CMake
// declares (cmake/WeftIncludeGraph.cmake writes it to the build tree), or,
// with --darwin, to what a macOS build can compile, with --iwyu, to
// including the standard and Abseil headers whose names each file uses, or,
// with --namespaces, to each folder's own namespaces and no Abseil internals.
//
//   weft-include-check --manifest <build>/weft_include_graph.txt
//                      [--darwin | --iwyu | --namespaces]
//
// Prints one line per problem (file:line: what is wrong and what to do).
// Exit code: 0 clean, 1 violations, 2 bad input (no or malformed manifest).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "tools/include-check/darwin_scan.h"
#include "tools/include-check/include_rules.h"
#include "tools/include-check/iwyu_scan.h"
#include "tools/include-check/manifest.h"
#include "tools/include-check/namespace_rules.h"
#include "tools/include-check/report.h"
#include "tools/include-check/source_tree.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitViolations = 1;
constexpr int kExitBadInput = 2;

int bad_input(const std::string& what) {
  std::fprintf(stderr, "weft-include-check: %s\n", what.c_str());
  return kExitBadInput;
}

int print(const weft::tools::include_check::Report& report, const char* check) {
  for (const std::string& note : report.notes) {
    std::printf("note: %s\n", note.c_str());
  }
  for (const auto& warning : report.warnings) {
    std::printf("warning: %s\n", format(warning).c_str());
  }
  for (const auto& error : report.errors) {
    std::printf("%s\n", format(error).c_str());
  }
  std::printf(
      "weft-include-check (%s): %d files, %zu violations, %zu warnings\n",
      check, report.files_checked, report.errors.size(),
      report.warnings.size());
  return report.errors.empty() ? kExitOk : kExitViolations;
}

}  // namespace

int main(int argc, char** argv) {
  std::string manifest_path;
  std::string_view mode;  // "" (the declared graph) or the check's flag
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--darwin" || arg == "--iwyu" || arg == "--namespaces") {
      if (!mode.empty() && mode != arg) {
        return bad_input(std::string(mode) + " and " + std::string(arg) +
                         " are separate checks: run one at a time");
      }
      mode = arg;
    } else if (arg == "--manifest" && i + 1 < argc) {
      manifest_path = argv[++i];
    } else {
      return bad_input("unknown argument \"" + std::string(arg) +
                       "\"; usage: weft-include-check --manifest "
                       "<build>/weft_include_graph.txt [--darwin | --iwyu | "
                       "--namespaces]");
    }
  }
  if (manifest_path.empty()) {
    return bad_input("--manifest <build>/weft_include_graph.txt is required");
  }
  namespace check = weft::tools::include_check;
  std::string error;
  std::optional<check::Manifest> manifest =
      check::read_manifest(manifest_path, &error);
  if (!manifest) return bad_input(error);
  std::error_code missing;
  if (!std::filesystem::is_directory(manifest->root, missing)) {
    return bad_input(manifest_path + ": root " + manifest->root.string() +
                     " is not a directory");
  }
  check::SourceTree tree(std::move(*manifest));
  if (mode == "--darwin") return print(check::check_darwin(tree), "darwin");
  if (mode == "--iwyu") {
    return print(check::check_include_what_you_use(tree),
                 "include what you use");
  }
  if (mode == "--namespaces") {
    return print(check::check_namespaces(tree), "namespaces");
  }
  return print(check::check_declared_graph(tree), "declared graph");
}
