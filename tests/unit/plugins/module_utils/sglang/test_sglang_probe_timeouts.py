# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a probe of SGLang waits has one home, sglang/gates.py: the waiter's rule, the floor roles/router refuses
below (through the _sglang_limit filter), and no second definition anywhere in the shipped code."""
import os
import re

import pytest
import yaml

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates


@pytest.mark.parametrize("interval, expected", [(0.05, 2.0), (0.4, 2.0), (1, 5.0), (2, 10.0)])
def test_five_intervals_never_under_the_floor(interval, expected):
    assert gates.probe_timeout(interval) == expected
    assert gates.MIN_PROBE_TIMEOUT_S > gates.SGLANG_HEALTH_BUDGET_S


def _read(*parts):
    with open(os.path.join(testpaths.REPO, *parts)) as f:
        return f.read()


def test_the_router_refuses_below_the_gates_floor_and_says_so():
    # roles/router decides in its router_plan action (plugin_utils/_router_plan.py), which asks gates
    assert "llmserve.sglang.router_plan:" in _read("roles", "router", "tasks", "main.yml")
    assert gates.LIMITS["min_probe_timeout"] == gates.MIN_PROBE_TIMEOUT_S
    from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan
    base = {"worker_urls": ["http://w:30000"], "policy": "cache_aware", "package": "smg", "health_check_port": 0,
            "port": 8000, "prometheus_port": 29000}
    floor = gates.MIN_PROBE_TIMEOUT_S
    for timeout, refused in ((floor, False), (floor - 0.1, True), (floor + 1, False)):
        found = _router_plan.plan(dict(base, health_check_timeout_secs=timeout), "r", [])["refusals"]
        assert bool(found) is refused and all("under %g s" % floor in f for f in found), (timeout, found)
    spec = yaml.safe_load(_read("roles", "router", "meta", "argument_specs.yml"))
    option = spec["argument_specs"]["main"]["options"]["router_health_check_timeout_secs"]
    # the documentation names the same floor, and the default honours it
    assert "at least %g " % gates.MIN_PROBE_TIMEOUT_S in " ".join(option["description"])
    defaults = yaml.safe_load(_read("roles", "router", "defaults", "main.yml"))
    assert option["default"] == defaults["router_health_check_timeout_secs"] >= gates.MIN_PROBE_TIMEOUT_S


def test_no_other_file_defines_a_probe_timeout():
    # a constant for a probe's timeout, or a literal floor in YAML, outside sglang/gates.py
    pattern = re.compile(r"^\s*[A-Z_]*(HEALTH|PROBE)_TIMEOUT[A-Z_]*\s*=|timeout_secs \| int >= \d", re.M)
    found = []
    for top in ("plugins", "roles", "playbooks"):
        for base, _dirs, files in os.walk(os.path.join(testpaths.REPO, top)):
            for name in files:
                path = os.path.join(base, name)
                if name.endswith((".py", ".yml")) and not path.endswith(os.path.join("sglang", "gates.py")):
                    with open(path) as f:
                        if pattern.search(f.read()):
                            found.append(os.path.relpath(path, testpaths.REPO))
    assert found == []
