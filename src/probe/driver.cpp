// The driver probe: files first (they work when the driver does not), then NVML and the
// driver API in a child process with a timeout, so a hung or crashing driver becomes
// DriverFacts::query_error instead of a hung or crashed tool.
#include <future>
#include <optional>

#include <nlohmann/json.hpp>

#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "util/strings.hpp"
#include "util/trace.hpp"

namespace cd {
namespace {

// The DriverFacts of one {"facts": …} line of the child; nothing for a stage line or a torn or
// foreign one.
std::optional<DriverFacts> facts_of(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("facts")) return {};
  try {
    return j["facts"].get<DriverFacts>();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

ProcessResult run_driver_child(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                               std::function<void(const DriverFacts&)> on_answer) {
  ProcessOptions p;
  p.timeout = timeout;
  p.max_output = 4u << 20;
  p.done_line = kDriverChildDoneLine;  // the answer is complete; the child's exit is not waited for
  if (on_answer) {
    p.on_stdout = [on_answer = std::move(on_answer), line = std::string(), told = false](std::string_view chunk) mutable {
      for (char ch : chunk) {
        if (ch != '\n') {
          if (line.size() < (1u << 20)) line += ch;
          continue;
        }
        if (!told)
          if (auto d = facts_of(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false)); d && !d->gpus.empty()) {
            told = true;
            on_answer(*d);
          }
        line.clear();
      }
    };
  }
  return run_process(argv, p);
}

DriverFacts driver_facts_from_child(const ProcessResult& r) {
  DriverFacts facts;
  std::string stage;     // the stage the child was in when its output ended
  bool got_facts = false;
  for (const auto& line : split(r.out, '\n')) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    if (j.contains("stage") && j["stage"].is_string()) {
      stage = j["stage"].get<std::string>();
    } else if (auto f = facts_of(j)) {  // a torn or foreign line keeps the previous answer
      facts = std::move(*f);
      got_facts = true;
      stage.clear();
    }
  }
  if (!r.started) {
    facts.query_error = "could not start the driver query: " + r.start_error;
  } else if (!r.ok()) {
    std::string err(trim(r.err));
    if (auto nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
    facts.query_error = "driver query " + r.describe() + (stage.empty() ? "" : " in " + stage) +
                        (err.empty() ? "" : " (" + err + ")");
  } else if (!got_facts) {
    facts.query_error = "driver query gave no answer";
  }
  return facts;
}

void merge_driver_query(DriverFacts& d, DriverFacts q) {
  d.nvml_driver_version = std::move(q.nvml_driver_version);
  d.nvml_status = q.nvml_status;
  d.nvml_error = std::move(q.nvml_error);
  d.nvml_library = std::move(q.nvml_library);
  d.nvml_cuda_driver_version = q.nvml_cuda_driver_version;
  d.cuda_driver_version = q.cuda_driver_version;
  d.cu_init_status = q.cu_init_status;
  d.cu_init_error = std::move(q.cu_init_error);
  d.libcuda_loaded = std::move(q.libcuda_loaded);
  d.cuda_device_count = q.cuda_device_count;
  d.query_error = std::move(q.query_error);
  d.gpus = std::move(q.gpus);
  d.processes = std::move(q.processes);
  d.queried_unix = q.queried_unix;
  d.device_open_errors = std::move(q.device_open_errors);
}

void probe_driver(Facts& facts, const ProbeOptions& opts) {
  DriverFacts& d = facts.driver;
  // The child (NVML, cuInit) starts first; the files are read while it runs.
  std::future<ProcessResult> child;
  if (opts.root.is_host())
    child = std::async(std::launch::async, [&] {
      std::vector<std::string> argv = {self_exe(), "__driver"};
      if (opts.driver_nvml_first) argv.push_back("--nvml-first");
      trace("driver child spawn");
      std::function<void(const DriverFacts&)> on_answer;
      if (opts.scan_focus)
        on_answer = [focus = opts.scan_focus](const DriverFacts& d) {
          if (auto q = focus->ask(d)) focus->focus.set(std::move(*q));
          trace("scan focus set");
        };
      return run_driver_child(argv, opts.timeout, std::move(on_answer));
    });
  std::vector<std::string> module_notes;
  probe_driver_module(d, opts.root, &module_notes);
  for (auto& n : module_notes) facts.notes.push_back({"driver", std::move(n)});
  probe_driver_libraries(d, opts.root, opts.env);
  probe_pci_gpus(d, opts.root);
  if (!opts.root.is_host()) {
    // Another root's driver cannot be asked: the live driver belongs to this machine.
    probe_device_nodes(d, opts.root);
    facts.notes.push_back({"driver", "NVML and the driver API were not queried (--root reads files only)"});
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = child.get();
  trace("driver child done");
  merge_driver_query(d, driver_facts_from_child(r));
  facts.probe_seconds["driver_child_wait"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  probe_device_nodes(d, opts.root);  // after cuInit, which creates /dev/nvidia-uvm on first use
  probe_gpu_processes(d, opts.root);
  trace("device nodes, gpu processes");
  if (!d.query_error.empty()) facts.notes.push_back({"driver", d.query_error});
}

}  // namespace cd
