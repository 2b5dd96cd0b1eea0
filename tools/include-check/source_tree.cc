// Units, file listing and include resolution over the manifest's tree.
#include "tools/include-check/source_tree.h"

#include <algorithm>
#include <system_error>
#include <utility>

namespace weft::tools::include_check {
namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// "a/b/c.h" is under "a" and "a/b"; everything is under ".".
bool is_under(std::string_view file, std::string_view folder) {
  if (folder == ".") return true;
  return file.size() > folder.size() &&
         file.substr(0, folder.size()) == folder && file[folder.size()] == '/';
}

}  // namespace

bool is_cpp_file(const fs::path& path) {
  static const std::set<std::string> kExtensions = {".cc",  ".h",   ".cpp",
                                                    ".hpp", ".cxx", ".mm"};
  return kExtensions.count(path.extension().string()) != 0;
}

SourceTree::SourceTree(Manifest manifest) : manifest_(std::move(manifest)) {
  std::error_code error;
  fs::path root = fs::weakly_canonical(manifest_.root, error);
  manifest_.root = error ? manifest_.root.lexically_normal() : root;
  if (!manifest_.build.empty()) {
    manifest_.build = fs::weakly_canonical(manifest_.build, error);
  }
  for (const std::string& dir : manifest_.system_includes) {
    include_path_.push_back(dir);
  }
  for (const TargetRecord& target : manifest_.targets) {
    targets_[target.name] = &target;
    auto [it, added] = unit_by_home_.try_emplace(target.home, units_.size());
    if (added) units_.push_back(Unit{target.home, {}});
    units_[it->second].targets.push_back(&target);
    for (const std::string& source : target.sources) {
      fs::path path = fs::path(source).is_absolute()
                          ? fs::path(source)
                          : manifest_.root / target.home / source;
      std::string file = relative(path);
      if (!file.empty()) sources_.insert(file);
    }
    for (const std::string& dir : target.include_dirs) {
      if (relative(dir).empty()) include_path_.push_back(dir);
    }
  }
}

std::string SourceTree::relative(const fs::path& path) const {
  fs::path rel = path.lexically_normal().lexically_relative(manifest_.root);
  std::string text = rel.generic_string();
  if (text.empty() || text == ".." || text.rfind("../", 0) == 0) return "";
  return text;
}

const Unit* SourceTree::unit_of(std::string_view file) const {
  const Unit* best = nullptr;
  for (const Unit& unit : units_) {
    if (!is_under(file, unit.home)) continue;
    if (best == nullptr || best->home == "." ||
        unit.home.size() > best->home.size()) {
      best = &unit;
    }
  }
  return best;
}

const TargetRecord* SourceTree::find_target(std::string_view name) const {
  auto alias = manifest_.aliases.find(std::string(name));
  if (alias != manifest_.aliases.end()) name = alias->second;
  auto it = targets_.find(name);
  return it == targets_.end() ? nullptr : it->second;
}

std::string SourceTree::link_name(const TargetRecord& target) const {
  for (const auto& [alias, real] : manifest_.aliases) {
    if (real == target.name) return alias;
  }
  return target.name;
}

bool SourceTree::is_skipped_folder(const fs::path& folder) const {
  std::string name = folder.filename().string();
  if (!name.empty() && name[0] == '.') return true;
  std::error_code error;
  if (!manifest_.build.empty() &&
      fs::equivalent(folder, manifest_.build, error))
    return true;
  return is_file(folder / "CMakeCache.txt");  // some other build tree
}

std::vector<std::string> SourceTree::files_in(const Unit& unit) const {
  std::vector<std::string> files;
  std::error_code error;
  fs::recursive_directory_iterator it(manifest_.root / unit.home, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    if (it->is_directory(error)) {
      std::string folder = relative(path);
      // A folder with a CMakeLists.txt of its own is its own unit: when it
      // made no target in this configuration (a part built only where an
      // optional library is installed), unowned_folders() names it.
      if (is_skipped_folder(path) || unit_by_home_.count(folder) != 0 ||
          is_file(path / "CMakeLists.txt")) {
        it.disable_recursion_pending();
      }
    } else if (is_cpp_file(path)) {
      files.push_back(relative(path));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> SourceTree::unowned_folders() const {
  std::vector<std::string> folders;
  std::vector<fs::path> pending = {manifest_.root};
  std::error_code error;
  while (!pending.empty()) {
    fs::path folder = pending.back();
    pending.pop_back();
    std::vector<fs::path> children;
    bool has_cpp = false;
    for (fs::directory_iterator it(folder, error), end; !error && it != end;
         it.increment(error)) {
      if (it->is_directory(error)) {
        children.push_back(it->path());
      } else {
        has_cpp = has_cpp || is_cpp_file(it->path());
      }
    }
    const bool owned = unit_by_home_.count(relative(folder)) != 0;
    if (has_cpp && !owned && folder != manifest_.root) {
      folders.push_back(relative(folder));
      continue;
    }
    // Below a unit's home only folders with a CMakeLists.txt of their own
    // can be unowned (files_in() leaves them out); the rest are the unit's.
    for (const fs::path& child : children) {
      if (is_skipped_folder(child)) continue;
      if (!owned || unit_by_home_.count(relative(child)) != 0 ||
          is_file(child / "CMakeLists.txt")) {
        pending.push_back(child);
      }
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

bool SourceTree::is_source(const std::string& file) const {
  return sources_.count(file) != 0;
}

ResolvedInclude SourceTree::resolve(std::string_view includer,
                                    const IncludeDirective& include) const {
  std::vector<fs::path> candidates = {manifest_.root / include.name};
  if (!include.angled) {
    candidates.push_back(manifest_.root / fs::path(includer).parent_path() /
                         include.name);
  }
  for (const fs::path& candidate : candidates) {
    if (!is_file(candidate)) continue;
    std::string file = relative(candidate);
    if (file.empty()) return {Where::kSystem, ""};  // outside the tree
    std::string build =
        manifest_.build.empty() ? "" : relative(manifest_.build);
    if (!build.empty() && is_under(file, build)) return {Where::kGenerated, ""};
    return {Where::kRepository, file};
  }
  if (include.angled) return {Where::kSystem, ""};
  if (!manifest_.build.empty() && is_file(manifest_.build / include.name)) {
    return {Where::kGenerated, ""};
  }
  for (const fs::path& dir : include_path_) {
    if (is_file(dir / include.name)) return {Where::kSystem, ""};
  }
  return {Where::kMissing, ""};
}

}  // namespace weft::tools::include_check
