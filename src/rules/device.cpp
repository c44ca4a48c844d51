// GPU-level findings: GPUs hidden from CUDA (CUDA_VISIBLE_DEVICES, cuInit 100), busy or
// prohibited compute modes, hardware faults (ECC, retired/remapped pages, a driver that
// hangs or crashes, NVML errors that mean a sick GPU), degraded PCIe links, CUDA's GPU
// numbering differing from nvidia-smi's (memory held by processes: rules/memory.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "kb/cuda_errors.hpp"
#include "kb/drivers.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string gpu_subject(const GpuInfo& g) {
  return fmt::format("GPU {} {}", g.nvml_index >= 0 ? g.nvml_index : g.cuda_index, g.name);
}

int nvml_gpu_count(const DriverFacts& d) {
  return static_cast<int>(std::count_if(d.gpus.begin(), d.gpus.end(), [](const GpuInfo& g) { return g.nvml_index >= 0; }));
}

// How CUDA reads CUDA_VISIBLE_DEVICES: a comma list of ordinals or UUID prefixes
// (GPU-…, MIG-…); parsing stops at the first entry that names no GPU.
struct VisibleDevices {
  int valid = 0;
  std::string first_bad;  // empty when every entry names a GPU
};

VisibleDevices parse_visible(const std::string& value, const DriverFacts& d) {
  VisibleDevices v;
  int count = nvml_gpu_count(d);
  for (const auto& raw : split(value, ',', /*keep_empty=*/true)) {
    std::string e(trim(raw));
    bool ok = false;
    if (!e.empty() && e.find_first_not_of("0123456789") == std::string::npos) {
      ok = e.size() < 6 && std::stoi(e) < count;
    } else if (e.rfind("GPU-", 0) == 0 || e.rfind("MIG-", 0) == 0) {
      ok = std::any_of(d.gpus.begin(), d.gpus.end(), [&](const GpuInfo& g) { return !g.uuid.empty() && g.uuid.rfind(e, 0) == 0; });
      if (e.rfind("MIG-", 0) == 0) ok = true;  // MIG instance UUIDs are not in our facts: trust them
    }
    if (!ok) {
      v.first_bad = e.empty() ? "(empty)" : e;
      break;
    }
    ++v.valid;
  }
  return v;
}

void not_visible(const Model& m, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  int count = nvml_gpu_count(d);
  const std::string* cvd = f.getenv("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> ids;
  for (const auto& g : d.gpus)
    if (g.nvml_index >= 0) ids.push_back(std::to_string(g.nvml_index));
  std::string all_ids = join(ids, ",");
  if (cvd && count > 0) {
    VisibleDevices v = parse_visible(*cvd, d);
    if (v.valid == 0 || !v.first_bad.empty()) {
      bool none = v.valid == 0;
      Finding x = new_finding(
          "device.not_visible", none ? Severity::error : Severity::warning, "CUDA_VISIBLE_DEVICES",
          none ? fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides all {} GPU(s)", *cvd, count)
               : fmt::format(
                     "CUDA_VISIBLE_DEVICES names \"{}\", which is no GPU here: CUDA ignores it and every id after it",
                     v.first_bad));
      x.evidence.push_back({"CUDA_VISIBLE_DEVICES=\"" + *cvd + "\"", "environment"});
      x.evidence.push_back({fmt::format("{} GPU(s): ids {}", count, all_ids), "NVML"});
      if (d.cuda_device_count >= 0) x.evidence.push_back({fmt::format("CUDA sees {} device(s)", d.cuda_device_count), "cuDeviceGetCount"});
      x.explanation = "CUDA enumerates only the GPUs this variable names, by index (in CUDA's order) or UUID, and stops "
                      "at the first entry that names no GPU; programs then report \"no CUDA-capable device is detected\" (100).";
      x.fix = {"unset CUDA_VISIBLE_DEVICES   # all GPUs", "export CUDA_VISIBLE_DEVICES=" + all_ids + "   # or the ones you want",
               "nvidia-smi -L   # indices and UUIDs"};
      out.push_back(std::move(x));
      return;
    }
  }
  // NVML sees GPUs (or the module is loaded) but the driver API finds none.
  if (!m.platform.cuda_sees_no_gpu || (count == 0 && !d.module_loaded)) return;
  Finding x = new_finding("device.not_visible", Severity::error, "CUDA devices",
                          "CUDA finds no GPU although the driver is loaded");
  if (!d.cu_init_error.empty()) x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
  if (count > 0) x.evidence.push_back({fmt::format("NVML lists {} GPU(s)", count), "NVML"});
  x.evidence.push_back({"device nodes: " + (d.device_nodes.empty() ? std::string("none") : join(d.device_nodes, " ")), "/dev"});
  if (cvd) x.evidence.push_back({"CUDA_VISIBLE_DEVICES=\"" + *cvd + "\"", "environment"});
  x.explanation = "The process cannot open the GPUs: the device nodes are missing or not accessible (container started "
                  "without GPUs, cgroup device rules, permissions), or the driver does not support this GPU.";
  x.fix = {"ls -l /dev/nvidia*   # must exist and be readable/writable by you (group video/render?)",
           "groups   # sudo usermod -aG video,render $USER  then log in again",
           "docker run --gpus all IMAGE …   # in a container"};
  out.push_back(std::move(x));
}

void busy_or_unavailable(const Facts& f, Findings& out) {
  for (const auto& g : f.driver.gpus) {
    std::vector<const GpuProcess*> procs;
    for (const auto& p : f.driver.processes)
      if (p.gpu_uuid == g.uuid && p.alive && !p.zombie) procs.push_back(&p);
    if (g.compute_mode == "prohibited") {
      Finding x = new_finding("device.busy_or_unavailable", Severity::error, gpu_subject(g),
                              "Compute mode is Prohibited: no process may use this GPU");
      x.evidence.push_back({"compute mode prohibited", "nvmlDeviceGetComputeMode"});
      x.explanation = "An administrator set the GPU to refuse CUDA contexts; every program gets error 46 "
                      "(\"CUDA-capable device(s) is/are busy or unavailable\").";
      x.fix = {fmt::format("sudo nvidia-smi -i {} -c DEFAULT", g.nvml_index)};
      out.push_back(std::move(x));
    } else if (g.compute_mode == "exclusive_process" && !procs.empty()) {
      Finding x = new_finding(
          "device.busy_or_unavailable", Severity::warning, gpu_subject(g),
          fmt::format("GPU is in Exclusive-Process mode and process {} already holds it", procs.front()->pid));
      x.evidence.push_back({"compute mode exclusive_process", "nvmlDeviceGetComputeMode"});
      for (const auto* p : procs)
        x.evidence.push_back({fmt::format("pid {} {} uses {} MiB", p->pid, p->name, p->used_mib), "nvmlDeviceGetComputeRunningProcesses"});
      x.explanation = "Only one process may hold a context on this GPU; any other gets error 46 until it exits.";
      x.fix = {"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
               fmt::format("# wait for or stop pid {}, or allow sharing: sudo nvidia-smi -i {} -c DEFAULT", procs.front()->pid, g.nvml_index)};
      out.push_back(std::move(x));
    }
  }
}

void hardware_faults(const Facts& f, Findings& out) {
  for (const auto& g : f.driver.gpus) {
    if (g.ecc_uncorrected_volatile > 0 || g.remapping_failed == 1) {
      Finding x = new_finding(
          "device.hardware_fault", Severity::error, gpu_subject(g),
          g.remapping_failed == 1
              ? "Row remapping failed: the GPU memory has a permanent fault"
              : fmt::format("{} uncorrectable ECC error(s) since the driver loaded", g.ecc_uncorrected_volatile));
      if (g.ecc_uncorrected_volatile > 0)
        x.evidence.push_back({fmt::format("volatile uncorrected ECC errors: {}", g.ecc_uncorrected_volatile), "nvmlDeviceGetTotalEccErrors"});
      if (g.remapping_failed == 1) x.evidence.push_back({"row remapping failure occurred", "nvmlDeviceGetRemappedRows"});
      x.explanation = "Uncorrectable memory errors corrupt or kill the programs that hit them (Xid 48/63/64/94/95); the "
                      "GPU needs a reset, and a repeat or a remapping failure means it needs service.";
      x.fix = {"sudo dmesg | grep -i xid", fmt::format("nvidia-smi -q -i {} -d ECC,ROW_REMAPPER,PAGE_RETIREMENT", g.nvml_index),
               fmt::format("sudo nvidia-smi -r -i {}   # reset once nothing runs on it (or reboot)", g.nvml_index),
               "# if errors return or remapping failed: drain the node and contact your vendor (RMA)"};
      out.push_back(std::move(x));
    } else if (g.retired_pages_pending == 1 || g.remapped_rows_pending == 1) {
      Finding x = new_finding("device.hardware_fault", Severity::warning, gpu_subject(g),
                              "Memory pages were retired/remapped and the GPU needs a reset to apply it");
      x.evidence.push_back({g.remapped_rows_pending == 1 ? "row remapping pending" : "page retirement pending",
                            g.remapped_rows_pending == 1 ? "nvmlDeviceGetRemappedRows" : "nvmlDeviceGetRetiredPagesPendingStatus"});
      x.explanation = "The GPU found bad memory cells and scheduled them out; until a reset the bad rows stay in use.";
      x.fix = {fmt::format("sudo nvidia-smi -r -i {}   # when nothing runs on it; or reboot", g.nvml_index)};
      out.push_back(std::move(x));
    }
  }
}

// The driver query hung or crashed, or NVML returned an error that means a sick GPU.
void driver_failures(const Facts& f, const Kb& kb, Findings& out) {
  const DriverFacts& d = f.driver;
  if (!d.query_error.empty()) {
    Finding x = new_finding("device.hardware_fault", Severity::error, "NVIDIA driver",
                            "The NVIDIA driver did not answer: " + d.query_error);
    x.evidence.push_back({d.query_error, "cuda-doctor __driver (child process)"});
    if (!d.module_version.empty()) x.evidence.push_back({"kernel module " + d.module_version, d.module_version_source});
    x.explanation = "NVML or cuInit hung or crashed in an isolated child; that happens when a GPU has fallen off the bus "
                    "or is wedged (Xid 79, 119), or when the driver installation is broken.";
    x.fix = {"sudo dmesg | grep -iE 'NVRM|xid'", "timeout 20 nvidia-smi   # does it hang too?",
             "sudo reboot   # a GPU that fell off the bus needs a reset or power cycle"};
    out.push_back(std::move(x));
  }
  if (d.nvml_status > 0 && d.nvml_status != 18) {
    const NvmlErrorInfo* e = find_nvml_error(kb, d.nvml_status);
    if (e && e->finding == "device.hardware_fault") {
      Finding x = new_finding("device.hardware_fault", Severity::error, "NVIDIA driver", "NVML: " + e->meaning);
      x.evidence.push_back({"nvmlInit: " + d.nvml_error, "nvmlInit_v2"});
      x.explanation = "NVML could not initialise because of the GPU's state (" + e->name + ").";
      x.fix = {"sudo dmesg | grep -iE 'NVRM|xid'", "sudo reboot"};
      out.push_back(std::move(x));
    }
  }
  // Other cuInit errors: decode them through data/cuda_errors.toml when it names a finding.
  // (34, 100, 803, 804 and 999 have their own rules.)
  static constexpr int kHandled[] = {34, 100, 803, 804, 999};
  if (d.cu_init_status > 0 && std::find(std::begin(kHandled), std::end(kHandled), d.cu_init_status) == std::end(kHandled)) {
    const CudaErrorInfo* e = find_cuda_error(kb, d.cu_init_status);
    if (e && !e->finding.empty()) {
      Finding x = new_finding(e->finding, Severity::error, "CUDA driver", "cuInit fails: " + e->meaning);
      x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
      x.explanation = "cuInit returned " + e->name + ": " + e->meaning + ".";
      x.fix = {"sudo dmesg | grep -iE 'NVRM|xid'", "nvidia-smi"};
      if (d.cu_init_status == 802)  // NVSwitch systems: Fabric Manager must run, at the driver's version
        x.fix = {"systemctl status nvidia-fabricmanager",
                 "sudo systemctl enable --now nvidia-fabricmanager   # its version must equal the driver's",
                 "sudo modprobe nvidia_uvm"};
      out.push_back(std::move(x));
    }
  }
  if (d.cu_init_status == 999 && d.nvml_status == 0) {
    const CudaErrorInfo* e = find_cuda_error(kb, 999);
    Finding x = new_finding("device.hardware_fault", Severity::error, "CUDA driver",
                            "cuInit fails with an unknown error while NVML works");
    x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
    x.explanation = "CUDA_ERROR_UNKNOWN at init usually means nvidia-uvm is not usable or the GPU is in a bad state" +
                    std::string(e ? " (" + e->meaning + ")" : "") + ".";
    x.fix = {"sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0", "sudo dmesg | grep -iE 'NVRM|xid|uvm'",
             "sudo reboot   # after a suspend/resume this is common"};
    out.push_back(std::move(x));
  }
}

void degraded_links(const Facts& f, Findings& out) {
  for (const auto& g : f.driver.gpus) {
    bool width = g.pcie_width_max > 0 && g.pcie_width_current > 0 && g.pcie_width_current < g.pcie_width_max;
    // GPUs drop the link generation when idle to save power: judge the generation only under load.
    bool busy = std::any_of(f.driver.processes.begin(), f.driver.processes.end(),
                            [&](const GpuProcess& p) { return p.gpu_uuid == g.uuid && p.alive; });
    bool gen = busy && g.pcie_gen_max > 0 && g.pcie_gen_current > 0 && g.pcie_gen_current < g.pcie_gen_max;
    if (!width && !gen) continue;
    Finding x = new_finding("device.degraded_link", Severity::warning, gpu_subject(g),
                            fmt::format("PCIe link runs at gen{} x{}, below its maximum gen{} x{}", g.pcie_gen_current,
                                        g.pcie_width_current, g.pcie_gen_max, g.pcie_width_max));
    x.evidence.push_back({fmt::format("PCIe current gen{} x{}, max gen{} x{}{}", g.pcie_gen_current, g.pcie_width_current,
                                      g.pcie_gen_max, g.pcie_width_max, busy ? " (while a process uses the GPU)" : ""),
                          "nvmlDeviceGetCurrPcieLink*/nvmlDeviceGetMaxPcieLink*"});
    x.explanation = "Host-to-GPU copies run proportionally slower; a narrower link usually means a badly seated card, a "
                    "riser or slot limit, or a BIOS setting.";
    x.fix = {fmt::format("nvidia-smi -q -i {} -d PCIE   # re-check while the GPU is busy", g.nvml_index),
             fmt::format("sudo lspci -vv -s {} | grep -E 'LnkCap|LnkSta'", g.pci_bus_id),
             "# reseat the card / check riser, slot and BIOS PCIe settings"};
    out.push_back(std::move(x));
  }
}

// CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi, NVML
// and monitoring number them by PCI bus id. On a machine with mixed GPUs cuda:N is then
// not nvidia-smi's GPU N, and a GPU chosen from nvidia-smi's list is the wrong one.
void order_differs(const Facts& f, Findings& out) {
  if (f.getenv("CUDA_VISIBLE_DEVICES")) return;  // CUDA renumbers the chosen GPUs from 0 on purpose
  std::vector<const GpuInfo*> both;
  for (const auto& g : f.driver.gpus)
    if (g.cuda_index >= 0 && g.nvml_index >= 0) both.push_back(&g);
  bool differ = std::any_of(both.begin(), both.end(), [](const GpuInfo* g) { return g->cuda_index != g->nvml_index; });
  if (!differ) return;
  std::sort(both.begin(), both.end(), [](const GpuInfo* a, const GpuInfo* b) { return a->cuda_index < b->cuda_index; });
  Finding x = new_finding("device.order_differs", Severity::warning, "GPU numbering",
                          "CUDA numbers the GPUs differently from nvidia-smi (cuda:N is not nvidia-smi's GPU N)");
  for (const GpuInfo* g : both)
    x.evidence.push_back({fmt::format("cuda:{} is nvidia-smi GPU {}: {} at {}", g->cuda_index, g->nvml_index, g->name, g->pci_bus_id),
                          "cuDeviceGetPCIBusId per CUDA ordinal vs NVML index"});
  const std::string* order = f.getenv("CUDA_DEVICE_ORDER");
  x.evidence.push_back({order ? "CUDA_DEVICE_ORDER=" + *order : "CUDA_DEVICE_ORDER unset (CUDA's default: FASTEST_FIRST)", "environment"});
  x.explanation = "CUDA orders GPUs fastest first by default, while nvidia-smi and NVML order them by PCI bus id. A GPU "
                  "picked from nvidia-smi (CUDA_VISIBLE_DEVICES=1, torch.device('cuda:1'), a scheduler's index) is then "
                  "another GPU than the one meant.";
  x.fix = {"export CUDA_DEVICE_ORDER=PCI_BUS_ID   # CUDA then numbers the GPUs like nvidia-smi",
           "# set it where jobs start (shell profile, job script, container env) so every process agrees"};
  out.push_back(std::move(x));
}

}  // namespace

Findings device_rules(const Model& m, const Kb& kb) {
  const Facts& f = m.facts;
  Findings out;
  not_visible(m, out);
  busy_or_unavailable(f, out);
  hardware_faults(f, out);
  driver_failures(f, kb, out);
  degraded_links(f, out);
  order_differs(f, out);
  return out;
}

}  // namespace cd
