# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server_info action through a real ansible-playbook: what the task leaves out comes from roles/server's
settings - the instance's directories, and the model and draft paths of the settings' view (roles/server's task
restates none of them)."""
import json
import os
import subprocess
import sys

import testpaths

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    server_instance: probe
    server_config_dir: "{{ tmp }}/etc"
    server_log_dir: "{{ tmp }}/log"
    server_model_path: "{{ tmp }}/model"
    server_speculative: {draft_model_path: "{{ tmp }}/draft"}
  tasks:
    - llmserve.sglang.server_info:
      register: spec_on
    - llmserve.sglang.server_info:
      vars:
        server_speculative: {algorithm: '', draft_model_path: "{{ tmp }}/draft"}
      register: spec_off
    - llmserve.sglang.server_info:
        model_paths: []
      register: given
    - ansible.builtin.copy:
        dest: "{{ tmp }}/r.json"
        content: "{{ {'on': spec_on, 'off': spec_off, 'given': given} | to_json }}"
"""


def test_server_info_fills_the_paths_from_the_settings_view(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(testpaths.REPO, "ansible.cfg"))
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(tmp_path / "play.yml"),
                          "-e", "tmp=%s" % tmp_path, "-e", "ansible_python_interpreter=%s" % sys.executable],
                         cwd=testpaths.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    r = json.loads((tmp_path / "r.json").read_text())
    assert sorted(r["on"]["model_fs"]) == [str(tmp_path / "draft"), str(tmp_path / "model")]
    assert sorted(r["off"]["model_fs"]) == [str(tmp_path / "model")]
    assert r["given"]["model_fs"] == {}
    assert r["on"]["paths"]["argv"] == str(tmp_path / "etc" / "probe" / "argv.json")
    assert r["on"]["view"]["spec"]["draft_model_path"] == str(tmp_path / "draft")
    assert r["on"]["view"]["replica_problem"] is None
