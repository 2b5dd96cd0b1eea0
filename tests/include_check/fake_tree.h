// A tiny source tree in a fresh temporary folder, with a manifest in
// cmake/WeftIncludeGraph.cmake's format, for the include checker's tests.
#ifndef WEFT_TESTS_INCLUDE_CHECK_FAKE_TREE_H_
#define WEFT_TESTS_INCLUDE_CHECK_FAKE_TREE_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "tools/include-check/report.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {

struct TargetSpec {
  std::string name;
  std::string type = "STATIC_LIBRARY";
  std::string home;
  std::string links;            // ';'-separated, as CMake lists them
  std::string interface_links;  // likewise
  std::string whitebox;
  std::string sources;
  bool linux_only = false;
  std::string namespace_name;     // WEFT_NAMESPACE
  std::string private_namespace;  // WEFT_PRIVATE_NAMESPACE
};

class FakeTree {
 public:
  FakeTree();
  ~FakeTree();
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  // Writes `text` to `file` (relative to the root), making its folders.
  void write(std::string_view file, std::string_view text);
  void add_target(const TargetSpec& target);
  void add_alias(std::string_view alias, std::string_view target);

  std::string manifest_text() const;
  Report check_graph() const;  // fails the test if the manifest is bad
  Report check_darwin() const;
  Report check_iwyu() const;
  Report check_namespaces() const;

  // The layered tree most tests start from: weft_fabric (fabric/),
  // weft_sim (sim/, private sim/internal/), weft_collectives (collectives/,
  // private collectives/engine/), each with a weft:: alias and linking
  // weft::fabric PUBLIC; the executable weft-devices (tools/weft-devices/)
  // linking weft::sim. Every file is empty apart from a comment.
  void add_layers();

 private:
  Report run(Report (*check)(const SourceTree&)) const;

  std::filesystem::path root_;
  std::string records_;
};

}  // namespace weft::tools::include_check

#endif  // WEFT_TESTS_INCLUDE_CHECK_FAKE_TREE_H_
