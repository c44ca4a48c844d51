#include "kb/ecosystem.hpp"

#include "kb/toml_access.hpp"
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

namespace {

std::string norm_name(std::string_view name) {
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
  r.name = norm_name(body.substr(0, end));
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

bool marker_applies(const std::string& marker, const std::string& machine, const std::vector<std::string>& extras) {
  if (marker.empty()) return true;
  // Each `key == "value"` clause; an `or` anywhere makes us lenient (true).
  if (marker.find(" or ") != std::string::npos) return true;
  size_t pos = 0;
  while ((pos = marker.find("==", pos)) != std::string::npos) {
    size_t key_end = pos;
    while (key_end > 0 && std::isspace(static_cast<unsigned char>(marker[key_end - 1]))) --key_end;
    size_t key_begin = key_end;
    while (key_begin > 0 && (std::isalnum(static_cast<unsigned char>(marker[key_begin - 1])) || marker[key_begin - 1] == '_'))
      --key_begin;
    std::string key = marker.substr(key_begin, key_end - key_begin);
    size_t q1 = marker.find_first_of("\"'", pos);
    size_t q2 = q1 == std::string::npos ? q1 : marker.find(marker[q1], q1 + 1);
    std::string value = q2 == std::string::npos ? "" : marker.substr(q1 + 1, q2 - q1 - 1);
    pos += 2;
    if (key == "extra" && std::find(extras.begin(), extras.end(), value) == extras.end()) return false;
    if (key == "platform_system" && value != "Linux") return false;
    if (key == "sys_platform" && value != "linux") return false;
    if (key == "os_name" && value != "posix") return false;
    if (key == "platform_machine" && !machine.empty() && value != machine) return false;
  }
  return true;
}

}  // namespace cd
