#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_plan
short_description: Decide what an SGLang instance needs - argv, files, fingerprint, action - on the controller
version_added: "0.1.0"
description:
  - The plan step of roles/server. An action plugin; it runs on the controller and makes no round trip to the host.
  - Reads every C(server_*) setting of roles/server from the task's variables and what llmserve.sglang.server_info
    read on the host (O(info)), and returns the plan of C(plugins/plugin_utils/_server_plan.py) - deterministic,
    covered by unit tests.
  - Fails, before anything running is touched, listing every refused setting with its fix (types and ranges,
    names, paths, ports, tensor-parallel size, environment variable names, the options the installed SGLang cannot
    run).
author:
  - llmserve maintainers (@llmserve)
options:
  info:
    description: The registered result of llmserve.sglang.server_info on this host.
    type: dict
    required: true
attributes:
  action:
    support: full
    description: Runs on the controller.
  check_mode:
    support: full
    description: Plans the same in check mode (a service user that does not exist yet is planned as root).
  diff_mode:
    support: none
    description: Changes nothing; llmserve.sglang.server_instance shows the diff of what it writes.
seealso:
  - module: llmserve.sglang.server_info
  - module: llmserve.sglang.server_instance
"""

EXAMPLES = r"""
- name: Read the host and the instance
  llmserve.sglang.server_info:
    instance: "{{ server_instance }}"
    python: "{{ server_python }}"
  register: __server_info

- name: Plan the instance
  llmserve.sglang.server_plan:
    info: "{{ __server_info }}"
  register: __server_own_plan
"""

RETURN = r"""
plan:
  description: The decision.
  returned: always
  type: dict
  contains:
    refusals:
      description: Every refused setting, with its fix (the task fails when there is one).
      type: list
      elements: str
    action:
      description: C(none), C(start), C(restart) or C(stop); C(why) says why.
      type: str
      sample: restart
    argv:
      description: Arguments after C(python -m sglang.launch_server).
      type: list
      elements: str
    env:
      description: Environment of the server (written to server.env).
      type: dict
    files:
      description: Every file of the instance - C(path), C(content), C(mode), C(owner), C(group), C(secret), C(sha256).
      type: list
      elements: dict
    write:
      description: Paths whose text differs on the host.
      type: list
      elements: str
    fingerprint:
      description: Hash of what the server runs with (unit or launch spec, environment, API key file, version, patches).
      type: str
    changed:
      description: Whether the fingerprint differs from the one recorded when the running server was started.
      type: bool
    manager:
      description: C(systemd) or C(pidfile).
      type: str
    paths:
      description: The instance's paths (unit, config, log, pid file, ...).
      type: dict
    preflight:
      description: Arguments of llmserve.sglang.server_preflight.
      type: dict
    ready:
      description: Arguments of llmserve.sglang.server_ready.
      type: dict
    watch:
      description: Multi-node - the peer watch of this node, or null.
      type: dict
    view:
      description:
        - The planned view of the instance (plugin_utils/_server_view.build). The fact C(server_view) stays what runs
          (llmserve.sglang.server_info's) until roles/server has started this plan.
      type: dict
    service:
      description:
        - What the tasks pass on - C(user), C(group), C(home), C(adopt_dirs), C(stop_timeout), C(stop_grace_unready),
          C(log_keep), C(on_failure), C(lock_stale_after), C(preflight), C(wait) - checked, so that no task reads a
          raw setting.
      type: dict
    spec_check:
      description: Arguments of llmserve.sglang.spec_check - C(run), C(mode), C(requests), C(max_new_tokens), C(request_timeout).
      type: dict
    warnings:
      description: Warnings of the rendering (e.g. options SGLang changes by itself).
      type: list
      elements: str
"""
