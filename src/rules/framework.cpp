// Layer 4 rules: CPU-only builds, packages pinned to another torch or to nvidia-* wheels
// that are missing, torch installed in a Python other than the one that runs, failed imports.
#include <fmt/format.h>

#include "kb/ecosystem.hpp"
#include "kb/pytorch.hpp"
#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/root.hpp"  // path_join: string helpers only
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

namespace {

const PythonPackage* find_pkg(const PythonEnv& py, const std::string& name) {
  for (const auto& p : py.packages)
    if (p.name == name) return &p;
  return nullptr;
}

std::string plain(const std::string& version) { return version.substr(0, version.find('+')); }

// The newest CUDA variant of this torch release the driver can run (any, when the driver is unknown).
std::string pick_variant(const Model& m, const Kb& kb, const std::string& torch_version) {
  auto rel = torch_release(kb, torch_version);
  if (!rel) return torch_defaults(kb).unknown_release;
  TorchPick pick = torch_variant_for(kb, torch_version, m.driver.cuda);
  return pick.variant.empty() ? rel->pypi_default : pick.variant;
}

std::string reinstall_torch(const Model& m, const Kb& kb, const PythonEnv& py) {
  std::string variant = pick_variant(m, kb, py.torch.version);
  std::string pkgs = "torch==" + plain(py.torch.version);
  for (const char* companion : {"torchvision", "torchaudio"})
    if (const PythonPackage* p = find_pkg(py, companion)) pkgs += fmt::format(" {}=={}", companion, plain(p->version));
  return fmt::format("{} -m pip install --force-reinstall {} --index-url {}", python_cmd(&py), pkgs,
                     torch_index_url(kb, variant));
}

void cpu_build(const Model& m, const Kb& kb, const PythonEnv& py, Findings& out) {
  if (py.torch.version.empty() || !py.torch.cuda.empty() || !py.torch.hip.empty()) return;
  bool gpu = m.platform.machine_has_gpu;
  Finding fi = new_finding("framework.cpu_build", gpu ? Severity::error : Severity::info,
                           fmt::format("torch {} in {}", py.torch.version, py.prefix),
                           fmt::format("torch {} is a CPU-only build", py.torch.version));
  fi.evidence = {{"torch.version.cuda = None", py.torch.source}};
  if (gpu) fi.evidence.push_back({"an NVIDIA GPU/driver is present", "driver probe"});
  fi.explanation = gpu ? "This build has no CUDA code: torch.cuda.is_available() is False and .cuda() raises \"Torch not "
                         "compiled with CUDA enabled\", whatever the driver."
                       : "No NVIDIA GPU here, so a CPU build is expected; install a CUDA build where a GPU will be used.";
  if (gpu) fi.fix = {reinstall_torch(m, kb, py)};
  out.push_back(std::move(fi));
}

// Other frameworks whose installed variant has no CUDA support (only worth saying next to a GPU).
void other_cpu_builds(const Model& m, const Kb& kb, const PythonEnv& py, Findings& out) {
  if (!m.platform.machine_has_gpu) return;
  std::string py_cmd = python_cmd(&py);
  std::string jax_extra = m.driver.cuda_int() >= 13000 ? "cuda13" : "cuda12";
  auto report = [&](const PythonPackage& p, const std::string& why, std::vector<std::string> fix) {
    // Severity policy (docs/findings.md): onnxruntime and paddlepaddle are often pulled in by another
    // package that uses them on the CPU; only someone running their models on the GPU meets the
    // fallback, so info that names that situation. jaxlib and tensorflow-cpu are installed to compute.
    bool dependency_like = p.name == "onnxruntime" || p.name == "paddlepaddle";
    Finding fi = new_finding("framework.cpu_build", dependency_like ? Severity::info : Severity::warning,
                             fmt::format("{} {} in {}", p.name, p.version, py.prefix),
                             fmt::format("{} {} is a CPU-only build", p.name, p.version));
    fi.evidence = {{why, p.location}};
    fi.explanation = "This variant has no CUDA support, so it runs on the CPU even though an NVIDIA GPU is present.";
    if (dependency_like)
      fi.explanation += fmt::format(" It matters when you run {} models on the GPU in this environment (they fall back "
                                    "to the CPU); when another package pulled it in for CPU work, nothing is lost.",
                                    p.name == "onnxruntime" ? "ONNX" : "Paddle");
    fi.fix = std::move(fix);
    out.push_back(std::move(fi));
  };
  bool jax_plugin = std::any_of(py.packages.begin(), py.packages.end(), [](const PythonPackage& p) {
    return p.name.rfind("jax-cuda", 0) == 0 || (p.name == "jaxlib" && contains(p.version, "+cuda"));
  });
  for (const auto& p : py.packages) {
    if (p.name == "jaxlib" && !jax_plugin)
      report(p, "jaxlib without a jax-cuda*-plugin / jax-cuda*-pjrt package",
             {fmt::format("{} -m pip install -U \"jax[{}]\"", py_cmd, jax_extra)});
    for (const CpuPackage& cpu : cpu_packages(kb)) {
      if (p.name != cpu.name || (!cpu.unless.empty() && find_pkg(py, cpu.unless))) continue;
      std::vector<std::string> fix;
      for (const auto& line : cpu.fix) fix.push_back(replace_all(line, "{python}", py_cmd));
      report(p, cpu.why, std::move(fix));
    }
  }
}

void push_pin(const PythonEnv& py, const std::string& subject, Severity sev, std::string title,
              std::vector<Evidence> evidence, std::string explanation, std::vector<std::string> fix, Findings& out) {
  Finding fi =
      new_finding("framework.pins_conflict", sev, fmt::format("{} in {}", subject, py.prefix), std::move(title));
  fi.evidence = std::move(evidence);
  fi.explanation = std::move(explanation);
  fi.fix = std::move(fix);
  out.push_back(std::move(fi));
}

// Requires-Dist pins of one installed package against what is installed next to it.
void metadata_pins(const Facts& f, const Kb& kb, const PythonEnv& py, const PythonPackage& pkg, Findings& out) {
  std::vector<std::string> own_extras;  // cuda-toolkit's extras that torch asked for
  if (pkg.name == "cuda-toolkit")
    if (const PythonPackage* torch = find_pkg(py, "torch"))
      for (const auto& line : torch->requires_dist)
        if (auto r = parse_requirement(line); r.name == "cuda-toolkit") own_extras = r.extras;
  for (const auto& line : pkg.requires_dist) {
    Requirement req = parse_requirement(line);
    if (!pins_checked(kb, req.name) || !marker_applies(req.marker, f.host.arch, own_extras)) continue;
    const PythonPackage* have = find_pkg(py, req.name);
    bool wheel = req.name.rfind("nvidia-", 0) == 0 || req.name == "cuda-toolkit";
    std::string source = fmt::format("{} METADATA in {}", pkg.name, pkg.location);
    if (!have) {
      if (pkg.name != "torch" && pkg.name != "cuda-toolkit") continue;  // only torch's runtime wheels are certain needs
      push_pin(py, pkg.name + " " + pkg.version, Severity::error,
               fmt::format("{} {} requires {}, which is not installed", pkg.name, pkg.version, req.text.substr(0, req.text.find(';'))),
               {{fmt::format("Requires-Dist: {}", req.text), source}, {req.name + " not found in " + join(py.site_packages, ", "), "site-packages"}},
               "The wheel loads this package's CUDA libraries at import time; without it `import torch` fails with "
               "\"cannot open shared object file\".",
               {fmt::format("{} -m pip install \"{}{}\"", python_cmd(&py), req.name, req.specifier)}, out);
      continue;
    }
    if (specifier_allows(req.specifier, have->version)) continue;
    bool torch_pin = req.name == "torch";
    push_pin(py, pkg.name + " " + pkg.version, torch_pin || !wheel ? Severity::error : Severity::warning,
             fmt::format("{} {} requires {}{}, installed {}", pkg.name, pkg.version, req.name, req.specifier, have->version),
             {{fmt::format("Requires-Dist: {}", req.text), source},
              {fmt::format("{} {} installed", have->name, have->version), have->location}},
             torch_pin ? "Its compiled extensions are built against that exact torch: with another one they fail to load "
                         "(undefined symbol) or are silently disabled."
                       : "A different version than the one it was built and tested with: loading can fail with version or "
                         "symbol errors.",
             {fmt::format("{} -m pip install \"{}{}\"", python_cmd(&py), req.name, req.specifier),
              fmt::format("{} -m pip check", python_cmd(&py))},
             out);
  }
}

// Whether the package's own metadata pins torch unconditionally (sglang pins it only in its [srt] extra).
bool pins_torch(const PythonPackage& pkg) {
  return std::any_of(pkg.requires_dist.begin(), pkg.requires_dist.end(), [](const std::string& line) {
    Requirement r = parse_requirement(line);
    return r.name == "torch" && !r.specifier.empty() && marker_applies(r.marker, "", {});
  });
}

// Pins the kb knows for packages whose metadata does not name torch (flash-attn, locally built xformers).
void kb_pins(const Kb& kb, const PythonEnv& py, const PythonPackage& pkg, const PythonPackage& torch, Findings& out) {
  if (pins_torch(pkg)) return;
  // flash-attn wheels say what they were built for in the local tag: 2.8.3+cu12torch2.7cxx11abiTRUE.
  auto local = Version::parse(pkg.version);
  if (pkg.name == "flash-attn" && local && !local->local.empty()) {
    auto at = local->local.find("torch");
    auto built = at == std::string::npos ? std::nullopt : Version::parse(local->local.substr(at + 5));
    auto have = Version::parse(torch.version);
    if (built && have && (built->major() != have->major() || built->minor() != have->minor()))
      push_pin(py, "flash-attn " + pkg.version, Severity::error,
               fmt::format("flash-attn {} was built for torch {}, installed torch {}", pkg.version, built->major_minor(),
                           torch.version),
               {{"wheel local version " + local->local, pkg.location}, {"torch " + torch.version, torch.location}},
               "flash_attn_2_cuda is compiled against one torch ABI: with another torch it fails with \"undefined "
               "symbol: _ZN3c10…\".",
               {fmt::format("{} -m pip install --no-build-isolation --force-reinstall flash-attn=={}", python_cmd(&py),
                            plain(pkg.version))},
               out);
    return;
  }
  auto pin = ecosystem_pin(kb, pkg.name, pkg.version);
  if (!pin || pin_satisfied(*pin, torch.version)) return;
  std::string want = pin->match == "minimum" ? ">=" + pin->torch : pin->match == "minor" ? pin->torch + ".x" : "==" + pin->torch;
  push_pin(py, pkg.name + " " + pkg.version, Severity::error,
           fmt::format("{} {} is built for torch {}, installed torch {}", pkg.name, pkg.version, want, torch.version),
           {{fmt::format("{} {} → torch {}", pkg.name, pin->version, want), "kb: " + pin->source},
            {"torch " + torch.version, torch.location}},
           "These packages ship kernels compiled against one torch release; with another they fail to load or fall back "
           "to slow paths.",
           {fmt::format("{} -m pip install \"torch{}\"   # or the {} release built for your torch", python_cmd(&py),
                        pin->match == "minimum" ? ">=" + pin->torch : "==" + pin->torch, pkg.name)},
           out);
}

// torchvision/torchaudio must come from the same release and CUDA variant as torch.
void companions(const Kb& kb, const PythonEnv& py, const PythonPackage& torch, Findings& out) {
  auto tv = Version::parse(torch.version);
  auto rel = torch_release(kb, torch.version);
  for (const char* name : {"torchvision", "torchaudio"}) {
    const PythonPackage* p = find_pkg(py, name);
    if (!p) continue;
    auto pv = Version::parse(p->version);
    if (!pv || !tv) continue;
    if (!tv->local.empty() && !pv->local.empty() && tv->local != pv->local && tv->local.rfind("cu", 0) == 0 &&
        pv->local.rfind("cu", 0) == 0) {
      push_pin(py, std::string(name) + " " + p->version, Severity::error,
               fmt::format("{} {} and torch {} are built for different CUDA versions", name, p->version, torch.version),
               {{fmt::format("{} {}", name, p->version), p->location}, {"torch " + torch.version, torch.location}},
               "torchvision/torchaudio refuse to load ops compiled for another CUDA (\"PyTorch and torchvision were "
               "compiled with different CUDA versions\").",
               {fmt::format("{} -m pip install --force-reinstall {}=={} --index-url {}", python_cmd(&py), name,
                            plain(p->version), torch_index_url(kb, tv->local))},
               out);
      continue;
    }
    bool has_metadata_pin = pins_torch(*p);
    std::string expected = !rel ? "" : std::string(name) == "torchvision" ? rel->torchvision : rel->torchaudio;
    if (has_metadata_pin || expected.empty() || pv->major_minor() == expected) continue;
    push_pin(py, std::string(name) + " " + p->version, Severity::error,
             fmt::format("{} {} does not belong to torch {} (expects {} {}.x)", name, p->version, torch.version, name,
                         expected),
             {{fmt::format("torch {} ships with {} {}", rel->torch, name, expected), "kb: " + rel->source},
              {fmt::format("{} {} installed", name, p->version), p->location}},
             "Each torch release has one matching torchvision/torchaudio; another one fails to import its C++ ops.",
             {fmt::format("{} -m pip install \"{}=={}.*\"", python_cmd(&py), name, expected)}, out);
  }
}

void pins(const Facts& f, const Kb& kb, const PythonEnv& py, Findings& out) {
  for (const auto& pkg : py.packages) metadata_pins(f, kb, py, pkg, out);
  const PythonPackage* torch = find_pkg(py, "torch");
  if (!torch) return;
  companions(kb, py, *torch, out);
  for (const char* name : {"xformers", "flash-attn", "vllm", "sglang"})
    if (const PythonPackage* p = find_pkg(py, name)) kb_pins(kb, py, *p, *torch, out);
}

std::string activate(const PythonEnv& py) {
  if (py.kind == "conda") return "conda activate " + py.prefix;
  if (py.kind == "venv") return "source " + path_join(py.prefix, "bin/activate");
  if (py.kind == "pyenv") return "pyenv shell " + path_basename(py.prefix);
  return "export PATH=" + path_join(py.prefix, "bin") + ":$PATH";
}

void wrong_environment(const Facts& f, Findings& out) {
  const PythonEnv* def = nullptr;
  for (const auto& py : f.pythons)
    if (py.is_default) def = &py;
  if (!def) return;
  // Only a problem when the Python that runs lacks torch (a venv on top of conda's base is normal).
  if (!def->torch.version.empty()) return;
  std::vector<const PythonEnv*> with_torch;
  for (const auto& py : f.pythons)
    if (!py.torch.version.empty() && &py != def) with_torch.push_back(&py);
  // $VIRTUAL_ENV / $CONDA_PREFIX name an env with torch, but python3 on PATH runs another one.
  for (const auto& py : f.pythons) {
    bool named = contains(py.found_by, "VIRTUAL_ENV") || contains(py.found_by, "CONDA_PREFIX");
    if (!named || &py == def || py.torch.version.empty()) continue;
    Finding fi = new_finding(
        "framework.wrong_environment", Severity::warning, "python3 on PATH",
        fmt::format("the activated environment {} is not the python3 that runs ({})", py.prefix, def->interpreter));
    fi.evidence = {{fmt::format("{} points at {} (torch {})", contains(py.found_by, "VIRTUAL_ENV") ? "$VIRTUAL_ENV" : "$CONDA_PREFIX",
                                py.prefix, py.torch.version),
                    "environment"},
                   {fmt::format("python3 on PATH is {} ({})", def->interpreter, def->prefix), "PATH"}};
    fi.explanation = "The environment variable says one env is active but PATH runs another interpreter, so `python` "
                     "does not see the packages installed in the active env.";
    fi.fix = {activate(py), "hash -r   # forget cached command locations"};
    out.push_back(std::move(fi));
    return;
  }
  if (with_torch.empty()) return;
  Finding fi = new_finding("framework.wrong_environment", Severity::warning, "python3 on PATH",
                           fmt::format("python3 on PATH ({}) has no torch; torch is installed in {}", def->interpreter,
                                       with_torch.front()->prefix));
  fi.evidence = {{fmt::format("python3 on PATH → {} ({}), no torch", def->interpreter, def->prefix), "PATH"}};
  for (const PythonEnv* py : with_torch)
    fi.evidence.push_back({fmt::format("torch {} in {}", py->torch.version, py->prefix), py->torch.source});
  fi.explanation = "`import torch` will fail (ModuleNotFoundError) in the Python that runs by default; use the "
                   "environment that has it.";
  fi.fix = {activate(*with_torch.front()), fmt::format("# or run it directly: {} your_script.py", python_cmd(with_torch.front()))};
  out.push_back(std::move(fi));
}

void import_failed(const PythonEnv& py, Findings& out) {
  if (!py.deep.ran || py.deep.error.empty()) return;
  Finding fi = new_finding("framework.import_failed", Severity::error,
                           fmt::format("torch {} in {}", py.torch.version, py.prefix),
                           fmt::format("importing torch in {} fails", py.prefix));
  fi.evidence = {{py.deep.error, fmt::format("{} -c 'import torch' (--deep)", python_cmd(&py))}};
  fi.explanation = "The interpreter could not import or query torch; the last line of the error names the missing "
                   "library or module, which the other findings usually explain.";
  fi.fix = {fmt::format("{} -c 'import torch; print(torch.cuda.is_available())'   # reproduce", python_cmd(&py)),
            fmt::format("{} -m pip check", python_cmd(&py))};
  out.push_back(std::move(fi));
}

// --deep ran JAX (it has a CUDA plugin): an import error, or a CPU backend on a machine
// with a GPU (the plugin failed to load and JAX fell back silently, apart from a log line).
// Which of those it is, derive/envs.cpp decides (JaxState): the CPU asked for by
// JAX_PLATFORMS is no fallback, and when CUDA itself sees no GPU device.not_visible names
// the cause (JAX's own "jaxlib is not installed" guess would mislead).
void jax_failed(const Model& m, const PythonEnv& py, Findings& out) {
  const JaxModel& j = m.env(py).jax;
  if (!j.failed()) return;
  std::string subject = fmt::format("jax {} in {}", j.version.empty() ? "?" : j.version, py.prefix);
  Finding fi = new_finding("framework.import_failed", Severity::error, subject,
                           j.state == JaxState::cpu_fallback
                               ? fmt::format("JAX in {} runs on the CPU: its CUDA plugin did not load", py.prefix)
                               : fmt::format("importing jax in {} fails", py.prefix));
  std::string source = fmt::format("{} -c 'import jax; jax.devices()' (--deep)", python_cmd(&py));
  if (!j.backend.empty()) fi.evidence.push_back({"jax.default_backend() = " + j.backend, source});
  if (!j.message.empty()) fi.evidence.push_back({j.message, source});
  for (const auto& p : py.packages)
    if (p.name == "jax" || p.name == "jaxlib" || p.name.rfind("jax-cuda", 0) == 0)
      fi.evidence.push_back({p.name + " " + p.version, "installed (" + py.prefix + ")"});
  fi.explanation = "The CUDA plugin (jax-cudaNN-plugin / -pjrt) must match jaxlib's version exactly and find its CUDA "
                   "libraries (the nvidia-* wheels or a matching toolkit); otherwise JAX logs the reason once and uses "
                   "the CPU.";
  fi.fix = {fmt::format("{} -c 'import jax; print(jax.devices())'   # shows the plugin's error", python_cmd(&py)),
            fmt::format("{} -m pip install -U \"jax[cuda13]\"   # or jax[cuda12]: jax, jaxlib and the plugin at one "
                        "version", python_cmd(&py))};
  out.push_back(std::move(fi));
}

}  // namespace

Findings framework_rules(const Model& m, const Kb& kb) {
  const Facts& facts = m.facts;
  Findings out;
  for (const auto& py : facts.pythons) {
    cpu_build(m, kb, py, out);
    other_cpu_builds(m, kb, py, out);
    pins(facts, kb, py, out);
    import_failed(py, out);
    jax_failed(m, py, out);
  }
  wrong_environment(facts, out);
  return out;
}

}  // namespace cd
