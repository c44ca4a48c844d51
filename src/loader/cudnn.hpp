#pragma once
// cuDNN 9's own dlopen calls, emulated on a Process. libcudnn.so.9 is a shim: its first call
// (cudnnGetVersion included) dlopens libcudnn_graph, and libcudnn_graph dlopens the engines
// and the heuristic library in the first calls that do work (not cudnnGetVersion); ops, cnn
// and adv are dlopened only by a call that needs them (cudnnCreateTensorDescriptor loads ops). On the H200 a torch convolution mapped graph, heuristic and both
// engines libraries but not ops/cnn/adv (docs/BENCHMARKS.md, "Session of 2026-12-06 night").
// Each name is tried most specific first ("libcudnn_graph.so.9.19.0", ".so.9.19", ".so.9"),
// with the asking library's version, and searched as that library's dlopen: its RUNPATH is
// $ORIGIN, so LD_LIBRARY_PATH comes first. Seen with LD_DEBUG=libs on the real
// libcudnn.so.9 9.19.0 (tests/loader/cudnn_test.cpp replays it against the real files).
#include <functional>
#include <string>
#include <vector>

#include "loader/loader.hpp"

namespace cd {

// The names, most specific first; `version` "9.19.0.56" or "9.19.0" (only its first three
// components count); without one, or of another major, only "libcudnn_<sub>.so.<major>".
std::vector<std::string> cudnn_sublib_names(const std::string& sub, const std::string& major, const std::string& version);

// What the shim and libcudnn_graph load, in that order, for the first libcudnn.so.N in
// `proc`: graph, engines and heuristic at the first call (LoadTime::first_call), then
// ops/cnn/adv as on_demand. `version_of(object)` gives a loaded object's version ("" when
// unknown). Returns libcudnn_graph's object index, -1 if none.
int load_cudnn_sublibs(Process& proc, const std::function<std::string(int)>& version_of);

}  // namespace cd
