// The declared-graph rules and their messages.
#include "tools/include-check/include_rules.h"

#include <filesystem>
#include <string_view>
#include <vector>

namespace weft::tools::include_check {
namespace {

struct LinkItem {
  std::string name;
  bool link_only = false;  // $<LINK_ONLY:x>: linked, not a usage requirement
};

// A raw LINK_LIBRARIES entry as a name; CMake's ::@ scope markers give "".
// For a generator expression $<condition:value> the value is taken, so a
// conditional link still counts (the check stays permissive there).
LinkItem parse_link_item(std::string_view item) {
  if (item.rfind("::@", 0) == 0) return {};
  if (item.rfind("$<", 0) != 0 || item.back() != '>') {
    return {std::string(item)};
  }
  bool link_only = item.rfind("$<LINK_ONLY:", 0) == 0;
  int depth = 0;  // nested $<...> inside the condition
  for (size_t i = 2; i + 1 < item.size(); ++i) {
    if (item.compare(i, 2, "$<") == 0) {
      ++depth;
      ++i;
    } else if (item[i] == '>') {
      --depth;
    } else if (item[i] == ':' && depth == 0) {
      LinkItem inner = parse_link_item(item.substr(i + 1, item.size() - i - 2));
      inner.link_only = inner.link_only || link_only;
      return inner;
    }
  }
  return {};
}

void add_links(const SourceTree& tree, const std::vector<std::string>& items,
               bool usage_only, std::vector<const TargetRecord*>* out) {
  for (const std::string& raw : items) {
    LinkItem item = parse_link_item(raw);
    if (usage_only && item.link_only) continue;
    if (const TargetRecord* target = tree.find_target(item.name)) {
      out->push_back(target);
    }
  }
}

struct Allowance {
  std::set<const TargetRecord*> linked;
  std::set<const TargetRecord*> whitebox;
};

Allowance allowance_of(const SourceTree& tree, const Unit& unit,
                       Report* report) {
  Allowance allowance{link_closure(tree, unit), {}};
  for (const TargetRecord* target : unit.targets) {
    for (const std::string& name : target->whitebox) {
      if (const TargetRecord* other = tree.find_target(name)) {
        allowance.whitebox.insert(other);
      } else {
        report->warnings.push_back(
            {unit.home + "/", 0,
             "WEFT_WHITEBOX of " + target->name + " names " + name +
                 ", which is no target in this configuration"});
      }
    }
  }
  return allowance;
}

// "weft-devices", or "the targets of tests/collectives/" for a shared folder.
std::string unit_name(const Unit& unit) {
  if (unit.targets.size() == 1) return unit.targets[0]->name;
  return "the targets of " + unit.home + "/";
}

bool any_in(const Unit& unit, const std::set<const TargetRecord*>& targets) {
  for (const TargetRecord* target : unit.targets) {
    if (targets.count(target) != 0) return true;
  }
  return false;
}

// Where a repository header sits within its unit: its folder ("a/b/") and
// whether it is public (directly in the unit's home folder).
struct Placement {
  std::string folder;
  bool is_public = false;
};

Placement placement_of(const std::string& header, const Unit& owner) {
  std::string folder =
      std::filesystem::path(header).parent_path().generic_string();
  bool is_public =
      folder == owner.home || (owner.home == "." && folder.empty());
  return {folder.empty() ? "./" : folder + "/", is_public};
}

// What to say about an include of a file of `owner` that the includer's
// allowance does not cover.
std::string violation(const SourceTree& tree, const std::string& spelled,
                      const Placement& placement, const Unit& owner,
                      const Unit& includer, const Allowance& allowance) {
  const TargetRecord& first = *owner.targets.front();
  std::string link = tree.link_name(first);
  std::string head = "includes \"" + spelled + "\", ";
  std::string where = " (" + placement.folder + ")";
  if (owner.targets.size() == 1 && first.type == "EXECUTABLE") {
    return head + "a header of the executable " + first.name + where +
           "; move what it shares into a library and link that";
  }
  if (!placement.is_public && any_in(owner, allowance.linked)) {
    return head + "a private header of " + unit_name(owner) + where +
           "; include a public header of " + link +
           " instead, or declare the target white-box (WEFT_WHITEBOX " +
           first.name + ")";
  }
  if (!placement.is_public) {
    return head + "a private header of " + unit_name(owner) + where +
           "; link " + link +
           " and include a public header, or declare the target white-box "
           "(WEFT_WHITEBOX)";
  }
  return head + "a header of " + unit_name(owner) + where + ", which " +
         unit_name(includer) + " does not link; link " + link +
         ", or declare the target white-box (WEFT_WHITEBOX)";
}

bool is_header(const std::string& file) {
  const std::string extension = std::filesystem::path(file).extension();
  return extension == ".h" || extension == ".hpp";
}

// The error for one include of `file`, or "" when the include is allowed.
std::string check_include(const SourceTree& tree, const std::string& file,
                          const Unit& unit, const Allowance& allowance,
                          const IncludeDirective& include) {
  ResolvedInclude resolved = tree.resolve(file, include);
  if (resolved.where == Where::kMissing) {
    return "includes \"" + include.name +
           "\", which names no file of the repository and no header on the "
           "include path; fix the path (spell it from the repository root)";
  }
  if (resolved.where != Where::kRepository) return "";
  // A source this configuration does not compile (a test of a tool the
  // preset leaves out) is warned about as a stray; what it may include is
  // decided by its own target's links where that target is configured, not
  // by the links of the folder's other targets.
  if (!is_header(file) && !tree.is_source(file)) return "";
  const Unit* owner = tree.unit_of(resolved.path);
  if (owner == nullptr) {
    return "includes \"" + include.name +
           "\", which belongs to no target in this configuration; give its "
           "folder a target or move the header next to its users";
  }
  if (owner == &unit || any_in(*owner, allowance.whitebox)) return "";
  Placement placement = placement_of(resolved.path, *owner);
  if (placement.is_public && any_in(*owner, allowance.linked)) return "";
  return violation(tree, include.name, placement, *owner, unit, allowance);
}

void check_file(const SourceTree& tree, const std::string& file,
                const Unit& unit, const Allowance& allowance, Report* report) {
  ++report->files_checked;
  if (!is_header(file) && !tree.is_source(file)) {
    report->warnings.push_back(
        {file, 0,
         "in " + unit.home +
             "/ but in no target's sources; add it to a target or "
             "remove it"});
  }
  std::string text;
  if (!read_text(tree.absolute(file), &text)) {
    report->errors.push_back({file, 0, "cannot be read"});
    return;
  }
  for (const IncludeDirective& include : includes_of(text)) {
    std::string error = check_include(tree, file, unit, allowance, include);
    if (!error.empty()) report->errors.push_back({file, include.line, error});
  }
}

}  // namespace

std::set<const TargetRecord*> link_closure(const SourceTree& tree,
                                           const Unit& unit) {
  std::vector<const TargetRecord*> pending;
  for (const TargetRecord* target : unit.targets) {
    add_links(tree, target->links, /*usage_only=*/false, &pending);
    if (target->type == "INTERFACE_LIBRARY") {
      add_links(tree, target->interface_links, /*usage_only=*/true, &pending);
    }
  }
  std::set<const TargetRecord*> closure;
  while (!pending.empty()) {
    const TargetRecord* target = pending.back();
    pending.pop_back();
    if (!closure.insert(target).second) continue;
    add_links(tree, target->interface_links, /*usage_only=*/true, &pending);
  }
  return closure;
}

Report check_declared_graph(const SourceTree& tree) {
  Report report;
  for (const std::string& folder : tree.unowned_folders()) {
    report.notes.push_back("skipped " + folder +
                           "/: no target in this configuration");
  }
  for (const Unit& unit : tree.units()) {
    Allowance allowance = allowance_of(tree, unit, &report);
    for (const std::string& file : tree.files_in(unit)) {
      check_file(tree, file, unit, allowance, &report);
    }
  }
  return report;
}

}  // namespace weft::tools::include_check
