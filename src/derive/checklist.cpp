#include "derive/checklist.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kb/ecosystem.hpp"

namespace cd {
namespace {

using Kind = CheckItem::Kind;

// Whether `text` holds `key` as a whole word or path: "GPU 1" is not in "GPU 10",
// "/opt/env" is not in "/opt/env2" but is in "/opt/env/lib" when `path` allows a '/' after it.
bool mentions(const std::string& text, const std::string& key, bool path) {
  if (key.empty()) return false;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    size_t end = at + key.size();
    if (end == text.size()) return true;
    unsigned char next = static_cast<unsigned char>(text[end]);
    if (next == '/') {
      if (path) return true;
      continue;
    }
    if (!std::isalnum(next) && next != '.' && next != '-' && next != '_') return true;
  }
  return false;
}

bool finding_mentions(const Finding& f, const std::string& key, bool path) {
  if (mentions(f.subject, key, path) || mentions(f.title, key, path)) return true;
  for (const auto& e : f.evidence)
    if (mentions(e.fact, key, path) || mentions(e.source, key, path)) return true;
  return false;
}

// The group of items a finding's layer belongs to.
enum class Group { driver, gpu, toolkit, env, none };

Group group_of(const std::string& layer) {
  if (layer == "driver" || layer == "platform") return Group::driver;
  if (layer == "device" || layer == "memory" || layer == "perf" || layer == "nccl") return Group::gpu;
  if (layer == "toolkit") return Group::toolkit;
  if (layer == "framework" || layer == "arch" || layer == "libs") return Group::env;
  return Group::none;
}

Group group_of(Kind k) {
  switch (k) {
    case Kind::driver: return Group::driver;
    case Kind::gpu:
    case Kind::no_gpu: return Group::gpu;
    case Kind::toolkit:
    case Kind::no_toolkit: return Group::toolkit;
    case Kind::env: return Group::env;
  }
  return Group::none;
}

// Whether the item names what the finding is about (the item's key in its text).
bool about(const CheckItem& item, const Finding& f, const Model& m) {
  switch (item.kind) {
    case Kind::gpu: return finding_mentions(f, fmt::format("GPU {}", m.gpus[item.index].index), false);
    case Kind::toolkit: return finding_mentions(f, m.facts.toolkit.toolkits[item.index].root, true);
    case Kind::env: {
      const PythonEnv& py = *m.envs[item.index].env;
      for (const auto& sp : py.site_packages)
        if (finding_mentions(f, sp, true)) return true;
      return finding_mentions(f, py.prefix, false) || finding_mentions(f, py.interpreter, false);
    }
    default: return false;
  }
}

void add_env(CheckItem& item, const Model& m, const Kb& kb) {
  const EnvModel& env = m.envs[item.index];
  for (const auto& p : env.env->packages)
    if (framework_rank(kb, p.name) >= 0) item.frameworks.push_back(&p);
    else ++item.other_packages;
  std::stable_sort(item.frameworks.begin(), item.frameworks.end(), [&](const PythonPackage* a, const PythonPackage* b) {
    return framework_rank(kb, a->name) < framework_rank(kb, b->name);
  });
  for (const auto& t : m.targets) item.kernels.push_back({&t, {}});
  for (size_t i = 0; i < m.facts.binaries.size() && i < m.verdicts.size(); ++i) {
    if (m.env_for_path(m.facts.binaries[i].path) != &env) continue;
    for (const auto& v : m.verdicts[i])
      for (auto& k : item.kernels)
        if (k.target->sm == v.sm && v.verdict != Verdict::no_cuda_code) k.binaries[v.verdict]++;
  }
  std::erase_if(item.kernels, [](const CheckItem::Kernels& k) { return k.binaries.empty(); });
}

CheckItem item(Kind kind, size_t index = 0) {
  CheckItem it;
  it.kind = kind;
  it.index = index;
  return it;
}

std::vector<CheckItem> items_of(const Model& m, const Kb& kb, std::vector<const EnvModel*>& plain) {
  std::vector<CheckItem> items;
  items.push_back(item(Kind::driver));
  for (size_t i = 0; i < m.gpus.size(); ++i) items.push_back(item(Kind::gpu, i));
  if (m.gpus.empty()) items.push_back(item(Kind::no_gpu));
  for (size_t i = 0; i < m.facts.toolkit.toolkits.size(); ++i) items.push_back(item(Kind::toolkit, i));
  if (m.facts.toolkit.toolkits.empty()) items.push_back(item(Kind::no_toolkit));
  for (size_t i = 0; i < m.envs.size(); ++i) {
    const PythonEnv& py = *m.envs[i].env;
    if (py.packages.empty() && !py.deep.ran) {
      plain.push_back(&m.envs[i]);
      continue;
    }
    items.push_back(item(Kind::env, i));
    add_env(items.back(), m, kb);
  }
  return items;
}

void attach(std::vector<CheckItem>& items, const Finding& f, const Model& m) {
  Group g = group_of(f.layer);
  CheckItem* first = nullptr;
  bool attached = false;
  for (auto& item : items) {
    if (group_of(item.kind) != g) continue;
    if (!first) first = &item;
    if (about(item, f, m)) item.findings.push_back(&f), attached = true;
  }
  // No GPU item to carry a device finding: the driver line does.
  if (!first && g == Group::gpu) first = &items.front();
  if (!attached && first) first->findings.push_back(&f);
}

}  // namespace

Checklist checklist(const Model& m, const std::vector<Finding>& findings, const Kb& kb) {
  Checklist c;
  c.items = items_of(m, kb, c.plain_envs);
  for (const auto& f : findings) {
    if (f.severity == Severity::ok) continue;
    attach(c.items, f, m);
    if (f.severity == Severity::info) {
      ++c.info;
      continue;
    }
    ++(f.severity == Severity::error ? c.errors : c.warnings);
    c.shown.push_back(&f);
  }
  for (auto& item : c.items)
    for (const Finding* f : item.findings)
      if (f->severity >= Severity::warning) item.state = std::max(item.state, f->severity);
  // Errors first, whatever order the rules produced; then the cap.
  std::stable_sort(c.shown.begin(), c.shown.end(), [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  if (c.shown.size() > kShownFindings) {
    c.not_shown = static_cast<int>(c.shown.size() - kShownFindings);
    c.shown.resize(kShownFindings);
  }
  return c;
}

}  // namespace cd
