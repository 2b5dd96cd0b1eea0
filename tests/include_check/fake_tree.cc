// FakeTree: files in a temporary folder and the manifest that declares them.
#include "tests/include_check/fake_tree.h"

#include <unistd.h>

#include <fstream>
#include <optional>
#include <utility>

#include "gtest/gtest.h"
#include "tools/include-check/darwin_scan.h"
#include "tools/include-check/include_rules.h"
#include "tools/include-check/iwyu_scan.h"
#include "tools/include-check/manifest.h"
#include "tools/include-check/namespace_rules.h"
#include "tools/include-check/source_tree.h"

namespace weft::tools::include_check {
namespace fs = std::filesystem;

FakeTree::FakeTree() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  root_ = fs::temp_directory_path() /
          ("weft_include_check_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(root_);
  fs::create_directories(root_);
}

FakeTree::~FakeTree() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

void FakeTree::write(std::string_view file, std::string_view text) {
  fs::path path = root_ / file;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void FakeTree::add_target(const TargetSpec& t) {
  records_ +=
      "target\tname=" + t.name + "\ttype=" + t.type + "\thome=" + t.home +
      "\tlinux_only=" + (t.linux_only ? "1" : "0") + "\tlinks=" + t.links +
      "\tinterface_links=" + t.interface_links + "\twhitebox=" + t.whitebox +
      "\tinclude_dirs=\tsources=" + t.sources +
      "\tnamespace=" + t.namespace_name +
      "\tprivate_namespace=" + t.private_namespace + "\n";
}

void FakeTree::add_alias(std::string_view alias, std::string_view target) {
  records_ +=
      "alias\t" + std::string(alias) + "\t" + std::string(target) + "\n";
}

std::string FakeTree::manifest_text() const {
  return "# fake\nroot\t" + root_.string() + "\nbuild\t" +
         (root_ / "build").string() + "\n" + records_;
}

Report FakeTree::run(Report (*check)(const SourceTree&)) const {
  std::string error;
  std::optional<Manifest> manifest = parse_manifest(manifest_text(), &error);
  EXPECT_TRUE(manifest.has_value()) << error;
  if (!manifest) return {};
  SourceTree tree(std::move(*manifest));
  return check(tree);
}

Report FakeTree::check_graph() const { return run(check_declared_graph); }

Report FakeTree::check_darwin() const {
  return run(include_check::check_darwin);
}

Report FakeTree::check_iwyu() const { return run(check_include_what_you_use); }

Report FakeTree::check_namespaces() const {
  return run(include_check::check_namespaces);
}

void FakeTree::add_layers() {
  for (const char* file :
       {"fabric/fabric.h", "fabric/fabric.cc", "sim/world.h", "sim/world.cc",
        "sim/internal/core.h", "collectives/group.h", "collectives/group.cc",
        "collectives/engine/lane.h", "collectives/engine/lane.cc",
        "tools/weft-devices/main.cc"}) {
    write(file, "// " + std::string(file) + "\n");
  }
  add_target(
      {"weft_fabric", "STATIC_LIBRARY", "fabric", "", "", "", "fabric.cc"});
  add_target({"weft_sim", "STATIC_LIBRARY", "sim", "weft::fabric",
              "weft::fabric", "", "world.cc"});
  add_target({"weft_collectives", "STATIC_LIBRARY", "collectives",
              "weft::fabric", "weft::fabric", "",
              "group.cc;" + (root_ / "collectives/engine/lane.cc").string()});
  add_target({"weft-devices", "EXECUTABLE", "tools/weft-devices", "weft::sim",
              "", "", "main.cc"});
  add_alias("weft::fabric", "weft_fabric");
  add_alias("weft::sim", "weft_sim");
  add_alias("weft::collectives", "weft_collectives");
}

}  // namespace weft::tools::include_check
