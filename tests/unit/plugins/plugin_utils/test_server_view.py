# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/view.py: one set of defaults (equal to roles/server/defaults/main.yml, rendered by Ansible's own
templar), the resolved view, and one meaning of server_speculative everywhere."""
import os

import pytest
import yaml

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.bench import modes
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as sv
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import argv as sargv
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative

DEFAULTS_YML = os.path.join(testpaths.REPO, "roles", "server", "defaults", "main.yml")


def role_defaults():
    with open(DEFAULTS_YML) as f:
        return yaml.safe_load(f)


def render(context):
    """roles/server/defaults/main.yml as Ansible resolves it for a host with ``context`` (its other variables)."""
    from ansible.template import Templar, trust_as_template
    from ansible.parsing.dataloader import DataLoader
    raw = dict((k, trust_as_template(v) if isinstance(v, str) else v) for k, v in role_defaults().items())
    with open(os.path.join(testpaths.REPO, "roles", "server", "vars", "main.yml")) as f:
        role_vars = yaml.safe_load(f)
    variables = dict(raw)
    variables["__server_sglang_record"] = trust_as_template(role_vars["__server_sglang_record"])
    variables.update(context)
    templar = Templar(loader=DataLoader(), variables=variables)
    return dict((k[len("server_"):], templar.template(variables[k])) for k in raw)


def test_every_setting_has_one_default_and_the_role_declares_them_all():
    raw = role_defaults()
    assert set(sv.DEFAULTS) == set(sv.SETTINGS)
    declared = set(k[len("server_"):] for k in raw)
    # dist_init_host has no default on purpose (per host, commented out in defaults/main.yml)
    assert declared | {"dist_init_host"} == set(sv.SETTINGS)


@pytest.mark.parametrize("context", [
    {},  # no roles/sglang in the play, no record, no models_list
    {"sglang_venv_python": "/srv/venv/bin/python", "sglang_installed_version": "0.5.23",
     "sglang_patches_applied": ["sm120-symm-mem"], "sglang_patch_state": "abc", "sglang_server_env": {"A": "1"}},
    # local facts as Ansible gives them: under ansible_facts (their ansible_ prefix kept), not injected as variables
    {"ansible_facts": {"ansible_local": {"llmserve_sglang": {
        "venv_python": "/rec/bin/python", "installed_version": "0.5.15.post1", "patches_applied": [], "patch_state": "x",
        "server_env": {"B": "2"}}}}},
    {"server_sglang_record": "other", "ansible_facts": {"ansible_local": {
        "other": {"venv_python": "/o/bin/python"}, "llmserve_sglang": {"venv_python": "/no/bin/python"}}}},
    {"models_list": [{"repo": "a/b", "dest": "/models/b"}], "server_dist_init_port": 51000},
])
def test_defaults_equal_what_ansible_renders_from_defaults_main_yml(context):
    rendered = render(context)
    ours = sv.resolved(sv.settings_from_vars(context))
    for name, value in rendered.items():
        want = value
        if sv.SETTINGS[name] == "bool" and isinstance(value, str):
            want = value.strip().lower() == "true"
        elif sv.SETTINGS[name] == "int" and isinstance(value, str):
            want = int(value)
        assert ours[name] == want, name


def test_view_of_the_defaults():
    v = sv.build({}, name="gpu1")
    assert v["instance"] == "default" and v["url"] == "http://127.0.0.1:30000"
    assert v["paths"]["log"] == "/var/log/sglang/default.log" and v["paths"]["argv"] == "/etc/sglang/default/argv.json"
    assert v["python"] == "/opt/sglang/venv/bin/python" and v["version"] == ""
    assert v["health_path"] == "/health"  # unknown version: every version answers /health
    assert v["spec"] == {"on": True, "algorithm": "EAGLE3", "draft_model_path": None, "adaptive": False}
    assert v["nodes"] == ["gpu1"] and v["rank"] == 0 and v["min_accept_length"] == 1.3


def test_view_follows_the_settings():
    v = sv.build({"instance": "kimi", "host": "0.0.0.0", "port": "31000", "config_dir": "/srv/etc", "log_dir": "/srv/log",
                  "speculative": {"algorithm": "", "draft_model_path": "/d"}, "spec_min_accept_length": "1.7",
                  "tp_group": "r1"}, name="b", groups={"r1": ["a", "b"]}, version="0.5.23")
    assert v["url"] == "http://127.0.0.1:31000" and v["port"] == 31000
    assert v["paths"]["log"] == "/srv/log/kimi.log" and v["paths"]["instance_dir"] == "/srv/etc/kimi"
    assert v["health_path"] == "/ready" and v["version"] == "0.5.23"
    assert v["spec"]["on"] is False and v["spec"]["draft_model_path"] is None
    assert v["nodes"] == ["a", "b"] and v["rank"] == 1 and v["min_accept_length"] == 1.7
    assert sv.build({"host": "::"})["url"] == "http://[::1]:30000"


def test_the_record_says_where_the_running_server_listens():
    # an instance started before the view was recorded: its argv (what the role's status read in Jinja before)
    old = {"python": "/old/bin/python", "version": "0.5.15.post1",
           "argv": ["--model-path", "/m", "--host", "0.0.0.0", "--port", "30001"]}
    v = sv.build({"port": 30005}, recorded=old)
    assert (v["url"], v["python"], v["version"], v["health_path"]) == (
        "http://127.0.0.1:30001", "/old/bin/python", "0.5.15.post1", "/health")
    # a recorded view: what runs wins, the checks (the floor) stay the settings'
    rec = sv.record(sv.build({"port": 30002, "speculative": {"algorithm": ""}}, version="0.5.23"))
    v = sv.build({"port": 30005, "spec_min_accept_length": 2.0}, recorded={"argv": [], "view": rec})
    assert v["url"] == "http://127.0.0.1:30002" and v["spec"]["on"] is False and v["health_path"] == "/ready"
    assert v["min_accept_length"] == 2.0
    # another instance's record is not this one's
    assert sv.build({"instance": "b", "port": 30005}, recorded={"view": rec})["port"] == 30005


def test_the_view_says_what_speculation_is_applied_and_the_record_wins():
    applied = {"draft_model_path": "/d", "adaptive": True, "eagle_topk": 1, "num_steps": 3,
               "adaptive_config": {"1": {"candidate_steps": [3]}, "57": {"candidate_steps": [0]}},
               "source": "benchmark run /r of 2026-12-07T17:00"}
    v = sv.build({"speculative": applied})
    assert v["speculation"]["setting"] == "adaptive" and v["speculation"]["threshold"] == 56
    assert v["speculation"]["words"].endswith("from benchmark run /r of 2026-12-07T17:00")
    assert sv.build({})["speculation"]["words"] == "static EAGLE3, from the inventory"
    # what the running instance recorded at its start is in force, not the settings changed since
    rec = sv.record(v)
    now = sv.build({"speculative": {"algorithm": ""}}, recorded={"argv": [], "view": rec})
    assert now["speculation"] == v["speculation"] and now["spec"]["adaptive"] is True
    # a record written before the field: the settings' words
    old = dict(rec)
    del old["speculation"]
    assert sv.build({"speculative": {"algorithm": ""}}, recorded={"argv": [], "view": old})["speculation"]["words"] == \
        "off, from the inventory"


def defaults(**kw):
    from test_server_plan import defaults as plan_defaults
    s = plan_defaults()
    s.update(kw)
    return s


def test_the_plan_embeds_the_view_and_records_it():
    from test_server_plan import host
    out = sp.plan(sp.validate(defaults(port=31000)), host())
    assert out["view"]["url"] == out["ready"]["url"] == "http://127.0.0.1:31000"
    assert out["view"]["version"] == out["version"]
    argv_file = next(f for f in out["files"] if f["path"] == out["paths"]["argv"])
    import json
    recorded = json.loads(argv_file["content"])
    assert recorded["view"]["url"] == out["view"]["url"] and "args" not in recorded["view"]
    # what status reads back from that record is what the plan published
    assert sv.build(defaults(port=1), recorded=recorded)["url"] == out["view"]["url"]


# A mapping without an algorithm: EAGLE3 everywhere; an empty algorithm: off everywhere.
CASES = [
    ({"draft_model_path": "/d"}, True, "EAGLE3"),
    ({"algorithm": None, "draft_model_path": "/d"}, False, ""),
    ({"algorithm": "", "draft_model_path": "/d"}, False, ""),
    ({"algorithm": "  eagle3 ", "draft_model_path": "/d"}, True, "EAGLE3"),
    ({"algorithm": "EAGLE", "draft_model_path": "/d"}, True, "EAGLE"),
    (None, False, ""),
]


@pytest.mark.parametrize("spec, on, algo", CASES)
def test_speculation_means_the_same_in_the_rule_the_plan_the_renderer_and_the_benchmark(spec, on, algo):
    from test_server_plan import host
    assert speculative.resolve(spec)["on"] is on and speculative.algorithm(spec) == algo
    assert sv.build({"speculative": spec})["spec"]["on"] is on
    out = sp.plan(sp.validate(defaults(speculative=spec)), host())
    assert not out["refusals"], out["refusals"]
    assert ("--speculative-algorithm" in out["argv"]) is on
    if on:
        assert out["argv"][out["argv"].index("--speculative-algorithm") + 1] == algo
        assert out["view"]["spec"]["draft_model_path"] == "/d" and "draft_model_path" not in out["preflight"]
    rendered = sargv.render({"model_path": "/m", "speculative": spec}, "0.5.23")
    assert ("--speculative-algorithm" in rendered["argv"]) is on, rendered["errors"]
    # the benchmark refuses a server that does not run what the setting means, and accepts one that does
    facts = {"algorithm": algo or None, "draft_model_path": "/d" if on else None}
    assert modes.problems("allreduce_nccl", spec, facts) == []
    assert modes.problems("allreduce_nccl", spec, {"algorithm": None if on else "EAGLE3"}) != []


def test_a_mapping_without_algorithm_or_draft_is_refused_with_the_fix():
    from test_server_plan import host
    out = sp.plan(sp.validate(defaults(speculative={})), host())
    assert any("no draft model while algorithm is EAGLE3" in r and "algorithm: ''" in r for r in out["refusals"])


@pytest.mark.parametrize("tp, group, count", [(1, None, 1), (8, None, 8), (8, ["a", "b"], 4), (16, ["a", "b"], 8)])
def test_the_gpus_here_are_tp_over_the_replicas_nodes(tp, group, count):
    settings = {"tp": tp, "tp_group": "g" if group else ""}
    v = sv.build(settings, name="a", groups={"g": group} if group else {})
    assert v["gpus"] == {"count": count, "visible": []}
    assert sv.build(dict(settings, cuda_visible_devices=[2, 3]), name="a",
                    groups={"g": group} if group else {})["gpus"]["visible"] == [2, 3]


def test_the_gate_sees_only_the_nccl_part_of_the_env():
    # the view is published and recorded: a token in server_env must not travel with it
    v = sv.build({"env": {"NCCL_P2P_DISABLE": 1, "HF_TOKEN": "secret", "NCCL_DEBUG": "WARN", "XNCCL_X": "1"}})
    assert v["nccl_env"] == {"NCCL_P2P_DISABLE": "1", "NCCL_DEBUG": "WARN"}
    assert "secret" not in repr(v)
