#include "util/version.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace cd {

std::optional<Version> Version::parse(std::string_view s) {
  Version v;
  v.text = std::string(s);
  if (auto plus = s.find('+'); plus != std::string_view::npos) {
    v.local = std::string(s.substr(plus + 1));
    s = s.substr(0, plus);
  }
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) s.remove_prefix(1);
  while (!s.empty()) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || n < 0) break;
    v.parts.push_back(n);
    s.remove_prefix(static_cast<size_t>(ptr - s.data()));
    if (s.empty() || s[0] != '.') break;
    s.remove_prefix(1);
  }
  if (v.parts.empty()) return std::nullopt;
  return v;
}

Version Version::from_cuda_int(int value) {
  Version v;
  v.parts = {value / 1000, (value % 1000) / 10};
  v.text = v.major_minor();
  return v;
}

std::string Version::major_minor() const { return fmt::format("{}.{}", major(), minor()); }

std::strong_ordering Version::operator<=>(const Version& o) const {
  size_t n = std::max(parts.size(), o.parts.size());
  for (size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < o.parts.size() ? o.parts[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

std::optional<Version> cuda_from_tag(std::string_view tag) {
  if (tag.size() < 4 || tag.substr(0, 2) != "cu") return std::nullopt;
  std::string_view digits = tag.substr(2);
  int n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  // The last digit is the minor version: cu118 = 11.8, cu130 = 13.0.
  auto v = Version::parse(fmt::format("{}.{}", n / 10, n % 10));
  return v;
}

bool same_version(std::string_view a, std::string_view b) {
  auto va = Version::parse(a), vb = Version::parse(b);
  if (!va || !vb || va->empty() || vb->empty()) return true;
  size_t n = std::min(va->parts.size(), vb->parts.size());
  for (size_t i = 0; i < n; ++i)
    if (va->parts[i] != vb->parts[i]) return false;
  return true;
}

}  // namespace cd
