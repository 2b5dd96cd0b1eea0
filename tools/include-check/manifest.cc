// Parsing of the manifest cmake/WeftIncludeGraph.cmake writes.
#include "tools/include-check/manifest.h"

#include <fstream>
#include <sstream>
#include <utility>

namespace weft::tools::include_check {
namespace {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// A ';'-separated list without its empty entries.
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  for (std::string& item : split(text, ';')) {
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

// Fills `target` from the key=value fields of a "target" record.
bool parse_target(const std::vector<std::string>& fields, TargetRecord* target,
                  std::string* error) {
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string& field = fields[i];
    size_t equals = field.find('=');
    if (equals == std::string::npos) {
      *error = "field \"" + field + "\" is not key=value";
      return false;
    }
    std::string key = field.substr(0, equals);
    std::string value = field.substr(equals + 1);
    if (key == "name") target->name = value;
    if (key == "type") target->type = value;
    if (key == "home") target->home = value;
    if (key == "linux_only") target->linux_only = value == "1";
    if (key == "links") target->links = split_list(value);
    if (key == "interface_links") target->interface_links = split_list(value);
    if (key == "whitebox") target->whitebox = split_list(value);
    if (key == "include_dirs") target->include_dirs = split_list(value);
    if (key == "sources") target->sources = split_list(value);
    if (key == "namespace") target->namespace_name = value;
    if (key == "private_namespace") target->private_namespace = value;
  }
  if (target->name.empty() || target->type.empty() || target->home.empty()) {
    *error = "a target record needs name=, type= and home=";
    return false;
  }
  return true;
}

// Adds one record to `manifest`; false with *error when it is malformed.
bool parse_record(const std::vector<std::string>& fields, Manifest* manifest,
                  std::string* error) {
  const std::string& kind = fields[0];
  if (kind == "target") {
    TargetRecord target;
    if (!parse_target(fields, &target, error)) return false;
    manifest->targets.push_back(std::move(target));
    return true;
  }
  if (kind == "alias" && fields.size() == 3) {
    manifest->aliases[fields[1]] = fields[2];
    return true;
  }
  if (fields.size() != 2) {
    *error = "record \"" + kind + "\" has the wrong number of fields";
    return false;
  }
  if (kind == "root") {
    manifest->root = fields[1];
  } else if (kind == "build") {
    manifest->build = fields[1];
  } else if (kind == "system_include") {
    manifest->system_includes.push_back(fields[1]);
  } else {
    *error = "unknown record \"" + kind + "\"";
    return false;
  }
  return true;
}

}  // namespace

std::optional<Manifest> parse_manifest(std::string_view text,
                                       std::string* error) {
  Manifest manifest;
  int number = 0;
  for (const std::string& line : split(text, '\n')) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::string what;
    if (!parse_record(split(line, '\t'), &manifest, &what)) {
      *error = "line " + std::to_string(number) + ": " + what;
      return std::nullopt;
    }
  }
  if (manifest.root.empty()) {
    *error = "no root record (the source tree)";
    return std::nullopt;
  }
  return manifest;
}

std::optional<Manifest> read_manifest(const std::filesystem::path& path,
                                      std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path.string() +
             " (configure the build with CMake first: it writes the manifest)";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string what;
  std::optional<Manifest> manifest = parse_manifest(text.str(), &what);
  if (!manifest) *error = path.string() + ": " + what;
  return manifest;
}

}  // namespace weft::tools::include_check
