#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: bench_report
short_description: Write the benchmark report - crossover, threshold, the setting to apply - on the controller
version_added: "0.1.0"
description:
  - An action plugin (runs on the controller). Writes O(run_dir)/raw.json from O(raw) when given, then
    C(report.md), C(summary.json) (issue 34's shape - sglang, gpu, accept_length, threshold, applied, confirmed,
    points of batch, running, baseline, eagle3, adaptive, applied), C(analysis.json) (everything the report decided)
    and, when matplotlib is importable on the controller, PNG plots next to it (decode throughput on the running-batch
    axis).
  - The three curves (baseline, static EAGLE-3, the adaptive setting) per batch size with the server's running batch
    beside the client's ceiling; a point whose batch did not fill decides nothing. The recommendation is the setting
    that loses the least of the best measured throughput over the load (meta C(load_profile) or C(load_samples),
    else every point alike), a loss within 1 point of the least going to the simpler setting (baseline, static
    EAGLE-3, adaptive), with its worst point and what the others would lose; the adaptive setting takes part only
    with the step-0 patch recorded (meta C(step0_patched)) (C(plugins/plugin_utils/_bench_curves.py)).
  - Decode throughput per concurrency (concurrency x median per-request decode rate), mean and standard error over
    the repeats; where each speculative mode stops beating the baseline, interpolated, with a +-1 SE band and the
    crossover of each repeat; the threshold (speculate while at most that many requests run) turned into the
    installed SGLang's C(--speculative-adaptive-config) (0.5.14+), padded to the server's captured CUDA-graph sizes,
    or a refusal with the fix; the confirming run (mode C(applied)) against the best measured curve at every point.
  - Refuses to recommend anything from a speculative curve whose accept length is below the floor (the draft does
    not fit its target).
  - The run folder is opened once, never through a link, and held to the collection's one path rule (nothing inside
    C(/proc), C(/sys), C(/dev) or C(/run)); every file is written inside it without following a link (a temporary
    file renamed over the name; a link or FIFO planted at C(report.md) or any other name is refused by name), and
    C(raw.json) is read as a regular file only, within a size and nesting cap.
author:
  - llmserve maintainers (@llmserve)
options:
  run_dir:
    description: Run folder on the controller; raw.json is read from (or written to) it.
    type: path
    required: true
  raw:
    description: C({meta, results}) to write as raw.json first (meta as in playbooks/benchmark.yml).
    type: dict
  tolerance:
    description: Relative tolerance of the crossover against the rate model (O(check_model)).
    type: float
    default: 0.15
  plots:
    description: Draw the PNG plots (skipped, and said so in the report, without matplotlib).
    type: bool
    default: true
  check_model:
    description: Fail when a speculative mode's crossover or threshold does not match the rate model in meta.
    type: bool
    default: false
  check_confirm:
    description: Fail when an applied adaptive setting is not confirmed (within 10 % of the best curve at every point),
      or the confirming run does not reproduce the curve its setting was measured with.
    type: bool
    default: false
  existing:
    description: Read the report an earlier run wrote (its C(analysis.json), returned as RV(summary)) and write nothing,
      in check mode too. The file is read as a regular file only (no link, no FIFO), within a size cap.
    type: bool
    default: false
attributes:
  action:
    support: full
    description: Runs on the controller; nothing reaches the managed host.
  check_mode:
    support: partial
    description: Writes nothing in check mode.
  diff_mode:
    support: none
    description: Writes new files in the run folder.
  platform:
    support: full
    platforms: posix
    description: The controller.
"""

EXAMPLES = r"""
- name: Write the report of a run
  llmserve.sglang.bench_report:
    run_dir: /srv/bench/20261203T210000Z
    check_confirm: true
  register: report

- name: Say where speculation stops paying
  ansible.builtin.debug:
    msg: "{{ report.lines }}"
"""

RETURN = r"""
summary:
  description: What analysis.json holds (analysis per speculative mode, recommendation, confirmation, client_limited,
    and C(summary), the content of summary.json).
  returned: success
  type: dict
lines:
  description: One line per finding (crossover per mode, client-limited points, recommendation, confirmation).
  returned: when the report is written (not with O(existing))
  type: list
  elements: str
report:
  description: Path of report.md.
  returned: success
  type: str
rc:
  description: 3 when O(check_model) failed, 4 when O(check_confirm) failed.
  returned: failure of a check
  type: int
"""
