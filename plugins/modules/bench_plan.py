#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: bench_plan
short_description: What a benchmark mode launches through roles/server - its speculative settings and environment
version_added: "0.1.0"
description:
  - A step of playbooks/benchmark.yml. An action plugin; it runs on the controller and makes no round trip to the host.
  - Turns a mode (C(baseline), C(eagle3), C(eagle3_adaptive), C(eagle3_threshold), C(allreduce_nccl),
    C(allreduce_pcie_ipc)) into the C(server_speculative) and C(server_env) roles/server launches it with
    (C(plugins/module_utils/bench/modes.py), the one home of what a mode means; llmserve.sglang.bench_serving checks
    the server runs it).
  - C(server_env) and, without O(speculative), C(server_speculative) are the instance's settings with roles/server's
    defaults (C(plugins/plugin_utils/_server_view.py)).
author:
  - llmserve maintainers (@llmserve)
options:
  mode:
    description: The benchmark mode.
    type: str
    required: true
    choices: [baseline, eagle3, eagle3_adaptive, eagle3_threshold, allreduce_nccl, allreduce_pcie_ipc]
  speculative:
    description: The speculative settings the modes start from (C(benchmark_speculative)); default the instance's.
    type: dict
  applied:
    description: The setting C(benchmark_apply) chose; required by C(eagle3_threshold).
    type: dict
attributes:
  action:
    support: full
    description: Runs on the controller.
  check_mode:
    support: full
    description: Decides the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
seealso:
  - module: llmserve.sglang.bench_serving
"""

EXAMPLES = r"""
- name: Work out what the mode launches
  llmserve.sglang.bench_plan:
    mode: eagle3_adaptive
  register: __bench_now

- name: Launch it through roles/server
  ansible.builtin.include_role:
    name: llmserve.sglang.server
  vars:
    server_speculative: "{{ __bench_now.speculative }}"
    server_env: "{{ __bench_now.env }}"
"""

RETURN = r"""
speculative:
  description: The C(server_speculative) of the mode (C(algorithm) C('') for the baseline).
  returned: success
  type: dict
  sample: {"algorithm": "EAGLE3", "draft_model_path": "/models/d", "adaptive": true, "eagle_topk": 1}
env:
  description: The C(server_env) of the mode (the all-reduce modes set C(SGLANG_ENABLE_PCIE_IPC_ALLREDUCE)).
  returned: success
  type: dict
mode:
  description: The mode.
  returned: success
  type: str
"""
