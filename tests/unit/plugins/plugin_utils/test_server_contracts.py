# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The typed contracts of the instance's view (_server_view.View) and roles/server's plan (_server_plan.Plan).

mypy (`make lint`, .mypy.ini) holds the code that builds them to their declarations; these tests hold the declarations
to their readers and to what runs: every ``__server_plan.<key>[.<key>...]`` a task of roles/server reads is declared,
every declared key of the plan is read by a task or by a named consumer (the exceptions below, each with its reason:
a list that only shrinks), and what build() and plan() return has exactly the declared keys.
"""
import inspect
import os
import re
import typing

import pytest
import yaml

import testpaths
from ansible_collections.llmserve.sglang.plugins.action import server_plan as plan_action
from ansible_collections.llmserve.sglang.plugins.filter import _server as server_filters
from ansible_collections.llmserve.sglang.plugins.modules import server_plan as plan_module
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as sv
from test_server_plan import defaults, host, multinode  # pylint: disable=import-error

TASKS = os.path.join(testpaths.REPO, "roles", "server", "tasks")
READ = re.compile(r"__server_plan((?:\.[a-z_]+)+)")

# Plan keys no task reads, and the Python that reads them instead: {key: (consumers, what they do with it)}. Each
# consumer's source must name the key (so an entry whose reader went fails).
CONSUMERS = {
    "refusals": ((plan_action.ActionModule.decide, sp.settle), "the action fails listing them; a refused plan is not settled"),
    "warnings": ((sp.report,), "the closing report prints them"),
    "nodes": ((sp.settle, sp.report, server_filters._peers), "the replica's other nodes (settle, their waits)"),
    "node_rank": ((sp.settle, sp.report, sp.failure_message), "rank 0's token; the report and the failure message"),
    "nnodes": ((sp.settle, sp.report), "a single node is not settled; the report"),
    "why": ((sp.report,), "the report says why"),
    "running": ((sp.report,), "the report of an unchanged running server"),
    "pid": ((sp.report,), "the report of an unchanged running server"),
    "version": ((sp.report,), "the report"),
    "argv": ((sp.report,), "the report prints the command line (the tasks get it as preflight.argv and in files)"),
    "restart": ((sp.settle,), "server_restart: never keeps a node out of a replica's restart"),
    "peer_endpoint": ((sp.settle,), "the peers' endpoints in the watch"),
    "peer_token": ((sp.settle,), "rank 0's token, shared with the peers' watch"),
}
# Plan keys nobody reads on its own: {key: why it stays in the plan}. Candidates to take out of the plan.
UNREAD = {
    "env": "the same mapping the tasks read as preflight.env (and server.env's text); kept for -v and the tests",
    "model_storage": "folded into warnings (its notes) and argv (its flag); kept for -v and the tests",
    "dirs_missing": "folded into needs_write; kept for -v and the tests",
    "user_pending": "folded into preflight.become_user and model_check.user; kept for -v and the tests",
    "instance": "the instance's name, also paths.instance and view.instance; kept for -v",
}


def task_reads():
    """Every dotted path a task of roles/server reads below ``__server_plan``: {"preflight.argv", "action", ...}."""
    out = set()
    for name in sorted(os.listdir(TASKS)):
        with open(os.path.join(TASKS, name)) as handle:
            out.update(m.group(1)[1:] for m in READ.finditer(handle.read()))
    return out


def _typed_dict(tp):
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def undeclared(root, path):
    """``path`` (a.b.c) when ``root`` (a TypedDict) does not declare it, walking while the declared types are
    TypedDicts (a plain dict or Any declares no keys below it); else None."""
    tp = root
    for key in path.split("."):
        tp = typing.get_args(tp)[0] if typing.get_origin(tp) in (typing.Union, type(int | None)) else tp
        if not _typed_dict(tp):
            return None
        hints = typing.get_type_hints(tp)
        if key not in hints:
            return path
        tp = hints[key]
    return None


def keys(tp):
    return set(typing.get_type_hints(tp))


def test_every_plan_value_a_task_reads_is_declared():
    read = task_reads()
    assert {"action", "service.stop_timeout", "preflight.model_check.user", "view.spec.on"} <= read
    assert sorted(p for p in read if undeclared(sp.Plan, p)) == []


def test_every_declared_plan_key_is_read():
    tops = set(p.split(".")[0] for p in task_reads())
    assert set(CONSUMERS) & tops == set(), "a task reads it now: take it off CONSUMERS"
    assert set(UNREAD) & (tops | set(CONSUMERS)) == set(), "it has a reader now: take it off UNREAD"
    assert sorted(keys(sp.Plan) - tops - set(CONSUMERS) - set(UNREAD)) == []
    assert sorted((set(CONSUMERS) | set(UNREAD)) - keys(sp.Plan)) == [], "no such key in the plan: take it off"
    for key, (readers, _why) in CONSUMERS.items():
        for reader in readers:
            assert re.search(r"""["']%s["']""" % key, inspect.getsource(reader)), "%s does not read %s" % (reader, key)


def test_every_declared_key_of_a_part_a_task_reads_is_read():
    # the parts the tasks take apart (the ones they pass whole - watch, files, dirs, view - go to a module or a fact)
    read = task_reads()
    read |= set(".".join(p.split(".")[:n]) for p in read for n in range(1, p.count(".") + 1))  # a.b of a.b.c
    for part, tp in (("service", sp.Service), ("preflight", sp.Preflight), ("preflight.model_check", sp.ModelCheck),
                     ("ready", sp.Ready), ("spec_check", sp.SpecCheck)):
        assert sorted(k for k in keys(tp) if "%s.%s" % (part, k) not in read) == [], part


def test_the_declaration_check_can_fail():
    assert undeclared(sp.Plan, "service.stop_timeout") is None
    assert undeclared(sp.Plan, "view.spec.draft_model_path") is None
    assert undeclared(sp.Plan, "paths.api_key") is None  # a plain mapping: nothing declared below it
    assert undeclared(sp.Plan, "watch.token") is None  # Watch | None
    assert undeclared(sp.Plan, "service.no_such_value") == "service.no_such_value"
    assert undeclared(sp.Plan, "view.spec.nope") == "view.spec.nope"
    assert undeclared(sp.Plan, "nope") == "nope"
    assert [m.group(1)[1:] for m in READ.finditer('a: "{{ __server_plan.ready.url }}"\nwhen: __server_plan.action')] \
        == ["ready.url", "action"]


def test_plans_have_the_declared_keys():
    started = sp.plan(sp.validate(dict(defaults(), args={})), host())
    stopped = sp.plan(sp.validate(dict(defaults(), args={}, state="stopped")), host())
    refused = sp.plan(sp.validate(dict(defaults(), args={}, config_dir="relative")), host())
    assert not started["refusals"] and not stopped["refusals"] and refused["refusals"]
    # peer_token: the server_plan action adds it to every plan
    assert sorted(keys(sp.Plan) - set(started) - {"peer_token"}) == [] and sorted(set(started) - keys(sp.Plan)) == []
    assert set(stopped) < keys(sp.Plan) and set(refused) == keys(sp._PlanAlways) == sp.Plan.__required_keys__
    assert set(started["service"]) == keys(sp.Service) and set(started["preflight"]) == keys(sp.Preflight)
    assert set(started["preflight"]["model_check"]) == keys(sp.ModelCheck)
    assert set(started["ready"]) == keys(sp.Ready) and set(started["spec_check"]) == keys(sp.SpecCheck)
    assert set(started["model_storage"]) == keys(sp.ModelStorage)
    assert all(set(f) == keys(sp.File) for f in started["files"]) and started["files"]
    assert all(set(d) == keys(sp.Dir) for d in started["dirs"]) and started["dirs"]
    assert started["watch"] is None and set(sp.plan(sp.validate(multinode("n0")[0]), multinode("n0")[1])["watch"]) == keys(sp.Watch)
    assert started["action"] in typing.get_args(sp.Action) and stopped["action"] in typing.get_args(sp.Action)


def test_views_have_the_declared_keys():
    view = sv.build(dict(defaults(), args={}), name="gpu1")
    assert set(view) == keys(sv.View) and set(view["spec"]) == keys(sv.Spec) and set(view["gpus"]) == keys(sv.Gpus)
    assert set(sp.plan(sp.validate(dict(defaults(), args={})), host())["view"]) == keys(sv.View)
    # a recorded view wins for what runs, and brings no key of its own
    was = dict(view, port=31000, extra="x")
    assert set(sv.build(dict(defaults(), args={}), name="gpu1", recorded={"view": was})) == keys(sv.View)
    assert set(sv.record(view)) == keys(sv.View) - {"args"}


def test_the_documented_plan_is_declared():
    documented = yaml.safe_load(plan_module.RETURN)["plan"]["contains"]
    assert {"refusals", "action", "view", "service"} <= set(documented)
    assert sorted(set(documented) - keys(sp.Plan)) == []


def test_the_plan_takes_only_checked_settings():
    # raw settings (the inventory's, unchecked) are no plan input: only what validate() made of them
    with pytest.raises(TypeError, match="validate"):
        sp.plan(dict(defaults(), args={}), host())
    assert not sp.plan(sp.validate(dict(defaults(), args={})), host())["refusals"]
    # the plan adds its own refusals to its copy; the caller's Checked keeps validate()'s
    checked = sp.validate(dict(defaults(), args={}, service_manager="systemd"))
    refused = sp.plan(checked, host(service_mgr="openrc"))["refusals"]
    assert refused and checked.refusals.items == []
