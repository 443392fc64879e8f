# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/runtime.yml's action group `endpoint`: module_defaults sets url and api_key once for every module that talks
to a running server; run through ansible-playbook against a real HTTP server that checks the key."""
import http.server
import json
import os
import threading

import pytest
import yaml

import testpaths
from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/llmserve.sglang.endpoint:
      url: "http://127.0.0.1:{{ server_port }}"
      api_key: sekrit
  tasks:
    - llmserve.sglang.spec_check:
        requests: 0
      register: r
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ r | to_json }}"
"""


# roles/server's habit: module_defaults on the block around include_tasks (wait.yml, spec_check.yml), the key
# omitted when empty; the included tasks restate neither url nor api_key
ROLE_PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    key: ""
  tasks:
    - name: Deploy-like block
      module_defaults:
        group/llmserve.sglang.endpoint:
          url: "http://127.0.0.1:{{ server_port }}"
          api_key: "{{ key | default(omit, true) }}"
      block:
        - ansible.builtin.include_tasks: included.yml
"""
INCLUDED = """
- llmserve.sglang.server_status:
    health_path: /server_info
  register: r
- ansible.builtin.copy:
    dest: "{{ out }}"
    content: "{{ r | to_json }}"
"""


class ServerInfo(http.server.BaseHTTPRequestHandler):
    keys = []

    def do_GET(self):
        ServerInfo.keys.append(self.headers.get("Authorization"))
        ok = self.headers.get("Authorization") == "Bearer sekrit"
        body = json.dumps({"internal_states": [{"avg_spec_accept_length": 2.0}]} if ok else {"error": "key"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_every_member_takes_url_and_api_key():
    with open(os.path.join(testpaths.REPO, "meta", "runtime.yml")) as f:
        members = yaml.safe_load(f)["action_groups"]["endpoint"]
    assert members
    for name in members:
        with open(os.path.join(testpaths.REPO, "plugins", "modules", name + ".py")) as f:
            text = f.read()
        # one argument spec (sglang/client.ENDPOINT_SPEC) and one documentation of it (the doc fragment)
        assert "argument_spec=endpoint_spec(" in text and "url=dict(" not in text and "api_key=dict(" not in text, name
        assert "llmserve.sglang.server_endpoint" in text, name


def test_the_fragment_documents_the_endpoint_spec():
    from ansible_collections.llmserve.sglang.plugins.doc_fragments.server_endpoint import ModuleDocFragment
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import ENDPOINT_SPEC
    doc = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert set(doc) == set(ENDPOINT_SPEC)
    for name, spec in ENDPOINT_SPEC.items():
        assert doc[name]["type"] == spec["type"] and doc[name].get("default") == spec.get("default"), name


def _play(tmp_path, text, port, *extra):
    (tmp_path / "play.yml").write_text(text)
    playbook(tmp_path / "play.yml", "-e", "server_port=%d" % port, "-e", "out=%s" % (tmp_path / "r.json"), *extra)
    return json.loads((tmp_path / "r.json").read_text())


def test_module_defaults_reach_the_module(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), ServerInfo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = _play(tmp_path, PLAY, server.server_port)
        # the URL and the key both came from module_defaults: a wrong or missing key gets a 401, no accept length
        assert result["url"] == "http://127.0.0.1:%d" % server.server_port and result["accept_length"] == 2.0
    finally:
        server.shutdown()


@pytest.mark.parametrize("key, header", [("", None), ("sekrit", "Bearer sekrit")])
def test_block_defaults_reach_included_tasks_and_an_empty_key_is_omitted(tmp_path, key, header):
    server = http.server.HTTPServer(("127.0.0.1", 0), ServerInfo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ServerInfo.keys = []
    try:
        (tmp_path / "included.yml").write_text(INCLUDED)
        result = _play(tmp_path, ROLE_PLAY, server.server_port, "-e", "key=%s" % key)
        # the block's URL reached the included task (nothing else listens there), and the key only when given
        assert ServerInfo.keys and set(ServerInfo.keys) == {header}
        assert result["health"]["status"] == (200 if key else 401)
    finally:
        server.shutdown()


def _endpoint_tasks(tasks):
    for task in tasks or []:
        for inner in ("tasks", "block", "rescue", "always"):
            yield from _endpoint_tasks(task.get(inner))
        for name, args in task.items():
            if name.startswith("llmserve.sglang.") and name.split(".")[-1] in ENDPOINT_MEMBERS:
                yield name, args or {}


with open(os.path.join(testpaths.REPO, "meta", "runtime.yml")) as _f:
    ENDPOINT_MEMBERS = yaml.safe_load(_f)["action_groups"]["endpoint"]


@pytest.mark.parametrize("path, defaults_in", [
    ("roles/server/tasks/wait.yml", "roles/server/tasks/deploy.yml"),
    ("roles/server/tasks/spec_check.yml", "roles/server/tasks/deploy.yml"),
    ("playbooks/tasks/bench_mode.yml", "playbooks/benchmark.yml"),
    ("roles/server/tasks/status.yml", "roles/server/tasks/status.yml"),
    ("playbooks/benchmark.yml", "playbooks/benchmark.yml"),
])
def test_the_roles_waits_take_the_endpoint_from_module_defaults(path, defaults_in):
    with open(os.path.join(testpaths.REPO, path)) as f:
        found = list(_endpoint_tasks(yaml.safe_load(f)))
    assert found, path
    for name, args in found:
        assert "url" not in args and "api_key" not in args, (path, name)
    with open(os.path.join(testpaths.REPO, defaults_in)) as f:
        text = f.read()
    assert "group/llmserve.sglang.endpoint:" in text and "url:" in text.split("group/llmserve.sglang.endpoint:")[1]
