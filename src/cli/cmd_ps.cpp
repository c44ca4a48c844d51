// `ps`: who holds the GPUs — per GPU its memory and processes (owner, state, age, last GPU
// use, container / pod / Slurm job / unit, command), the device-file holders without a
// context, and the memory.* findings with the safe command for each. Never kills.
#include <cstdio>

#include "cli/options.hpp"
#include "derive/model.hpp"
#include "kb/kb.hpp"
#include "report/escape.hpp"
#include "report/exit_status.hpp"
#include "report/ps_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

int run_ps(const GlobalOptions& g) {
  Facts facts = load_or_probe(g, [](const ProbeOptions& p) { return probe_ps(p); });
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  std::string why = gpus_could_not_run(facts.driver, !g.root.empty() && g.facts_file.empty());
  if (!why.empty()) {
    std::fprintf(stderr, "cuda-doctor ps: %s\n", shown(why).c_str());
    return exit_code::cannot_run;
  }
  Findings findings = without_ignored(memory_rules(model, kb), g.ignore);
  sort_by_severity(findings);
  print_out(g.json ? render_ps_json(model, findings) : render_ps_text(model, findings, report_options(g)));
  return exit_code_for(findings, g);
}

}  // namespace

void register_ps(CLI::App& app, GlobalOptions& g, int& rc) {
  auto* ps = app.add_subcommand("ps", "Who holds the GPUs: each GPU's memory and processes, where they run, and what to do");
  ps->callback([&] { rc = run_ps(g); });
}

}  // namespace cd
