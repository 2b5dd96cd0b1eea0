// The source tree seen through the manifest: home-folder units (a folder
// and the targets declared in it), the C++ files of each, and where an
// #include lands (a repository file, a generated file, a system header, or
// nothing).
#ifndef WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TREE_H_
#define WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TREE_H_

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tools/include-check/manifest.h"
#include "tools/include-check/source_text.h"

namespace weft::tools::include_check {

// A home folder and every target whose SOURCE_DIR it is. Its files are those
// under the folder that are not under another unit's folder.
struct Unit {
  std::string home;  // relative to the root; "." for the root itself
  std::vector<const TargetRecord*> targets;
};

enum class Where { kRepository, kGenerated, kSystem, kMissing };

struct ResolvedInclude {
  Where where = Where::kMissing;
  std::string path;  // relative to the root, for kRepository
};

class SourceTree {
 public:
  explicit SourceTree(Manifest manifest);
  SourceTree(const SourceTree&) = delete;
  SourceTree& operator=(const SourceTree&) = delete;

  const Manifest& manifest() const { return manifest_; }
  const std::vector<Unit>& units() const { return units_; }

  // The unit whose folder holds `file` (relative to the root) most closely;
  // nullptr when no unit does.
  const Unit* unit_of(std::string_view file) const;

  // The project target called `name` (an ALIAS is followed); nullptr for
  // anything else (imported targets, plain libraries, link flags).
  const TargetRecord* find_target(std::string_view name) const;

  // How to spell `target` in target_link_libraries: its alias if it has one.
  std::string link_name(const TargetRecord& target) const;

  // The C++ files of `unit`, relative to the root, sorted.
  std::vector<std::string> files_in(const Unit& unit) const;

  // Top-most folders holding C++ files that no unit covers, sorted.
  std::vector<std::string> unowned_folders() const;

  // Whether `file` (relative to the root) is a source of some target.
  bool is_source(const std::string& file) const;

  // Quoted includes: the root, then the includer's folder, then generated
  // files and the include path. Angled: the root, else a system header.
  ResolvedInclude resolve(std::string_view includer,
                          const IncludeDirective& include) const;

  std::filesystem::path absolute(std::string_view file) const {
    return manifest_.root / file;
  }

  // `path` relative to the root, or "" when it is outside the root.
  std::string relative(const std::filesystem::path& path) const;

 private:
  bool is_skipped_folder(const std::filesystem::path& folder) const;

  Manifest manifest_;
  std::vector<Unit> units_;
  std::map<std::string, size_t, std::less<>> unit_by_home_;
  std::map<std::string, const TargetRecord*, std::less<>> targets_;
  std::set<std::string> sources_;
  std::vector<std::filesystem::path> include_path_;  // outside the root
};

// Whether `path` names a C++ source or header (.cc, .h, .cpp, ...).
bool is_cpp_file(const std::filesystem::path& path);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_SOURCE_TREE_H_
