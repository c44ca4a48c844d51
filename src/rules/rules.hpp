#pragma once
// Rules: pure functions (facts + knowledge base) -> findings, one file per concern.
// A rule never reads a file or the environment; everything it needs is in Facts.
#include <vector>

#include "facts/facts.hpp"
#include "facts/finding.hpp"
#include "kb/kb.hpp"

namespace cd {

using Findings = std::vector<Finding>;

Findings driver_rules(const Facts&, const Kb&);     // rules/driver.cpp: layer 1 driver.*
Findings device_rules(const Facts&, const Kb&);     // rules/device.cpp: device.*
Findings platform_rules(const Facts&, const Kb&);   // rules/platform.cpp: container.*, wsl.*
Findings toolkit_rules(const Facts&, const Kb&);    // rules/toolkit.cpp: toolkit.*
Findings arch_rules(const Facts&, const Kb&);       // rules/arch.cpp: arch.*
Findings framework_rules(const Facts&, const Kb&);  // rules/framework.cpp: framework.*
Findings libs_rules(const Facts&, const Kb&);       // rules/libs.cpp: libs.*
Findings log_rules(const Facts&, const Kb&);        // rules/log.cpp: explain's LogEvents -> findings
Findings verify_rules(const Facts&, const Kb&);     // rules/verify.cpp: verify results -> findings

// A finding with its identity filled in; the rule adds evidence, explanation and fix.
// `layer` defaults to the id's prefix ("driver.too_old" -> "driver").
Finding new_finding(std::string id, Severity severity, std::string subject, std::string title, std::string layer = {});

// The driver API found no GPU in this process (cuInit 100 CUDA_ERROR_NO_DEVICE, or zero devices):
// CUDA_VISIBLE_DEVICES hides them or the device nodes are missing. device.not_visible reports it.
bool cuda_sees_no_gpu(const DriverFacts& d);

// Everything `check` runs (all but log and verify), errors first.
Findings check_rules(const Facts&, const Kb&);

// Drops findings whose id is in `ignore` (--ignore ID, prefix match with a trailing '*').
Findings without_ignored(Findings findings, const std::vector<std::string>& ignore);

}  // namespace cd
