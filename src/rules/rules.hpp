#pragma once
// Rules: pure functions (model + knowledge base) -> findings, one file per concern.
// A rule never reads a file or the environment; everything it needs is in the model
// (derive/model.hpp: the facts and what follows from them).
#include <vector>

#include "derive/libs_view.hpp"
#include "derive/model.hpp"
#include "facts/finding.hpp"
#include "kb/kb.hpp"

namespace cd {

using Findings = std::vector<Finding>;

Findings driver_rules(const Model&, const Kb&);     // rules/driver.cpp: layer 1 driver.*
Findings device_rules(const Model&, const Kb&);     // rules/device.cpp: device.*
Findings platform_rules(const Model&, const Kb&);   // rules/platform.cpp: container.*, wsl.*
// rules/driver_install.cpp: driver.module_not_built, driver.secure_boot_unsigned, driver.nouveau,
// and for driver.library_mismatch the package change behind it and the command that holds the packages.
Findings driver_install_rules(const Model&, const Kb&);
void add_library_change_evidence(const Model& m, Finding& x);
std::vector<std::string> hold_fix(const Model& m, const Kb& kb);
// rules/containers.cpp: container.toolkit_missing, container.runtime_not_configured, and
// container.no_gpu_runtime for device nodes the container may not open.
Findings container_rules(const Model&, const Kb&);
// rules/topology.cpp: pcie.* (ACS redirect, IOMMU translation) and nccl.* placement advice.
Findings topology_rules(const Model&, const Kb&);
Findings toolkit_rules(const Model&, const Kb&);    // rules/toolkit.cpp: toolkit.*
// `use`: the model of the machine as if the switch were made (derive/toolkits.hpp as_if_used):
// the driver against the chosen toolkit, host compiler, torch's CUDA, an active conda env's toolkit.
Findings use_rules(const Model&, const Kb&);        // rules/toolkit.cpp
Findings arch_rules(const Model&, const Kb&);       // rules/arch.cpp: arch.*
Findings framework_rules(const Model&, const Kb&);  // rules/framework.cpp: framework.*
Findings libs_rules(const Model&, const Kb&);       // rules/libs.cpp: libs.*
Findings memory_rules(const Model&, const Kb&);     // rules/memory.cpp: memory.* of the processes on the GPUs (ps, check)
Findings log_rules(const Model&, const Kb&);        // rules/log.cpp: explain's LogEvents -> findings
Findings verify_rules(const Model&, const Kb&);     // rules/verify.cpp: verify results -> findings
// rules/libs_process.cpp: one process of `cuda-doctor libs` (libs.duplicate_copies when a family
// is loaded twice, libs.not_found for a CUDA library that resolves nowhere).
Findings libs_process_rules(const ProcessView& view);

// A finding with its identity filled in; the rule adds evidence, explanation and fix.
// `layer` defaults to the id's prefix ("driver.too_old" -> "driver").
Finding new_finding(std::string id, Severity severity, std::string subject, std::string title, std::string layer = {});

// Everything `check` runs (all but log and verify), errors first.
Findings check_rules(const Model&, const Kb&);

// Whether a finding id matches `pattern`: the id itself, or a prefix ending in '*' ("driver.*").
bool id_matches(const std::string& id, const std::string& pattern);
// Drops findings whose id is in `ignore` (--ignore ID, prefix match with a trailing '*').
Findings without_ignored(Findings findings, const std::vector<std::string>& ignore);

}  // namespace cd
