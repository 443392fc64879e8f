# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The instance a roles/server module acts on: what llmserve.sglang.server_plan returns as plan.paths.
    DOCUMENTATION = r"""
options:
  manager:
    description:
      - How the instance runs. C(systemd) is the unit C(sglang-<instance>.service); C(pidfile) is the detached
        supervisor C(/usr/local/lib/llmserve-sglang/sglang_supervise.py) with a pid file, for hosts without systemd.
        C(auto) is C(systemd) where systemd runs, else C(pidfile) (module_utils/server/layout.INSTANCE_SPEC holds the same
        choices in llmserve.sglang.server_info and llmserve.sglang.server_drift).
    type: str
    choices: [auto, systemd, pidfile]
    default: auto
  paths:
    description:
      - The instance's paths, as C(plan.paths) of llmserve.sglang.server_plan (C(unit_name), C(unit), C(instance_dir),
        C(env), C(api_key), C(argv), C(fingerprint), C(launch_spec), C(adaptive), C(previous_dir), C(log), C(run_dir),
        C(pid_file), C(peer_marker), C(peer_done), C(helper_dir), C(supervisor), C(peer_watch)).
    type: dict
    required: true
"""
