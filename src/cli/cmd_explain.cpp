#include "cli/options.hpp"

namespace cd {

void register_explain(CLI::App& app, GlobalOptions&, int&) {
  app.add_subcommand("explain", "(not built yet)");
}

}  // namespace cd
