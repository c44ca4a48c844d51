#!/usr/bin/env bash
# `cuda-doctor ps` against `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`,
# N runs each, alternating, in one run (issue 16: ps ≤ 50 ms and ≥ 2× faster). Prints each
# wall time and the medians. Usage: bash bench/ps_bench.sh [BINARY] [N]
set -uo pipefail
doctor=${1:-build/cuda-doctor}
n=${2:-5}
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ps_t=(); smi_t=()
have_smi=0; command -v nvidia-smi >/dev/null && have_smi=1
"$doctor" ps >/dev/null 2>&1; rc=$?  # warm the page cache; keep its exit status
for i in $(seq "$n"); do
  t0=$(now); "$doctor" ps >/dev/null 2>&1; t1=$(now)
  ps_t+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')")
  if [ $have_smi = 1 ]; then
    t0=$(now); nvidia-smi --query-compute-apps=pid,used_memory --format=csv >/dev/null 2>&1; t1=$(now)
    smi_t+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')")
  fi
done
echo "cuda-doctor ps (exit $rc): ${ps_t[*]}"
pm=$(printf '%s\n' "${ps_t[@]}" | median)
echo "ps median ${pm} s"
if [ $have_smi = 1 ]; then
  echo "nvidia-smi --query-compute-apps: ${smi_t[*]}"
  sm=$(printf '%s\n' "${smi_t[@]}" | median)
  echo "nvidia-smi median ${sm} s; ratio $(awk -v a="$sm" -v b="$pm" 'BEGIN {printf "%.2f", a / b}')x"
else
  echo "nvidia-smi: not installed here"
fi
