// The include-what-you-use check over the tree: every C++ file of every
// unit, with the includes of its own header counted as its own.
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tools/include-check/iwyu_scan.h"
#include "tools/include-check/source_text.h"

namespace weft::tools::include_check {
namespace {

// x.h (or x.hpp) beside a source file x.cc; "" for a header or when there is
// none.
std::string own_header(const SourceTree& tree, const std::string& file) {
  std::filesystem::path path(file);
  std::string extension = path.extension().string();
  if (extension == ".h" || extension == ".hpp") return "";
  for (const char* header_extension : {".h", ".hpp"}) {
    std::filesystem::path header = path;
    header.replace_extension(header_extension);
    std::error_code error;
    if (std::filesystem::is_regular_file(tree.absolute(header.string()),
                                         error)) {
      return header.generic_string();
    }
  }
  return "";
}

void add_includes(std::string_view text, std::vector<std::string>* names) {
  for (const IncludeDirective& include : includes_of(text)) {
    names->push_back(include.name);
  }
}

void check_file(const SourceTree& tree, const std::string& file,
                Report* report) {
  ++report->files_checked;
  std::string text;
  if (!read_text(tree.absolute(file), &text)) {
    report->errors.push_back({file, 0, "cannot be read"});
    return;
  }
  std::vector<std::string> included;
  add_includes(text, &included);
  std::string header = own_header(tree, file);
  std::string header_text;
  if (!header.empty() && read_text(tree.absolute(header), &header_text)) {
    add_includes(header_text, &included);
  }
  for (const IwyuFinding& finding : scan_for_iwyu(text, included)) {
    report->errors.push_back({file, finding.line, iwyu_message(finding)});
  }
}

}  // namespace

Report check_include_what_you_use(const SourceTree& tree) {
  Report report;
  for (const std::string& folder : tree.unowned_folders()) {
    report.notes.push_back("skipped " + folder +
                           "/: no target in this configuration");
  }
  for (const Unit& unit : tree.units()) {
    for (const std::string& file : tree.files_in(unit)) {
      check_file(tree, file, &report);
    }
  }
  return report;
}

}  // namespace weft::tools::include_check
