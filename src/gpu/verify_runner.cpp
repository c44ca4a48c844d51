#include "gpu/verify_runner.hpp"

#include <csignal>

#include <fmt/format.h>

#include "gpu/nccl_log.hpp"
#include "gpu/torch_check.hpp"
#include "gpu/verify_expect.hpp"
#include "gpu/verify_protocol.hpp"
#include "kb/nccl.hpp"
#include "util/subprocess.hpp"

namespace cd::gpu {

namespace {

struct ChildRun {
  ProcessResult proc;
  ChildReport report;
};

ChildRun run_child(const VerifyPlan& plan, std::vector<std::string> argv, const std::map<std::string, std::string>& env,
                   std::chrono::milliseconds timeout) {
  ProcessOptions po;
  po.timeout = timeout;
  po.env_set = plan.env;
  for (const auto& [k, v] : env) po.env_set[k] = v;
  ChildRun r;
  r.proc = run_process(argv, po);
  r.report = parse_child_output(r.proc.out);
  return r;
}

std::vector<std::string> verify_argv(const VerifyPlan& plan, const std::string& step, int device) {
  std::vector<std::string> a{plan.exe, "__verify", step, "--device", std::to_string(device)};
  if (plan.quick) a.push_back("--quick");
  for (const std::string& d : plan.lib_dirs) a.insert(a.end(), {"--lib-dir", d});
  return a;
}

// The last stderr line worth showing (a crash message, a Python traceback's last line).
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(sig);
  }
}

// A child that hung or crashed: one failed step naming what was running.
void add_abnormal_end(VerifyFacts& v, const ChildRun& c, const std::string& layer, const std::string& gpu,
                      const std::string& hang_finding) {
  const ProcessResult& p = c.proc;
  if (p.ok() || (p.started && !p.timed_out && p.signal == 0)) return;  // a normal exit reported its own steps
  std::string what = c.report.unfinished();
  VerifyStep s;
  s.layer = layer;
  s.name = what.empty() ? layer + " step" : what;
  s.status = StepStatus::fail;
  s.gpu = gpu;
  s.seconds = p.seconds;
  if (p.timed_out) {
    s.detail = fmt::format("hung: no answer after {:.0f} s{} — the child process was killed (watchdog)", p.seconds,
                           what.empty() ? "" : " in " + what);
    s.code_name = "TIMEOUT";
    s.finding = hang_finding;
  } else if (p.signal) {
    s.detail = fmt::format("crashed with {} ({}){}", signal_name(p.signal), p.describe(), what.empty() ? "" : " in " + what);
    std::string err = last_line(p.err);
    if (!err.empty()) s.detail += " — " + err;
    s.code_name = "CRASH";
    s.finding = hang_finding;
  } else {
    s.detail = p.describe();
  }
  v.steps.push_back(s);
}

void merge(VerifyFacts& v, const ChildReport& r) {
  v.steps.insert(v.steps.end(), r.steps.begin(), r.steps.end());
  v.measurements.insert(v.measurements.end(), r.measurements.begin(), r.measurements.end());
}

bool passed(const ChildReport& r) {
  for (const VerifyStep& s : r.steps)
    if (s.status == StepStatus::fail) return false;
  return !r.steps.empty();
}

std::vector<std::vector<int>> parse_matrix(const std::string& text) {
  std::vector<std::vector<int>> m(1);
  for (char c : text) {
    if (c == ';') m.emplace_back();
    else if (c == '0' || c == '1') m.back().push_back(c - '0');
  }
  return m.front().empty() ? std::vector<std::vector<int>>{} : m;
}

VerifyStep skipped(std::string layer, std::string name, std::string why) {
  return VerifyStep{std::move(layer), std::move(name), StepStatus::skip, std::move(why), 0, "", 0, "", ""};
}

// Runs the NCCL step, then on failure the triage ladder until one attempt passes.
void run_nccl(const VerifyPlan& plan, const Kb& kb, VerifyFacts& v) {
  const auto& attempts = nccl_triage(kb);
  for (size_t i = 0; i < attempts.size(); ++i) {
    const std::string& label = attempts[i].label;
    const std::map<std::string, std::string>& env = attempts[i].env;
    if (plan.on_step) plan.on_step(i == 0 ? "NCCL all-reduce" : "NCCL triage: " + label);
    std::vector<std::string> argv = verify_argv(plan, "nccl", 0);
    if (i > 0) argv.insert(argv.end(), {"--nccl-sizes", "1048576,16777216"});  // triage: small and quick
    // Triage reruns use small messages: 30 s is plenty unless the user allows less.
    auto timeout = i == 0 ? plan.step_timeout : std::min(plan.step_timeout, std::chrono::milliseconds(30'000));
    ChildRun c = run_child(plan, argv, env, timeout);
    std::vector<std::string> log = c.report.other_lines;
    for (size_t pos = 0; pos < c.proc.err.size();) {
      size_t end = c.proc.err.find('\n', pos);
      if (end == std::string::npos) end = c.proc.err.size();
      log.push_back(c.proc.err.substr(pos, end - pos));
      pos = end + 1;
    }
    NcclLogSummary sum = summarize_nccl_log(log);
    NcclAttempt a;
    a.label = label;
    for (const auto& [k, val] : env) a.env.push_back(k + "=" + val);
    a.transports = sum.transports;
    a.outcome = c.proc.timed_out    ? NcclOutcome::timeout
                : c.proc.signal     ? NcclOutcome::crash
                : passed(c.report)  ? NcclOutcome::pass
                                    : NcclOutcome::fail;
    for (const VerifyStep& s : c.report.steps)
      if (s.status != StepStatus::pass) a.detail = s.detail;
    if (a.outcome == NcclOutcome::timeout || a.outcome == NcclOutcome::crash)
      a.detail = fmt::format("{} in {}", c.proc.describe(), c.report.unfinished().empty() ? "NCCL" : c.report.unfinished());
    if (!sum.warnings.empty() && a.outcome != NcclOutcome::pass) a.detail += " | " + sum.warnings.front();
    for (const Measurement& m : c.report.measurements) a.busbw_gbs = std::max(a.busbw_gbs, m.value);
    if (i == 0) {
      v.nccl.library = c.report.values.count("nccl_library") ? c.report.values.at("nccl_library") : "";
      v.nccl.version = !sum.version.empty() ? sum.version
                       : c.report.values.count("nccl_version") ? c.report.values.at("nccl_version") : "";
      if (c.report.values.count("nccl_ranks")) v.nccl.ranks = std::stoi(c.report.values.at("nccl_ranks"));
      merge(v, c.report);
      add_abnormal_end(v, c, "nccl", "all", "nccl.timeout_or_hang");
      bool skipped_step = !c.report.steps.empty() && c.report.steps.back().status == StepStatus::skip;
      if (skipped_step) return;  // no NCCL in the environment
    }
    v.nccl.attempts.push_back(a);
    if (a.outcome == NcclOutcome::pass) {
      v.nccl.working = label;
      break;
    }
  }
  if (v.nccl.attempts.size() > 1) {
    VerifyStep s;
    s.layer = "nccl";
    s.name = "NCCL triage";
    s.gpu = "all";
    s.status = v.nccl.working.empty() ? StepStatus::fail : StepStatus::pass;
    s.detail = v.nccl.working.empty() ? "no transport worked: default, P2P off, SHM off, sockets all failed"
                                      : "works with " + v.nccl.working + " (the default failed)";
    v.steps.push_back(s);
  }
}

void run_torch(const VerifyPlan& plan, VerifyFacts& v) {
  if (plan.python.empty()) {
    v.steps.push_back(skipped("framework", "torch", "no Python with torch found"));
    return;
  }
  if (plan.on_step) plan.on_step("torch");
  ChildRun c = run_child(plan, {plan.python, "-c", torch_check_script()}, {{"NCCL_NVLS_ENABLE", "0"}},
                         plan.step_timeout * 2);
  merge(v, c.report);
  add_abnormal_end(v, c, "framework", "", "device.hardware_fault");
  if (c.report.steps.empty() && c.proc.started && !c.proc.timed_out && !c.proc.signal)
    v.steps.push_back(VerifyStep{"framework", "torch", StepStatus::fail, "no result from " + plan.python + ": " + last_line(c.proc.err),
                                 c.proc.seconds, "", 0, "", "framework.import_failed"});
}

}  // namespace

VerifyFacts run_verify(const VerifyPlan& plan_in, const Kb& kb) {
  VerifyPlan plan = plan_in;
  plan.env["NCCL_NVLS_ENABLE"] = "0";  // multicast stays off (device/KINDS.md)
  plan.env["NCCL_DEBUG"] = "INFO";
  auto start = std::chrono::steady_clock::now();
  VerifyFacts v;
  v.ran = true;
  v.quick = plan.quick;

  if (plan.on_step) plan.on_step("driver");
  ChildRun devices = run_child(plan, verify_argv(plan, "devices", 0), {}, plan.step_timeout);
  merge(v, devices.report);
  add_abnormal_end(v, devices, "driver", "", "device.hardware_fault");
  v.gpus = devices.report.gpus;
  if (devices.report.values.count("libcuda")) v.libcuda = devices.report.values.at("libcuda");
  if (devices.report.values.count("driver_cuda_version"))
    v.driver_cuda_version = std::atoi(devices.report.values.at("driver_cuda_version").c_str());

  if (!passed(devices.report) || v.gpus.empty()) {
    v.steps.push_back(skipped("device", "GPU steps", "skipped: the driver or the devices failed above"));
  } else {
    for (const VerifyGpu& g : v.gpus) {
      std::string label = "GPU " + std::to_string(g.index);
      if (plan.on_step) plan.on_step(label + ": kernels and bandwidth");
      ChildRun c = run_child(plan, verify_argv(plan, "device", g.index), {}, plan.step_timeout);
      merge(v, c.report);
      add_abnormal_end(v, c, "device", label, "device.hardware_fault");
      if (plan.quick && g.index > 0) continue;
      if (plan.on_step) plan.on_step(label + ": cuBLAS GEMM");
      ChildRun gm = run_child(plan, verify_argv(plan, "gemm", g.index), {}, plan.step_timeout);
      merge(v, gm.report);
      add_abnormal_end(v, gm, "libs", label, "device.hardware_fault");
      if (gm.report.values.count("cublas")) v.cublas = gm.report.values.at("cublas");
    }
    if (plan.quick) {
      v.steps.push_back(skipped("device", "P2P", "skipped (--quick)"));
      v.steps.push_back(skipped("nccl", "NCCL all-reduce", "skipped (--quick)"));
      v.steps.push_back(skipped("framework", "torch", "skipped (--quick)"));
    } else {
      if (plan.on_step) plan.on_step("P2P");
      ChildRun p = run_child(plan, verify_argv(plan, "p2p", 0), {}, plan.step_timeout);
      merge(v, p.report);
      add_abnormal_end(v, p, "device", "all", "device.hardware_fault");
      if (p.report.values.count("p2p")) v.p2p_access = parse_matrix(p.report.values.at("p2p"));
      run_nccl(plan, kb, v);
      run_torch(plan, v);
    }
  }
  add_expectations(v, kb);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

}  // namespace cd::gpu
