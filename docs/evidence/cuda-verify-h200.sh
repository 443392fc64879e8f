#!/usr/bin/env bash
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run on the device machine (real H200, CUDA 13.0, driver 580 open) from the repository root:
# roles/cuda in verify mode and the whole role in check mode, with ansible-core from carried wheels.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_NOCOLOR=1
cat > /tmp/cuda-verify.yml <<'YML'
- name: CUDA 13 stack on this host
  hosts: localhost
  connection: local
  gather_facts: true
  vars:
    cuda_expected_gpu_count: 1
    cuda_expected_compute_caps: ["9.0"]
  roles:
    - role: llmserve.sglang.cuda
YML
ansible-playbook -i localhost, /tmp/cuda-verify.yml --tags cuda_verify > "$OUT/h200-cuda-verify.txt" 2>&1; echo "verify rc=$?"
ansible-playbook -i localhost, /tmp/cuda-verify.yml --check --diff -e cuda_reboot=never > "$OUT/h200-cuda-check.txt" 2>&1; echo "check rc=$?"
tail -5 "$OUT/h200-cuda-verify.txt"; tail -5 "$OUT/h200-cuda-check.txt"
