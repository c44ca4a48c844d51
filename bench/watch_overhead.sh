#!/usr/bin/env bash
# What `cuda-doctor watch` costs: sampling at 10 Hz (--interval 0.1) for SECONDS while it
# runs a job of 9 processes (a shell and 8 sleeping "workers", like a DataLoader's), the
# watcher's own CPU (getrusage RUSAGE_SELF: the main thread, the command's I/O thread) plus
# the NVML sampler child's (its /proc/PID/stat), as watch --json reports them, over wall time.
# Target (issue 16): < 1 % of one core. Without a driver it uses the fake NVML of the test
# build (FAKES dir), so the NVML side there is the fake's cost, not a driver's; the H200 run
# is bench/watch_h200.sh.
# Usage: bash bench/watch_overhead.sh [BINARY] [SECONDS] [FAKES_DIR]
set -uo pipefail
doctor=${1:-build/cuda-doctor}
secs=${2:-30}
fakes=${3:-$(dirname "$doctor")/fakes}
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1 && [ -e "$fakes/libnvidia-ml.so.1" ]; then
  export CUDA_DOCTOR_LIBNVML=$fakes/libnvidia-ml.so.1
  echo "no driver here: NVML is the test fake ($CUDA_DOCTOR_LIBNVML)"
fi
job="for i in 1 2 3 4 5 6 7 8; do sleep $secs & done; wait"
tmp=$(mktemp)
for interval in 0.1 0.5; do
  "$doctor" watch --json --interval "$interval" -- sh -c "$job" >"$tmp" 2>/dev/null
  python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["overhead"]
cpu = o["watcher_cpu_s"] + o["sampler_cpu_s"]
print(f"interval {d['interval_s']} s: {len(d['samples'])} samples, {len(d['processes'])} processes watched, "
      f"watcher {o['watcher_cpu_s']:.3f} s + sampler {o['sampler_cpu_s']:.3f} s CPU over {o['wall_s']:.1f} s "
      f"= {100 * cpu / o['wall_s']:.2f} % of one core")
PY
done
rm -f "$tmp"
echo "processes on this machine: $(ls /proc | grep -c '^[0-9]')  (the tree walk reads each once a second)"
