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
  - Turns a mode (C(baseline), C(eagle3), C(eagle3_steps1), C(eagle3_steps2), C(eagle3_adaptive), C(eagle3_threshold),
    C(applied), C(allreduce_nccl), C(allreduce_pcie_ipc)) into the C(server_speculative) and C(server_env) roles/server launches it with
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
    choices: [baseline, eagle3, eagle3_steps1, eagle3_steps2, eagle3_adaptive, eagle3_threshold, applied, allreduce_nccl,
      allreduce_pcie_ipc]
  speculative:
    description: The speculative settings the modes start from (C(benchmark_speculative)); default the instance's.
    type: dict
  applied:
    description:
      - The setting C(benchmark_apply) chose (required by C(applied), the confirming run), or the adaptive setting
        C(eagle3_threshold) measures; without it C(eagle3_threshold) takes the adaptive setting of the crossover of
        O(results) (RV(candidate)), or skips (RV(skip)) when there is none.
    type: dict
  results:
    description: The results measured so far (the baseline and EAGLE-3 curves), for C(eagle3_threshold).
    type: list
    elements: dict
  meta:
    description: What the report needs of the run for the adaptive setting (C(sglang_version), C(speculative),
      C(cuda_graph_bs), C(cuda_graph_max_bs), C(disable_cuda_graph)).
    type: dict
  max_batch:
    description:
      - The largest batch size measured (1 to 4096); every mode then gets C(--max-running-requests) of at least that (and, unless
        set, C(--cuda-graph-max-bs)) so the batch can fill, and C(--enable-metrics) (the running batch is sampled there).
    type: int
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
args:
  description: The C(server_args) of the mode (with O(max_batch)).
  returned: success
  type: dict
skip:
  description: True when there is nothing to measure (C(eagle3_threshold) without an adaptive setting).
  returned: success
  type: bool
why:
  description: Why the mode is skipped.
  returned: when skipped
  type: str
candidate:
  description: The adaptive setting of the measured crossover (C(eagle3_threshold)), as the report recommends it.
  returned: success
  type: dict
mode:
  description: The mode.
  returned: success
  type: str
"""
