// The shared part of the report parsers (explain/report.hpp): the line cleaning of a pasted
// issue body, "key: value" splitting, the builder that turns what a report states into
// partial Facts (first value wins, lists bounded), and parse_reports, which runs every parser.
#include "explain/report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "explain/clean.hpp"
#include "kb/gpus.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

constexpr std::string_view kTags[] = {"details", "summary", "pre", "code", "br", "p", "b", "sub", "sup", "tt", "kbd"};

// "<details>", "</summary>", "<br/>", "<pre lang=…>": the length of a known HTML tag at s, else 0.
size_t html_tag_at(std::string_view s) {
  if (s.size() < 3 || s[0] != '<') return 0;
  size_t i = s[1] == '/' ? 2 : 1;
  for (std::string_view t : kTags) {
    if (s.size() < i + t.size()) continue;
    std::string lower = to_lower(s.substr(i, t.size()));
    if (lower != t) continue;
    size_t j = i + t.size();
    if (j < s.size() && s[j] != '>' && s[j] != ' ' && s[j] != '/') continue;
    size_t close = s.find('>', j);
    if (close == std::string_view::npos || close > j + 200) return 0;
    return close + 1;
  }
  return 0;
}

// One raw line → its cleaned text appended to `out`; true when the line ends a block
// (a fence, or a line that held only </details>).
bool clean_report_line(std::string_view raw, std::string& out, std::string& scratch, std::string& scratch2) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (raw.find('\x1b') != std::string_view::npos) {
    strip_ansi(raw, scratch);
    raw = scratch;
  }
  if (std::any_of(raw.begin(), raw.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }) &&
      normalize_punctuation(raw, scratch2))
    raw = scratch2;
  // Markdown block quotes ("> ", "> > "), never the Python prompt ">>> ".
  for (;;) {
    size_t i = raw.find_first_not_of(' ');
    if (i == std::string_view::npos || i > 3 || raw[i] != '>' || raw.substr(i).starts_with(">>>")) break;
    raw.remove_prefix(i + 1);
    if (!raw.empty() && raw[0] == ' ') raw.remove_prefix(1);
  }
  std::string_view t = trim(raw);
  if (t.starts_with("```") || t.starts_with("~~~")) return true;
  bool had_details_end = false;
  size_t start = out.size();
  for (size_t i = 0; i < raw.size();) {
    if (raw[i] == '<') {
      if (size_t n = html_tag_at(raw.substr(i))) {
        if (to_lower(raw.substr(i, std::min<size_t>(n, 10))).starts_with("</details")) had_details_end = true;
        i += n;
        continue;
      }
    }
    out.push_back(raw[i++]);
  }
  while (out.size() > start && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return had_details_end && trim(std::string_view(out).substr(start)).empty();
}

std::string normalize_key(std::string_view k) {
  std::string out;
  bool space = false;
  for (char c : trim(k)) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  return out;
}

std::string norm_package(std::string_view name) {
  std::string n = to_lower(trim(name));
  std::replace(n.begin(), n.end(), '_', '-');
  std::replace(n.begin(), n.end(), '.', '-');
  return n;
}

}  // namespace

std::vector<ReportLine> report_lines(std::string_view text, std::string& storage, const ReportLimits& limits) {
  if (text.size() > limits.max_bytes) text = text.substr(0, limits.max_bytes);
  storage.clear();
  storage.reserve(text.size() + 16);
  struct Span {
    size_t off, len;
    uint64_t number;
    bool fence;
  };
  std::vector<Span> spans;
  std::string scratch, scratch2;
  uint64_t number = 0;
  size_t pos = 0;
  while (pos < text.size() && spans.size() < limits.max_lines) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    size_t off = storage.size();
    bool fence = clean_report_line(text.substr(pos, end - pos), storage, scratch, scratch2);
    spans.push_back({off, storage.size() - off, number, fence});
    pos = end + 1;
  }
  std::vector<ReportLine> lines;
  lines.reserve(spans.size());
  for (const auto& s : spans) lines.push_back({std::string_view(storage).substr(s.off, s.len), s.number, s.fence});
  return lines;
}

bool report_key_value(std::string_view line, std::string& key, std::string& value) {
  std::string_view t = trim(line);
  // ds_report: "torch version .................... 2.1.0+cu121"
  if (size_t dots = t.find("..."); dots != std::string_view::npos && dots > 0) {
    size_t after = t.find_first_not_of('.', dots);
    key = normalize_key(t.substr(0, dots));
    value = after == std::string_view::npos ? std::string() : std::string(trim(t.substr(after)));
    return !key.empty() && key.size() <= 60;
  }
  size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 80) return false;
  key = normalize_key(t.substr(0, colon));
  value = std::string(trim(t.substr(colon + 1)));
  return !key.empty();
}

std::string_view report_value(std::string_view v) {
  v = trim(v);
  std::string lower = to_lower(v);
  for (const char* none : {"could not collect", "n/a", "none", "not found", "module not found", "not set", "unknown", ""})
    if (lower == none) return {};
  return v;
}

size_t ReportBuilder::add_report(std::string kind, uint64_t first, uint64_t last) {
  kind_ = kind;
  line_ = first;
  if (reports_.size() >= limits_.max_reports) return SIZE_MAX;
  reports_.push_back({std::move(kind), first, last, {}});
  return reports_.size() - 1;
}

void ReportBuilder::fact(size_t report, std::string text) {
  if (report < reports_.size() && reports_[report].facts.size() < 64) reports_[report].facts.push_back(std::move(text));
}

void ReportBuilder::end_report(size_t report, uint64_t last_line) {
  if (report < reports_.size()) reports_[report].last_line = last_line;
}

std::string ReportBuilder::where() const {
  return kind_.empty() ? "pasted report" : fmt::format("{} line {}", kind_, line_);
}

void ReportBuilder::mark(const std::string& key) {
  if (sources_.size() < 2 * limits_.max_packages + 1024) sources_.emplace(key, where());
}

PythonEnv& ReportBuilder::python() {
  if (facts_.pythons.empty()) {
    PythonEnv py;
    py.interpreter = "python";
    py.prefix = "the reported environment";
    py.kind = "report";
    py.found_by = "pasted report";
    py.is_default = true;
    facts_.pythons.push_back(std::move(py));
  }
  return facts_.pythons.front();
}

void ReportBuilder::driver_version(std::string_view version) {
  version = report_value(version);
  auto v = Version::parse(version);
  if (!v || v->parts.size() < 2 || !facts_.driver.nvml_driver_version.empty()) return;
  facts_.driver.nvml_driver_version = std::string(version);
  if (facts_.driver.nvml_status != 18) facts_.driver.nvml_status = 0;
  mark("driver.version");
}

void ReportBuilder::driver_cuda(std::string_view cuda) {
  auto v = Version::parse(report_value(cuda));
  if (!v || v->empty() || facts_.driver.nvml_cuda_driver_version) return;
  facts_.driver.nvml_cuda_driver_version = v->cuda_int();
  mark("driver.cuda");
}

void ReportBuilder::module_version(std::string_view version, std::string_view source) {
  auto v = Version::parse(version);
  if (!v || v->parts.size() < 2 || facts_.driver.module_loaded) return;
  facts_.driver.module_loaded = true;
  facts_.driver.module_version = std::string(version);
  facts_.driver.module_version_source = where() + (source.empty() ? "" : " (" + std::string(source) + ")");
}

void ReportBuilder::nvml_library_version(std::string_view version) {
  DriverFacts& d = facts_.driver;
  d.nvml_status = 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH: what nvidia-smi said
  d.nvml_error = fmt::format("Driver/library version mismatch (NVML library version {})", version);
  mark("driver.nvml");
}

GpuInfo* ReportBuilder::gpu(int index, std::string_view name) {
  auto& gpus = facts_.driver.gpus;
  for (auto& g : gpus)
    if (g.nvml_index == index) return &g;
  if (index < 0 || gpus.size() >= limits_.max_gpus) return nullptr;
  GpuInfo g;
  g.nvml_index = g.cuda_index = index;
  g.name = std::string(trim(name));
  if (auto q = find_gpu(kb_, g.name); q && !g.name.empty()) {
    g.cc_major = q->sm / 10;
    g.cc_minor = q->sm % 10;
  }
  gpus.push_back(std::move(g));
  if (facts_.driver.nvml_status < 0) facts_.driver.nvml_status = 0;
  mark(fmt::format("gpu.{}", index));
  return &gpus.back();
}

void ReportBuilder::name_gpu(GpuInfo& g, std::string_view name) {
  name = trim(name);
  if (!g.name.empty() || name.empty()) return;
  g.name = std::string(name);
  if (g.cc_major == 0)
    if (auto q = find_gpu(kb_, g.name)) g.cc_major = q->sm / 10, g.cc_minor = q->sm % 10;
}

void ReportBuilder::set_cc(GpuInfo& g, int major, int minor) {
  if (major <= 0 || major > 20 || minor < 0 || minor > 9) return;
  g.cc_major = major;
  g.cc_minor = minor;
}

void ReportBuilder::torch(std::string_view version, std::string_view cuda, bool cuda_known) {
  version = report_value(version);
  auto v = Version::parse(version);
  if (!v || v->empty()) return;
  TorchBuild& t = python().torch;
  if (t.version.empty()) {
    std::string local = v->local;
    std::string tag_cuda;  // outlives the view `cuda` points into
    if (!cuda_known && local.starts_with("cu")) {
      if (auto c = cuda_from_tag(local)) tag_cuda = c->major_minor(), cuda = tag_cuda, cuda_known = true;
    } else if (!cuda_known && (local == "cpu" || local.starts_with("rocm"))) {
      cuda = {}, cuda_known = true;
      if (local.starts_with("rocm")) t.hip = local.substr(4);
    }
    if (!cuda_known) return;  // which CUDA it was built for is unknown: never guess a CPU build
    t.version = std::string(version);
    t.cuda = std::string(report_value(cuda));
    t.source = where();
  }
  package("torch", version);
}

void ReportBuilder::python_version(std::string_view version) {
  std::string_view first = trim(version).substr(0, trim(version).find(' '));
  if (auto v = Version::parse(first); v && !v->empty() && python().version.empty()) {
    python().version = std::string(first);
    python().version_source = where();
  }
}

void ReportBuilder::package(std::string_view name, std::string_view version, std::string_view installer) {
  version = report_value(version);
  if (trim(name).empty() || version.empty()) return;
  auto& pkgs = python().packages;
  if (pkgs.size() >= limits_.max_packages) return;
  std::string n = norm_package(name);
  if (!package_names_.insert(n).second) return;
  PythonPackage p;
  p.name = n;
  p.version = std::string(version);
  p.location = "the reported environment";
  p.installer = std::string(installer);
  mark("package." + n);
  pkgs.push_back(std::move(p));
}

void ReportBuilder::toolkit(std::string_view version, std::string_view source) {
  version = report_value(version);
  auto v = Version::parse(version);
  if (!v || v->parts.size() < 2 || !facts_.toolkit.toolkits.empty()) return;
  Toolkit tk;
  tk.root = "the reported toolkit";
  tk.version = std::string(version);
  tk.version_source = where() + (source.empty() ? "" : " (" + std::string(source) + ")");
  tk.nvcc = "nvcc";
  tk.origin = "pasted report";
  tk.selected_by = {"PATH"};
  facts_.toolkit.toolkits.push_back(std::move(tk));
  facts_.toolkit.path_nvcc = "nvcc";
}

void ReportBuilder::env(std::string_view name, std::string_view value) {
  static constexpr std::string_view kKeep[] = {"CUDA_", "NVIDIA_", "TORCH_CUDA_ARCH_LIST", "LD_LIBRARY_PATH", "NCCL_", "PYTORCH_"};
  std::string n(trim(name));
  if (n.empty() || facts_.env.size() >= 256 || facts_.env.count(n)) return;
  if (std::none_of(std::begin(kKeep), std::end(kKeep), [&](std::string_view k) { return n.starts_with(k); })) return;
  facts_.env[n] = std::string(trim(value));
  mark("env." + n);
}

void ReportBuilder::os(std::string_view os) {
  os = report_value(os);
  if (!os.empty() && facts_.host.os.empty()) facts_.host.os = std::string(os), mark("host.os");
}

void ReportBuilder::kernel(std::string_view kernel) {
  kernel = report_value(kernel);
  if (kernel.empty() || !facts_.host.kernel.empty()) return;
  facts_.host.kernel = std::string(kernel);
  mark("host.kernel");
  if (contains(to_lower(kernel), "microsoft-standard-wsl2")) {
    facts_.platform.wsl = true;
    facts_.platform.wsl_version = 2;
    facts_.platform.wsl_evidence = "kernel " + std::string(kernel) + " (" + where() + ")";
  }
}

void ReportBuilder::arch_list(const std::vector<std::string>& archs) {
  DeepCheck& d = python().deep;
  if (!d.arch_list.empty() || archs.empty()) return;
  d.ran = true;
  d.arch_list = archs;
  mark("torch.arch_list");
}

void ReportBuilder::cuda_available(bool yes) { python().deep.cuda_available = yes; }

void ReportBuilder::library(std::string_view consumer, std::string_view soname, std::string_view path, bool in_python) {
  auto& rs = facts_.libs.resolutions;
  if (rs.size() >= limits_.max_libraries) return;
  if (!libraries_.insert(std::string(consumer) + '\n' + std::string(soname)).second) return;
  LibraryResolution r;
  r.consumer = std::string(consumer);
  // libs rules treat a resolution with an environment as a framework's; a program outside
  // Python gets the reported toolkit/system view ("ldd") instead.
  r.env = in_python ? python().prefix : "ldd";
  r.requested_by = std::string(consumer);
  r.soname = std::string(soname);
  r.name = r.soname.substr(3, r.soname.find(".so") == std::string::npos ? std::string::npos : r.soname.find(".so") - 3);
  r.path = std::string(path);
  r.realpath = r.path;
  r.via = path.empty() ? "not found" : "ldd";
  r.detail = where() + (path.empty() ? ": not found" : "");
  mark("lib." + r.soname);
  rs.push_back(std::move(r));
}

Facts ReportBuilder::take() {
  if (!facts_.pythons.empty() && facts_.pythons.front().torch.version.empty()) {
    const auto& pkgs = facts_.pythons.front().packages;
    std::string torch_version, runtime;
    for (const auto& p : pkgs) {
      if (p.name == "torch") torch_version = p.version;
      if (p.name.starts_with("nvidia-cuda-runtime-cu")) runtime = p.version;
    }
    auto rv = Version::parse(runtime);
    if (!torch_version.empty() && rv && rv->parts.size() >= 2) torch(torch_version, rv->major_minor(), true);
  }
  return std::move(facts_);
}

ReportFacts parse_reports(std::string_view text, const Kb& kb, const ReportLimits& limits) {
  std::string storage;
  std::vector<ReportLine> lines = report_lines(text, storage, limits);
  ReportBuilder b(kb, limits);
  // Richer reports first: their values win over a bare pip list's or nvcc's.
  for (auto parse : {parse_collect_env, parse_vllm_env, parse_sglang_env, parse_ds_report, parse_nvidia_smi_q,
                     parse_nvidia_smi, parse_nvidia_smi_topo, parse_nvidia_container_cli, parse_proc_driver_version,
                     parse_nvcc_version, parse_torch_print, parse_conda_list, parse_pip_list, parse_ldd})
    parse(lines, b);
  ReportFacts out;
  out.reports = b.take_reports();
  out.sources = b.take_sources();
  std::stable_sort(out.reports.begin(), out.reports.end(),
                   [](const EnvReport& a, const EnvReport& c) { return a.first_line < c.first_line; });
  out.facts = b.take();
  out.facts.tool_version = "pasted report";
  out.facts.root = "";
  return out;
}

}  // namespace cd
