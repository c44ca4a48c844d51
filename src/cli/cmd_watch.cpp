// `watch`: how a job uses its GPUs while it runs.
//   cuda-doctor watch [--interval S] [--json] [--plot FILE.svg] -- CMD ARGS…   run CMD and watch it
//   cuda-doctor watch --pid PID [--duration S]                                 attach to a running job
//   cuda-doctor watch [--duration S]                                           the whole machine (Ctrl-C ends)
//
// Design. NVML is never loaded into this process: the `__sample` child (cli/child_sample.cpp)
// loads it once and prints one JSON line per tick; this process reads those lines without
// blocking (util/line_child), so a hung or crashed NVML costs the GPU readings, never the
// watch or the job. A child per tick (the __driver way) would cost a fork, exec and nvmlInit
// ten times a second — far over the < 1 % of one core budget. The CPU side (the job's process
// tree from /proc, probe/watch_procs) is read here, on the same tick clock. The command runs
// as a foreground job (Ctrl-C reaches it; its status is kept) in a second thread, its output
// passed through; the live status lines (one per GPU, only when stderr is a terminal) are
// cleared before each passed-through chunk and redrawn on the next tick. At the end the
// samples go through derive/watch.cpp and rules/watch.cpp like any other facts.
//
// Exit status: with -- CMD the command's own status (128+N for signal N), always — also when
// there is no driver (then one line says so and the command runs unwatched). --pid and the
// whole machine: the findings' status (0/1/2), 3 when there is no driver or no such PID.
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/watch.hpp"
#include "kb/kb.hpp"
#include "kb/watch.hpp"
#include "probe/watch_procs.hpp"
#include "report/escape.hpp"
#include "report/exit_status.hpp"
#include "report/watch_report.hpp"
#include "rules/rules.hpp"
#include "rules/watch_rules.hpp"
#include "util/errors.hpp"
#include "util/line_child.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {
namespace {

using Clock = std::chrono::steady_clock;

struct WatchOptions {
  std::vector<std::string> command;
  int pid = 0;
  double interval_s = 0.5;
  double duration_s = 0;
  std::string plot;
};

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// CLI11 drops the "--": whether it was there decides "a command" (as explain does).
bool had_separator() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  bool after = false;
  for (const auto& a : split(ss.str(), '\0', true)) {
    if (a == "watch") after = true;
    else if (after && a == "--") return true;
  }
  return false;
}

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

double self_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

size_t terminal_width() {
  winsize w{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20 ? w.ws_col : 100;
}

// The live status lines on stderr (a terminal only) and the command's output passed
// through, from two threads: one lock, and the status is cleared before output is written
// and drawn again only at the start of a line (a progress bar's '\r' line is left alone).
class Screen {
 public:
  explicit Screen(bool live) : live_(live) {}
  bool live() const { return live_; }
  void output(FILE* to, std::string_view chunk) {
    std::lock_guard lock(mu_);
    clear();
    std::fwrite(chunk.data(), 1, chunk.size(), to);
    std::fflush(to);
    if (!chunk.empty()) at_line_start_ = chunk.back() == '\n';
  }
  void status(const std::vector<std::string>& lines) {
    if (!live_ || lines.empty()) return;
    std::lock_guard lock(mu_);
    if (!at_line_start_) return;
    clear();
    std::string s;
    for (size_t i = 0; i < lines.size(); ++i) s += (i ? "\n" : "") + lines[i];
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
    drawn_ = lines.size();
  }
  void finish() {
    std::lock_guard lock(mu_);
    clear();
  }

 private:
  void clear() {
    if (!drawn_) return;
    std::string s = "\r\033[K";
    for (size_t i = 1; i < drawn_; ++i) s += "\033[1A\033[K";
    std::fputs(s.c_str(), stderr);
    drawn_ = 0;
  }
  std::mutex mu_;
  bool live_;
  size_t drawn_ = 0;
  bool at_line_start_ = true;
};

struct CommandRun {
  std::thread thread;
  std::atomic<int> pid{0};
  std::atomic<bool> done{false};
  ProcessResult result;
};

void start_command(const GlobalOptions& g, const WatchOptions& o, Screen& screen, CommandRun& run) {
  run.thread = std::thread([&g, &o, &screen, &run] {
    ProcessOptions p;
    p.timeout = std::chrono::hours(24 * 365);  // a training job may run for days; the user stops it
    p.max_output = 64u << 10;                  // passed through live; nothing is kept
    p.tool_child = false;                      // the user's command keeps the user's environment
    p.foreground = true;                       // Ctrl-C stops the command, then the summary
    p.poll_every = std::chrono::milliseconds(250);  // output still passes at once; fewer wake-ups (the overhead budget)
    p.on_start = [&run](int pid) { run.pid = pid; };
    FILE* out_sink = g.json ? stderr : stdout;  // --json: stdout is the document
    p.on_stdout = [&screen, out_sink](std::string_view c) { screen.output(out_sink, c); };
    p.on_stderr = [&screen](std::string_view c) { screen.output(stderr, c); };
    run.result = run_process(o.command, p);
    run.done = true;
  });
}

// The sampler's lines: the GPU list once, or why there is none, then one reading per tick.
struct SamplerState {
  LineChild child;
  bool answered = false;          // the {"gpus"} or {"error"} line came
  std::vector<GpuTick> fresh;     // the newest {"g"} line since the last tick
  bool has_fresh = false;
  Clock::time_point last_line;
};

void read_sampler(SamplerState& s, WatchFacts& f, std::chrono::milliseconds wait) {
  for (const auto& line : s.child.lines(wait)) {
    SamplerLine l = parse_sampler_line(line);
    if (!l.problem.empty() && f.notes.size() < 20) f.notes.push_back("unreadable sampler line: " + l.problem);
    if (l.kind == SamplerLine::none) continue;
    s.last_line = Clock::now();
    if (l.kind == SamplerLine::error) f.gpu_error = l.error_text;
    if (l.kind == SamplerLine::gpus) f.gpus = std::move(l.gpu_list);
    if (l.kind == SamplerLine::error || l.kind == SamplerLine::gpus) s.answered = true;
    if (l.kind == SamplerLine::tick) {
      s.fresh = std::move(l.readings);
      s.has_fresh = true;
    }
  }
}

// "no NVIDIA driver is loaded; NVML: …" — the same words ps uses.
std::string no_gpu_line(const std::string& error) {
  bool no_driver = error.find("cannot open shared object") != std::string::npos || error.find("Driver Not Loaded") != std::string::npos ||
                   error.find("DRIVER_NOT_LOADED") != std::string::npos;
  return std::string("no GPU to sample: ") + (no_driver ? "no NVIDIA driver is loaded; " : "") + error;
}

bool process_exists(int pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// A watched PID that exited but is not reaped yet (its parent is not us) has ended too.
bool process_ended(int pid) {
  if (!process_exists(pid)) return true;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

struct Loop {
  const GlobalOptions& g;
  const WatchOptions& o;
  WatchFacts& f;
  Screen& screen;
  CommandRun* cmd;  // null unless -- CMD
  const Kb& kb;
};

bool finished(const Loop& l, double elapsed) {
  if (g_stop) return true;
  if (l.cmd) return l.cmd->done;
  if (l.o.duration_s > 0 && elapsed >= l.o.duration_s) return true;
  return l.f.mode == "pid" && process_ended(l.o.pid);
}

// Appends a sample, thinning the kept ones to every other when the cap is reached.
void keep(WatchFacts& f, WatchSample s, size_t cap, size_t& stride, size_t tick) {
  if (tick % stride) return;
  f.samples.push_back(std::move(s));
  if (f.samples.size() < cap) return;
  std::vector<WatchSample> half;
  for (size_t i = 0; i < f.samples.size(); i += 2) half.push_back(std::move(f.samples[i]));
  f.samples_dropped += f.samples.size() - half.size();
  f.samples = std::move(half);
  stride *= 2;
}

// Samples until the command ends, the PID is gone, --duration passes or Ctrl-C. Returns
// false when there is no GPU to sample (the caller says so in one line).
bool sample_loop(Loop& l, SamplerState& sampler) {
  const WatchThresholds& th = watch_thresholds(l.kb);
  auto interval = std::chrono::microseconds(static_cast<long long>(l.o.interval_s * 1e6));
  auto start = Clock::now(), next = start + interval;
  auto first_answer_by = start + timeout_ms(l.g.timeout_s);
  size_t rescan_every = std::max<size_t>(1, static_cast<size_t>(1.0 / l.o.interval_s + 0.5)), stride = 1;
  ProcTreeSampler tree;
  if (l.f.root_pid > 0) tree.set_roots({l.f.root_pid});
  WatchSample last;
  bool have_last = false;
  std::vector<GpuTick> last_gpus;
  for (size_t tick = 0;; ++tick) {
    // A tick comes with each GPU reading (the sampler keeps the cadence), or at most half an
    // interval late without one (a slow or silent NVML), or on time once the sampler is gone.
    auto due = next + (sampler.child.closed() ? Clock::duration::zero() : Clock::duration(interval / 2));
    while (!sampler.has_fresh && Clock::now() < due && !g_stop) {
      if (l.cmd && l.cmd->done) break;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
      if (sampler.child.closed()) std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(50)));
      else read_sampler(sampler, l.f, std::max(left, std::chrono::milliseconds(1)));
    }
    next = Clock::now() + interval;
    if (sampler.answered && !l.f.gpu_error.empty()) return false;
    if (!sampler.answered && (Clock::now() > first_answer_by || sampler.child.closed())) {
      l.f.gpu_error = sampler.child.closed() ? "the NVML sampler ended without answering (crashed?)"
                                             : fmt::format("NVML did not answer within {:.0f} s (the sampler was stopped)", l.g.timeout_s);
      sampler.child.stop();
      return false;
    }
    if (sampler.answered && sampler.child.running() && Clock::now() - sampler.last_line > std::max<Clock::duration>(interval * 20, std::chrono::seconds(5))) {
      l.f.notes.push_back(fmt::format("NVML stopped answering after {:.1f} s; GPU readings end there",
                                      std::chrono::duration<double>(sampler.last_line - start).count()));
      sampler.child.stop();
    }
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    WatchSample s;
    s.t = elapsed;
    if (sampler.has_fresh) {
      s.gpu = true;
      s.gpus = std::move(sampler.fresh);
      sampler.has_fresh = false;
      last_gpus = s.gpus;
      for (const auto& gt : s.gpus)
        for (int pid : gt.pids)
          if (!process_exists(pid)) s.hidden_pids.push_back(pid);
      if (l.f.mode == "machine") {
        std::vector<int> roots;
        for (const auto& gt : s.gpus) roots.insert(roots.end(), gt.pids.begin(), gt.pids.end());
        std::set<int> uniq(roots.begin(), roots.end());
        tree.set_roots({uniq.begin(), uniq.end()});
      }
    }
    if (l.cmd && l.f.root_pid == 0 && l.cmd->pid > 0) {
      l.f.root_pid = l.cmd->pid;
      tree.set_roots({l.f.root_pid});
    }
    s.procs = tree.sample(tick % rescan_every == 0);
    tree.system_cpu(s.cpu_total_ticks, s.cpu_iowait_ticks, s.cpu_idle_ticks);
    if (l.screen.live() && sampler.answered && !l.f.gpus.empty())  // nothing to draw off a terminal: no cost
      l.screen.status(render_watch_status(l.f, watch_point(l.f, have_last ? &last : nullptr, s, last_gpus), l.kb, terminal_width() - 1));
    if (l.screen.live()) {  // the status line's CPU needs the tick before
      last = s;
      have_last = true;
    }
    keep(l.f, std::move(s), th.max_samples, stride, tick);
    if (finished(l, elapsed)) break;
  }
  // A command that ended before the sampler's first line: still say whether there is a GPU.
  while (!sampler.answered && !sampler.child.closed() && Clock::now() < first_answer_by)
    read_sampler(sampler, l.f, std::chrono::milliseconds(20));
  if (!sampler.answered && l.f.gpu_error.empty())
    l.f.gpu_error = fmt::format("NVML did not answer within {:.0f} s (the sampler was stopped)", l.g.timeout_s);
  return l.f.gpu_error.empty();
}

int summarize(const GlobalOptions& g, const WatchOptions& o, const WatchFacts& f, int status_of_command) {
  const Kb& kb = Kb::get();
  WatchModel m = derive_watch(f, kb);
  Findings findings = without_ignored(watch_rules(m, kb), g.ignore);
  if (!o.plot.empty()) {
    std::ofstream out(o.plot, std::ios::binary | std::ios::trunc);
    out << render_watch_svg(m);
    if (!out) std::fprintf(stderr, "cuda-doctor watch: cannot write %s\n", shown(o.plot).c_str());
  }
  print_out(g.json ? render_watch_json(m, findings) : render_watch_text(m, findings, kb, report_options(g)));
  return f.mode == "command" ? status_of_command : exit_code_for(findings, g);
}

int command_status(const ProcessResult& r) {
  if (!r.started) return 127;
  if (r.signal) return 128 + r.signal;
  return r.exit_code >= 0 ? r.exit_code : exit_code::cannot_run;
}

void validate(const WatchOptions& o, bool command) {
  if (!(o.interval_s >= 0.1 && o.interval_s <= 1.0)) throw UsageError("watch: --interval takes 0.1 to 1 seconds");
  if (command && o.command.empty()) throw UsageError("watch --: no command given");
  if (!command && !o.command.empty()) throw UsageError("watch: put the command after --: cuda-doctor watch -- CMD ARGS…");
  if (command && o.pid) throw UsageError("watch: give either --pid or -- CMD, not both");
  if (o.pid && !process_exists(o.pid)) throw UsageError(fmt::format("watch: no process {}", o.pid));
  if (!o.plot.empty()) {
    std::ofstream probe(o.plot, std::ios::binary | std::ios::app);
    if (!probe) throw UsageError("watch: cannot write --plot " + o.plot);
  }
}

int run_watch(const GlobalOptions& g, const WatchOptions& o) {
  bool command = had_separator() || !o.command.empty();
  validate(o, command);
  WatchFacts f;
  f.mode = command ? "command" : o.pid ? "pid" : "machine";
  f.command = o.command;
  f.root_pid = o.pid;
  f.interval_s = o.interval_s;
  f.started_unix = now_unix();
  f.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  f.clk_tck = sysconf(_SC_CLK_TCK);
  double cpu0 = self_cpu_seconds();
  auto t0 = Clock::now();

  SamplerState sampler;
  if (!sampler.child.start({self_exe(), "__sample", std::to_string(static_cast<int>(o.interval_s * 1000 + 0.5))}))
    f.gpu_error = "cannot start the NVML sampler: " + sampler.child.error();
  Screen screen(isatty(STDERR_FILENO) && !g.json);
  CommandRun run;
  if (command) start_command(g, o, screen, run);
  struct sigaction stop {}, old_int {}, old_term {};
  if (!command) {  // --pid / machine: Ctrl-C or SIGTERM ends the watch and prints the summary
    stop.sa_handler = on_stop_signal;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, &old_int);
    sigaction(SIGTERM, &stop, &old_term);
  }
  Loop loop{g, o, f, screen, command ? &run : nullptr, Kb::get()};
  bool gpus = f.gpu_error.empty() && sample_loop(loop, sampler);
  f.overhead.sampler_cpu_s = std::max(0.0, sampler.child.cpu_seconds());
  sampler.child.stop();
  screen.finish();
  if (!gpus) {
    std::fprintf(stderr, "cuda-doctor watch: %s%s\n", shown(no_gpu_line(f.gpu_error)).c_str(),
                 command ? "; the command runs unwatched" : "");
    if (!command) return exit_code::cannot_run;
    run.thread.join();
    return command_status(run.result);
  }
  if (command) run.thread.join();
  if (!command) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  f.overhead.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  f.overhead.watcher_cpu_s = self_cpu_seconds() - cpu0;
  if (command) {
    f.command_exit = run.result.signal == 0 && run.result.started ? run.result.exit_code : -1;
    f.command_signal = run.result.signal;
    if (!run.result.started) f.notes.push_back("the command could not start: " + run.result.start_error);
  }
  return summarize(g, o, f, command ? command_status(run.result) : 0);
}

}  // namespace

void register_watch(CLI::App& app, GlobalOptions& g, int& rc) {
  static WatchOptions opts;
  auto* cmd = app.add_subcommand("watch", "Watch how a job uses the GPUs (utilization, memory, clocks, its CPU) and say why they idle");
  cmd->add_option("command", opts.command, "After --: the command to run and watch");
  cmd->add_option("--pid", opts.pid, "Watch a running process and its children instead")->check(CLI::PositiveNumber);
  cmd->add_option("--interval", opts.interval_s, "Seconds between samples, 0.1 to 1 (default 0.5)");
  cmd->add_option("--duration", opts.duration_s, "Stop after this many seconds (--pid, whole machine; default: until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--plot", opts.plot, "Write the timeline (utilization, memory, CPU per GPU) as a self-contained SVG");
  cmd->footer(
      "Exit status: with -- CMD the command's own status (128+N for signal N), also without a driver;\n"
      "--pid / whole machine: 0/1/2 from the findings, 3 without a driver. See docs/watch.md.");
  cmd->callback([&] { rc = run_watch(g, opts); });
}

}  // namespace cd
