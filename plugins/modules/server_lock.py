#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_lock
short_description: One deploy of an SGLang instance at a time (a lock on the host naming its holder)
version_added: "0.1.0"
description:
  - roles/server takes the lock of the instance before anything is touched and releases it at the end, so two
    C(ansible-playbook) runs deploying one instance at once cannot both write, restart and report success.
  - The lock file (C(paths.lock), under C(/run/llmserve-sglang/)) names its holder - the controller's host name, the
    user and pid of its C(ansible-playbook), and since when. A second deploy is refused with that.
  - A stale lock is taken over with a warning - when its holder ran on this controller and its C(ansible-playbook)
    process is gone (the action plugin looks), or when it is older than O(stale_after) seconds.
  - O(state=released) with O(fingerprint) first checks that the server that runs is the one this deploy started
    (its recorded fingerprint, and O(pid) where given) - so a READY is about this deploy's own server.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_instance
  - llmserve.sglang.attributes
options:
  state:
    description: C(held) takes the lock (refused while another live deploy holds it), C(released) gives it back.
    type: str
    choices: [held, released]
    default: held
  stale_after:
    description: Seconds after which a lock counts as stale whoever holds it.
    type: int
    default: 7200
  fingerprint:
    description: O(state=released) - the fingerprint this deploy recorded; the release fails when another one runs.
    type: str
  pid:
    description: O(state=released) - the server pid this deploy started; the release fails when another one runs.
    type: int
  holder:
    description: Set by the action plugin (controller, user, pid, since, token); not for playbooks.
    type: dict
  holder_dead:
    description: Set by the action plugin when the holder's controller process is known dead.
    type: bool
    default: false
attributes:
  action:
    support: full
    description: The action plugin names the holder from the controller and retries when the holder is dead.
  check_mode:
    support: full
    description: Reports whether the lock could be taken; writes nothing.
seealso:
  - module: llmserve.sglang.server_instance
"""

EXAMPLES = r"""
- name: Take the instance's deploy lock
  llmserve.sglang.server_lock:
    manager: "{{ __server_plan.manager }}"
    paths: "{{ __server_plan.paths }}"

- name: Check the server is this deploy's, and release the lock
  llmserve.sglang.server_lock:
    state: released
    manager: "{{ __server_plan.manager }}"
    paths: "{{ __server_plan.paths }}"
    fingerprint: "{{ __server_plan.fingerprint }}"
"""

RETURN = r"""
held_by:
  description: The holder C({controller, user, pid, since, token}) after the call.
  returned: when O(state=held)
  type: dict
took_over:
  description: The stale holder whose lock was taken over, or null.
  returned: when O(state=held)
  type: dict
msg:
  description: What happened, in words.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner

from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock as server_lock
from ansible_collections.llmserve.sglang.plugins.module_utils.server.instance import read_state, service_mgr
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import instance_spec, resolve_manager


def main():
    module = AnsibleModule(
        argument_spec=instance_spec(
            ("manager", "paths"),
            state=dict(type="str", default="held", choices=["held", "released"]),
            stale_after=dict(type="int", default=7200),
            fingerprint=dict(type="str"),
            pid=dict(type="int"),
            holder=dict(type="dict"),
            holder_dead=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    # auto (layout.INSTANCE_SPEC: one set of managers) resolves on the host as server_info resolves it
    module.params["manager"] = resolve_manager(module.params["manager"], service_mgr())[0]
    p = module.params
    path = p["paths"]["lock"]
    holder = p["holder"] or {}
    if not holder.get("token"):
        module.fail_json(msg="server_lock: run it through its action plugin (the holder comes from the controller)")
    if p["state"] == "held":
        res = server_lock.take(path, holder, p["stale_after"], p["holder_dead"], module.check_mode)
        if not res["taken"]:
            module.exit_json(changed=False, failed=False, refused=True, held_by=res["held_by"], took_over=None,
                             msg=res["message"])
        if res["took_over"]:
            module.warn(res["message"])
        module.exit_json(changed=res["message"] != "holds the lock already", refused=False, held_by=res["held_by"],
                         took_over=res["took_over"], msg=res["message"])
    mismatch = None
    if p["fingerprint"]:
        recorded = ""
        try:
            with open(p["paths"]["fingerprint"]) as f:
                recorded = f.read().strip()
        except (IOError, OSError):
            pass
        state = read_state(p["manager"], p["paths"]["unit_name"], p["paths"]["pid_file"],
                           module_runner(module, timeout=60, environ_update={"LC_ALL": "C"}))
        if recorded != p["fingerprint"]:
            mismatch = "fingerprint %s recorded, %s started by this deploy" % (recorded[:12] or "none", p["fingerprint"][:12])
        elif p["pid"] and state.get("pid") and int(state["pid"]) != p["pid"]:
            mismatch = "pid %s runs, this deploy started %s" % (state["pid"], p["pid"])
    released = server_lock.release(path, holder["token"], module.check_mode)
    if mismatch:
        module.fail_json(msg="%s: the server that runs is not the one this deploy started (%s): another deploy replaced "
                             "it; run the deploy again" % (p["paths"]["unit_name"], mismatch), released=released)
    module.exit_json(changed=released, msg="released" if released else "not held by this deploy")


if __name__ == "__main__":
    main()
