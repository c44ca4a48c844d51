#pragma once
// Dotted versions as the CUDA world writes them: "580.159.04", "12.4", "13000"
// (cuDriverGetVersion), "2.11.0+cu130", "9.19.0.56".
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

struct Version {
  std::vector<int> parts;  // numeric components, e.g. {580, 159, 4}
  std::string local;       // text after '+', e.g. "cu130"
  std::string text;        // as written

  static std::optional<Version> parse(std::string_view s);
  // 12040 -> 12.4 (cuDriverGetVersion / CUDA_VERSION encoding: 1000*major + 10*minor).
  static Version from_cuda_int(int v);

  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() > 1 ? parts[1] : 0; }
  int patch() const { return parts.size() > 2 ? parts[2] : 0; }
  int cuda_int() const { return major() * 1000 + minor() * 10; }
  std::string major_minor() const;
  bool empty() const { return parts.empty(); }

  // Compares numerically; missing components count as 0. `local` is ignored.
  std::strong_ordering operator<=>(const Version& o) const;
  bool operator==(const Version& o) const { return (*this <=> o) == 0; }
};

// Equal on the components both name ("9.19.0" == "9.19.0.56", "13" == "13.1.0.3"); a version
// that does not parse counts as equal (unknown is no evidence of a difference).
bool same_version(std::string_view a, std::string_view b);

// "cu130" -> 13.0, "cu121" -> 12.1, "cu118" -> 11.8; nullopt for "cpu" etc.
std::optional<Version> cuda_from_tag(std::string_view tag);

}  // namespace cd
