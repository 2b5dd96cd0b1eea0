// A small recursive-descent evaluator of preprocessor conditions over
// three-valued integers (a value, or unknown).
#include "tools/include-check/pp_condition.h"

#include <cctype>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::tools::include_check {
namespace {

enum class Kind { kNumber, kIdentifier, kHasInclude, kPunct, kEnd };

struct Token {
  Kind kind = Kind::kEnd;
  std::string text;  // identifier, punctuator, or the header of __has_include
  long long value = 0;
  bool known = true;  // false for a number we cannot read
};

using Value = std::optional<long long>;  // nullopt: unknown

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// `<h>` or `"h"` between the parentheses after __has_include at `i`.
Token has_include_token(std::string_view text, size_t* i) {
  size_t open = text.find('(', *i);
  size_t close = open == std::string_view::npos ? open : text.find(')', open);
  if (close == std::string_view::npos) {
    *i = text.size();
    return Token{Kind::kPunct, "?"};  // makes the parse fail: unknown
  }
  std::string_view inside = text.substr(open + 1, close - open - 1);
  size_t first = inside.find_first_not_of(" \t");
  size_t last = inside.find_last_not_of(" \t");
  *i = close + 1;
  if (first == std::string_view::npos || last - first < 2) {
    return Token{Kind::kPunct, "?"};
  }
  return Token{Kind::kHasInclude,
               std::string(inside.substr(first + 1, last - first - 1))};
}

Token number_token(std::string_view text, size_t* i) {
  size_t start = *i;
  while (*i < text.size() && (is_identifier_char(text[*i]) || text[*i] == '\''))
    ++*i;
  std::string digits;
  for (char c : text.substr(start, *i - start)) {
    if (c != '\'') digits += c;
  }
  while (!digits.empty() && std::strchr("uUlL", digits.back()) != nullptr)
    digits.pop_back();
  Token token{Kind::kNumber, digits};
  try {
    size_t used = 0;
    token.value = std::stoll(digits, &used, 0);
    token.known = used == digits.size();
  } catch (...) {
    token.known = false;
  }
  return token;
}

std::vector<Token> tokenize(std::string_view text) {
  static constexpr std::string_view kTwoChar[] = {
      "&&", "||", "==", "!=", "<=", ">=", "<<", ">>"};
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      tokens.push_back(number_token(text, &i));
    } else if (is_identifier_char(c)) {
      size_t start = i;
      while (i < text.size() && is_identifier_char(text[i])) ++i;
      std::string name(text.substr(start, i - start));
      if (name == "__has_include" || name == "__has_include_next") {
        tokens.push_back(has_include_token(text, &i));
      } else {
        tokens.push_back(Token{Kind::kIdentifier, name});
      }
    } else {
      std::string punct(1, c);
      for (std::string_view two : kTwoChar) {
        if (text.substr(i, 2) == two) punct = two;
      }
      i += punct.size();
      tokens.push_back(Token{Kind::kPunct, punct});
    }
  }
  tokens.push_back(Token{});
  return tokens;
}

Value apply(const std::string& op, Value a, Value b) {
  if (!a || !b) return std::nullopt;
  long long x = *a, y = *b;
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if ((op == "/" || op == "%") && y == 0) return std::nullopt;
  if (op == "/") return x / y;
  if (op == "%") return x % y;
  if (op == "<<") return y < 0 || y > 62 ? Value() : Value(x << y);
  if (op == ">>") return y < 0 || y > 62 ? Value() : Value(x >> y);
  if (op == "<") return x < y;
  if (op == ">") return x > y;
  if (op == "<=") return x <= y;
  if (op == ">=") return x >= y;
  if (op == "==") return x == y;
  if (op == "!=") return x != y;
  if (op == "&") return x & y;
  if (op == "^") return x ^ y;
  if (op == "|") return x | y;
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const MacroModel& model)
      : tokens_(std::move(tokens)), model_(model) {}

  Value parse() {
    Value value = conditional();
    if (failed_ || peek().kind != Kind::kEnd) return std::nullopt;
    return value;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  bool at(std::string_view punct) const {
    return peek().kind == Kind::kPunct && peek().text == punct;
  }
  const Token& take() {
    const Token& token = tokens_[pos_];
    if (token.kind != Kind::kEnd) ++pos_;
    return token;
  }
  void expect(std::string_view punct) {
    if (!at(punct)) failed_ = true;
    take();
  }

  Value conditional() {
    Value test = logical(/*is_or=*/true);
    if (!at("?")) return test;
    take();
    Value yes = conditional();
    expect(":");
    Value no = conditional();
    if (test) return *test != 0 ? yes : no;
    return yes && no && *yes == *no ? yes : Value();
  }

  // || when is_or, else &&; a known deciding side decides even when the
  // other is unknown.
  Value logical(bool is_or) {
    Value left = is_or ? logical(false) : binary(0);
    const char* op = is_or ? "||" : "&&";
    while (at(op)) {
      take();
      Value right = is_or ? logical(false) : binary(0);
      long long decisive = is_or ? 1 : 0;
      auto decides = [&](Value v) { return v && (*v != 0) == (decisive != 0); };
      if (decides(left) || decides(right)) {
        left = decisive;
      } else if (left && right) {
        left = 1 - decisive;
      } else {
        left = std::nullopt;
      }
    }
    return left;
  }

  // Binary operators from | (level 0) down to * / % (level 7).
  Value binary(int level) {
    static const std::vector<std::vector<std::string>> kLevels = {
        {"|"},
        {"^"},
        {"&"},
        {"==", "!="},
        {"<", ">", "<=", ">="},
        {"<<", ">>"},
        {"+", "-"},
        {"*", "/", "%"}};
    if (level == static_cast<int>(kLevels.size())) return unary();
    Value left = binary(level + 1);
    while (true) {
      std::string op;
      for (const std::string& candidate : kLevels[level]) {
        if (at(candidate)) op = candidate;
      }
      if (op.empty()) return left;
      take();
      left = apply(op, left, binary(level + 1));
    }
  }

  Value unary() {
    if (at("!") || at("~") || at("-") || at("+")) {
      std::string op = take().text;
      Value v = unary();
      if (!v) return v;
      if (op == "!") return *v == 0;
      if (op == "~") return ~*v;
      return op == "-" ? -*v : *v;
    }
    return primary();
  }

  Value primary() {
    Token token = take();
    switch (token.kind) {
      case Kind::kNumber:
        return token.known ? Value(token.value) : Value();
      case Kind::kHasInclude:
        return model_.header_absent(token.text) ? Value(0) : Value();
      case Kind::kIdentifier:
        return identifier(token.text);
      case Kind::kPunct:
        if (token.text == "(") {
          Value v = conditional();
          expect(")");
          return v;
        }
        [[fallthrough]];
      default:
        failed_ = true;
        return std::nullopt;
    }
  }

  Value identifier(const std::string& name) {
    if (name == "defined") return defined();
    if (name == "true") return 1;
    if (name == "false") return 0;
    if (at("(")) {  // a function-like macro or __has_builtin(...): unknown
      skip_parenthesised();
      return std::nullopt;
    }
    auto it = model_.defined.find(name);
    if (it != model_.defined.end()) return it->second;
    return model_.undefined(name) ? Value(0) : Value();
  }

  Value defined() {
    bool parenthesised = at("(");
    if (parenthesised) take();
    Token name = take();
    if (parenthesised) expect(")");
    if (name.kind != Kind::kIdentifier) {
      failed_ = true;
      return std::nullopt;
    }
    if (model_.defined.count(name.text) != 0) return 1;
    return model_.undefined(name.text) ? Value(0) : Value();
  }

  void skip_parenthesised() {
    int depth = 0;
    do {
      if (at("(")) ++depth;
      if (at(")")) --depth;
      if (peek().kind == Kind::kEnd) {
        failed_ = true;
        return;
      }
      take();
    } while (depth > 0);
  }

  std::vector<Token> tokens_;
  const MacroModel& model_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace

Truth evaluate_condition(std::string_view condition, const MacroModel& model) {
  Value value = Parser(tokenize(condition), model).parse();
  if (!value) return Truth::kUnknown;
  return *value != 0 ? Truth::kTrue : Truth::kFalse;
}

}  // namespace weft::tools::include_check
