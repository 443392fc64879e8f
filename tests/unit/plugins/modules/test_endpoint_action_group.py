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
        assert "url=dict(" in text and "api_key=dict(" in text, name


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
