#pragma once
// cuDNN 9's own dlopen calls, emulated on a Process. libcudnn.so.9 is a shim: at the first
// call (cudnnGetVersion included) it dlopens libcudnn_graph, and later ops/cnn/adv, by name
// from its own code; libcudnn_graph dlopens the engines and heuristics the same way. Each
// name is tried most specific first ("libcudnn_graph.so.9.19.0", ".so.9.19", ".so.9"), with
// the asking library's version, and searched as that library's dlopen: its RUNPATH is
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

// What the shim and libcudnn_graph load at the first cuDNN calls of a convolution, in that
// order, for the first libcudnn.so.N in `proc`. `version_of(object)` gives a loaded
// object's version ("" when unknown). Returns libcudnn_graph's object index, -1 if none.
int load_cudnn_sublibs(Process& proc, const std::function<std::string(int)>& version_of);

}  // namespace cd
