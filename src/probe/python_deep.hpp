#pragma once
// --deep: run an interpreter with a short script to see what torch (and JAX) really load.
#include <chrono>
#include <string>

#include "facts/python.hpp"

namespace cd {

DeepCheck run_deep_check(const std::string& interpreter, std::chrono::milliseconds timeout);
// Parses the script's output (the line after the marker); exposed for tests.
DeepCheck parse_deep_output(const std::string& stdout_text, const std::string& stderr_text);

// The same for JAX: import, default backend, devices (its own interpreter run).
DeepJax run_deep_jax(const std::string& interpreter, std::chrono::milliseconds timeout);
DeepJax parse_deep_jax_output(const std::string& stdout_text, const std::string& stderr_text);

}  // namespace cd
