# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters: sglang_argv (settings -> SGLang argv), sglang_flags ({flag: value} -> argv) and sglang_exec_join
(argv -> systemd ExecStart words)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import flags_argv, render, shell_join


def sglang_argv(settings, version=None, gpu=None, patches=None, strict=True, env=None,
                adaptive_config_path=None, api_key_config_path=None):
    if not version:
        raise AnsibleFilterError("sglang_argv: version is required (the installed SGLang version, e.g. 0.5.23)")
    if not isinstance(settings, dict):
        raise AnsibleFilterError("sglang_argv: input must be the settings mapping (model_path, tp, ...)")
    # the spec's one check (the plan's): the renderer trusts what it is given
    spec, found = speculative.problems(settings.get("speculative"))
    result = render(dict(settings, speculative=spec), str(version), gpu=gpu, patches=patches or (), env=env,
                    adaptive_config_path=adaptive_config_path, api_key_config_path=api_key_config_path)
    result["errors"] = ["speculative=%s %s: %s" % (json.dumps(shown, sort_keys=True, default=str), problem, fix)
                        for shown, problem, fix in found] + result["errors"]
    if result["errors"] and strict:
        raise AnsibleFilterError(
            "sglang_argv: %d problem(s) with the server settings for SGLang %s:\n- %s"
            % (len(result["errors"]), version, "\n- ".join(result["errors"]))
        )
    return result


def sglang_exec_join(argv):
    if not isinstance(argv, (list, tuple)):
        raise AnsibleFilterError("sglang_exec_join: input must be a list of arguments")
    return shell_join(argv)


def sglang_flags(flags):
    if not isinstance(flags, dict):
        raise AnsibleFilterError("sglang_flags: input must be a mapping of flag names to values")
    try:
        return flags_argv(flags)
    except ValueError as exc:
        raise AnsibleFilterError("sglang_flags: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"sglang_argv": sglang_argv, "sglang_exec_join": sglang_exec_join, "sglang_flags": sglang_flags}
