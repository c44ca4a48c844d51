#include "rules/log_join.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/errors.hpp"
#include "kb/gpus.hpp"
#include "kb/pytorch.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

constexpr const char* kGpuSource = "NVML / driver API (facts.driver.gpus)";

std::string capture(const LogEvent& e, const std::string& key) {
  auto it = e.captures.find(key);
  return it == e.captures.end() ? std::string() : it->second;
}

const LogEvent* first_context(const LogJoin& j, std::string_view signature) {
  for (const LogEvent* e : j.context)
    if (e->signature == signature) return e;
  return nullptr;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "…/site-packages/flash_attn/x.py" -> "flash-attn"; "" when not inside a Python package dir.
std::string package_of_path(std::string_view path) {
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    size_t at = path.rfind(marker);
    if (at == std::string_view::npos) continue;
    std::string_view rest = path.substr(at + marker.size());
    std::string name(rest.substr(0, rest.find('/')));
    if (size_t so = name.find(".cpython"); so != std::string::npos) name.resize(so);  // _C.cpython-312-…so
    if (name.ends_with(".py")) name.resize(name.size() - 3);
    name = replace_all(to_lower(name), "_", "-");
    return name;
  }
  return {};
}

std::string normalize_package(std::string_view name) { return replace_all(to_lower(name), "_", "-"); }

const PythonEnv* python_with_torch(const Facts& f) {
  const PythonEnv* best = nullptr;
  for (const auto& p : f.pythons)
    if (!p.torch.version.empty() && (!best || (p.is_default && !best->is_default))) best = &p;
  return best;
}

void add_gpus(Finding& f, const Model& m) {
  for (const auto& g : m.gpus)
    f.evidence.push_back({fmt::format("GPU {}: {}, {} (compute capability {})", g.index, g.info->name, sm_name(g.sm), cc_name(g.sm)),
                          kGpuSource});
  if (m.gpus.empty() && !m.facts.driver.pci_gpus.empty())
    f.evidence.push_back({fmt::format("{} NVIDIA device(s) on the PCI bus, none visible to the driver", m.facts.driver.pci_gpus.size()),
                          "/sys/bus/pci/devices"});
}

void add_driver(Finding& f, const Model& m) {
  const DriverModel& d = m.driver;
  if (d.version.empty() && d.cuda.empty()) return;
  f.evidence.push_back({fmt::format("driver {} supports CUDA up to {}", d.version.empty() ? "(version unknown)" : d.version.text,
                                    d.cuda.empty() ? "(unknown)" : d.cuda.major_minor()),
                        d.version_source.empty() ? d.cuda_source
                        : d.cuda_source.empty()  ? d.version_source
                                                 : d.version_source + "; " + d.cuda_source});
}

std::string images_summary(const BinaryScan& b) {
  std::vector<std::string> sass, ptx;
  for (const auto& im : b.images) {
    std::string name = (im.kind == "ptx" ? "compute_" : "sm_") + std::to_string(im.arch) + im.suffix;
    auto& list = im.kind == "ptx" ? ptx : sass;
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  return fmt::format("SASS {}; PTX {}", sass.empty() ? "none" : join(sass, " "), ptx.empty() ? "none" : join(ptx, " "));
}

// Binaries of facts.binaries the event points at (traceback frame, a path or library in the line).
std::vector<const BinaryScan*> binaries_for(const LogEvent& e, const Facts& facts) {
  std::vector<std::string> paths{e.frame, capture(e, "lib"), capture(e, "path"), capture(e, "file")};
  std::vector<const BinaryScan*> out;
  for (const auto& b : facts.binaries) {
    bool hit = false;
    for (const auto& p : paths) {
      if (p.empty()) continue;
      std::string pkg = package_of_path(p);
      hit |= p == b.path || path_basename(p) == path_basename(b.path) ||
             (!pkg.empty() && (pkg == normalize_package(b.package) || pkg == package_of_path(b.path)));
    }
    if (hit && out.size() < 3) out.push_back(&b);
  }
  return out;
}

// "sm_90" -> 90; 0 when it is no sm name.
int sm_number(const std::string& sm) { return sm.starts_with("sm_") ? std::atoi(sm.c_str() + 3) : 0; }

void join_arch(Finding& f, const LogEvent& e, const LogJoin& j) {
  const Facts& facts = j.facts;
  add_gpus(f, j.model);
  if (const LogEvent* archs = first_context(j, "torch_supported_archs_line"))
    f.evidence.push_back({fmt::format("line {}: this PyTorch supports {}", archs->line, std::string(trim(capture(*archs, "archs")))),
                          facts.log.source});
  auto bins = binaries_for(e, facts);
  for (const BinaryScan* b : bins) {
    f.evidence.push_back({fmt::format("{}: {}", b->path, images_summary(*b)), "cuda-doctor scan (facts.binaries)"});
    for (const auto& v : j.model.verdicts[static_cast<size_t>(b - facts.binaries.data())])
      f.evidence.push_back({fmt::format("  for {}: {}{}", v.gpu, verdict_name(v.verdict), v.detail.empty() ? "" : " — " + v.detail), "cuda-doctor scan"});
  }
  std::string path_hint = !capture(e, "lib").empty() ? capture(e, "lib") : e.frame;
  bool scannable = !path_hint.empty() && path_hint.front() == '/' && !path_hint.ends_with(".py");  // a .so or executable
  if (bins.empty() && scannable)
    f.fix.push_back(fmt::format("cuda-doctor scan {}   # which sm_XX/compute_XX images it carries", path_hint));
  if (j.model.gpus.empty()) return;
  const MachineGpu& gpu = j.model.gpus.front();
  std::string sm = capture(e, "sm").empty() ? sm_name(gpu.sm) : "sm_" + capture(e, "sm");
  std::string cc = cc_name(gpu.sm);
  std::string pkg = package_of_path(e.frame);
  const PythonEnv* py = python_with_torch(facts);
  bool about_torch = pkg == "torch" || starts_with(e.signature, "torch_") || (pkg.empty() && e.frame.empty() && py);
  if (py && about_torch) {
    const EnvModel& em = j.model.env(*py);
    f.evidence.push_back({fmt::format("torch {} (CUDA {}) in {}: archs {}", py->torch.version, py->torch.cuda.empty() ? "none" : py->torch.cuda,
                                      py->prefix, em.torch_arch_list.empty() ? "(not recorded)" : join(em.torch_arch_list, " ")),
                          em.torch_arch_list_source.empty() ? py->torch.source : em.torch_arch_list_source});
    if (std::string variant = torch_variant_for(j.kb, py->torch.version, j.model.driver.cuda, sm_number(sm)).variant; !variant.empty())
      f.fix.push_back(fmt::format("{} -m pip install --force-reinstall torch=={} --index-url {}", python_cmd(py),
                                  Version::parse(py->torch.version) ? Version::parse(py->torch.version)->major_minor() + ".*" : py->torch.version,
                                  torch_index_url(j.kb, variant)));
    else
      f.fix.push_back(fmt::format("# install a torch wheel whose arch list includes {} (cuda-doctor check lists the variants)", sm));
  } else if (!pkg.empty()) {
    f.fix.push_back(fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\" pip install --no-build-isolation --force-reinstall --no-cache-dir {}", cc, pkg));
  } else {
    f.fix.push_back(fmt::format("# rebuild for this GPU: nvcc -gencode arch=compute_{0},code=sm_{0} -gencode arch=compute_{0},code=compute_{0} …",
                                gpu.sm));
  }
}

void join_driver_too_old(Finding& f, const LogEvent& e, const LogJoin& j) {
  add_driver(f, j.model);
  // Without this machine's driver (--no-probe, another machine's log) the log's own
  // nvidia-smi header tells which driver raised the error (also when the driver above came
  // from the log's pasted reports: this says on which line).
  if (const LogEvent* smi = first_context(j, "nvidia_smi_banner");
      smi && (j.model.driver.version.empty() || j.facts.tool_version == "pasted report")) {
    std::string cuda = capture(*smi, "cuda");
    f.evidence.push_back({fmt::format("nvidia-smi in the log (line {}): driver {}{}", smi->line, capture(*smi, "driver"),
                                      cuda.empty() ? "" : ", supports CUDA up to " + cuda),
                          j.facts.log.source});
  }
  if (std::string found = capture(e, "found"); !found.empty() && std::all_of(found.begin(), found.end(), ::isdigit))
    f.evidence.push_back({fmt::format("the program saw driver CUDA {}", Version::from_cuda_int(std::atoi(found.c_str())).major_minor()),
                          j.facts.log.source});
  const PythonEnv* py = python_with_torch(j.facts);
  const Version& driver = j.model.driver.cuda;
  if (py && !py->torch.cuda.empty()) {
    auto built = Version::parse(py->torch.cuda);
    f.evidence.push_back({fmt::format("torch {} in {} was built for CUDA {}", py->torch.version, py->prefix, py->torch.cuda), py->torch.source});
    if (built && !driver.empty() && driver < *built) {
      TorchPick pick = torch_variant_for(j.kb, py->torch.version, driver);
      if (!pick.variant.empty() && !pick.minor_compat)
        f.fix.push_back(fmt::format("{} -m pip install --force-reinstall torch --index-url {}   # CUDA {} <= driver's {}", python_cmd(py),
                                    torch_index_url(j.kb, pick.variant), cuda_from_tag(pick.variant)->major_minor(), driver.major_minor()));
      f.fix.push_back(fmt::format("# or upgrade the driver to one that supports CUDA {}", built->major_minor()));
    }
  }
}

void join_oom(Finding& f, const LogEvent& e, const LogJoin& j) {
  const Facts& facts = j.facts;
  std::string gpu_index = capture(e, "gpu");
  const GpuInfo* gpu = nullptr;
  for (const auto& g : j.model.gpus)
    if (!gpu_index.empty() && std::to_string(g.index) == gpu_index) gpu = g.info;
  if (!gpu && facts.driver.gpus.size() == 1) gpu = &facts.driver.gpus.front();
  if (gpu)
    f.evidence.push_back({fmt::format("GPU {}: {} has {} MiB, {} MiB in use now", gpu_index.empty() ? "0" : gpu_index, gpu->name,
                                      gpu->memory_total_mib, gpu->memory_used_mib),
                          kGpuSource});
  if (std::string others = capture(e, "other_pids"); !others.empty())
    f.evidence.push_back({"the log names other processes on the GPU: " + others, facts.log.source});
  bool any_dead = false;
  for (const auto& p : facts.driver.processes) {
    if (gpu && !gpu->uuid.empty() && !p.gpu_uuid.empty() && p.gpu_uuid != gpu->uuid) continue;
    bool dead = !p.alive || p.zombie;
    any_dead |= dead;
    f.evidence.push_back({fmt::format("pid {} ({}) holds {} MiB{}", p.pid, p.name.empty() ? "?" : p.name, p.used_mib,
                                      !p.alive ? " — process is gone" : p.zombie ? " — zombie (defunct)" : ""),
                          "NVML running processes (facts.driver.processes)"});
    if (!dead) f.fix.push_back(fmt::format("kill {}   # {} holds {} MiB (if it is not yours to keep)", p.pid, p.name, p.used_mib));
  }
  if (any_dead) f.fix.push_back("# memory held by a dead process: see memory.held_by_dead_process below");
  if (!capture(e, "reserved_unallocated").empty() || !capture(e, "reserved").empty())
    f.fix.push_back("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # when much is reserved but unallocated");
  f.fix.push_back("# otherwise: smaller batch / sequence length, activation checkpointing, or a larger GPU");
}

void join_lib_not_found(Finding& f, const LogEvent& e, const LogJoin& j) {
  std::string lib = capture(e, "lib");
  if (lib.empty()) return;
  std::string stem = lib.substr(0, lib.find(".so"));
  std::set<std::string> dirs;
  for (const auto& c : j.facts.libs.copies) {
    std::string base = path_basename(c.path);
    if (c.soname != lib && base != lib && !(c.soname.empty() && starts_with(base, lib))) continue;
    f.evidence.push_back({fmt::format("a copy exists: {} ({}{})", c.path, c.origin, c.version.empty() ? "" : ", " + c.version), "facts.libs.copies"});
    dirs.insert(path_dirname(c.path));
  }
  bool same_stem_other_major = false;
  for (const auto& c : j.facts.libs.copies)
    if (starts_with(path_basename(c.path), stem + ".so") && c.soname != lib && path_basename(c.path) != lib) same_stem_other_major = true;
  for (const auto& r : j.facts.libs.resolutions)
    if (r.soname == lib)
      f.evidence.push_back({fmt::format("{} looks for {}: {}", r.consumer, lib, r.path.empty() ? "not found" : r.path + " via " + r.via),
                            "loader emulation (facts.libs.resolutions)"});
  if (!dirs.empty()) {
    const std::string& dir = *dirs.begin();
    f.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}   # reaches the copy above", dir));
    f.fix.push_back(fmt::format("# system-wide: echo {} | sudo tee /etc/ld.so.conf.d/cuda-doctor.conf && sudo ldconfig", dir));
  } else if (!j.facts.libs.copies.empty() || !j.facts.collected_at.empty()) {
    f.evidence.push_back({fmt::format("no copy of {} on this machine{}", lib,
                                      same_stem_other_major ? " (only other major versions: the package needs exactly this one)" : ""),
                          "facts.libs.copies"});
    f.fix.push_back(fmt::format("# install the package (toolkit or nvidia-* wheel) of the CUDA major that {} names", lib));
  }
}

void join_not_visible(Finding& f, const LogEvent&, const LogJoin& j) {
  const Facts& facts = j.facts;
  if (const std::string* cvd = facts.getenv("CUDA_VISIBLE_DEVICES")) {
    f.evidence.push_back({fmt::format("CUDA_VISIBLE_DEVICES='{}'", *cvd), "environment"});
    if (!facts.driver.gpus.empty())
      f.fix.insert(f.fix.begin(), fmt::format("unset CUDA_VISIBLE_DEVICES   # {} GPU(s) exist; '{}' hides them", facts.driver.gpus.size(), *cvd));
  }
  add_gpus(f, j.model);
  if (!facts.platform.container.empty() && facts.driver.device_nodes.empty()) {
    f.evidence.push_back({fmt::format("running in {} with no /dev/nvidia* device nodes", facts.platform.container), facts.platform.container_evidence});
    f.fix.push_back("# start the container with --gpus all (NVIDIA Container Toolkit) or CDI devices");
  }
}

void join_stub(Finding& f, const LogEvent&, const LogJoin& j) {
  for (const auto& d : j.facts.platform.stub_dirs_on_search_path)
    f.evidence.push_back({"stub directory on the library search path: " + d, "LD_LIBRARY_PATH / ld.so.conf"});
  for (const auto& l : j.facts.driver.libraries)
    if (l.stub) f.evidence.push_back({"stub library: " + l.path, "facts.driver.libraries"});
  if (const std::string* ld = j.facts.getenv("LD_LIBRARY_PATH")) f.evidence.push_back({"LD_LIBRARY_PATH=" + *ld, "environment"});
}

void join_driver_libs(Finding& f, const LogEvent&, const LogJoin& j) {
  const Facts& facts = j.facts;
  if (!facts.driver.module_version.empty())
    f.evidence.push_back({"kernel module " + facts.driver.module_version, facts.driver.module_version_source});
  for (const auto& l : facts.driver.libraries)
    if (!l.version.empty() && l.version != facts.driver.module_version)
      f.evidence.push_back({fmt::format("{} {} at {} differs from the kernel module", l.kind, l.version, l.path), "facts.driver.libraries"});
  if (!facts.driver.libcuda_loaded.empty())
    f.evidence.push_back({"libcuda.so.1 loaded from " + facts.driver.libcuda_loaded +
                              (contains(facts.driver.libcuda_loaded, "/compat/") ? " (a cuda-compat copy)" : ""),
                          "dladdr in the driver probe"});
}

void join_wrong_env(Finding& f, const LogEvent& e, const LogJoin& j) {
  std::string module = normalize_package(capture(e, "module"));
  if (module.empty()) return;
  std::string wanted = module == "flash-attn" ? "flash-attn" : module;
  for (const auto& py : j.facts.pythons)
    for (const auto& p : py.packages)
      if (normalize_package(p.name) == wanted) {
        f.evidence.push_back({fmt::format("{} {} is installed for {}{}", p.name, p.version, py.interpreter, py.is_default ? " (the default python3)" : ""),
                              p.location});
        if (!py.is_default) f.fix.insert(f.fix.begin(), fmt::format("{} <your script>   # the interpreter that has {}", py.interpreter, p.name));
      }
}

void join_toolkit(Finding& f, const LogEvent& e, const LogJoin& j) {
  const ToolkitFacts& t = j.facts.toolkit;
  std::string want = capture(e, "torch_cuda");
  if (const LogEvent* c = first_context(j, "torch_cuda_mismatch_torch_line"); want.empty() && c) want = capture(*c, "torch_cuda");
  if (const PythonEnv* py = python_with_torch(j.facts); want.empty() && py) want = py->torch.cuda;
  if (!want.empty()) f.evidence.push_back({"PyTorch was built with CUDA " + want, j.facts.log.source});
  for (const auto& tk : t.toolkits) {
    f.evidence.push_back({fmt::format("toolkit {} at {}{}", tk.version, tk.root, tk.selected_by.empty() ? "" : " (selected by " + join(tk.selected_by, ", ") + ")"),
                          tk.version_source});
    auto v = Version::parse(tk.version);
    auto w = Version::parse(want);
    if (v && w && v->major() == w->major() && !tk.nvcc.empty())
      f.fix.insert(f.fix.begin(), fmt::format("export CUDA_HOME={0} PATH={0}/bin:$PATH   # CUDA {1} matches torch's {2}", tk.root, tk.version, want));
  }
  if (!t.cuda_home.empty()) f.evidence.push_back({fmt::format("{}={}", t.cuda_home_var.empty() ? "CUDA_HOME" : t.cuda_home_var, t.cuda_home), "environment"});
  if (e.id == "toolkit.nvcc_missing" && !t.toolkits.empty() && !t.toolkits.front().nvcc.empty())
    f.fix.insert(f.fix.begin(), fmt::format("export CUDA_HOME={0} PATH={0}/bin:$PATH", t.toolkits.front().root));
}

void join_host_compiler(Finding& f, const LogEvent&, const LogJoin& j) {
  for (const auto& c : j.facts.toolkit.host_compilers)
    f.evidence.push_back({fmt::format("host compiler {} {} ({})", c.kind, c.version.empty() ? "?" : c.version, c.path), c.source});
  for (const auto& tk : j.facts.toolkit.toolkits)
    if (tk.host_gcc_max > 0)
      f.evidence.push_back({fmt::format("CUDA {} accepts gcc <= {}", tk.version, tk.host_gcc_max), tk.host_config});
}

void join_hardware(Finding& f, const LogEvent& e, const LogJoin& j) {
  if (std::string xid = capture(e, "xid"); !xid.empty()) {
    if (const XidInfo* x = find_xid(j.kb, std::atoi(xid.c_str()))) {
      f.evidence.push_back({fmt::format("Xid {}: {}", xid, x->meaning), x->source});
      if (!x->hardware) {
        f.severity = Severity::warning;
        f.explanation = fmt::format("Xid {} ({}) is usually caused by the application, not the GPU; look for the CUDA error it raised.", xid, x->meaning);
      }
    }
  }
  std::string pci = to_lower(capture(e, "pci"));
  for (const auto& g : j.facts.driver.gpus) {
    std::string bus = to_lower(g.pci_bus_id);
    bool match = pci.empty() ? j.facts.driver.gpus.size() == 1 : (!bus.empty() && (contains(bus, pci.substr(pci.find(':') + 1)) || contains(pci, bus.substr(bus.find(':') + 1))));
    if (!match) continue;
    f.evidence.push_back({fmt::format("{} ({}): uncorrected ECC {}, retired pages pending {}", g.name, g.pci_bus_id, g.ecc_uncorrected_volatile,
                                      g.retired_pages_pending),
                          kGpuSource});
  }
}

void join_nccl(Finding& f, const LogEvent&, const LogJoin& j) {
  if (const LogEvent* v = first_context(j, "nccl_version_info"))
    f.evidence.push_back({fmt::format("line {}: NCCL {}", v->line, capture(*v, "nccl_version")), j.facts.log.source});
  if (f.id == "nccl.unhandled_cuda_error") add_driver(f, j.model);
}

void join_container_driver(Finding& f, const LogEvent&, const LogJoin& j) { add_driver(f, j.model); }

}  // namespace

void add_log_context(Finding& f, const LogJoin& j) {
  struct Clue {
    const char* signature;
    const char* what;
  };
  static constexpr Clue clues[] = {{"log_platform_wsl", "the log comes from WSL2 ({})"},
                                   {"log_platform_container", "the log comes from a container ({})"},
                                   {"log_conda_env", "the program ran in conda environment {}"}};
  for (const Clue& c : clues) {
    const LogEvent* e = first_context(j, c.signature);
    if (!e) continue;
    std::string value = capture(*e, std::string_view(c.signature) == "log_conda_env" ? "env" : "hint");
    f.evidence.push_back({fmt::format("{} (line {})", fmt::format(fmt::runtime(c.what), value), e->line), j.facts.log.source});
  }
}

void join_facts(Finding& f, const LogEvent& e, const LogJoin& j) {
  static const std::map<std::string, void (*)(Finding&, const LogEvent&, const LogJoin&)> by_id = {
      {"arch.no_kernel_image", join_arch},
      {"arch.unsupported_by_framework", join_arch},
      {"arch.ptx_unsupported", join_arch},
      {"arch.jit_only", join_arch},
      {"arch.compression_unsupported", join_arch},
      {"inference.sageattention_arch", join_arch},
      {"driver.too_old", join_driver_too_old},
      {"driver.minor_compat", join_driver_too_old},
      {"driver.stub_library", join_stub},
      {"driver.library_mismatch", join_driver_libs},
      {"driver.forward_compat_unsupported", join_driver_libs},
      {"driver.missing", join_driver_libs},
      {"memory.oom", join_oom},
      {"libs.not_found", join_lib_not_found},
      {"libs.symbol_conflict", join_lib_not_found},
      {"device.not_visible", join_not_visible},
      {"container.no_gpu_runtime", join_not_visible},
      {"framework.wrong_environment", join_wrong_env},
      {"toolkit.version_mismatch", join_toolkit},
      {"toolkit.nvcc_missing", join_toolkit},
      {"toolkit.paths_disagree", join_toolkit},
      {"toolkit.host_compiler_unsupported", join_host_compiler},
      {"device.hardware_fault", join_hardware},
      {"nccl.unhandled_cuda_error", join_nccl},
      {"nccl.system_error", join_nccl},
      {"nccl.timeout_or_hang", join_nccl},
      {"container.driver_below_image", join_container_driver},
  };
  auto it = by_id.find(e.id);
  if (it != by_id.end()) it->second(f, e, j);
}

namespace {

Finding derived(const std::string& id, Severity s, std::string title, const std::string& layer) {
  Finding f;
  f.id = id;
  f.severity = s;
  f.layer = layer;
  f.title = std::move(title);
  return f;
}

void nccl_transports(const LogJoin& j, std::vector<Finding>& out) {
  std::map<std::string, const LogEvent*> transports;  // transport -> first line using it
  std::vector<const LogEvent*> env;
  for (const LogEvent* e : j.context) {
    if (e->signature == "nccl_channel_via_net_socket") transports.emplace(capture(*e, "transport"), e);
    if (e->signature == "nccl_p2p_disabled_env") env.push_back(e);
  }
  if (transports.empty()) return;
  bool fast = false;
  for (const auto& [t, _] : transports) fast |= starts_with(t, "P2P") || t == "NVLS" || t == "NET/IB";
  auto socket = transports.find("NET/Socket");
  bool shm_only = !fast && transports.count("SHM") && j.facts.driver.gpus.size() > 1;
  if (socket == transports.end() && !shm_only) return;
  const LogEvent* e = socket != transports.end() ? socket->second : transports.at("SHM");
  Finding f = derived("nccl.slow_transport", Severity::warning,
                      socket != transports.end() ? "NCCL sends traffic over TCP sockets (NET/Socket)" : "NCCL uses shared memory (SHM) instead of P2P between GPUs",
                      "nccl");
  f.subject = j.facts.log.source;
  for (const auto& [t, ev] : transports) f.evidence.push_back({fmt::format("line {}: {}", ev->line, ev->text), j.facts.log.source});
  for (const LogEvent* v : env) f.evidence.push_back({fmt::format("line {}: {}", v->line, v->text), j.facts.log.source});
  f.explanation = socket != transports.end()
                      ? "Socket transport is the slowest path: between nodes it means no InfiniBand/RoCE plugin was usable; inside a node it means P2P/SHM were disabled."
                      : "GPUs of this node exchange data through host memory; P2P (NVLink/PCIe) is disabled or blocked (ACS/IOMMU, NCCL_P2P_DISABLE).";
  f.fix = {"NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <your command> 2>&1 | grep -E 'NET/|via'", "env | grep -E '^NCCL_(P2P|SHM|IB|NET)'",
           "nvidia-smi topo -m   # which links exist between the GPUs"};
  (void)e;
  out.push_back(std::move(f));
}

void toolkit_versions(const LogJoin& j, std::vector<Finding>& out) {
  std::map<std::string, const LogEvent*> versions;  // major.minor -> first line
  for (const LogEvent* e : j.context) {
    if (e->id != "toolkit.multiple") continue;
    auto v = Version::parse(capture(*e, "version"));
    if (v) versions.emplace(v->major_minor(), e);
  }
  if (versions.size() < 2) return;
  Finding f = derived("toolkit.multiple", Severity::warning, "the build used more than one CUDA toolkit version", "toolkit");
  f.subject = j.facts.log.source;
  for (const auto& [v, e] : versions) f.evidence.push_back({fmt::format("line {}: {}", e->line, e->text), j.facts.log.source});
  for (const auto& tk : j.facts.toolkit.toolkits) f.evidence.push_back({fmt::format("toolkit {} at {}", tk.version, tk.root), tk.version_source});
  f.explanation = "Different steps of the build found different toolkits (PATH's nvcc, CUDA_HOME, CMake's search); objects built with mixed toolkits fail to link or load.";
  f.fix = {"which -a nvcc; echo CUDA_HOME=$CUDA_HOME", "export CUDA_HOME=/usr/local/cuda-X.Y PATH=/usr/local/cuda-X.Y/bin:$PATH CUDACXX=/usr/local/cuda-X.Y/bin/nvcc"};
  out.push_back(std::move(f));
}

void duplicate_libs(const LogJoin& j, std::vector<Finding>& out) {
  std::map<std::string, std::set<std::string>> dirs;  // lib stem -> directories it was loaded from
  for (const LogEvent* e : j.context)
    if (e->signature == "ld_debug_calling_init") dirs[capture(*e, "lib")].insert(path_dirname(capture(*e, "path")));
  for (const auto& [lib, ds] : dirs) {
    if (ds.size() < 2) continue;
    Finding f = derived("libs.duplicate_copies", Severity::warning, fmt::format("two copies of {} are loaded in one process", lib), "libs");
    f.subject = j.facts.log.source;
    for (const auto& d : ds) f.evidence.push_back({fmt::format("{} loaded from {}", lib, d), j.facts.log.source});
    f.explanation = "Two copies of one CUDA library in a process clash (symbols resolve to one copy, state lives in the other).";
    f.fix = {"echo $LD_LIBRARY_PATH   # drop the directory of the copy the framework does not ship"};
    out.push_back(std::move(f));
  }
}

void bus_bandwidth(const LogJoin& j, std::vector<Finding>& out) {
  const LogEvent* e = first_context(j, "nccl_tests_bus_bandwidth");
  if (!e) return;
  double busbw = std::atof(capture(*e, "busbw").c_str());
  bool socket = false;
  for (const LogEvent* c : j.context) socket |= c->signature == "nccl_channel_via_net_socket" && capture(*c, "transport") == "NET/Socket";
  Finding f = derived("perf.below_expected", socket || busbw < 10 ? Severity::warning : Severity::info,
                      fmt::format("nccl-tests measured {} GB/s bus bandwidth", capture(*e, "busbw")), "perf");
  f.subject = j.facts.log.source;
  f.evidence.push_back({fmt::format("line {}: {}", e->line, e->text), j.facts.log.source});
  f.explanation = socket ? "The run used TCP sockets, which caps bandwidth far below NVLink/InfiniBand."
                         : "Compare with the expected figure for this machine's links (NVLink ~ hundreds of GB/s, PCIe Gen5 x16 ~ 50 GB/s).";
  f.fix = {"cuda-doctor verify   # measures and compares with this machine's expected bandwidth"};
  (void)busbw;
  out.push_back(std::move(f));
}

void dead_holders(const LogJoin& j, const std::vector<Finding>& so_far, std::vector<Finding>& out) {
  bool oom = std::any_of(so_far.begin(), so_far.end(), [](const Finding& f) { return f.id == "memory.oom"; });
  bool listed = std::any_of(so_far.begin(), so_far.end(), [](const Finding& f) { return f.id == "memory.held_by_dead_process"; });
  if (!oom || listed) return;
  Finding f = derived("memory.held_by_dead_process", Severity::warning, "GPU memory is held by processes that are gone", "memory");
  for (const auto& p : j.facts.driver.processes) {
    if (p.alive && !p.zombie) continue;
    f.evidence.push_back({fmt::format("pid {} holds {} MiB on {} — {}", p.pid, p.used_mib, p.gpu_uuid, p.alive ? "zombie (defunct)" : "no such process"),
                          "NVML running processes vs /proc"});
  }
  if (f.evidence.empty()) return;
  f.explanation = "The driver still accounts memory to processes that have exited (or are zombies whose parent has not reaped them); it counts against the OOM above.";
  f.fix = {"sudo fuser -v /dev/nvidia*   # who really has the device open", "# zombie: kill or restart its parent (ps -o ppid= -p PID)",
           "# nothing left: sudo nvidia-smi --gpu-reset -i N (no other users), or reboot"};
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> derived_log_findings(const LogJoin& j, const std::vector<Finding>& so_far) {
  std::vector<Finding> out;
  nccl_transports(j, out);
  toolkit_versions(j, out);
  duplicate_libs(j, out);
  bus_bandwidth(j, out);
  dead_holders(j, so_far, out);
  return out;
}

}  // namespace cd
