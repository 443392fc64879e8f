# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server's install defaults, templated by real ansible-playbook: this play's roles/sglang facts first, else the
install record roles/sglang left on the host (server_sglang_record), else the built-in defaults."""
import json
import os

import pytest

import testpaths
from playbook import ANSIBLE_PLAYBOOK, playbook

REPO = testpaths.REPO
RECORDS = {
    "llmserve_sglang": {"venv_python": "/opt/sglang/venv/bin/python", "installed_version": "0.5.23",
                        "server_env": {"PATH": "/opt/sglang/venv/bin:/usr/bin"}, "patches_applied": ["p1"],
                        "patch_state": "abc"},
    "llmserve_sglang_b": {"venv_python": "/opt/sglang-b/venv/bin/python", "installed_version": "0.5.15.post1",
                          "server_env": {}, "patches_applied": [], "patch_state": "none"},
}
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    # the records as roles/sglang leaves them: facts.d files, read into ansible_facts.ansible_local
    - ansible.builtin.setup:
        gather_subset: ['!all', '!min', 'local']
        fact_path: {facts}
    - ansible.builtin.include_vars: {repo}/roles/server/vars/main.yml
    - ansible.builtin.copy:
        dest: {out}
        mode: "0600"
        content: "{{{{ {{'python': server_python, 'version': server_sglang_version, 'env': server_base_env,
                      'patches': server_patches, 'state': server_patch_state}} | to_json }}}}"
"""


def resolve(tmp_path, **extra):
    if not os.path.exists(ANSIBLE_PLAYBOOK):
        pytest.skip("ansible-playbook is not beside this Python")
    play, result, facts = tmp_path / "play.yml", tmp_path / "result.json", tmp_path / "facts.d"
    facts.mkdir()
    for name, record in (extra.pop("ansible_local", None) or {}).items():
        (facts / (name + ".fact")).write_text(json.dumps(record))
    play.write_text(PLAY.format(repo=REPO, out=result, facts=facts))
    # The role's defaults first, then the case's variables: later -e wins, as the inventory wins over defaults.
    args = ["-e", "@" + os.path.join(REPO, "roles", "server", "defaults", "main.yml")]
    for key, value in extra.items():
        args += ["-e", json.dumps({key: value})]
    playbook(play, *args, environ={"ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false"})
    return json.loads(result.read_text())


def test_the_default_record(tmp_path):
    assert resolve(tmp_path, ansible_local=RECORDS) == {
        "python": "/opt/sglang/venv/bin/python", "version": "0.5.23", "env": {"PATH": "/opt/sglang/venv/bin:/usr/bin"},
        "patches": ["p1"], "state": "abc"}


def test_a_second_install_by_its_record(tmp_path):
    got = resolve(tmp_path, ansible_local=RECORDS, server_sglang_record="llmserve_sglang_b")
    assert got["python"] == "/opt/sglang-b/venv/bin/python" and got["version"] == "0.5.15.post1"


def test_this_plays_install_wins_over_any_record(tmp_path):
    got = resolve(tmp_path, ansible_local=RECORDS, sglang_venv_python="/srv/new/bin/python",
                  sglang_installed_version="0.5.10.post1")
    assert got["python"] == "/srv/new/bin/python" and got["version"] == "0.5.10.post1"


@pytest.mark.parametrize("extra", [{}, {"server_sglang_record": ""}, {"ansible_local": RECORDS, "server_sglang_record": ""},
                                   {"ansible_local": RECORDS, "server_sglang_record": "no_such_record"}])
def test_no_record_gives_the_built_in_defaults(tmp_path, extra):
    assert resolve(tmp_path, **extra) == {"python": "/opt/sglang/venv/bin/python", "version": "", "env": {},
                                          "patches": [], "state": ""}
