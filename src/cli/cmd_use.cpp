// `use VERSION|PATH|torch|latest` and `use --off`: shell code on stdout that switches this shell
// to one toolkit (derive/toolkits.hpp plan_use), checks of the choice on stderr (rules use_rules:
// driver, host compiler, torch's CUDA, an active conda env). Nothing is changed on the machine;
// a request that matches nothing prints one line (and the install commands for a version that
// is not installed) on stderr, nothing on stdout, and exits 3.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/derive_parts.hpp"
#include "derive/toolkits.hpp"
#include "kb/kb.hpp"
#include "report/escape.hpp"
#include "report/toolkits_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct UseOptions {
  std::string spec;
  std::string from;  // --from FILE: the request is the first word of a .cuda-version file
  bool off = false;
  bool system = false;  // --system: print the machine-wide commands, change nothing
  bool quiet = false;
  std::string shell;
};

// The shell that evaluates our output: --shell, else the parent process (the shell running
// `eval "$(cuda-doctor use …)"` or `… | source`), else $SHELL, else bash.
Shell shell_for(const UseOptions& o, const ProbeOptions& p) {
  if (!o.shell.empty()) {
    if (auto s = shell_named(o.shell)) return *s;
    throw UsageError(fmt::format("--shell {}: give bash, zsh or fish", o.shell));
  }
  Root host;
  if (auto comm = host.read(fmt::format("/proc/{}/comm", getppid()), 256))
    if (auto s = shell_named(trim(*comm))) return *s;
  if (auto s = shell_named(path_basename(p.env_or("SHELL")))) return *s;
  return Shell::bash;
}

void say(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

bool names_path(const std::string& spec) {
  return spec.find('/') != std::string::npos || spec == "." || spec == ".." || spec.rfind("~", 0) == 0;
}

std::string absolute(const std::string& spec, const ProbeOptions& p) {
  std::string s = spec;
  if (s == "~" || s.rfind("~/", 0) == 0) s = p.env_or("HOME", "/") + s.substr(1);
  if (!s.empty() && s.front() != '/') s = path_join(std::filesystem::current_path().string(), s);
  return path_normalize(s);
}

// The request in a .cuda-version file: its first word ("12.4", "torch", a path relative to the file).
std::string request_in(const std::string& file, const ProbeOptions& p) {
  std::string path = absolute(file, p);
  std::string why;
  auto text = Root().read(path, 4096, &why);
  if (!text) throw InputError(fmt::format("use --from {}: {}", file, why.empty() ? "cannot read it" : why));
  std::string word(trim(*text));
  word = word.substr(0, word.find_first_of(" \t\r\n"));
  bool printable = std::all_of(word.begin(), word.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  if (word.empty() || !printable)
    throw InputError(fmt::format("use --from {}: no toolkit in it (write a version such as 12.4, a path, torch or latest)", file));
  if (names_path(word) && word.front() != '/' && word.front() != '~') word = path_join(path_dirname(path), word);
  return word;
}

int run_use(const GlobalOptions& g, const UseOptions& o) {
  if (!g.facts_file.empty() || !g.root.empty())
    throw UsageError("use switches this shell on this machine: --facts and --root do not apply");
  if (int(o.off) + int(!o.spec.empty()) + int(!o.from.empty()) != 1)
    throw UsageError("use: give one of a toolkit (12.4, a path, torch, latest), --from FILE or --off");
  ProbeOptions p = probe_options(g);
  p.compiler_version_from_layout = true;
  Shell shell = shell_for(o, p);
  const Kb& kb = Kb::get();

  if (o.off) {
    // Only the toolkits and the links in PATH: no driver, compilers or Python (the hook's cost).
    ProbeOptions q = p;
    q.toolkit_compilers = false;
    Facts facts;
    probe_toolkits(facts, q);
    ShellPlan plan = plan_off(facts.toolkit.toolkits, p.env, facts.toolkit.resolved_dirs);
    if (!plan.note.empty() && !o.quiet) say("cuda-doctor use --off: " + plan.note + "\n");
    print_out(render_shell_plan(plan, shell));
    return exit_code::ok;
  }

  std::string spec = o.spec.empty() ? request_in(o.from, p) : o.spec;
  // The torch check reads every Python environment (tens of ms). The prompt hook (--from) reads them
  // only when they matter: a `torch` request, or an activated venv / conda env whose torch it checks.
  bool pythons = o.from.empty() || spec == "torch" || p.getenv("VIRTUAL_ENV") || p.getenv("CONDA_PREFIX");
  Facts facts = probe_toolkits_machine(p, pythons);
  auto& list = facts.toolkit.toolkits;
  if (names_path(spec)) {
    std::string why;
    auto tk = probe_toolkit_at(absolute(spec, p), p, &why);
    if (!tk) throw InputError(fmt::format("use {}: {}", spec, why));
    if (std::none_of(list.begin(), list.end(), [&](const Toolkit& t) { return t.root == tk->root; })) list.push_back(*tk);
    spec = tk->root;
  }
  const PythonEnv* torch_env = active_torch_env(facts);
  ToolkitPick pick = pick_toolkit(list, spec, torch_env ? torch_env->torch.cuda : "");
  if (!pick.toolkit) {
    // Each line escaped on its own (shown() writes a newline as \n).
    std::string problem = pick.missing.empty() ? "" : release_problem(pick.missing, kb);
    std::string text = shown("cuda-doctor use: " + (problem.empty() ? pick.error : problem) + "; nothing changed") + "\n";
    if (!pick.missing.empty()) {
      if (problem.empty()) {
        text += "  install it (then run the same `use` again):\n";
        for (const auto& line : install_commands(pick.missing, kb, derive_distro(facts, kb))) text += "    " + shown(line) + "\n";
      }
      std::vector<std::string> have;
      for (const auto& tk : list)
        if (!tk.nvcc.empty()) have.push_back(fmt::format("{} ({})", tk.version.empty() ? "?" : tk.version, tk.root));
      if (!have.empty()) text += shown("  installed: " + join(have, ", ")) + "\n";
    }
    say(text);
    return exit_code::cannot_run;
  }
  const Toolkit& target = *pick.toolkit;
  if (o.system) {
    print_out(join(system_commands(target, facts.toolkit), "\n") + "\n");
    return exit_code::ok;
  }

  // The checks: the machine as it will read after the switch.
  Facts after = as_if_used(facts, target, torch_env);
  Model model = derive(after, kb);
  Findings findings = without_ignored(use_rules(model, kb), g.ignore);
  sort_by_severity(findings);
  ReportOptions ro = report_options(g);
  ro.style = g.no_color ? Style::plain() : Style::for_fd(STDERR_FILENO);
  if (!findings.empty()) say(render_findings_text(findings, ro));

  ShellPlan plan = plan_use(list, target, p.env, facts.toolkit.resolved_dirs);
  if (!o.quiet) {
    std::string line = fmt::format("cuda-doctor use: CUDA {} at {}", target.version.empty() ? "?" : target.version, target.root);
    if (target.nvcc.empty()) line += " (no nvcc: PATH unchanged)";
    if (!plan.removed.empty()) line += " · removed " + join(plan.removed, ", ");
    say(shown(line) + "\n");
  }
  print_out(render_shell_plan(plan, shell));
  return exit_code_for(findings, g);
}

}  // namespace

void register_use(CLI::App& app, GlobalOptions& g, int& rc) {
  static UseOptions o;
  auto* sub = app.add_subcommand("use", "Switch this shell to one CUDA toolkit: eval \"$(cuda-doctor use 12.4)\" "
                                        "(bash, zsh), cuda-doctor use 12.4 | source (fish)");
  sub->add_option("toolkit", o.spec, "12, 12.4, 12.4.1, a toolkit's path, torch (the active torch's CUDA) or latest");
  sub->add_option("--from", o.from, "take the toolkit from a .cuda-version file (what shell-init's hook runs)");
  sub->add_flag("--system", o.system, "change nothing: print what makes it the default for every user and login shell");
  sub->add_flag("--off", o.off, "restore what was there before the first `use`");
  sub->add_flag("-q,--quiet", o.quiet, "no summary line on stderr (problems are still reported)");
  sub->add_option("--shell", o.shell, "bash, zsh or fish (default: the shell that runs cuda-doctor)");
  sub->callback([&] { rc = run_use(g, o); });
}

}  // namespace cd
