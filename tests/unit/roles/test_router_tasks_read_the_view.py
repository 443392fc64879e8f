# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's tasks carry out the plan: after router_plan a task reads what the gateway runs from its view
(``__router_plan.view.X``), never a raw ``router_<setting>`` (plugin_utils/_router_settings.DEFAULTS). The drain and
restore entry points run without a plan and read their own options; roles/router's vars only what the view never
carries (the pip environment, the key's file contents, the URLs with their credentials). The scan fails on any
other raw read, and on an exception no longer read (so that it is taken off)."""
import re

import rolescan
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view as rv
from ansible_collections.llmserve.sglang.plugins.plugin_utils._router_settings import DEFAULTS

FOLDERS = ("tasks", "vars")
EXCEPTIONS = {
    # the entry points without a plan: the gateway their options name
    "tasks/drain.yml": {"api_key", "drain_worker_url", "drain_metrics", "drain_timeout", "gateway_host"},
    "tasks/restore.yml": {"api_key", "drain_worker_url", "ready_timeout", "ready_interval", "gateway_host"},
    # drain/restore's URL; pip's environment (a proxy's credentials stay out of the plan's result); the URLs with
    # their credentials for the 0600 environment file (the view masks them)
    "vars/main.yml": {"host", "port", "proxy_env", "ca_bundle", "pip_index_url", "pip_extra_index_url",
                      "pip_trusted_hosts", "worker_urls"},
}


def raw_reads(text):
    return rolescan.raw_reads(text, "router", DEFAULTS)


def test_tasks_read_the_view_not_raw_settings():
    assert rolescan.scan("router", FOLDERS, DEFAULTS) == EXCEPTIONS, "read __router_plan.view.X (add it to _router_view) or, when one went, shrink " \
        "EXCEPTIONS"


def test_what_the_tasks_read_of_the_view_is_in_it():
    view = rv.build({}, {"urls": ["http://a:1"], "expected": 1, "urls_in_env": False}, "/ready")
    read = set()
    for _rel, text in rolescan.texts("router", FOLDERS):
        read.update(re.findall(r"__router_plan\.view\.(\w+)", text))
    assert read and read <= set(view), sorted(read - set(view))


def test_the_scan_can_fail():
    assert raw_reads('name: "{{ router_service_name }}"') == {"service_name"}
    assert raw_reads("when: router_wait | bool") == {"wait"}
    assert raw_reads('name: "{{ __router_plan.view.service_name }}"') == set()
    assert raw_reads("  llmserve.sglang.router_plan:") == set()
    assert raw_reads("# router_user reads it") == set()
