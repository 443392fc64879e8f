#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_health
short_description: Judge whether a host's NVIDIA GPUs are healthy enough to serve, and say what is sick
version_added: "0.1.0"
description:
  - Reads the GPUs with one C(nvidia-smi --query-gpu) call (ECC, retired pages, remapped rows, clock event
    reasons, PCIe link, temperature, persistence, MIG, fabric state, recovery action), C(nvidia-smi topo -m),
    C(--query-compute-apps), C(nvlink --status) where NVLink exists, the card's own PCIe link capability from
    sysfs, and the kernel log (C(dmesg) and C(journalctl -k -b)) for Xid events since the driver loaded.
  - "On hosts with two or more GPUs and a GPU pair without NVLink, the PCIe fabric between them (C(pcie_fabric)):
    ACS P2P redirect on the bridges above each GPU (C(lspci -vvv -D)), the IOMMU domain of each GPU
    (C(/sys/kernel/iommu_groups), C(/proc/cmdline)) and GPU-to-GPU P2P (C(nvidia-smi topo -p2p r)), the causes of
    NCCL hangs after init on PCIe-only boxes. Each finding names the bridges, the fix and its cost."
  - Each check gives a verdict per GPU or per host. A problem has a C(check) name, the C(gpu) index (null for the
    host), a C(severity) (C(error) makes the host unhealthy, C(warning) does not), a C(detail) and a C(remedy).
  - Never fails by itself, also not on a host without a driver; C(healthy) says the verdict and the caller
    decides (roles/gpu_health fails the host with the diagnosis).
  - Every tool call has a deadline (60 s; the probes O(probe_timeout) and O(nccl_timeout)) and a 16 MiB cap on what
    it prints; past either its process group is killed and C(nvidia_smi) names it. Output that is not what
    C(nvidia-smi) prints (a row with the wrong number of fields, a field that is no number) is refused, never read
    as GPUs; a number outside its physical range (a GPU at -40 C, NaN or 1e9 C, a negative power draw) is a broken
    reading, an C(nvidia_smi) error of that GPU.
  - Optional and off by default, because they occupy the GPUs; C(dcgmi diag -r 1) and an all-GPU NCCL
    all-reduce through the SGLang venv's torch, judged against what the topology should give.
author:
  - llmserve maintainers (@llmserve)
options:
  expected_count:
    description: Number of GPUs the host must show. C(0) checks only that every NVIDIA GPU on the PCI bus is usable.
    type: int
    default: 0
  expected_model:
    description: Text every GPU name must contain (case-insensitive), e.g. C(RTX PRO 6000) or C(H200). Empty is not checked.
    type: str
    default: ""
  expected_driver_branch:
    description: Driver branch (major version) the host must run, e.g. C(580). Empty is not checked.
    type: str
    default: ""
  expected_cuda:
    description:
      - CUDA version, e.g. C(13.0). The driver must support at least it and C(nvcc) must be this release.
        Empty is not checked.
    type: str
    default: ""
  expected_pcie_width:
    description:
      - Link width every GPU must run at, e.g. C(16). C(0) compares with the card's own maximum (sysfs) and
        NVML's, which catches a link that trained low; set it to also catch a card in a slot wired for fewer lanes
        where sysfs is not readable.
    type: int
    default: 0
  expected_pcie_gen:
    description: Lowest PCIe generation the slots must allow, e.g. C(5). C(0) is not checked.
    type: int
    default: 0
  max_temperature:
    description: Idle temperature (C) from which C(temperature) warns, used where the driver gives no T.Limit margin.
    type: int
    default: 85
  min_tlimit_margin:
    description: Warn when a GPU is fewer than this many degrees from its slowdown limit (C(temperature.gpu.tlimit)).
    type: int
    default: 5
  own_units:
    description: Glob patterns of systemd units whose GPU processes are ours (a running server being redeployed).
    type: list
    elements: str
    default: ["sglang-*.service", "sglang-router*.service"]
  own_process_patterns:
    description:
      - Regular expressions on the command line of GPU processes that are allowed to hold GPU memory.
      - Refused before anything runs, naming the index, when one does not compile, is longer than 1000 characters or
        nests quantifiers (as in V((a+\)+) or V((a|aa\)+)), as such a pattern can backtrack for hours on one line.
    type: list
    elements: str
    default: []
  ignore:
    description:
      - Checks accepted on purpose (e.g. C(ecc_mode) on cards run without ECC). Their problems are moved to
        C(ignored), do not make the host unhealthy, and are returned as a warning every run.
    type: list
    elements: str
    default: []
  kernel_log:
    description: Read the kernel log for Xid events. Needs root where C(kernel.dmesg_restrict=1).
    type: bool
    default: true
  pcie_fabric:
    description:
      - Check the PCIe fabric between the GPUs (checks C(pcie_acs), C(iommu), C(gpu_p2p)) where it matters, on two
        or more GPUs with a pair without NVLink. Reading the bridges' ACS needs root (C(lspci)) and C(pciutils).
      - "Rules: ACS redirect above a GPU is an error where nvidia-smi reports P2P OK and the IOMMU translates the
        GPU's DMA (or that is unknown), a warning otherwise; an IOMMU translating the GPUs' DMA is an error where
        P2P is reported OK; GPU pairs without P2P are a warning. See docs/gpu_health.md."
    type: bool
    default: true
  dcgm_diag:
    description: Run C(dcgmi diag -r 1 -j) (about a minute, needs DCGM and C(nv-hostengine)).
    type: bool
    default: false
  nccl_allreduce:
    description:
      - A short NCCL all-reduce over exactly the instance's GPUs on this host (O(nccl_gpus), else the first
        O(nccl_world)) through O(nccl_python)'s torch, under a hard deadline (O(nccl_timeout)); a hang or a wrong sum
        refuses the host naming the GPUs and the remedies (C(NCCL_P2P_DISABLE=1), ACS, IOMMU); the bus bandwidth is
        compared with what the topology should give and reported. C(nvidia-smi topo -p2p) saying OK does not prove
        the first collective finishes.
      - C(auto) runs it where the instance spans two or more GPUs here and no GPU process runs; a one-GPU instance,
        or a host with GPU processes, reports the check skipped (with why in RV(nccl)). C(on) also runs it over
        every GPU without an instance. C(off) skips it on purpose. C(true)/C(false) mean C(on)/C(off).
    type: str
    default: auto
  nccl_gpus:
    description: GPU indices (nvidia-smi numbering) the instance runs on; empty = the first O(nccl_world).
    type: list
    elements: int
    default: []
  nccl_world:
    description: GPUs the instance spans on this host (tensor parallel size / nodes); 0 = no instance given.
    type: int
    default: 0
  nccl_env:
    description: NCCL settings the server gets (its C(NCCL_*) variables), so the probe runs as the server will.
    type: dict
    default: {}
  nccl_timeout:
    description:
      - Seconds the all-reduce may take, start-up included (torch import, NCCL init, one warm-up, the timed
        iterations). Past it the probe's whole process group is killed and the host refused as hung.
      - 0 takes O(probe_timeout); at most 86400.
    type: int
    default: 120
  nccl_iters:
    description: Timed all-reduce iterations after the warm-up.
    type: int
    default: 10
  nccl_python:
    description: Python of the SGLang virtualenv (it has torch with NCCL).
    type: path
    default: /opt/sglang/venv/bin/python
  nccl_size_mb:
    description: All-reduce message size, MiB.
    type: int
    default: 64
  nccl_min_busbw_gbps:
    description: Lowest acceptable bus bandwidth, GB/s. C(0) derives it from the topology (see RETURN C(nccl)).
    type: float
    default: 0
  probe_timeout:
    description: Seconds the DCGM diagnostic may run (1 to 86400).
    type: int
    default: 300
  nvidia_smi_path:
    description: Path of C(nvidia-smi). Default is the one on C(PATH).
    type: path
  gpu_facts:
    description:
      - The GPU facts this run already gathered (C(ansible_facts.gpu), module M(llmserve.sglang.gpu_facts)). The
        gate's own health query always runs; when it reports the same GPUs under the same driver, the driver and CUDA
        versions, C(topo -m), the compute apps and nvcc are taken from these facts instead of asking again
        (C(reused) in RV(facts) lists what was). Empty asks everything.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode (the optional probes too, they change nothing).
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
notes:
  - Target needs only the Python standard library and C(nvidia-smi).
  - "Xid events count from the last driver load (C(NVRM: loading NVIDIA UNIX ...) in the log); a GPU reset does
    not clear them, a reboot or driver reload does. After a reset fixed the cause, accept them with
    C(ignore: [xid]) until the next reboot."
  - See docs/gpu_health.md for every check, its thresholds and the Xid table.
seealso:
  - module: llmserve.sglang.gpu_facts
"""

EXAMPLES = r"""
- name: Check the GPUs before launching the server
  llmserve.sglang.gpu_health:
    expected_count: 8
    expected_model: RTX PRO 6000
    expected_driver_branch: "580"
    expected_cuda: "13.0"
  register: health

- name: Refuse a sick host with its diagnosis
  ansible.builtin.fail:
    msg: "{{ health.summary }}"
  when: not health.healthy

- name: Accept ECC off on purpose, and measure the all-reduce too
  llmserve.sglang.gpu_health:
    ignore: [ecc_mode]
    nccl_allreduce: "on"
    nccl_gpus: [0, 1, 2, 3]
    nccl_python: /opt/sglang/venv/bin/python
"""

RETURN = r"""
healthy:
  description: No problem of severity C(error) outside C(ignore).
  returned: always
  type: bool
  sample: false
problems:
  description: What is wrong, errors first; each C({check, gpu, severity, detail, remedy}).
  returned: always
  type: list
  elements: dict
  sample:
    - check: remapped_rows
      gpu: 3
      severity: error
      detail: "GPU3 (00000000:5D:00.0): a row remapping is pending: the bad memory row is still in use until the GPU is reset"
      remedy: "reset the GPU (nvidia-smi -r -i 3 with nothing running on it) or reboot"
ignored:
  description: Problems of checks in C(ignore), kept aside; also returned as warnings.
  returned: always
  type: list
  elements: dict
summary:
  description: "One line per problem (C([severity] check: detail -> remedy)), then the ignored ones."
  returned: always
  type: list
  elements: str
notes:
  description: What was judged fine and why (lifetime ECC errors repaired by remapping, PCIe speed at idle, log source).
  returned: always
  type: list
  elements: str
checks:
  description: Verdict per check, C(ok), C(warning), C(error), C(ignored) or C(skipped) (not run, or no data).
  returned: always
  type: dict
  sample: {"gpu_count": "ok", "remapped_rows": "error", "dcgm_diag": "skipped"}
facts:
  description:
    - Raw facts the checks read. C(gpus) per GPU (ECC counters, remap state, clock event reasons and counters,
      PCIe gen/width current and maximum, card maximum from sysfs, temperatures, power, recovery action, fabric
      state), C(driver_version), C(cuda_driver_version), C(nvcc), C(topology), C(processes), C(nvlink),
      C(xids) (code, pci, message, line), C(firmware) (kind, meaning, line - the GPU firmware's own lines - GSP
      heartbeat, RC watchdog, RISC-V halt, GSP RPC timeout), C(kernel_log_source), C(pci_devices), C(dropped_fields),
      C(pcie_fabric) (C(applies), C(why), per GPU the C(bridges) above it with their ACS control and redirect
      bits, C(p2p) status per GPU pair, C(iommu) domain per GPU and the kernel command line's settings).
  returned: always
  type: dict
nccl:
  description:
    - The all-reduce - C(gpus) (the indices it ran over, or would have), and either C(skipped) (why it did not
      run), C(timed_out) with C(deadline_s), C(left) (pids of the probe's tree still there 10 s after SIGKILL; the
      module returns only once the probe's whole tree is gone, else says which are left), or its result - C(busbw_gbps), C(algbw_gbps), C(world_size),
      C(correct), C(expected_min_busbw_gbps), C(expectation) (how the floor was derived), C(report) (one line, also
      in RV(notes)) and C(env) (the CUDA and NCCL variables it ran with).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import gate
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia.health import ALL_CHECKS

TOOL_TIMEOUT_S = 60  # nvidia-smi, lspci, dmesg, journalctl, systemctl: each call


def main():
    module = AnsibleModule(
        argument_spec=dict(
            expected_count=dict(type="int", default=0),
            expected_model=dict(type="str", default=""),
            expected_driver_branch=dict(type="str", default=""),
            expected_cuda=dict(type="str", default=""),
            expected_pcie_width=dict(type="int", default=0),
            expected_pcie_gen=dict(type="int", default=0),
            max_temperature=dict(type="int", default=85),
            min_tlimit_margin=dict(type="int", default=5),
            own_units=dict(type="list", elements="str", default=["sglang-*.service", "sglang-router*.service"]),
            own_process_patterns=dict(type="list", elements="str", default=[]),
            ignore=dict(type="list", elements="str", default=[]),
            kernel_log=dict(type="bool", default=True),
            pcie_fabric=dict(type="bool", default=True),
            dcgm_diag=dict(type="bool", default=False),
            nccl_allreduce=dict(type="str", default="auto"),
            nccl_gpus=dict(type="list", elements="int", default=[]),
            nccl_world=dict(type="int", default=0),
            nccl_env=dict(type="dict", default={}),
            nccl_timeout=dict(type="int", default=120),
            nccl_iters=dict(type="int", default=10),
            nccl_python=dict(type="path", default="/opt/sglang/venv/bin/python"),
            nccl_size_mb=dict(type="int", default=64),
            nccl_min_busbw_gbps=dict(type="float", default=0),
            probe_timeout=dict(type="int", default=300),
            nvidia_smi_path=dict(type="path"),
            gpu_facts=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    params = module.params
    unknown = gate.unknown_ignores(params["ignore"])
    if unknown:
        module.fail_json(msg="ignore: unknown check(s) %s; the checks are: %s"
                         % (", ".join(unknown), ", ".join(ALL_CHECKS)))

    bad = gate.input_problems(params)
    if bad:
        module.fail_json(msg="; ".join(bad))
    runner = module_runner(module, timeout=TOOL_TIMEOUT_S, environ_update={"LC_ALL": "C"})

    def run(argv, data=None, env=None):
        # every tool within TOOL_TIMEOUT_S (its process group killed past it); the probes within their own deadline
        return runner(argv, data=data, environ_update=env, timeout=gate.bounded_by(argv) or TOOL_TIMEOUT_S)

    result, warnings = gate.check(params, run, module.get_bin_path, module.tmpdir)
    for warning in warnings:
        module.warn(warning)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
