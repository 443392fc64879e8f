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
  - It carries out what llmserve.sglang.server_plan decided; it decides nothing itself. One O(action) per call.
  - O(action=write) creates the directories, keeps the running configuration in C(previous/) (O(backup)) and writes
    the files whose text differs (atomically, with their mode and owner), then removes O(remove).
  - O(action=start), O(action=restart) and O(action=stop) carry out the plan's action. C(restart) and C(stop) stop the
    server first, bounded by O(stop_timeout) (SGLang's own drain on SIGTERM waits for the requests it serves without
    a bound); C(stop) also disables it. C(start) and C(restart) keep the previous run's log (rotated, O(log_keep)
    kept), clear a start limit, start the server, record O(fingerprint) and start the peer watch (O(peer_watch)).
    O(action=none) only reloads systemd when O(daemon_reload).
  - After every stop, the GPUs' compute processes (C(nvidia-smi --query-compute-apps)) that belong to the instance -
    its systemd unit's cgroup, its environment marker C(LLMSERVE_SGLANG_INSTANCE), or the server's process group or
    session - are ended (SIGTERM, SIGKILL after O(stop_grace_unready) seconds) and reported in RV(orphans). Nothing
    else is ever signalled.
  - O(action=end_watch) ends the peer watch after a successful wait.
  - O(action=recover) follows a failed wait - ends the peer watch and returns the peer's failure, stops the server
    that never became ready with the short grace O(stop_grace_unready) (it has no request to drain, and a frozen
    start-up does not act on SIGTERM; a tree with a stopped member, state T, is killed at once, without the grace),
    then O(on_failure) - C(rollback) puts C(previous/) back and starts it,
    C(stop) leaves the instance stopped.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_instance
options:
  action:
    description: What to do (see the description).
    type: str
    required: true
    choices: [write, none, start, restart, stop, end_watch, recover]
  files:
    description: O(action=write) - C({path, content, mode, owner, group, secret}) each; a secret file is never diffed.
    type: list
    elements: dict
    default: []
  remove:
    description: O(action=write) - files to delete (an API key file no longer wanted).
    type: list
    elements: path
    default: []
  dirs:
    description:
      - O(action=write) - C({path, owner, group, mode}) directories to create and keep. All are judged on the host
        before any is made or changed (links resolved, no system directory); an existing one is C(chmod)-ed or
        C(chown)-ed only when the collection made it (its root-owned marker C(.llmserve-sglang-dir)) or it is in
        O(adopt_dirs); the compile caches are refused with another owner or a looser mode.
    type: list
    elements: dict
    default: []
  adopt_dirs:
    description: O(action=write) - existing directories the collection may take over (C(server_adopt_dirs)).
    type: list
    elements: path
    default: []
  backup:
    description: O(action=write) - copy the files that run now into C(previous/) before writing.
    type: bool
    default: false
  fingerprint:
    description: O(action=start) and O(action=restart) - fingerprint recorded for what is started.
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
    description:
      - Pid-file mode - seconds between SIGTERM and SIGKILL when a serving server is stopped (systemd reads
        C(TimeoutStopSec) from the unit, which the plan writes from the same setting).
    type: int
    default: 120
  stop_grace_unready:
    description:
      - Seconds between SIGTERM and SIGKILL for a server that never became ready (O(action=recover)), and for what
        the instance left on the GPUs after any stop.
    type: int
    default: 10
  peer_watch:
    description:
      - Multi-node - C({name, endpoint, port, peers, token, timeout}) of this node's peer watch (O(action=start) and
        O(action=restart) start it, O(action=end_watch) and O(action=recover) end it).
    type: dict
  on_failure:
    description: O(action=recover) - C(rollback) starts the previous configuration again, C(stop) leaves it stopped.
    type: str
    choices: [rollback, stop]
    default: rollback
attributes:
  check_mode:
    support: full
    description: Reports what it would write, stop, end and start; changes nothing.
  diff_mode:
    support: full
    description: Shows the text of each file it writes (never the API key file).
notes:
  - Target needs only the Python standard library. The pid-file supervisor and the peer watch run as detached
    helper scripts (installed by O(action=write) from module_utils), since they must outlive the module.
seealso:
  - module: llmserve.sglang.server_info
  - module: llmserve.sglang.server_ready
"""

EXAMPLES = r"""
- name: Write the instance files
  llmserve.sglang.server_instance:
    action: write
    manager: "{{ __server_plan.manager }}"
    paths: "{{ __server_plan.paths }}"
    dirs: "{{ __server_plan.dirs }}"
    files: "{{ __server_plan.files | selectattr('path', 'in', __server_plan.write) }}"
    backup: "{{ __server_plan.action == 'restart' }}"

- name: Restart it
  llmserve.sglang.server_instance:
    action: restart
    manager: systemd
    paths: "{{ __server_plan.paths }}"
    fingerprint: "{{ __server_plan.fingerprint }}"

- name: Stop what failed to become ready, quickly, and put the previous configuration back
  llmserve.sglang.server_instance:
    action: recover
    manager: systemd
    paths: "{{ __server_plan.paths }}"
    stop_grace_unready: 10
    on_failure: rollback
"""

RETURN = r"""
action:
  description: The action carried out.
  returned: always
  type: str
changes:
  description: What was (or in check mode would be) done, in order.
  returned: always
  type: list
  elements: str
  sample: ["stopped sglang-kimi.service", "rotated /var/log/sglang/kimi.log", "started sglang-kimi.service"]
written:
  description: O(action=write) - the files written or removed.
  returned: when O(action=write)
  type: list
  elements: str
kept:
  description: O(action=write) - which files were kept in C(previous/).
  returned: when O(backup)
  type: list
  elements: str
state:
  description: The instance after the action (as llmserve.sglang.server_info returns it).
  returned: always
  type: dict
start_error:
  description: Pid-file mode - the supervisor's message when the server exited at once (the wait diagnoses it).
  returned: when the server exited at once
  type: str
stopped:
  description: How the stop went - C(seconds) it took, the C(grace) given (null - the manager's own bound), whether
    it C(killed) the server with SIGKILL at the end of it, and whether it did so C(at_once) (a member of the tree was
    stopped, state T, and could not act on SIGTERM).
  returned: when something was stopped
  type: dict
orphans:
  description:
    - After a stop - C(checked) (false without a working nvidia-smi), C(ended) - the instance's processes found on
      the GPUs and ended, each C({pid, cmdline, used_memory_mib, why, signal}) (C(why) - cgroup, environment or
      process group; C(signal) - TERM or KILL), and C(left) - those still alive after SIGKILL.
  returned: when something was stopped
  type: dict
peer_failure:
  description: Multi-node - the peer's failure record C({node, detail, sent, time}), or null.
  returned: when O(action) is C(end_watch) or C(recover) with O(peer_watch)
  type: dict
on_failure:
  description: O(action=recover) - what followed the stop (O(on_failure)).
  returned: when O(action=recover)
  type: str
rolled_back:
  description: O(action=recover) - whether a previous configuration was put back and started.
  returned: when O(on_failure=rollback)
  type: bool
was_running:
  description: O(action=restart) and O(action=stop) - whether something was stopped.
  returned: when O(action) is C(restart) or C(stop)
  type: bool
"""

import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.server.instance import ACTIONS, Instance, act, service_mgr
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import instance_spec, resolve_manager


def main():
    module = AnsibleModule(
        argument_spec=instance_spec(
            ("manager", "paths"),
            action=dict(type="str", required=True, choices=list(ACTIONS)),
            files=dict(type="list", elements="dict", default=[], no_log=False),
            remove=dict(type="list", elements="path", default=[]),
            dirs=dict(type="list", elements="dict", default=[]),
            adopt_dirs=dict(type="list", elements="path", default=[]),
            backup=dict(type="bool", default=False),
            fingerprint=dict(type="str", default=""),
            daemon_reload=dict(type="bool", default=False),
            log_keep=dict(type="int", default=5),
            stop_timeout=dict(type="int", default=120),
            stop_grace_unready=dict(type="int", default=10),
            peer_watch=dict(type="dict", no_log=False),
            on_failure=dict(type="str", default="rollback", choices=["rollback", "stop"]),
        ),
        supports_check_mode=True,
    )

    # auto (layout.INSTANCE_SPEC: one set of managers) resolves on the host as server_info resolves it
    module.params["manager"] = resolve_manager(module.params["manager"], service_mgr())[0]
    inst = Instance(module.params, module_runner(module, environ_update={"LC_ALL": "C"}), check_mode=module.check_mode, python=sys.executable)
    try:
        res = act(inst, module.params)
    except (RuntimeError, OSError) as exc:
        module.fail_json(msg="%s: %s" % (module.params["action"], exc), changes=inst.changes)
    res["changed"] = bool(res["changes"])
    if module._diff and inst.diff:  # pylint: disable=protected-access
        res["diff"] = inst.diff
    module.exit_json(**res)


if __name__ == "__main__":
    main()
