// CUDA_DOCTOR_TRACE=1: timestamped marks on stderr, for finding where the time of a
// run goes. Stamps are CLOCK_MONOTONIC seconds, so the lines of the parent and of its
// __driver child interleave on one time axis.
#pragma once

#include <string_view>

namespace cd {

bool trace_enabled();
void trace(std::string_view what);

}  // namespace cd
