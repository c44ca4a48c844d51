#include "kb/gpus.hpp"

#include <charconv>

#include <fmt/format.h>

#include "kb/toml_access.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// "12.0" -> 120; "8.9" -> 89; 0 when not a compute capability.
int parse_cc(std::string_view s) {
  size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 2 != s.size()) return 0;
  int major = 0, minor = 0;
  auto r1 = std::from_chars(s.data(), s.data() + dot, major);
  auto r2 = std::from_chars(s.data() + dot + 1, s.data() + s.size(), minor);
  if (r1.ec != std::errc() || r1.ptr != s.data() + dot || r2.ec != std::errc() || r2.ptr != s.data() + s.size())
    return 0;
  return major * 10 + minor;
}

// "sm_90a" / "compute_100f" / "90" -> 90 / 100; 0 otherwise.
int parse_sm(std::string_view s) {
  if (s.starts_with("sm_")) s.remove_prefix(3);
  else if (s.starts_with("compute_")) s.remove_prefix(8);
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.remove_suffix(1);
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 10 || v > 999) return 0;
  return v;
}

// Lower case, '-'/'_' as spaces, vendor words dropped, single spaces.
std::string normalize_name(std::string_view text) {
  std::string s = to_lower(text);
  for (char& c : s)
    if (c == '-' || c == '_') c = ' ';
  std::vector<std::string> words;
  for (auto& w : split(s, ' '))
    if (w != "nvidia" && w != "geforce" && w != "tesla" && w != "quadro") words.push_back(w);
  return join(words, " ");
}

bool name_matches(const std::string& query, const std::string& name) {
  return query == name || (query.size() > name.size() && query.starts_with(name) && query[name.size()] == ' ');
}

std::vector<GpuModel> build(const Kb& kb) {
  std::vector<GpuModel> out;
  for (const toml::table* row : kb_rows(kb, "gpus", "gpu")) {
    GpuModel m;
    m.sm = parse_cc(row_str(*row, "cc"));
    m.arch = row_str(*row, "arch");
    m.segment = row_str(*row, "segment");
    m.names = row_strs(*row, "names");
    m.source = row_str(*row, "source");
    m.first_cuda = row_str(*row, "first_cuda");
    m.first_cuda_source = row_str(*row, "first_cuda_source");
    m.last_driver_branch = static_cast<int>(row_int(*row, "last_driver_branch").value_or(0));
    m.last_driver_source = row_str(*row, "last_driver_source");
    if (m.sm) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

const std::vector<GpuModel>& gpu_models(const Kb& kb) { return kb.view<std::vector<GpuModel>>("gpus", build); }

const GpuModel* gpu_model_for_sm(const Kb& kb, int sm) {
  for (const auto& m : gpu_models(kb))
    if (m.sm == sm) return &m;
  return nullptr;
}

std::string sm_name(int sm) { return fmt::format("sm_{}", sm); }
std::string cc_name(int sm) { return fmt::format("{}.{}", sm / 10, sm % 10); }

std::optional<GpuQuery> find_gpu(const Kb& kb, std::string_view text) {
  std::string_view t = trim(text);
  int sm = parse_cc(t);
  if (!sm) sm = parse_sm(to_lower(t));
  if (sm) {
    const GpuModel* m = gpu_model_for_sm(kb, sm);
    return GpuQuery{sm, "", m ? m->arch : ""};
  }
  std::string query = normalize_name(t);
  const GpuModel* best = nullptr;
  std::string best_name;
  size_t best_len = 0;
  for (const auto& m : gpu_models(kb))
    for (const auto& n : m.names) {
      std::string norm = normalize_name(n);
      if (!norm.empty() && norm.size() > best_len && name_matches(query, norm)) {
        best = &m, best_name = n, best_len = norm.size();
      }
    }
  if (!best) return std::nullopt;
  return GpuQuery{best->sm, best_name, best->arch};
}

}  // namespace cd
