// The declared include graph that cmake/WeftIncludeGraph.cmake writes to
// <build>/weft_include_graph.txt: every target of the project with its home
// folder, sources, links, include path and the WEFT_WHITEBOX and
// WEFT_LINUX_ONLY properties. The module's header describes the format.
#ifndef WEFT_TOOLS_INCLUDE_CHECK_MANIFEST_H_
#define WEFT_TOOLS_INCLUDE_CHECK_MANIFEST_H_

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::tools::include_check {

struct TargetRecord {
  std::string name;
  std::string type;  // CMake's TYPE: STATIC_LIBRARY, EXECUTABLE, ...
  std::string home;  // SOURCE_DIR relative to the root; "." for the root
  bool linux_only = false;
  std::vector<std::string> links;            // raw LINK_LIBRARIES
  std::vector<std::string> interface_links;  // raw INTERFACE_LINK_LIBRARIES
  std::vector<std::string> whitebox;         // WEFT_WHITEBOX
  std::vector<std::string> include_dirs;     // absolute
  std::vector<std::string> sources;          // as CMake lists them
  std::string namespace_name;     // WEFT_NAMESPACE: its public names'
  std::string private_namespace;  // WEFT_PRIVATE_NAMESPACE: its private code
};

struct Manifest {
  std::filesystem::path root;   // the source tree
  std::filesystem::path build;  // the build tree (may be inside root)
  std::vector<std::string> system_includes;
  std::map<std::string, std::string> aliases;  // weft::sim -> weft_sim
  std::vector<TargetRecord> targets;
};

// Parses a manifest. On malformed input returns nullopt and sets *error to
// "line N: what is wrong".
std::optional<Manifest> parse_manifest(std::string_view text,
                                       std::string* error);

// Reads and parses the manifest at `path`; *error names the file.
std::optional<Manifest> read_manifest(const std::filesystem::path& path,
                                      std::string* error);

}  // namespace weft::tools::include_check

#endif  // WEFT_TOOLS_INCLUDE_CHECK_MANIFEST_H_
