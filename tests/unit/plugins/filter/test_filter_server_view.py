# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_server_view and the server_info action through a real ansible-playbook: a playbook outside roles/server sees
the instance roles/server would deploy (inventory settings, the one set of defaults, roles/sglang's record), the
record of the running instance wins for where it listens, and a published view is what every reader gets."""
import json

from playbook import playbook

INVENTORY = """
all:
  hosts:
    a:
      server_port: 31000
      server_speculative: {algorithm: '', draft_model_path: /d}
    b:
      server_instance: kimi
      server_tp_group: r1
    c:
      server_tp_group: r1
  children:
    r1:
      hosts: {b: {}, c: {}}
  vars:
    ansible_connection: local
"""

PLAY = """
- hosts: a
  gather_facts: false
  tasks:
    - name: roles/sglang's record, read as Ansible reads local facts (ansible_facts.ansible_local)
      ansible.builtin.setup:
        gather_subset: ['!all', '!min', 'local']
        fact_path: "{{ facts }}"
    - name: Views of hosts where roles/server never ran, read from the controller
      ansible.builtin.set_fact:
        computed: "{{ dict(['a', 'b', 'c'] | zip(['a', 'b', 'c'] | map('extract', hostvars)
                      | map('llmserve.sglang._server_view') | list)) }}"
        router_port: "{{ (hostvars['b'] | llmserve.sglang._server_view(defaults={'port': 32000})).port }}"
    - name: The action reads the recorded instance and publishes its view
      llmserve.sglang.server_info:
        config_dir: "{{ cfg }}"
      register: info
    - name: Every reader now gets the published view
      ansible.builtin.set_fact:
        published: "{{ hostvars['a'] | llmserve.sglang._server_view }}"
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'computed': computed, 'router_port': router_port, 'info': info, 'published': published,
                      'fact': server_view} | to_json }}"
"""


def test_views_through_ansible_playbook(tmp_path):
    inst = tmp_path / "etc" / "default"
    inst.mkdir(parents=True)
    # a record written before views were: the running server listens where its argv says, not on the inventory's port
    (inst / "argv.json").write_text(json.dumps({"python": "/venv/bin/python", "version": "0.5.15.post1",
                                                "argv": ["--model-path", "/m", "--host", "0.0.0.0", "--port", "30777"]}))
    (tmp_path / "inv.yml").write_text(INVENTORY)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "llmserve_sglang.fact").write_text(json.dumps({"venv_python": "/rec/bin/python",
                                                                         "installed_version": "0.5.23"}))
    (tmp_path / "play.yml").write_text(PLAY)
    playbook(tmp_path / "play.yml", "-e", "out=%s" % (tmp_path / "r.json"), "-e", "cfg=%s" % (tmp_path / "etc"),
             "-e", "facts=%s" % (tmp_path / "facts"), inventory=tmp_path / "inv.yml")
    r = json.loads((tmp_path / "r.json").read_text())
    a, b, c = r["computed"]["a"], r["computed"]["b"], r["computed"]["c"]
    assert a["url"] == "http://127.0.0.1:31000" and a["python"] == "/rec/bin/python" and a["health_path"] == "/ready"
    assert a["spec"]["on"] is False and a["paths"]["log"] == "/var/log/sglang/default.log"
    assert b["instance"] == "kimi" and b["nodes"] == ["b", "c"] and b["rank"] == 0 and c["rank"] == 1
    assert b["spec"]["on"] is True and b["health_path"] == "/health" and b["url"] == "http://127.0.0.1:30000"
    assert r["router_port"] in (32000, "32000")
    # the module got its config_dir from the task and the rest from the settings; the record wins for the URL
    assert r["info"]["paths"]["argv"] == str(inst / "argv.json")
    assert r["info"]["view"]["url"] == "http://127.0.0.1:30777" and r["info"]["view"]["version"] == "0.5.15.post1"
    assert r["info"]["view"]["health_path"] == "/health" and r["info"]["view"]["min_accept_length"] == 1.3
    assert r["fact"] == r["info"]["view"] == r["published"]
