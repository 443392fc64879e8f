# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A default is stated once, in a role's defaults/main.yml; every other statement of it is held equal here:
every argument spec of every role, every entry point (roles/server's stop and status included: their options are
main's, the same words and the same default), and roles/server's defaults in the view and in the collection's one
SGLang client (server_port). The readers of another role (router, monitoring) state no server_port of their own."""
import os

import pytest
import yaml

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as view

ROLES = os.path.join(testpaths.REPO, "roles")


def load(*parts):
    with open(os.path.join(ROLES, *parts)) as f:
        return yaml.safe_load(f) or {}


def roles_with_specs():
    return sorted(r for r in os.listdir(ROLES) if os.path.exists(os.path.join(ROLES, r, "meta", "argument_specs.yml")))


def literal(value):
    """A default Ansible does not template (a Jinja string is the role's own derivation, documented in words)."""
    if isinstance(value, str):
        return "{{" not in value and "{%" not in value
    if isinstance(value, dict):
        return all(literal(v) for v in value.values())
    if isinstance(value, list):
        return all(literal(v) for v in value)
    return True


def differences(spec, defaults):
    """[(entry point, option, spec default, defaults/main.yml value)] where a spec states a default that differs (a
    spec that states none restates nothing: Ansible takes defaults/main.yml's)."""
    out = []
    for entry, body in sorted((spec.get("argument_specs") or {}).items()):
        for name, option in sorted((body.get("options") or {}).items()):
            if "default" not in option or name not in defaults or not literal(defaults[name]):
                continue
            if option.get("default") != defaults[name]:
                out.append((entry, name, option.get("default"), defaults[name]))
    return out


@pytest.mark.parametrize("role", roles_with_specs())
def test_every_argument_spec_default_is_the_roles_default(role):
    defaults = load(role, "defaults", "main.yml") if os.path.exists(os.path.join(ROLES, role, "defaults", "main.yml")) else {}
    assert differences(load(role, "meta", "argument_specs.yml"), defaults) == []


def test_the_comparison_can_fail():
    spec = {"argument_specs": {"main": {"options": {"a_port": {"default": 1}, "a_tpl": {"default": "x"}}},
                               "stop": {"options": {"a_port": {"type": "int"}}},
                               "status": {"options": {"a_port": {"default": 3}}}}}
    defaults = {"a_port": 1, "a_tpl": "{{ other }}"}
    assert differences(spec, defaults) == [("status", "a_port", 3, 1)]
    assert differences(spec, dict(defaults, a_port=3)) == [("main", "a_port", 1, 3)]


@pytest.mark.parametrize("entry", ["stop", "status"])
def test_the_servers_other_entry_points_copy_main_exactly(entry):
    specs = load("server", "meta", "argument_specs.yml")["argument_specs"]
    main, other = specs["main"]["options"], specs[entry]["options"]
    assert other and set(other) <= set(main)
    for name, option in other.items():
        assert option == main[name], "%s: %s differs from main's" % (entry, name)


def test_server_port_is_stated_once_and_held_everywhere():
    defaults = load("server", "defaults", "main.yml")
    assert view.DEFAULTS["port"] == defaults["server_port"] == client.DEFAULT_PORT
    assert client.DEFAULT_URL == "http://127.0.0.1:%d" % client.DEFAULT_PORT
    # the router and monitoring read a worker's port from its view: no server_port of their own
    assert load("router", "defaults", "main.yml")["router_worker_port"] is None
    assert load("monitoring", "defaults", "main.yml")["monitoring_server_port"] is None


def test_sglangs_default_port_has_one_home():
    # SGLang's own --port default: the preflight, the port plan and roles/cuda's "is it serving" check read it
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import ports
    from ansible_collections.llmserve.sglang.plugins.modules import server_preflight
    assert load("cuda", "defaults", "main.yml")["cuda_serving_ports"] == [client.DEFAULT_PORT]
    assert ports.fixed_ports(["--model-path", "/m"])[0] == (client.DEFAULT_PORT, "the HTTP port (--port)")
    assert ports.fixed_ports(["--port", "31000"])[0][0] == 31000
    assert "default: %d" % client.DEFAULT_PORT in server_preflight.DOCUMENTATION
