// Redaction scans the value once: at each "://" the authority that follows (up to the
// next '/', '?', '#' or separator) loses everything up to its last '@'; at each "/t/"
// the path segment that follows is a conda channel token (conda writes channel URLs as
// https://conda.anaconda.org/t/<token>/<channel>), looked for only inside a URL so that
// /home/t/bin stays. A false positive costs a readable value, never a leak.
#include "util/redact.hpp"

#include "util/strings.hpp"

namespace cd {

bool secret_name(std::string_view name) {
  std::string n = to_lower(name);
  for (std::string_view word : {"key", "token", "secret", "password", "passwd", "credential", "auth"})
    if (contains(n, word)) return true;
  return false;
}

std::string redact_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  size_t i = 0;
  bool in_url = false;  // from "://" to the next blank or list separator
  while (i < value.size()) {
    char c = value[i];
    if (c == ' ' || c == ';' || c == ',' || c == '\n' || c == '\t') in_url = false;
    if (value.substr(i, 3) == "://") {
      in_url = true;
      out += "://";
      i += 3;
      // The authority ends at '/', '?', '#' or a separator between list items (PATH-like ':'
      // is not one here: "user:pass@host" has a ':' inside the authority).
      size_t end = i;
      while (end < value.size() && value[end] != '/' && value[end] != '?' && value[end] != '#' && value[end] != ' ' &&
             value[end] != ';' && value[end] != ',' && value[end] != '\n')
        ++end;
      std::string_view authority = value.substr(i, end - i);
      if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        out += kRedacted;
        out += authority.substr(at);
      } else {
        out += authority;
      }
      i = end;
      continue;
    }
    if (in_url && value.substr(i, 3) == "/t/") {
      size_t start = i + 3, end = start;
      while (end < value.size() && value[end] != '/' && value[end] != ':' && value[end] != ' ') ++end;
      if (end > start) {
        out += "/t/";
        out += kRedacted;
        i = end;
        continue;
      }
    }
    out += value[i++];
  }
  return out;
}

std::string redact_variable(std::string_view name, std::string_view value) {
  if (secret_name(name)) return value.empty() ? std::string() : std::string(kRedacted);
  return redact_value(value);
}

}  // namespace cd
