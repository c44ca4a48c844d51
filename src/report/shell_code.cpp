// `use` as shell code: each assignment of a ShellPlan written in the syntax of bash, zsh or
// fish. Values are single-quoted, so nothing in a path (spaces, $, `, ", newlines) is expanded.
// fish keeps search paths (PATH, LD_LIBRARY_PATH, CUDA_PATH) as lists: one word per entry.
#include <fmt/format.h>

#include "report/toolkits_report.hpp"
#include "util/strings.hpp"

namespace cd {

std::optional<Shell> shell_named(std::string_view name) {
  if (name == "bash") return Shell::bash;
  if (name == "zsh") return Shell::zsh;
  if (name == "fish") return Shell::fish;
  return std::nullopt;
}

std::string shell_quote(std::string_view value, Shell shell) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += shell == Shell::fish ? "\\'" : "'\\''";
    else if (c == '\\' && shell == Shell::fish) out += "\\\\";
    else out += c;
  }
  return out + "'";
}

std::string render_shell_plan(const ShellPlan& plan, Shell shell) {
  std::string out;
  for (const auto& a : plan.vars) {
    if (shell == Shell::fish) {
      if (!a.value) {
        out += fmt::format("set -e {};\n", a.name);
        continue;
      }
      std::string words;
      if (a.list && !a.value->empty())
        for (const auto& e : split(*a.value, ':', true)) words += " " + shell_quote(e, shell);
      else
        words = " " + shell_quote(*a.value, shell);
      out += fmt::format("set -gx {}{};\n", a.name, words);
    } else if (a.value) {
      out += fmt::format("export {}={};\n", a.name, shell_quote(*a.value, shell));
    } else {
      out += fmt::format("unset {};\n", a.name);
    }
  }
  if (plan.rehash && shell != Shell::fish) out += "hash -r;\n";
  return out;
}

}  // namespace cd

namespace cd {

// The prompt hook. Per prompt it walks up from $PWD for .cuda-version with the shell's own
// `test` and reads its first word with `read` (builtins: no process), and compares the file
// and its text with what it saw last (shell variables). Only a change starts cuda-doctor:
// `use --from FILE` on a new file or text, `use --off` when no file applies any more.
std::string render_shell_init(Shell shell, const std::string& exe) {
  std::string q = shell_quote(exe, shell);
  if (shell == Shell::fish)
    return fmt::format(R"SH(# cuda-doctor shell-init fish: switch CUDA toolkits from .cuda-version files
function _cuda_doctor_hook --on-event fish_prompt
    set -l d $PWD
    set -l f ''
    while true
        if test -f "$d/.cuda-version"
            set f "$d/.cuda-version"
            break
        end
        test -z "$d"; and break
        set d (string replace -r '/[^/]*$' '' -- $d)
    end
    set -l t ''
    test -n "$f"; and read -l line < $f; and set t (string trim -- $line)
    if test "$f" != "$_cuda_doctor_hook_file" -o "$t" != "$_cuda_doctor_hook_text"
        set -g _cuda_doctor_hook_file $f
        set -g _cuda_doctor_hook_text $t
        if test -n "$f"
            {0} use --quiet --shell fish --from $f | source
        else
            {0} use --quiet --shell fish --off | source
        end
    end
end
)SH",
                       q);
  std::string hook = fmt::format(R"SH(_cuda_doctor_hook() {{
  local rc=$? d=$PWD f= t=
  while :; do
    if [[ -f $d/.cuda-version ]]; then f=$d/.cuda-version; break; fi
    [[ -z $d ]] && break
    d=${{d%/*}}
  done
  [[ -n $f ]] && {{ read -r t _ < "$f" || [[ -n $t ]]; }} 2>/dev/null
  if [[ $f != "${{_cuda_doctor_hook_file-}}" || $t != "${{_cuda_doctor_hook_text-}}" ]]; then
    _cuda_doctor_hook_file=$f
    _cuda_doctor_hook_text=$t
    if [[ -n $f ]]; then
      eval "$({0} use --quiet --shell {1} --from "$f")"
    else
      eval "$({0} use --quiet --shell {1} --off)"
    fi
  fi
  return $rc
}}
)SH",
                                 q, shell == Shell::zsh ? "zsh" : "bash");
  if (shell == Shell::zsh)
    return "# cuda-doctor shell-init zsh: switch CUDA toolkits from .cuda-version files\n" + hook +
           "typeset -ag precmd_functions\n"
           "if (( ! ${precmd_functions[(I)_cuda_doctor_hook]} )); then precmd_functions=(_cuda_doctor_hook $precmd_functions); fi\n";
  return "# cuda-doctor shell-init bash: switch CUDA toolkits from .cuda-version files\n" + hook +
         "if [[ \";${PROMPT_COMMAND[*]:-};\" != *\";_cuda_doctor_hook;\"* ]]; then\n"
         "  PROMPT_COMMAND=\"_cuda_doctor_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}\"\n"
         "fi\n";
}

}  // namespace cd
