#pragma once
// `lock` and `plan --from` renderers (report/lock_text.cpp).
#include <string>

#include "derive/lock.hpp"
#include "report/report.hpp"

namespace cd {

// The lock itself (JSON, schema cuda-doctor/lock/v1).
std::string render_lock(const LockDoc& lock);
// The same environment for the usual tools: a pip requirements file (with the PyTorch index a
// plain `pip freeze` loses), a conda environment.yml, a pixi.toml.
std::string render_lock_requirements(const LockDoc& lock);
std::string render_lock_environment_yml(const LockDoc& lock);
std::string render_lock_pixi(const LockDoc& lock);
// `plan --from cuda.lock`: locked vs here, each difference with its commands.
std::string render_lock_diff_text(const LockDiff& diff, const ReportOptions& opts);
std::string render_lock_diff_json(const LockDiff& diff);

}  // namespace cd
