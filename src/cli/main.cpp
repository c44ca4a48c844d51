// cuda-doctor: entry point. Parses the command line and hands over to one
// subcommand (cli/cmd_*.cpp); no arguments means `check`.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "util/errors.hpp"
#include "util/escape.hpp"
#include "util/trace.hpp"

#ifndef CD_VERSION
#define CD_VERSION "0"
#endif

namespace {

const char* const kSubcommands[] = {"check", "snapshot", "scan", "explain", "verify", "bench", "libs", "ps", "plan", "lock", "watch", "toolkits", "use", "shell-init", "help"};

// `cuda-doctor`, `cuda-doctor --json` … mean `cuda-doctor check …`.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  bool has_sub = false;
  for (size_t i = 1; i < args.size() && !has_sub; ++i)
    for (const char* s : kSubcommands) has_sub |= args[i] == s;
  bool wants_help = false;
  for (size_t i = 1; i < args.size(); ++i)
    wants_help |= args[i] == "-h" || args[i] == "--help" || args[i] == "--version";
  if (!has_sub && !wants_help) args.insert(args.begin() + 1, "check");
  return args;
}

int run_child(int argc, char** argv) {
  std::vector<std::string> args(argv + 2, argv + argc);
  std::string_view mode = argv[1];
  if (mode == "__driver") return cd::child_driver_main(args);
  if (mode == "__verify") return cd::child_verify_main(args);
  if (mode == "__sample") return cd::child_sample_main(args);
  std::fprintf(stderr, "cuda-doctor: unknown internal mode %s\n", argv[1]);
  return cd::exit_code::cannot_run;
}

}  // namespace

int main(int argc, char** argv) {
  cd::trace(argc > 1 ? argv[1] : "main");
  if (argc > 1 && std::strncmp(argv[1], "__", 2) == 0) return run_child(argc, argv);

  CLI::App app{"cuda-doctor: diagnose and fix a machine's CUDA stack (driver, toolkits, GPU architecture, frameworks)",
               "cuda-doctor"};
  app.set_version_flag("--version", std::string("cuda-doctor ") + CD_VERSION);
  app.require_subcommand(1);
  cd::GlobalOptions global;
  cd::add_global_options(app, global);
  int rc = cd::exit_code::ok;
  cd::register_check(app, global, rc);
  cd::register_scan(app, global, rc);
  cd::register_explain(app, global, rc);
  cd::register_verify(app, global, rc);
  cd::register_libs(app, global, rc);
  cd::register_ps(app, global, rc);
  cd::register_plan(app, global, rc);
  cd::register_lock(app, global, rc);
  cd::register_watch(app, global, rc);
  cd::register_toolkits(app, global, rc);
  cd::register_use(app, global, rc);
  cd::register_shell_init(app, global, rc);
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) sub->fallthrough();

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);  // CLI11 parses a reversed vector
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's own message quotes what the user typed (control characters included) over two lines: one
    // escaped line instead, like every other usage error.
    std::fprintf(stderr, "cuda-doctor: %s (cuda-doctor --help lists the options)\n", cd::shown(e.what()).c_str());
    return cd::exit_code::cannot_run;
  } catch (const cd::UsageError& e) {  // the messages quote what the user gave (a path, a --gpu value): escaped
    std::fprintf(stderr, "cuda-doctor: %s\n", cd::shown(e.what()).c_str());
    return cd::exit_code::cannot_run;
  } catch (const cd::InputError& e) {
    std::fprintf(stderr, "cuda-doctor: %s\n", cd::shown(e.what()).c_str());
    return cd::exit_code::cannot_run;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda-doctor: internal error: %s\n", cd::shown(e.what()).c_str());
    return cd::exit_code::cannot_run;
  }
  cd::trace("main returns");
  return rc;
}
