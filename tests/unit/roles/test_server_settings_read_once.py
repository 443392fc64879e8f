# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Outside its role nobody restates a role's default (every role's: server_*, router_*, sglang_*, ...): a reader of an
instance reads its view (the fact server_view, or the private filter _server_view), a reader of the gateway its view
(router_view, or the filter _router_view; the API key: _router_setting), a playbook outside a role takes the role's
settings from the role (playbooks/sglang_wheelhouse.yml includes roles/sglang's wheelhouse_settings entry point).
A scan of every YAML file of the roles, playbooks and plugins fails on ``<prefix>_<name> | default(<value>)`` for a
name a role's defaults/main.yml declares, and on ``hostvars[HOST].<prefix>_<name> | default(<value>)`` (another
host's setting); ``default(omit, ...)`` restates no value and is left alone (the view never carries a secret)."""
import os
import re

import yaml

import testpaths

# the role that owns each prefix - every role's, its name (its defaults are the only statement of them)
OWNERS = dict((role, os.path.join("roles", role) + os.sep) for role in sorted(os.listdir(os.path.join(testpaths.REPO, "roles")))
              if os.path.isdir(os.path.join(testpaths.REPO, "roles", role, "defaults")))
_NAMES = r"((?:%s)_\w+)" % "|".join(sorted(OWNERS, key=len, reverse=True))
_DEFAULT = r"\s*\|\s*default\((?!\s*omit\b)"
RESTATED = re.compile(r"(?<![\w.\['\"])" + _NAMES + _DEFAULT)
# another host's setting: hostvars[h].router_port | default(30000), hostvars[h]['server_port'] | default(...)
RESTATED_OF_HOST = re.compile(r"hostvars\[[^\]]+\]\s*(?:\.|\[\s*['\"])" + _NAMES + r"(?:['\"]\s*\])?" + _DEFAULT)
SCANNED = ("roles", "playbooks", "plugins")


def restatements(text):
    found = [(m.start(), m.group(1)) for m in RESTATED.finditer(text)]
    found += [(m.start(), m.group(1)) for m in RESTATED_OF_HOST.finditer(text)]
    return [name for _start, name in sorted(found)]


def owner(var):
    """The role whose prefix ``var`` carries (the longest that fits: gpu_health_x is gpu_health's)."""
    return max((r for r in OWNERS if var.startswith(r + "_")), key=len)


def _declared(role):
    with open(os.path.join(testpaths.REPO, OWNERS[role], "defaults", "main.yml")) as handle:
        return set(yaml.safe_load(handle) or {})


# every role's settings: the names its defaults/main.yml declares (a fact a role publishes, sglang_venv_python say,
# has no default to restate)
DECLARED = set().union(*(_declared(role) for role in OWNERS))
# A role's own default that follows another role's setting when the inventory sets it, with its own "not checked"
# value otherwise (not the other role's default): gpu_health checks what roles/cuda installs only when told.
FOLLOWS = {"roles/gpu_health/defaults/main.yml": {"cuda_expected_gpu_count", "cuda_driver_branch",
                                                  "cuda_toolkit_version"}}


def scan():
    found = []
    for top in SCANNED:
        for root, _dirs, names in os.walk(os.path.join(testpaths.REPO, top)):
            for name in names:
                if not name.endswith((".yml", ".yaml", ".j2")):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, testpaths.REPO)
                with open(path) as handle:
                    for number, line in enumerate(handle, 1):
                        found += ["%s:%d: %s" % (rel, number, var) for var in restatements(line)
                                  if var in DECLARED and not rel.startswith(OWNERS[owner(var)])
                                  and var not in FOLLOWS.get(rel, ())]
    return found


def test_no_roles_default_is_restated_outside_its_role():
    assert scan() == [], "read the instance's view (server_view, or hostvars[h] | llmserve.sglang._server_view) or the " \
        "gateway's (router_view, or hostvars[h] | llmserve.sglang._router_view) instead"


def test_the_scan_can_fail():
    assert restatements("port: \"{{ server_port | default(30000) }}\"") == ["server_port"]
    assert restatements("x: \"{{ server_host|default('127.0.0.1') | llmserve.sglang._local_url }}\"") == ["server_host"]
    assert restatements("api_key: \"{{ server_api_key | default(omit, true) }}\"") == []
    assert restatements("url: \"{{ server_view.url }}\"") == []
    assert restatements("tp: \"{{ __case.vars.server_tp | default(8) }}\"") == []
    assert restatements("k: \"{{ benchmark_port | default(8000) }}\"") == []  # no role of that name


def test_the_scan_covers_the_router_and_another_hosts_settings():
    # what playbooks/restart.yml said before it read the gateway's view: every one is found
    before = ("router_host: \"{{ hostvars[llmserve_router_host].router_host | default('0.0.0.0') if x else '0.0.0.0' }}\"\n"
              "router_port: \"{{ hostvars[llmserve_router_host].router_port | default(30000) if x else 30000 }}\"\n"
              "router_api_key: \"{{ hostvars[llmserve_router_host].router_api_key | default('') if x else '' }}\"\n"
              "   hostvars[llmserve_router_host].router_worker_scheme | default('http') if x else 'http',\n"
              "   hostvars[llmserve_router_host].router_worker_port | default(none) if x else none)\n")
    assert restatements(before) == ["router_host", "router_port", "router_api_key", "router_worker_scheme",
                                    "router_worker_port"]
    assert restatements("p: \"{{ router_prometheus_port | default(29000) }}\"") == ["router_prometheus_port"]
    assert restatements("p: \"{{ hostvars['g']['server_port'] | default(30000) }}\"") == ["server_port"]
    # what it says now, and a key handed on without restating it
    assert restatements("h: \"{{ (hostvars[gw] | llmserve.sglang._router_view).host }}\"") == []
    assert restatements("k: \"{{ hostvars[gw].router_api_key | default(omit) }}\"") == []
    # a role's own setting read in its own files is no restatement; the scan judges where a line stands
    assert owner("monitoring_router_group") == "monitoring" and owner("gpu_health_max_temperature") == "gpu_health"


def test_the_scan_covers_every_roles_settings():
    # every role with defaults owns its prefix; what playbooks/sglang_wheelhouse.yml said before it took roles/sglang's
    # settings from the role (a version bump in the role's defaults would not have reached the wheelhouse)
    assert set(OWNERS) == {"cuda", "gpu_health", "models", "monitoring", "router", "server", "sglang"}
    assert restatements("__version: \"{{ sglang_version | default('0.5.23') }}\"") == ["sglang_version"]
    assert restatements("when: models_list | default([]) | length > 0") == ["models_list"]
    assert restatements("x: \"{{ cuda_driver_branch | default('') }}\"") == ["cuda_driver_branch"]
    assert {"sglang_version", "models_list", "cuda_driver_branch"} <= DECLARED
    assert "sglang_venv_python" not in DECLARED  # a fact roles/sglang publishes: no default of its to restate
