#!/usr/bin/env bash
# Issue 16 `watch` on the H200 (root; python3 with torch). Usage on the device:
#   OUT=$OUT bash bench/watch_h200.sh BINARY
# Bounded runs (12 s jobs; total < 2 min), results under $OUT:
#   starve.json/.txt/.svg, starve_text.txt (the text summary as a user sees it)
#                          a torch job whose Python data loader is slow (pure-Python batch
#                          building + time.sleep per step, a small matmul on the GPU): watch must
#                          report perf.input_bound (or perf.gpu_idle)
#   busy.json/.txt/.svg    a torch job that keeps the GPU busy (bf16 8192² matmuls): neither finding
#   stopped.txt            a process that allocates 4 GiB and is SIGSTOPped: ps and check must name
#                          it (memory.held_by_stopped_process, kill -CONT PID)
#   overhead.txt           watch --interval 0.1 -- sleep 12 with the real NVML: the watcher's + sampler's
#                          CPU over wall time (target < 1 % of one core)
#   summary.txt            PASS/FAIL lines and the numbers above
set -uo pipefail
doctor=$(readlink -f "${1:-build/cuda-doctor}")
out=${OUT:-/tmp/watch_h200}
mkdir -p "$out"
export NO_COLOR=1
sum="$out/summary.txt"
: >"$sum"
py=$(command -v python3)
for p in /opt/torch/.venv/bin/python3 "$py"; do
  if [ -x "$p" ] && "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
echo "python: $py" >>"$sum"
check() { if eval "$2"; then echo "PASS $1" >>"$sum"; else echo "FAIL $1" >>"$sum"; fi; }
ids() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(f["id"] for f in d["findings"]) or "-")' "$1" 2>/dev/null; }
cat >"$out/stat_line.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); g = d["gpus"][0] if d["gpus"] else {}; o = d["overhead"]
cost = 100 * (o["watcher_cpu_s"] + o["sampler_cpu_s"]) / max(o["wall_s"], 1e-9)
print(f"{sys.argv[2]}: exit {d['command_exit']}, {d['duration_s']:.1f} s (judged from {d['judged_from_s']:.1f} s), "
      f"GPU util mean {g.get('mean_util', -1):.0f} %, idle {100 * g.get('idle_fraction', 0):.0f} %, "
      f"idle samples {d['idle_samples']}/{d['gpu_samples']}, job CPU {d['job_cpu_mean_cores']:.2f} cores "
      f"({d['job_cpu_idle_cores']:.2f} while idle), watch cost {cost:.2f} % of a core")
PY
stat_line() { python3 "$out/stat_line.py" "$1" "$2" 2>/dev/null || echo "$2: no JSON"; }
start=$(date +%s)

cat >"$out/starve.py" <<'PY'
import time, torch
x = torch.randn(1024, 1024, device="cuda")
end = time.time() + 12
while time.time() < end:
    batch = [sum(i * j for j in range(400)) for i in range(2000)]  # a slow Python "loader": CPU busy
    time.sleep(0.02)
    y = x @ x                                                        # a tiny step on the GPU
    torch.cuda.synchronize()
PY
cat >"$out/busy.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 12
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
PY
for job in starve busy; do
  timeout 60 "$doctor" watch --json --interval 0.2 --plot "$out/$job.svg" -- "$py" "$out/$job.py" >"$out/$job.json" 2>"$out/$job.err"
  echo "exit $?" >>"$out/$job.err"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["findings"])' "$out/$job.json" >"$out/$job.txt" 2>&1
  stat_line "$out/$job.json" "$job" >>"$sum"
  echo "$job findings: $(ids "$out/$job.json")" >>"$sum"
done
check "starve is input-bound (or waiting)" "ids '$out/starve.json' | grep -qE 'perf.input_bound|perf.gpu_idle'"
check "busy is neither" "! ids '$out/busy.json' | grep -qE 'perf.input_bound|perf.gpu_idle'"
# The text summary once, as a user sees it.
timeout 60 "$doctor" watch --interval 0.2 -- "$py" "$out/starve.py" >"$out/starve_text.txt" 2>&1

# A process that holds GPU memory and is then stopped: ps and check must name it and the fix.
"$py" - <<'PY' &
import torch, time
x = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
time.sleep(120)
PY
holder=$!
for i in $(seq 60); do
  nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$holder" && break
  sleep 0.5
done
kill -STOP "$holder"
sleep 1
{ echo "# holder pid $holder, stopped"; timeout 30 "$doctor" ps; echo "exit $?"; echo "# check"; timeout 60 "$doctor" check --no-scan; echo "exit $?"; } >"$out/stopped.txt" 2>&1
timeout 60 "$doctor" check --json --no-scan >"$out/check_stopped.json" 2>/dev/null
check "ps names the stopped holder and the fix" "grep -q 'memory.held_by_stopped_process' '$out/stopped.txt' && grep -q 'kill -CONT $holder' '$out/stopped.txt'"
check "check --json names it" "grep -q 'pid $holder' '$out/check_stopped.json' && grep -q held_by_stopped_process '$out/check_stopped.json'"
kill -CONT "$holder"; kill "$holder"; wait "$holder" 2>/dev/null

# Overhead with the real NVML at 10 Hz.
timeout 60 "$doctor" watch --json --interval 0.1 -- sleep 12 >"$out/overhead.json" 2>/dev/null
cat >"$out/overhead.py" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["overhead"]
cpu = o["watcher_cpu_s"] + o["sampler_cpu_s"]
print(f"overhead at 10 Hz: watcher {o['watcher_cpu_s']:.3f} s + NVML sampler {o['sampler_cpu_s']:.3f} s CPU "
      f"over {o['wall_s']:.1f} s = {100 * cpu / o['wall_s']:.2f} % of one core")
PY
python3 "$out/overhead.py" "$out/overhead.json" >"$out/overhead.txt" 2>&1
cat "$out/overhead.txt" >>"$sum"
check "overhead < 1 % of one core" "grep -qE '= 0\.[0-9]+ % of one core' '$out/overhead.txt'"
echo "total $(( $(date +%s) - start )) s" >>"$sum"
cat "$sum"
