// The namespace check: a qualified name says which room owns it. Every
// target declares the namespace of its public names (WEFT_NAMESPACE) and of
// its private code (WEFT_PRIVATE_NAMESPACE; cmake/WeftComponent.cmake sets
// both), and each C++ file of a folder unit may open only its own targets'
// namespaces: the public one, the private one, namespaces nested in the
// private one, and namespaces nested in the public one unless that is
// `weft` itself (the API libraries fabric/, collectives/, rendezvous/ and
// startup/ share it, so their own nested names go under their private
// namespace). Anonymous namespaces are allowed anywhere; namespace aliases
// and using-directives declare nothing.
//
// Besides, no file names Abseil's internals (`absl::flags_internal::...`,
// any `absl::*_internal` namespace): they change without notice.
// Units whose targets declare no namespace (tests, examples) are skipped.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_NAMESPACE_RULES_H_
#define WEFT_TOOLS_INCLUDE_CHECK_NAMESPACE_RULES_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/include-check/report.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {

// One namespace a file opens at file scope, fully qualified ("" for an
// anonymous one, which counts as its enclosing namespace).
struct OpenedNamespace {
  int line = 0;
  std::string name;
};

// The named namespaces `code` (comments and literals blanked, see strip())
// opens outside any class or function, each with its enclosing names.
std::vector<OpenedNamespace> opened_namespaces(std::string_view code);

Report check_namespaces(const SourceTree& tree);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_NAMESPACE_RULES_H_
