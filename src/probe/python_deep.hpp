#pragma once
// --deep: run an interpreter with a short script to see what torch really loads.
#include <chrono>
#include <string>

#include "facts/python.hpp"

namespace cd {

DeepCheck run_deep_check(const std::string& interpreter, std::chrono::milliseconds timeout);
// Parses the script's output (the line after the marker); exposed for tests.
DeepCheck parse_deep_output(const std::string& stdout_text, const std::string& stderr_text);

}  // namespace cd
