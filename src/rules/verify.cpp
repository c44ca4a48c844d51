// verify results -> findings: failed steps (with the CUresult/NCCL code the child
// saw), measurements below the knowledge base's expected figure, degraded PCIe
// links, and what the NCCL triage ladder found.
#include <fmt/format.h>

#include "kb/verify_fixes.hpp"
#include "rules/rules.hpp"

namespace cd {

namespace {

Finding from_failed_step(const VerifyStep& s, const Kb& kb) {
  Finding f = new_finding(
      !s.finding.empty()       ? s.finding
      : s.layer == "framework" ? "framework.import_failed"
      : s.layer == "nccl"      ? "nccl.system_error"
                               : "device.hardware_fault",
      Severity::error, s.gpu.empty() ? "verify" : s.gpu,
      fmt::format("verify step \"{}\" failed{}", s.name, s.code_name.empty() ? "" : " (" + s.code_name + ")"), s.layer);
  f.evidence.push_back({s.detail, "cuda-doctor verify: " + s.name});
  f.explanation = s.code_name == "TIMEOUT"
                      ? "The step stopped answering and was killed by the watchdog: a GPU or driver hang."
                  : s.code_name == "CRASH" ? "The step's process crashed inside the driver or a CUDA library."
                                           : "The layer under this step is broken; the steps after it were skipped.";
  f.fix = verify_step_fix(kb, f.id);  // data/verify_fixes.toml
  return f;
}

Finding below_expected(const MeasurementModel& mm) {
  const Measurement& m = *mm.measurement;
  Finding f = new_finding("perf.below_expected", Severity::warning, m.gpu,
                          fmt::format("{} {:.1f} {} is {:.0f}% of the expected {:.0f} {}", m.name, m.value, m.unit,
                                      mm.percent, m.expected, m.unit));
  f.evidence.push_back({fmt::format("measured {:.1f} {} ({})", m.value, m.unit, m.note), "cuda-doctor verify"});
  f.evidence.push_back({fmt::format("expected {:.0f} {}, threshold {:.0f}", m.expected, m.unit, m.threshold),
                        m.expected_source});
  f.explanation = "Far below what this GPU/link reaches when healthy: clocks held down (power, thermal), another "
                  "process on the GPU, a degraded link, or a misconfigured system.";
  f.fix = {"nvidia-smi -q -d PERFORMANCE,CLOCK,POWER   # throttle reasons",
           "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"};
  if (m.name == "htod_pinned" || m.name == "dtoh_pinned")
    f.fix.push_back("nvidia-smi -q | grep -A4 -i 'Link'   # PCIe generation and width now vs max");
  return f;
}

void link_findings(const VerifyFacts& v, Findings& out) {
  for (const VerifyGpu& g : v.gpus) {
    if (g.pcie_gen <= 0 || g.pcie_max_gen <= 0) continue;
    if (g.pcie_gen >= g.pcie_max_gen && g.pcie_width >= g.pcie_max_width) continue;
    Finding f = new_finding("device.degraded_link", Severity::warning, "GPU " + std::to_string(g.index) + " " + g.name,
                            fmt::format("PCIe link runs at Gen{} x{}, below its maximum Gen{} x{}", g.pcie_gen,
                                        g.pcie_width, g.pcie_max_gen, g.pcie_max_width));
    f.evidence.push_back({fmt::format("current Gen{} x{}, max Gen{} x{}", g.pcie_gen, g.pcie_width, g.pcie_max_gen,
                                      g.pcie_max_width),
                          "NVML nvmlDeviceGetCurr/MaxPcieLink*"});
    f.explanation = "An idle GPU may drop its link generation to save power; a narrower width, or a low "
                    "generation under load, means a slot, riser or BIOS problem and caps host<->device bandwidth.";
    f.fix = {"nvidia-smi -q | grep -A4 -i 'Link'   # check again under load",
             "sudo lspci -vv -s " + g.pci_bus_id + " | grep -E 'LnkCap|LnkSta'"};
    out.push_back(f);
  }
}

std::string nccl_root_cause_fix(const std::string& working) {
  if (working == "NCCL_P2P_DISABLE=1")
    return "# P2P between GPUs hangs/fails: usually PCIe ACS or the IOMMU blocks peer traffic; check with "
           "`sudo lspci -vvv | grep -i ACSCtl` and `dmesg | grep -i iommu`, then disable ACS or set iommu=pt";
  if (working == "NCCL_SHM_DISABLE=1")
    return "# shared memory transport fails: /dev/shm too small (`df -h /dev/shm`); in docker use --shm-size=8g or "
           "--ipc=host";
  return "# only sockets work: both P2P and SHM are broken; check ACS/IOMMU and /dev/shm as above";
}

void nccl_findings(const VerifyFacts& v, Findings& out) {
  const NcclFacts& n = v.nccl;
  if (n.attempts.size() > 1) {
    const NcclAttempt& first = n.attempts.front();
    Finding f;
    f.id = first.outcome == NcclOutcome::timeout ? "nccl.timeout_or_hang" : "nccl.system_error";
    f.severity = Severity::error;
    f.layer = "nccl";
    f.subject = fmt::format("NCCL {} ({} ranks)", n.version, n.ranks);
    for (const NcclAttempt& a : n.attempts)
      f.evidence.push_back({fmt::format("{}: {}{}{}", a.label, outcome_name(a.outcome), a.detail.empty() ? "" : " — " + a.detail,
                                        a.transports.empty() ? "" : " [via " + fmt::format("{}", fmt::join(a.transports, ", ")) + "]"),
                            "cuda-doctor verify NCCL triage"});
    if (n.working.empty()) {
      f.title = "NCCL all-reduce fails with every transport (default, P2P off, SHM off, sockets)";
      f.explanation = "Not a transport problem: NCCL itself, the driver or the GPUs fail; see the NCCL WARN line.";
      f.fix = {"NCCL_DEBUG=INFO cuda-doctor verify 2>&1 | grep -E 'WARN|version'", "nvidia-smi topo -m"};
    } else {
      f.title = "NCCL all-reduce " + std::string(first.outcome == NcclOutcome::timeout ? "hangs" : "fails") +
                " by default but works with " + n.working;
      f.explanation = "The default transport is broken on this machine; the working setting is a workaround "
                      "(slower), the root cause is below.";
      f.fix = {nccl_root_cause_fix(n.working)};
      for (const NcclAttempt& a : n.attempts)
        if (a.label == n.working)
          for (const std::string& e : a.env) f.fix.push_back("export " + e + "   # workaround until fixed");
    }
    out.push_back(f);
    return;
  }
  // Passed at once: on several GPUs that can reach each other, SHM/NET means a slow path.
  if (n.attempts.empty() || n.attempts.front().outcome != NcclOutcome::pass || n.ranks < 2) return;
  bool peers = false;
  for (size_t i = 0; i < v.p2p_access.size(); ++i)
    for (size_t j = 0; j < v.p2p_access[i].size(); ++j) peers |= i != j && v.p2p_access[i][j];
  std::vector<std::string> slow;
  for (const std::string& t : n.attempts.front().transports)
    if (t.rfind("SHM", 0) == 0 || t.rfind("NET", 0) == 0) slow.push_back(t);
  if (!peers || slow.empty()) return;
  Finding f = new_finding(
      "nccl.slow_transport", Severity::warning, fmt::format("NCCL {} ({} ranks)", n.version, n.ranks),
      "NCCL moves data " + fmt::format("{}", fmt::join(slow, ", ")) + " although the GPUs can reach each other (P2P)");
  f.evidence.push_back({fmt::format("transports {}; busbw {:.1f} GB/s", fmt::join(n.attempts.front().transports, ", "),
                                    n.attempts.front().busbw_gbs),
                        "NCCL_DEBUG=INFO"});
  f.explanation = "NCCL_P2P_DISABLE / NCCL_SHM_DISABLE / NCCL_P2P_LEVEL in the environment, or a topology NCCL "
                  "distrusts, forces the slower path.";
  f.fix = {"env | grep ^NCCL_   # remove NCCL_P2P_DISABLE / NCCL_P2P_LEVEL unless needed", "nvidia-smi topo -m"};
  out.push_back(f);
}

}  // namespace

Findings verify_rules(const Model& m, const Kb& kb) {
  const VerifyFacts& v = m.facts.verify;
  Findings out;
  if (!v.ran) return out;
  for (const VerifyStep& s : v.steps)
    if (s.status == StepStatus::fail && s.layer != "nccl") out.push_back(from_failed_step(s, kb));
  // NCCL failures: the triage finding explains them; without triage, the step itself.
  if (v.nccl.attempts.size() <= 1)
    for (const VerifyStep& s : v.steps)
      if (s.status == StepStatus::fail && s.layer == "nccl") out.push_back(from_failed_step(s, kb));
  for (const MeasurementModel& mm : m.measurements)
    if (mm.below_expected) out.push_back(below_expected(mm));
  link_findings(v, out);
  nccl_findings(v, out);
  sort_by_severity(out);
  return out;
}

}  // namespace cd
