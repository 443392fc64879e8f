#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run on the device machine (real H200) from the repository root; writes evidence and raw captures to $OUT.
# Needs the carried wheels in .whl/ (ansible-core 2.19.14, resolvelib, cryptography, cffi, pycparser; cp312).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/cap"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_LOCALHOST_WARNING=0 \
  ANSIBLE_LOAD_CALLBACK_PLUGINS=1 ANSIBLE_STDOUT_CALLBACK=ansible.builtin.minimal ANSIBLE_CALLBACK_RESULT_FORMAT=json
ansible --version | head -3
ansible localhost -c local -m llmserve.sglang.gpu_facts > "$OUT/h200-gpu_facts.txt" 2>&1; echo "gpu_facts rc=$?"
ansible localhost -c local -m llmserve.sglang.gpu_facts --check > "$OUT/h200-gpu_facts-check.txt" 2>&1; echo "check rc=$?"
head -c 600 "$OUT/h200-gpu_facts.txt"; echo
c() { local f=$1; shift; { "$@"; echo "# rc=$?"; } > "$OUT/cap/$f" 2>&1; }
c query-gpu-facts-fields.csv nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,compute_cap,driver_version,memory.total,memory.used,utilization.gpu,persistence_mode --format=csv,noheader,nounits
c query-compute-apps-noheader.csv nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits
c query-pci-device-id.csv nvidia-smi --query-gpu=index,pci.device_id,pci.sub_device_id --format=csv
c topo-m.txt nvidia-smi topo -m
c nvlink-s.txt nvidia-smi nvlink -s
c proc-driver-nvidia-version.txt cat /proc/driver/nvidia/version
c proc-modules-nvidia.txt sh -c 'grep -i nvidia /proc/modules; ls /sys/module | grep -i -E "nvidia|nouveau"; cat /sys/module/nvidia/version'
c dev-nvidia.txt sh -c 'ls -l /dev/nvidia*'
# shellcheck disable=SC2016  # expanded by the inner sh, per device
c pci-sysfs.txt sh -c 'for d in /sys/bus/pci/devices/*; do echo "$(basename $d) $(cat $d/vendor) $(cat $d/device) $(cat $d/class)"; done'
c persistenced.txt sh -c 'command -v nvidia-persistenced; ps -eo pid,comm | grep -i nvidia; systemctl is-active nvidia-persistenced'
c uname-os.txt sh -c 'uname -a; uname -m; cat /etc/os-release; ls /lib/modules 2>&1; command -v dkms modprobe update-initramfs dracut lsmod'
c cuda-layout.txt sh -c 'ls -l /usr/local | grep -i cuda; command -v nvcc; nvcc --version; ls /etc/profile.d; cat /etc/ld.so.conf.d/*cuda* 2>&1'
c dpkg-nvidia.txt sh -c 'dpkg -l | grep -i -E "nvidia|cuda-toolkit|cuda-keyring|linux-headers"; apt-mark showhold'
c modprobe-d.txt sh -c 'ls /etc/modprobe.d; cat /etc/modprobe.d/*nouveau* 2>&1'
c pytest-unit.txt python3 -m pytest -q -p no:cacheprovider tests/unit/plugins/module_utils/nvidia/test_nvidia_smi.py tests/unit/plugins/module_utils/nvidia/test_gpu_facts.py
tail -2 "$OUT/cap/pytest-unit.txt"
tar -C "$OUT" -czf "$OUT/captures.tgz" cap && rm -rf "$OUT/cap"
