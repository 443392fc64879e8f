# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server_info action through a real ansible-playbook: what the task leaves out comes from roles/server's
settings - the instance's directories, and the model and draft paths of the settings' view (roles/server's task
restates none of them)."""
import json

import pytest
from playbook import playbook

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
    # deploy: the version is asked of server_python (a Python without sglang: version_error says so) unless
    # server_sglang_version names it, and nothing is asked for a stopped instance; read (the default) asks nothing
    - llmserve.sglang.server_info:
        purpose: deploy
        gather_gpu: false
      vars:
        server_python: "{{ tmp }}/no-python"
        server_stop_timeout: 33
      register: deploy
    - llmserve.sglang.server_info:
        purpose: deploy
        gather_gpu: false
      vars:
        server_python: "{{ tmp }}/no-python"
        server_sglang_version: 0.5.20
      register: deploy_named
    - llmserve.sglang.server_info:
        purpose: deploy
      vars:
        server_python: "{{ tmp }}/no-python"
        server_state: stopped
      register: deploy_stopped
    - llmserve.sglang.server_info:
        gather_gpu: false
      vars:
        server_python: "{{ tmp }}/no-python"
      register: read
    # last: it sets the host's GPU facts, after which a deploy gathers none
    - llmserve.sglang.server_info:
        purpose: deploy
      vars:
        server_sglang_version: 0.5.20
      register: deploy_gpu
    - llmserve.sglang.server_info:
        purpose: deploy
      vars:
        server_sglang_version: 0.5.20
      register: deploy_gpu_again
    - ansible.builtin.copy:
        dest: "{{ tmp }}/r.json"
        content: "{{ {'on': spec_on, 'off': spec_off, 'given': given, 'deploy': deploy, 'deploy_named': deploy_named,
                      'deploy_stopped': deploy_stopped, 'read': read, 'deploy_gpu': deploy_gpu,
                      'deploy_gpu_again': deploy_gpu_again} | to_json }}"
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """(the play's folder, its results): one ansible-playbook run for the module's tests."""
    tmp_path = tmp_path_factory.mktemp("server_info")
    (tmp_path / "play.yml").write_text(PLAY)
    playbook(tmp_path / "play.yml", "-e", "tmp=%s" % tmp_path)
    return tmp_path, json.loads((tmp_path / "r.json").read_text())


def test_server_info_fills_the_paths_from_the_settings_view(played):
    tmp_path, r = played
    assert sorted(r["on"]["model_fs"]) == [str(tmp_path / "draft"), str(tmp_path / "model")]
    assert sorted(r["off"]["model_fs"]) == [str(tmp_path / "model")]
    assert r["given"]["model_fs"] == {}
    assert r["on"]["paths"]["argv"] == str(tmp_path / "etc" / "probe" / "argv.json")
    assert r["on"]["view"]["spec"]["draft_model_path"] == str(tmp_path / "draft")
    assert r["on"]["view"]["replica_problem"] is None


def test_server_info_asks_what_a_deploy_needs_and_hands_the_entry_points_their_settings(played):
    tmp_path, r = played
    # asked of server_python: a path that is no executable says so
    assert r["deploy"]["version_error"] == "no such executable"
    # the version named in the settings, a stopped instance, a read: nothing asked
    for name in ("deploy_named", "deploy_stopped", "read"):
        assert "version_error" not in r[name] and r[name]["version"] is None, name
    # the GPU facts: gathered for a start when the host has none (left out by the task), not for a stopped
    # instance, not when the task says false, not once the host has them
    assert "gpu" in r["deploy_gpu"]["ansible_facts"]
    for name in ("deploy_stopped", "deploy", "deploy_gpu_again"):
        assert "gpu" not in r[name]["ansible_facts"], name
    assert r["deploy"]["entry"] == {"config_dir": str(tmp_path / "etc"), "stop_timeout": 33, "stop_grace_unready": 10}
    assert r["read"]["entry"]["stop_timeout"] == 120
