# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role makes a directory whose path comes from a setting through llmserve.sglang.owned_dir (the one rule: no
system directory, nothing inside /proc, /sys, /dev or /run, no chmod or chown of what the collection did not make,
a linked folder refused with follow: false), never ``ansible.builtin.file`` with ``state: directory`` and an owner,
group or mode: that chmods and chowns whatever already stands there, through a link. A fixed path of the host's own
(/etc/modprobe.d) is the role's to name, and left alone."""
import os

import yaml

import testpaths

ROLES = os.path.join(testpaths.REPO, "roles")
CHANGES = ("owner", "group", "mode")


def _tasks(items):
    for task in items or ():
        if not isinstance(task, dict):
            continue
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def scan(root=ROLES):
    found = []
    for role in sorted(os.listdir(root)):
        tasks_dir = os.path.join(root, role, "tasks")
        if not os.path.isdir(tasks_dir):
            continue
        for name in sorted(os.listdir(tasks_dir)):
            if not name.endswith((".yml", ".yaml")):
                continue
            with open(os.path.join(tasks_dir, name)) as handle:
                for task in _tasks(yaml.safe_load(handle)):
                    args = task.get("ansible.builtin.file") or task.get("file")
                    if (isinstance(args, dict) and args.get("state") == "directory" and "{{" in str(args.get("path"))
                            and any(k in args for k in CHANGES)):
                        found.append("roles/%s/tasks/%s: %s" % (role, name, task.get("name")))
    return found


def test_no_role_makes_a_settings_directory_with_ansible_builtin_file():
    assert scan() == [], "use llmserve.sglang.owned_dir for a directory whose path is a setting"


def test_the_scan_finds_the_task_it_is_for(tmp_path):
    tasks = tmp_path / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text(
        "- name: Folders\n  ansible.builtin.file:\n    path: '{{ r_dir }}'\n    state: directory\n    mode: '0755'\n"
        "- name: Fixed\n  ansible.builtin.file:\n    path: /etc/modprobe.d\n    state: directory\n    mode: '0755'\n"
        "- block:\n    - name: Nested\n      ansible.builtin.file:\n        path: '{{ r_x }}'\n        state: directory\n"
        "        owner: root\n")
    assert scan(str(tmp_path)) == ["roles/r/tasks/main.yml: Folders", "roles/r/tasks/main.yml: Nested"]
