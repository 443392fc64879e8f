#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_ready
short_description: Wait until an SGLang server is ready, or say precisely why it is not
version_added: "0.1.0"
description:
  - Runs on the target host. Follows the server log incrementally (new bytes only, C(\r) progress bars
    collapsed), watches the server process or systemd unit, and probes the HTTP port.
  - Ready means the server says so - the C(fired up) log line and/or the readiness endpoint (O(health_path)) answering
    200 on node rank 0 - confirmed by one real 1-token C(POST /generate) (see O(verify_generation)).
  - Fails at once when the process or unit is gone (also when it died before the wait began, in every mode), a few
    seconds after a fatal log line while the parent lingers (e.g. SGLang stays up about 70 s after the HTTP port
    bind fails),
    when nothing progresses (log, CPU, I/O, GPU memory) for O(stall_timeout), when a stage exceeds its
    O(stage_timeouts) budget, or at O(timeout). The failure is classified (O(extra_patterns) extend the table).
  - Once the process is seen gone, the rest of its process tree is given up to 10 s to exit and the whole rest of the
    log is read before the failure is classified, so the verdict is a function of the log, not of when it was read.
  - With the action plugin of the same name, progress is printed live, one line per host per stage change and at
    least every O(progress_interval) seconds, without one SSH connection per poll.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_endpoint
options:
  health_path:
    description:
      - Readiness endpoint. Unset, it follows the SGLang version - C(/ready) from 0.5.20 on (200 once the server's
        warm-up passed and it takes requests; no generation), C(/health) before (a one-token generation, which
        SGLang answers in 1 s at the soonest) - and, without O(sglang_version), the module asks C(/ready) and keeps
        to C(/health) when the server answers 404 for it.
      - Only called when the port is open or the log says the HTTP server is up, with a timeout of at least 5 s
        (a 1 s probe of C(/health) flaps).
    type: str
  sglang_version:
    description: SGLang version the server runs (e.g. C(0.5.23)); picks the readiness endpoint (see O(health_path)).
    type: str
  validate_certs:
    description: Verify TLS certificates for https URLs.
    type: bool
    default: true
  log_path:
    description: Server log (stdout and stderr). May not exist yet when the wait begins. Read only as a regular file
      reached without a link, and never by blocking - a symbolic link (to C(/etc/shadow) or anywhere), a FIFO or a
      device is refused by name, never shown in RV(log_tail).
    type: path
  unit:
    description: systemd unit running the server. Mutually exclusive with O(pid) and O(pid_file).
    type: str
  pid:
    description: PID of the server's main process.
    type: int
  pid_file:
    description: File holding the server's PID. When it is gone (roles/server's supervisor removes it when the server
      ends), C(<pid_file>.status) written by the supervisor gives the pid and exit status of a server that already
      died. A pid file is not proof - the pid is watched only when it is the process the supervisor recorded
      starting (C(<pid_file>.status) C(identity) - pid, start time, executable); a pid file naming another process
      (a reused pid, a bystander), a link, garbage or a pid <= 1 fails the wait with a message naming the file.
    type: path
  node_rank:
    description: C(--node-rank) of this node. Ranks >= 1 run an always-200 stub, so they are judged from the process
      and the log only (needs O(log_path) or a watched process).
    type: int
    default: 0
  timeout:
    description: Overall seconds to wait.
    type: float
    default: 1800
  stall_timeout:
    description: Seconds without new log bytes, CPU time, I/O or GPU memory change before the server counts as stalled.
    type: float
    default: 600
  stage_timeouts:
    description: Per-stage budgets in seconds, keyed by stage (C(init), C(dist_init), C(load_weights), C(kv_cache),
      C(cuda_graph), C(http), C(warmup)). Catches e.g. NCCL init spinning at 100% CPU.
    type: dict
    default: {}
  interval:
    description: Seconds between the costly checks (health call, process tree CPU/IO, systemctl). Log and process
      liveness are checked every 0.1 s regardless.
    type: float
    default: 1
  tail_lines:
    description: Lines of log (and journal) returned.
    type: int
    default: 40
  extra_patterns:
    description: Extra failure signatures; they win over the built-in ones.
    type: list
    elements: dict
    default: []
    suboptions:
      regex:
        description:
          - Python regular expression searched in each log line (lines are clipped to their first 3072 and last
            1024 characters).
          - Refused before the wait starts, naming its index, when it does not compile, is longer than 1000
            characters, nests quantifiers (as in V((a+\)+) or V((a|aa\)+)) or repeats the same quantifier twice in a
            row (as in V(.*.*)), as such a pattern can backtrack for hours on one line.
        type: str
        required: true
      category:
        description: Category reported when it matches (one of RV(category)'s list).
        type: str
        default: unknown
      remedy:
        description: What to try.
        type: str
      strong:
        description: Whether the line alone ends the wait (after the fatal grace) while the process lingers.
        type: bool
        default: true
  host:
    description:
      - What is known of the host, so that a remedy fits it (roles/server fills it from gpu_facts and the plan). TP 1
        on one node never gets an NCCL or PCIe remedy; a PCIe-only box gets the fabric ones (custom all-reduce off,
        C(NCCL_P2P_DISABLE), the gpu_health gate's ACS/IOMMU checks); C(arch_unsupported) names the GPU's compute
        capability and what supports it.
      - The launch's own C(server_args=) line in the log (C(tp_size), C(pp_size), C(nnodes)) wins over O(host.tp_size),
        O(host.pp_size) and O(host.nnodes).
    type: dict
    suboptions:
      tp_size:
        description: Tensor-parallel size of the launch.
        type: int
      pp_size:
        description: Pipeline-parallel size of the launch.
        type: int
      nnodes:
        description: Nodes of the replica.
        type: int
      gpu_count:
        description: GPUs the server may use on this host.
        type: int
      compute_caps:
        description: Compute capabilities of the GPUs (gpu_facts C(compute_caps), e.g. C(12.0)).
        type: list
        elements: str
      gpu_names:
        description: GPU model names (gpu_facts).
        type: list
        elements: str
      pcie_only:
        description: The GPUs talk over PCIe only (gpu_facts C(topology.pcie_only)).
        type: bool
      all_nvlink:
        description: Every GPU pair is joined by NVLink (gpu_facts C(topology.all_nvlink)).
        type: bool
  verify_generation:
    description: After the readiness endpoint (or the log) says ready, send one real 1-token C(POST /generate)
      (C(GET /health_generate) when C(/generate) is missing); a failure gives RV(reason=unhealthy).
    type: bool
    default: true
  chat_probe:
    description:
      - After the generation, also send one 1-token C(POST /v1/chat/completions) (C(max_tokens=1)), the path
        OpenAI clients call, where SGLang renders the model's chat template; a 4xx/5xx there gives
        RV(reason=unhealthy) with RV(category=chat_template) and the server's message quoted.
      - Leave it off for a completion-only endpoint or a model without a chat template; roles/server turns it on
        when C(server_ready_chat_probe) is true and llmserve.sglang.model_verify found a template.
    type: bool
    default: false
  progress_interval:
    description: Used by the action plugin - the module returns its state after at most this many seconds (or on a
      stage change) so progress can be printed. Leave unset to wait to the end in one call.
    type: float
  resume_state:
    description: Internal - state handed back by a previous call (the action plugin sets it).
    type: dict
notes:
  - Check mode validates the options and returns without waiting.
  - Needs read access to C(/proc/<pid>) of the server for CPU/IO activity; without it, stall detection relies on the log.
  - Per-poll cost is flat in the log size; a log already larger than 1 MiB when the wait begins is read from its last MiB.
attributes:
  check_mode:
    support: full
    description: Validates the options and returns at once (changed=false, elapsed 0) without waiting or probing; in check mode nothing was started to wait for.
  diff_mode:
    support: none
    description: Changes nothing on the host, so there is no diff.
"""

EXAMPLES = r"""
- name: Wait for the server started by the sglang unit
  llmserve.sglang.server_ready:
    unit: sglang
    log_path: /var/log/sglang/server.log
    stage_timeouts:
      dist_init: 300
    timeout: 1800

- name: Wait on a worker node of a two-node deployment
  llmserve.sglang.server_ready:
    node_rank: 1
    pid_file: /run/sglang.pid
    log_path: /var/log/sglang/server.log

- name: Site-specific failure signature
  llmserve.sglang.server_ready:
    log_path: /var/log/sglang/server.log
    pid_file: /run/sglang.pid
    extra_patterns:
      - regex: "Lustre.*EIO"
        category: model_not_found
        remedy: remount /models
"""

RETURN = r"""
ready:
  description: Whether the server came up (true) or the wait failed (false). Kept when the task is registered with
    C(failed_when=false) (roles/server does so, and reports the failure once in its own block), which sets C(failed)
    to false.
  returned: always
  type: bool
elapsed:
  description: Seconds since the wait began (one monotonic clock across resumed calls).
  returned: always
  type: float
stage:
  description: Last start-up stage reached (starting, init, dist_init, load_weights, kv_cache, cuda_graph, http,
    warmup, ready).
  returned: always
  type: str
stages:
  description: Each stage reached with the second (since the wait began) it began.
  returned: always
  type: list
  elements: dict
  sample: [{"stage": "load_weights", "began": 12.4}]
health_path:
  description: The readiness endpoint asked (C(/ready) or C(/health), see O(health_path)); null when it was never
    asked.
  returned: always
  type: str
health_status:
  description: Last HTTP status of the readiness endpoint (null when never answered; when the C(fired up) line was
    seen the module proves readiness with one generation instead of another call, see RV(ready_by)).
  returned: always
  type: int
log_tail:
  description: Last O(tail_lines) log lines, progress bars collapsed to their latest state.
  returned: always
  type: list
  elements: str
ready_by:
  description: What decided readiness - C(log+generation) (C(fired up) line, then one 1-token generation),
    C(health+generation) or C(health) (O(verify_generation=false)); C(+chat) when a chat completion proved it too
    (O(chat_probe)).
  returned: success on node rank 0
  type: str
server:
  description: What C(/v1/models) and C(/server_info) say (served_model, models, version, model_path, ...).
  returned: success on node rank 0
  type: dict
reason:
  description:
    - C(crashed) (the process or unit is gone - also when it was already gone as the wait began -, or a fatal line
      was logged while the parent lingers), C(stalled), C(timeout), C(unhealthy), C(not_running) (a pid that is not
      running and no O(log_path) to explain it), C(bad_input), or C(error) (server_ready itself broke - C(msg) says
      what and where; it says nothing about the server).
  returned: failure
  type: str
category:
  description:
    - Classified cause, one of the list below (module_utils/sglang/signatures.py C(CATEGORY_DOCS); a unit test keeps
      the two equal).
    - C(oom_weights) - GPU out of memory before or while loading the weights.
    - C(oom_kv) - no GPU memory left for the KV cache / request pools.
    - C(oom_cuda_graph) - GPU out of memory while capturing CUDA graphs.
    - C(oom_runtime) - GPU out of memory in the warm-up or first requests (activations).
    - C(host_oom) - host RAM exhausted, a process SIGKILLed by the OOM killer or malloc failed.
    - C(shm_exhausted) - shared memory (/dev/shm) too small for NCCL or torch IPC (a container's 64 MB default).
    - C(driver_mismatch) - NVIDIA driver older than the CUDA runtime, or no driver.
    - C(gpu_hardware) - GPU hardware fault or GPU unavailable (ECC, Xid, fell off the bus, busy).
    - C(cuda_error) - a CUDA kernel faulted (illegal memory access, device-side assert).
    - C(arch_unsupported) - kernels not built for this GPU architecture.
    - C(jit_build) - a kernel JIT build failed (ninja, nvcc, gcc, missing headers).
    - C(import_error) - a Python package or shared library is missing or mismatched.
    - C(nccl) - a communication set-up or collective failed (NCCL, Gloo, torch.distributed, DeepEP or NVSHMEM).
    - C(transfer_engine) - the KV transfer engine failed (Mooncake, NIXL or UCX over RDMA - PD disaggregation, the
      HiCache store) or its peer session is gone.
    - C(port_in_use) - a port the server binds (HTTP, dist-init, internal) is taken.
    - C(bad_args) - launch arguments rejected (argparse or ServerArgs checks).
    - C(model_not_found) - model path or Hub repo id does not exist or lacks files.
    - C(model_access) - Hub refused access (gated, 401, no token, offline, no network).
    - C(model_unsupported) - architecture not supported by this SGLang / transformers.
    - C(tokenizer) - the tokenizer files are missing, unreadable or corrupt (the model itself was found).
    - C(chat_template) - ready, but a 1-token chat completion fails (the model's chat template does not render).
    - C(processor) - the multimodal model's processor is missing or did not register (its import failed, or this
      SGLang lacks it).
    - C(checkpoint_corrupt) - a weight file is missing, truncated or corrupt (the checkpoint is not whole).
    - C(draft_mismatch) - the draft model's weights do not fit the target (a draft trained for another model).
    - C(weights_sigbus) - a Bus error (SIGBUS) while the weights were read through mmap (a truncated or changing file,
      failing or network storage).
    - C(warmup_failure) - the server's own warm-up request failed after the model loaded.
    - C(watchdog_hang) - a start-up step hung until a watchdog (SGLang's or NCCL's) ended it, the stage says which.
    - C(scheduler_exception) - a scheduler process raised, the cause is in the traceback.
    - C(unknown) - nothing recognised, key_line quotes the most telling line.
  returned: failure
  type: str
key_line:
  description: The log line that shows the cause (for C(unknown), the most telling error-like line, or null). Never
    a warning or a logged fallback (C(Ignore import error when loading ...), C(Proceeding without ...)). For C(nccl),
    the first error line that names the failing peer (its address or rank) when the log has one.
  returned: failure
  type: str
cause_line:
  description: For an C(nccl) verdict whose C(key_line) is the line naming the failing peer, the NCCL error line
    itself.
  returned: failure, when the key line is not the error line
  type: str
log_warnings:
  description:
    - Lines the server survived before the verdict, counted (C(count)) with the first five (C(lines)) - a transport's
      logged error (C(E0326 ... rdma_context.cpp:265] Failed to register memory)), a per-request error
      (C(KVTransferError)), a retried step. They never end the wait while the server makes progress; they are reported
      beside the verdict, ready or not.
  returned: always when the wait ended
  type: dict
  sample: {"count": 12, "lines": ["E0325 09:33:41.563210  8274 rdma_context.cpp:319] Context is not active: mlx5_9"]}
remedy:
  description: What to try.
  returned: failure
  type: str
process:
  description:
    - pid, alive, exit_status, cpu_seconds and io_bytes of the process tree.
    - exit_status is known for systemd units (C(ExecMainStatus), negative for a signal), for roles/server's
      supervisor (C(<pid_file>.status)) and for the module's own children; null otherwise.
  returned: when a process or unit is watched
  type: dict
gpu:
  description: Per-GPU memory/utilisation and GPU processes from nvidia-smi (null without nvidia-smi).
  returned: failure
  type: dict
journal_tail:
  description: Last journal lines of O(unit).
  returned: failure with O(unit)
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import endpoint_spec
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import DEFAULTS
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput, Waiter, error_result


def main():
    module = AnsibleModule(
        argument_spec=endpoint_spec(
            health_path=dict(type="str"),
            sglang_version=dict(type="str"),
            validate_certs=dict(type="bool", default=DEFAULTS["validate_certs"]),
            log_path=dict(type="path"),
            unit=dict(type="str"),
            pid=dict(type="int"),
            pid_file=dict(type="path"),
            node_rank=dict(type="int", default=DEFAULTS["node_rank"]),
            timeout=dict(type="float", default=DEFAULTS["timeout"]),
            stall_timeout=dict(type="float", default=DEFAULTS["stall_timeout"]),
            stage_timeouts=dict(type="dict", default=DEFAULTS["stage_timeouts"]),
            interval=dict(type="float", default=DEFAULTS["interval"]),
            tail_lines=dict(type="int", default=DEFAULTS["tail_lines"]),
            extra_patterns=dict(type="list", elements="dict", default=DEFAULTS["extra_patterns"], options=dict(
                regex=dict(type="str", required=True),
                category=dict(type="str", default="unknown"),
                remedy=dict(type="str"),
                strong=dict(type="bool", default=True),
            )),
            host=dict(type="dict", options=dict(
                tp_size=dict(type="int"), pp_size=dict(type="int"), nnodes=dict(type="int"),
                gpu_count=dict(type="int"), compute_caps=dict(type="list", elements="str"),
                gpu_names=dict(type="list", elements="str"), pcie_only=dict(type="bool"),
                all_nvlink=dict(type="bool"),
            )),
            verify_generation=dict(type="bool", default=DEFAULTS["verify_generation"]),
            chat_probe=dict(type="bool", default=DEFAULTS["chat_probe"]),
            progress_interval=dict(type="float"),
            resume_state=dict(type="dict", no_log=False),
        ),
        mutually_exclusive=[("unit", "pid", "pid_file")],
        supports_check_mode=True,
    )
    params = dict((k, v) for k, v in module.params.items() if v is not None)
    state = params.pop("resume_state", None)
    budget = params.pop("progress_interval", None)
    try:
        waiter = Waiter(params, state=state, run=module_runner(module, timeout=20, environ_update={"LC_ALL": "C"}))
    except BadInput as e:
        reason = "not_running" if "not running" in str(e) else "bad_input"
        module.fail_json(msg=str(e), reason=reason, category="unknown", elapsed=0)
    except Exception as e:  # noqa: BLE001 - the waiter's own failure is a verdict too
        result = error_result(e, params)
        result.pop("done")
        module.fail_json(changed=False, **result)
    if module.check_mode:
        module.exit_json(changed=False, msg="check mode: options valid, not waiting", elapsed=0)
    result = waiter.run(budget=budget, return_on_stage_change=budget is not None)
    done = result.pop("done")
    result["changed"] = False
    if not done:
        # Private: the action plugin resumes from here.
        result["_server_ready_state"] = result.pop("state")
        module.exit_json(_server_ready_pending=True, **result)
    if result.pop("failed", False):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
