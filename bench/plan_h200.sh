#!/usr/bin/env bash
# Issue 14 on the H200 machine (driver 580.159.04, torch 2.11.0+cu130 in /opt/torch/.venv).
# Usage on the device:  OUT=$OUT bash bench/plan_h200.sh BINARY
# Self-contained, no network, < 1 minute. Writes under $OUT:
#   plan.txt        plan, plan -v, plan --json on the live machine (must say the running torch is already right)
#   plan_build.txt  plan --for build (CUDA 13.0, TORCH_CUDA_ARCH_LIST="9.0", MAX_JOBS, the runfile) when the binary has it
#   lock.txt        cuda-doctor lock (when the binary has it); cuda.lock the lock itself
#   facts.json      cuda-doctor snapshot, to replay the plan here
#   plan_bench.txt  bench/plan_bench.sh BINARY 20 (flags / facts / live medians)
#   summary.txt     PASS/FAIL of this script's checks, the medians, the run time
set -uo pipefail
doctor=$(readlink -f "${1:-build/cuda-doctor}")
out=${OUT:-/tmp/plan_h200}
mkdir -p "$out"
export NO_COLOR=1
cd "$(dirname "$0")/.." || exit 1
sum="$out/summary.txt"
: >"$sum"
check() { if eval "$2"; then echo "PASS $1" >>"$sum"; else echo "FAIL $1" >>"$sum"; fi; }
start=$(date +%s)

{ echo "# plan"; timeout 60 "$doctor" plan; echo "exit $?"
  echo "# plan -v"; timeout 60 "$doctor" plan -v; echo "exit $?"
  echo "# plan --json"; timeout 60 "$doctor" plan --json; echo "exit $?"; } >"$out/plan.txt" 2>&1
check "plan: the running torch is already right" "grep -q 'torch 2.11.0+cu130 in .* is already right' '$out/plan.txt'"
check "plan: the driver is kept" "grep -Eq '✓ 1  (driver  )?driver 580.159.04' '$out/plan.txt'"
timeout 60 "$doctor" snapshot >"$out/facts.json" 2>>"$out/plan.txt"

if "$doctor" plan --help 2>/dev/null | grep -q -- '--for.*build'; then
  { echo "# plan --for build"; timeout 60 "$doctor" plan --for build; echo "exit $?"
    echo "# plan --for build --json"; timeout 60 "$doctor" plan --for build --json; echo "exit $?"; } >"$out/plan_build.txt" 2>&1
  check "build: CUDA 13.0 toolkit" "grep -q 'cuda-13.0' '$out/plan_build.txt'"
  check "build: TORCH_CUDA_ARCH_LIST=\"9.0\"" "grep -q 'TORCH_CUDA_ARCH_LIST=\"9.0\"' '$out/plan_build.txt'"
  check "build: MAX_JOBS" "grep -q 'MAX_JOBS=' '$out/plan_build.txt'"
  # The H200 has CUDA 13.0 at /usr/local/cuda-13.0 already: the toolkit step is kept, with the runfile
  # for replaying the build elsewhere.
  check "build: the installed CUDA 13.0 toolkit is kept" "grep -q 'CUDA 13.0 toolkit at /usr/local/cuda-13.0 matches' '$out/plan_build.txt'"
  check "build: runfile --toolkit --silent" "grep -q -- '--toolkit --silent --toolkitpath=/usr/local/cuda-13.0' '$out/plan_build.txt'"
else
  echo "SKIP plan --for build: not in this binary" >>"$sum"
fi
if "$doctor" --help 2>/dev/null | grep -q '^ *lock'; then
  timeout 60 "$doctor" lock >"$out/cuda.lock" 2>"$out/lock.txt"; echo "exit $?" >>"$out/lock.txt"
  check "lock written" "test -s '$out/cuda.lock'"
  { echo "# plan --from cuda.lock (same machine: nothing differs)"; timeout 60 "$doctor" plan --from "$out/cuda.lock"; echo "exit $?"; } >>"$out/lock.txt" 2>&1
else
  echo "SKIP lock: not in this binary" >>"$sum"
fi

bash bench/plan_bench.sh "$doctor" 20 >"$out/plan_bench.txt" 2>&1
grep median "$out/plan_bench.txt" >>"$sum"
echo "runtime $(( $(date +%s) - start )) s" >>"$sum"
cat "$sum"
