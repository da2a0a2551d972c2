// Cleaning, renaming and calling foreign StableHLO modules (foreign.h).
// The text is handled as text: a small scanner that knows strings, nesting
// and symbol references is all inlining needs, and it keeps the core free
// of an MLIR dependency.
#include "ops/foreign/foreign.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace ops::foreign {

using shlo::DType;
using shlo::Type;

namespace {

[[noreturn]] void fail(const std::string& why) { throw std::invalid_argument("foreign StableHLO module: " + why); }

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '-';
}

// Index just past the string literal opening at s[i] == '"'.
size_t skip_string(const std::string& s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  fail("unterminated string literal");
}

// Index of the bracket closing the one at s[i] (strings skipped, all four
// bracket kinds nested).
size_t closing(const std::string& s, size_t i) {
  std::string stack;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      i = skip_string(s, i);
      continue;
    }
    if (c == '(' || c == '{' || c == '[' || c == '<') {
      stack += c;
    } else if (c == ')' || c == '}' || c == ']' || (c == '>' && !stack.empty() && stack.back() == '<')) {
      // '>' that closes nothing is an arrow ("->"), not a bracket.
      static const std::string open = "({[<", close = ")}]>";
      if (stack.empty() || open.find(stack.back()) != close.find(c)) fail("unbalanced brackets");
      stack.pop_back();
      if (stack.empty()) return i;
    }
    ++i;
  }
  fail("unbalanced brackets");
}

// Drops location information: the "#loc..." alias lines and every loc(...)
// suffix. Locations name the caller's source lines, which would make the
// digest (and so the cache key) differ for the same function, and two
// modules' #loc aliases would collide in one program.
std::string strip_locations(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      size_t j = skip_string(s, i);
      out.append(s, i, j - i);
      i = j;
    } else if ((i == 0 || s[i - 1] == '\n') && s.compare(i, 4, "#loc") == 0) {
      while (i < s.size() && s[i] != '\n') i = s[i] == '"' ? skip_string(s, i) : i + 1;
      ++i;
    } else if (s.compare(i, 4, "loc(") == 0 && (i == 0 || !ident_char(s[i - 1]))) {
      i = closing(s, i + 3) + 1;
      while (!out.empty() && out.back() == ' ') out.pop_back();
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

size_t skip_space(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// A symbol name at s[i] (just past '@'): bare or quoted. Returns its end.
size_t symbol_end(const std::string& s, size_t i) {
  if (i < s.size() && s[i] == '"') return skip_string(s, i);
  while (i < s.size() && ident_char(s[i])) ++i;
  return i;
}

std::string unquote(const std::string& name) {
  return name.size() >= 2 && name.front() == '"' ? name.substr(1, name.size() - 2) : name;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string digest_of(const std::string& s) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(fnv1a(s, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a(s, 0x84222325cbf29ce4ull)));
  return buf;
}

// Splits a bracketed list's inside at its top-level commas.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      i = skip_string(s, i);
    } else if (c == '(' || c == '{' || c == '[' || c == '<') {
      i = closing(s, i) + 1;
    } else if (c == ',') {
      parts.push_back(s.substr(start, i - start));
      start = ++i;
    } else {
      ++i;
    }
  }
  if (s.find_first_not_of(" \n\t", start) != std::string::npos) parts.push_back(s.substr(start));
  return parts;
}

// The type at the start of s (up to a top-level space: attributes follow).
Type leading_type(const std::string& s) {
  size_t i = skip_space(s, 0), start = i;
  while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) i = s[i] == '<' ? closing(s, i) + 1 : i + 1;
  return parse_type(s.substr(start, i - start));
}

}  // namespace

Type parse_type(const std::string& text) {
  if (text.rfind("tensor<", 0) != 0 || text.back() != '>')
    fail("unsupported argument or result type " + text + " (only ranked tensors are)");
  std::string in = text.substr(7, text.size() - 8);
  if (in.find(',') != std::string::npos) fail("tensor encodings are not supported: " + text);
  Type t;
  size_t i = 0;
  while (true) {
    if (i < in.size() && in[i] == '?') fail("dynamic shapes are not supported: " + text);
    size_t j = i;
    while (j < in.size() && std::isdigit(static_cast<unsigned char>(in[j]))) ++j;
    if (j == i || j >= in.size() || in[j] != 'x') break;
    t.shape.push_back(std::stoll(in.substr(i, j - i)));
    i = j + 1;
  }
  std::string el = in.substr(i);
  static const DType all[] = {DType::PRED, DType::S8,  DType::S16, DType::S32, DType::S64,
                              DType::U8,   DType::U16, DType::U32, DType::U64, DType::F16,
                              DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};
  for (DType d : all)
    if (el == shlo::dtype_name(d)) {
      t.dtype = d;
      return t;
    }
  fail("element type " + el + " has no torch dtype (in " + text + ")");
}

Module prepare(const std::string& raw) {
  std::string s = strip_locations(raw);
  Module m;
  m.digest = digest_of(s);
  const std::string prefix = "jx_" + m.digest + "_";

  // module [@name] [attributes {...}] { body }
  size_t i = skip_space(s, 0);
  if (s.compare(i, 6, "module") != 0 || (i + 6 < s.size() && ident_char(s[i + 6])))
    fail("expected the text to start with 'module' (the module as jax.export's mlir_module() prints it)");
  i = skip_space(s, i + 6);
  if (i < s.size() && s[i] == '@') i = skip_space(s, symbol_end(s, i + 1));
  if (s.compare(i, 10, "attributes") == 0) {
    i = skip_space(s, i + 10);
    if (i >= s.size() || s[i] != '{') fail("malformed module attributes");
    i = skip_space(s, closing(s, i) + 1);  // module attributes are dropped: ours apply
  }
  if (i >= s.size() || s[i] != '{') fail("expected the module's body");
  size_t end = closing(s, i);
  if (skip_space(s, end + 1) != s.size()) fail("unexpected text after the module (attribute or type aliases?)");
  std::string body = s.substr(i + 1, end - i - 1);

  // Symbols the module defines: the first symbol of each top-level line.
  std::set<std::string> defined;
  size_t main_at = std::string::npos;
  {
    int depth = 0;
    bool seen = false;
    for (size_t k = 0; k < body.size();) {
      char c = body[k];
      if (c == '"') {
        k = skip_string(body, k);
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (c == '\n') seen = false;
      if (c == '@' && depth == 0 && !seen) {
        size_t e = symbol_end(body, k + 1);
        std::string name = unquote(body.substr(k + 1, e - k - 1));
        defined.insert(name);
        if (name == "main") main_at = e;
        seen = true;
        k = e;
        continue;
      }
      ++k;
    }
  }
  if (main_at == std::string::npos) fail("no @main function");

  // The entry's signature: @main(args) -> results.
  {
    size_t k = main_at;
    if (k >= body.size() || body[k] != '(') fail("malformed @main signature");
    size_t close = closing(body, k);
    for (const std::string& a : split_top(body.substr(k + 1, close - k - 1))) {
      size_t colon = a.find(':');
      if (colon == std::string::npos) fail("malformed @main argument: " + a);
      m.inputs.push_back(leading_type(a.substr(colon + 1)));
    }
    k = skip_space(body, close + 1);
    if (body.compare(k, 2, "->") == 0) {
      k = skip_space(body, k + 2);
      if (body[k] == '(') {
        size_t rc = closing(body, k);
        for (const std::string& r : split_top(body.substr(k + 1, rc - k - 1))) m.outputs.push_back(leading_type(r));
      } else {
        m.outputs.push_back(leading_type(body.substr(k)));
      }
    }
  }

  // Rename the defined symbols everywhere and make every function private:
  // only our @main may be public, and the prefix keeps two modules apart.
  std::string out;
  out.reserve(body.size() + 64);
  int depth = 0;
  for (size_t k = 0; k < body.size();) {
    char c = body[k];
    if (c == '"') {
      size_t e = skip_string(body, k);
      out.append(body, k, e - k);
      k = e;
      continue;
    }
    if (c == '@') {
      size_t e = symbol_end(body, k + 1);
      std::string name = unquote(body.substr(k + 1, e - k - 1));
      if (defined.count(name)) {
        bool quoted = body[k + 1] == '"';
        out += quoted ? "@\"" + prefix + name + "\"" : "@" + prefix + name;
      } else {
        out.append(body, k, e - k);
      }
      k = e;
      continue;
    }
    if (depth == 0 && body.compare(k, 9, "func.func") == 0 && (k == 0 || !ident_char(body[k - 1])) &&
        k + 9 < body.size() && body[k + 9] == ' ') {
      out += "func.func ";
      k = skip_space(body, k + 9);
      if (body.compare(k, 6, "public") == 0) {
        k = skip_space(body, k + 6);
      } else if (body.compare(k, 7, "private") == 0) {
        k = skip_space(body, k + 7);
      } else if (body[k] != '@') {
        fail("unexpected function visibility");
      }
      out += "private ";
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') --depth;
    out += c;
    ++k;
  }
  m.entry = prefix + "main";
  m.functions = std::move(out);
  return m;
}

namespace {
std::mutex g_mu;
std::unordered_map<std::string, std::shared_ptr<const Module>>& table() {
  static auto* t = new std::unordered_map<std::string, std::shared_ptr<const Module>>();
  return *t;
}
}  // namespace

std::shared_ptr<const Module> add(const std::string& text) {
  auto m = std::make_shared<const Module>(prepare(text));
  std::lock_guard<std::mutex> lock(g_mu);
  auto [it, fresh] = table().emplace(m->digest, m);
  return it->second;
}

std::shared_ptr<const Module> find(const std::string& digest) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = table().find(digest);
  if (it == table().end()) fail("no module with digest " + digest + " was added in this process");
  return it->second;
}

std::vector<shlo::Value> call(shlo::Builder& b, const std::vector<shlo::Value>& in, const std::string& digest) {
  std::shared_ptr<const Module> m = find(digest);
  if (in.size() != m->inputs.size()) fail("wrong number of operands for " + m->entry);
  b.add_functions(m->digest, m->functions);
  return b.call(m->entry, in, m->outputs);
}

}  // namespace ops::foreign
