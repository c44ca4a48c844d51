#!/usr/bin/env bash
# Issue 18 on the H200 machine (a docker container on a VM). Usage on the device:
#   OUT=$OUT bash bench/platform_h200.sh BINARY
# Records what check finds about the platform there, and the raw files it read, so the
# findings can be checked by hand and the files reused as --root fixtures. Writes under $OUT:
#   check.txt          the default one-screen check (must stay healthy: no new lines beyond the checklist)
#   check_v.txt        check -v (the platform findings with their evidence, info included)
#   check.json         check --json; platform.{driver_install,container_runtime,topology} are the new facts
#   platform.txt       jq-free summary: GPU PCIe paths (bridges, port types, ACS), NUMA, IOMMU, IB, interfaces,
#                      container mounts/cgroup, driver install (kernels, DKMS, Secure Boot, package logs), findings ids
#   timing.txt         wall time of check (5 runs) and the probe_seconds of the three new probes
#   raw/               the sysfs/proc files behind it: each GPU's and bridge's vendor/device/class/numa_node/
#                      link files and config space (xxd), /proc/cmdline, iommu group count, /sys/class/net and
#                      /sys/class/infiniband states, /proc/self/mountinfo (nvidia lines), cgroup files, /dev/nvidia*,
#                      NVIDIA_* environment, id -u, nvidia-smi topo -m
# Bounded: every command has a timeout; total well under 2 minutes. No network.
set -uo pipefail
doctor=$(readlink -f "${1:-build/cuda-doctor}")
out=${OUT:-/tmp/platform_h200}
mkdir -p "$out/raw"
export NO_COLOR=1
t() { timeout 60 "$@"; }

t "$doctor" check >"$out/check.txt" 2>&1; echo "exit $?" >>"$out/check.txt"
t "$doctor" check -v >"$out/check_v.txt" 2>&1
t "$doctor" check --json >"$out/check.json" 2>"$out/check_json.err"

{
  for i in 1 2 3 4 5; do
    s=$(date +%s.%N); t "$doctor" check --json >/dev/null 2>&1; e=$(date +%s.%N)
    echo "check run $i: $(awk "BEGIN{printf \"%.3f\", $e - $s}") s"
  done
  python3 - "$out/check.json" <<'PY' 2>&1
import json, sys
f = json.load(open(sys.argv[1]))["facts"]
for k in ("driver", "platform", "driver_install", "containers", "topology"):
    print(f"probe_seconds.{k}: {f.get('probe_seconds', {}).get(k)}")
PY
} >"$out/timing.txt" 2>&1

python3 - "$out/check.json" >"$out/platform.txt" 2>&1 <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["facts"]["platform"]
print("container:", p.get("container"), "|", p.get("container_evidence"))
t = p.get("topology", {})
for g in t.get("gpus", []):
    print(f"GPU {g['address']}: {g['sysfs_path']}")
    print(f"  numa {g['numa_node']} cpus {g['local_cpulist']} iommu_group {g['iommu_group'] or '-'} link {g['link_speed']} x{g['link_width']} (max {g['max_link_speed']} x{g['max_link_width']})")
    for b in g.get("bridges", []):
        print(f"  bridge {b['address']} {b['id']} {b['port'] or '?'} config {b['config_bytes']} B acs_cap {b['acs_cap']} acs_ctrl {b['acs_ctrl']}")
print("config_space_limited:", t.get("config_space_limited"), "| iommu:", t.get("iommu_cmdline") or "-", "groups", t.get("iommu_groups"), "| numa nodes", t.get("numa_nodes"))
for d in t.get("ib", []):
    print("ib", d["name"], d["pci"], "numa", d["numa_node"], [(q["port"], q["state"], q["rate"], q["link_layer"]) for q in d["ports"]])
for n in t.get("net", []):
    print("net", n["name"], n["operstate"], n["pci"] or "(virtual)", "numa", n["numa_node"], "speed", n["speed_mbps"], "default route" if n["default_route"] else "")
c = p.get("container_runtime", {})
print("container runtime:", json.dumps(c))
d = p.get("driver_install", {})
print("driver install: kernels", d.get("kernels"), "modules", d.get("module_files"), "dkms", d.get("dkms"),
      "secure_boot", d.get("secure_boot"), d.get("secure_boot_source"), "nouveau", d.get("nouveau_loaded"),
      "logs", d.get("package_logs"), "events", len(d.get("package_events", [])), "booted", d.get("booted_unix"))
print("device_open_errors:", j["facts"]["driver"].get("device_open_errors"))
print("findings:", [(f["id"], f["severity"]) for f in j["findings"]])
PY

r="$out/raw"
id -u >"$r/id_u.txt"
cat /proc/cmdline >"$r/proc_cmdline.txt" 2>&1
ls /sys/kernel/iommu_groups 2>&1 | wc -l >"$r/iommu_groups_count.txt"
ls -la /dev/nvidia* >"$r/dev_nvidia.txt" 2>&1
env | grep -E '^(NVIDIA_|CUDA_|NCCL_)' >"$r/env.txt" 2>&1
grep -iE 'nvidia|libcuda' /proc/self/mountinfo >"$r/mountinfo_nvidia.txt" 2>&1
{ cat /proc/self/cgroup; ls /sys/fs/cgroup | head -50; cat /sys/fs/cgroup/devices/devices.list 2>&1; } >"$r/cgroup.txt" 2>&1
for a in $(ls /sys/bus/pci/devices); do
  d=/sys/bus/pci/devices/$a
  [ "$(cat $d/vendor)" = 0x10de ] || continue
  p=$(readlink -f "$d")
  echo "$a -> $p" >>"$r/gpu_paths.txt"
  node=""
  for c in $(echo "${p#/sys/devices/}" | tr / ' '); do
    node="$node/$c"; f="/sys/devices$node"; [ -f "$f/vendor" ] || continue
    n=$(echo "$c" | tr : _)
    { for x in vendor device class numa_node local_cpulist current_link_speed current_link_width max_link_speed max_link_width; do
        printf '%s: %s\n' "$x" "$(cat "$f/$x" 2>/dev/null)"; done
      echo "config bytes readable: $(head -c 4096 "$f/config" 2>/dev/null | wc -c)"
      readlink "$f/iommu_group" 2>/dev/null; } >"$r/pci_$n.txt"
    head -c 4096 "$f/config" 2>/dev/null | xxd >"$r/pci_$n.config.xxd"
  done
done
for n in /sys/class/net/*; do
  echo "$(basename $n) $(cat $n/operstate 2>/dev/null) $(readlink -f $n/device 2>/dev/null) speed=$(cat $n/speed 2>/dev/null)"
done >"$r/net.txt" 2>&1
cat /proc/net/route >"$r/proc_net_route.txt" 2>&1
ls -la /sys/class/infiniband/ >"$r/infiniband.txt" 2>&1
for d in /sys/class/infiniband/*/ports/*; do echo "$d $(cat $d/state 2>/dev/null) $(cat $d/rate 2>/dev/null) $(cat $d/link_layer 2>/dev/null)"; done >>"$r/infiniband.txt" 2>&1
ls -d /sys/devices/system/node/node* >"$r/numa_nodes.txt" 2>&1
ls /lib/modules /var/lib/dkms /sys/firmware/efi/efivars 2>&1 | head -40 >"$r/modules_dkms_efi.txt"
ls -la /var/log/apt /var/log/dpkg.log* /var/log/dnf.rpm.log* /var/log/unattended-upgrades 2>&1 >"$r/package_logs.txt"
t nvidia-smi topo -m >"$r/nvidia_smi_topo.txt" 2>&1
echo "done: $(ls "$out" "$r" | wc -l) files"
