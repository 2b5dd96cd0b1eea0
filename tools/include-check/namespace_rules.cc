// The namespace check and the ban on Abseil's internals.
#include "tools/include-check/namespace_rules.h"

#include <cctype>
#include <cstddef>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tools/include-check/source_text.h"

namespace weft::tools::include_check {
namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The tokens the namespace scan needs: identifiers, "::", and single
// punctuation characters; preprocessor lines are skipped whole.
struct Token {
  int line = 0;
  std::string text;
};

std::vector<Token> tokens_of(std::string_view code) {
  std::vector<Token> tokens;
  int line = 1;
  bool line_start = true;
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a directive, with its continuations
      while (i < code.size() && code[i] != '\n') {
        if (code[i] == '\\' && i + 1 < code.size() && code[i + 1] == '\n') {
          ++line;
          ++i;
        }
        ++i;
      }
      continue;
    }
    line_start = false;
    if (is_identifier_char(c)) {
      size_t end = i;
      while (end < code.size() && is_identifier_char(code[end])) ++end;
      tokens.push_back({line, std::string(code.substr(i, end - i))});
      i = end;
    } else if (code.compare(i, 2, "::") == 0) {
      tokens.push_back({line, "::"});
      i += 2;
    } else {
      tokens.push_back({line, std::string(1, c)});
      ++i;
    }
  }
  return tokens;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string name;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    if (!name.empty()) name += "::";
    name += part;
  }
  return name;
}

bool nested_in(std::string_view name, std::string_view outer) {
  return name.size() > outer.size() + 2 &&
         name.substr(0, outer.size()) == outer &&
         name.substr(outer.size(), 2) == "::";
}

// What the units' targets declare; empty when none declares a namespace.
struct Declared {
  std::string public_namespace;
  std::string private_namespace;
};

Declared declared_by(const Unit& unit, Report* report) {
  Declared declared;
  for (const TargetRecord* target : unit.targets) {
    if (target->namespace_name.empty()) continue;
    if (declared.public_namespace.empty()) {
      declared = {target->namespace_name, target->private_namespace};
    } else if (declared.public_namespace != target->namespace_name ||
               declared.private_namespace != target->private_namespace) {
      report->errors.push_back(
          {unit.home + "/", 0,
           "the targets of this folder declare different namespaces (" +
               target->name + ": " + target->namespace_name +
               "); a folder is one room: give them the same WEFT_NAMESPACE "
               "and WEFT_PRIVATE_NAMESPACE"});
    }
  }
  return declared;
}

// Whether a file of the unit may open `name`: its public namespace (a
// private file may define members of a public class), its private one and
// what is nested in that, and what is nested in the public one unless that
// is `weft` itself, which several API libraries share.
bool allowed(const Declared& d, std::string_view name) {
  const std::string& pub = d.public_namespace;
  const std::string& priv = d.private_namespace;
  if (name == pub || name == priv || nested_in(name, priv)) return true;
  return pub != "weft" && nested_in(name, pub);
}

std::string advice(const Declared& d) {
  return d.public_namespace == d.private_namespace
             ? d.public_namespace + " (or a namespace inside it)"
             : d.public_namespace + " for public names, " +
                   d.private_namespace + " for private code";
}

void check_file(const Unit& unit, const Declared& declared,
                const std::string& file, const StrippedText& text,
                Report* report) {
  for (const OpenedNamespace& opened : opened_namespaces(text.code)) {
    if (opened.name.empty() || allowed(declared, opened.name)) {
      continue;
    }
    report->errors.push_back(
        {file, opened.line,
         "namespace " + opened.name + " is not this folder's (" + unit.home +
             "/ is " + declared.public_namespace +
             "): a qualified name must say which room owns it; use " +
             advice(declared)});
  }
}

// absl::flags_internal::..., absl::base_internal::... in code.
void check_abseil_internals(const std::string& file, const StrippedText& text,
                            Report* report) {
  static const std::regex kInternalName(
      R"(\babsl\s*::\s*(?:\w+\s*::\s*)*\w+_internal\b)");
  static const std::regex kInternalHeader(R"(^absl/(?:.*/)?internal/)");
  for (const IncludeDirective& include : includes_of(text.without_comments)) {
    if (std::regex_search(include.name, kInternalHeader)) {
      report->errors.push_back(
          {file, include.line,
           "#include <" + include.name +
               ">: Abseil's internal headers change without notice; use "
               "its public API (or weft's own code) instead"});
    }
  }
  int line = 1;
  size_t line_start = 0;
  const std::string& code = text.code;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kInternalName);
       it != std::sregex_iterator(); ++it) {
    const size_t at = static_cast<size_t>(it->position());
    for (; line_start < at; ++line_start) {
      if (code[line_start] == '\n') ++line;
    }
    report->errors.push_back(
        {file, line,
         it->str() +
             ": Abseil's internal namespaces change without notice; use its "
             "public API (or weft's own code) instead"});
  }
}

}  // namespace

std::vector<OpenedNamespace> opened_namespaces(std::string_view code) {
  std::vector<OpenedNamespace> opened;
  // The blocks that are open: a namespace's name parts, or no entry name
  // with `is_namespace` false for any other brace.
  struct Block {
    bool is_namespace = false;
    std::string name;  // as written ("a::b"), "" when anonymous
  };
  std::vector<Block> stack;
  const std::vector<Token> tokens = tokens_of(code);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i].text;
    if (t == "{") {
      stack.push_back({});
    } else if (t == "}") {
      if (!stack.empty()) stack.pop_back();
    } else if (t == "namespace" && (i == 0 || tokens[i - 1].text != "using")) {
      std::string name;
      size_t j = i + 1;
      for (; j < tokens.size(); ++j) {
        const std::string& u = tokens[j].text;
        if (u == "inline") continue;
        if (u == "::" || is_identifier_char(u[0])) {
          name += u;
        } else {
          break;
        }
      }
      if (j >= tokens.size() || tokens[j].text != "{") continue;  // alias
      bool file_scope = true;
      std::vector<std::string> parts;
      for (const Block& block : stack) {
        file_scope = file_scope && block.is_namespace;
        parts.push_back(block.name);
      }
      parts.push_back(name);
      if (file_scope && !name.empty()) {
        opened.push_back({tokens[i].line, joined(parts)});
      }
      stack.push_back({true, name});
      i = j;
    }
  }
  return opened;
}

Report check_namespaces(const SourceTree& tree) {
  Report report;
  for (const Unit& unit : tree.units()) {
    const Declared declared = declared_by(unit, &report);
    for (const std::string& file : tree.files_in(unit)) {
      std::string raw;
      if (!read_text(tree.absolute(file), &raw)) {
        report.errors.push_back({file, 0, "cannot be read"});
        continue;
      }
      ++report.files_checked;
      const StrippedText text = strip(raw);
      check_abseil_internals(file, text, &report);
      if (!declared.public_namespace.empty()) {
        check_file(unit, declared, file, text, &report);
      }
    }
  }
  return report;
}

}  // namespace weft::tools::include_check
