// The declared-graph check: every include of a repository file must stay in
// its own folder unit, name a public header of a target the unit links
// (directly, or through what those link PUBLIC/INTERFACE), or name any
// header of a target the unit declares white-box (WEFT_WHITEBOX).
#ifndef WEFT_TOOLS_INCLUDE_CHECK_INCLUDE_RULES_H_
#define WEFT_TOOLS_INCLUDE_CHECK_INCLUDE_RULES_H_

#include <set>
#include <string>

#include "tools/include-check/report.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {

// The project targets whose public headers `unit` may include: what its
// targets link, plus the PUBLIC/INTERFACE links of those, transitively.
std::set<const TargetRecord*> link_closure(const SourceTree& tree,
                                           const Unit& unit);

// Checks every C++ file of every unit. Errors: includes that break the
// graph or name nothing. Warnings: .cc files in no target's sources and
// WEFT_WHITEBOX entries that name no target. Notes: folders with no target.
Report check_declared_graph(const SourceTree& tree);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_INCLUDE_RULES_H_
