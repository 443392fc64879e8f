# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filter (roles/cuda's plumbing; may change without notice): the reboot decision
(module_utils/install/cuda_reboot.py) from what the role's tasks registered."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.install.cuda_reboot import decide, serving_units


def _cuda_reboot_decision(gpu, policy, branch, flavor, module_changes, marker_exists, unit_results, port_results,
                          reboot_if_serving):
    """``unit_results``/``port_results``: the registered loops of systemctl list-units and wait_for (a port whose
    wait_for has no ``msg`` answered)."""
    serving = serving_units([r.get("stdout") for r in unit_results or [] if isinstance(r, dict)])
    serving += ["port %s" % r["item"] for r in port_results or []
                if isinstance(r, dict) and "item" in r and "msg" not in r and not r.get("skipped")]
    try:
        return decide(policy, gpu, branch, flavor, module_changes, bool(marker_exists), serving, bool(reboot_if_serving))
    except ValueError as exc:
        raise AnsibleFilterError("_cuda_reboot_decision: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"_cuda_reboot_decision": _cuda_reboot_decision}
