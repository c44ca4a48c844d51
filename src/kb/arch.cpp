#include "kb/arch.hpp"

#include <algorithm>

#include "kb/toml_access.hpp"

namespace cd {
namespace {

// "9.0" -> 90, "12.1" -> 121; 0 when unparsable.
int x10(const std::string& text) {
  auto v = Version::parse(text);
  return v ? v->major() * 10 + v->minor() : 0;
}

int cuda_int(const std::string& text) {
  auto v = Version::parse(text);
  return v ? v->cuda_int() : 0;
}

ArchRules build(const Kb& kb) {
  ArchRules r;
  for (const toml::table* row : kb_rows(kb, "arch_rules", "tegra")) {
    r.tegra.insert(x10(row_str(*row, "cc")));
    r.tegra_source = row_str(*row, "source");
  }
  for (const toml::table* row : kb_rows(kb, "arch_rules", "also_runs_on"))
    for (const auto& d : row_strs(*row, "devices")) r.also_runs_on[x10(row_str(*row, "code"))].insert(x10(d));
  for (const toml::table* row : kb_rows(kb, "arch_rules", "compression"))
    r.compression.push_back({row_str(*row, "kind"), Version::parse(row_str(*row, "min_driver")).value_or(Version{}),
                             cuda_int(row_str(*row, "min_cuda")), row_str(*row, "source")});
  for (const toml::table* row : kb_rows(kb, "arch_rules", "sm_toolkit"))
    r.toolkits.push_back({x10(row_str(*row, "sm")), Version::parse(row_str(*row, "first_cuda")).value_or(Version{}),
                          Version::parse(row_str(*row, "last_cuda")).value_or(Version{}), row_str(*row, "source")});
  for (const toml::table* row : kb_rows(kb, "ptx_isa", "ptx")) {
    r.ptx.push_back({x10(row_str(*row, "isa")), cuda_int(row_str(*row, "cuda")), row_str(*row, "source")});
    r.ptx_source = row_str(*row, "source");
  }
  std::sort(r.ptx.begin(), r.ptx.end(), [](const auto& a, const auto& b) { return a.isa < b.isa; });
  if (const toml::table* ex = kb_table(kb, "ptx_isa")["extrapolate"].as_table()) {
    r.extrapolate_isa_major = static_cast<int>(row_int(*ex, "isa_major").value_or(0));
    r.extrapolate_cuda_major = static_cast<int>(row_int(*ex, "cuda_major").value_or(0));
  }
  return r;
}

}  // namespace

const ArchRules& arch_rules(const Kb& kb) { return kb.view<ArchRules>("arch_rules", build); }

int cuda_for_ptx_isa(const ArchRules& r, int isa) {
  for (const auto& row : r.ptx)
    if (row.isa == isa) return row.cuda;
  // Newer than the table: PTX 9.N <-> CUDA 13.N.
  if (!r.ptx.empty() && isa > r.ptx.back().isa && r.extrapolate_isa_major && isa / 10 == r.extrapolate_isa_major)
    return r.extrapolate_cuda_major * 1000 + (isa % 10) * 10;
  return 0;
}

int max_ptx_isa(const ArchRules& r, int cuda) {
  int best = 0;
  for (const auto& row : r.ptx)
    if (row.cuda <= cuda) best = std::max(best, row.isa);
  // A driver newer than the table: extrapolate within the same major.
  if (!r.ptx.empty() && cuda > r.ptx.back().cuda && r.extrapolate_cuda_major && cuda / 1000 == r.extrapolate_cuda_major)
    best = std::max(best, r.extrapolate_isa_major * 10 + (cuda % 1000) / 10);
  return best;
}

const CompressionFloor* compression_floor(const ArchRules& r, const std::string& kind) {
  for (const auto& c : r.compression)
    if (c.kind == kind) return &c;
  return nullptr;
}

const SmToolkit* toolkit_for_sm(const ArchRules& r, int sm) {
  for (const auto& t : r.toolkits)
    if (t.sm == sm) return &t;
  return nullptr;
}

}  // namespace cd
