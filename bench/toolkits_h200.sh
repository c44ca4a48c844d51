#!/usr/bin/env bash
# bench/toolkits_h200.sh CUDA_DOCTOR — `toolkits` and `use` on the GPU machine, with its own CUDA
# 13.0 and the real CUDA 11.8 carried beside the repository as .cuda118/cuda-11.8.tar.xz (made by
# scripts/fetch_cuda118.sh; the device has no package access). Self-contained, no network, < 1 min.
# Writes under $OUT:
#   toolkits.txt / toolkits.json   `cuda-doctor toolkits` (both toolkits, the driver's verdict on each)
#   use_118.txt / use_130.txt      the shell code `use` prints and its stderr (checks, summary)
#   switch.txt                     bash: use 11.8 → nvcc -V, use 13.0 → nvcc -V, --off → PATH as before
#   compile_130.txt                a real compile with 13.0 through the switched shell (sm_90) and its run
#   compile_118.txt                the same with 11.8 (where a gcc ≤ 11 exists; else nvcc's own refusal)
#   use_timing.txt                 wall time of `use 11.8` / `use 13.0` / `use --off` (20 runs each)
#   shell_init.txt                 shell-init's bash hook per prompt: idle (target <= 2 ms) and switching (<= 10 ms)
#   summary.txt                    one line per step: ok / FAILED
set -uo pipefail

doctor=$(realpath "${1:?usage: bench/toolkits_h200.sh CUDA_DOCTOR}")
out=${OUT:-/tmp/toolkits_h200}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary=$out/summary.txt
: > "$summary"
step() { if "$@"; then echo "ok      $name" >> "$summary"; else echo "FAILED  $name" >> "$summary"; fi; }

tarball=$here/.cuda118/cuda-11.8.tar.xz
if [ -f "$tarball" ]; then
  tar -xJf "$tarball" -C "$work"
  export CUDA_DOCTOR_TOOLKITS=$work/cuda-11.8
else
  echo "no $tarball: CUDA 11.8 steps skipped" >> "$summary"
fi
export D=$doctor
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; gcc --version | head -1; } > "$out/machine.txt" 2>&1

name="toolkits"; step bash -c '"$D" toolkits --no-color > "$0/toolkits.txt" 2>&1; "$D" toolkits --json > "$0/toolkits.json"; [ $? -le 2 ]' "$out"
name="use 11.8 (shell code)"; step bash -c '"$D" use 11.8 --shell bash > "$0/use_118.txt" 2> "$0/use_118.stderr.txt"' "$out"
name="use 13.0 (shell code)"; step bash -c '"$D" use 13.0 --shell bash > "$0/use_130.txt" 2> "$0/use_130.stderr.txt"' "$out"

cat > "$work/k.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }
int main() {
  float h[32], *d;
  for (int i = 0; i < 32; ++i) h[i] = i;
  if (cudaMalloc(&d, sizeof h) != cudaSuccess) { std::puts("cudaMalloc failed"); return 1; }
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  twice<<<1, 32>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("h[31] = %.0f (%s)\n", h[31], h[31] == 62 ? "ok" : "WRONG");
  return h[31] == 62 ? 0 : 1;
}
EOF

name="switch 11.8 -> 13.0 -> off"
step bash --norc --noprofile -c '
  set -e; before=$PATH
  echo "PATH before: $PATH"
  eval "$("$D" use 11.8)"; echo "CUDA_HOME=$CUDA_HOME"; echo "PATH=$PATH"; nvcc -V | tail -2
  nvcc -V | grep -q "release 11.8"
  eval "$("$D" use 13.0)"; echo "CUDA_HOME=$CUDA_HOME"; echo "PATH=$PATH"; nvcc -V | tail -2
  nvcc -V | grep -q "release 13.0"
  eval "$("$D" use --off)"; echo "PATH after --off: $PATH"; [ "$PATH" = "$before" ]' > "$out/switch.txt" 2>&1

name="compile + run with 13.0 (sm_90)"
step bash --norc --noprofile -c '
  set -e; cd "$0"; eval "$("$D" use 13.0)"; which nvcc
  nvcc -arch=sm_90 -o k130 k.cu && ./k130' "$work" > "$out/compile_130.txt" 2>&1

name="compile with 11.8"
step bash --norc --noprofile -c '
  cd "$0"; eval "$("$D" use 11.8)"; which nvcc
  ccbin=$(ls /usr/bin/g++-1[01] /usr/bin/g++-9 2>/dev/null | head -1)
  if [ -n "$ccbin" ]; then NVCC_CCBIN=$ccbin nvcc -arch=sm_80 -o k118 k.cu && ./k118
  else nvcc -arch=sm_80 -o k118 k.cu; echo "nvcc rc=$? (no gcc <= 11 here: the refusal use warned about)"; fi; true' \
  "$work" > "$out/compile_118.txt" 2>&1

name="use timing"
step bash --norc --noprofile -c '
  for req in 11.8 13.0 --off; do
    t0=$(date +%s%N); for i in $(seq 20); do "$D" use $req --shell bash >/dev/null 2>&1; done; t1=$(date +%s%N)
    echo "use $req: $(( (t1 - t0) / 20000 )) us per run (20 runs)"
  done' > "$out/use_timing.txt" 2>&1

# shell-init's hook per prompt, timed inside one bash with $EPOCHREALTIME (no hyperfine on the device):
# 500 idle prompts in a directory whose .cuda-version is applied (no process may start), and 40
# prompts alternating between that directory and one without a file (each one switches).
name="shell-init hook cost"
mkdir -p "$work/proj" "$work/plain"
echo 13.0 > "$work/proj/.cuda-version"
step bash --norc --noprofile -c '
  eval "$("$D" shell-init bash)"
  now() { local t=${EPOCHREALTIME/[.,]/}; echo $t; }
  cd "$0/proj"; _cuda_doctor_hook 2>/dev/null
  t0=$(now); for ((i = 0; i < 500; i++)); do _cuda_doctor_hook; done; t1=$(now)
  b0=$(now); for ((i = 0; i < 500; i++)); do :; done; b1=$(now)
  idle=$(( (t1 - t0 - (b1 - b0)) / 500 ))
  s0=$(now)
  for ((i = 0; i < 20; i++)); do cd "$0/plain"; _cuda_doctor_hook 2>/dev/null; cd "$0/proj"; _cuda_doctor_hook 2>/dev/null; done
  s1=$(now)
  switch=$(( (s1 - s0) / 40 ))
  echo "idle:   $idle us per prompt (500 prompts; target <= 2000 us, no process)"
  echo "switch: $switch us per prompt (40 switches; target <= 10000 us)"
  [ "$idle" -le 2000 ]' "$work" > "$out/shell_init.txt" 2>&1

# The same hook against direnv's (issue 13: "no slower than direnv's hook in the same run") with
# bench/shell_init.sh; the device has neither direnv nor hyperfine: the Debian binaries travel in
# .devout/bin (static Go / libc only), and zsh is skipped there when missing.
[ -d "$here/.devout/bin" ] && export PATH="$here/.devout/bin:$PATH"
if command -v direnv >/dev/null && command -v hyperfine >/dev/null; then
  name="shell-init vs direnv (bench/shell_init.sh)"
  step bash -c 'OUT="$1" bash "$2/bench/shell_init.sh" "$D" > "$1/shell_init_vs_direnv.txt" 2>&1' _ "$out" "$here"
else
  echo "skipped shell-init vs direnv: no direnv/hyperfine" >> "$summary"
fi

cat "$summary"
