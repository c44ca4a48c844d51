#pragma once
// Flags every subcommand shares (design.md "Conventions") and the wiring helpers.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "facts/facts.hpp"
#include "facts/finding.hpp"
#include "probe/probe.hpp"
#include "report/report.hpp"

namespace cd {

struct GlobalOptions {
  bool json = false;
  bool markdown = false;
  std::string facts_file;  // --facts: replay a saved machine instead of probing
  std::string root;        // --root
  double timeout_s = 10;   // --timeout, per child process
  int verbose = 0;
  bool strict = false;     // warnings exit 1
  bool no_color = false;
  std::vector<std::string> ignore;  // --ignore ID
};

void add_global_options(CLI::App& app, GlobalOptions& g);
// A vector option that takes one value per use (`--gpu A --gpu B` or `--gpu A,B`), never the next positional.
CLI::Option* repeatable(CLI::Option* opt);

// Limits on what the user hands us (docs/security.md "Resource limits").
inline constexpr uint64_t kMaxFactsBytes = 64ull << 20;  // --facts: a real snapshot is ~200 KB
inline constexpr double kMaxTimeoutSeconds = 86400;      // --timeout, --step-timeout: larger values are clamped
// Accepts a finite number of seconds above 0 (not nan, inf, 0, -1) for --timeout and --step-timeout.
CLI::Validator seconds_validator();
// Seconds → a timeout that cannot overflow a clock: clamped to kMaxTimeoutSeconds.
std::chrono::milliseconds timeout_ms(double seconds);
// The text of --facts FILE or - (stdin) (or another OPTION's file): a regular file or stdin, at most kMaxFactsBytes,
// else an InputError (one line, exit 3).
std::string read_facts_text(const std::string& path, std::string_view option = "--facts");

ProbeOptions probe_options(const GlobalOptions& g);
// Facts from --facts, or probed live. `probe` fills them when live.
Facts load_or_probe(const GlobalOptions& g, const std::function<Facts(const ProbeOptions&)>& probe);
// Exit code for a set of findings (0 / 1 with --strict / 2): report/exit_status.hpp, the one policy.
int exit_code_for(const std::vector<Finding>& findings, const GlobalOptions& g);
// Colours (on a terminal, unless --no-color or NO_COLOR) and verbosity for the text renderers.
ReportOptions report_options(const GlobalOptions& g);
// Writes to stdout, all of it.
void print_out(const std::string& text);

// Each subcommand registers itself; its callback stores the exit code in `rc`.
void register_check(CLI::App& app, GlobalOptions& g, int& rc);     // check, snapshot
void register_scan(CLI::App& app, GlobalOptions& g, int& rc);      // scan
void register_explain(CLI::App& app, GlobalOptions& g, int& rc);   // explain
void register_verify(CLI::App& app, GlobalOptions& g, int& rc);    // verify, bench
void register_libs(CLI::App& app, GlobalOptions& g, int& rc);      // libs
void register_ps(CLI::App& app, GlobalOptions& g, int& rc);        // ps
void register_plan(CLI::App& app, GlobalOptions& g, int& rc);      // plan
void register_lock(CLI::App& app, GlobalOptions& g, int& rc);      // lock
// plan --from cuda.lock (cli/cmd_lock.cpp).
int run_plan_from_lock(const GlobalOptions& g, const std::string& path);
void register_watch(CLI::App& app, GlobalOptions& g, int& rc);     // watch
void register_toolkits(CLI::App& app, GlobalOptions& g, int& rc);  // toolkits
void register_use(CLI::App& app, GlobalOptions& g, int& rc);       // use
void register_shell_init(CLI::App& app, GlobalOptions& g, int& rc);  // shell-init

// Hidden entry points for isolated child processes (`cuda-doctor __NAME …`).
int child_driver_main(const std::vector<std::string>& args);  // cli/child_driver.cpp
int child_verify_main(const std::vector<std::string>& args);  // cli/child_verify.cpp
int child_sample_main(const std::vector<std::string>& args);  // cli/child_sample.cpp (watch)

}  // namespace cd
