# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters (roles/sglang's plumbing; may change without notice): the install decisions taken before
sglang's requirements are known (module_utils/install/plan.py); the rest comes from the sglang_install_plan module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.install.plan import request, wheels_dir

REQUIRED = ("version", "venv", "venv_link", "default_cuda_home")


def _check(settings):
    if not isinstance(settings, dict) or any(not settings.get(k) for k in REQUIRED):
        raise AnsibleFilterError("_sglang_install_request: settings must be roles/sglang's settings mapping with %s"
                                 % ", ".join(REQUIRED))


def _sglang_wheels_dir(settings):
    _check(settings)
    return wheels_dir(settings)


def _sglang_install_request(settings, python, old_marker=None, wheel_names=None, compute_caps=None):
    """``old_marker``: the slurped marker's decoded text (or its mapping), '' / None without one."""
    _check(settings)
    old = old_marker
    if isinstance(old_marker, str):
        try:
            old = json.loads(old_marker) if old_marker.strip() else None
        except ValueError:
            old = None  # an unreadable marker is no verified install
    return request(settings, python, old, wheel_names or [], compute_caps or [])


class FilterModule(object):
    def filters(self):
        return {"_sglang_install_request": _sglang_install_request, "_sglang_wheels_dir": _sglang_wheels_dir}
