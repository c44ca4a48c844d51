#pragma once
// Typed view over data/errors.toml: the log signatures `explain` matches and the
// Xid catalog the log rules use.
#include <string>
#include <string_view>
#include <vector>

#include "facts/finding.hpp"
#include "kb/kb.hpp"

namespace cd {

enum class SignatureRole { cause, consequence, context };

struct ErrorSignature {
  std::string name;
  std::string id;       // finding id
  std::string pattern;  // RE2, one cleaned line
  std::string repeat;   // optional RE2 applied repeatedly for list captures
  std::string title;    // templates with {capture}
  std::string explanation;
  std::vector<std::string> fix;
  Severity severity = Severity::error;
  SignatureRole role = SignatureRole::cause;
  int priority = 50;     // lower = more likely the root cause
  bool generic = false;  // yields to a specific signature on the same line
  std::string source;
};

struct XidInfo {
  int code = 0;
  std::string meaning;
  bool hardware = false;
  std::string source;
};

// All signatures, in file order. Throws InputError when a row lacks name/id/pattern/source.
const std::vector<ErrorSignature>& error_signatures(const Kb& kb);
const ErrorSignature* find_signature(const Kb& kb, std::string_view name);
const XidInfo* find_xid(const Kb& kb, int code);

// Replaces {name} with captures[name] (unknown names become "").
std::string fill_template(std::string_view text, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace cd
