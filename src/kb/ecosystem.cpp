#include "kb/ecosystem.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "kb/toml_access.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

const std::vector<EcosystemPin>& ecosystem_pins(const Kb& kb) {
  return kb.view<std::vector<EcosystemPin>>("ecosystem", [](const Kb& k) {
    std::vector<EcosystemPin> rows;
    for (const toml::table* r : kb_rows(k, "ecosystem", "pin")) {
      EcosystemPin p;
      p.package = row_str(*r, "package");
      p.version = row_str(*r, "version");
      p.torch = row_str(*r, "torch");
      p.match = row_str(*r, "match", "exact");
      p.cuda = row_strs(*r, "cuda");
      p.min_cuda = row_str(*r, "min_cuda");
      p.source = row_str(*r, "source");
      rows.push_back(std::move(p));
    }
    return rows;
  });
}

std::optional<EcosystemPin> ecosystem_pin(const Kb& kb, const std::string& package, const std::string& version) {
  std::string plain = version.substr(0, version.find('+'));
  std::optional<EcosystemPin> best;
  for (const auto& p : ecosystem_pins(kb)) {
    if (p.package != package) continue;
    if (p.version == plain) return p;
    bool series = plain.size() > p.version.size() && plain.compare(0, p.version.size(), p.version) == 0 &&
                  plain[p.version.size()] == '.';
    if (series && (!best || p.version.size() > best->version.size())) best = p;
  }
  return best;
}

bool pin_satisfied(const EcosystemPin& pin, const std::string& torch_version) {
  auto have = Version::parse(torch_version);
  auto want = Version::parse(pin.torch);
  if (!have || !want) return true;  // nothing to compare: do not accuse
  if (pin.match == "minimum") return *have >= *want;
  if (pin.match == "minor") return have->major() == want->major() && have->minor() == want->minor();
  return *have == *want;
}

}  // namespace cd

namespace cd {

std::string normalize_dist_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '_' || c == '.' || c == '-') {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

namespace {

std::string strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool clause_allows(std::string clause, const Version& have) {
  clause = strip(clause);
  static const char* ops[] = {"===", "==", "!=", ">=", "<=", "~=", ">", "<"};
  std::string op;
  for (const char* o : ops)
    if (clause.rfind(o, 0) == 0) {
      op = o;
      break;
    }
  if (op.empty()) return true;
  std::string value = strip(clause.substr(op.size()));
  if (value.ends_with(".*")) {  // ==2.11.* : prefix match on the components given
    auto want = Version::parse(value.substr(0, value.size() - 2));
    if (!want) return true;
    bool match = true;
    for (size_t i = 0; i < want->parts.size(); ++i)
      match = match && i < have.parts.size() && have.parts[i] == want->parts[i];
    return op == "!=" ? !match : match;
  }
  auto want = Version::parse(value);
  if (!want) return true;
  if (op == "==" || op == "===") return have == *want;
  if (op == "!=") return !(have == *want);
  if (op == ">=") return have >= *want;
  if (op == "<=") return have <= *want;
  if (op == ">") return have > *want;
  if (op == "<") return have < *want;
  // ~=X.Y.Z: >= X.Y.Z and == X.Y.*
  if (have < *want) return false;
  for (size_t i = 0; i + 1 < want->parts.size(); ++i)
    if (i >= have.parts.size() || have.parts[i] != want->parts[i]) return false;
  return true;
}

}  // namespace

Requirement parse_requirement(const std::string& line) {
  Requirement r;
  r.text = line;
  std::string body = line;
  if (auto semi = body.find(';'); semi != std::string::npos) {
    r.marker = strip(body.substr(semi + 1));
    body = body.substr(0, semi);
  }
  size_t end = body.find_first_of(" [(<>=!~");
  r.name = normalize_dist_name(body.substr(0, end));
  std::string rest = end == std::string::npos ? "" : body.substr(end);
  if (auto open = rest.find('['); open != std::string::npos) {
    auto close = rest.find(']', open);
    std::string extras = rest.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    size_t start = 0;
    while (start <= extras.size()) {
      size_t comma = extras.find(',', start);
      std::string e = strip(extras.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (!e.empty()) r.extras.push_back(e);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    rest = close == std::string::npos ? "" : rest.substr(close + 1);
  }
  std::string spec;
  for (char c : rest)
    if (c != '(' && c != ')' && !std::isspace(static_cast<unsigned char>(c))) spec.push_back(c);
  r.specifier = spec;
  return r;
}

bool specifier_allows(const std::string& specifier, const std::string& version) {
  auto have = Version::parse(version);
  if (!have || specifier.empty()) return true;
  size_t start = 0;
  while (start <= specifier.size()) {
    size_t comma = specifier.find(',', start);
    if (!clause_allows(specifier.substr(start, comma == std::string::npos ? std::string::npos : comma - start), *have))
      return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

namespace {

// A small evaluator for PEP 508 environment markers: `or`, `and`, parentheses and
// `name op "value"` comparisons. Variables we cannot know (python_version without an
// interpreter) compare as true, so an unknown clause never hides a requirement.
class MarkerEval {
 public:
  MarkerEval(std::string_view text, const std::string& machine, const std::vector<std::string>& extras)
      : s_(text), machine_(machine), extras_(extras) {}

  bool run() { return or_expr(); }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool word(std::string_view w) {
    skip();
    if (s_.substr(i_, w.size()) != w) return false;
    size_t end = i_ + w.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    i_ = end;
    return true;
  }
  bool or_expr() {
    bool v = and_expr();
    while (word("or")) v = and_expr() || v;
    return v;
  }
  bool and_expr() {
    bool v = atom();
    while (word("and")) v = atom() && v;
    return v;
  }
  bool atom() {
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      if (++depth_ > kMaxDepth) {  // hostile nesting: stop, and hide nothing
        i_ = s_.size();
        return true;
      }
      bool v = or_expr();
      --depth_;
      skip();
      if (i_ < s_.size() && s_[i_] == ')') ++i_;
      return v;
    }
    std::string lhs = operand();
    std::string op = oper();
    std::string rhs = operand();
    return compare(lhs, op, rhs);
  }
  std::string operand() {
    skip();
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
      char q = s_[i_++];
      size_t end = s_.find(q, i_);
      std::string v(s_.substr(i_, end == std::string_view::npos ? std::string_view::npos : end - i_));
      i_ = end == std::string_view::npos ? s_.size() : end + 1;
      return "\"" + v;  // a leading quote marks a literal
    }
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.')) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  std::string oper() {
    skip();
    for (std::string_view op : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"})
      if (s_.substr(i_, op.size()) == op) {
        i_ += op.size();
        return std::string(op);
      }
    if (word("not")) {
      word("in");
      return "not in";
    }
    if (word("in")) return "in";
    if (i_ < s_.size()) ++i_;  // unknown: consume a character so parsing always advances
    return "?";
  }
  // The value of a marker variable; nullopt when unknown.
  std::optional<std::string> variable(const std::string& name) const {
    if (name == "sys_platform") return std::string("linux");
    if (name == "platform_system") return std::string("Linux");
    if (name == "os_name") return std::string("posix");
    if (name == "platform_machine" && !machine_.empty()) return machine_;
    return std::nullopt;
  }
  bool compare(const std::string& lhs, const std::string& op, const std::string& rhs) const {
    bool lit_l = !lhs.empty() && lhs[0] == '"', lit_r = !rhs.empty() && rhs[0] == '"';
    std::string var = lit_l ? rhs : lhs;
    std::string value = (lit_l ? lhs : rhs).substr(lit_l || lit_r ? 1 : 0);
    if (var == "extra") {
      bool has = std::find(extras_.begin(), extras_.end(), value) != extras_.end();
      return op == "!=" ? !has : has;
    }
    auto known = variable(var);
    if (!known) return true;
    if (op == "==" || op == "===") return *known == value;
    if (op == "!=") return *known != value;
    if (op == "in") return lit_l ? contains(value, *known) || contains(*known, value) : contains(value, *known);
    if (op == "not in") return !contains(value, *known);
    return true;
  }

  static constexpr int kMaxDepth = 32;  // real markers nest two or three deep
  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
  const std::string& machine_;
  const std::vector<std::string>& extras_;
};

}  // namespace

bool marker_applies(const std::string& marker, const std::string& machine, const std::vector<std::string>& extras) {
  if (marker.empty()) return true;
  return MarkerEval(marker, machine, extras).run();
}

const std::vector<CpuPackage>& cpu_packages(const Kb& kb) {
  return kb.view<std::vector<CpuPackage>>("cpu_packages", [](const Kb& k) {
    std::vector<CpuPackage> out;
    for (const toml::table* row : kb_rows(k, "ecosystem", "cpu_package"))
      out.push_back({row_str(*row, "name"), row_str(*row, "unless"), row_str(*row, "why"), row_strs(*row, "fix"),
                     row_str(*row, "source")});
    return out;
  });
}

namespace {

// The `packages` list of an ecosystem.toml table such as [pinned].
const std::vector<std::string>& package_list(const Kb& kb, const char* table) {
  return kb.view<std::vector<std::string>>(std::string("ecosystem.") + table, [table](const Kb& k) {
    const toml::table* t = kb_table(k, "ecosystem")[table].as_table();
    return t ? row_strs(*t, "packages") : std::vector<std::string>{};
  });
}

}  // namespace

bool package_pattern_matches(const std::string& pattern, const std::string& package) {
  return pattern == package || (pattern.ends_with('*') && package.starts_with(pattern.substr(0, pattern.size() - 1)));
}

bool pins_checked(const Kb& kb, const std::string& package) {
  for (const auto& n : package_list(kb, "pinned"))
    if (package_pattern_matches(n, package)) return true;
  return false;
}

bool package_recorded(const Kb& kb, const std::string& package) {
  for (const auto& n : package_list(kb, "recorded"))
    if (package_pattern_matches(n, package)) return true;
  return false;
}

bool metadata_read(const Kb& kb, const std::string& package) {
  for (const auto& n : package_list(kb, "metadata_read"))
    if (package_pattern_matches(n, package)) return true;
  return false;
}

int framework_rank(const Kb& kb, const std::string& package) {
  const auto& names = package_list(kb, "frameworks");
  for (size_t i = 0; i < names.size(); ++i)
    if (package_pattern_matches(names[i], package)) return static_cast<int>(i);
  return -1;
}

}  // namespace cd
