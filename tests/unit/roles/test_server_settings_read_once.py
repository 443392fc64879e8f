# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Outside roles/server nobody restates a server_* default, outside roles/router no router_* one: a reader of an
instance reads its view (the fact server_view, or the private filter _server_view), a reader of the gateway its view
(router_view, or the filter _router_view; the API key: _router_setting), whose defaults are the roles' declarations.
A scan of every YAML file of the roles, playbooks and plugins fails on ``<prefix>_<name> | default(<value>)``, and on
``hostvars[HOST].<prefix>_<name> | default(<value>)`` (another host's setting); ``default(omit, ...)`` restates no
value and is left alone (the view never carries a secret)."""
import os
import re

import testpaths

# the role that owns each prefix (its defaults are the only statement of them)
OWNERS = {"server": os.path.join("roles", "server") + os.sep, "router": os.path.join("roles", "router") + os.sep}
_NAMES = r"((?:%s)_\w+)" % "|".join(OWNERS)
_DEFAULT = r"\s*\|\s*default\((?!\s*omit\b)"
RESTATED = re.compile(r"(?<![\w.\['\"])" + _NAMES + _DEFAULT)
# another host's setting: hostvars[h].router_port | default(30000), hostvars[h]['server_port'] | default(...)
RESTATED_OF_HOST = re.compile(r"hostvars\[[^\]]+\]\s*(?:\.|\[\s*['\"])" + _NAMES + r"(?:['\"]\s*\])?" + _DEFAULT)
SCANNED = ("roles", "playbooks", "plugins")


def restatements(text):
    found = [(m.start(), m.group(1)) for m in RESTATED.finditer(text)]
    found += [(m.start(), m.group(1)) for m in RESTATED_OF_HOST.finditer(text)]
    return [name for _, name in sorted(found)]


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
                                  if not rel.startswith(OWNERS[var.split("_", 1)[0]])]
    return found


def test_no_server_default_is_restated_outside_roles_server():
    assert scan() == [], "read the instance's view (server_view, or hostvars[h] | llmserve.sglang._server_view) or the " \
        "gateway's (router_view, or hostvars[h] | llmserve.sglang._router_view) instead"


def test_the_scan_can_fail():
    assert restatements("port: \"{{ server_port | default(30000) }}\"") == ["server_port"]
    assert restatements("x: \"{{ server_host|default('127.0.0.1') | llmserve.sglang._local_url }}\"") == ["server_host"]
    assert restatements("api_key: \"{{ server_api_key | default(omit, true) }}\"") == []
    assert restatements("url: \"{{ server_view.url }}\"") == []
    assert restatements("tp: \"{{ __case.vars.server_tp | default(8) }}\"") == []
    assert restatements("k: \"{{ benchmark_port | default(8000) }}\"") == []


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
    assert restatements("k: \"{{ hostvars[gw].monitoring_router_group | default('') }}\"") == []
