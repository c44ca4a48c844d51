// verify's measurements next to what the GPU or link should reach. gpu/verify_expect
// records the expected figure and the threshold (both from data/gpu_perf.toml, with their
// source) when the run happens; whether a value falls below is decided here, once, for the
// rule (perf.below_expected) and the tables of verify and bench alike.
#include "derive/derive_parts.hpp"

namespace cd {

std::vector<MeasurementModel> derive_measurements(const VerifyFacts& v) {
  std::vector<MeasurementModel> out;
  out.reserve(v.measurements.size());
  for (const Measurement& m : v.measurements) {
    MeasurementModel mm;
    mm.measurement = &m;
    if (m.expected > 0) mm.percent = 100.0 * m.value / m.expected;
    mm.below_expected = m.threshold > 0 && m.value < m.threshold;  // threshold 0: shown, never judged
    out.push_back(mm);
  }
  return out;
}

}  // namespace cd
