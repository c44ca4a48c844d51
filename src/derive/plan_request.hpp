#pragma once
// What `plan` is asked about: this machine's model (live or --facts) with the command line's
// --gpu / --driver / --os / --python / --framework laid over it (derive/plan_request.cpp).
#include <string>
#include <vector>

#include "derive/model.hpp"
#include "derive/plan.hpp"

namespace cd {

struct PlanFlags {
  std::string purpose = "run";     // --for
  std::vector<std::string> gpus;   // --gpu NAME|sm_XY (repeatable)
  std::string driver;              // --driver VERSION|CUDA|none; "" = this machine's
  std::string os;                  // --os linux|wsl|windows; "" = this machine's
  std::string arch;                // --arch x86_64|aarch64; "" = this machine's
  std::string distro;              // --distro ID[-VERSION] (os-release's): ubuntu-24.04, rhel-9; "" = this machine's
  std::string python;              // --python 3.X
  std::string framework;           // --framework torch[==2.X[.Y]]
  std::string installer;           // --installer pip|uv|conda|pixi
  int cpus = 0;                    // --cpus N (build: MAX_JOBS); 0 = this machine's
  double memory_gib = 0;           // --memory GiB (build: MAX_JOBS); 0 = this machine's
};

// Whether the flags describe the whole machine (no facts needed): --gpu given.
bool plan_needs_machine(const PlanFlags& f);

// The request. `machine` is null when the flags describe the machine alone. Bad flags
// (an unknown GPU, a malformed version, an OS or installer we do not plan for) throw
// UsageError (exit 3).
PlanRequest plan_request(const PlanFlags& f, const Model* machine, const Kb& kb);

}  // namespace cd
