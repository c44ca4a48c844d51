#!/usr/bin/env bash
# Issue 16 on the H200 (root; system python3 with torch). Usage on the device:
#   OUT=$OUT bash bench/ps_h200.sh BINARY
# Writes at most 8 files under $OUT:
#   ps_bench.txt      ps vs nvidia-smi --query-compute-apps, 5 runs each (bench/ps_bench.sh)
#   ps_idle.txt       ps / ps --json with the GPU idle
#   ps_stopped.txt    a torch process holding 4 GiB, SIGSTOPped: ps, ps --json, check (each must name it + fix)
#   check_stopped.json  check --json in that state
#   nvidia_smi.txt    nvidia-smi's own view at the same moments, to compare
#   summary.txt       pass/fail lines of this script's own checks and timings
# Total runtime target ≤ 3 minutes (torch import ~10 s is the slow part).
set -uo pipefail
doctor=$(readlink -f "${1:-build/cuda-doctor}")
out=${OUT:-/tmp/ps_h200}
mkdir -p "$out"
export NO_COLOR=1
cd "$(dirname "$0")/.." || exit 1
sum="$out/summary.txt"
: >"$sum"
check() { if eval "$2"; then echo "PASS $1" >>"$sum"; else echo "FAIL $1" >>"$sum"; fi; }
start=$(date +%s)

bash bench/ps_bench.sh "$doctor" 5 >"$out/ps_bench.txt" 2>&1
cat "$out/ps_bench.txt" >>"$sum"
{ "$doctor" ps; echo "exit $?"; "$doctor" ps --json; } >"$out/ps_idle.txt" 2>&1
nvidia-smi >"$out/nvidia_smi.txt" 2>&1

# A process that holds GPU memory and is then stopped.
python3 - <<'PY' &
import torch, time, sys
x = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print("holding", flush=True)
time.sleep(600)
PY
holder=$!
for i in $(seq 120); do
  nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$holder" && break
  sleep 0.5
done
kill -STOP "$holder"
sleep 1
{ echo "# holder pid $holder, stopped"; "$doctor" ps; echo "exit $?"; echo "# ps -v"; "$doctor" ps -v; echo "# ps --json"; "$doctor" ps --json
  echo "# check"; "$doctor" check --no-scan; echo "exit $?"; } >"$out/ps_stopped.txt" 2>&1
"$doctor" check --json --no-scan >"$out/check_stopped.json" 2>>"$out/ps_stopped.txt"
{ echo "# stopped holder"; nvidia-smi --query-compute-apps=pid,used_memory --format=csv; } >>"$out/nvidia_smi.txt" 2>&1
check "ps names the stopped holder" "grep -q 'memory.held_by_stopped_process' '$out/ps_stopped.txt' && grep -q 'kill -CONT $holder' '$out/ps_stopped.txt'"
check "check --json names it" "grep -q '\"subject\": \"pid $holder\"' '$out/check_stopped.json' && grep -q held_by_stopped_process '$out/check_stopped.json'"
# One ps timing while a process holds memory (the process list and the /proc reads cost something).
t0=$(date +%s.%N); "$doctor" ps >/dev/null 2>&1; t1=$(date +%s.%N)
echo "ps with one stopped holder: $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') s" >>"$sum"
kill -CONT "$holder"; kill "$holder"; wait "$holder" 2>/dev/null
echo "total $(( $(date +%s) - start )) s" >>"$sum"
cat "$sum"
