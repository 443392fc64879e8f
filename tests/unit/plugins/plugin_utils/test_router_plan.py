# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's plan (plugin_utils/_router_plan.py, the router_plan action): the worker URLs from the workers'
views, the expected count, and each of the seven checks that one assert made, refused on its own with its fix."""
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import testpaths
from playbook import playbook
from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.router import gateway
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan as rp

BASE = {"worker_urls": [], "worker_group": "gpu_hosts", "expected_workers": None, "policy": "cache_aware",
        "health_check_timeout_secs": 3, "package": "smg", "health_check_port": 30081, "port": 8000,
        "prometheus_port": 29000}
URLS = ["http://a:30000", "http://c:30000"]


def refusals(own_port=None, urls=None, **kw):
    urls = URLS if urls is None else urls
    return rp.plan(dict(BASE, **kw), "r", urls, own_port)["refusals"]


def test_a_good_plan():
    out = rp.plan(BASE, "r", URLS)
    assert out == {"urls": URLS, "expected": 2, "refusals": [], "urls_in_env": False}
    assert rp.plan(dict(BASE, worker_urls=["http://x:1"]), "r", URLS)["urls"] == ["http://x:1"]


@pytest.mark.parametrize("kw, urls, words", [
    ({}, [], "router_worker_urls=[] is empty and group 'gpu_hosts' has no hosts"),
    ({"expected_workers": 0}, URLS, "router_expected_workers=0 is not between 1 and 2"),
    ({"expected_workers": 3}, URLS, "router_expected_workers=3 is not between 1 and 2"),
    ({"expected_workers": "two"}, URLS, 'router_expected_workers="two"'),
    ({"policy": "fastest"}, URLS, 'router_policy="fastest" is not one of'),
    ({"package": "vllm-router"}, URLS, 'router_package="vllm-router" is neither'),
    ({"health_check_port": 8000}, URLS, "router_health_check_port=8000 is router_port"),
    ({"health_check_port": 29000}, URLS, "router_health_check_port=29000 is router_port"),
    ({"health_check_timeout_secs": "x"}, URLS, 'router_health_check_timeout_secs="x" is under'),
])
def test_each_check_refuses_on_its_own(kw, urls, words):
    found = refusals(urls=urls, **kw)
    assert any(words in f for f in found), found
    assert len(found) == 1 + (not urls and "expected_workers" not in kw), found


@pytest.mark.parametrize("expected, ok", [(1, True), (2, True), (3, False), (0, False)])
def test_expected_bounds(expected, ok):
    assert (refusals(expected_workers=expected) == []) is ok


def test_a_probe_port_of_its_own_or_none():
    assert refusals(health_check_port=0) == [] and refusals(health_check_port=30082) == []


def test_a_router_on_its_own_servers_port_is_refused_unless_the_urls_are_explicit():
    assert refusals(own_port=8000) and "serves SGLang on router_port 8000" in refusals(own_port=8000)[0]
    assert refusals(own_port=8001) == [] and refusals(own_port=None) == []
    assert refusals(own_port=8000, worker_urls=["http://x:1"]) == []


PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - llmserve.sglang.router_plan:
      vars:
        router_worker_urls: []
        router_worker_group: gpu_hosts
        router_worker_scheme: http
        router_worker_port: null
        router_expected_workers: null
        router_policy: cache_aware
        router_health_check_timeout_secs: 3
        router_package: smg
        router_health_check_port: 0
        router_port: "{{ rport }}"
        router_prometheus_port: 29000
      register: p
      ignore_errors: true
    - ansible.builtin.copy:
        dest: "{{ out }}/{{ inventory_hostname }}.json"
        content: "{{ p | to_json }}"
      delegate_to: localhost
"""
INVENTORY = """
[gpu_hosts]
gpu1 server_tp_group=r1 server_port=31000
gpu2 server_tp_group=r1
gpu3
[r1]
gpu1
gpu2
[routers]
router1
[all:vars]
ansible_connection=local
"""


def play(tmp_path, rport):
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "hosts").write_text(INVENTORY + "ansible_python_interpreter=%s\n" % sys.executable)
    playbook(tmp_path / "play.yml", "-e", "out=%s" % tmp_path, "-e", "rport=%d" % rport, inventory=tmp_path / "hosts")
    return dict((h, json.loads((tmp_path / ("%s.json" % h)).read_text())) for h in ("gpu1", "gpu3", "router1"))


def test_the_action_reads_the_workers_views_through_ansible_playbook(tmp_path):
    r = play(tmp_path, 30000)
    # one URL per replica: gpu1 (rank 0 of r1, its own port), gpu3 (the worker port); gpu2 is rank 1
    assert r["router1"]["urls"] == ["http://gpu1:31000", "http://gpu3:30000"] and r["router1"]["expected"] == 2
    assert not r["router1"].get("failed")
    # gpu3 serves SGLang on 30000, the router's port: refused on that host only
    assert r["gpu3"]["failed"] and "gpu3 serves SGLang on router_port 30000" in r["gpu3"]["msg"]
    assert not r["gpu1"].get("failed")


# -- hostile values: each refused by the one rule of its kind, naming the variable, before anything is written -------
FULL = dict(BASE, worker_credentials="refuse", service_name="sglang-router", user="sglang-router", group="sglang-router",
            host="0.0.0.0", prometheus_host="127.0.0.1", api_key="", args={}, version="1.13.0",
            venv="/opt/sglang-router/venv-smg", config_dir="/etc/sglang-router", python="python3", log_level="info",
            health_check_endpoint="auto", stop_timeout=200, health_check_interval_secs=5,
            unit_hardening={"NoNewPrivileges": "yes"}, unit_limits={"LimitNOFILE": 65536}, unit_extra={})
SECRET = "s3cr3t-pw"


def full(**kw):
    return rp.plan(dict(FULL, **kw), "r", URLS)


def test_the_full_settings_pass():
    assert full()["refusals"] == []


@pytest.mark.parametrize("name, bad, good, words", [
    ("worker_urls", ["http://a:1\r\nExecStartPre=/bin/sh -c id"], ["http://a:1"], "contains a carriage return"),
    ("worker_urls", ["http://a:1\nExecStartPre=/bin/sh"], ["http://a:1"], "contains a newline"),
    ("worker_urls", "http://a:1", ["http://a:1"], "is not a list"),
    ("worker_urls", [["http://a:1", "--worker-urls", "http://evil:1"]], ["http://a:1"], "is a list, not one value"),
    ("worker_urls", ["http://a:0"], ["http://a:1"], "port"),
    ("worker_urls", ["file:///etc/shadow"], ["https://a"], "http:// or https://"),
    ("worker_urls", ["http://u:%s@a:1" % SECRET], ["http://a:1"], "credentials"),
    ("args", {"policy": "random\nExecStartPre=/bin/sh"}, {"policy": "random"}, "has a value that contains a newline"),
    ("args", {"retry-max-retries": "3\r"}, {"retry-max-retries": "3"}, "carriage return"),
    ("args", {"log-level": ["info", "--worker-urls", "http://evil:1"]}, {"log-level": "info"}, "second flag"),
    ("args", {"worker-urls": ["http://evil:1"]}, {"cors-allowed-origins": ["a", "b"]}, "which the role sets"),
    ("args", {"api_key": "x"}, {}, "which the role sets"),
    ("args", {"x\nExecStartPre": 1}, {"x": 1}, "not a flag name"),
    ("args", {"policy": {"a": 1}}, {"policy": "random"}, "mapping"),
    ("args", ["--worker-urls", "http://evil:1"], {}, "is not a mapping"),
    ("service_name", "../../etc/cron.d/x", "sglang-router", "'/' or '..'"),
    ("service_name", "sglang-router\nExecStartPre=/bin/sh", "router-2", "newline"),
    ("service_name", ["sglang-router"], "sglang-router", "list"),
    ("service_name", "sglang-router.service", "sglang-router-2", "ends in .service"),
    ("user", "root\nExecStartPre=/bin/sh", "sglang-router", "not a user or group name"),
    ("group", "x y", "sglang-router", "not a user or group name"),
    ("host", "0.0.0.0\r\nExecStartPre=/bin/sh", "::", "not an address"),
    ("prometheus_host", ["127.0.0.1"], "127.0.0.1", "not an address"),
    ("port", 70000, 8000, "port number"),
    ("port", [8000, 8001], 8000, "port number"),
    ("prometheus_port", "29000\n", 29001, "port number"),
    ("worker_port", 0, None, "port number"),
    ("health_check_port", -1, 0, "port number in 0-65535"),
    ("version", "1.13.0\nExecStartPre=/bin/sh", "1.13.0", "newline"),
    ("venv", "/opt/v env", "/opt/venv", "plain word"),
    ("config_dir", "/etc/r$(id)", "/etc/sglang-router", "plain word"),
    ("python", "python3 -c 'import os'", "python3.12", "plain word"),
    ("health_check_endpoint", "/ready\r", "/ready", "carriage return"),
    ("stop_timeout", [200], 200, "list"),
    ("health_check_interval_secs", "5\nExecStartPre=/bin/sh", 5, "newline"),
    ("unit_extra", {"Nice": "1\rExecStartPre=/bin/sh"}, {"Nice": "1"}, "carriage return"),
    ("unit_extra", {"Nice\nExecStartPre": "/bin/sh"}, {"Nice": 1}, "not a systemd setting name"),
    ("unit_hardening", {"ProtectSystem": ["strict", "full"]}, {"ProtectSystem": "strict"}, "list"),
    ("unit_limits", "LimitNOFILE=1", {"LimitNOFILE": 1}, "is not a mapping"),
    ("worker_credentials", "maybe", "env_file", "is not one of refuse, env_file"),
])
def test_a_hostile_value_is_refused_by_its_name_and_the_good_one_beside_it_passes(name, bad, good, words):
    found = full(**{name: bad})["refusals"]
    assert len(found) == 1 and found[0].startswith("router_%s" % name) and words in found[0], found
    assert ": " in found[0].split(words, 1)[1]  # then the fix
    assert SECRET not in found[0] and "\n" not in found[0] and "\r" not in found[0]
    assert full(**{name: good})["refusals"] == []


@pytest.mark.parametrize("key", ["k\nX-Evil: 1", "k\r", "\x00", ["k1", "k2"]])
def test_an_api_key_that_no_header_can_carry_is_refused_without_showing_it(key):
    found = full(api_key=key)["refusals"]
    assert len(found) == 1 and found[0].startswith("router_api_key=(hidden)") and "| trim" in found[0], found
    assert "k1" not in found[0] and "X-Evil" not in found[0]
    assert full(api_key="k-" + SECRET)["refusals"] == []


def test_worker_credentials_go_to_the_env_file_only_when_asked_and_are_masked_in_the_plan():
    url = "http://router:%s@gpu1:30000" % SECRET
    refused = full(worker_urls=[url])
    assert refused["expected"] is None and SECRET not in json.dumps(refused)
    assert "router_worker_credentials: env_file" in refused["refusals"][0]
    moved = full(worker_urls=[url], worker_credentials="env_file")
    assert moved["refusals"] == [] and moved["urls_in_env"] is True and moved["urls"] == ["http://router:***@gpu1:30000"]
    assert SECRET not in json.dumps(moved)
    # built from the inventory, never with credentials: an address with user:pw@ is refused even with env_file
    built = rp.plan(dict(FULL, worker_credentials="env_file"), "r", ["http://u:%s@gpu1:1" % SECRET])
    assert built["refusals"] and "router_worker_group[0]" in built["refusals"][0]
    assert SECRET not in json.dumps(built)


def test_a_hostile_worker_address_from_the_inventory_is_refused():
    urls = rp.replica_urls(["gpu1"], {"gpu1": {"router_worker_address": "gpu1\r\nExecStartPre=/bin/sh"}}, {})
    found = rp.plan(FULL, "r", urls)["refusals"]
    assert len(found) == 1 and found[0].startswith("router_worker_group[0]=") and "carriage return" in found[0]
    assert "router_worker_address" in found[0]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=30))
def test_any_text_in_a_router_args_value_either_passes_as_one_line_or_is_refused(text):
    out = full(args={"policy": text})
    if not out["refusals"]:
        assert not values.CONTROL.search(text) and not text.startswith("--")


# -- the unit and the environment file as the role's templates write them -------------------------------------------
ROLE = os.path.join(testpaths.REPO, "roles", "router")


RENDER = """
import json, os, sys
import yaml
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()  # before anything imports ansible_collections
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
job = json.load(sys.stdin)
with open(os.path.join(job["role"], "defaults", "main.yml")) as f:
    variables = dict((k, trust_as_template(v) if isinstance(v, str) else v) for k, v in yaml.safe_load(f).items())
variables.update(job["vars"])
with open(os.path.join(job["role"], "templates", job["template"])) as f:
    sys.stdout.write(Templar(loader=DataLoader(), variables=variables).template(trust_as_template(f.read())))
"""


def render(template, **extra):
    """roles/router/templates/<template> rendered by Ansible's Templar with the role's defaults and ``extra`` (in a
    fresh interpreter: the collection's filters load through Ansible's collection finder, installed first)."""
    variables = {"ansible_managed": "managed", "__router_python": "/opt/venv/bin/python",
                 "__router_launcher": "/etc/sglang-router/launch_router.py",
                 "__router_env_path": "/etc/sglang-router/router.env", "__router_urls": URLS}
    variables.update(extra)
    run = subprocess.run([sys.executable, "-c", RENDER, os.path.join(testpaths.REPO, "collections")],
                         input=json.dumps({"role": ROLE, "template": template, "vars": variables}),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def directives(unit):
    return [line.split("=", 1)[0] for line in unit.splitlines() if line and not line.startswith(("#", "["))]


def argv_plan(urls, extra=None, in_env=False):
    out = gateway.render(urls, {"policy": "cache_aware"}, extra=extra, urls_in_env=in_env)
    return dict(out, launcher_module="smg.launch_router")


HOSTILE_WORDS = ["http://a:1\r\nExecStartPre=/bin/sh -c 'id>/tmp/x'", "http://b:1\nExecStartPost=/bin/sh",
                 "x\x00y", "%h $(id) ${HOME}\x85\u2028", "\"quoted\" \\ back"]


def test_hostile_words_in_the_argv_stay_inside_the_one_execstart_line():
    good = render("sglang-router.service.j2", __router_argv_plan=argv_plan(URLS))
    bad = render("sglang-router.service.j2",
                 __router_argv_plan=argv_plan(HOSTILE_WORDS, extra={"cors-allowed-origins": HOSTILE_WORDS}))
    assert directives(bad) == directives(good) and directives(bad).count("ExecStart") == 1
    assert "ExecStartPre" not in directives(bad) and "ExecStartPost" not in directives(bad)
    execstart = [line for line in bad.splitlines() if line.startswith("ExecStart=")][0]
    assert "\\r\\nExecStartPre" in execstart and "\\x00" in execstart and "$$(id)" in execstart and "%%h" in execstart
    assert "\\u0085\\u2028" in execstart and len(bad.splitlines()) == len(good.splitlines())


def test_with_credentials_in_the_env_file_the_unit_holds_no_worker_url():
    url = "http://router:%s@gpu1:30000" % SECRET
    moved = full(worker_urls=[url], worker_credentials="env_file")
    unit = render("sglang-router.service.j2", __router_argv_plan=argv_plan([], in_env=True), __router_urls=moved["urls"])
    assert SECRET not in unit and "--worker-urls" not in unit and "gpu1" not in unit
    env = render("router.env.j2", __router_plan=moved, router_worker_urls=[url], router_api_key="k\"$x\\",
                 __router_env_worker_urls=[url])
    assignments = [line for line in env.splitlines() if line and not line.startswith("#")]
    assert [a.split("=", 1)[0] for a in assignments] == ["ROUTER_API_KEY", "ROUTER_WORKER_URLS"]
    # systemd's EnvironmentFile: a double-quoted value takes \" \\ \` \$ as escapes (parse_env_file)
    parsed = dict((k, re.sub(r'\\(["\\`$])', r"\1", v[1:-1])) for k, v in (a.split("=", 1) for a in assignments))
    assert json.loads(parsed["ROUTER_WORKER_URLS"]) == [url] and parsed["ROUTER_API_KEY"] == "k\"$x\\"
    # without env_file, no URL goes there
    none = render("router.env.j2", __router_plan=full(), router_api_key="")
    assert "ROUTER_WORKER_URLS" not in none


def test_the_launcher_takes_the_worker_urls_from_its_environment(tmp_path):
    (tmp_path / "fakegw").mkdir()
    (tmp_path / "fakegw" / "__init__.py").write_text("")
    (tmp_path / "fakegw" / "launch_router.py").write_text(
        "import json, os\n"
        "def parse_router_args(argv):\n    return argv\n"
        "def launch_router(args):\n    print(json.dumps([args, 'ROUTER_WORKER_URLS' in os.environ]))\n")
    url = "http://router:%s@gpu1:30000" % SECRET
    env = dict(os.environ, PYTHONPATH=str(tmp_path), ROUTER_LAUNCH_MODULE="fakegw.launch_router",
               ROUTER_WORKER_URLS=json.dumps([url]), ROUTER_API_KEY="k")
    out = subprocess.run([sys.executable, os.path.join(ROLE, "files", "launch_router.py"), "--policy", "random"],
                         env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    assert json.loads(out) == [["--worker-urls", url, "--policy", "random", "--api-key", "k"], False]


def systemd_reads(unit_text, tmp_path):
    """The Exec* command lines systemd itself parses from ``unit_text`` (systemd-analyze verify's debug dump)."""
    path = tmp_path / "sglang-router.service"
    path.write_text(unit_text)
    run = subprocess.run(["systemd-analyze", "verify", "--man=no", str(path)], env=dict(os.environ, SYSTEMD_LOG_LEVEL="debug"),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120, check=False)
    found = re.findall(r"-> (Exec\w+):\n\s*Command Line: (.*)", run.stdout)
    assert found, run.stdout[-2000:]
    return found


@pytest.mark.skipif(not os.path.exists("/usr/bin/systemd-analyze"), reason="needs systemd-analyze")
def test_systemd_itself_reads_one_execstart_from_a_unit_with_hostile_words(tmp_path):
    python = os.path.realpath(sys.executable)
    words = [w for w in HOSTILE_WORDS if "\x00" not in w]  # systemd keeps an escaped NUL literal (and warns)
    unit = render("sglang-router.service.j2", __router_python=python, __router_launcher=os.path.join(ROLE, "files",
                  "launch_router.py"), __router_argv_plan=argv_plan(words, extra={"cors-allowed-origins": words}),
                  router_user="root", router_group="root")
    found = systemd_reads(unit, tmp_path)
    assert [kind for kind, _line in found] == ["ExecStart"] and found[0][1].startswith(python + " ")
    assert "ExecStartPre=/bin/sh -c" in found[0][1]  # the hostile text is an argument, not a directive
    # the contrast: what an unchecked router_unit_extra value with a CR wrote - systemd reads a second directive
    raw = unit.replace("LimitNOFILE=65536", "LimitNOFILE=65536\rExecStartPre=/bin/true")
    assert [kind for kind, _line in systemd_reads(raw, tmp_path)] == ["ExecStartPre", "ExecStart"]
    assert "\r" in raw and full(unit_extra={"LimitNOFILE": "65536\rExecStartPre=/bin/true"})["refusals"]


@pytest.mark.parametrize("value, refused", [(3, False), ("3", False), (2.5, False), ("3\n", True), ("3\r", True),
                                            ("\u20283", True)])
def test_the_probe_timeout_reaches_argv_on_one_line(value, refused):
    # float() reads "3\n" as 3, so the floor alone let the newline through to the gateway's argv
    found = refusals(health_check_timeout_secs=value)
    assert bool([f for f in found if f.startswith("router_health_check_timeout_secs")]) is refused, found
