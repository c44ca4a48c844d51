#include "probe/probe.hpp"

namespace cd {

void probe_driver(Facts&, const ProbeOptions&) {}

}  // namespace cd
