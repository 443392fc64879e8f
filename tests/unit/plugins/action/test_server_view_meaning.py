# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``server_view`` keeps one meaning - what runs - through a real ansible-playbook: server_info publishes the view of
the running instance (its recorded argv.json), and server_plan's planned view travels in the plan
(``plan.view``). After a port changed under ``server_restart: never`` the server still listens on the old port, so
roles/router and roles/monitoring (which read ``server_view``) must keep finding it there."""
import json
import os

import yaml

import testpaths
from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  vars_files:  # the role's defaults, then the inventory's settings
    - "{{ repo }}/roles/server/defaults/main.yml"
    - "{{ repo }}/roles/server/vars/main.yml"
    - "{{ tmp }}/settings.yml"
  tasks:
    - name: Read the host (the instance's record says it listens on 30000)
      llmserve.sglang.server_info:
        model_paths: []
      register: info
    - ansible.builtin.set_fact:
        after_info: "{{ server_view }}"
    - name: Plan with the instance running an older configuration
      llmserve.sglang.server_plan:
        info: "{{ info | combine({'state': state, 'service_mgr': 'systemd', 'version': '0.5.23', 'fingerprint': 'older',
                                  'user_exists': true, 'group_exists': true}) }}"
      register: planned
    - ansible.builtin.copy:
        dest: "{{ tmp }}/r.json"
        content: "{{ {'after_info': after_info, 'after_plan': server_view, 'plan': planned.plan} | to_json }}"
"""


def _record(tmp_path, port):
    inst = tmp_path / "etc" / "probe"
    inst.mkdir(parents=True)
    (inst / "argv.json").write_text(json.dumps({
        "argv": ["/venv/bin/python", "-m", "sglang.launch_server", "--host", "127.0.0.1", "--port", str(port)],
        "view": {"instance": "probe", "host": "127.0.0.1", "port": port, "url": "http://127.0.0.1:%d" % port}}))


RUNNING = {"active_state": "active", "sub_state": "running", "pid": 4242}
SETTINGS = """
server_instance: probe
server_config_dir: "{{ tmp }}/etc"
server_log_dir: "{{ tmp }}/log"
server_home: "{{ tmp }}/home"
server_model_path: /models/probe
server_speculative: {algorithm: ''}
server_sglang_version: 0.5.23
server_port: 31000
server_restart: never
"""


def run_play(tmp_path, state=None):
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "extra.json").write_text(json.dumps({"state": state or RUNNING}))
    (tmp_path / "settings.yml").write_text(SETTINGS)
    playbook(tmp_path / "play.yml", "-e", "tmp=%s" % tmp_path, "-e", "repo=%s" % testpaths.REPO,
             "-e", "@%s" % (tmp_path / "extra.json"))
    return json.loads((tmp_path / "r.json").read_text())


def test_a_port_changed_under_restart_never_leaves_the_view_where_the_server_listens(tmp_path):
    _record(tmp_path, 30000)
    r = run_play(tmp_path)
    # the plan writes the new configuration and keeps the running server: nothing listens on 31000 yet
    assert r["plan"]["action"] == "none" and "server_restart is never" in r["plan"]["why"]
    assert r["plan"]["view"]["port"] == 31000  # the planned view travels in the plan
    assert r["after_info"]["port"] == 30000 and r["after_info"]["url"] == "http://127.0.0.1:30000"
    # what roles/router and roles/monitoring read: still the port the server listens on
    assert r["after_plan"]["port"] == 30000 and r["after_plan"]["url"] == "http://127.0.0.1:30000"


def test_a_start_makes_the_plan_what_runs_and_only_then(tmp_path):
    # not running: the plan starts it - its view is still only in the plan until tasks/deploy.yml has started it
    _record(tmp_path, 30000)
    r = run_play(tmp_path, {"active_state": "inactive", "sub_state": "dead", "pid": 0})
    assert r["plan"]["action"] == "start" and r["plan"]["view"]["port"] == 31000
    assert r["after_plan"]["port"] == 30000
    with open(os.path.join(testpaths.REPO, "roles", "server", "tasks", "deploy.yml")) as f:
        block = yaml.safe_load(f)[1]["block"]
    names = [t.get("name") for t in block]
    refresh = [t for t in block if "server_view" in (t.get("ansible.builtin.set_fact") or {})]
    assert len(refresh) == 1 and refresh[0]["ansible.builtin.set_fact"]["server_view"] == "{{ __server_plan.view }}"
    # after the start and the wait (a failed wait fails the host first), only for a start or restart that ran
    at = names.index(refresh[0]["name"])
    assert names.index("Start, restart or stop the instance as planned") < at
    assert names.index("Wait until the server is ready") < at
    assert refresh[0]["when"] == ["__server_plan.action in ['start', 'restart']", "not ansible_check_mode"]
