#!/usr/bin/env bash
# Records the layer-1 facts of the H200 device machine (tests/fixtures/h200/facts.json) and
# what nvidia-smi says about the same GPU, to check the driver probe field by field.
# Run from the repository root with the binary at .devout/drv/cuda-doctor (or $CD); writes to $OUT.
set -u
CD=${CD:-.devout/drv/cuda-doctor}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{
  echo "# date: $(date -u +%FT%TZ)"
  echo "# host: $(hostname) kernel $(uname -r)"
  echo "## /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version
  echo "## /sys/module/nvidia/version"; cat /sys/module/nvidia/version
  echo "## ls -l /dev/nvidia*"; ls -l /dev/nvidia* 2>&1
  echo "## ldconfig -p | grep -E 'libcuda|libnvidia-ml'"; ldconfig -p | grep -E 'libcuda\.|libnvidia-ml\.'
  echo "## driver libraries"; ls -l /usr/local/nvidia/lib64/libcuda* /usr/local/nvidia/lib64/libnvidia-ml* 2>&1
  echo "## /proc/1/cgroup"; cat /proc/1/cgroup; ls -la /.dockerenv /run/.containerenv 2>&1
  echo "## env"; env | grep -E '^(CUDA|NVIDIA|LD_LIBRARY_PATH|LIBRARY_PATH)' | sort
} > "$OUT/system.txt" 2>&1
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,persistence_mode,compute_mode,mig.mode.current,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.errors.uncorrected.volatile.total,compute_cap --format=csv >> "$OUT/nvidia-smi-q.txt" 2>&1
{
  echo "## cuda-doctor __driver"
  s=$EPOCHREALTIME; "$CD" __driver; e=$EPOCHREALTIME
  echo "## __driver wall seconds: $(awk "BEGIN{print $e-$s}")"
  s=$EPOCHREALTIME; "$CD" snapshot > "$OUT/facts.json" 2> "$OUT/snapshot.stderr"; rc=$?; e=$EPOCHREALTIME
  echo "## snapshot rc=$rc wall seconds: $(awk "BEGIN{print $e-$s}")"
  s=$EPOCHREALTIME; "$CD" check --no-color > "$OUT/check.txt" 2>&1; rc=$?; e=$EPOCHREALTIME
  echo "## check rc=$rc wall seconds: $(awk "BEGIN{print $e-$s}")"
} > "$OUT/driver_child.txt" 2>&1
ls -la "$OUT"
