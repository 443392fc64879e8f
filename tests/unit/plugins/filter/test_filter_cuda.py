# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_cuda_reboot_decision over results registered the way roles/cuda/tasks/reboot.yml registers them: wait_for on a
real listening port and a closed one, and list-units output (echoed: no systemd here)."""
import json
import socket

from netutil import free_port
from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.command:
        argv: [echo, "{{ item }}"]
      loop: ["sglang-default.service loaded active running SGLang", ""]
      register: units
      changed_when: false
    - ansible.builtin.wait_for:
        host: 127.0.0.1
        port: "{{ item }}"
        state: started
        timeout: 1
      loop: "{{ ports }}"
      register: ports_seen
      failed_when: false
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: >-
          {{ {'present': true, 'driver_version': '570.1', 'kernel_module_flavor': 'open'}
             | llmserve.sglang._cuda_reboot_decision('if_needed', '580', 'open', ['driver packages changed'], false,
                                                       units.results, ports_seen.results, false) | to_json }}
"""


def test_serving_units_and_open_ports_hold_the_reboot(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    open_port, closed_port = listener.getsockname()[1], free_port()
    try:
        (tmp_path / "play.yml").write_text(PLAY)
        playbook(tmp_path / "play.yml", "-e", json.dumps({"ports": [open_port, closed_port], "out": str(tmp_path / "d.json")}))
    finally:
        listener.close()
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["action"] == "skip-serving" and d["required"] is True
    assert d["serving"] == ["sglang-default.service", "port %d" % open_port]
