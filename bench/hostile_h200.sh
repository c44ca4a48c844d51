#!/usr/bin/env bash
# Issue 12 #17 on a real GPU: does `cuda-doctor verify` (and check --deep) write anything under
# HOME? Runs each with a fresh empty HOME and lists what appeared there (nothing is the pass).
# Usage (device tool): bash bench/hostile_h200.sh   (expects .devout/cuda-doctor; writes $OUT/hostile.txt)
# Control: the same PTX JIT with CUDA_CACHE_DISABLE unset in a child that is not ours (explain -- CMD)
# must write ~/.nv/ComputeCache, or the check proves nothing.
set -u
OUT=${OUT:-/tmp/hostile_out}
mkdir -p "$OUT"
CD=$(readlink -f "${CD:-.devout/cuda-doctor}")
export NCCL_NVLS_ENABLE=0
unset CUDA_CACHE_DISABLE CUDA_CACHE_PATH

run_with_fresh_home() {  # label, command…
  local label=$1; shift
  local home; home=$(mktemp -d)
  HOME=$home "$@" >"$OUT/$label.out" 2>&1; local rc=$?
  local n; n=$(find "$home" -mindepth 1 | wc -l)
  echo "$label: rc=$rc, $n path(s) under the fresh HOME $( ((n)) && echo "← WROTE" || echo "(pass)")"
  find "$home" -mindepth 1 | sed "s|^$home|  HOME|"
  rm -rf "$home"
}

{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$CD" --version 2>/dev/null || true
  run_with_fresh_home verify "$CD" verify --no-color
  run_with_fresh_home check_deep "$CD" check --deep --no-color
  run_with_fresh_home control_explain_cmd "$CD" explain -- "$CD" __verify device --device 0 --quick
} >"$OUT/hostile.txt" 2>&1
cat "$OUT/hostile.txt"
