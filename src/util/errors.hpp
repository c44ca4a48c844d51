#pragma once
// Errors that stop a command. Both map to exit code 3 ("the tool could not run").
#include <stdexcept>
#include <string>

namespace cd {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Exit codes shared by every subcommand (design.md).
namespace exit_code {
constexpr int ok = 0;
constexpr int warnings = 1;  // only with --strict
constexpr int errors = 2;
constexpr int cannot_run = 3;
}  // namespace exit_code

}  // namespace cd
