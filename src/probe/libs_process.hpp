#pragma once
// `cuda-doctor libs`: what one process loads (probe/libs_process.cpp, probe/libs_resolve.cpp).
#include <string>

#include "facts/facts.hpp"
#include "probe/probe.hpp"

namespace cd {

// FILE as the loader would start it (an executable) or dlopen it from a program without
// RPATH (a library), under opts.env; versions from facts.libs.copies (probe_libs first) (LD_LIBRARY_PATH, LD_PRELOAD), plus cuDNN's own
// sub-library loads. An unreadable or non-ELF FILE gives `error`.
ProcessLibs probe_libs_file(const Facts& facts, const ProbeOptions& opts, const std::string& file);
// A live process: the files in /proc/PID/maps, and LD_LIBRARY_PATH / LD_PRELOAD from its environ.
ProcessLibs probe_libs_pid(const Facts& facts, const ProbeOptions& opts, int pid);
// `import torch` in the environment of `python` (facts.pythons, probed first), in load
// order, as probe_libs emulates it for check. `error` when that environment has no CUDA torch.
ProcessLibs probe_libs_python(const Facts& facts, const ProbeOptions& opts, const std::string& python);

}  // namespace cd

namespace cd {
// What `libs` needs of the machine first: toolkits, Python environments and every copy of the
// CUDA libraries with their versions (probe_libs), under opts.env; each environment's packages
// and the frameworks' resolutions only as opts.python_packages / opts.libs_consumers ask.
Facts probe_libs_machine(const ProbeOptions& opts);
}  // namespace cd
