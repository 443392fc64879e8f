#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Gather NVIDIA GPU, driver, CUDA and topology facts
version_added: "0.1.0"
description:
  - Runs C(nvidia-smi) (banner, C(--query-gpu), C(topo -m), C(--query-compute-apps)) and C(nvcc --version), reads
    C(/proc/driver/nvidia/version) and the NVIDIA functions in C(/sys/bus/pci/devices), and returns them as
    C(ansible_facts.gpu).
  - Never fails on a host without GPUs or without a driver; C(gpu.present) is then false and C(gpu.reason) says
    why (C(nvidia-smi) missing, no driver loaded, no devices found, driver/library mismatch).
  - Drivers that do not know a queried field (R470 and C(compute_cap)) are handled by dropping that field; it is
    then reported as null and a warning is added.
  - Fails, naming it, when C(nvidia-smi) hangs (each call has a 60 s deadline; its process group is killed), prints
    more than 16 MiB, or prints what it never prints (a row with the wrong number of fields, a field that is no
    number), as a broken tool is not a host without GPUs. A number outside its physical range (memory,
    utilisation) is a broken reading, null with a warning.
author:
  - llmserve maintainers (@llmserve)
options:
  nvidia_smi_path:
    description: Path of C(nvidia-smi). Default is the one found on C(PATH) (and C(/usr/bin), C(/usr/sbin)).
    type: path
  nvcc_path:
    description:
      - Path of C(nvcc). Default is C(nvcc) on C(PATH), then C(/usr/local/cuda/bin/nvcc), then the newest
        C(/usr/local/cuda-*/bin/nvcc).
    type: path
  proc_version_path:
    description:
      - File that names the loaded kernel module flavour. Change it only for tests or containers where C(/proc) of
        the host is mounted elsewhere.
    type: path
    default: /proc/driver/nvidia/version
  gather_topology:
    description: Run C(nvidia-smi topo -m) and return the link matrix.
    type: bool
    default: true
  gather_processes:
    description: Run C(nvidia-smi --query-compute-apps) and return the compute processes.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Reports facts only; changes nothing, so there is no diff.
  facts:
    support: full
    description: Returns C(ansible_facts.gpu); set on the host like any fact.
notes:
  - Target needs only the Python standard library.
  - C(cuda_driver_version) is the highest CUDA version the driver supports (the C(nvidia-smi) banner), not the
    installed toolkit; the toolkit is C(nvcc.release).
"""

EXAMPLES = r"""
- name: Gather GPU facts
  llmserve.sglang.gpu_facts:

- name: Fail early on hosts without a usable GPU
  ansible.builtin.assert:
    that: ansible_facts.gpu.present
    fail_msg: "{{ ansible_facts.gpu.reason }}"

- name: Tensor parallel size from the GPU count
  ansible.builtin.set_fact:
    server_tp: "{{ ansible_facts.gpu.count }}"

- name: Use an nvcc that is not on PATH and skip the process list
  llmserve.sglang.gpu_facts:
    nvcc_path: /usr/local/cuda-13.0/bin/nvcc
    gather_processes: false
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    gpu:
      description: NVIDIA GPU facts.
      returned: always
      type: dict
      contains:
        present:
          description: Whether nvidia-smi works and sees at least one GPU.
          type: bool
          sample: true
        reason:
          description: Why no GPU is usable (null when C(present)).
          type: str
          sample: "no devices found: the driver is loaded but sees no GPU (...)"
        count:
          description: Number of GPUs.
          type: int
          sample: 8
        driver_version:
          description: Driver version (from nvidia-smi, else from /proc/driver/nvidia/version).
          type: str
          sample: "580.159.04"
        cuda_driver_version:
          description: Highest CUDA version the driver supports (nvidia-smi banner).
          type: str
          sample: "13.0"
        kernel_module_flavor:
          description: C(open), C(proprietary), or null when no module is loaded.
          type: str
          sample: open
        nvcc:
          description: "C(nvcc) found: C({path, release, version}), or null."
          type: dict
          sample: {"path": "/usr/local/cuda/bin/nvcc", "release": "13.0", "version": "13.0.88"}
        gpus:
          description: One entry per GPU.
          type: list
          elements: dict
          sample:
            - {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-...", "pci_bus_id": "00000000:00:06.0",
               "compute_cap": "9.0", "compute_major": 9, "memory_total_mib": 143771, "memory_used_mib": 0,
               "utilization_gpu": 0, "persistence_mode": true}
        compute_caps:
          description: Distinct compute capabilities, sorted.
          type: list
          elements: str
          sample: ["9.0"]
        topology:
          description:
            - C(matrix) (GPU to GPU link type, e.g. C(NV18), C(NODE), C(SYS)), C(nvlink_counts) (C("0-1") -> bonded
              links), C(all_nvlink), C(pcie_only) (both false with one GPU), C(nvswitch) (an NVIDIA bridge-class PCI
              function is present; null when sysfs shows no NVIDIA device), C(affinity) (CPU and NUMA affinity).
          type: dict
          sample: {"matrix": {"GPU0": {"GPU1": "NV18"}, "GPU1": {"GPU0": "NV18"}}, "nvlink_counts": {"0-1": 18},
                   "all_nvlink": true, "pcie_only": false, "nvswitch": true}
        processes:
          description: Compute processes on the GPUs.
          type: list
          elements: dict
          sample: [{"pid": 4242, "name": "python3", "used_memory_mib": 130000}]
        pci_devices:
          description: NVIDIA PCI functions from sysfs (also without a driver).
          type: list
          elements: dict
          sample: [{"slot": "0000:00:06.0", "device_id": "0x2335", "class": "0x030200"}]
        warnings:
          description: Fields the driver did not know and similar degradations.
          type: list
          elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia.smi import Refused, collect

TOOL_TIMEOUT_S = 60  # each nvidia-smi/nvcc call; a hung one is killed with its process group and named


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nvidia_smi_path=dict(type="path"),
            nvcc_path=dict(type="path"),
            proc_version_path=dict(type="path", default="/proc/driver/nvidia/version"),
            gather_topology=dict(type="bool", default=True),
            gather_processes=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )

    run = module_runner(module, timeout=TOOL_TIMEOUT_S, environ_update={"LC_ALL": "C"})

    def which(name):
        return module.get_bin_path(name, opt_dirs=["/usr/bin", "/usr/sbin", "/usr/local/bin"])

    try:
        facts = collect(
            run, which,
            nvidia_smi=module.params["nvidia_smi_path"],
            nvcc_path=module.params["nvcc_path"],
            proc_version_path=module.params["proc_version_path"],
            gather_topology=module.params["gather_topology"],
            gather_processes=module.params["gather_processes"],
        )
    except Refused as exc:  # hung, flooding or garbled: no reading, and not "no GPU" either
        module.fail_json(msg=str(exc))
    for warning in facts["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, ansible_facts={"gpu": facts})


if __name__ == "__main__":
    main()
