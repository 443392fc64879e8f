# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server's tasks carry out the plan: after server_plan a task reads ``__server_plan.X`` (checked values), never
a raw ``server_<setting>`` re-cast with ``| int`` or ``| bool``. The scan fails on any raw read of a setting
(plugin_utils/_server_settings.SETTINGS) in roles/server/tasks/ that is not one of today's exceptions below - a list
that only shrinks: an exception no longer read fails too, so that it is taken off."""
import os
import re
import sys

import rolescan
import testpaths
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_settings import SETTINGS

sys.path.insert(0, os.path.join(testpaths.REPO, "tests", "unit", "plugins", "plugin_utils"))
from test_server_plan import defaults, host  # noqa: E402  pylint: disable=import-error,wrong-import-position

EXCEPTIONS = {
    # the key the endpoint modules send (module_defaults); neither the plan nor server_info publishes it
    "tasks/deploy.yml": {"api_key"},
    "tasks/status.yml": {"api_key"},
}


def raw_reads(text):
    return rolescan.raw_reads(text, "server", SETTINGS)


def test_tasks_read_the_plan_not_raw_settings():
    assert rolescan.scan("server", ("tasks",), SETTINGS) == EXCEPTIONS, "read __server_plan.X (add it to the plan) or, when one went, shrink EXCEPTIONS"


def test_the_scan_can_fail():
    assert raw_reads('stop_timeout: "{{ server_stop_timeout }}"') == {"stop_timeout"}
    assert raw_reads("when: server_wait | bool") == {"wait"}
    assert raw_reads('stop_timeout: "{{ __server_plan.service.stop_timeout }}"') == set()
    assert raw_reads("llmserve.sglang.server_instance:\n  url: \"{{ server_view.url }}\"") == set()
    assert raw_reads("# server_wait: a comment") == set()


def _walk(plan, path):
    """The keys of ``path`` (a.b.c) that a plan lacks, walking while the values are mappings."""
    value = plan
    for key in path.split("."):
        if not isinstance(value, dict):
            return []
        if key not in value:
            return [path]
        value = value[key]
    return []


def test_every_plan_value_a_task_reads_is_in_the_plan():
    # the contract between the plan and its tasks: a key a task reads that plan() does not return fails here
    started = sp.plan(sp.validate(dict(defaults(), args={})), host())
    stopped = sp.plan(sp.validate(dict(defaults(), args={}, state="stopped")), host())
    assert not started["refusals"] and not stopped["refusals"]
    read = set()
    for _rel, text in rolescan.texts("server", ("tasks",)):
        read.update(m.group(1) for m in re.finditer(r"__server_plan\.([a-z_.]+[a-z_])", text))
    assert {"service.stop_timeout", "spec_check.mode", "view.spec.on"} <= read
    assert sorted(p for p in read if _walk(started, p)) == []
    # a stop runs the lock and the act task: what they read is in a stopped instance's plan too
    assert [p for p in ("service.lock_stale_after", "service.stop_timeout", "service.stop_grace_unready",
                        "service.log_keep", "service.wait", "manager", "paths", "action", "watch") if _walk(stopped, p)] == []
    assert _walk(started, "service.no_such_value") == ["service.no_such_value"]
