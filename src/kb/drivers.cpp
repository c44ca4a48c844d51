#include "kb/drivers.hpp"

#include <algorithm>

#include "kb/toml_access.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

Version ver(const std::string& s) { return Version::parse(s).value_or(Version{}); }

DriversKb build_drivers(const Kb& kb) {
  DriversKb d;
  for (const toml::table* row : kb_rows(kb, "cuda_drivers", "release"))
    d.releases.push_back({ver(row_str(*row, "cuda")), row_str(*row, "release"), ver(row_str(*row, "linux_min")),
                          row_str(*row, "windows_min"), row_str(*row, "source")});
  for (const toml::table* row : kb_rows(kb, "cuda_drivers", "minor_compat"))
    d.minor_compat.push_back({static_cast<int>(row_int(*row, "major").value_or(0)), ver(row_str(*row, "linux_min")),
                              row_str(*row, "windows_min"), row_str(*row, "source")});
  for (const toml::table* row : kb_rows(kb, "cuda_drivers", "branch"))
    d.branches.push_back({static_cast<int>(row_int(*row, "branch").value_or(0)), ver(row_str(*row, "cuda")),
                          row_str(*row, "source")});
  std::sort(d.branches.begin(), d.branches.end(), [](auto& a, auto& b) { return a.branch < b.branch; });
  for (const toml::table* row : kb_rows(kb, "cuda_drivers", "datacenter_gpu")) {
    d.datacenter_patterns.push_back(row_str(*row, "pattern"));
    if (d.datacenter_source.empty()) d.datacenter_source = row_str(*row, "source");
  }
  if (const toml::table* def = kb_table(kb, "cuda_drivers")["defaults"].as_table())
    d.default_branch = static_cast<int>(row_int(*def, "driver_branch").value_or(d.default_branch));
  return d;
}

// "NVIDIA A100-SXM4-80GB" -> " nvidia a100 sxm4 80gb ": patterns match whole words.
std::string words(const std::string& s) {
  std::string out = " ";
  for (char c : to_lower(s)) out += (c == '-' || c == '_') ? ' ' : c;
  return out + " ";
}

}  // namespace

const DriversKb& drivers_kb(const Kb& kb) { return kb.view<DriversKb>("drivers", build_drivers); }

const CudaRelease* first_release(const DriversKb& d, const Version& cuda) {
  const CudaRelease* best = nullptr;
  for (const auto& r : d.releases)
    if (r.cuda.major() == cuda.major() && r.cuda.minor() == cuda.minor())
      if (!best || r.linux_min < best->linux_min) best = &r;
  return best;
}

const MinorCompatFloor* minor_compat_floor(const DriversKb& d, int cuda_major) {
  for (const auto& f : d.minor_compat)
    if (f.major == cuda_major) return &f;
  return nullptr;
}

std::optional<BranchCuda> cuda_for_driver(const DriversKb& d, const Version& driver) {
  if (driver.empty()) return std::nullopt;
  const DriverBranch* best = nullptr;
  for (const auto& b : d.branches)
    if (b.branch <= driver.major()) best = &b;
  if (!best) return std::nullopt;
  return BranchCuda{best->cuda, best->branch == driver.major(), best->source};
}

int branch_for_cuda(const DriversKb& d, const Version& cuda) {
  for (const auto& b : d.branches)
    if (b.cuda.cuda_int() >= cuda.cuda_int()) return b.branch;
  return 0;
}

bool is_datacenter_gpu(const DriversKb& d, const std::string& name) {
  std::string n = words(name);
  return std::any_of(d.datacenter_patterns.begin(), d.datacenter_patterns.end(),
                     [&](const std::string& p) { return !p.empty() && contains(n, words(p)); });
}

const std::vector<NvmlErrorInfo>& nvml_errors(const Kb& kb) {
  return kb.view<std::vector<NvmlErrorInfo>>("nvml_errors", [](const Kb& k) {
    std::vector<NvmlErrorInfo> out;
    for (const toml::table* row : kb_rows(k, "nvml_errors", "error"))
      out.push_back({static_cast<int>(row_int(*row, "code").value_or(-1)), row_str(*row, "name"),
                     row_str(*row, "meaning"), row_str(*row, "finding"), row_str(*row, "source")});
    return out;
  });
}

const NvmlErrorInfo* find_nvml_error(const Kb& kb, int code) {
  for (const auto& e : nvml_errors(kb))
    if (e.code == code) return &e;
  return nullptr;
}

}  // namespace cd
