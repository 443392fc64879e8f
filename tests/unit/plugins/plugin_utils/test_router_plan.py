# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's plan (plugin_utils/_router_plan.py, the router_plan action): the worker URLs from the workers'
views, the expected count, and each of the seven checks that one assert made, refused on its own with its fix."""
import json
import os
import subprocess
import sys

import pytest

import testpaths
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
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(testpaths.REPO, "ansible.cfg"))
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "hosts"),
                          str(tmp_path / "play.yml"), "-e", "out=%s" % tmp_path, "-e", "rport=%d" % rport],
                         cwd=testpaths.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    return dict((h, json.loads((tmp_path / ("%s.json" % h)).read_text())) for h in ("gpu1", "gpu3", "router1"))


def test_the_action_reads_the_workers_views_through_ansible_playbook(tmp_path):
    r = play(tmp_path, 30000)
    # one URL per replica: gpu1 (rank 0 of r1, its own port), gpu3 (the worker port); gpu2 is rank 1
    assert r["router1"]["urls"] == ["http://gpu1:31000", "http://gpu3:30000"] and r["router1"]["expected"] == 2
    assert not r["router1"].get("failed")
    # gpu3 serves SGLang on 30000, the router's port: refused on that host only
    assert r["gpu3"]["failed"] and "gpu3 serves SGLang on router_port 30000" in r["gpu3"]["msg"]
    assert not r["gpu1"].get("failed")
