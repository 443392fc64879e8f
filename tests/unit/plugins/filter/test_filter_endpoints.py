# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The private endpoint filters, run through ansible-playbook as roles use them (status, router vars)."""
import json
import sys

from playbook import playbook

PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "{{ out }}/{{ inventory_hostname }}.json"
        content: "{{ {'status': server_host | llmserve.sglang._local_url(server_port),
                      'router': groups['gpu'] | llmserve.sglang._replica_urls(hostvars, groups, 'http', 30000),
                      'accept': {'internal_states': [{'avg_spec_accept_length': 3.0}, {'avg_spec_accept_length': 2.0}]}
                                | llmserve.sglang._accept_length,
                      'prometheus': '[::]:9090' | llmserve.sglang._local_url,
                      'probe_floor': 'min_probe_timeout' | llmserve.sglang._sglang_limit,
                      'python_min': ['0.5.23', '0.5.9', '9.9.9'] | map('llmserve.sglang._sglang_python_min')} | to_json }}"
      delegate_to: localhost
"""

INVENTORY = """
all:
  vars: {ansible_connection: local, ansible_python_interpreter: %s}
  children:
    gpu:
      hosts:
        g1: {server_host: "::1", server_port: 30000, server_tp_group: r1, ansible_host: 10.0.0.1}
        g2: {server_host: 0.0.0.0, server_port: 30000, server_tp_group: r1, ansible_host: 10.0.0.2}
        g3: {server_host: 0.0.0.0, server_port: 30010, router_worker_address: "fd00::3"}
    r1:
      hosts: {g1: {}, g2: {}}
"""


def test_filters_through_ansible(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "inv.yml").write_text(INVENTORY % sys.executable)
    playbook(tmp_path / "play.yml", "-e", "out=%s" % tmp_path, inventory=tmp_path / "inv.yml")
    g1 = json.loads((tmp_path / "g1.json").read_text())
    assert g1["status"] == "http://[::1]:30000"            # the case: status on server_host "::1"
    assert g1["router"] == ["http://10.0.0.1:30000", "http://[fd00::3]:30010"]
    assert g1["accept"] == 2.5
    assert g1["prometheus"] == "http://[::1]:9090"                  # one HOST:PORT listen address
    assert g1["probe_floor"] == 2.0                                 # sglang/gates.MIN_PROBE_TIMEOUT_S
    assert g1["python_min"] == ["3.11", "3.10", "3.10"]             # sglang/gates.VERIFIED, else the default
    assert json.loads((tmp_path / "g2.json").read_text())["status"] == "http://127.0.0.1:30000"
