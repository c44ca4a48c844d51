// `libs`: which copy of each CUDA library a program (FILE…), `import torch` (--python) or a
// live process (--pid) gets, under this or a what-if environment (--env/--unset/--preload).
#include <filesystem>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/libs_view.hpp"
#include "derive/model.hpp"
#include "kb/kb.hpp"
#include "probe/libs_process.hpp"
#include "report/libs_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct LibsOptions {
  std::vector<std::string> files, set, unset, preload;
  int pid = 0;
  std::string python;
  bool want_python = false, tree = false;
};

// The environment to reason about: ours, changed by --env VAR=VALUE, --unset VAR, --preload LIB.
ProbeOptions what_if(const GlobalOptions& g, const LibsOptions& o) {
  ProbeOptions p = probe_options(g);
  for (const auto& kv : o.set) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("--env {}: expected VAR=VALUE", kv));
    p.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& v : o.unset) p.env.erase(v);
  for (const auto& lib : o.preload) p.env["LD_PRELOAD"] = p.env.count("LD_PRELOAD") ? p.env["LD_PRELOAD"] + " " + lib : lib;
  return p;
}

int run_libs(const GlobalOptions& g, const LibsOptions& o) {
  if (o.files.empty() && !o.pid && !o.want_python) throw UsageError("libs: name FILE…, --python [PY] or --pid PID");
  ProbeOptions p = what_if(g, o);
  // FILE… and --pid are answered from the loader emulation and the copies on the machine;
  // --python also needs each environment's packages and what each framework resolves, which
  // the machine-wide libs.* findings (libs_rules, shared with check) rest on.
  p.python_packages = p.libs_consumers = o.want_python;
  Facts facts = probe_libs_machine(p);
  std::vector<ProcessLibs> procs;
  for (const auto& f : o.files) {
    // As dlopen takes a relative name: from the working directory (under --root, from its top).
    std::string file = f;
    if (!f.empty() && f.front() != '/')
      file = p.root.is_host() ? std::filesystem::absolute(f).lexically_normal().string() : "/" + f;
    procs.push_back(probe_libs_file(facts, p, file));
  }
  if (o.want_python) procs.push_back(probe_libs_python(facts, p, o.python));
  if (o.pid) procs.push_back(probe_libs_pid(facts, p, o.pid));
  for (const auto& pr : procs)
    if (!pr.error.empty() && procs.size() == 1) throw InputError(pr.error);
  std::vector<ProcessView> views;
  for (const auto& pr : procs) views.push_back(derive_libs_view(pr, facts));
  Findings findings;
  if (o.want_python) {
    const Kb& kb = Kb::get();
    findings = libs_rules(derive(facts, kb), kb);
  }
  for (const auto& v : views)
    for (auto& f : libs_process_rules(v)) findings.push_back(std::move(f));
  findings = without_ignored(std::move(findings), g.ignore);
  if (g.json) print_out(render_json("libs", findings, {{"processes", libs_json(views)}}));
  else print_out(render_libs_text(views, findings, o.tree, report_options(g)));
  return exit_code_for(findings, g);
}

}  // namespace

void register_libs(CLI::App& app, GlobalOptions& g, int& rc) {
  static LibsOptions o;
  auto* libs = app.add_subcommand("libs", "Which copy of each CUDA library a program, `import torch` or a running process "
                                          "loads, by which loader rule, and every copy that lost");
  libs->add_option("FILE", o.files, "Executables or libraries, resolved as glibc's ld.so would");
  libs->add_flag("--tree", o.tree, "Every library request in load order, not only the CUDA ones");
  repeatable(libs->add_option("--env", o.set, "What if VAR=VALUE were set (LD_LIBRARY_PATH=…)"));
  repeatable(libs->add_option("--unset", o.unset, "What if VAR were unset"));
  repeatable(libs->add_option("--preload", o.preload, "What if LIB were in LD_PRELOAD"));
  libs->add_option("--pid", o.pid, "The CUDA libraries mapped in a running process (/proc/PID/maps)")->check(CLI::PositiveNumber);
  libs->add_option("--python", o.python, "What `import torch` loads in this Python's environment, and what cuDNN and NVRTC load later")
      ->expected(0, 1);
  libs->callback([&g, &rc, libs] {
    o.want_python = libs->count("--python") > 0;
    rc = run_libs(g, o);
  });
}

}  // namespace cd
