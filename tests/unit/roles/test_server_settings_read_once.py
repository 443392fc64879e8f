# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Outside roles/server nobody restates a server_* default: a reader of an instance reads its view (the fact
server_view, or the private filter _server_view), whose defaults are roles/server's. A scan of every YAML file of
the roles, playbooks and plugins fails on ``server_<name> | default(<value>)``; ``default(omit, ...)`` restates no
value and is left alone (the API key: the view never carries a secret)."""
import os
import re

import testpaths

RESTATED = re.compile(r"(?<![\w.\['\"])(server_\w+)\s*\|\s*default\((?!\s*omit\b)")
SCANNED = ("roles", "playbooks", "plugins")
OWNER = os.path.join("roles", "server") + os.sep


def restatements(text):
    return [m.group(1) for m in RESTATED.finditer(text)]


def scan():
    found = []
    for top in SCANNED:
        for root, _dirs, names in os.walk(os.path.join(testpaths.REPO, top)):
            for name in names:
                if not name.endswith((".yml", ".yaml", ".j2")):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, testpaths.REPO)
                if rel.startswith(OWNER):
                    continue
                with open(path) as handle:
                    for number, line in enumerate(handle, 1):
                        found += ["%s:%d: %s" % (rel, number, var) for var in restatements(line)]
    return found


def test_no_server_default_is_restated_outside_roles_server():
    assert scan() == [], "read the instance's view (server_view, or hostvars[h] | llmserve.sglang._server_view) instead"


def test_the_scan_can_fail():
    assert restatements("port: \"{{ server_port | default(30000) }}\"") == ["server_port"]
    assert restatements("x: \"{{ server_host|default('127.0.0.1') | llmserve.sglang._local_url }}\"") == ["server_host"]
    assert restatements("api_key: \"{{ server_api_key | default(omit, true) }}\"") == []
    assert restatements("url: \"{{ server_view.url }}\"") == []
    assert restatements("tp: \"{{ __case.vars.server_tp | default(8) }}\"") == []
    assert restatements("k: \"{{ benchmark_port | default(8000) }}\"") == []
