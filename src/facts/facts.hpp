#pragma once
// Facts: everything the probes learned about one machine. Plain data with a
// versioned JSON schema (docs/facts-schema.md); `snapshot` writes it and
// `--facts FILE` replays it, so every rule is testable with recorded machines.
#include <map>
#include <string>
#include <vector>

#include "facts/binary.hpp"
#include "facts/driver.hpp"
#include "facts/json.hpp"
#include "facts/libs.hpp"
#include "facts/log.hpp"
#include "facts/python.hpp"
#include "facts/toolkit.hpp"
#include "facts/verify.hpp"

namespace cd {

inline constexpr const char* kFactsSchema = "cuda-doctor/facts/v1";

struct HostFacts {
  std::string hostname;
  std::string os;       // PRETTY_NAME of /etc/os-release
  std::string os_id;        // its ID ("debian"); empty in snapshots older than the field
  std::string os_like;      // its ID_LIKE ("rhel centos fedora")
  std::string os_version;   // its VERSION_ID ("12", "24.04")
  std::string os_codename;  // its VERSION_CODENAME ("bookworm")
  std::string kernel;   // uname -r
  std::string arch;     // x86_64 / aarch64
  std::string glibc;
};
CD_JSON(HostFacts, hostname, os, os_id, os_like, os_version, os_codename, kernel, arch, glibc)

// A probe's failure or caveat, recorded as data ("nvml: timed out after 10 s").
struct ProbeNote {
  std::string probe;
  std::string message;
};
CD_JSON(ProbeNote, probe, message)

struct Facts {
  std::string schema = kFactsSchema;
  std::string tool_version;
  std::string collected_at;  // ISO 8601 UTC
  std::string root = "/";    // filesystem root the probes read
  HostFacts host;
  std::map<std::string, std::string> env;  // the CUDA-relevant environment variables
  DriverFacts driver;
  PlatformFacts platform;
  ToolkitFacts toolkit;
  std::vector<PythonEnv> pythons;
  std::vector<BinaryScan> binaries;
  LibsFacts libs;
  LogFacts log;
  VerifyFacts verify;
  std::vector<ProbeNote> notes;
  std::map<std::string, double> probe_seconds;  // wall time of each probe (-v shows them)

  const std::string* getenv(const std::string& name) const {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  }
};
CD_JSON(Facts, schema, tool_version, collected_at, root, host, env, driver, platform, toolkit, pythons, binaries, libs,
        log, verify, notes, probe_seconds)

// Parses a facts file; throws InputError with a one-line message on bad input.
Facts facts_from_json_text(const std::string& text, const std::string& origin);
std::string facts_to_json_text(const Facts& facts);

}  // namespace cd
