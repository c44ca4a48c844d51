// `shell-init bash|zsh|fish`: prints the prompt hook that switches toolkits from .cuda-version
// files (report/shell_code.cpp). Add to ~/.bashrc: eval "$(cuda-doctor shell-init bash)";
// ~/.zshrc: eval "$(cuda-doctor shell-init zsh)"; config.fish: cuda-doctor shell-init fish | source.
#include <fmt/format.h>

#include "cli/options.hpp"
#include "report/toolkits_report.hpp"
#include "util/errors.hpp"
#include "util/subprocess.hpp"

namespace cd {

void register_shell_init(CLI::App& app, GlobalOptions&, int& rc) {
  static std::string shell;
  auto* sub = app.add_subcommand("shell-init", "Print the prompt hook that switches toolkits from .cuda-version files "
                                               "(eval \"$(cuda-doctor shell-init bash)\" in ~/.bashrc)");
  sub->add_option("shell", shell, "bash, zsh or fish")->required();
  sub->callback([&] {
    auto s = shell_named(shell);
    if (!s) throw UsageError(fmt::format("shell-init {}: give bash, zsh or fish", shell));
    print_out(render_shell_init(*s, self_exe()));
    rc = exit_code::ok;
  });
}

}  // namespace cd
