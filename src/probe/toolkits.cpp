#include "probe/probe.hpp"

namespace cd {

void probe_toolkits(Facts&, const ProbeOptions&) {}

}  // namespace cd
