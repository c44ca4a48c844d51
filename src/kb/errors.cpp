#include "kb/errors.hpp"

#include <fmt/format.h>

#include "kb/toml_access.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

Severity severity_of(const std::string& s, const std::string& name) {
  if (s.empty() || s == "error") return Severity::error;
  if (s == "warning") return Severity::warning;
  if (s == "info") return Severity::info;
  throw InputError(fmt::format("errors.toml: signature {}: unknown severity '{}'", name, s));
}

SignatureRole role_of(const std::string& s, const std::string& name) {
  if (s.empty() || s == "cause") return SignatureRole::cause;
  if (s == "consequence") return SignatureRole::consequence;
  if (s == "context") return SignatureRole::context;
  throw InputError(fmt::format("errors.toml: signature {}: unknown role '{}'", name, s));
}

std::vector<ErrorSignature> build_signatures(const Kb& kb) {
  std::vector<ErrorSignature> out;
  for (const toml::table* row : kb_rows(kb, "errors", "signature")) {
    ErrorSignature s;
    s.name = row_str(*row, "name");
    s.id = row_str(*row, "id");
    s.pattern = row_str(*row, "pattern");
    s.source = row_str(*row, "source");
    if (s.name.empty() || s.id.empty() || s.pattern.empty() || s.source.empty())
      throw InputError(fmt::format("errors.toml: signature #{} needs name, id, pattern and source", out.size() + 1));
    s.repeat = row_str(*row, "repeat");
    s.title = row_str(*row, "title", s.name);
    s.explanation = row_str(*row, "explanation");
    s.fix = row_strs(*row, "fix");
    s.severity = severity_of(row_str(*row, "severity"), s.name);
    s.role = role_of(row_str(*row, "role"), s.name);
    s.priority = static_cast<int>(row_int(*row, "priority").value_or(50));
    s.generic = (*row)["generic"].value<bool>().value_or(false);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<XidInfo> build_xids(const Kb& kb) {
  std::vector<XidInfo> out;
  for (const toml::table* row : kb_rows(kb, "errors", "xid")) {
    XidInfo x;
    x.code = static_cast<int>(row_int(*row, "code").value_or(0));
    x.meaning = row_str(*row, "meaning");
    x.hardware = (*row)["hardware"].value<bool>().value_or(false);
    x.source = row_str(*row, "source");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

const std::vector<ErrorSignature>& error_signatures(const Kb& kb) {
  return kb.view<std::vector<ErrorSignature>>("errors.signatures", build_signatures);
}

const ErrorSignature* find_signature(const Kb& kb, std::string_view name) {
  for (const auto& s : error_signatures(kb))
    if (s.name == name) return &s;
  return nullptr;
}

const XidInfo* find_xid(const Kb& kb, int code) {
  const auto& xids = kb.view<std::vector<XidInfo>>("errors.xids", build_xids);
  for (const auto& x : xids)
    if (x.code == code) return &x;
  return nullptr;
}

std::string fill_template(std::string_view text, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    size_t close = text[i] == '{' ? text.find('}', i) : std::string_view::npos;
    std::string_view key = close == std::string_view::npos ? std::string_view() : text.substr(i + 1, close - i - 1);
    bool is_name = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
    if (!is_name) {
      out += text[i];
      continue;
    }
    for (const auto& [k, v] : values)
      if (k == key) {
        out += v;
        break;
      }
    i = close;
  }
  return out;
}

}  // namespace cd
