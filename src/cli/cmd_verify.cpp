#include "cli/options.hpp"

namespace cd {

void register_verify(CLI::App& app, GlobalOptions&, int&) {
  app.add_subcommand("verify", "(not built yet)");
  app.add_subcommand("bench", "(not built yet)");
}

}  // namespace cd
