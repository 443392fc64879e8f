#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# On the device machine (real H200), from the repository root, with the wheels of
# docs/evidence/real-sglang-h200/README.md in .whl/: GPU health captures, tiny models, then real SGLang 0.5.15.post1
# serving and failing (tests/gpu/capture_real_sglang.py). Everything lands in $OUT/run1.tar.gz.
set -u
OUT=${OUT:-/tmp/out}; CAP=/tmp/cap; rm -rf "$CAP"; mkdir -p "$CAP/health" "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
pack() { tar -C /tmp -czf "$OUT/run1.tar.gz" cap; }
trap pack EXIT
start=$(date +%s)

h="$CAP/health"
{ nvidia-smi -q > "$h/nvidia-smi-q.txt" 2>&1
  nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,PERFORMANCE,TEMPERATURE,PCI,CLOCK,POWER > "$h/nvidia-smi-q-d.txt" 2>&1
  nvidia-smi --query-remapped-rows=gpu_bus_id,gpu_uuid,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv > "$h/query-remapped-rows.csv" 2>&1
  nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,driver_version,persistence_mode,ecc.mode.current,ecc.mode.pending,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,temperature.gpu,temperature.memory,power.draw,clocks.sm,clocks.max.sm,pcie.link.gen.current,pcie.link.gen.max,pcie.link.gen.gpucurrent,pcie.link.gen.gpumax,pcie.link.width.current,pcie.link.width.max,memory.used,memory.total,compute_cap --format=csv > "$h/query-gpu-health.csv" 2>&1
  nvidia-smi --query-gpu=index,clocks_event_reasons.active,clocks_event_reasons.gpu_idle,clocks_event_reasons.applications_clocks_setting,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.sync_boost --format=csv > "$h/query-clocks-event-reasons.csv" 2>&1
  nvidia-smi --query-gpu=index,clocks_throttle_reasons.active,clocks_throttle_reasons.hw_slowdown --format=csv > "$h/query-clocks-throttle-reasons.csv" 2>&1
  nvidia-smi --query-gpu=index,fabric.state,fabric.status --format=csv > "$h/query-fabric.csv" 2>&1
  nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_bus_id --format=csv > "$h/query-compute-apps-idle.csv" 2>&1
  nvidia-smi nvlink -s > "$h/nvlink-s.txt" 2>&1; nvidia-smi topo -m > "$h/topo-m.txt" 2>&1
  nvidia-smi -q -d PCI > "$h/nvidia-smi-q-pci.txt" 2>&1
  cat /proc/driver/nvidia/version > "$h/proc-driver-version.txt" 2>&1
  cat /proc/driver/nvidia/gpus/*/information > "$h/proc-gpus-information.txt" 2>&1
  for f in /sys/bus/pci/devices/*; do [ "$(cat "$f/vendor" 2>/dev/null)" = 0x10de ] && echo "$f $(cat "$f/current_link_speed" 2>&1) x$(cat "$f/current_link_width" 2>&1) max $(cat "$f/max_link_speed" 2>&1) x$(cat "$f/max_link_width" 2>&1)"; done > "$h/sysfs-pcie-link.txt" 2>&1
  (dmesg 2>&1 | tail -200) > "$h/dmesg.txt"; (journalctl -k --no-pager 2>&1 | tail -50) > "$h/journalctl-k.txt"
  (command -v dcgmi; dcgmi --version; systemctl is-active nvidia-fabricmanager; ls /dev/nvidia*) > "$h/tools.txt" 2>&1; }
[ -f tests/gpu/health_requests.sh ] && bash tests/gpu/health_requests.sh "$h" > "$h/requests.log" 2>&1
echo "health captures: $(find "$h" -type f | wc -l) files, $(( $(date +%s) - start ))s"

"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > "$CAP/pip.log" 2>&1 || { echo "wheel install failed"; cat "$CAP/pip.log"; exit 1; }
export PYTHONPATH=/tmp/site HF_HUB_OFFLINE=1 CUDA_HOME=/usr/local/cuda PYTHONUNBUFFERED=1
"$PY" -c 'import sglang, torch, transformers, sgl_kernel, flashinfer; print("sglang", sglang.__version__, "torch", torch.__version__, "transformers", transformers.__version__)' > "$CAP/versions.txt" 2>&1; cat "$CAP/versions.txt"
"$PY" -m pip list > "$CAP/pip-list.txt" 2>&1
"$PY" tests/gpu/make_tiny_models.py /tmp/models > "$CAP/models.txt" 2>&1; tail -1 "$CAP/models.txt"
cp /tmp/models/*/config.json "$CAP/" 2>/dev/null; for m in llama-tiny eagle3-tiny; do cp /tmp/models/$m/config.json "$CAP/config-$m.json"; done
echo "setup done at $(( $(date +%s) - start ))s"; pack
timeout 470 "$PY" tests/gpu/capture_real_sglang.py --models /tmp/models --out "$CAP/cases" --python "$PY" ${ONLY:+--only $ONLY}
nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_bus_id --format=csv > "$h/query-compute-apps-end.csv" 2>&1
echo "all done at $(( $(date +%s) - start ))s"
