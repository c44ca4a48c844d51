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
