#!/usr/bin/env bash
# bench/shell_init.sh [CUDA_DOCTOR] — cost per prompt of `cuda-doctor shell-init`'s hook against
# direnv's hook (Debian package direnv), in bash and zsh, measured with hyperfine in one run.
#
# Each hyperfine command starts one shell that calls the hook N times the way a prompt does:
#   idle:   N prompts in a directory whose .cuda-version (/ .envrc) is already applied;
#   switch: N prompts alternating between that directory and one without a file (each prompt
#           switches: cuda-doctor runs `use --from FILE` / `use --off`, direnv loads / unloads).
# Per prompt = (mean of the shell with N hook calls − mean of the same shell with none) / N.
# The acceptance targets (issue 13): idle ≤ 2 ms (no process), switch ≤ 10 ms, and no slower
# than direnv. Needs hyperfine, direnv, bash, zsh, python3, and a CUDA toolkit cuda-doctor finds
# (/usr/local/cuda-*; else set CUDA_DOCTOR_TOOLKITS). Prints a table; writes the hyperfine JSON
# to ${OUT:-/tmp}/shell_init_*.json.
set -euo pipefail

doctor=$(realpath "${1:-build/cuda-doctor}")
out=${OUT:-/tmp}
mkdir -p "$out"
idle_n=${IDLE_N:-500}
switch_n=${SWITCH_N:-50}
for tool in hyperfine direnv python3; do command -v "$tool" >/dev/null || { echo "shell_init.sh: needs $tool" >&2; exit 1; }; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/cache
mkdir -p "$work/proj" "$work/plain" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME"
version=$("$doctor" toolkits --json | python3 -c 'import json,sys; t=[x for x in json.load(sys.stdin)["toolkits"] if x["nvcc"]]; print(t[0]["version"] if t else "")')
[ -n "$version" ] || { echo "shell_init.sh: cuda-doctor finds no toolkit with nvcc" >&2; exit 1; }
root=$("$doctor" toolkits --json | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["toolkits"] if x["nvcc"]][0]["root"])')
echo "$version" > "$work/proj/.cuda-version"
# The same switch as a direnv .envrc (what users write by hand).
printf 'export CUDA_HOME=%s\nexport CUDA_PATH=%s\nPATH_add %s/bin\npath_add LD_LIBRARY_PATH %s/lib64\n' \
  "$root" "$root" "$root" "$root" > "$work/proj/.envrc"
direnv allow "$work/proj" >/dev/null 2>&1

echo "cuda-doctor $("$doctor" --version | awk '{print $2}') · direnv $(direnv version) · toolkit $version at $root"
echo "$(date -u +%Y-%m-%dT%H:%MZ) · $(nproc) CPUs · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo

for sh in bash zsh; do
  command -v "$sh" >/dev/null || { echo "shell_init.sh: $sh missing, skipped" >&2; continue; }
  flags=$([ "$sh" = bash ] && echo "--norc --noprofile" || echo "-f")
  cd_init="eval \"\$('$doctor' shell-init $sh)\""
  de_init="eval \"\$(direnv hook $sh)\""
  loop() { echo "i=0; while (( i < $1 )); do $2; i=\$((i+1)); done"; }
  # Every shell defines both hooks (so each pays both inits) and calls one of them, or neither.
  # Each variant is a script file (hyperfine -N splits a command line into words itself).
  script() {  # NAME BODY
    printf '%s\n%s\n' "$cd_init; $de_init" "$2" > "$work/$sh-$1.sh"
    echo "$sh $flags $work/$sh-$1.sh"
  }
  idle() { script "$1" "cd '$work/proj'; $2; $(loop "$idle_n" "$2")"; }
  switch() { script "$1" "cd '$work/proj'; $2; $(loop "$switch_n" "cd '$work/plain'; $2; cd '$work/proj'; $2")"; }
  json=$out/shell_init_$sh.json
  hyperfine -N --warmup 3 --min-runs 10 --export-json "$json" \
    -n "$sh: no hook" "$(idle none :)" \
    -n "$sh: cuda-doctor idle" "$(idle cd-idle _cuda_doctor_hook)" \
    -n "$sh: direnv idle" "$(idle de-idle _direnv_hook)" \
    -n "$sh: no hook (switch)" "$(switch none-sw :)" \
    -n "$sh: cuda-doctor switch" "$(switch cd-switch _cuda_doctor_hook)" \
    -n "$sh: direnv switch" "$(switch de-switch _direnv_hook)" >/dev/null
  python3 - "$json" "$idle_n" "$switch_n" <<'EOF'
import json, sys
r = {x["command"].split(": ", 1)[1]: x for x in json.load(open(sys.argv[1]))["results"]}
sh = json.load(open(sys.argv[1]))["results"][0]["command"].split(":")[0]
idle_n, switch_n = int(sys.argv[2]), int(sys.argv[3])
def per(name, base, n):
    return (r[name]["mean"] - r[base]["mean"]) / n * 1e3, r[name]["stddev"] / n * 1e3
for kind, base, n in (("idle", "no hook", idle_n), ("switch", "no hook (switch)", 2 * switch_n + 1)):
    c, cs = per(f"cuda-doctor {kind}", base, n)
    d, ds = per(f"direnv {kind}", base, n)
    print(f"{sh:4} {kind:6}  cuda-doctor {c:7.3f} ms/prompt (±{cs:.3f})   direnv {d:7.3f} ms/prompt (±{ds:.3f})   {n} prompts per run")
EOF
done
