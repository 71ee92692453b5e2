#!/usr/bin/env bash
# gpu-smoke: the built distribution against real NVML on a machine with an NVIDIA GPU.
# Runs bin/otelcol-gpumem with backend: nvml and the file exporter for ~15 s while a small torch
# workload holds GPU memory, then checks that usage, the workload's per-process memory (by pid)
# and the resource attributes came out. Exit 0 = pass.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${OTELCOL_GPUMEM_BIN:-bin/otelcol-gpumem}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv || true

cat >"$work/config.yaml" <<YAML
receivers:
  gpu_mem:
    collection_interval: 1s
    backend: nvml
    xid:
      kmsg_path: ""
exporters:
  file:
    path: $work/metrics.jsonl
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [gpu_mem]
      exporters: [file]
YAML

pid=""
if command -v python3 >/dev/null && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	python3 - <<'PY' &
import time, torch
x = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda")  # 2 GiB
print("workload pid", __import__("os").getpid(), "holds", x.numel() >> 20, "MiB", flush=True)
time.sleep(25)
PY
	pid=$!
	sleep 5
else
	echo "python3 with CUDA torch not found: checking device metrics only"
fi

"$bin" --config "$work/config.yaml" >"$work/collector.log" 2>&1 &
col=$!
sleep 15
kill -INT $col; wait $col || true
grep -E 'NVML|error|warn' "$work/collector.log" | head -20 || true

python3 - "$work/metrics.jsonl" "${pid}" <<'PY'
import json, sys
path, pid = sys.argv[1], sys.argv[2]
seen, procs, res = set(), {}, None
for line in open(path):
    for rm in json.loads(line).get("resourceMetrics", []):
        attrs = {a["key"]: list(a["value"].values())[0] for a in rm["resource"].get("attributes", [])}
        res = attrs
        for sm in rm.get("scopeMetrics", []):
            for m in sm["metrics"]:
                seen.add(m["name"])
                if m["name"] == "nvidia.gpu.process.memory.usage":
                    for dp in m["sum"]["dataPoints"]:
                        a = {x["key"]: list(x["value"].values())[0] for x in dp.get("attributes", [])}
                        procs[str(a.get("process.pid"))] = (int(dp["asInt"]), a.get("process.executable.name"))
print("resource:", res)
print("metrics:", sorted(seen))
print("processes:", procs)
ok = True
for name in ["hw.gpu.memory.usage", "hw.gpu.memory.limit", "nvidia.gpu.memory.free", "hw.status"]:
    if name not in seen:
        print("MISSING", name); ok = False
for key in ["hw.id", "hw.name", "hw.model", "hw.firmware_version", "nvidia.gpu.pci.bus_id", "hw.driver_version"]:
    if not res or key not in res:
        print("MISSING resource attribute", key); ok = False
if pid:
    if pid not in procs:
        print("MISSING process", pid); ok = False
    elif procs[pid][0] < 2 * 1024**3:
        print("process memory too small", procs[pid]); ok = False
print("gpu-smoke:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
