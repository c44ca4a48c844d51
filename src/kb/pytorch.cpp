#include "kb/pytorch.hpp"

#include "kb/toml_access.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

namespace {

struct TorchTables {
  std::vector<TorchRelease> releases;
  std::vector<TorchWheel> wheels;
  std::string index_url;
  TorchDefaults defaults;
};

const TorchTables& tables(const Kb& kb) {
  return kb.view<TorchTables>("pytorch", [](const Kb& k) {
    TorchTables t;
    for (const toml::table* r : kb_rows(k, "pytorch", "release")) {
      TorchRelease rel;
      rel.torch = row_str(*r, "torch");
      rel.torchvision = row_str(*r, "torchvision");
      rel.torchaudio = row_str(*r, "torchaudio");
      rel.variants = row_strs(*r, "variants");
      rel.pypi_default = row_str(*r, "pypi_default");
      rel.python_min = row_str(*r, "python_min");
      rel.python_max = row_str(*r, "python_max");
      rel.install = row_str(*r, "install", "index-url");
      rel.source = row_str(*r, "source");
      t.releases.push_back(std::move(rel));
    }
    for (const toml::table* r : kb_rows(k, "pytorch", "wheel")) {
      TorchWheel w;
      w.torch = row_str(*r, "torch");
      w.variant = row_str(*r, "variant");
      w.cudnn = row_str(*r, "cudnn");
      w.nccl = row_str(*r, "nccl");
      w.arch_list = row_strs(*r, "arch_list");
      w.arch_source = row_str(*r, "arch_source");
      w.arch_list_aarch64 = row_strs(*r, "arch_list_aarch64");
      w.arch_aarch64_source = row_str(*r, "arch_aarch64_source");
      w.source = row_str(*r, "source");
      t.wheels.push_back(std::move(w));
    }
    if (const toml::table* idx = kb_table(k, "pytorch")["index"].as_table()) t.index_url = row_str(*idx, "url");
    if (t.index_url.empty()) t.index_url = "https://download.pytorch.org/whl/{variant}";
    if (const toml::table* d = kb_table(k, "pytorch")["defaults"].as_table()) {
      t.defaults.unknown_release = row_str(*d, "unknown_release", t.defaults.unknown_release);
      t.defaults.upgrade = row_str(*d, "upgrade", t.defaults.upgrade);
      t.defaults.source = row_str(*d, "source");
    }
    return t;
  });
}

std::string major_minor(const std::string& version) {
  auto v = Version::parse(version);
  return v ? v->major_minor() : std::string();
}

}  // namespace

const TorchDefaults& torch_defaults(const Kb& kb) { return tables(kb).defaults; }

const std::vector<TorchRelease>& torch_releases(const Kb& kb) { return tables(kb).releases; }

std::optional<TorchRelease> torch_release(const Kb& kb, const std::string& torch_version) {
  std::string mm = major_minor(torch_version);
  for (const auto& r : tables(kb).releases)
    if (r.torch == mm) return r;
  return std::nullopt;
}

std::optional<TorchWheel> torch_wheel(const Kb& kb, const std::string& torch_version, const std::string& variant) {
  std::string mm = major_minor(torch_version);
  for (const auto& w : tables(kb).wheels)
    if (w.torch == mm && w.variant == variant) return w;
  return std::nullopt;
}

std::string torch_index_url(const Kb& kb, const std::string& variant) {
  return replace_all(tables(kb).index_url, "{variant}", variant);
}

std::string torch_variant(const Kb& kb, const std::string& torch_version, const std::string& cuda) {
  auto v = Version::parse(torch_version);
  if (v && !v->local.empty()) return v->local;
  if (cuda.empty()) return "cpu";
  // No local tag: a PyPI wheel; its variant is the release's default when the CUDA agrees.
  if (auto rel = torch_release(kb, torch_version); rel && !rel->pypi_default.empty()) {
    auto tag = cuda_from_tag(rel->pypi_default);
    auto c = Version::parse(cuda);
    if (tag && c && tag->major_minor() == c->major_minor()) return rel->pypi_default;
  }
  auto c = Version::parse(cuda);
  return c ? "cu" + std::to_string(c->major()) + std::to_string(c->minor()) : std::string();
}

}  // namespace cd
