# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/runtime.yml's action group `endpoint`: module_defaults sets url and api_key once for every module that talks
to a running server; run through ansible-playbook against a real HTTP server that checks the key."""
import http.server
import json
import os
import subprocess
import sys
import threading

import yaml

import testpaths

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


class ServerInfo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
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


def test_module_defaults_reach_the_module(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), ServerInfo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (tmp_path / "play.yml").write_text(PLAY)
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(testpaths.REPO, "ansible.cfg"))
        run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(tmp_path / "play.yml"),
                              "-e", "server_port=%d" % server.server_port, "-e", "out=%s" % (tmp_path / "r.json"),
                              "-e", "ansible_python_interpreter=%s" % sys.executable],
                             cwd=testpaths.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, check=False)
        assert run.returncode == 0, run.stdout[-3000:]
        result = json.loads((tmp_path / "r.json").read_text())
        # the URL and the key both came from module_defaults: a wrong or missing key gets a 401, no accept length
        assert result["url"] == "http://127.0.0.1:%d" % server.server_port and result["accept_length"] == 2.0
    finally:
        server.shutdown()
