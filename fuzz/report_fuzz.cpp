// libFuzzer target for the pasted environment report parsers (explain/report_*.cpp): one
// parser per format, each fed hostile text on its own — the first byte picks it (0-13, in the
// order of kParsers) — and, for 14, every parser through parse_reports, derive and the
// explain rules, with the facts and findings written as JSON (valid UTF-8 or replaced). A
// parser must never crash, hang, throw or grow a list past its ReportLimits cap.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "derive/model.hpp"
#include "explain/explain.hpp"
#include "explain/report.hpp"
#include "kb/kb.hpp"
#include "rules/report.hpp"
#include "rules/rules.hpp"

namespace {

using Parser = void (*)(const std::vector<cd::ReportLine>&, cd::ReportBuilder&);
constexpr Parser kParsers[] = {
    cd::parse_collect_env, cd::parse_vllm_env,      cd::parse_sglang_env,  cd::parse_ds_report,
    cd::parse_nvidia_smi,  cd::parse_nvidia_smi_q,  cd::parse_nvidia_smi_topo, cd::parse_nvcc_version,
    cd::parse_proc_driver_version, cd::parse_pip_list, cd::parse_conda_list, cd::parse_ldd,
    cd::parse_torch_print, cd::parse_nvidia_container_cli,
};
constexpr size_t kCount = sizeof(kParsers) / sizeof(kParsers[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const cd::Kb& kb = cd::Kb::get();
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  cd::ReportLimits limits;
  limits.max_gpus = 8;  // small caps so short inputs reach them
  limits.max_packages = 16;
  limits.max_libraries = 8;
  limits.max_block = 64;
  size_t pick = data[0] % (kCount + 1);
  if (pick < kCount) {
    std::string storage;
    auto lines = cd::report_lines(text, storage, limits);
    cd::ReportBuilder b(kb, limits);
    kParsers[pick](lines, b);
    cd::Facts f = b.take();
    if (f.driver.gpus.size() > limits.max_gpus || f.libs.resolutions.size() > limits.max_libraries ||
        (!f.pythons.empty() && f.pythons[0].packages.size() > limits.max_packages))
      __builtin_trap();
    (void)cd::json_text(nlohmann::json(f));
    return 0;
  }
  cd::ReportFacts reports = cd::parse_reports(text, kb, limits);
  cd::Facts facts = reports.facts;
  facts.log = cd::scan_text(text, cd::matcher_for(kb));
  auto findings = cd::explain_rules(cd::derive(facts, kb), kb, reports.reports, reports.sources);
  (void)cd::json_text(nlohmann::json(facts));
  for (const auto& f : findings) (void)cd::json_text(nlohmann::json(f));
  return 0;
}
