// Where `scan` looks when no path is named: every Python environment's site-packages and
// each CUDA toolkit's library directories, as host paths of the directories that exist.
#include <set>

#include "probe/probe.hpp"

namespace cd {

std::vector<std::string> default_scan_paths(Facts& facts, const ProbeOptions& opts) {
  probe_pythons(facts, opts);
  probe_toolkits(facts, opts);
  const Root& root = opts.root;
  std::vector<std::string> in_root;
  for (const auto& env : facts.pythons) in_root.insert(in_root.end(), env.site_packages.begin(), env.site_packages.end());
  for (const auto& tk : facts.toolkit.toolkits) {
    in_root.push_back(path_join(tk.root, "lib64"));
    for (const auto& target : root.list(path_join(tk.root, "targets"))) in_root.push_back(path_join(tk.root, "targets/" + target + "/lib"));
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : in_root) {
    std::string host = root.host_path(p);
    if (root.is_dir(p) && seen.insert(host).second) out.push_back(host);
  }
  return out;
}

}  // namespace cd
