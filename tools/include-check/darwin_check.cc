// The Darwin portability check over the tree: which files a macOS build
// compiles, and what each of them uses.
#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/include-check/darwin_scan.h"

namespace weft::tools::include_check {
namespace {

bool is_library(const TargetRecord& target) {
  return target.type.size() > 8 &&
         target.type.compare(target.type.size() - 8, 8, "_LIBRARY") == 0;
}

// Whether every target of `unit` is a library macOS builds: then its public
// headers are compiled by its users on macOS, included in the tree or not.
bool is_darwin_library_unit(const Unit& unit) {
  for (const TargetRecord* target : unit.targets) {
    if (!is_library(*target) || target->linux_only) return false;
  }
  return true;
}

// The sources of the targets macOS builds, and the public headers of
// darwin library units. Private headers are reached through includes.
std::vector<std::string> darwin_roots(const SourceTree& tree, Report* report) {
  std::vector<std::string> roots;
  for (const TargetRecord& target : tree.manifest().targets) {
    if (target.linux_only) {
      report->notes.push_back("skipped " + target.name + " (" + target.home +
                              "/): WEFT_LINUX_ONLY");
      continue;
    }
    for (const std::string& source : target.sources) {
      std::filesystem::path path = std::filesystem::path(source).is_absolute()
                                       ? std::filesystem::path(source)
                                       : tree.absolute(target.home) / source;
      std::string file = tree.relative(path);
      if (!file.empty() && is_cpp_file(path)) roots.push_back(file);
    }
  }
  for (const Unit& unit : tree.units()) {
    if (!is_darwin_library_unit(unit)) continue;
    std::filesystem::path home(unit.home == "." ? "" : unit.home);
    for (const std::string& file : tree.files_in(unit)) {
      std::filesystem::path path(file);
      if (path.extension() == ".h" && path.parent_path() == home) {
        roots.push_back(file);
      }
    }
  }
  return roots;
}

}  // namespace

Report check_darwin(const SourceTree& tree) {
  Report report;
  std::vector<std::string> roots = darwin_roots(tree, &report);
  std::deque<std::string> pending(roots.begin(), roots.end());
  std::set<std::string> seen(roots.begin(), roots.end());
  while (!pending.empty()) {
    std::string file = pending.front();
    pending.pop_front();
    ++report.files_checked;
    std::string text;
    if (!read_text(tree.absolute(file), &text)) {
      report.errors.push_back({file, 0, "cannot be read"});
      continue;
    }
    DarwinScan scan = scan_for_darwin(text);
    for (const DarwinFinding& finding : scan.findings) {
      report.errors.push_back({file, finding.line, darwin_message(finding)});
    }
    for (const IncludeDirective& include : scan.live_includes) {
      ResolvedInclude resolved = tree.resolve(file, include);
      if (resolved.where == Where::kRepository &&
          seen.insert(resolved.path).second) {
        pending.push_back(resolved.path);
      }
    }
  }
  std::sort(report.errors.begin(), report.errors.end(),
            [](const Diagnostic& a, const Diagnostic& b) {
              return std::tie(a.file, a.line) < std::tie(b.file, b.line);
            });
  return report;
}

}  // namespace weft::tools::include_check
