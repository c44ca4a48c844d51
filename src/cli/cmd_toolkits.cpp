// `toolkits`: every CUDA toolkit on the machine (layer 2) with its components, size, compilers,
// architectures, what selects it and whether the driver runs what it builds; the toolkit.*
// findings and the driver's verdict on each toolkit come from the rules, as in `check`.
#include "cli/options.hpp"
#include "derive/toolkits.hpp"
#include "kb/kb.hpp"
#include "report/exit_status.hpp"
#include "report/toolkits_report.hpp"
#include "rules/rules.hpp"

namespace cd {
namespace {

int run_toolkits(const GlobalOptions& g) {
  Facts facts = load_or_probe(g, [](const ProbeOptions& p) {
    ProbeOptions opts = p;
    opts.toolkit_details = true;
    return probe_toolkits_machine(opts, true);
  });
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  std::vector<ToolkitView> views = toolkit_views(facts, model.driver, kb);
  Findings findings = toolkit_rules(model, kb);
  for (auto& f : driver_rules(model, kb))
    if ((f.id == "driver.too_old" || f.id == "driver.minor_compat") && f.subject.rfind("CUDA toolkit", 0) == 0)
      findings.push_back(std::move(f));
  findings = without_ignored(std::move(findings), g.ignore);
  sort_by_severity(findings);
  print_out(g.json ? render_toolkits_json(model, views, findings)
                   : render_toolkits_text(model, views, findings, report_options(g)));
  return exit_code_for(findings, g);
}

}  // namespace

void register_toolkits(CLI::App& app, GlobalOptions& g, int& rc) {
  auto* sub = app.add_subcommand("toolkits", "Every CUDA toolkit: version, components, size, compilers, architectures, "
                                             "what selects it, whether the driver runs what it builds");
  sub->callback([&] { rc = run_toolkits(g); });
}

}  // namespace cd
