# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The router_plan action, _router_view and _router_setting through a real ansible-playbook: the plan publishes the
gateway's view (router_view), a reader on another host gets that view, or one built from the gateway host's
settings and the declared defaults where roles/router never ran - and playbooks/restart.yml's own vars, read from
the playbook, hand its drain and restore entry points the gateway that runs."""
import json
import os

import yaml

import testpaths
from playbook import playbook

INVENTORY = """
all:
  hosts:
    gw:
      router_port: 31000
      router_api_key: k
      router_worker_scheme: https
    gw2:
      router_port: 32000
    g1: {sglang_installed_version: "0.5.23", server_port: 30001}
    g2: {sglang_installed_version: "0.5.23"}
  children:
    gpu_hosts:
      hosts: {g1: {}, g2: {}}
  vars:
    ansible_connection: local
"""

PLAY = """
- hosts: gw
  gather_facts: false
  tasks:
    - name: The plan, as roles/router runs it
      llmserve.sglang.router_plan:
      register: __router_plan

- hosts: g1
  gather_facts: false
  vars: %s
  tasks:
    - name: What readers on a worker see of both gateways
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'plan': hostvars['gw'].__router_plan, 'fact': hostvars['gw'].router_view,
                      'gw': hostvars['gw'] | llmserve.sglang._router_view,
                      'gw2': hostvars['gw2'] | llmserve.sglang._router_view,
                      'keys': [hostvars['gw'] | llmserve.sglang._router_setting('api_key'),
                               hostvars['gw2'] | llmserve.sglang._router_setting('api_key')],
                      'restart': [router_host, router_port, router_api_key, router_drain_worker_url]} | to_json }}"
        mode: "0600"
      delegate_to: localhost
"""


def run_play(tmp_path, restart_vars):
    inventory = yaml.safe_load(INVENTORY)
    with open(os.path.join(testpaths.REPO, "roles", "router", "defaults", "main.yml")) as f:
        # roles/router's defaults under the hosts' own settings, as the role's defaults are
        inventory["all"]["children"]["gateways"] = {"hosts": {"gw": {}}, "vars": yaml.safe_load(f)}
    (tmp_path / "inv.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(PLAY % json.dumps(restart_vars))
    playbook(tmp_path / "play.yml", "-e", "out=%s" % (tmp_path / "r.json"), "-e", "repo=%s" % testpaths.REPO,
             inventory=tmp_path / "inv.yml")
    return json.loads((tmp_path / "r.json").read_text())


def restart_vars(router_host):
    with open(os.path.join(testpaths.REPO, "playbooks", "restart.yml")) as f:
        play = yaml.safe_load(f)[0]
    return dict(play["vars"], llmserve_router_host=router_host)


def test_the_plan_publishes_the_view_every_reader_gets(tmp_path):
    r = run_play(tmp_path, restart_vars("gw"))
    view = r["plan"]["view"]
    assert view == r["fact"] == r["gw"]
    assert view["url"] == "http://127.0.0.1:31000" and view["health_endpoint"] == "/ready"
    assert view["workers"] == ["https://g1:30001", "https://g2:30000"] and view["expected"] == 2
    assert view["flags"]["health-check-endpoint"] == "/ready" and view["flags"]["port"] == 31000
    assert "api_key" not in view and '"k"' not in json.dumps(view)  # the view carries no secret
    # where roles/router never ran: its settings and the declared defaults, no workers
    assert r["gw2"]["url"] == "http://127.0.0.1:32000" and r["gw2"]["prometheus_port"] == 29000
    assert r["gw2"]["workers"] == [] and r["gw2"]["worker_scheme"] == "http"
    assert r["keys"] == ["k", ""]
    # restart.yml's drain/restore get the gateway that runs, and this host's URL as that gateway lists it
    assert r["restart"] == ["0.0.0.0", 31000, "k", "https://g1:30001"]


def test_restart_reads_a_gateway_where_roles_router_never_ran(tmp_path):
    r = run_play(tmp_path, restart_vars("gw2"))
    assert r["restart"] == ["0.0.0.0", 32000, "", "http://g1:30001"]
