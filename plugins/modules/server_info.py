#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_info
short_description: Read an SGLang instance, its host's GPUs and the installed SGLang in one round trip
version_added: "0.1.0"
description:
  - The first step of roles/server (info, plan, preflight, write, act, wait, report) and of its stop and status entry
    points. Reads only.
  - Returns the instance's state (systemd unit, or the pid-file supervisor's pid file and C(/proc)), the sha256 of
    every file of the instance, the fingerprint recorded when the running server was started, whether the service
    user and group exist, the service manager, the address of the default route, the SGLang version installed in
    O(python) (when given) and the GPU facts (when O(gather_gpu)).
  - Its action plugin (controller) fills the options the task leaves out from roles/server's settings
    (C(server_instance), C(server_config_dir), ... with the role's defaults) and adds RV(view), the instance's resolved
    view, also set as the host's fact C(server_view).
author:
  - llmserve maintainers (@llmserve)
options:
  instance:
    description: Instance name (C(server_instance); the action plugin passes it when the task does not).
    type: str
    default: default
  config_dir:
    description: Configuration root (C(server_config_dir)).
    type: path
    default: /etc/sglang
  log_dir:
    description: Log directory (C(server_log_dir)).
    type: path
    default: /var/log/sglang
  home:
    description: Home of the service user (C(server_home)); reported in RV(dirs).
    type: path
    default: /var/lib/sglang
  manager:
    description:
      - C(server_service_manager) - C(auto), C(systemd) or C(pidfile); C(auto) reads the unit on systemd hosts and the
        pid file elsewhere.
      - The action passes a setting outside these as C(auto), so that P(llmserve.sglang.server_plan#module) names the
        problem with its fix.
    type: str
    choices: [auto, systemd, pidfile]
    default: auto
  python:
    description: Python of the SGLang virtualenv; when given, the installed C(sglang) version is read with it.
    type: path
  gather_gpu:
    description:
      - Also gather C(ansible_facts.gpu) (as llmserve.sglang.gpu_facts does), for hosts that lack them.
      - With O(purpose=deploy) and left out, the action plugin sets it when the settings start the instance and the
        host has no GPU facts; else false.
    type: bool
  purpose:
    description:
      - Read for C(deploy) (roles/server's main entry point) or only C(read) (stop, status, other playbooks).
      - With C(deploy), when C(server_state) is C(started), the action plugin fills O(python) with C(server_python)
        (unless C(server_sglang_version) names the version) and O(gather_gpu) as described there; the module itself
        reads nothing more.
    type: str
    choices: [read, deploy]
    default: read
  user:
    description: Service user whose existence is reported.
    type: str
    default: sglang
  group:
    description: Service group whose existence is reported.
    type: str
    default: sglang
  model_paths:
    description:
      - Local model directories whose filesystem is reported (C(model_fs)).
      - The action plugin passes the model and the draft of roles/server's settings when the task does not.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - llmserve.sglang.attributes.read_only
attributes:
  facts:
    support: full
    description: Sets C(ansible_facts.gpu) when O(gather_gpu) is true.
seealso:
  - module: llmserve.sglang.server_instance
  - module: llmserve.sglang.gpu_facts
"""

EXAMPLES = r"""
- name: Read the host and the instance
  llmserve.sglang.server_info:
    instance: kimi
    python: /opt/sglang/venv/bin/python
    gather_gpu: "{{ ansible_facts.gpu is not defined }}"
  register: __server_info

- name: Is it running?
  ansible.builtin.debug:
    msg: "{{ __server_info.state.active_state }} (pid {{ __server_info.state.pid }})"
"""

RETURN = r"""
service_mgr:
  description: C(systemd) when systemd is PID 1, else C(other).
  returned: always
  type: str
  sample: systemd
manager:
  description: The manager the state was read from (O(manager), or the one C(auto) picked).
  returned: always
  type: str
  sample: systemd
state:
  description:
    - The instance now - C(active_state) (systemd's ActiveState; C(active) or C(inactive) for a pid file),
      C(sub_state), C(pid), C(load_state), C(result), C(enabled), C(since), C(restarts). For a pid file,
      C(problem) when it names a process the supervisor did not start (a reused pid, a bystander, pid 1, a link,
      garbage) - then C(inactive), C(sub_state) C(pid file refused - ...), and nothing of that process is reported.
  returned: always
  type: dict
  sample: {"active_state": "active", "sub_state": "running", "pid": 4242, "load_state": "loaded", "enabled": true}
files:
  description: sha256 of each file of the instance (unit, instance directory, helpers), null when missing.
  returned: always
  type: dict
dirs:
  description: Whether each directory of the instance exists.
  returned: always
  type: dict
fingerprint:
  description: Fingerprint recorded when the running server was started ("" when none).
  returned: always
  type: str
recorded:
  description: The argv.json recorded at the last start (python, argv, version, view), or null.
  returned: always
  type: dict
entry:
  description:
    - Added on the controller - the settings the stop and status entry points pass on (they run without a plan)
      C(config_dir), C(stop_timeout), C(stop_grace_unready) (roles/server's, with their defaults).
  returned: always
  type: dict
  sample: {"config_dir": "/etc/sglang", "stop_timeout": 120, "stop_grace_unready": 10}
view:
  description:
    - The instance's resolved view (plugin_utils/_server_view.py), added on the controller - C(instance), C(paths),
      C(host), C(port), C(url), C(health_path), C(python), C(version), C(model_path), C(served_model_name),
      C(spec) (C(on), C(algorithm), C(draft_model_path), C(adaptive)), C(speculation) (the setting in force -
      C(setting) off/static/adaptive, C(threshold), C(tiers), C(words) - and its C(source), a benchmark run and its
      date, or the inventory), C(nodes), C(rank), C(replica_problem), C(tp_group), C(min_accept_length), C(manager),
      C(args).
    - Where the instance listens, what it runs and its SGLang come from its record when it has one.
  returned: success
  type: dict
  sample: {"instance": "default", "url": "http://127.0.0.1:30000", "health_path": "/ready", "spec": {"on": true}}
version:
  description: SGLang version installed in O(python), or null (not asked, or not installed; see RV(version_error)).
  returned: always
  type: str
  sample: 0.5.23
version_error:
  description: Why O(python) could not report an sglang version.
  returned: when the version could not be read
  type: str
user_exists:
  description: Whether O(user) exists.
  returned: always
  type: bool
group_exists:
  description: Whether O(group) exists.
  returned: always
  type: bool
default_ipv4:
  description: Source address of the default route (what other nodes of a replica reach), or null.
  returned: always
  type: str
model_fs:
  description: Per path of O(model_paths) - C(mount), C(fstype), C(source), C(network) (NFS, Lustre, FUSE, SMB, ...).
  returned: always
  type: dict
become:
  description: >-
    C(euid) of the module and the become tools the host has (C(sudo), C(su) - their paths, or null), so the plan
    can tell a task that needs C(become_user) on a host without sudo before it fails.
  returned: always
  type: dict
"""

import json
import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner

from ansible_collections.llmserve.sglang.plugins.module_utils.host import mounts

from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import instance_spec
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia.smi import collect
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import (
    HELPER_DIR, HELPERS, instance_dirs, paths, resolve_manager, valid_instance)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches


def main():
    module = AnsibleModule(
        argument_spec=instance_spec(
            ("instance", "config_dir", "log_dir", "manager"),
            home=dict(type="path", default="/var/lib/sglang"),
            python=dict(type="path"),
            gather_gpu=dict(type="bool"),
            purpose=dict(type="str", choices=["read", "deploy"], default="read"),
            user=dict(type="str", default="sglang"),
            group=dict(type="str", default="sglang"),
            model_paths=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    p = module.params

    run = module_runner(module, timeout=60, environ_update={"LC_ALL": "C"})  # systemctl, the version probe

    mgr = si.service_mgr()
    manager = resolve_manager(p["manager"], mgr)[0]
    result = dict(changed=False, service_mgr=mgr, manager=manager, state={}, files={}, dirs={}, fingerprint="",
                  recorded=None, version=None, user_exists=si.user_exists(p["user"]),
                  group_exists=si.group_exists(p["group"]), default_ipv4=si.default_ipv4(),
                  model_fs=dict((m, mounts.filesystem(m)) for m in p["model_paths"] if str(m).startswith("/")),
                  become={"euid": os.geteuid(), "sudo": shutil.which("sudo"), "su": shutil.which("su")})
    # An instance name that could escape its directory is refused by the plan; read nothing for it.
    if valid_instance(p["instance"]):
        pt = paths({"instance": p["instance"], "config_dir": p["config_dir"], "log_dir": p["log_dir"]})
        result["paths"] = pt
        if manager == "systemd" and mgr != "systemd":
            result["state"] = {"active_state": "inactive", "sub_state": "no systemd", "pid": 0}
        else:
            result["state"] = si.read_state(manager, pt["unit_name"], pt["pid_file"], run)
        result["files"] = si.hash_files([pt["unit"]] + ["%s/%s" % (HELPER_DIR, h) for h in HELPERS],
                                        [pt["instance_dir"]])
        dirs = instance_dirs(p["home"], p["config_dir"], p["log_dir"], pt, p["user"], p["group"])
        result["dirs"] = dict((d[0], os.path.isdir(d[0])) for d in dirs)
        # the compile caches: the instance's folder and its per-version folders that exist (sglang/caches.py)
        cache_root = caches.root(p["home"], p["instance"])
        result["dirs"][cache_root] = os.path.isdir(cache_root)
        if result["dirs"][cache_root]:
            for name in os.listdir(cache_root):
                result["dirs"]["%s/%s" % (cache_root, name)] = os.path.isdir(os.path.join(cache_root, name))
        try:
            with open(pt["fingerprint"]) as f:
                result["fingerprint"] = f.read().strip()
        except (IOError, OSError):
            pass
        try:
            with open(pt["argv"]) as f:
                result["recorded"] = json.load(f)
        except (IOError, OSError, ValueError):
            pass
    if p["python"]:
        if not os.access(p["python"], os.X_OK):
            result["version_error"] = "no such executable"
        else:
            version, error = sglang_version.probe(run, p["python"])
            result["version"] = version
            if error:
                result["version_error"] = error
    if p["gather_gpu"]:
        facts = collect(run, lambda name: module.get_bin_path(name, opt_dirs=["/usr/bin", "/usr/sbin", "/usr/local/bin"]))
        result["ansible_facts"] = {"gpu": facts}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
