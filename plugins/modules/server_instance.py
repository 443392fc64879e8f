#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_instance
short_description: Write, start, stop, restart and roll back an SGLang instance (systemd or pid file)
version_added: "0.1.0"
description:
  - The instance controller of roles/server. One module for both managers, so a host without systemd gets the same
    start, stop, restart, log rotation, backup and restore of the previous configuration, and multi-node peer watch
    as a systemd host.
  - It carries out what llmserve.sglang.server_plan decided; it decides nothing itself.
  - O(step=write) creates the directories, keeps the running configuration in C(previous/) (O(backup)) and writes
    the files whose text differs (atomically, with their mode and owner), then removes O(remove).
  - O(step=act) carries out O(action) - C(restart) and C(stop) stop the server first; C(start) and C(restart) keep the
    previous run's log (rotated, O(log_keep) kept), clear a start limit, start the server, record O(fingerprint) and
    start the peer watch (O(peer_watch)); C(none) reloads systemd when O(daemon_reload).
  - O(step=ready) ends the peer watch after a successful wait. O(step=failed) ends it and returns the peer's failure,
    stops the server that failed (O(stop_on_failure)) and, with O(rollback), puts C(previous/) back and starts it.
  - O(step=stop) stops and disables the instance.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_instance
options:
  step:
    description: What to do (see the description).
    type: str
    required: true
    choices: [write, act, ready, failed, stop]
  manager:
    choices: [systemd, pidfile]
    default: systemd
  action:
    description: O(step=act) - C(plan.action).
    type: str
    choices: [none, start, restart, stop]
    default: none
  files:
    description: O(step=write) - C({path, content, mode, owner, group, secret}) each; a secret file is never diffed.
    type: list
    elements: dict
    default: []
  remove:
    description: O(step=write) - files to delete (an API key file no longer wanted).
    type: list
    elements: path
    default: []
  dirs:
    description: O(step=write) - C({path, owner, group, mode}) directories to create and keep.
    type: list
    elements: dict
    default: []
  backup:
    description: O(step=write) - copy the files that run now into C(previous/) before writing.
    type: bool
    default: false
  fingerprint:
    description: O(step=act) - fingerprint recorded for what is started.
    type: str
    default: ""
  daemon_reload:
    description: Reload systemd before starting (the unit file changed).
    type: bool
    default: false
  log_keep:
    description: Logs of previous runs kept beside the current one.
    type: int
    default: 5
  stop_timeout:
    description: Pid-file mode - seconds between SIGTERM and SIGKILL.
    type: int
    default: 120
  peer_watch:
    description:
      - Multi-node - C({name, endpoint, port, peers, token, timeout}) of this node's peer watch (O(step=act) starts it,
        O(step=ready) and O(step=failed) end it).
    type: dict
  stop_on_failure:
    description: O(step=failed) - stop the server that failed to become ready.
    type: bool
    default: true
  rollback:
    description: O(step=failed) - put the previous configuration back and start it.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports what it would write, stop and start; changes nothing.
  diff_mode:
    support: full
    description: Shows the text of each file it writes (never the API key file).
notes:
  - Target needs only the Python standard library. The pid-file supervisor and the peer watch run as detached
    helper scripts (installed by O(step=write) from module_utils), since they must outlive the module.
seealso:
  - module: llmserve.sglang.server_info
  - module: llmserve.sglang.server_ready
"""

EXAMPLES = r"""
- name: Write the instance files
  llmserve.sglang.server_instance:
    step: write
    manager: "{{ __server_plan.manager }}"
    paths: "{{ __server_plan.paths }}"
    dirs: "{{ __server_plan.dirs }}"
    files: "{{ __server_plan.files | selectattr('path', 'in', __server_plan.write) }}"
    backup: "{{ __server_plan.action == 'restart' }}"

- name: Restart it
  llmserve.sglang.server_instance:
    step: act
    action: restart
    manager: systemd
    paths: "{{ __server_plan.paths }}"
    fingerprint: "{{ __server_plan.fingerprint }}"
"""

RETURN = r"""
changes:
  description: What was (or in check mode would be) done, in order.
  returned: always
  type: list
  elements: str
  sample: ["stopped sglang-kimi.service", "rotated /var/log/sglang/kimi.log", "started sglang-kimi.service"]
written:
  description: O(step=write) - the files written or removed.
  returned: when O(step=write)
  type: list
  elements: str
kept:
  description: O(step=write) - which files were kept in C(previous/).
  returned: when O(backup)
  type: list
  elements: str
state:
  description: The instance after the step (as llmserve.sglang.server_info returns it).
  returned: always
  type: dict
start_error:
  description: Pid-file mode - the supervisor's message when the server exited at once (the wait diagnoses it).
  returned: when the server exited at once
  type: str
peer_failure:
  description: Multi-node - the peer's failure record C({node, detail, sent, time}), or null.
  returned: when O(step) is C(ready) or C(failed) with O(peer_watch)
  type: dict
rolled_back:
  description: O(step=failed) - whether a previous configuration was put back and started.
  returned: when O(rollback)
  type: bool
was_running:
  description: O(step=stop) - whether something was stopped.
  returned: when O(step=stop)
  type: bool
"""

import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.server.instance import Instance, act


def main():
    module = AnsibleModule(
        argument_spec=dict(
            step=dict(type="str", required=True, choices=["write", "act", "ready", "failed", "stop"]),
            manager=dict(type="str", default="systemd", choices=["systemd", "pidfile"]),
            paths=dict(type="dict", required=True),
            action=dict(type="str", default="none", choices=["none", "start", "restart", "stop"]),
            files=dict(type="list", elements="dict", default=[], no_log=False),
            remove=dict(type="list", elements="path", default=[]),
            dirs=dict(type="list", elements="dict", default=[]),
            backup=dict(type="bool", default=False),
            fingerprint=dict(type="str", default=""),
            daemon_reload=dict(type="bool", default=False),
            log_keep=dict(type="int", default=5),
            stop_timeout=dict(type="int", default=120),
            peer_watch=dict(type="dict", no_log=False),
            stop_on_failure=dict(type="bool", default=True),
            rollback=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )

    def run(argv):
        return module.run_command(argv, environ_update={"LC_ALL": "C"})

    inst = Instance(module.params, run, check_mode=module.check_mode, python=sys.executable)
    try:
        res = act(inst, module.params)
    except (RuntimeError, OSError) as exc:
        module.fail_json(msg="%s: %s" % (module.params["step"], exc), changes=inst.changes)
    res["changed"] = bool(res["changes"])
    if module._diff and inst.diff:  # pylint: disable=protected-access
        res["diff"] = inst.diff
    module.exit_json(**res)


if __name__ == "__main__":
    main()
