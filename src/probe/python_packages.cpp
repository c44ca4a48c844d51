#include "probe/python_packages.hpp"


#include "kb/ecosystem.hpp"
#include "kb/kb.hpp"
#include "util/redact.hpp"
#include "util/strings.hpp"

namespace cd {

namespace {

bool relevant_requirement(const std::string& req_name) { return is_relevant_dist(req_name); }

// The header of a METADATA / PKG-INFO file: fields up to the first blank line.
// Only a regular file is read: a FIFO named METADATA would block every `check` on the
// machine, so it (like a device or socket) becomes a note.
std::string metadata_header(const Root& root, const std::string& path, std::vector<std::string>* notes) {
  std::string why;
  auto read = root.read(path, 256 * 1024, &why);
  if (!read && notes && why.starts_with("not a regular file")) notes->push_back(path + ": " + why + ", not read");
  std::string text = read.value_or("");
  if (auto end = text.find("\n\n"); end != std::string::npos) text.resize(end);
  return text;
}

void read_metadata(const std::string& header, PythonPackage& pkg) {
  for (const auto& line : split(header, '\n')) {
    if (line.rfind("Version:", 0) == 0 && pkg.version.empty()) pkg.version = std::string(trim(line.substr(8)));
    if (line.rfind("Requires-Dist:", 0) != 0) continue;
    std::string req(trim(line.substr(14)));
    size_t end = req.find_first_of(" ;<>=!~[(");
    // A direct reference ("torch @ https://user:token@host/…") must not carry its credentials into Facts.
    if (relevant_requirement(normalize_dist_name(req.substr(0, end)))) pkg.requires_dist.push_back(redact_value(req));
  }
}

}  // namespace


// Also every package named for a CUDA major: RAPIDS (cudf-cu12), tensorrt-cu12, spconv-cu120,
// mxnet-cu112, faiss-gpu-cu12, transformer-engine-cu12 …
bool is_relevant_dist(const std::string& n) {
  if (package_recorded(Kb::get(), n)) return true;
  for (size_t at = n.find("-cu1"); at != std::string::npos; at = n.find("-cu1", at + 1)) {
    size_t end = at + 4;
    while (end < n.size() && std::isdigit(static_cast<unsigned char>(n[end]))) ++end;
    if (end == n.size() || n[end] == '-') return true;  // "-cu12", "-cu121-…", not "-cuda-x" or "-cu1x"
  }
  return false;
}

std::vector<PythonPackage> scan_site_packages(const Root& root, const std::string& dir, std::vector<std::string>* notes) {
  std::vector<PythonPackage> out;
  for (const auto& entry : root.list(dir)) {
    bool dist_info = entry.ends_with(".dist-info");
    bool egg_info = entry.ends_with(".egg-info");
    if (!dist_info && !egg_info) continue;
    std::string stem = entry.substr(0, entry.size() - (dist_info ? 10 : 9));
    // name-version[-pyX.Y]: the name ends at the first '-' followed by a digit.
    size_t dash = std::string::npos;
    for (size_t i = 0; i + 1 < stem.size(); ++i)
      if (stem[i] == '-' && std::isdigit(static_cast<unsigned char>(stem[i + 1]))) {
        dash = i;
        break;
      }
    PythonPackage pkg;
    pkg.name = normalize_dist_name(stem.substr(0, dash));
    if (!is_relevant_dist(pkg.name)) continue;
    if (dash != std::string::npos) pkg.version = split(stem.substr(dash + 1), '-').front();
    pkg.location = dir;
    std::string path = path_join(dir, entry);
    if (metadata_read(Kb::get(), pkg.name) || pkg.version.empty()) {
      std::string meta = dist_info ? path_join(path, "METADATA") : root.is_dir(path) ? path_join(path, "PKG-INFO") : path;
      PythonPackage from_file;
      read_metadata(metadata_header(root, meta, notes), from_file);
      if (!from_file.version.empty()) pkg.version = from_file.version;
      pkg.requires_dist = std::move(from_file.requires_dist);
      if (dist_info) pkg.installer = std::string(trim(root.read(path_join(path, "INSTALLER"), 256).value_or("")));
    }
    out.push_back(std::move(pkg));
  }
  return out;
}

TorchBuild read_torch_version_py(const Root& root, const std::string& site_dir) {
  TorchBuild t;
  std::string path = path_join(site_dir, "torch/version.py");
  auto text = root.read(path, 64 * 1024);
  if (!text) return t;
  t.source = path;
  for (const auto& line : split(*text, '\n')) {
    auto eq = line.rfind('=');
    if (eq == std::string::npos) continue;
    std::string lhs(trim(std::string_view(line).substr(0, eq)));
    std::string key = lhs.substr(0, lhs.find(':'));  // "cuda: Optional[str]"
    key = std::string(trim(key));
    std::string value(trim(std::string_view(line).substr(eq + 1)));
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) value = value.substr(1, value.size() - 2);
    if (value == "None") value.clear();
    if (key == "__version__") t.version = value;
    else if (key == "cuda") t.cuda = value;
    else if (key == "hip") t.hip = value;
    else if (key == "git_version") t.git_version = value;
  }
  return t;
}

}  // namespace cd
