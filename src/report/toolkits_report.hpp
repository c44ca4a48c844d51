#pragma once
// `toolkits` and `use` renderers (report/toolkits_text.cpp, report/shell_code.cpp).
#include "derive/toolkits.hpp"
#include "report/report.hpp"

namespace cd {

// One block per toolkit: version and root, what selects it, origin and where the version came
// from, components and size, compilers and architectures, the driver's verdict; then the
// toolkit.* findings (warnings and errors; all with -v).
std::string render_toolkits_text(const Model& m, const std::vector<ToolkitView>& views,
                                 const std::vector<Finding>& findings, const ReportOptions& opts);
// schema cuda-doctor/toolkits/v1 (docs/json-schema.md).
std::string render_toolkits_json(const Model& m, const std::vector<ToolkitView>& views, const std::vector<Finding>& findings);

enum class Shell { bash, zsh, fish };
// "bash" / "zsh" / "fish"; nullopt otherwise.
std::optional<Shell> shell_named(std::string_view name);

// The plan as shell code: bash/zsh `export NAME='…'` / `unset NAME` (+ `hash -r`), fish
// `set -gx NAME '…' …` (search paths as lists) / `set -e NAME`. Values are single-quoted.
std::string render_shell_plan(const ShellPlan& plan, Shell shell);
// `shell-init`: the prompt hook that switches from .cuda-version files (report/shell_code.cpp);
// `exe` is the cuda-doctor it runs.
std::string render_shell_init(Shell shell, const std::string& exe);
// A value quoted for the shell: 'it'\''s' (bash, zsh), 'it\'s' (fish).
std::string shell_quote(std::string_view value, Shell shell);

}  // namespace cd
