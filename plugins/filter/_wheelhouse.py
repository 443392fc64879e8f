# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters for playbooks/sglang_wheelhouse.yml (plumbing; they may change without notice). The logic is in
module_utils/install/wheelhouse.py."""
from __future__ import absolute_import, division, print_function

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.install.wheelhouse import download_pins, pip_target_args

__metaclass__ = type


def _pip_target_args(target):
    try:
        return pip_target_args(target)
    except ValueError as e:
        raise AnsibleFilterError("_pip_target_args: %s" % e)


def _wheelhouse_pins(report, provided=None):
    pins, dropped = download_pins(report, provided or [])
    return {"pins": pins, "dropped": dropped}


class FilterModule(object):
    def filters(self):
        return {"_pip_target_args": _pip_target_args, "_wheelhouse_pins": _wheelhouse_pins}
