#!/usr/bin/env bash
# `cuda-doctor plan` wall time (issue 14: plan answers in <= 20 ms). Three questions, N runs
# each, prints every time and the medians:
#   flags   plan --gpu "RTX 4090" --gpu "GTX 1080" --driver 550.54.14   (no probing: the knowledge base and the plan)
#   facts   plan --facts tests/fixtures/h200/facts.json                 (a recorded machine replayed)
#   live    plan                                                        (this machine: driver child + Python environments)
# The 20 ms target is for the first two; `live` includes the driver probe's child process.
# Usage: bash bench/plan_bench.sh [BINARY] [N]
set -uo pipefail
doctor=${1:-build/cuda-doctor}
n=${2:-20}
cd "$(dirname "$0")/.." || exit 1
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run() {  # name, args…
  local name=$1; shift
  local t=() rc
  "$doctor" plan "$@" >/dev/null 2>&1; rc=$?
  for i in $(seq "$n"); do
    local t0 t1; t0=$(now); "$doctor" plan "$@" >/dev/null 2>&1; t1=$(now)
    t+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) * 1000}')")  # no bc on the device
  done
  echo "$name (exit $rc) ms: ${t[*]}"
  echo "$name median $(printf '%s\n' "${t[@]}" | median) ms"
}
run flags --gpu "RTX 4090" --gpu "GTX 1080" --driver 550.54.14
run facts --facts tests/fixtures/h200/facts.json
run live
