# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An action that runs no module of its own validates its arguments against one argument spec (ARGSPEC, as
community.crypto's actions do), and that spec is its doc-only module's DOCUMENTATION: names, types, required,
defaults, choices. A task with a wrong argument fails by name before the action decides anything."""
import ast
import importlib
import json
import os

import pytest
import yaml

import testpaths
from playbook import playbook

PLUGINS = os.path.join(testpaths.REPO, "plugins")
KEYS = ("type", "required", "default", "choices", "elements")


def module_source(name):
    with open(os.path.join(PLUGINS, "modules", name + ".py")) as handle:
        return handle.read()


def doc_only(name):
    """True for a module file with documentation and no code to run (an action plugin does its work)."""
    tree = ast.parse(module_source(name))
    return not any(isinstance(n, ast.FunctionDef) for n in tree.body)


def doc_options(name):
    for node in ast.parse(module_source(name)).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "DOCUMENTATION":
            return yaml.safe_load(node.value.value).get("options") or {}
    raise AssertionError("%s has no DOCUMENTATION" % name)


def normal(options):
    """{option: {key: value}} with Ansible's implicit values filled in (type str, not required, no default)."""
    out = {}
    for opt, spec in options.items():
        spec = dict((k, spec.get(k)) for k in KEYS)
        spec["type"] = spec["type"] or "str"
        spec["required"] = bool(spec["required"])
        out[opt] = spec
    return out


ACTIONS = sorted(n[:-3] for n in os.listdir(os.path.join(PLUGINS, "action")) if n.endswith(".py"))


def action(name):
    return importlib.import_module("ansible_collections.llmserve.sglang.plugins.action." + name).ActionModule


def test_the_doc_only_modules_are_the_planners():
    assert [n for n in ACTIONS if doc_only(n)] == ["bench_plan", "bench_report", "router_plan", "server_plan"]


@pytest.mark.parametrize("name", ACTIONS)
def test_an_action_without_a_module_validates_against_its_documented_spec(name):
    spec = getattr(action(name), "ARGSPEC", None)
    if not doc_only(name):
        assert spec is None  # the module it runs validates its own arguments
        return
    assert spec is not None, "%s: set ARGSPEC to its module's options" % name
    assert normal(spec) == normal(doc_options(name))


def test_the_comparison_can_fail():
    spec = {"mode": {"type": "str", "required": True, "choices": ["a"]}}
    assert normal(spec) == normal({"mode": {"description": "x", "required": True, "choices": ["a"]}})
    for other in ({"mode": {"type": "str", "choices": ["a"]}}, {"mode": {"type": "str", "required": True}},
                  {"mode": {"type": "raw", "required": True, "choices": ["a"]}}, {}):
        assert normal(spec) != normal(other)


PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - llmserve.sglang.server_plan:
        info: not a mapping
      register: plan_bad
      ignore_errors: true
    - llmserve.sglang.bench_report:
        run_dir: /nonexistent
        tolerance: wide
      register: report_bad
      ignore_errors: true
    - llmserve.sglang.bench_plan:
        mode: baseline
        stray: 1
      register: plan_stray
      ignore_errors: true
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'plan_bad': plan_bad, 'report_bad': report_bad, 'plan_stray': plan_stray} | to_json }}"
"""


def test_a_wrong_argument_is_refused_by_name_through_ansible_playbook(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    playbook(tmp_path / "play.yml", "-e", "out=%s" % (tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["plan_bad"]["failed"] and "info" in r["plan_bad"]["msg"] and "dict" in r["plan_bad"]["msg"]
    assert r["report_bad"]["failed"] and "tolerance" in r["report_bad"]["msg"] and "float" in r["report_bad"]["msg"]
    assert r["plan_stray"]["failed"] and "stray" in r["plan_stray"]["msg"]
