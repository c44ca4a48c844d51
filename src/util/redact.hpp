#pragma once
// Credentials never reach Facts: `snapshot` and `check --json` write files meant to be
// shared. A variable whose name says it holds a secret loses its whole value; in any
// other value the userinfo of a URL ("https://user:pass@host") and a conda channel
// token ("/t/<token>/") are replaced by "<redacted>".
#include <string>
#include <string_view>

namespace cd {

inline constexpr std::string_view kRedacted = "<redacted>";

// KEY, TOKEN, SECRET, PASSWORD/PASSWD, CREDENTIAL, AUTH anywhere in the name (any case).
bool secret_name(std::string_view name);
// `value` with URL userinfo and conda channel tokens redacted.
std::string redact_value(std::string_view value);
// What Facts may keep of the variable `name`: kRedacted for secret names, else redact_value.
std::string redact_variable(std::string_view name, std::string_view value);

}  // namespace cd
