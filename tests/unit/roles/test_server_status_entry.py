# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server's status entry point (what playbooks/status.yml runs) through a real ansible-playbook: every reader
of the running server - the accept length and the drift included - asks the view's one URL with the role's key, and
the report says all three lines. An instance that never ran is reported, not failed."""
import json

from netutil import JSONHandler, serve
from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    server_instance: never
    server_config_dir: "{{ tmp }}/etc"
    server_log_dir: "{{ tmp }}/log"
    server_port: "{{ port }}"
    server_api_key: sekrit
  tasks:
    - ansible.builtin.include_role:
        name: llmserve.sglang.server
        tasks_from: status
    - ansible.builtin.copy:
        dest: "{{ tmp }}/r.json"
        content: "{{ {'spec': __server_status_spec, 'drift': __server_status_drift, 'view': server_view} | to_json }}"
"""


class Seen(JSONHandler):
    asked = []

    def do_GET(self):
        Seen.asked.append((self.path, self.headers.get("Authorization")))
        self.reply(200, {"version": "0.5.23", "internal_states": [{"avg_spec_accept_length": 2.5}]})


def test_status_asks_the_views_url_for_every_reading(tmp_path):
    srv = serve(Seen)
    Seen.asked = []
    try:
        (tmp_path / "play.yml").write_text(PLAY)
        out = playbook(tmp_path / "play.yml", "-e", "tmp=%s" % tmp_path, "-e", "port=%d" % srv.server_port)
    finally:
        srv.shutdown()
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["view"]["url"] == "http://127.0.0.1:%d" % srv.server_port
    # the accept length was read from the view's URL, with the role's key (the endpoint group's module_defaults)
    assert r["spec"]["accept_length"] == 2.5 and ("/server_info", "Bearer sekrit") in Seen.asked
    # nothing runs: drift is unknown, and said so
    assert r["drift"]["drift"] is None and "unknown" in r["drift"]["msg"]
    assert "accept length 2.50" in out and "drift: unknown" in out
