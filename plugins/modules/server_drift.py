#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_drift
short_description: Whether an SGLang instance runs what is configured, and its start-up phase timings
version_added: "0.1.0"
description:
  - Compares the command line roles/server recorded for the instance (C(argv.json)) with what runs - SGLang's own
    C(/server_info) C(launch_command) where it has one (0.5.20+), else the server process's argv - flag by flag.
    C(--config) and secret flags are left out; secret values are never returned.
  - Reports the start-up phase timings SGLang gives in C(/server_info) C(startup_time) (0.5.20+).
  - Read-only; a drift is reported, not acted on (a restart applies the configuration).
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_endpoint
  - llmserve.sglang.attributes.read_only
options:
  instance:
    description: Instance name (as roles/server's C(server_instance)).
    type: str
    default: default
  config_dir:
    description: roles/server's C(server_config_dir).
    type: path
    default: /etc/sglang
  manager:
    description: How the instance is run (C(auto) asks the host).
    type: str
    choices: [auto, systemd, pidfile]
    default: auto
  timeout:
    description: Seconds to wait for C(/server_info).
    type: int
    default: 10
seealso:
  - module: llmserve.sglang.server_info
"""

EXAMPLES = r"""
- name: Compare what runs with what is configured
  llmserve.sglang.server_drift:
    instance: default
    url: http://127.0.0.1:30000  # or module_defaults of the group llmserve.sglang.endpoint
  register: __drift

- name: Report it
  ansible.builtin.debug:
    msg: "{{ __drift.msg }}"
"""

RETURN = r"""
source:
  description: What the running side was read from - C(launch_command), C(process argv), or null when unknown.
  returned: always
  type: str
drift:
  description: C({same, changed [{flag, configured, running}], missing [flag], extra [flag]}), or null when unknown.
  returned: always
  type: dict
phases:
  description: Start-up phases C([[phase, seconds]]) from C(/server_info) C(startup_time); empty before 0.5.20.
  returned: always
  type: list
  elements: list
version:
  description: The SGLang version C(/server_info) reports, or null.
  returned: always
  type: str
msg:
  description: One line of words - the drift, or none, and the phase timings.
  returned: always
  type: str
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner

from ansible_collections.llmserve.sglang.plugins.module_utils.server import drift as server_drift
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client, endpoint_spec, key_problem
from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import instance_spec, paths, resolve_manager


def _server_info(url, api_key, timeout):
    """The body of /server_info (or /get_server_info), through the collection's one SGLang client; None when none."""
    status, body, _err = Client(url, api_key=api_key or None).server_info(timeout=timeout)
    return body if status == 200 and isinstance(body, dict) else None


def main():
    module = AnsibleModule(
        argument_spec=endpoint_spec(
            timeout=dict(type="int", default=10),
            **instance_spec(("instance", "config_dir", "manager"))
        ),
        supports_check_mode=True,
    )
    p = module.params
    if key_problem(p["api_key"]):  # before any request: http.client would quote the key into a traceback
        module.fail_json(msg=key_problem(p["api_key"]))
    pt = paths({"instance": p["instance"], "config_dir": p["config_dir"], "log_dir": "/"})
    configured = None
    try:
        with open(pt["argv"]) as f:
            configured = json.load(f).get("argv")
    except (IOError, OSError, ValueError):
        pass
    manager = resolve_manager(p["manager"], si.service_mgr())[0]
    state = si.read_state(manager, pt["unit_name"], pt["pid_file"],
                          module_runner(module, timeout=60, environ_update={"LC_ALL": "C"}))
    process_argv = None
    if state.get("pid"):
        try:
            with open("/proc/%d/cmdline" % int(state["pid"]), "rb") as f:
                process_argv = server_drift.parse_cmdline(f.read())
        except (IOError, OSError):
            pass
    info = _server_info(p["url"], p["api_key"], p["timeout"]) if state.get("active_state") == "active" else None
    out = server_drift.report(configured, info, process_argv)
    module.exit_json(changed=False, version=(info or {}).get("version"), **out)


if __name__ == "__main__":
    main()
