# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#42: roles/server's stop and status entry points (what playbooks/stop.yml and status.yml run) through a real
ansible-playbook on localhost, pid-file mode, against hostile pid files: PID 1, a bystander ``sleep`` (as the server
and as the supervisor), a stale pid, a link. Stop fails naming the file and signals nothing; status reports the file
refused and no pid; the bystander lives. The instance's run directory is the collection's own
(/run/llmserve-sglang/<instance>), made and removed by the test."""
import json
import os
import shutil
import subprocess

import pytest
from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    server_service_manager: pidfile
    server_instance: "{{ inst }}"
    server_config_dir: "{{ tmp }}/etc"
    server_log_dir: "{{ tmp }}/log"
  tasks:
    - name: Stop
      block:
        - ansible.builtin.include_role:
            name: llmserve.sglang.server
            tasks_from: stop
        - ansible.builtin.set_fact:
            stop_msg: ""
      rescue:
        - ansible.builtin.set_fact:
            stop_msg: "{{ ansible_failed_result.msg }}"
    - ansible.builtin.include_role:
        name: llmserve.sglang.server
        tasks_from: status
    - ansible.builtin.copy:
        dest: "{{ tmp }}/r.json"
        content: "{{ {'stop': stop_msg, 'state': __server_info.state} | to_json }}"
"""


@pytest.fixture
def run_dir():
    inst = "pidtest-%d" % os.getpid()
    path = "/run/llmserve-sglang/%s" % inst
    if os.geteuid() != 0:
        pytest.skip("the instance's run directory is under /run: needs root, as the role does")
    os.makedirs(path, mode=0o755)
    yield inst, path
    shutil.rmtree(path)
    try:
        os.rmdir("/run/llmserve-sglang")  # only when the test made it and nothing else is there
    except OSError:
        pass


@pytest.fixture
def bystander():
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield p
    p.kill()
    p.wait()


def play(tmp_path, inst):
    (tmp_path / "play.yml").write_text(PLAY)
    out = playbook(tmp_path / "play.yml", "-e", "tmp=%s" % tmp_path, "-e", "inst=%s" % inst)
    return json.loads((tmp_path / "r.json").read_text()), out


def test_stop_and_status_refuse_hostile_pid_files_and_signal_nothing(tmp_path, run_dir, bystander):
    inst, path = run_dir
    pid_file = path + "/server.pid"
    ended = subprocess.Popen(["true"])
    ended.wait()
    link_target = str(tmp_path / "elsewhere.pid")
    with open(link_target, "w") as f:
        f.write("%d\n" % bystander.pid)
    cases = [("PID 1", "server.pid", "1", True), ("a bystander", "server.pid", str(bystander.pid), True),
             ("a bystander as the supervisor", "server.pid.supervisor", str(bystander.pid), True),
             ("a link", "server.pid", None, True), ("a stale pid", "server.pid", str(ended.pid), False)]
    for name, fname, content, refused in cases:
        target = os.path.join(path, fname)
        if content is None:
            os.symlink(link_target, target)
        else:
            with open(target, "w") as f:
                f.write(content + "\n")
        r, out = play(tmp_path, inst)
        said = "nothing signalled; remove the stale pid file %s" % target
        assert (said in r["stop"]) is refused, (name, r["stop"])
        assert r["state"]["active_state"] == "inactive" and r["state"]["pid"] == 0, (name, r["state"])
        assert r["state"]["sub_state"].startswith("pid file refused: pid file %s" % target) is refused, name
        assert ("sglang-%s (pidfile): inactive (pid file refused" % inst in out) is refused, name
        assert bystander.poll() is None, name
        os.unlink(target)
    assert not os.path.exists(pid_file)
