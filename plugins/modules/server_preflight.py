#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_preflight
short_description: Check an SGLang server command line on the host before the running server is stopped
version_added: "0.1.0"
description:
  - Parses O(argv) with the installed SGLang's own argument parser and reports its argparse error verbatim.
  - Checks that the model and draft checkpoints exist and look like checkpoints, that O(tp) fits the visible GPUs
    and O(nnodes), that the port is free or held by this server, and that no foreign process holds GPU memory.
  - Checks the other ports SGLang binds at a fixed number (C(--nccl-port); with data-parallel attention the
    rendezvous window at C(--port) + 233 and the handshake at C(--port) + 13, per version) - free or held by this
    server, and outside C(net.ipv4.ip_local_port_range) unless listed in C(net.ipv4.ip_local_reserved_ports). A
    port inside the ephemeral range is refused naming both fixes (a lower port, or the exact
    C(sysctl -w net.ipv4.ip_local_reserved_ports=...)); the host's sysctls are never changed. Without
    C(--nccl-port), a warning where the SGLang version picks that port among the ephemeral ones (sglang#37215).
  - With O(argv) and a local O(model_path), in the same interpreter as the parse (issue 45) - C(config.json) read with
    the collection's untrusted-file reader - a C(torch_dtype)/C(dtype) the installed torch lacks (C(auto) and its
    dtypes pass), and a C(--context-length) above what the installed SGLang derives from C(config.json) (its own
    C(get_context_length)) unless C(SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN) is set in O(env), are the failed
    check C(model_limits), naming both numbers and both fixes. What cannot be judged (no torch, a multimodal
    config) is a warning.
  - Runs every check and fails once, listing each failure with its fix. Changes nothing on the host.
author:
  - llmserve maintainers (@llmserve)
options:
  python:
    description: Python of the SGLang virtualenv.
    type: path
    required: true
  argv:
    description: Arguments after C(python -m sglang.launch_server), as roles/server's plan renders them (P(llmserve.sglang.server_plan#module)).
    type: list
    elements: str
  model_path:
    description: Checkpoint directory (config.json plus *.safetensors, *.bin or an index), or a hub id C(org/name) when not offline.
    type: str
    required: true
  draft_model_path:
    description: EAGLE-3 draft checkpoint, checked like O(model_path).
    type: str
  tp:
    description: Total tensor-parallel size across all nodes.
    type: int
    default: 1
  nnodes:
    description: Number of nodes.
    type: int
    default: 1
  gpu_count:
    description: GPUs visible to the server on this node; default from C(CUDA_VISIBLE_DEVICES) in O(env), else C(nvidia-smi -L).
    type: int
  host:
    description: Address the server binds.
    type: str
    default: 127.0.0.1
  port:
    description: HTTP port of the server.
    type: int
    default: 30000
  owner_unit:
    description: systemd unit of this server; the port and GPUs may be held by processes in its cgroup.
    type: str
  owner_pid:
    description: PID of this server; it and its descendants may hold the port and GPUs.
    type: int
  env:
    description: Environment the server will run with (C(CUDA_VISIBLE_DEVICES), C(HF_HUB_OFFLINE), ...).
    type: dict
    default: {}
extends_documentation_fragment:
  - llmserve.sglang.attributes.read_only
notes:
  - Run it before stopping the running server, so a bad change never takes a working server down.
"""

EXAMPLES = r"""
- name: Preflight the new command line
  llmserve.sglang.server_preflight:
    python: /opt/sglang/venv/bin/python
    argv: "{{ __server_cmd.argv }}"
    model_path: /models/kimi-k2.5-int4
    draft_model_path: /models/kimi-k2.5-eagle3
    tp: 8
    port: 30000
    host: 0.0.0.0
    owner_unit: sglang-server
    env:
      CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"
"""

RETURN = r"""
checks:
  description: Every check run, in order.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "argv", "ok": true, "msg": "SGLang 0.5.23 accepts the argv"}]
version:
  description: SGLang version installed in the virtualenv (null when it could not be imported).
  returned: always
  type: str
  sample: 0.5.23
failures:
  description: Messages of the failed checks.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.server.preflight import run_all
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import DEFAULT_PORT


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            argv=dict(type="list", elements="str"),
            model_path=dict(type="str", required=True),
            draft_model_path=dict(type="str"),
            tp=dict(type="int", default=1),
            nnodes=dict(type="int", default=1),
            gpu_count=dict(type="int"),
            host=dict(type="str", default="127.0.0.1"),
            port=dict(type="int", default=DEFAULT_PORT),
            owner_unit=dict(type="str"),
            owner_pid=dict(type="int"),
            env=dict(type="dict", default={}),
        ),
        mutually_exclusive=[["owner_unit", "owner_pid"]],
        supports_check_mode=True,
    )
    checks, version, warnings = run_all(module.params, module_runner(module))
    for w in warnings:
        module.warn(w)
    failures = [c["msg"] for c in checks if not c["ok"]]
    result = dict(changed=False, checks=checks, version=version, failures=failures)
    if failures:
        module.fail_json(msg="server preflight failed (%d): %s" % (len(failures), "; ".join(failures)), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
