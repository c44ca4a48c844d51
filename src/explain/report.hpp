#pragma once
// Pasted environment reports (issue 17 §3): bug reports paste `python -m torch.utils.collect_env`,
// vLLM's and SGLang's env reports, ds_report, nvidia-smi (table, -q, topo -m), nvcc --version,
// /proc/driver/nvidia/version, pip list/freeze, conda list, ldd output or `python -c "import
// torch; print(…)"` printouts instead of (or beside) a traceback. Each format has one parser
// (explain/report_<format>.cpp) that reads the report's lines into partial Facts — what the
// report shows of the machine it came from — so `explain` runs the same derive and check rules
// on it as `check` runs on a live machine (rules/report.cpp says which).
//
// Algorithm: the text (at most ReportLimits::max_bytes, the head of the input) is split into
// lines; each line is cleaned the way a pasted issue body needs (CR, ANSI escapes, Markdown
// block quotes "> ", HTML tags of <details>/<summary>/<pre>/<code>/<br>, typographic
// punctuation); fences (```) are kept as boundary lines. Every parser then scans the lines for
// its own anchor (a line only that format prints, matched with RE2) and reads the block after
// it line by line, up to a bounded number of lines, until a fence, a blank-line run or another
// report's anchor. Parsers fill a ReportBuilder, which keeps the first value of each fact
// (a second report of the same thing is evidence, not a correction) and bounds every list.
// Linear in the input; memory bounded by max_bytes and the list caps.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "facts/facts.hpp"
#include "facts/report.hpp"
#include "kb/kb.hpp"

namespace cd {

struct ReportLimits {
  size_t max_bytes = 4u << 20;   // only the head of a log is read for reports (issue bodies are KB)
  size_t max_lines = 100000;
  size_t max_block = 4000;       // lines one report may span after its anchor
  size_t max_gpus = 64;
  size_t max_packages = 4000;
  size_t max_libraries = 512;
  size_t max_reports = 256;      // further reports still give facts, but are not listed
};

struct ReportLine {
  std::string_view text;  // cleaned, trimmed at the right
  uint64_t number = 0;    // 1-based line number in the input
  bool fence = false;     // a Markdown fence or </details>: reports end here
};

// What the parsers fill: partial Facts of the reported machine and the list of reports found.
class ReportBuilder {
 public:
  ReportBuilder(const Kb& kb, const ReportLimits& limits) : kb_(kb), limits_(limits) {}
  const ReportLimits& limits() const { return limits_; }

  // A report of `kind` spanning lines first..last; returns its index for fact() (past
  // max_reports an index that fact() and end_report() ignore). The values set next were read
  // at its first line until at() says otherwise.
  size_t add_report(std::string kind, uint64_t first, uint64_t last);
  // The values set next were read at input line `number` of the report added last. Each fact
  // keeps the place it was first read: sources() ("driver.version" → "nvidia-smi line 37"),
  // and the Facts fields that carry their own source (torch.source, the toolkit's and the
  // Python's version_source, the module's, an ldd resolution's detail) hold it as well.
  void at(uint64_t number) { line_ = number; }
  std::string where() const;  // "collect_env line 12"
  // Keys: driver.version, driver.cuda, driver.nvml, gpu.N (N as the report numbers it),
  // torch.arch_list, env.NAME, host.os, host.kernel, lib.SONAME, package.NAME.
  const std::map<std::string, std::string>& sources() const { return sources_; }
  // Records where() for `key` unless it is known; setters do it for their own facts, parsers
  // for the per-GPU ones they write directly: gpu.N.ecc, .remap, .retired, .link,
  // .compute_mode, .persistence.
  void mark(const std::string& key);
  // "torch 2.7.0+cu128 (CUDA 12.8)": a fact as the report stated it (shown and in --json).
  void fact(size_t report, std::string text);
  void end_report(size_t report, uint64_t last_line);

  // Each setter keeps the first value it is given (empty values are ignored).
  void driver_version(std::string_view version);          // nvidia-smi / NVML / collect_env
  void driver_cuda(std::string_view cuda);                // nvidia-smi's "CUDA Version" (the driver's limit)
  void module_version(std::string_view version, std::string_view source);  // /proc/driver/nvidia/version
  void nvml_library_version(std::string_view version);     // "NVML library version: 580.178" after a mismatch
  // GPU `index` (0-based as the report numbers them); cc from the name through data/gpus.toml
  // unless set_cc gives the report's own compute capability.
  GpuInfo* gpu(int index, std::string_view name);
  void set_cc(GpuInfo& g, int major, int minor);
  // Names a GPU created without a name; its compute capability from the name unless known.
  void name_gpu(GpuInfo& g, std::string_view name);
  void torch(std::string_view version, std::string_view cuda, bool cuda_known);
  void python_version(std::string_view version);
  void package(std::string_view name, std::string_view version, std::string_view installer = {});
  void toolkit(std::string_view version, std::string_view source);
  void env(std::string_view name, std::string_view value);
  void os(std::string_view os);
  void kernel(std::string_view kernel);
  void arch_list(const std::vector<std::string>& archs);   // torch.cuda.get_arch_list()
  void cuda_available(bool yes);
  // ldd: `soname => not found` (path empty) or the file it resolved to; `python`: the
  // consumer lies in the reported Python environment's site-packages.
  void library(std::string_view consumer, std::string_view soname, std::string_view path, bool python);

  const Kb& kb() const { return kb_; }
  // The facts, once every parser ran: a torch seen only as a package (pip list without a
  // local version) gets the CUDA of the nvidia-cuda-runtime wheel it pulled in, if listed.
  Facts take();
  const Facts& facts() const { return facts_; }
  std::vector<EnvReport> take_reports() { return std::move(reports_); }
  std::map<std::string, std::string> take_sources() { return std::move(sources_); }
  const std::vector<EnvReport>& reports() const { return reports_; }

 private:
  PythonEnv& python();
  const Kb& kb_;
  ReportLimits limits_;
  Facts facts_;
  std::vector<EnvReport> reports_;
  std::unordered_set<std::string> package_names_;  // package(): first version wins, in O(1)
  std::unordered_set<std::string> libraries_;      // library(): consumer + soname seen
  std::string kind_;                                // of the report added last
  uint64_t line_ = 0;
  std::map<std::string, std::string> sources_;
};

// The cleaned lines of `text` (its first limits.max_bytes). Views point into `storage`.
std::vector<ReportLine> report_lines(std::string_view text, std::string& storage, const ReportLimits& limits);

// One parser per format (explain/report_<format>.cpp). Each reads every block of its format.
void parse_collect_env(const std::vector<ReportLine>& lines, ReportBuilder& out);   // torch.utils.collect_env, all formats
void parse_vllm_env(const std::vector<ReportLine>& lines, ReportBuilder& out);      // vllm collect_env extras
void parse_sglang_env(const std::vector<ReportLine>& lines, ReportBuilder& out);    // python -m sglang.check_env
void parse_ds_report(const std::vector<ReportLine>& lines, ReportBuilder& out);     // ds_report
void parse_nvidia_smi(const std::vector<ReportLine>& lines, ReportBuilder& out);    // default table
void parse_nvidia_smi_q(const std::vector<ReportLine>& lines, ReportBuilder& out);  // nvidia-smi -q
void parse_nvidia_smi_topo(const std::vector<ReportLine>& lines, ReportBuilder& out);  // nvidia-smi topo -m
void parse_nvcc_version(const std::vector<ReportLine>& lines, ReportBuilder& out);  // nvcc --version
void parse_proc_driver_version(const std::vector<ReportLine>& lines, ReportBuilder& out);  // /proc/driver/nvidia/version
void parse_pip_list(const std::vector<ReportLine>& lines, ReportBuilder& out);      // pip list / pip freeze
void parse_conda_list(const std::vector<ReportLine>& lines, ReportBuilder& out);    // conda list
void parse_ldd(const std::vector<ReportLine>& lines, ReportBuilder& out);           // ldd FILE
void parse_torch_print(const std::vector<ReportLine>& lines, ReportBuilder& out);   // python -c / >>> printouts
void parse_nvidia_container_cli(const std::vector<ReportLine>& lines, ReportBuilder& out);  // nvidia-container-cli info

struct ReportFacts {
  Facts facts;                      // partial: only what the reports showed
  std::vector<EnvReport> reports;   // in input order
  std::map<std::string, std::string> sources;  // where each fact was read (ReportBuilder::sources)
  bool empty() const { return reports.empty(); }
};

// Every parser over `text`.
ReportFacts parse_reports(std::string_view text, const Kb& kb, const ReportLimits& limits = {});

// Shared helpers of the parsers (explain/report.cpp).
// "Key: value", "Key    : value", "key ........ value" → key (lower case, inner spaces single)
// and value (trimmed). False when the line is neither.
bool report_key_value(std::string_view line, std::string& key, std::string& value);
// Versions as reports write them: "Could not collect", "N/A", "None", "Not Found" → "".
std::string_view report_value(std::string_view v);

}  // namespace cd
