// Pasted environment reports (explain/report.hpp, issue 17 §3) with real reports copied from
// public threads (tests/fixtures/reports/SOURCES.tsv names each one's thread): the facts each
// parser reads, and the findings `explain` gives — the same rules `check` runs on a machine,
// on the reported one. Goldens: tests/fixtures/reports/<file>.golden — the reports, and each
// finding with its evidence (source labels included) and fix (CD_UPDATE_GOLDENS=1 rewrites them;
// review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "derive/model.hpp"
#include "explain/explain.hpp"
#include "explain/report.hpp"
#include "kb/kb.hpp"
#include "rules/report.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(CD_FIXTURES) / "reports";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Explained {
  ReportFacts reports;
  Facts facts;
  Findings findings;
};

// As `explain --no-probe FILE`.
Explained explain(const std::string& text) {
  const Kb& kb = Kb::get();
  Explained e;
  e.reports = parse_reports(text, kb);
  e.facts = e.reports.facts;
  e.facts.log = scan_text(text, matcher_for(kb));
  e.findings = explain_rules(derive(e.facts, kb), kb, e.reports.reports, e.reports.sources);
  return e;
}

Explained explain_file(const std::string& name) { return explain(slurp(kDir / name)); }

std::vector<std::string> ids(const Findings& f, bool with_info = false) {
  std::vector<std::string> out;
  for (const auto& x : f)
    if (with_info || x.severity != Severity::info) out.push_back(x.id);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string golden_text(const Explained& e) {
  std::string out = "reports:\n";
  for (const auto& r : e.reports.reports)
    out += fmt::format("  {} lines {}-{}: {}\n", r.kind, r.first_line, r.last_line, join(r.facts, " · "));
  out += "findings:\n";
  // Each finding with its evidence, every line with its source (issue 17: a fact from a report
  // names the report and line it was read from), and its fix.
  for (const auto& f : e.findings) {
    out += fmt::format("  {} {}: {}\n", severity_name(f.severity), f.id, f.title);
    for (const auto& ev : f.evidence) out += fmt::format("    evidence [{}] {}\n", ev.source, ev.fact);
    for (const auto& fx : f.fix) out += fmt::format("    fix {}\n", fx);
  }
  return out;
}

TEST(ExplainReports, EveryFixtureHasItsSourceAndMatchesItsGolden) {
  std::ifstream in(kDir / "SOURCES.tsv");
  std::string line;
  size_t n = 0;
  bool update = std::getenv("CD_UPDATE_GOLDENS") != nullptr;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t', true);
    ASSERT_GE(cols.size(), 4u) << line;
    EXPECT_EQ(cols[1].rfind("https://github.com/", 0), 0u) << cols[0];
    ASSERT_TRUE(fs::exists(kDir / cols[0])) << cols[0];
    Explained e = explain_file(cols[0]);
    EXPECT_FALSE(e.reports.empty()) << cols[0] << ": no report recognised";
    fs::path golden = kDir / (cols[0] + ".golden");
    std::string got = golden_text(e);
    if (update) std::ofstream(golden, std::ios::binary) << got;
    EXPECT_EQ(slurp(golden), got) << cols[0];
    ++n;
  }
  EXPECT_GE(n, 20u);
  // Every file in the folder is listed (a fixture without its thread is not a real report).
  for (const auto& f : fs::directory_iterator(kDir)) {
    std::string name = f.path().filename().string();
    if (name == "SOURCES.tsv" || name.ends_with(".golden")) continue;
    EXPECT_NE(slurp(kDir / "SOURCES.tsv").find(name + "\t"), std::string::npos) << name << " is not in SOURCES.tsv";
  }
}

TEST(ExplainReports, OldCollectEnvWithTheDriverTooOldForTorchsCuda) {
  Explained e = explain_file("collect_env_p100_driver410.txt");
  const Facts& f = e.facts;
  EXPECT_EQ(f.driver.nvml_driver_version, "410.104");
  ASSERT_EQ(f.driver.gpus.size(), 4u);  // "GPU 0： Tesla P100" (full-width colon) on the lines after the key
  EXPECT_EQ(f.driver.gpus[3].cc_major * 10 + f.driver.gpus[3].cc_minor, 60);
  ASSERT_EQ(f.pythons.size(), 1u);
  EXPECT_EQ(f.pythons[0].torch.version, "1.5.0");
  EXPECT_EQ(f.pythons[0].torch.cuda, "10.2");
  EXPECT_EQ(f.toolkit.toolkits.at(0).version, "10.0.130");
  ASSERT_FALSE(e.findings.empty());
  EXPECT_EQ(e.findings[0].id, "driver.too_old");
  EXPECT_EQ(e.findings[0].severity, Severity::error);
  EXPECT_TRUE(contains(e.findings[0].evidence[0].fact, "environment report"));
  EXPECT_EQ(explain_file("collect_env_v100_driver418_nvidia_smi.txt").findings.at(0).id, "driver.too_old");
  // conda's build string names the CUDA: py3.7_cuda10.1.243_cudnn7.6.3_0 on driver 410 (CUDA 10.0).
  Explained conda = explain_file("collect_env_conda_t4_driver410.txt");
  EXPECT_EQ(conda.findings.at(0).id, "driver.too_old");
  EXPECT_EQ(conda.facts.driver.gpus.at(0).cc_major, 7);
}

TEST(ExplainReports, MinorVersionCompatibilityIsAWarningNotTooOld) {
  Explained e = explain_file("vllm_collect_env_a100_driver525.txt");
  EXPECT_EQ(e.facts.driver.gpus.size(), 8u);
  auto v = ids(e.findings);
  EXPECT_TRUE(has(v, "driver.minor_compat"));
  EXPECT_FALSE(has(v, "driver.too_old"));
}

TEST(ExplainReports, TorchWithoutTheGpusArchitectureIsTheArchFinding) {
  // The log's own warning and the report agree; the report adds nvcc 12.2 vs torch's 11.7.
  Explained e = explain_file("collect_env_h100_torch201_cu117.txt");
  EXPECT_EQ(e.facts.driver.gpus.at(0).cc_major, 9);
  ASSERT_FALSE(e.findings.empty());
  EXPECT_EQ(e.findings[0].id, "arch.unsupported_by_framework");
  // The report alone (without torch's warning line) reaches the same finding from torch's
  // recorded arch list for 2.0.1+cu117 wheels and the H100's sm_90.
  std::string text = slurp(kDir / "collect_env_h100_torch201_cu117.txt");
  std::string report_only = text.substr(text.find("PyTorch version"));
  Explained r = explain(report_only);
  EXPECT_TRUE(has(ids(r.findings), "arch.unsupported_by_framework"));
}

TEST(ExplainReports, HealthyReportsGiveNoErrorOrWarning) {
  for (const char* name : {"vllm_collect_env_wsl2_4070.txt", "sglang_check_env_a100x8.txt", "sglang_check_env_gb300.txt",
                           "issue_body_details_vllm_a100.md", "collect_env_blockquoted_windows.txt",
                           "nvcc_and_smi_header_driver470.txt", "vllm_version_topology_nv12.txt",
                           "collect_env_torch14_gtx980_pypi_conda.txt", "collect_env_colab_t4_torch17_cu101.txt",
                           "nvidia_container_cli_info_titanxp.txt", "nvidia_smi_topo_wrapped_legend_indented.txt"}) {
    Explained e = explain_file(name);
    EXPECT_FALSE(e.reports.empty()) << name;
    EXPECT_TRUE(ids(e.findings).empty()) << name << ": " << join(ids(e.findings), ", ");
  }
}

TEST(ExplainReports, VllmAndSglangReportsAndTheWsl2Kernel) {
  Explained wsl = explain_file("vllm_collect_env_wsl2_4070.txt");
  EXPECT_TRUE(wsl.facts.platform.wsl);
  EXPECT_EQ(wsl.facts.driver.gpus.at(0).cc_major * 10 + wsl.facts.driver.gpus.at(0).cc_minor, 89);
  Explained v08 = explain_file("vllm_collect_env_v08_sections.txt");
  EXPECT_EQ(v08.facts.pythons.at(0).torch.version, "2.5.1+cu124");  // keys padded to a column
  EXPECT_EQ(v08.facts.pythons.at(0).torch.cuda, "12.4");
  Explained topo = explain_file("vllm_version_topology_nv12.txt");
  ASSERT_GE(topo.reports.reports.size(), 2u);
  EXPECT_EQ(topo.reports.reports[0].kind, "vllm collect_env");
  EXPECT_TRUE(contains(join(topo.reports.reports[1].facts, " "), "NVLink (NV12)"));
  Explained gb300 = explain_file("sglang_check_env_gb300.txt");
  ASSERT_EQ(gb300.facts.driver.gpus.size(), 4u);
  EXPECT_EQ(gb300.facts.driver.gpus[2].cc_major * 10 + gb300.facts.driver.gpus[2].cc_minor, 103);
  EXPECT_EQ(gb300.facts.driver.nvml_driver_version, "580.82.07");
  EXPECT_EQ(gb300.facts.toolkit.toolkits.at(0).version, "13.0.88");
}

TEST(ExplainReports, DsReportNvidiaSmiAndNvcc) {
  Explained ds = explain_file("ds_report_env_info.txt");
  EXPECT_EQ(ds.facts.pythons.at(0).torch.version, "2.3.0+cu121");
  EXPECT_EQ(ds.facts.toolkit.toolkits.at(0).version, "12.0");
  Explained smi = explain_file("nvidia_smi_a100_driver450_arch.txt");
  ASSERT_EQ(smi.facts.driver.gpus.size(), 1u);
  const GpuInfo& g = smi.facts.driver.gpus[0];
  EXPECT_EQ(g.cc_major, 8);
  EXPECT_EQ(g.memory_total_mib, 40537u);
  EXPECT_EQ(g.persistence_mode, "on");
  EXPECT_EQ(g.ecc_uncorrected_volatile, 0);
  EXPECT_EQ(smi.facts.driver.nvml_cuda_driver_version, 11000);
  EXPECT_EQ(smi.findings.at(0).id, "arch.unsupported_by_framework");
  Explained tab = explain_file("nvidia_smi_tab_indented_gtx780.txt");
  ASSERT_EQ(tab.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(tab.facts.driver.gpus[0].cc_major * 10 + tab.facts.driver.gpus[0].cc_minor, 35);
  EXPECT_EQ(explain_file("nvidia_smi_windows_wddm.txt").facts.driver.gpus.size(), 1u);
  Explained nvcc = explain_file("pip_show_torch_nvcc118.txt");
  EXPECT_EQ(nvcc.facts.toolkit.toolkits.at(0).version, "11.8.89");
  EXPECT_TRUE(nvcc.facts.pythons.at(0).torch.version.empty());  // 2.2.1 alone does not say its CUDA
  EXPECT_EQ(nvcc.facts.pythons.at(0).packages.at(0).version, "2.2.1");
}

TEST(ExplainReports, NvidiaSmiQRowRemapPendingIsAHardwareFault) {
  Explained e = explain_file("nvidia_smi_q_a100_remap_pending.txt");
  ASSERT_EQ(e.facts.driver.gpus.size(), 1u);
  const GpuInfo& g = e.facts.driver.gpus[0];
  EXPECT_EQ(g.remapped_rows_pending, 1);
  EXPECT_EQ(g.remapping_failed, 0);
  EXPECT_EQ(g.ecc_uncorrected_volatile, 0);  // Aggregate counts are not volatile
  EXPECT_EQ(e.facts.driver.nvml_driver_version, "510.73.08");
  ASSERT_FALSE(e.findings.empty());
  EXPECT_EQ(e.findings[0].id, "device.hardware_fault");
  EXPECT_EQ(e.findings[0].severity, Severity::warning);
}

TEST(ExplainReports, ModuleAndLibraryVersionsAndLdd) {
  Explained e = explain_file("proc_version_nvml_mismatch.txt");
  EXPECT_EQ(e.facts.driver.module_version, "580.173.02");
  EXPECT_EQ(e.facts.driver.nvml_status, 18);
  EXPECT_EQ(e.findings.at(0).id, "driver.library_mismatch");
  Explained ldd = explain_file("ldd_libtorch_cuda_cublas_not_found.txt");
  ASSERT_EQ(ldd.facts.libs.resolutions.size(), 1u);  // only CUDA libraries; libc10_cuda etc. have no "=>"
  EXPECT_EQ(ldd.facts.libs.resolutions[0].soname, "libcublas.so.10");
  EXPECT_EQ(ldd.facts.libs.resolutions[0].consumer, "libtorch_cuda.so");
  ASSERT_FALSE(ldd.findings.empty());
  EXPECT_EQ(ldd.findings[0].id, "libs.not_found");
}

TEST(ExplainReports, TorchPrintoutsAndPackageListings) {
  Explained p = explain_file("python_c_arch_list_v100.txt");
  const PythonEnv& py = p.facts.pythons.at(0);
  EXPECT_EQ(py.torch.version, "2.6.0+cu124");
  EXPECT_EQ(py.deep.arch_list.size(), 7u);
  // A printout of get_device_name and the arch list: the GPU's sm against the list torch printed.
  Explained mix = explain(
      "$ python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), "
      "torch.cuda.get_arch_list())\"\n2.8.0+cu128 12.8 NVIDIA GeForce GTX 1080 Ti ['sm_70', 'sm_75', 'sm_80', 'sm_86', "
      "'sm_90', 'sm_100', 'sm_120']\n");
  ASSERT_EQ(mix.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(mix.facts.driver.gpus[0].name, "NVIDIA GeForce GTX 1080 Ti");
  EXPECT_TRUE(has(ids(mix.findings), "arch.unsupported_by_framework"));
  Explained conda = explain_file("conda_list_header_cudatoolkit102.txt");
  bool toolkit = false;
  for (const auto& pkg : conda.facts.pythons.at(0).packages) toolkit |= pkg.name == "cudatoolkit" && pkg.version == "10.2.89";
  EXPECT_TRUE(toolkit);
  Explained freeze = explain("numpy==1.26.4\ntorch==2.1.0+cpu\ntorchvision==0.16.0+cpu\n");
  EXPECT_EQ(freeze.facts.pythons.at(0).torch.version, "2.1.0+cpu");
  EXPECT_TRUE(freeze.facts.pythons.at(0).torch.cuda.empty());
  // Two lines are a sentence's requirements, not a listing.
  EXPECT_TRUE(explain("pip install torch==2.1.0+cu121\nthen numpy==1.26\n").reports.empty());
}

TEST(ExplainReports, IpythonSessionsAndTypedAheadPrompts) {
  Explained ip = explain(
      "In [1]: import torch\n\nIn [2]: torch.__version__\nOut[2]: '1.13.1+cu117'\n\n"
      "In [3]: torch.cuda.get_device_name(0)\nOut[3]: 'NVIDIA H100 80GB HBM3'\n");
  ASSERT_EQ(ip.facts.pythons.size(), 1u);
  EXPECT_EQ(ip.facts.pythons[0].torch.version, "1.13.1+cu117");
  EXPECT_EQ(ip.facts.pythons[0].torch.cuda, "11.7");
  ASSERT_EQ(ip.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(ip.facts.driver.gpus[0].name, "NVIDIA H100 80GB HBM3");
  // "t>>> torch.cuda.get_arch_list()": a character typed ahead of the prompt.
  Explained repl = explain_file("repl_arch_list_rtx3080_laptop.txt");
  EXPECT_EQ(repl.facts.pythons.at(0).deep.arch_list.size(), 7u);
  // `python -c 'from torch.utils.collect_env import main; main()'` is a collect_env, not a printout.
  Explained ce = explain_file("collect_env_torch14_gtx980_pypi_conda.txt");
  ASSERT_EQ(ce.reports.reports.size(), 1u);
  EXPECT_EQ(ce.reports.reports[0].kind, "collect_env");
  EXPECT_EQ(ce.reports.reports[0].first_line, 5u);
}

TEST(ExplainReports, NvidiaContainerCliInfoAndWrappedTopology) {
  Explained e = explain_file("nvidia_container_cli_info_titanxp.txt");
  ASSERT_FALSE(e.reports.empty());
  EXPECT_EQ(e.reports.reports[0].kind, "nvidia-container-cli info");
  EXPECT_EQ(e.reports.reports[0].last_line, 12u);  // the log line after "Architecture" ends it
  EXPECT_EQ(e.facts.driver.nvml_driver_version, "440.44");
  EXPECT_EQ(e.facts.driver.nvml_cuda_driver_version, 10020);
  ASSERT_EQ(e.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(e.facts.driver.gpus[0].name, "TITAN Xp");
  EXPECT_EQ(e.facts.driver.gpus[0].cc_major * 10 + e.facts.driver.gpus[0].cc_minor, 61);
  // Indented by four spaces inside a fence, the legend wrapped at 80 columns, then the
  // topo -p2p matrix (its header has no "CPU Affinity": not a second topology).
  Explained topo = explain_file("nvidia_smi_topo_wrapped_legend_indented.txt");
  ASSERT_EQ(topo.reports.reports.size(), 1u);
  EXPECT_EQ(join(topo.reports.reports[0].facts, " "), "2 GPUs; GPU-to-GPU links: NODE");
  // User space 570.124.04 installed over the 570.124.06 p2p modules.
  Explained mm = explain_file("nvidia_smi_mismatch_nvml_570_p2p.txt");
  ASSERT_FALSE(mm.findings.empty());
  EXPECT_EQ(mm.findings[0].id, "driver.library_mismatch");
}

TEST(ExplainReports, WithoutAReportNothingChangesAndAbsenceIsNotAFinding) {
  // A bare collect_env header says nothing of the driver: no driver.missing, no device.not_visible.
  Explained e = explain("PyTorch version: 2.4.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n");
  EXPECT_FALSE(e.reports.empty());
  EXPECT_TRUE(ids(e.findings, true).empty()) << join(ids(e.findings, true), ", ");
  EXPECT_TRUE(explain("RuntimeError: something else\n").reports.empty());
}

TEST(ExplainReports, BoundedOnHostileInput) {
  std::string big;
  for (int i = 0; i < 200000; ++i) big += fmt::format("GPU {}: NVIDIA H100\n", i);
  Explained e = explain("PyTorch version: 2.4.0+cu121\nCUDA used to build PyTorch: 12.1\nGPU models and configuration:\n" + big);
  EXPECT_LE(e.facts.driver.gpus.size(), ReportLimits{}.max_gpus);
  std::string freeze;
  for (int i = 0; i < 20000; ++i) freeze += fmt::format("pkg{}==1.0\n", i);
  Explained f = explain(freeze);
  EXPECT_LE(f.facts.pythons.at(0).packages.size(), ReportLimits{}.max_packages);
  // Every anchor is a report; the list is capped (the facts still come from the first).
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n";
  Explained m = explain(many);
  EXPECT_EQ(m.reports.reports.size(), ReportLimits{}.max_reports);
  EXPECT_EQ(m.facts.toolkit.toolkits.at(0).version, "12.4.131");
  // Only the head of the input is read for reports.
  std::string padded(ReportLimits{}.max_bytes + 10, '\n');
  EXPECT_TRUE(explain(padded + "PyTorch version: 2.4.0+cu121\n").reports.empty());
}

TEST(ExplainReports, CliJsonCarriesTheReportedFactsAndExitsTwoOnAnError) {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  ProcessResult r = run_process({CD_BINARY, "explain", "--no-probe", "--json", (kDir / "collect_env_p100_driver410.txt").string()}, o);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["findings"][0]["id"], "driver.too_old");
  EXPECT_EQ(j["report_facts"]["driver"]["nvml_driver_version"], "410.104");
  EXPECT_EQ(j["reports"][0]["kind"], "collect_env");
  ProcessResult t = run_process({CD_BINARY, "explain", "--no-probe", (kDir / "issue_body_details_vllm_a100.md").string()}, o);
  EXPECT_EQ(t.exit_code, 0) << t.out;
  EXPECT_TRUE(contains(t.out, "collect_env (lines 12-")) << t.out;
  EXPECT_TRUE(contains(t.out, "GPU 0: NVIDIA A100-SXM4-40GB (sm_80)")) << t.out;
}


TEST(ExplainReports, NvidiaSmiTablesWrappedByATerminalOrATrackerReadAsTheWholeTable) {
  // The same real table, whole and cut at 80 columns (rows broken inside "Volatile Un|corr.",
  // the header's "CUDA UMD Version:| 13.3", every border): the same facts.
  Explained whole = explain_file("nvidia_smi_kmd_umd_rtx3080_driver610.txt");
  Explained cut = explain_file("nvidia_smi_wrapped80_kmd_rtx3080.txt");
  for (const Explained* e : {&whole, &cut}) {
    EXPECT_EQ(e->facts.driver.nvml_driver_version, "610.43.03");
    EXPECT_EQ(e->facts.driver.nvml_cuda_driver_version, 13030);
    ASSERT_EQ(e->facts.driver.gpus.size(), 1u);
    const GpuInfo& g = e->facts.driver.gpus[0];
    EXPECT_EQ(g.pci_bus_id, "00000000:01:00.0");
    EXPECT_EQ(g.memory_total_mib, 16384u);
    EXPECT_EQ(g.memory_used_mib, 14u);
    EXPECT_EQ(g.compute_mode, "default");
    EXPECT_EQ(g.persistence_mode, "off");
  }
  EXPECT_EQ(whole.reports.reports.at(0).facts, cut.reports.reports.at(0).facts);
  Explained l4 = explain_file("nvidia_smi_wrapped80_l4_driver570.txt");
  EXPECT_EQ(l4.facts.driver.nvml_driver_version, "570.133.20");
  EXPECT_EQ(l4.facts.driver.nvml_cuda_driver_version, 12080);
  ASSERT_EQ(l4.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(l4.facts.driver.gpus[0].name, "NVIDIA L4");
  EXPECT_EQ(l4.facts.driver.gpus[0].ecc_uncorrected_volatile, 0);  // the "0 |" cut onto its own line
  EXPECT_EQ(l4.facts.driver.gpus[0].memory_total_mib, 23034u);
  EXPECT_EQ(l4.facts.driver.gpus[0].persistence_mode, "on");
  // Soft-wrapped at 72 columns at spaces (a tracker's or mail client's wrap), borders cut too.
  Explained soft = explain_file("nvidia_smi_wordwrap72_tesla_p4.txt");
  Explained p4 = explain_file("nvidia_smi_no_fence_tesla_p4_driver550.txt");
  for (const Explained* e : {&soft, &p4}) {
    EXPECT_EQ(e->facts.driver.nvml_driver_version, "550.135");
    EXPECT_EQ(e->facts.driver.nvml_cuda_driver_version, 12040);
    ASSERT_EQ(e->facts.driver.gpus.size(), 1u);
    EXPECT_EQ(e->facts.driver.gpus[0].cc_major * 10 + e->facts.driver.gpus[0].cc_minor, 61);
    EXPECT_EQ(e->facts.driver.gpus[0].memory_used_mib, 7719u);
    EXPECT_EQ(e->facts.driver.gpus[0].compute_mode, "default");
  }
  // A 325.15 table: no CUDA Version, "14MB / 6143MB", three GPUs between borders.
  Explained old = explain_file("nvidia_smi_325_mb_units_titan.txt");
  EXPECT_EQ(old.facts.driver.nvml_driver_version, "325.15");
  EXPECT_EQ(old.facts.driver.nvml_cuda_driver_version, 0);
  ASSERT_EQ(old.facts.driver.gpus.size(), 3u);
  EXPECT_EQ(old.facts.driver.gpus[2].pci_bus_id, "0000:84:00.0");
  EXPECT_EQ(old.facts.driver.gpus[2].memory_total_mib, 6143u);
  // The first border pasted without its '+'.
  Explained cutb = explain_file("nvidia_smi_cut_border_rtx4090d.txt");
  ASSERT_EQ(cutb.facts.driver.gpus.size(), 1u);
  EXPECT_EQ(cutb.facts.driver.gpus[0].memory_total_mib, 24564u);
  // A row that never ends is not a table: bounded, no GPU invented.
  std::string runaway = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |\n|   0  Tesla";
  for (int i = 0; i < 5000; ++i) runaway += "\nx";
  EXPECT_TRUE(explain(runaway).facts.driver.gpus.empty());
}

// Every fact a report gave is shown with the place it was read from: no evidence line of any
// fixture's findings names a live-machine query (NVML, cuDriverGetVersion, the loader
// emulation) or this machine's files for a reported fact.
TEST(ExplainReports, EveryReportedFactNamesTheReportAndLineItCameFrom) {
  const std::map<std::string, std::string> any = {{"driver.version", "S"}, {"driver.cuda", "S"}, {"gpu.0", "S"}, {"lib.libx.so", "S"}};
  std::ifstream in(kDir / "SOURCES.tsv");
  std::string line;
  size_t checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string name = split(line, '\t', true)[0];
    Explained e = explain_file(name);
    for (const auto& f : e.findings)
      for (const auto& ev : f.evidence) {
        ++checked;
        EXPECT_TRUE(report_source_label(ev.source, ev.fact, f.subject, any).empty())
            << name << ": " << f.id << ": " << ev.fact << " [" << ev.source << "]";
        EXPECT_NE(ev.source, "pasted report") << name << ": " << ev.fact;
        EXPECT_FALSE(ev.source.ends_with("torch/version.py")) << name << ": " << ev.fact << " [" << ev.source << "]";
      }
  }
  EXPECT_GE(checked, 30u);
  // The V100 report: the driver's CUDA from nvidia-smi's header line, torch's CUDA from
  // collect_env's "CUDA used to build PyTorch" line.
  Explained v100 = explain_file("collect_env_v100_driver418_nvidia_smi.txt");
  ASSERT_FALSE(v100.findings.empty());
  const Finding& f = v100.findings[0];
  ASSERT_EQ(f.id, "driver.too_old");
  std::string sources;
  for (const auto& ev : f.evidence) sources += ev.source + "\n";
  EXPECT_TRUE(contains(sources, "nvidia-smi line 37\n")) << sources;  // the header row: the driver's CUDA
  EXPECT_TRUE(contains(sources, "collect_env line ")) << sources;
  // And its fix asks for a module that exists: no open kernel modules before R515, none for
  // sm_70. The report's machine is CentOS 7, whose yum has no dnf module streams: NVIDIA's guide.
  std::string fix = join(f.fix, "\n");
  EXPECT_TRUE(contains(fix, "install NVIDIA driver R440 (proprietary kernel module)")) << fix;
  EXPECT_FALSE(contains(fix, "-open")) << fix;
  EXPECT_FALSE(contains(fix, "dnf module")) << fix;
  // A GPU's facts from nvidia-smi -q: the report and line of the GPU's remapped-rows record.
  Explained q = explain_file("nvidia_smi_q_a100_remap_pending.txt");
  ASSERT_FALSE(q.findings.empty());
  bool remap = false;
  for (const auto& ev : q.findings[0].evidence) remap |= ev.source.starts_with("nvidia-smi -q line ");
  EXPECT_TRUE(remap) << q.findings[0].evidence.size();
}

}  // namespace
}  // namespace cd
