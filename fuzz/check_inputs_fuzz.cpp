// libFuzzer target for the text check reads from files and children it does not
// control: a saved facts file (--facts), the __driver child's JSON lines, the NVRM
// banner, nvcc --version, PEP 508 requirements and markers from METADATA, condarc
// envs_dirs, version strings, watch's /proc/PID/stat and __sample child lines. The first byte picks the parser. Each either parses or
// throws InputError; anything else (crash, hang, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "facts/facts.hpp"
#include "kb/ecosystem.hpp"
#include "probe/driver_probe.hpp"
#include "probe/python_envs.hpp"
#include "probe/watch_procs.hpp"
#include "probe/toolkits_read.hpp"
#include "util/errors.hpp"
#include "util/version.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 9) {
      case 0: (void)cd::facts_from_json_text(text, "fuzz.json"); break;
      case 1: {
        cd::ProcessResult r;
        r.started = true;
        r.exit_code = data[0] & 0x80 ? 0 : 1;
        r.out = text;
        (void)cd::driver_facts_from_child(r);
        break;
      }
      case 2: (void)cd::parse_nvrm_version(text); break;
      case 3: (void)cd::parse_nvcc_version(text); break;
      case 4: {
        cd::Requirement req = cd::parse_requirement(text);
        (void)cd::marker_applies(req.marker, "x86_64", {"xformers"});
        (void)cd::specifier_allows(req.specifier, "2.11.0+cu130");
        break;
      }
      case 5: (void)cd::condarc_envs_dirs(text); break;
      case 6: (void)cd::Version::parse(text); break;
      case 7: {  // watch: a /proc/PID/stat line and a line of the __sample child
        cd::ProcTick t;
        (void)cd::parse_proc_stat(text, t);
        break;
      }
      case 8: (void)cd::parse_sampler_line(text); break;
    }
  } catch (const cd::InputError&) {
  }
  return 0;
}
